package io.bloomkv.engine.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.TestSeeds;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * O_DIRECT appends through {@link FileSystem#newDirectWritableFile}: any sizes, flushes and syncs anywhere, and the file
 * on disk holds exactly the bytes handed to the operating system (no padding past them), as a plain writable file's.
 */
class DirectWritableFileTest {
    @TempDir
    Path dir;

    @Test
    void randomAppendsFlushesAndSyncsLeaveExactlyTheAppendedBytes() throws IOException {
        long seed = TestSeeds.seed("DirectWritableFileTest");
        Random rnd = new Random(seed);
        Path p = dir.resolve("data.sst");
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        // A small buffer (a few blocks) so that whole-buffer writes, tails and rewrites of a padded tail all happen.
        try (DirectWritableFile f = DirectWritableFile.open(p, 3 * 4096)) {
            int align = f.alignment();
            assertThat(Integer.bitCount(align)).isEqualTo(1);
            for (int op = 0; op < 400; op++) {
                int kind = rnd.nextInt(10);
                if (kind < 7) {
                    int[] sizes = {0, 1, align - 1, align, align + 1, 3 * align, 5 * align + 17, rnd.nextInt(20_000)};
                    byte[] b = new byte[sizes[rnd.nextInt(sizes.length)] + 3];
                    rnd.nextBytes(b);
                    f.append(b, 1, b.length - 3);
                    expected.write(b, 1, b.length - 3);
                    assertThat(f.size()).as("seed %d op %d", seed, op).isEqualTo(expected.size());
                } else {
                    if (kind == 7) {
                        f.sync();
                    } else {
                        f.flush();
                    }
                    // What was handed over is on disk, and nothing after it (the padding of the tail is cut off).
                    assertThat(Files.readAllBytes(p))
                            .as("seed %d op %d", seed, op)
                            .isEqualTo(expected.toByteArray());
                }
            }
        }
        assertThat(Files.readAllBytes(p)).as("seed %d, after close", seed).isEqualTo(expected.toByteArray());
    }

    /**
     * Create truncates; close is idempotent and frees the file's direct buffer at once, exactly once: the JVM's count
     * of direct buffers and their bytes are one buffer (of the write buffer's size and an alignment) above where they
     * were while the file is open, and back there after the first close and the second, with no collection in between.
     * Nothing between the counts makes a direct buffer of its own (appends and writes of the file's own buffer do not).
     */
    @Test
    void createTruncatesAnExistingFileAndCloseIsIdempotent() throws Exception {
        DirectMemory.withoutCollection(this::createTruncatesAndCloseFreesOnce);
    }

    private void createTruncatesAndCloseFreesOnce() throws IOException {
        Path p = dir.resolve("t.sst");
        Files.write(p, new byte[100_000]);
        long buffers = DirectMemory.count();
        long bytes = DirectMemory.bytes();
        WritableFile f = FileSystem.disk().newDirectWritableFile(p);
        assertThat(f).isInstanceOf(DirectWritableFile.class);
        int align = ((DirectWritableFile) f).alignment();
        assertThat(DirectMemory.count()).as("one direct buffer while open").isEqualTo(buffers + 1);
        assertThat(DirectMemory.bytes())
                .as("the write buffer and an alignment")
                .isEqualTo(bytes + DiskFileSystem.DIRECT_WRITE_BUFFER_SIZE + align);
        assertThat(Files.size(p)).isZero();
        byte[] b = "hello, direct".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        f.append(b);
        f.close();
        assertThat(DirectMemory.count()).as("freed at close").isEqualTo(buffers);
        assertThat(DirectMemory.bytes()).as("freed at close").isEqualTo(bytes);
        f.close();
        assertThat(DirectMemory.count()).as("the second close changes nothing").isEqualTo(buffers);
        assertThat(DirectMemory.bytes()).isEqualTo(bytes);
        assertThat(Files.readAllBytes(p)).isEqualTo(b);
        assertThatThrownBy(() -> f.append(b)).isInstanceOf(IOException.class).hasMessageContaining("closed");
        assertThatThrownBy(f::sync).isInstanceOf(IOException.class);
    }

    @Test
    void aWholeBufferOfAppendsReachesTheFileBeforeAnyFlush() throws IOException {
        Path p = dir.resolve("w.sst");
        try (DirectWritableFile f = DirectWritableFile.open(p, 4096)) {
            int align = f.alignment();
            byte[] b = new byte[2 * Math.max(align, 4096) + 10];
            new Random(7).nextBytes(b);
            f.append(b);
            // The whole blocks went out with O_DIRECT; the 10-byte tail waits for a flush.
            long onDisk = Files.size(p);
            assertThat(onDisk % align).isZero();
            assertThat(onDisk).isPositive().isLessThanOrEqualTo(b.length);
            assertThat(Files.readAllBytes(p)).isEqualTo(Arrays.copyOf(b, (int) onDisk));
        }
    }

    @Test
    void aFileSystemWithoutDirectWritesRefusesAndTheFaultInjectingOnePassesThemThrough() throws IOException {
        Path p = dir.resolve("x.sst");
        FileSystem inMemory = new InMemoryFileSystem();
        assertThatThrownBy(() -> inMemory.newDirectWritableFile(p))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("does not support direct writes")
                .hasMessageContaining(p.toString());
        // A forwarding file system does not forward direct writes unless it says so (its newWritableFile wrapping
        // would be bypassed).
        FileSystem forwarding = new FileSystemWithoutDirectReads(FileSystem.disk());
        assertThatThrownBy(() -> forwarding.newDirectWritableFile(p)).isInstanceOf(IOException.class);
        assertThat(Files.exists(p)).isFalse();

        FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
        try (WritableFile f = ffs.newDirectWritableFile(p)) {
            f.append(new byte[] {1, 2, 3});
            f.sync();
            assertThat(ffs.durableSize(p)).isEqualTo(3);
            f.append(new byte[] {4});
            ffs.inject(FaultInjectingFileSystem.on(FaultInjectingFileSystem.Op.SYNC, "x.sst"));
            assertThatThrownBy(f::sync).isInstanceOf(InjectedIOException.class);
        }
        ffs.crash();
        assertThat(Files.readAllBytes(p)).containsExactly(1, 2, 3);
    }
}
