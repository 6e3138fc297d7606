package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Db.multiGet equals a get of each key, and the model, across memtables, flushes, compactions, snapshots and filter kinds. */
class MultiGetTest {
    @TempDir
    Path dir;

    private static byte[] key(Random rnd) {
        return TestKeys.key(rnd.nextInt(4000));
    }

    private void check(Db db, TreeMap<String, byte[]> model, Random rnd, String ctx, ReadOptions ro) {
        int n = 1 + rnd.nextInt(64);
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add(rnd.nextInt(8) == 0 && !keys.isEmpty() ? keys.get(rnd.nextInt(keys.size())) : key(rnd));
        }
        List<byte[]> got = db.multiGet(ro, keys);
        assertThat(got).hasSize(n);
        for (int i = 0; i < n; i++) {
            byte[] single = db.get(keys.get(i), ro);
            assertThat(got.get(i))
                    .as("%s key %s", ctx, TestKeys.str(keys.get(i)))
                    .isEqualTo(single);
            if (model != null) {
                assertThat(got.get(i))
                        .as("%s key %s vs model", ctx, TestKeys.str(keys.get(i)))
                        .isEqualTo(model.get(TestKeys.str(keys.get(i))));
            }
        }
    }

    private void run(Options options, String name) {
        long seed = TestKeys.seed("MultiGetTest." + name);
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        try (Db db = Db.open(dir.resolve(name), options)) {
            Snapshot snap = null;
            TreeMap<String, byte[]> snapModel = null;
            for (int op = 0; op < 12_000; op++) {
                String ctx = "seed " + seed + " op " + op;
                int r = rnd.nextInt(100);
                if (r < 55) {
                    byte[] k = key(rnd);
                    byte[] v = TestKeys.value(rnd, 80);
                    db.put(k, v);
                    model.put(TestKeys.str(k), v);
                } else if (r < 70) {
                    byte[] k = key(rnd);
                    db.delete(k);
                    model.remove(TestKeys.str(k));
                } else if (r < 95) {
                    check(db, model, rnd, ctx, null);
                } else if (r < 96) {
                    db.flush();
                } else if (r < 97) {
                    if (snap != null) {
                        snap.close();
                    }
                    snap = db.getSnapshot();
                    snapModel = new TreeMap<>(model);
                } else if (snap != null) {
                    check(
                            db,
                            snapModel,
                            rnd,
                            ctx + " (snapshot)",
                            ReadOptions.defaults().snapshot(snap));
                }
            }
            if (snap != null) {
                snap.close();
            }
            assertThat(db.tables()).as("seed %d: tables were read", seed).isNotEmpty();
        }
    }

    @Test
    void equalsGetWithBlockedFiltersAndCompaction() {
        run(
                Options.defaults()
                        .writeBufferSize(16 << 10)
                        .blockSize(512)
                        .targetFileSize(16 << 10)
                        .maxBytesForLevelBase(64 << 10)
                        .levelSizeMultiplier(4)
                        .l0CompactionTrigger(3),
                "blocked");
    }

    @Test
    void equalsGetWithRibbonBelowLevel1WithoutCache() {
        run(
                Options.defaults()
                        .writeBufferSize(16 << 10)
                        .blockSize(512)
                        .targetFileSize(16 << 10)
                        .maxBytesForLevelBase(64 << 10)
                        .levelSizeMultiplier(4)
                        .l0CompactionTrigger(3)
                        .ribbonFromLevel(1)
                        .blockCacheSize(0),
                "ribbon");
    }

    @Test
    void equalsGetWithoutFilters() {
        run(Options.defaults().writeBufferSize(16 << 10).blockSize(512).bitsPerKey(0), "nofilter");
    }

    @Test
    void absentKeysAreRejectedByTheFiltersAndCountedLikeGets() {
        try (Db db = Db.open(dir, Options.defaults().blockCacheSize(0).autoCompaction(false))) {
            for (int t = 0; t < 3; t++) {
                for (int i = t; i < 6000; i += 3) {
                    db.put(TestKeys.key(2L * i), TestKeys.bytes("v" + i));
                }
                db.flush();
            }
            List<byte[]> absent = new ArrayList<>();
            for (int i = 10; i < 5900; i += 7) {
                absent.add(TestKeys.key(2L * i + 1));
            }
            Stats before = db.stats();
            List<byte[]> got = db.multiGet(absent);
            Stats s = db.stats();
            assertThat(got).hasSize(absent.size()).containsOnlyNulls();
            long checks = s.filterChecks() - before.filterChecks();
            long positives = s.filterPositive() - before.filterPositive();
            assertThat(checks).isEqualTo(3L * absent.size());
            assertThat(s.blockReads() - before.blockReads())
                    .as("only false positives read")
                    .isEqualTo(positives);
            assertThat(s.gets() - before.gets()).isEqualTo(absent.size());
            assertThat(s.misses() - before.misses()).isEqualTo(absent.size());
            assertThat(db.multiGet(List.of())).isEmpty();
            List<byte[]> withNull = new ArrayList<>();
            withNull.add(null);
            assertThatThrownBy(() -> db.multiGet(withNull)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.multiGet(null)).isInstanceOf(InvalidArgumentException.class);
        }
    }
}
