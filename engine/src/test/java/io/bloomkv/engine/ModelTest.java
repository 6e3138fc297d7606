package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LevelDB's ModelDB check: thousands of random puts, deletes, batches, gets, scans, snapshot reads,
 * flushes and reopens, each result compared with a {@link TreeMap} holding what must be there.
 * Seeded: the seed is printed and in every assertion message; replay with -Dbloomkv.seed=N.
 */
class ModelTest {
    @TempDir
    Path dir;

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 6000);

    @Test
    void level0OnlyAgainstTreeMap() {
        run(Options.defaults().writeBufferSize(16 << 10).autoCompaction(false).blockSize(512), "level0Only");
    }

    @Test
    void level0OnlyWithoutMemtableFilterAgainstTreeMap() {
        run(
                Options.defaults()
                        .writeBufferSize(16 << 10)
                        .autoCompaction(false)
                        .blockSize(512)
                        .memtableFilterBitsPerKey(0),
                "level0OnlyNoMemtableFilter");
    }

    @Test
    void withCompactionAndTinyTablesAgainstTreeMap() {
        Options o = Options.defaults()
                .writeBufferSize(4 << 10)
                .blockSize(256)
                .targetFileSize(4 << 10)
                .maxBytesForLevelBase(16 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .l0SlowdownWritesTrigger(4)
                .l0StopWritesTrigger(8);
        Stats s = run(o, "withCompaction");
        assertThat(s.compactions()).as("hundreds of compactions").isGreaterThanOrEqualTo(100);
    }

    @Test
    void monkeyAllocationAgainstTreeMap() {
        Options o = Options.defaults()
                .writeBufferSize(8 << 10)
                .blockSize(512)
                .targetFileSize(8 << 10)
                .maxBytesForLevelBase(32 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .filterAllocation(FilterAllocation.MONKEY);
        run(o, "monkey");
    }

    /** BLOCKED on level 0, RIBBON below (Bloom-equivalent bits per key), with MONKEY's fractional per-level budgets. */
    @Test
    void ribbonBelowLevel1WithMonkeyAgainstTreeMap() {
        Options o = Options.defaults()
                .writeBufferSize(8 << 10)
                .blockSize(512)
                .targetFileSize(8 << 10)
                .maxBytesForLevelBase(32 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .filterAllocation(FilterAllocation.MONKEY)
                .ribbonFromLevel(1);
        run(o, "ribbonMonkey");
    }

    /** Every table RIBBON, uniform budget, with compaction. */
    @Test
    void ribbonEverywhereAgainstTreeMap() {
        Options o = Options.defaults()
                .writeBufferSize(4 << 10)
                .blockSize(256)
                .targetFileSize(4 << 10)
                .maxBytesForLevelBase(16 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .ribbonFromLevel(0);
        run(o, "ribbonEverywhere");
    }

    @Test
    void compressedTablesWithDirectReadsAgainstTreeMap() {
        Options o = Options.defaults()
                .writeBufferSize(8 << 10)
                .blockSize(512)
                .targetFileSize(8 << 10)
                .maxBytesForLevelBase(32 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .compression(Compression.LZ4)
                .bottommostCompression(Compression.ZSTD)
                .useDirectReads(true)
                .blockCacheSize(0);
        run(o, "compressedDirect");
    }

    /** A random value of 0..maxLength bytes; compressible (random half, repeated) when the options compress. */
    private static byte[] value(Random rnd, int maxLength, Options options) {
        byte[] v = TestKeys.value(rnd, maxLength);
        if (options.compression() != Compression.NONE) {
            for (int i = v.length / 2; i < v.length; i++) {
                v[i] = v[i - v.length / 2];
            }
        }
        return v;
    }

    private Stats run(Options options, String name) {
        long seed = TestKeys.seed("ModelTest." + name);
        Random rnd = new Random(seed);
        String ctx = "seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        TreeMap<String, byte[]> model = new TreeMap<>();
        Db db = Db.open(dir, options);
        Snapshot snap = null;
        TreeMap<String, byte[]> snapModel = null;
        long compactions = 0;
        Stats last = null;
        try {
            for (int op = 0; op < OPS; op++) {
                String where = ctx + " op " + op;
                int r = rnd.nextInt(1000);
                if (r < 400) {
                    byte[] k = randomKey(rnd);
                    byte[] v = value(rnd, 100, options);
                    db.put(k, v);
                    model.put(TestKeys.str(k), v);
                } else if (r < 500) {
                    byte[] k = randomKey(rnd);
                    db.delete(k);
                    model.remove(TestKeys.str(k));
                } else if (r < 550) {
                    WriteBatch b = new WriteBatch();
                    int n = 1 + rnd.nextInt(20);
                    for (int i = 0; i < n; i++) {
                        byte[] k = randomKey(rnd);
                        if (rnd.nextInt(4) == 0) {
                            b.delete(k);
                            model.remove(TestKeys.str(k));
                        } else {
                            byte[] v = value(rnd, 100, options);
                            b.put(k, v);
                            model.put(TestKeys.str(k), v);
                        }
                    }
                    db.write(b);
                } else if (r < 850) {
                    byte[] k = randomKey(rnd);
                    assertThat(db.get(k)).as(where + " get " + TestKeys.str(k)).isEqualTo(model.get(TestKeys.str(k)));
                } else if (r < 930) {
                    checkScan(db, null, model, rnd, where);
                } else if (r < 960) {
                    if (snap != null) {
                        checkScan(db, snap, snapModel, rnd, where + " (snapshot)");
                        byte[] k = randomKey(rnd);
                        assertThat(db.get(k, ReadOptions.defaults().snapshot(snap)))
                                .as(where + " snapshot get")
                                .isEqualTo(snapModel.get(TestKeys.str(k)));
                        if (rnd.nextInt(3) == 0) {
                            snap.close();
                            snap = null;
                        }
                    } else {
                        snap = db.getSnapshot();
                        snapModel = new TreeMap<>(model);
                    }
                } else if (r < 980) {
                    db.flush();
                } else if (r < 985) {
                    byte[] a = randomKey(rnd);
                    byte[] b = randomKey(rnd);
                    if (Arrays.compareUnsigned(a, b) > 0) {
                        byte[] t = a;
                        a = b;
                        b = t;
                    }
                    db.compactRange(rnd.nextBoolean() ? a : null, rnd.nextBoolean() ? b : null);
                } else {
                    compactions += db.stats().compactions();
                    if (snap != null) {
                        snap.close();
                        snap = null;
                    }
                    db.close();
                    db = Db.open(dir, options);
                }
            }
            db.waitForBackgroundWork();
            checkScan(db, null, model, rnd, ctx + " final");
            for (String k : model.keySet()) {
                assertThat(db.get(TestKeys.bytes(k)))
                        .as(ctx + " final get " + k)
                        .isEqualTo(model.get(k));
            }
            last = db.stats();
            System.out.println("ModelTest." + name + ": " + last);
        } finally {
            if (snap != null) {
                snap.close();
            }
            db.close();
        }
        Stats total = new Stats();
        total.compactions = compactions + last.compactions();
        System.out.println("ModelTest." + name + ": " + total.compactions + " compactions in all");
        return total;
    }

    private static byte[] randomKey(Random rnd) {
        return TestKeys.key(rnd.nextInt(rnd.nextInt(10) == 0 ? 5000 : 600));
    }

    private static void checkScan(Db db, Snapshot snap, TreeMap<String, byte[]> model, Random rnd, String where) {
        byte[] start = rnd.nextInt(4) == 0 ? null : randomKey(rnd);
        int limit = 1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 5000 : 50);
        List<String> expected = new ArrayList<>();
        Map<String, byte[]> tail = start == null ? model : model.tailMap(TestKeys.str(start), true);
        for (Map.Entry<String, byte[]> e : tail.entrySet()) {
            if (expected.size() >= limit) {
                break;
            }
            expected.add(e.getKey() + "=" + Arrays.toString(e.getValue()));
        }
        List<String> actual = new ArrayList<>();
        try (DbIterator it = db.iterator(ReadOptions.defaults().snapshot(snap))) {
            if (start == null) {
                it.seekToFirst();
            } else {
                it.seek(start);
            }
            for (; it.valid() && actual.size() < limit; it.next()) {
                actual.add(TestKeys.str(it.key()) + "=" + Arrays.toString(it.value()));
            }
        }
        assertThat(actual)
                .as(where + " scan from " + TestKeys.str(start) + " limit " + limit)
                .isEqualTo(expected);
    }
}
