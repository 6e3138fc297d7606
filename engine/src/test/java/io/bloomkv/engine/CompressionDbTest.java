package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Options.compression / bottommostCompression through a Db: which tables get which codec, and reads across them. */
class CompressionDbTest {
    @TempDir
    Path dir;

    private static byte[] key(int i) {
        return String.format("user%08d", i).getBytes(StandardCharsets.US_ASCII);
    }

    /** 100 bytes that compress to about half (db_bench's generator: random half, repeated), determined by (i, round). */
    private static byte[] value(int i, int round) {
        Random r = new Random(31L * i + round);
        byte[] half = new byte[50];
        r.nextBytes(half);
        byte[] v = new byte[100];
        for (int j = 0; j < v.length; j++) {
            v[j] = half[j % half.length];
        }
        return v;
    }

    private static void checkAll(Db db, int n, int round) {
        for (int i = 0; i < n; i++) {
            assertThat(db.get(key(i))).as("key %d round %d", i, round).isEqualTo(value(i, round));
        }
    }

    @Test
    void flushesUseCompressionAndTheBottommostLevelUsesBottommostCompression() {
        Options o = Options.defaults()
                .writeBufferSize(64 << 10)
                .blockSize(1024)
                .targetFileSize(64 << 10)
                .maxBytesForLevelBase(128 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .compression(Compression.LZ4)
                .bottommostCompression(Compression.ZSTD);
        int n = 12_000;
        try (Db db = Db.open(dir, o)) {
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < n; i++) {
                    db.put(key(i), value(i, round));
                }
            }
            db.flush();
            db.waitForBackgroundWork();
            List<TableInfo> tables = db.tables();
            int deepest = tables.stream().mapToInt(TableInfo::level).max().orElseThrow();
            assertThat(deepest).as("tiny levels: the tree grows past level 1").isGreaterThanOrEqualTo(2);
            for (TableInfo t : tables) {
                assertThat(t.dataBytes()).as("table %d", t.fileNumber()).isLessThan(t.dataUncompressedBytes() * 8 / 10);
                if (t.level() == 0) {
                    assertThat(t.compression())
                            .as("flushed table %d", t.fileNumber())
                            .isEqualTo(Compression.LZ4);
                }
            }
            assertThat(tables).anyMatch(t -> t.compression() == Compression.ZSTD);
            assertThat(tables)
                    .filteredOn(t -> t.compression() == Compression.ZSTD)
                    .allMatch(t -> t.level() >= 1);
            // the rule itself, on the current tree
            for (int level = 1; level < o.numLevels(); level++) {
                assertThat(db.compressionForLevel(level))
                        .as("level %d of %d", level, deepest)
                        .isEqualTo(level >= deepest ? Compression.ZSTD : Compression.LZ4);
            }
            assertThat(db.compressionForLevel(0)).isEqualTo(Compression.LZ4);
            checkAll(db, n, 1);
        }
        // reopened with another compression: old tables are read by their own trailer bytes, new ones are uncompressed
        try (Db db = Db.open(dir, Options.defaults().compression(Compression.NONE))) {
            checkAll(db, n, 1);
            java.util.Set<Long> before = new java.util.HashSet<>();
            db.tables().forEach(t -> before.add(t.fileNumber()));
            for (int i = 0; i < 1000; i++) {
                db.put(key(i), value(i, 2));
            }
            db.flush();
            assertThat(db.tables())
                    .filteredOn(t -> !before.contains(t.fileNumber()))
                    .isNotEmpty()
                    .allSatisfy(t -> {
                        assertThat(t.compression()).isEqualTo(Compression.NONE);
                        assertThat(t.dataBytes()).isEqualTo(t.dataUncompressedBytes());
                    });
            for (int i = 0; i < 1000; i++) {
                assertThat(db.get(key(i))).isEqualTo(value(i, 2));
            }
            for (int i = 1000; i < n; i++) {
                assertThat(db.get(key(i))).isEqualTo(value(i, 1));
            }
        }
    }

    @Test
    void bottommostCompressionDefaultsToCompression() {
        Options o = Options.defaults().compression(Compression.ZSTD);
        assertThat(o.bottommostCompression()).isEqualTo(Compression.ZSTD);
        assertThat(o.copy().compression(Compression.LZ4).bottommostCompression())
                .isEqualTo(Compression.LZ4);
        assertThat(o.bottommostCompression(Compression.NONE).copy().bottommostCompression())
                .isEqualTo(Compression.NONE);
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> Options.defaults().compression(null))
                .isInstanceOf(InvalidArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> Options.defaults().bottommostCompression(null))
                .isInstanceOf(InvalidArgumentException.class);
    }
}
