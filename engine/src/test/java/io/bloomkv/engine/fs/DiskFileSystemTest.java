package io.bloomkv.engine.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.TestSeeds;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskFileSystemTest {
    @TempDir
    Path dir;

    private final FileSystem fs = FileSystem.disk();

    /**
     * A write(2) that fails part-way (a short write, then ENOSPC) leaves exactly the unwritten bytes buffered, in
     * order: the next flush (space freed) or the close writes them once. The buffer was left flipped at the failure,
     * and the next flush wrote the bytes already written a second time (a WAL closed after the failure gained a copy of
     * its tail after its torn record, which its reader may take for damage followed by valid records).
     */
    @Test
    void aWriteFailingPartWayLeavesTheRestForTheNextFlushOnce() throws IOException {
        Path p = dir.resolve("partial.log");
        byte[] data = new byte[10_000];
        new Random(TestSeeds.seed("DiskFileSystemTest.partial")).nextBytes(data);
        for (boolean byClose : new boolean[] {false, true}) {
            ShortWriteChannel ch = new ShortWriteChannel(java.nio.channels.FileChannel.open(
                    p,
                    java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.WRITE,
                    java.nio.file.StandardOpenOption.TRUNCATE_EXISTING));
            WritableFile f = DiskFileSystem.writableFileOver(p, ch);
            try {
                f.append(data, 0, 4_000);
                ch.failAfter(1_500);
                assertThatThrownBy(f::flush).isInstanceOf(IOException.class).hasMessageContaining("No space");
                f.append(data, 4_000, data.length - 4_000);
                if (!byClose) {
                    f.flush();
                }
            } finally {
                f.close();
            }
            byte[] got = Files.readAllBytes(p);
            assertThat(java.util.Arrays.equals(got, data))
                    .as((byClose ? "written by close: " : "written by flush: ") + got.length + " bytes for "
                            + data.length + ", each once, in order")
                    .isTrue();
        }
    }

    /** A channel over a file whose next relative writes, once armed, write {@code n} bytes in all, then fail once. */
    private static final class ShortWriteChannel extends java.nio.channels.FileChannel {
        private final java.nio.channels.FileChannel ch;
        private long budget = -1;

        ShortWriteChannel(java.nio.channels.FileChannel ch) {
            this.ch = ch;
        }

        void failAfter(long n) {
            budget = n;
        }

        @Override
        public int write(java.nio.ByteBuffer src) throws IOException {
            if (budget == 0) {
                budget = -1;
                throw new IOException("No space left on device");
            }
            if (budget < 0 || src.remaining() <= budget) {
                int n = ch.write(src);
                budget = budget < 0 ? -1 : budget - n;
                return n;
            }
            java.nio.ByteBuffer part = src.duplicate();
            part.limit(part.position() + (int) budget);
            int n = ch.write(part);
            src.position(src.position() + n);
            budget -= n;
            return n;
        }

        @Override
        public int read(java.nio.ByteBuffer dst) throws IOException {
            return ch.read(dst);
        }

        @Override
        public long read(java.nio.ByteBuffer[] dsts, int offset, int length) throws IOException {
            return ch.read(dsts, offset, length);
        }

        @Override
        public long write(java.nio.ByteBuffer[] srcs, int offset, int length) throws IOException {
            return ch.write(srcs, offset, length);
        }

        @Override
        public long position() throws IOException {
            return ch.position();
        }

        @Override
        public java.nio.channels.FileChannel position(long newPosition) throws IOException {
            ch.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return ch.size();
        }

        @Override
        public java.nio.channels.FileChannel truncate(long size) throws IOException {
            ch.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            ch.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, java.nio.channels.WritableByteChannel target)
                throws IOException {
            return ch.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(java.nio.channels.ReadableByteChannel src, long position, long count)
                throws IOException {
            return ch.transferFrom(src, position, count);
        }

        @Override
        public int read(java.nio.ByteBuffer dst, long position) throws IOException {
            return ch.read(dst, position);
        }

        @Override
        public int write(java.nio.ByteBuffer src, long position) throws IOException {
            return ch.write(src, position);
        }

        @Override
        public java.nio.MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return ch.map(mode, position, size);
        }

        @Override
        public java.nio.channels.FileLock lock(long position, long size, boolean shared) throws IOException {
            return ch.lock(position, size, shared);
        }

        @Override
        public java.nio.channels.FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return ch.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            ch.close();
        }
    }

    /**
     * A written file's direct buffers (the first, each one its growth replaced, the last) are freed by the file itself,
     * at growth and at close, also when the close is repeated: the JVM's count of direct buffers comes back to where
     * it was, with no collection in between. Appends stay below the first buffer's size, so the channel never makes a
     * temporary direct buffer of its own.
     */
    @Test
    void aFilesDirectBuffersAreFreedAtGrowthAndClose() throws IOException {
        java.lang.management.BufferPoolMXBean direct = java.lang.management.ManagementFactory.getPlatformMXBeans(
                        java.lang.management.BufferPoolMXBean.class)
                .stream()
                .filter(b -> b.getName().equals("direct"))
                .findFirst()
                .orElseThrow();
        long before = direct.getCount();
        byte[] chunk = new byte[DiskFileSystem.WRITE_BUFFER_SIZE / 3];
        WritableFile w = fs.newWritableFile(dir.resolve("buffers.dat"));
        long written = 0;
        while (written < 3L * DiskFileSystem.MAX_WRITE_BUFFER_SIZE) { // grows to the largest buffer
            w.append(chunk, 0, chunk.length);
            written += chunk.length;
        }
        assertThat(direct.getCount()).as("one buffer while open").isEqualTo(before + 1);
        w.close();
        w.close();
        assertThat(direct.getCount()).as("freed at close, once").isEqualTo(before);
        assertThatThrownBy(() -> w.append(chunk, 0, 1)).isInstanceOf(IOException.class);
        assertThat(Files.size(dir.resolve("buffers.dat"))).isEqualTo(written);
    }

    /**
     * Appends of every size, from a few bytes to more than the largest buffer, across the buffer's growth from
     * {@link DiskFileSystem#WRITE_BUFFER_SIZE} to {@link DiskFileSystem#MAX_WRITE_BUFFER_SIZE}, with flushes between
     * some of them: the file holds exactly the bytes appended, in order.
     */
    @Test
    void appendsOfEverySizeAcrossTheBuffersGrowthLandInOrder() throws IOException {
        long seed = TestSeeds.seed("DiskFileSystemTest.appends");
        Random rnd = new Random(seed);
        Path p = dir.resolve("grow.dat");
        java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
        try (WritableFile w = fs.newWritableFile(p)) {
            while (expected.size() < 4 * DiskFileSystem.MAX_WRITE_BUFFER_SIZE) {
                int len = switch (rnd.nextInt(10)) {
                    case 0 -> DiskFileSystem.MAX_WRITE_BUFFER_SIZE + rnd.nextInt(1000);
                    case 1 -> DiskFileSystem.WRITE_BUFFER_SIZE + rnd.nextInt(1000);
                    default -> rnd.nextInt(5000);
                };
                byte[] b = new byte[len + 2];
                rnd.nextBytes(b);
                w.append(b, 1, len);
                expected.write(b, 1, len);
                if (rnd.nextInt(20) == 0) {
                    w.flush();
                }
                assertThat(w.size()).as("seed %d", seed).isEqualTo(expected.size());
            }
            w.sync();
        }
        assertThat(Files.readAllBytes(p)).as("seed %d", seed).isEqualTo(expected.toByteArray());
    }

    @Test
    void writeThenPositionalReads() throws IOException {
        Path p = dir.resolve("a.dat");
        byte[] big = new byte[DiskFileSystem.WRITE_BUFFER_SIZE * 2 + 17];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        try (WritableFile w = fs.newWritableFile(p)) {
            w.append("hello".getBytes(StandardCharsets.US_ASCII));
            w.append(big, 3, big.length - 3);
            assertThat(w.size()).isEqualTo(5 + big.length - 3);
            w.sync();
        }
        assertThat(fs.size(p)).isEqualTo(5 + big.length - 3);
        try (ReadableFile r = fs.newReadableFile(p)) {
            byte[] head = new byte[5];
            r.readFully(0, head, 0, 5);
            assertThat(new String(head, StandardCharsets.US_ASCII)).isEqualTo("hello");
            byte[] mid = new byte[100];
            r.readFully(5 + 1000, mid, 0, 100);
            for (int i = 0; i < 100; i++) {
                assertThat(mid[i]).isEqualTo(big[3 + 1000 + i]);
            }
            assertThatThrownBy(() -> r.readFully(r.size() - 2, new byte[4], 0, 4))
                    .isInstanceOf(EOFException.class);
        }
    }

    @Test
    void newWritableFileTruncates() throws IOException {
        Path p = dir.resolve("t");
        Files.write(p, new byte[100]);
        try (WritableFile w = fs.newWritableFile(p)) {
            w.append(new byte[] {1, 2});
        }
        assertThat(Files.readAllBytes(p)).containsExactly(1, 2);
    }

    @Test
    void renameDeleteListExists() throws IOException {
        Path a = dir.resolve("a");
        Path b = dir.resolve("b");
        Files.write(a, new byte[] {1});
        Files.write(b, new byte[] {2, 2});
        fs.rename(a, b);
        assertThat(fs.exists(a)).isFalse();
        assertThat(Files.readAllBytes(b)).containsExactly(1);
        fs.createDirectories(dir.resolve("sub/x"));
        assertThat(fs.list(dir)).containsExactly(b, dir.resolve("sub"));
        fs.delete(b);
        fs.delete(b); // absent: no error
        assertThat(fs.exists(b)).isFalse();
        fs.syncDirectory(dir);
        assertThatThrownBy(() -> fs.syncDirectory(dir.resolve("missing"))).isInstanceOf(IOException.class);
    }

    @Test
    void lockIsExclusiveWithinTheJvmAndReleasable() throws IOException {
        Path lock = dir.resolve("LOCK");
        Optional<Closeable> first = fs.tryLock(lock);
        assertThat(first).isPresent();
        assertThat(fs.tryLock(lock)).isEmpty();
        assertThat(fs.tryLock(dir.resolve(".").resolve("LOCK")))
                .as("same file, other spelling")
                .isEmpty();
        first.get().close();
        first.get().close(); // idempotent
        Optional<Closeable> again = fs.tryLock(lock);
        assertThat(again).isPresent();
        again.get().close();
    }

    @Test
    void useAfterCloseFails() throws IOException {
        WritableFile w = fs.newWritableFile(dir.resolve("c"));
        w.close();
        w.close();
        assertThatThrownBy(() -> w.append(new byte[1])).isInstanceOf(IOException.class);
    }
}
