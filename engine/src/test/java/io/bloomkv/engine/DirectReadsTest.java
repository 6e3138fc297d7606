package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.FileSystemWithoutDirectReads;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Options.useDirectReads through a Db: reads are device reads, answers unchanged, refusal where unsupported. */
class DirectReadsTest {
    @TempDir
    Path dir;

    private static byte[] key(int i) {
        return String.format("k%07d", i).getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void getsAndScansWithDirectReadsCountEveryBlockAsARead() {
        long seed = TestSeeds.seed("DirectReadsTest");
        Random rnd = new Random(seed);
        int n = 5000;
        byte[][] values = new byte[n][];
        // odd value sizes: blocks end at unaligned offsets
        Options o = Options.defaults()
                .writeBufferSize(128 << 10)
                .blockCacheSize(0)
                .useDirectReads(true)
                .compression(Compression.LZ4);
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < n; i += 2) {
                values[i] = new byte[1 + rnd.nextInt(300)];
                rnd.nextBytes(values[i]);
                db.put(key(i), values[i]);
            }
            db.compactRange(null, null);
            Stats before = db.stats();
            for (int i = 0; i < n; i++) {
                assertThat(db.get(key(i))).as("key %d seed %d", i, seed).isEqualTo(values[i]);
            }
            Stats after = db.stats();
            // no block cache: every data-block access of a present key is a read from the device
            assertThat(after.blockReads() - before.blockReads())
                    .isEqualTo(after.dataBlockAccesses() - before.dataBlockAccesses())
                    .isGreaterThanOrEqualTo(n / 2);
            int seen = 0;
            try (DbIterator it = db.iterator()) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    assertThat(it.value())
                            .isEqualTo(values[
                                    Integer.parseInt(new String(it.key(), StandardCharsets.US_ASCII).substring(1))]);
                    seen++;
                }
            }
            assertThat(seen).isEqualTo(n / 2);
            // the last key lives in the file's last data block
            assertThat(db.get(key(n - 2))).isEqualTo(values[n - 2]);
        }
    }

    @Test
    void openRefusesWhereTheFileSystemHasNoDirectReads() {
        Options o = Options.defaults()
                .fileSystem(new FileSystemWithoutDirectReads(FileSystem.disk()))
                .useDirectReads(true);
        assertThatThrownBy(() -> Db.open(dir, o))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("useDirectReads")
                .hasMessageContaining(dir.toAbsolutePath().toString())
                .hasMessageContaining("O_DIRECT");
        // the refused open left nothing locked or open
        try (Db db = Db.open(dir, o.copy().useDirectReads(false))) {
            db.put(key(1), key(1));
        }
    }

    @Test
    void faultInjectingFileSystemPassesDirectReadsThrough() {
        FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
        Options o = Options.defaults().fileSystem(ffs).blockCacheSize(0).useDirectReads(true);
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < 2000; i++) {
                db.put(key(i), key(i));
            }
            db.flush();
            ffs.inject(FaultInjectingFileSystem.on(FaultInjectingFileSystem.Op.READ, "*.sst"));
            assertThatThrownBy(() -> db.get(key(7))).isInstanceOf(BloomKvException.class);
            ffs.clearFaults();
            assertThat(db.get(key(7))).isEqualTo(key(7));
        }
    }
}
