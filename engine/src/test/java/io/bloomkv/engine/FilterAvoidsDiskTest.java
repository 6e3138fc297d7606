package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bloom.FilterKind;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The point of the project: N keys (even ids) in several flushed tables whose key ranges all span
 * the whole key space, then N absent keys (odd ids) inside those ranges, so only the filter can
 * reject them. Block cache off, so every table read is a block read.
 */
class FilterAvoidsDiskTest {
    static final int N = 20_000;
    static final int TABLES = 4;
    /** Absent keys 2i+1 for i in [FIRST_ABSENT, LAST_ABSENT) lie inside every table's key range. */
    static final int FIRST_ABSENT = TABLES;

    static final int LAST_ABSENT = N - TABLES;
    static final long ABSENT = LAST_ABSENT - FIRST_ABSENT;

    @TempDir
    Path dir;

    private Db load(Options options) {
        Db db = Db.open(dir, options.blockCacheSize(0).autoCompaction(false).writeBufferSize(64 << 20));
        for (int t = 0; t < TABLES; t++) {
            for (int i = t; i < N; i += TABLES) {
                db.put(TestKeys.key(2L * i), TestKeys.bytes("value-" + i));
            }
            db.flush();
        }
        assertThat(db.stats().tableCount()).isEqualTo(TABLES);
        return db;
    }

    @ParameterizedTest
    @EnumSource(
            value = FilterKind.class,
            names = {"BLOCKED", "STANDARD", "PARTITIONED", "RIBBON"})
    void filtersAvoidAlmostAllReadsOfAbsentKeys(FilterKind kind) {
        try (Db db = load(Options.defaults().filterKind(kind).bitsPerKey(10))) {
            Stats before = db.stats();
            for (int i = FIRST_ABSENT; i < LAST_ABSENT; i++) {
                assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
            }
            Stats s = db.stats();
            long checks = s.filterChecks() - before.filterChecks();
            long useful = s.filterUseful() - before.filterUseful();
            long positive = s.filterPositive() - before.filterPositive();
            long truePositive = s.filterTruePositive() - before.filterTruePositive();
            long blockReads = s.blockReads() - before.blockReads();
            System.out.printf(
                    "%s: checks %d useful %d positive %d blockReads %d measured FPR %.5f%n",
                    kind, checks, useful, positive, blockReads, positive / (double) checks);
            assertThat(checks).as("every table is asked for every absent key").isEqualTo(ABSENT * TABLES);
            assertThat(useful / (double) checks).as("filterUseful / checks").isGreaterThan(0.98);
            assertThat(truePositive).isZero();
            assertThat(useful + positive).isEqualTo(checks);
            // Each false positive costs exactly the data-block read the filter could not avoid.
            assertThat(blockReads).as("block reads = false positives").isEqualTo(positive);
            assertThat(s.misses()).isEqualTo(ABSENT);
            assertThat(s.filterMemoryBytes()).isPositive();

            // Present keys: every get is answered, with one true positive.
            Stats b2 = db.stats();
            for (int i = 0; i < N; i += 97) {
                assertThat(TestKeys.str(db.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
            }
            Stats s2 = db.stats();
            assertThat(s2.filterTruePositive() - b2.filterTruePositive()).isEqualTo((N + 96) / 97);
        }
    }

    /**
     * RIBBON at Bloom-equivalent bits per key: about the rate of BLOCKED at the same budget for at least 25% less
     * filter memory. The rates are compared against each table's own formula (4 sigma of 4 x 20,000 checks).
     */
    @Test
    void ribbonTablesMatchBlockedRatesWithLessMemory() {
        long[] memory = new long[2];
        double[] rate = new double[2];
        for (FilterKind kind : new FilterKind[] {FilterKind.BLOCKED, FilterKind.RIBBON}) {
            int i = kind == FilterKind.BLOCKED ? 0 : 1;
            java.nio.file.Path sub = dir.resolve(kind.name());
            Options o = Options.defaults()
                    .bitsPerKey(10)
                    .ribbonFromLevel(kind == FilterKind.RIBBON ? 0 : -1)
                    .blockCacheSize(0)
                    .autoCompaction(false)
                    .writeBufferSize(64 << 20);
            try (Db db = Db.open(sub, o)) {
                for (int t = 0; t < TABLES; t++) {
                    for (int k = t; k < N; k += TABLES) {
                        db.put(TestKeys.key(2L * k), TestKeys.bytes("value-" + k));
                    }
                    db.flush();
                }
                double expected = 0;
                for (TableInfo t : db.tables()) {
                    assertThat(t.filterKind()).isEqualTo(kind);
                    expected += t.filterExpectedFpp() / TABLES;
                }
                Stats before = db.stats();
                for (int k = FIRST_ABSENT; k < LAST_ABSENT; k++) {
                    assertThat(db.get(TestKeys.key(2L * k + 1))).isNull();
                }
                Stats s = db.stats();
                long checks = s.filterChecks() - before.filterChecks();
                long positive = s.filterPositive() - before.filterPositive();
                rate[i] = positive / (double) checks;
                memory[i] = s.filterMemoryBytes();
                double sigma = Math.sqrt(expected * (1 - expected) / checks);
                System.out.printf(
                        "%s: filter memory %d B, measured FPR %.5f, formula %.5f%n",
                        kind, memory[i], rate[i], expected);
                assertThat(Math.abs(rate[i] - expected)).as(kind.name()).isLessThanOrEqualTo(4 * sigma + 1e-4);
                for (int k = 0; k < N; k += 101) {
                    assertThat(TestKeys.str(db.get(TestKeys.key(2L * k)))).isEqualTo("value-" + k);
                }
            }
        }
        assertThat((double) memory[1]).as("RIBBON memory vs BLOCKED").isLessThanOrEqualTo(0.75 * memory[0]);
    }

    @Test
    void withoutFiltersEveryCheckReadsABlock() {
        try (Db db = load(Options.defaults().bitsPerKey(0))) {
            Stats before = db.stats();
            for (int i = FIRST_ABSENT; i < LAST_ABSENT; i++) {
                assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
            }
            Stats s = db.stats();
            assertThat(s.filterChecks()).isZero();
            assertThat(s.filterMemoryBytes()).isZero();
            assertThat(s.tablesReadWithoutFilter() - before.tablesReadWithoutFilter())
                    .isEqualTo(ABSENT * TABLES);
            assertThat(s.blockReads() - before.blockReads())
                    .as("one data-block read per table per get")
                    .isEqualTo(ABSENT * TABLES);
        }
    }

    @Test
    void tablesOutsideTheKeyRangeAreNotAsked() {
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false))) {
            for (int i = 0; i < 100; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("a"));
            }
            db.flush();
            for (int i = 1000; i < 1100; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("b"));
            }
            db.flush();
            Stats before = db.stats();
            assertThat(db.get(TestKeys.key(50))).isNotNull();
            assertThat(db.get(TestKeys.key(500))).isNull();
            assertThat(db.get(TestKeys.key(5000))).isNull();
            Stats s = db.stats();
            // key 50: only the first table's range holds it; 500 and 5000: no table's range does.
            assertThat(s.filterChecks() - before.filterChecks()).isEqualTo(1);
        }
    }

    /**
     * Version.get's range tests compare each table's bounds by their first 8 bytes (KeyPrefix) and whole keys on a tie.
     * Keys of 13 to 19 bytes that share their first 13 (so ties on the first 8 bytes are the rule, and keys below, at
     * and above 16 bytes tie further), in level-0 tables and in a deeper level of several tables: every probe at, next
     * to and between the tables' bounds reads what a sorted map holds, and an absent key is asked of exactly the tables
     * whose range holds it.
     */
    @Test
    void keysAtAndAroundTableBoundsAskExactlyTheTablesWhoseRangeHoldsThem() {
        long seed =
                TestSeeds.seed("FilterAvoidsDiskTest.keysAtAndAroundTableBoundsAskExactlyTheTablesWhoseRangeHoldsThem");
        SplittableRandom rnd = new SplittableRandom(seed);
        TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
        Options options = Options.defaults()
                .autoCompaction(false)
                .blockCacheSize(0)
                .blockSize(256)
                .targetFileSize(4096);
        try (Db db = Db.open(dir, options)) {
            for (int batch = 0; batch < 5; batch++) {
                for (int i = 0; i < 200; i++) {
                    byte[] k = boundTestKey(rnd);
                    byte[] v = new byte[64]; // random, so that compression leaves the deeper level several tables
                    rnd.nextBytes(v);
                    db.put(k, v);
                    model.put(k, v);
                }
                db.flush();
                if (batch == 1) {
                    db.compactRange(null, null); // the first two batches: a deeper level of several tables
                }
            }
            List<TableInfo> tables = db.tables();
            assertThat(tables).as("seed %d", seed).anyMatch(t -> t.level() == 0);
            assertThat(tables.stream().filter(t -> t.level() > 0).count())
                    .as("seed %d", seed)
                    .isGreaterThan(1);
            List<byte[]> probes = new ArrayList<>();
            for (TableInfo t : tables) {
                for (byte[] bound : List.of(t.smallestUserKey(), t.largestUserKey())) {
                    probes.add(bound);
                    probes.add(Arrays.copyOf(bound, bound.length + 1)); // the next key up
                    probes.add(Arrays.copyOf(bound, bound.length - 1)); // a proper prefix: below
                    byte[] up = bound.clone();
                    up[up.length - 1]++;
                    probes.add(up);
                    byte[] down = bound.clone();
                    down[down.length - 1]--;
                    probes.add(down);
                }
            }
            for (int i = 0; i < 2_000; i++) {
                probes.add(boundTestKey(rnd));
            }
            for (byte[] probe : probes) {
                String what = Arrays.toString(probe) + ", seed " + seed;
                byte[] expected = model.get(probe);
                Stats before = db.stats();
                byte[] got = db.get(probe);
                assertThat(got).as(what).isEqualTo(expected);
                if (expected == null) {
                    long holding = tables.stream()
                            .filter(t -> Arrays.compareUnsigned(t.smallestUserKey(), probe) <= 0
                                    && Arrays.compareUnsigned(probe, t.largestUserKey()) <= 0)
                            .count();
                    assertThat(db.stats().filterChecks() - before.filterChecks())
                            .as("tables asked for absent %s", what)
                            .isEqualTo(holding);
                }
            }
        }
    }

    /** 13 bytes of 1, then 0 to 6 bytes from a small alphabet with the sign and padding edges. */
    private static byte[] boundTestKey(SplittableRandom rnd) {
        byte[] alphabet = {0, 1, 0x7F, (byte) 0x80, (byte) 0xFF};
        byte[] k = new byte[13 + rnd.nextInt(7)];
        Arrays.fill(k, 0, 13, (byte) 1);
        for (int i = 13; i < k.length; i++) {
            k[i] = alphabet[rnd.nextInt(alphabet.length)];
        }
        return k;
    }
}
