package io.bloomkv.engine.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.TestSeeds;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads through {@link FileSystem#newMappedReadableFile}: the same bytes as the file at any position and length,
 * the mapping released exactly once, closing safe against reads in flight, and a fault while copying an
 * {@link IOException} rather than a crash.
 */
class MappedReadableFileTest {
    @TempDir
    Path dir;

    @Test
    void readsAnywhereReturnTheFilesBytes() throws IOException {
        long seed = TestSeeds.seed("MappedReadableFileTest");
        Random rnd = new Random(seed);
        byte[] content = new byte[40 * 4096 + 1234]; // ends inside a page; long enough for a MADV_WILLNEED read
        rnd.nextBytes(content);
        Path p = dir.resolve("data");
        Files.write(p, content);
        try (ReadableFile f = FileSystem.disk().newMappedReadableFile(p)) {
            assertThat(f).isInstanceOf(MappedReadableFile.class);
            assertThat(f.size()).isEqualTo(content.length);
            assertThat(f.path()).isEqualTo(p);
            int[][] cases = {
                {0, 1},
                {0, 4096},
                {4093, 7},
                {content.length - 1, 1},
                {0, content.length},
                {content.length - 5000, 5000},
                {7, 0},
                {content.length, 0},
                {3, MappedReadableFile.WILLNEED_BYTES + 5}
            };
            for (int[] c : cases) {
                check(f, content, c[0], c[1], "seed " + seed);
            }
            for (int i = 0; i < 2000; i++) {
                int pos = rnd.nextInt(content.length);
                int len = rnd.nextInt(Math.min(content.length - pos, 9000) + 1);
                check(f, content, pos, len, "seed " + seed);
            }
            // into the middle of a larger array
            byte[] dst = new byte[100];
            f.readFully(10, dst, 40, 50);
            assertThat(Arrays.copyOfRange(dst, 40, 90)).isEqualTo(Arrays.copyOfRange(content, 10, 60));
            assertThat(Arrays.copyOfRange(dst, 0, 40)).containsOnly(0);
            assertThatThrownBy(() -> f.readFully(content.length - 10, new byte[11], 0, 11))
                    .isInstanceOf(EOFException.class)
                    .hasMessageContaining(p.toString());
            assertThatThrownBy(() -> f.readFully(Long.MAX_VALUE - 2, new byte[8], 0, 8))
                    .isInstanceOf(EOFException.class);
            assertThatThrownBy(() -> f.readFully(-1, new byte[1], 0, 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> f.readFully(0, new byte[4], 2, 3)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    private static void check(ReadableFile f, byte[] content, int pos, int len, String why) throws IOException {
        byte[] got = new byte[len];
        f.readFully(pos, got, 0, len);
        assertThat(got).as("%s: %d bytes at %d", why, len, pos).isEqualTo(Arrays.copyOfRange(content, pos, pos + len));
    }

    @Test
    void anEmptyFileIsNotMappedAndReadsNothing() throws IOException {
        Path p = dir.resolve("empty");
        Files.write(p, new byte[0]);
        long before = DiskFileSystem.liveMappedFiles();
        try (ReadableFile f = FileSystem.disk().newMappedReadableFile(p)) {
            assertThat(f.size()).isZero();
            f.readFully(0, new byte[0], 0, 0);
            assertThatThrownBy(() -> f.readFully(0, new byte[1], 0, 1)).isInstanceOf(EOFException.class);
            assertThat(DiskFileSystem.liveMappedFiles()).isEqualTo(before);
        }
    }

    @Test
    void closeUnmapsOnceAndLaterReadsThrow() throws IOException {
        Path p = dir.resolve("data");
        Files.write(p, new byte[3 * 4096]);
        long files = DiskFileSystem.liveMappedFiles();
        long bytes = DiskFileSystem.liveMappedBytes();
        ReadableFile f = FileSystem.disk().newMappedReadableFile(p);
        assertThat(DiskFileSystem.liveMappedFiles()).isEqualTo(files + 1);
        assertThat(DiskFileSystem.liveMappedBytes()).isEqualTo(bytes + 3 * 4096);
        f.close();
        f.close(); // idempotent: unmapped once
        assertThat(DiskFileSystem.liveMappedFiles()).isEqualTo(files);
        assertThat(DiskFileSystem.liveMappedBytes()).isEqualTo(bytes);
        assertThatThrownBy(() -> f.readFully(0, new byte[1], 0, 1))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("closed")
                .hasMessageContaining(p.toString());
    }

    @Test
    void aMissingFileIsAnIOExceptionNamingIt() {
        Path p = dir.resolve("missing");
        assertThatThrownBy(() -> FileSystem.disk().newMappedReadableFile(p))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(p.toString());
    }

    /**
     * Readers hammer the mapping while two other threads close it at once: every read either returns the file's bytes
     * or throws "closed"; none touches unmapped memory (which would crash the JVM, failing the whole run). The closes
     * start only once every reader has read, and the readers read until they are refused, so every reader is still
     * reading when the file is closed: each ends with one refused read, in every round. The racing closes unmap once:
     * the count of mapped files and their bytes come back to where they were.
     */
    @Test
    void closeWaitsForReadsInFlight() throws Exception {
        long seed = TestSeeds.seed("MappedReadableFileTest.close");
        byte[] content = new byte[64 * 4096];
        new Random(seed).nextBytes(content);
        Path p = dir.resolve("data");
        Files.write(p, content);
        long files = DiskFileSystem.liveMappedFiles();
        long bytes = DiskFileSystem.liveMappedBytes();
        int readers = 3;
        long readsBeforeClose = 50;
        for (int round = 0; round < 20; round++) {
            String ctx = "seed " + seed + " round " + round;
            ReadableFile f = FileSystem.disk().newMappedReadableFile(p);
            assertThat(DiskFileSystem.liveMappedFiles()).as(ctx).isEqualTo(files + 1);
            CountDownLatch reading = new CountDownLatch(readers);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicLong good = new AtomicLong();
            AtomicLong refused = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < readers; t++) {
                long s = seed + 31L * round + t;
                Thread th = new Thread(() -> {
                    Random rnd = new Random(s);
                    byte[] buf = new byte[16384];
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    for (long i = 0; ; i++) {
                        if (i == readsBeforeClose) {
                            reading.countDown();
                        }
                        if ((i & 1023) == 0 && System.nanoTime() > deadline) {
                            failure.compareAndSet(null, new AssertionError("never refused, seed " + s));
                            return;
                        }
                        int pos = rnd.nextInt(content.length - buf.length);
                        try {
                            f.readFully(pos, buf, 0, buf.length);
                        } catch (IOException e) {
                            if (!e.getMessage().contains("closed")) {
                                failure.compareAndSet(null, e);
                            }
                            refused.incrementAndGet();
                            return;
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                            return;
                        }
                        if (!Arrays.equals(buf, 0, buf.length, content, pos, pos + buf.length)) {
                            failure.compareAndSet(null, new AssertionError("wrong bytes at " + pos + ", seed " + s));
                            return;
                        }
                        good.incrementAndGet();
                    }
                });
                th.start();
                threads.add(th);
            }
            assertThat(reading.await(60, TimeUnit.SECONDS)).as(ctx).isTrue();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> closers = new ArrayList<>();
            for (int c = 0; c < 2; c++) {
                Thread closer = new Thread(() -> {
                    try {
                        go.await();
                        f.close();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                closer.start();
                closers.add(closer);
            }
            go.countDown();
            for (Thread th : closers) {
                th.join();
            }
            for (Thread th : threads) {
                th.join();
            }
            assertThat(failure.get()).as(ctx).isNull();
            assertThat(good.get()).as(ctx).isGreaterThanOrEqualTo(readers * readsBeforeClose);
            assertThat(refused.get())
                    .as("%s: every reader was still reading when the file was closed", ctx)
                    .isEqualTo(readers);
            assertThat(DiskFileSystem.liveMappedFiles())
                    .as("%s: unmapped once by the racing closes", ctx)
                    .isEqualTo(files);
            assertThat(DiskFileSystem.liveMappedBytes()).as(ctx).isEqualTo(bytes);
        }
    }

    /**
     * The file shrinks under its mapping: reading the vanished page does not crash the JVM and does not go unnoticed.
     * The copy stops short and the JVM throws its InternalError at the thread's next safepoint poll (forced here by a
     * GC at the latest): inside the read it is an IOException, after it the InternalError. Either way the reading
     * thread sees an error for every such read, and never the vanished bytes.
     */
    @Test
    void aFaultWhileCopyingIsReportedNotACrash() throws IOException {
        Path p = dir.resolve("shrinks");
        byte[] content = new byte[4 * 4096];
        Arrays.fill(content, (byte) 7);
        Files.write(p, content);
        try (ReadableFile f = FileSystem.disk().newMappedReadableFile(p)) {
            byte[] warm = new byte[4096];
            for (int i = 0; i < 200_000; i++) { // interpreted first, then compiled
                f.readFully((i & 3) * 4096L, warm, 0, warm.length);
            }
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                ch.truncate(4096);
            }
            byte[] first = new byte[100];
            f.readFully(0, first, 0, first.length); // still backed by the file
            assertThat(first).containsOnly(7);
            int ioExceptions = 0;
            int internalErrors = 0;
            for (int i = 0; i < 100; i++) {
                try {
                    byte[] got = new byte[100];
                    try {
                        f.readFully(2 * 4096, got, 0, got.length);
                    } catch (IOException e) {
                        assertThat(e).hasMessageContaining(p.toString()).hasMessageContaining("fault");
                        ioExceptions++;
                        continue;
                    }
                    assertThat(got)
                            .as("the vanished page's bytes are never returned")
                            .doesNotContain(7);
                    System.gc(); // a safepoint: a fault recorded by compiled code is thrown here at the latest
                } catch (InternalError e) {
                    assertThat(e).hasMessageContaining("unsafe memory access");
                    internalErrors++;
                }
            }
            try {
                System.gc();
            } catch (InternalError e) {
                internalErrors++;
            }
            assertThat(ioExceptions + internalErrors).as("faults reported").isGreaterThanOrEqualTo(100);
            System.out.println("MappedReadableFileTest: faults as IOException " + ioExceptions + ", as InternalError "
                    + internalErrors);
        }
    }

    @Test
    void fileSystemsWithoutMappingsRefuseAndForwardingPassesThrough() throws IOException {
        Path p = dir.resolve("data");
        Files.write(p, new byte[] {1, 2, 3});
        assertThatThrownBy(() -> new InMemoryFileSystem().newMappedReadableFile(p))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("memory-mapped");
        try (ReadableFile f = new ForwardingFileSystem(FileSystem.disk()) {}.newMappedReadableFile(p)) {
            assertThat(f).isInstanceOf(MappedReadableFile.class);
        }
        FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
        try (ReadableFile f = ffs.newMappedReadableFile(p)) {
            byte[] b = new byte[3];
            f.readFully(0, b, 0, 3);
            assertThat(b).containsExactly(1, 2, 3);
        }
    }
}
