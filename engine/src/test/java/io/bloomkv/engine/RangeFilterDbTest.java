package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Range filters (Options.rangeFilterBitsPerKey) in the read path, against a TreeMap model: bounded iterators seeking in
 * both directions, with next/prev after the seek, see exactly the model's keys whatever the filters skip; empty short
 * ranges are answered without block reads; tables written without range filters (or read after the option is turned
 * off) are read as before.
 */
class RangeFilterDbTest {
    @TempDir
    Path dir;

    /** 8-byte big-endian integers with gaps (multiples of 16 plus a small offset), so short ranges between keys are empty. */
    static byte[] key(long v) {
        return java.nio.ByteBuffer.allocate(8).putLong(v).array();
    }

    private static Options options(double rangeBits) {
        return Options.defaults()
                .writeBufferSize(16 << 10)
                .blockSize(512)
                .targetFileSize(16 << 10)
                .maxBytesForLevelBase(64 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(3)
                .blockCacheSize(0)
                .rangeFilterBitsPerKey(rangeBits);
    }

    private static void load(Db db, TreeMap<Long, byte[]> model, Random rnd, int ops) {
        for (int i = 0; i < ops; i++) {
            long k = 16L * rnd.nextInt(40_000) + rnd.nextInt(3);
            if (rnd.nextInt(8) == 0) {
                db.delete(key(k));
                model.remove(k);
            } else {
                byte[] v = TestKeys.value(rnd, 40);
                db.put(key(k), v);
                model.put(k, v);
            }
        }
    }

    @Test
    void boundedSeeksMatchTheModelInBothDirections() {
        long seed = TestKeys.seed("RangeFilterDbTest.model");
        Random rnd = new Random(seed);
        TreeMap<Long, byte[]> model = new TreeMap<>();
        try (Db db = Db.open(dir, options(12))) {
            for (int round = 0; round < 5; round++) {
                load(db, model, rnd, 3000);
                if (round % 2 == 0) {
                    db.flush();
                }
                db.waitForBackgroundWork();
                for (int q = 0; q < 300; q++) {
                    long lo = 16L * rnd.nextInt(40_000) + rnd.nextInt(16);
                    long span = switch (rnd.nextInt(3)) {
                        case 0 -> 1 + rnd.nextInt(16);
                        case 1 -> 1 + rnd.nextInt(200);
                        default -> 1 + rnd.nextInt(50_000);
                    };
                    long hi = lo + span;
                    ReadOptions ro = ReadOptions.defaults().iterateUpperBound(key(hi));
                    if (rnd.nextBoolean()) {
                        ro.iterateLowerBound(key(Math.max(0, lo - rnd.nextInt(32))));
                    }
                    String ctx = "seed " + seed + " round " + round + " [" + lo + ", " + hi + ")";
                    long lower =
                            ro.iterateLowerBound() == null ? Long.MIN_VALUE : TestKeysLong.of(ro.iterateLowerBound());
                    try (DbIterator it = db.iterator(ro)) {
                        // forward: seek, then a few nexts
                        it.seek(key(lo));
                        List<Long> got = new ArrayList<>();
                        for (int n = 0; it.valid() && n < 5; n++, it.next()) {
                            got.add(TestKeysLong.of(it.key()));
                        }
                        List<Long> want = new ArrayList<>();
                        for (long k : model.subMap(Math.max(lo, lower), true, hi, false)
                                .keySet()) {
                            if (want.size() == 5) {
                                break;
                            }
                            want.add(k);
                        }
                        assertThat(got).as(ctx + " forward").isEqualTo(want);
                        // backward within the bounds: seekForPrev, then prevs
                        long target = lo + rnd.nextInt((int) Math.min(span, 1000));
                        it.seekForPrev(key(target));
                        got.clear();
                        for (int n = 0; it.valid() && n < 5; n++, it.prev()) {
                            got.add(TestKeysLong.of(it.key()));
                        }
                        want.clear();
                        NavigableMap<Long, byte[]> below = lower == Long.MIN_VALUE
                                ? model.headMap(Math.min(target, hi - 1), true)
                                : model.subMap(lower, true, Math.min(target, hi - 1), true);
                        for (long k : below.descendingKeySet()) {
                            if (want.size() == 5) {
                                break;
                            }
                            want.add(k);
                        }
                        assertThat(got).as(ctx + " backward from " + target).isEqualTo(want);
                        // direction changes after a filtered seek
                        it.seek(key(lo));
                        if (it.valid()) {
                            long first = TestKeysLong.of(it.key());
                            it.prev();
                            Long before = model.lowerKey(first);
                            if (before != null && before >= lower) {
                                assertThat(it.valid())
                                        .as(ctx + " prev after seek")
                                        .isTrue();
                                assertThat(TestKeysLong.of(it.key())).as(ctx).isEqualTo(before);
                            } else {
                                assertThat(it.valid())
                                        .as(ctx + " nothing before " + first)
                                        .isFalse();
                            }
                        }
                    }
                }
            }
            Stats s = db.stats();
            assertThat(s.rangeFilterChecks()).isPositive();
            assertThat(s.rangeFilterUseful()).isPositive().isLessThanOrEqualTo(s.rangeFilterChecks());
        }
    }

    /** Seeks into short empty ranges between keys: the filters answer, the tables' blocks are not read. */
    private static long[] emptySeeks(Db db, Random rnd, int seeks) {
        Stats before = db.stats();
        int found = 0;
        for (int q = 0; q < seeks; q++) {
            long lo =
                    16L * rnd.nextInt(40_000) + 4 + rnd.nextInt(4); // keys sit at 16k + 0..2: [16k+4, 16k+12) is empty
            ReadOptions ro = ReadOptions.defaults().iterateUpperBound(key(lo + 1 + rnd.nextInt(4)));
            try (DbIterator it = db.iterator(ro)) {
                it.seek(key(lo));
                found += it.valid() ? 1 : 0;
            }
        }
        Stats after = db.stats();
        return new long[] {
            found,
            after.blockReads() - before.blockReads(),
            after.rangeFilterUseful() - before.rangeFilterUseful(),
            after.rangeFilterChecks() - before.rangeFilterChecks(),
            after.rangeFilterFalsePositives() - before.rangeFilterFalsePositives()
        };
    }

    @Test
    void emptyShortRangesReadNoBlocks() throws java.io.IOException {
        long seed = TestKeys.seed("RangeFilterDbTest.empty");
        TreeMap<Long, byte[]> model = new TreeMap<>();
        try (Db db = Db.open(dir.resolve("on"), options(16))) {
            load(db, model, new Random(seed), 20_000);
            db.flush();
            db.waitForBackgroundWork();
            assertThat(db.tables().size()).isGreaterThan(3);
            for (TableInfo t : db.tables()) {
                try (io.bloomkv.engine.internal.table.TableReader r = io.bloomkv.engine.internal.table.TableReader.open(
                        io.bloomkv.engine.fs.FileSystem.disk(), t.path(), t.fileNumber(), null, null)) {
                    assertThat(r.rangeFilterProblem())
                            .as("range filter of %s", t.path())
                            .isNull();
                    assertThat(r.hasRangeFilter())
                            .as("range filter of %s", t.path())
                            .isTrue();
                }
            }
            long[] on = emptySeeks(db, new Random(seed + 1), 2000);
            System.out.printf(
                    "range filters on: %d block reads, %d useful of %d checks, %d false positives for 2000 empty seeks%n",
                    on[1], on[2], on[3], on[4]);
            assertThat(on[0]).isZero();
            assertThat(on[2]).isPositive();
            // at 16 bits per key a range of <= 5 values passes a table with probability <= 5/2^14: a handful at most
            assertThat(on[4]).isLessThanOrEqualTo(on[3] / 100 + 5);
            assertThat(on[1]).as("block reads for 2000 empty seeks").isLessThanOrEqualTo(2 * on[4] + 10);
        }
        try (Db db = Db.open(dir.resolve("off"), options(0))) {
            load(db, new TreeMap<>(), new Random(seed), 20_000);
            db.flush();
            db.waitForBackgroundWork();
            long[] off = emptySeeks(db, new Random(seed + 1), 2000);
            System.out.printf("range filters off: %d block reads for 2000 empty seeks%n", off[1]);
            assertThat(off[3]).isZero();
            assertThat(off[1])
                    .as("without range filters each seek reads blocks")
                    .isGreaterThan(2000);
        }
    }

    @Test
    void tablesKeepTheirRangeFiltersAcrossReopenAndOldTablesAreReadAsBefore() {
        long seed = TestKeys.seed("RangeFilterDbTest.reopen");
        Random rnd = new Random(seed);
        TreeMap<Long, byte[]> model = new TreeMap<>();
        try (Db db = Db.open(dir, options(0))) {
            load(db, model, rnd, 5000);
            db.flush();
        }
        try (Db db = Db.open(dir, options(10))) {
            load(db, model, rnd, 5000);
            db.flush();
            db.waitForBackgroundWork();
            verifyAll(db, model, rnd, seed);
        }
        try (Db db = Db.open(dir, options(0))) {
            verifyAll(db, model, rnd, seed);
            long[] r = emptySeeks(db, new Random(seed), 300);
            assertThat(r[0]).isZero();
        }
    }

    private static void verifyAll(Db db, TreeMap<Long, byte[]> model, Random rnd, long seed) {
        for (int q = 0; q < 300; q++) {
            long lo = 16L * rnd.nextInt(40_000);
            long hi = lo + 1 + rnd.nextInt(100);
            try (DbIterator it = db.iterator(ReadOptions.defaults().iterateUpperBound(key(hi)))) {
                it.seek(key(lo));
                Map.Entry<Long, byte[]> e = model.ceilingEntry(lo);
                if (e == null || e.getKey() >= hi) {
                    assertThat(it.valid()).as("seed %d [%d, %d)", seed, lo, hi).isFalse();
                } else {
                    assertThat(TestKeysLong.of(it.key()))
                            .as("seed %d [%d, %d)", seed, lo, hi)
                            .isEqualTo(e.getKey());
                    assertThat(it.value()).isEqualTo(e.getValue());
                }
            }
        }
    }

    /** Reads back {@link #key(long)}. */
    static final class TestKeysLong {
        static long of(byte[] k) {
            return java.nio.ByteBuffer.wrap(k).getLong();
        }
    }

    /**
     * A bounded iterator turned forward on its first key, after a walk back past the lower bound that left every table
     * iterator exhausted (the level's tables wholly below the bound are ruled out unread, so the level reads as ended
     * there), goes on to its second key, as RocksDB does. Fails if the turn positions the merged iterator at its very
     * first entry, below the lower bound, and returns that.
     */
    @Test
    void turningForwardOnTheFirstKeyStaysWithinTheLowerBound() {
        try (Db db = Db.open(dir, options(12).tablePartitionPrefixLength(1))) {
            for (String k : List.of("a1", "a2", "a3", "m1", "m2")) {
                db.put(TestKeys.bytes(k), TestKeys.bytes("v-" + k));
            }
            db.flush();
            db.compactRange(null, null);
            assertThat(db.tables())
                    .as("one table per first byte, none in level 0, nothing in the memtable")
                    .hasSize(2)
                    .allSatisfy(t -> assertThat(t.level()).isPositive());
            try (DbIterator it = db.iterator(ReadOptions.defaults().iterateLowerBound(TestKeys.bytes("m")))) {
                it.seekToFirst();
                assertThat(TestKeys.str(it.key())).isEqualTo("m1");
                it.next();
                assertThat(TestKeys.str(it.key())).isEqualTo("m2");
                it.prev();
                assertThat(TestKeys.str(it.key())).isEqualTo("m1");
                it.next();
                assertThat(TestKeys.str(it.key())).as("after the turn forward").isEqualTo("m2");
                it.prev();
                it.prev();
                assertThat(it.valid()).as("nothing below the lower bound").isFalse();
            }
        }
    }

    /**
     * An iterator takes its bounds when it is made: changing the ReadOptions afterwards (to reuse them for the next
     * iterator) changes nothing in it, in its memtable part or in its range-filtered table part.
     */
    @Test
    void boundsAreTakenWhenTheIteratorIsMade() {
        try (Db db = Db.open(dir, options(12))) {
            for (long k = 0; k < 2000; k++) {
                db.put(key(16 * k), TestKeys.bytes("t" + k));
            }
            db.flush();
            db.waitForBackgroundWork();
            db.put(key(16 * 3000), TestKeys.bytes("m")); // in the memtable, above every table key
            ReadOptions ro = ReadOptions.defaults();
            try (DbIterator it = db.iterator(ro)) {
                ro.iterateUpperBound(key(16 * 10)); // for another iterator
                int n = 0;
                for (it.seekToFirst(); it.valid(); it.next()) {
                    n++;
                }
                assertThat(n)
                        .as("every key, tables' and memtable's, with no bound")
                        .isEqualTo(2001);
                it.seek(key(16 * 1500));
                assertThat(it.valid()).isTrue();
                assertThat(it.key()).isEqualTo(key(16 * 1500));
            }
        }
    }

    /**
     * A table whose range filter block is damaged is named by Db.tables() (TableInfo.rangeFilterProblem), as a damaged
     * point filter is by filterProblem; the other tables, and a table written without a range filter, report none.
     */
    @Test
    void aDamagedRangeFilterIsNamedByTables() throws java.io.IOException {
        Options opts = Options.defaults().autoCompaction(false).rangeFilterBitsPerKey(10);
        try (Db db = Db.open(dir, opts)) {
            for (int t = 0; t < 2; t++) {
                for (long k = 0; k < 500; k++) {
                    db.put(key(16 * (1000L * t + k)), TestKeys.bytes("v" + k));
                }
                db.flush();
            }
            for (TableInfo t : db.tables()) {
                assertThat(t.rangeFilterProblem())
                        .as("range filter of %s", t.path())
                        .isNull();
            }
        }
        Path damaged;
        long offset;
        long size;
        try (Db db = Db.open(dir, opts)) {
            TableInfo first = db.tables().get(0);
            damaged = first.path();
            try (io.bloomkv.engine.internal.table.TableReader r = io.bloomkv.engine.internal.table.TableReader.open(
                    io.bloomkv.engine.fs.FileSystem.disk(), damaged, first.fileNumber(), null, null)) {
                assertThat(r.properties().rangeFilter())
                        .as("range filter of %s", damaged)
                        .isNotNull();
                offset = r.properties().rangeFilter().offset();
                size = r.properties().rangeFilter().size();
            }
        }
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(damaged.toFile(), "rw")) {
            f.seek(offset + size / 2);
            int v = f.read();
            f.seek(offset + size / 2);
            f.write(v ^ 0xff);
        }
        try (Db db = Db.open(dir, opts)) {
            List<TableInfo> tables = db.tables();
            assertThat(tables).hasSize(2);
            for (TableInfo t : tables) {
                if (t.path().equals(damaged)) {
                    assertThat(t.rangeFilterProblem())
                            .as("damaged range filter of %s", t.path())
                            .contains("checksum");
                    assertThat(t.filterProblem())
                            .as("point filter of %s", t.path())
                            .isNull();
                } else {
                    assertThat(t.rangeFilterProblem())
                            .as("range filter of %s", t.path())
                            .isNull();
                }
            }
            // Bounded seeks still see every key: the table is read as if it had no range filter.
            ReadOptions ro = ReadOptions.defaults().iterateUpperBound(key(16 * 1000L + 16));
            try (DbIterator it = db.iterator(ro)) {
                it.seek(key(16 * 1000L));
                assertThat(it.valid()).isTrue();
                assertThat(it.key()).isEqualTo(key(16 * 1000L));
            }
        }
        try (Db db = Db.open(dir.resolve("none"), Options.defaults())) {
            db.put(key(1), TestKeys.bytes("x"));
            db.flush();
            assertThat(db.tables())
                    .singleElement()
                    .satisfies(t -> assertThat(t.rangeFilterProblem())
                            .as("no range filter written")
                            .isNull());
        }
    }
}
