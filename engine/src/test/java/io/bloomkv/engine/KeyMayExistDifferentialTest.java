package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.StringAppendOperator;
import org.rocksdb.UInt64AddOperator;

/**
 * {@link Db#keyMayExist} and {@link Db#keyExists} against RocksDB (rocksdbjni) as the oracle: the same seeded random
 * puts, deletes, range deletions, merges ({@code UInt64AddOperator} or {@code StringAppendOperator} there,
 * {@link MergeOperators#uint64Add()} or {@link MergeOperators#stringAppend(char)} here), flushes, compactions and
 * snapshots on both. At checkpoints, for present and absent keys, at the latest state and at every open snapshot:
 * keyMayExist is true wherever RocksDB's get finds a value (never a false negative), a value it hands back equals that
 * value, and keyExists equals it exactly.
 *
 * <p>A quarter of the key ids are never written. At every fourth checkpoint both databases flush (and bloomkv waits for
 * its compactions), so every entry is in a table, and keyMayExist is asked for each never-written key before any read
 * fills the block caches: its "may exist" rate must stay near what the tables' filters predict, at most 3x the sum of
 * {@link TableInfo#filterExpectedFpp} over the tables whose key range holds the key, plus 10, at the latest state and
 * at snapshots alike (answering true always would pass the bound many times over: the test checks that it would). A
 * key is measured only when every table in its range has a usable filter. RocksDB's rate for the same keys (whole-key
 * Bloom filters of 10 bits per key) is printed beside it. Under a filter memory budget the rate is not measured: a
 * filter not in memory answers "may exist" (keyMayExist reads no file), so the rate follows what the budget holds, not
 * the filters' theory ({@link KeyMayExistTest} checks both sides of that). Replay with -Dbloomkv.seed=N.
 */
@ExtendWith(NoTableLeak.class)
class KeyMayExistDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 3000);
    /** Key ids; those with {@code id % 4 == 3} are never written. */
    private static final int KEYS = 1200;

    private static final byte[] STALE = "stale".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @Test
    void uint64AddMatchesRocksDb() throws Exception {
        new Run(dir, "uint64Add", SmallLevels.options().mergeOperator(MergeOperators.uint64Add()), true, 0).run();
    }

    /** Tables with prefix entries in their filters (probed with the whole key, as a get probes) and range filters. */
    @Test
    void stringAppendWithPrefixAndRangeFiltersMatchesRocksDb() throws Exception {
        Options o = SmallLevels.options()
                .mergeOperator(MergeOperators.stringAppend(','))
                .prefixLength(3)
                .rangeFilterBitsPerKey(10);
        new Run(dir, "stringAppendPrefix", o, false, 3).run();
    }

    /** Without a block cache a table's filter that lets a key through always leaves "may exist", value unknown. */
    @Test
    void withoutBlockCacheMatchesRocksDb() throws Exception {
        Options o = SmallLevels.options()
                .mergeOperator(MergeOperators.stringAppend(','))
                .blockCacheSize(0);
        new Run(dir, "noBlockCache", o, false, 0).run();
    }

    /**
     * Partitioned filters under a filter memory budget small enough that the deeper levels' partitions are loaded
     * through its cache by gets: keyMayExist probes the pinned partitions and those the cache holds, and answers "may
     * exist" for the others without loading them. Checked for false negatives and values only (no rate: see above).
     */
    @Test
    void budgetedPartitionedFiltersMatchRocksDb() throws Exception {
        Options o = SmallLevels.options()
                .mergeOperator(MergeOperators.uint64Add())
                .filterPartitionSize(64)
                .filterMemoryBudget(4 << 10)
                .useMmapReads(false);
        new Run(dir, "budgetedPartitions", o, true, 0).run();
    }

    private static byte[] key(int id) {
        return String.format(Locale.ROOT, "k%05d", id).getBytes(StandardCharsets.US_ASCII);
    }

    private static String s(byte[] k) {
        return new String(k, StandardCharsets.ISO_8859_1);
    }

    private static final class Run {
        private final Path dir;
        private final String name;
        private final Options options;
        private final boolean counters;
        private final int prefixLength;
        private final long seed;
        private final Random rnd;
        private final String ctx;
        private final List<String> history = new ArrayList<>();
        private final List<Snapshot> ours = new ArrayList<>();
        private final List<org.rocksdb.Snapshot> theirs = new ArrayList<>();
        private Db db;
        private RocksDB rocks;
        private FlushOptions flush;

        /** Present keys: keyMayExist answers with the value, and without it ("may exist", value unknown). */
        private long presentWithValue;

        private long presentWithoutValue;
        /** Absent keys: ruled out, and answered "may exist" (with no value: a value for one fails at once). */
        private long absentFalse;

        private long absentMaybe;
        /** The never-written keys measured after flushes: [0] at the latest state, [1] at snapshots. */
        private final long[] measured = new long[2];

        private final long[] ourMaybe = new long[2];
        private final double[] theory = new double[2];
        private final long[] rocksMaybe = new long[2];
        /** Never-written keys not measured: a table in their range has no usable filter. */
        private long withoutFilter;

        Run(Path dir, String name, Options options, boolean counters, int prefixLength) {
            this.dir = dir;
            this.name = name;
            this.options = options;
            this.counters = counters;
            this.prefixLength = prefixLength;
            this.seed = TestSeeds.seed("KeyMayExistDifferentialTest." + name);
            this.rnd = new Random(seed);
            this.ctx = name + " seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        }

        void run() throws Exception {
            try (org.rocksdb.MergeOperator rop = counters ? new UInt64AddOperator() : new StringAppendOperator(',');
                    BloomFilter bloom = new BloomFilter(10);
                    org.rocksdb.Options ro = new org.rocksdb.Options()
                            .setCreateIfMissing(true)
                            .setMergeOperator(rop)
                            .setWriteBufferSize(64 << 10)
                            .setTableFormatConfig(new BlockBasedTableConfig()
                                    .setFilterPolicy(bloom)
                                    .setWholeKeyFiltering(true));
                    FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
                if (prefixLength > 0) {
                    ro.useFixedLengthPrefixExtractor(prefixLength);
                }
                flush = fo;
                try (RocksDB r = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                        Db d = Db.open(dir.resolve("bloomkv"), options)) {
                    rocks = r;
                    db = d;
                    try {
                        history();
                    } finally {
                        for (Snapshot sn : ours) {
                            sn.close();
                        }
                        for (org.rocksdb.Snapshot sn : theirs) {
                            rocks.releaseSnapshot(sn);
                        }
                    }
                }
            }
            report();
        }

        private void history() throws Exception {
            int checkpoint = 0;
            for (int op = 1; op <= OPS; op++) {
                int r = rnd.nextInt(1000);
                if (r < 350) {
                    byte[] k = writtenKey();
                    byte[] v = value();
                    history.add("put " + s(k));
                    db.put(k, v);
                    rocks.put(k, v);
                } else if (r < 450) {
                    byte[] k = writtenKey();
                    history.add("delete " + s(k));
                    db.delete(k);
                    rocks.delete(k);
                } else if (r < 700) {
                    byte[] k = writtenKey();
                    byte[] v = operand();
                    history.add("merge " + s(k));
                    db.merge(k, v);
                    rocks.merge(k, v);
                } else if (r < 730) {
                    int a = rnd.nextInt(KEYS);
                    byte[] from = key(a);
                    byte[] to = key(Math.min(KEYS, a + 1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 100 : 8)));
                    history.add("deleteRange " + s(from) + " " + s(to));
                    db.deleteRange(from, to);
                    rocks.deleteRange(from, to);
                } else if (r < 750) {
                    history.add("flush");
                    db.flush();
                    rocks.flush(flush);
                } else if (r < 755) {
                    history.add("compactRange");
                    db.compactRange(null, null);
                    rocks.compactRange();
                } else if (r < 785) {
                    if (ours.size() < 3 && rnd.nextBoolean()) {
                        takeSnapshot();
                    } else if (!ours.isEmpty()) {
                        int i = rnd.nextInt(ours.size());
                        history.add("release #" + i);
                        ours.remove(i).close();
                        rocks.releaseSnapshot(theirs.remove(i));
                    }
                } else {
                    // a read through the ordinary path now and then, so the block cache holds some blocks
                    byte[] k = key(rnd.nextInt(KEYS));
                    assertThat(db.get(k)).as(ctx + " get " + s(k)).isEqualTo(rocks.get(k));
                }
                if (op % 200 == 0) {
                    checkpoint++;
                    if (checkpoint % 4 == 0) {
                        flushedCheckpoint("op " + op);
                    } else {
                        checkpoint("op " + op, 200);
                    }
                }
            }
            flushedCheckpoint("end");
            // A key longer than MAX_KEY_SIZE extending a written one: RocksDB reads it, absent; so does bloomkv.
            byte[] longKey = Arrays.copyOf(key(0), Db.MAX_KEY_SIZE + 1);
            assertThat(rocks.get(longKey))
                    .as(ctx + " RocksDB's get of a long key")
                    .isNull();
            assertThat(rocks.keyExists(longKey))
                    .as(ctx + " RocksDB's keyExists of a long key")
                    .isFalse();
            assertThat(db.keyMayExist(longKey))
                    .as(ctx + " keyMayExist of a long key")
                    .isFalse();
            assertThat(db.keyExists(longKey))
                    .as(ctx + " keyExists of a long key")
                    .isFalse();
        }

        private void takeSnapshot() {
            history.add("snapshot #" + ours.size());
            ours.add(db.getSnapshot());
            theirs.add(rocks.getSnapshot());
        }

        /** A key id that may be written: {@code id % 4 != 3}. */
        private byte[] writtenKey() {
            int id = rnd.nextInt(KEYS);
            return key(id % 4 == 3 ? id - 1 : id);
        }

        private byte[] value() {
            return counters ? MergeOperators.encodeUint64(rnd.nextInt(1000)) : TestKeys.value(rnd, 12);
        }

        private byte[] operand() {
            return counters ? MergeOperators.encodeUint64(rnd.nextInt(100)) : TestKeys.value(rnd, 6);
        }

        /** {@code samples} random key ids, at the latest state and at every open snapshot. */
        private void checkpoint(String where) throws Exception {
            checkpoint(where, KEYS);
        }

        private void checkpoint(String where, int samples) throws Exception {
            for (int i = 0; i < samples; i++) {
                int id = samples == KEYS ? i : rnd.nextInt(KEYS);
                for (int sn = -1; sn < ours.size(); sn++) {
                    checkKey(where, key(id), sn);
                }
            }
        }

        /**
         * After both databases flushed their memtables (and bloomkv's compactions settled), each never-written key's
         * keyMayExist is measured against its filters' theory, then every key is checked as at any checkpoint.
         */
        private void flushedCheckpoint(String where) throws Exception {
            if (ours.isEmpty()) {
                takeSnapshot();
            }
            history.add("flush");
            db.flush();
            rocks.flush(flush);
            db.waitForBackgroundWork();
            if (budgeted()) {
                checkpoint(where + " after a flush");
                return;
            }
            List<TableInfo> tables = db.tables();
            // Measured before the checks below read every key (their gets fill both block caches).
            for (int id = 3; id < KEYS; id += 4) {
                byte[] k = key(id);
                double expected = 0;
                boolean unfiltered = false;
                for (TableInfo t : tables) {
                    if (Arrays.compareUnsigned(k, t.smallestUserKey()) >= 0
                            && Arrays.compareUnsigned(k, t.largestUserKey()) <= 0) {
                        expected += t.filterExpectedFpp();
                        unfiltered |= t.filterExpectedFpp() >= 1;
                    }
                }
                if (unfiltered) {
                    withoutFilter++; // a table without a usable filter in its range: "may exist" is expected
                    continue;
                }
                for (int sn = -1; sn < ours.size(); sn++) {
                    int at = sn < 0 ? 0 : 1;
                    ReadOptions our = ReadOptions.defaults().snapshot(sn < 0 ? null : ours.get(sn));
                    try (org.rocksdb.ReadOptions their = new org.rocksdb.ReadOptions()) {
                        if (sn >= 0) {
                            their.setSnapshot(theirs.get(sn));
                        }
                        measured[at]++;
                        theory[at] += expected;
                        if (db.keyMayExist(our, k, null)) {
                            ourMaybe[at]++;
                        }
                        if (rocks.keyMayExist(their, k, null)) {
                            rocksMaybe[at]++;
                        }
                    }
                }
            }
            checkpoint(where + " after a flush");
        }

        /** One key at the latest state ({@code sn < 0}) or at snapshot {@code sn}, against RocksDB's get. */
        private void checkKey(String where, byte[] k, int sn) throws Exception {
            String what = ctx + " " + where + " after " + tail() + ": " + s(k) + (sn < 0 ? "" : " at snapshot #" + sn);
            ReadOptions our = ReadOptions.defaults().snapshot(sn < 0 ? null : ours.get(sn));
            try (org.rocksdb.ReadOptions their = new org.rocksdb.ReadOptions()) {
                if (sn >= 0) {
                    their.setSnapshot(theirs.get(sn));
                }
                byte[] expected = rocks.get(their, k);
                Holder<byte[]> h = new Holder<>(STALE);
                boolean may = db.keyMayExist(our, k, h);
                byte[] v = h.getValue();
                if (expected != null) {
                    assertThat(may).as(what + " keyMayExist of a present key").isTrue();
                    if (sn < 0) {
                        assertThat(db.keyMayExist(k))
                                .as(what + " keyMayExist without a holder")
                                .isTrue();
                    }
                }
                if (v != null) {
                    assertThat(v)
                            .as(what + " keyMayExist's value")
                            .isNotSameAs(STALE)
                            .isEqualTo(expected);
                    assertThat(may).as(what + " keyMayExist with a value").isTrue();
                }
                if (expected != null) {
                    if (v != null) {
                        presentWithValue++;
                    } else {
                        presentWithoutValue++;
                    }
                } else if (may) {
                    absentMaybe++;
                } else {
                    absentFalse++;
                }
                assertThat(db.keyExists(our, k)).as(what + " keyExists").isEqualTo(expected != null);
            }
        }

        /** Whether the run has a filter memory budget: its "may exist" rate is not measured (see the class comment). */
        private boolean budgeted() {
            return options.filterMemoryBudget() > 0;
        }

        private void report() {
            System.out.printf(
                    Locale.ROOT,
                    "KeyMayExistDifferentialTest.%s: never-written keys after flushes, \"may exist\" answers: bloomkv"
                            + " %d of %d (%.4f) at the latest state, %d of %d (%.4f) at snapshots; its filters' theory"
                            + " %.1f (%.4f) and %.1f (%.4f); RocksDB %d (%.4f) and %d (%.4f). Checked keys: present"
                            + " with the value %d, present without it %d, absent ruled out %d, absent \"may exist\" %d;"
                            + " never-written keys not measured (a table in range without a filter) %d%n",
                    name,
                    ourMaybe[0],
                    measured[0],
                    rate(ourMaybe[0], measured[0]),
                    ourMaybe[1],
                    measured[1],
                    rate(ourMaybe[1], measured[1]),
                    theory[0],
                    theory[0] / Math.max(1, measured[0]),
                    theory[1],
                    theory[1] / Math.max(1, measured[1]),
                    rocksMaybe[0],
                    rate(rocksMaybe[0], measured[0]),
                    rocksMaybe[1],
                    rate(rocksMaybe[1], measured[1]),
                    presentWithValue,
                    presentWithoutValue,
                    absentFalse,
                    absentMaybe,
                    withoutFilter);
            for (int at = 0; at < (budgeted() ? 0 : 2); at++) {
                String which = ctx + (at == 0 ? " at the latest state" : " at snapshots");
                double bound = 3 * theory[at] + 10;
                assertThat(measured[at])
                        .as(which + ": never-written keys measured")
                        .isPositive();
                // The bound has power: "may exist" for every key would break it.
                assertThat(bound).as(which + ": bound on \"may exist\" answers").isLessThan(measured[at] / 2.0);
                assertThat((double) ourMaybe[at])
                        .as(which + ": \"may exist\" answers for never-written keys, filters' theory " + theory[at])
                        .isLessThanOrEqualTo(bound);
            }
            assertThat(presentWithValue)
                    .as(ctx + ": present keys answered with their value")
                    .isPositive();
            assertThat(absentFalse).as(ctx + ": absent keys ruled out").isPositive();
            if (options.blockCacheSize() == 0) {
                assertThat(presentWithoutValue)
                        .as(ctx + ": present keys in tables without a block cache")
                        .isPositive();
            }
        }

        private static double rate(long n, long of) {
            return of == 0 ? 0 : (double) n / of;
        }

        private String tail() {
            return history.subList(Math.max(0, history.size() - 6), history.size())
                    .toString();
        }
    }
}
