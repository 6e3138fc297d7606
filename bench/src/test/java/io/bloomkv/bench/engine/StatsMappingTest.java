package io.bloomkv.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.ValueSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Both adapters map their engine's statistics the same way: the same workload on the same keys
 * must give counts that obey the same identities. Two overlapping tables, 64 KiB block cache.
 * Replay with -Dbench.seed=N.
 */
class StatsMappingTest {
    private static final long SEED = Long.getLong("bench.seed", System.nanoTime());
    private static final int N = 6_000;

    static {
        System.out.println("StatsMappingTest seed = " + SEED + " (replay with -Dbench.seed=" + SEED + ")");
    }

    static Stream<Arguments> engines() {
        return Stream.of(Arguments.of("bloomkv"), Arguments.of("rocksdb"));
    }

    private static BenchEngine load(String engine, Path dir, boolean filters, KeySpace ks) throws Exception {
        EngineSettings s = new EngineSettings(filters, 10, "BLOCKED", 4096, 64 * 1024, 64L << 20, false);
        BenchEngine e = EngineFactory.open(engine, dir, s);
        ValueSource values = new ValueSource(100, SEED);
        int[] order = ks.shuffledLoadOrder(SEED);
        // two flushes of interleaved halves: two tables whose key ranges overlap completely
        for (int half = 0; half < 2; half++) {
            List<byte[]> keys = new ArrayList<>();
            List<byte[]> vals = new ArrayList<>();
            for (int i = half * N / 2; i < (half + 1) * N / 2; i++) {
                long id = ks.loadedId(order[i]);
                keys.add(ks.key(id));
                vals.add(values.value(id, 0));
            }
            e.putAll(keys, vals);
            e.flushAndSettle();
        }
        return e;
    }

    @ParameterizedTest
    @MethodSource("engines")
    void absentKeysCountTheSameWayOnBothEngines(String engine, @TempDir Path dir) throws Exception {
        KeySpace ks = new KeySpace(N, 16);
        try (BenchEngine e = load(engine, dir, true, ks)) {
            TableSummary t = e.tables();
            assertThat(t.tableCount()).as("%s seed %d", engine, SEED).isEqualTo(2);
            assertThat(t.entries()).isEqualTo(N);
            assertThat(t.filterBitsPerKey()).as("%s filter bits/key", engine).isBetween(9.0, 11.5);
            assertThat(t.theoreticalFpr())
                    .as("%s theoretical FPR at 10 bits/key", engine)
                    .isBetween(0.005, 0.02);
            assertThat(t.sstBytes()).isPositive();
            SplittableRandom rnd = new SplittableRandom(SEED);
            int gets = 5_000;
            byte[][] keys = new byte[gets][];
            for (int i = 0; i < gets; i++) {
                keys[i] = ks.key(ks.missingId(rnd.nextLong(ks.missingCount())));
            }
            double[] predicted = t.predictAbsent(keys);
            EngineCounters before = e.counters();
            for (byte[] k : keys) {
                assertThat(e.get(k)).isNull();
            }
            EngineCounters d = e.counters().minus(before);
            String msg = engine + " seed " + SEED + ": " + d;
            // the tables' key ranges (and RocksDB's rule of not range-checking a level 0 of <= 3 files)
            // predict exactly which filters an absent get asks
            assertThat((double) d.filterChecks()).as("predicted checks: " + msg).isEqualTo(predicted[0]);
            assertThat(d.filterUseful() / predicted[1])
                    .as("useful vs predicted: " + msg)
                    .isBetween(0.98, 1.02);
            assertThat(d.filterChecks()).as(msg).isEqualTo(d.filterUseful() + d.filterPositive());
            // both tables span (almost) the whole range: only absent keys beyond a table's first or last key skip it
            assertThat(d.filterChecks())
                    .as("absent gets check both tables: " + msg)
                    .isBetween(2L * gets - gets / 100, 2L * gets);
            assertThat(d.filterTruePositive()).as(msg).isZero();
            assertThat(d.measuredFpr()).as(msg).isLessThan(0.03);
            // without a filter answer "maybe", no data block is read
            assertThat(d.blockReads()).as(msg).isLessThanOrEqualTo(d.filterPositive());
        }
    }

    @ParameterizedTest
    @MethodSource("engines")
    void presentKeysAreTruePositivesOnBothEngines(String engine, @TempDir Path dir) throws Exception {
        KeySpace ks = new KeySpace(N, 16);
        try (BenchEngine e = load(engine, dir, true, ks)) {
            EngineCounters before = e.counters();
            SplittableRandom rnd = new SplittableRandom(SEED);
            ValueSource values = new ValueSource(100, SEED);
            int gets = 5_000;
            for (int i = 0; i < gets; i++) {
                long id = ks.loadedId(rnd.nextLong(N));
                byte[] v = e.get(ks.key(id));
                assertThat(v != null && values.matches(v, id, 0))
                        .as("%s seed %d: value of key %d", engine, SEED, id)
                        .isTrue();
            }
            EngineCounters d = e.counters().minus(before);
            String msg = engine + " seed " + SEED + ": " + d;
            assertThat(d.filterChecks()).as(msg).isEqualTo(d.filterUseful() + d.filterPositive());
            assertThat(d.filterTruePositive())
                    .as("each key lives in exactly one table: " + msg)
                    .isEqualTo(gets);
            assertThat(d.filterChecks()).as(msg).isBetween((long) gets, 2L * gets);
            assertThat(d.blockReads()).as(msg).isPositive();
            assertThat(d.blockReadBytes()).as(msg).isGreaterThanOrEqualTo(d.blockReads() * 1024);
        }
    }

    @ParameterizedTest
    @MethodSource("engines")
    void withoutFiltersNothingIsCheckedAndEveryTableIsRead(String engine, @TempDir Path dir) throws Exception {
        KeySpace ks = new KeySpace(N, 16);
        try (BenchEngine e = load(engine, dir, false, ks)) {
            TableSummary t = e.tables();
            assertThat(t.filterBytes()).as(engine).isZero();
            assertThat(t.theoreticalFpr()).as(engine).isNaN();
            EngineCounters before = e.counters();
            SplittableRandom rnd = new SplittableRandom(SEED);
            int gets = 2_000;
            for (int i = 0; i < gets; i++) {
                assertThat(e.get(ks.key(ks.missingId(rnd.nextLong(ks.missingCount())))))
                        .isNull();
            }
            EngineCounters d = e.counters().minus(before);
            String msg = engine + " seed " + SEED + ": " + d;
            assertThat(d.filterChecks()).as(msg).isZero();
            // 2 tables x 2000 gets, a 64 KiB cache over ~700 KiB of blocks: most block reads miss the cache
            assertThat(d.blockReads()).as(msg).isGreaterThan(gets);
        }
    }

    @ParameterizedTest
    @MethodSource("engines")
    void countersSurviveAReopenAndTheTablesStay(String engine, @TempDir Path dir) throws Exception {
        KeySpace ks = new KeySpace(N, 16);
        try (BenchEngine e = load(engine, dir, true, ks)) {
            e.get(ks.key(ks.missingId(3)));
            EngineCounters before = e.counters();
            e.reopen();
            EngineCounters after = e.counters();
            assertThat(after.filterChecks()).as(engine).isGreaterThanOrEqualTo(before.filterChecks());
            assertThat(e.tableFiles()).as(engine).hasSize(2);
            long id5 = ks.loadedId(5);
            byte[] v5 = e.get(ks.key(id5));
            assertThat(v5 != null && new ValueSource(100, SEED).matches(v5, id5, 0))
                    .as("%s seed %d", engine, SEED)
                    .isTrue();
            assertThat(e.scan(ks.key(ks.loadedId(N - 5)), 10)).as(engine).isEqualTo(5);
        }
    }

    @ParameterizedTest
    @MethodSource("engines")
    void compactAllLeavesDisjointTablesSoEachGetChecksOneFilter(String engine, @TempDir Path dir) throws Exception {
        KeySpace ks = new KeySpace(N, 16);
        try (BenchEngine e = load(engine, dir, true, ks)) {
            e.compactAll();
            assertThat(e.tables().entries()).as(engine).isEqualTo(N);
            EngineCounters before = e.counters();
            SplittableRandom rnd = new SplittableRandom(SEED);
            int gets = 2_000;
            for (int i = 0; i < gets; i++) {
                assertThat(e.get(ks.key(ks.missingId(rnd.nextLong(ks.missingCount())))))
                        .isNull();
            }
            EngineCounters d = e.counters().minus(before);
            assertThat(d.filterChecks())
                    .as(engine + " seed " + SEED + ": " + d)
                    .isBetween((long) gets - gets / 100, (long) gets);
        }
    }

    @ParameterizedTest
    @MethodSource("engines")
    void predictedChecksFollowTheKeyRangesAcrossLevels(String engine, @TempDir Path dir) throws Exception {
        KeySpace ks = new KeySpace(N, 16);
        try (BenchEngine e = load(engine, dir, true, ks)) {
            e.compactAll();
            // a new level-0 table over the lowest fifth of the key range, above the compacted tables
            ValueSource values = new ValueSource(100, SEED);
            List<byte[]> keys = new ArrayList<>();
            List<byte[]> vals = new ArrayList<>();
            for (long j = 0; j < N / 5; j += 2) {
                keys.add(ks.key(ks.loadedId(j)));
                vals.add(values.value(ks.loadedId(j), 1));
            }
            e.putAll(keys, vals);
            e.flushAndSettle();
            TableSummary t = e.tables();
            SplittableRandom rnd = new SplittableRandom(SEED);
            byte[][] absent = new byte[4_000][];
            for (int i = 0; i < absent.length; i++) {
                absent[i] = ks.key(ks.missingId(rnd.nextLong(ks.missingCount())));
            }
            double[] predicted = t.predictAbsent(absent);
            EngineCounters before = e.counters();
            for (byte[] k : absent) {
                assertThat(e.get(k)).isNull();
            }
            EngineCounters d = e.counters().minus(before);
            String msg = engine + " seed " + SEED + ", tables " + t.tableCount() + ": " + d;
            assertThat((double) d.filterChecks()).as("predicted checks: " + msg).isEqualTo(predicted[0]);
            assertThat(predicted[0]).as(msg).isBetween(absent.length * 1.1, absent.length * 1.3);
        }
    }
}
