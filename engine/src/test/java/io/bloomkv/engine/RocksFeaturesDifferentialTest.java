package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.AbstractSlice;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.StringAppendOperator;
import org.rocksdb.UInt64AddOperator;

/**
 * Merge operators and range deletions against RocksDB (rocksdbjni) as the oracle: the same seeded random mix of put,
 * delete, merge, deleteRange, write batches, snapshots, flushes, compactions and reopens on both; every get, multiGet
 * and forward and reverse scan (latest state, at snapshots, within bounds) must agree. RocksDB runs with
 * {@code UInt64AddOperator} or {@code StringAppendOperator}, bloomkv with {@link MergeOperators#uint64Add()} or
 * {@link MergeOperators#stringAppend(char)}. Replay with -Dbloomkv.seed=N.
 */
class RocksFeaturesDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 2500);

    /** Small tables and levels, so flushes and compactions (and their merge collapsing) happen often. */
    private static Options small() {
        return SmallLevels.options();
    }

    @Test
    void uint64AddMatchesRocksDb() throws Exception {
        run(small().mergeOperator(MergeOperators.uint64Add()), true, false, "uint64Add");
    }

    @Test
    void stringAppendMatchesRocksDb() throws Exception {
        run(small().mergeOperator(MergeOperators.stringAppend(',')), false, false, "stringAppend");
    }

    @Test
    void deleteRangeMatchesRocksDb() throws Exception {
        run(small().mergeOperator(MergeOperators.stringAppend(',')), false, true, "deleteRange");
    }

    @Test
    void deleteRangeWithCountersMatchesRocksDb() throws Exception {
        run(small().mergeOperator(MergeOperators.uint64Add()), true, true, "deleteRangeCounters");
    }

    /** Range filters on: bounded scans skip tables through them while range tombstones still apply. */
    @Test
    void deleteRangeWithRangeFiltersMatchesRocksDb() throws Exception {
        run(
                small().mergeOperator(MergeOperators.stringAppend(',')).rangeFilterBitsPerKey(10),
                false,
                true,
                "deleteRangeRangeFilters");
    }

    /**
     * A write buffer of 32 KiB: memtables grow past the size at which the range tombstones' hidden entries make the
     * write path rewrite them ({@code MemTable.withoutHidden}), under snapshots, merges, flushes and reopens.
     */
    @Test
    void deleteRangeWithMemtableRewritesMatchesRocksDb() throws Exception {
        run(
                small().writeBufferSize(32 << 10).mergeOperator(MergeOperators.stringAppend(',')),
                false,
                true,
                "deleteRangeRewrites",
                true);
    }

    private void run(Options options, boolean counters, boolean rangeDeletes, String name) throws RocksDBException {
        run(options, counters, rangeDeletes, name, false);
    }

    private void run(Options options, boolean counters, boolean rangeDeletes, String name, boolean expectRewrites)
            throws RocksDBException {
        long seed = TestKeys.seed("RocksFeaturesDifferentialTest." + name);
        Random rnd = new Random(seed);
        String ctx = "seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        Path ours = dir.resolve("bloomkv");
        try (org.rocksdb.MergeOperator rop = counters ? new UInt64AddOperator() : new StringAppendOperator(',');
                org.rocksdb.Options ro = new org.rocksdb.Options()
                        .setCreateIfMissing(true)
                        .setWriteBufferSize(64 << 10)
                        .setMergeOperator(rop);
                RocksDB rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString())) {
            Db db = Db.open(ours, options);
            long skips = 0;
            long merges = 0;
            long rewrites = 0;
            List<Snapshot> snaps = new ArrayList<>();
            List<org.rocksdb.Snapshot> rsnaps = new ArrayList<>();
            try {
                for (int op = 0; op < OPS; op++) {
                    String where = ctx + " op " + op;
                    if (expectRewrites && op % 150 == 149) {
                        // Puts enough for the memtable to pass its rewrite minimum, then a tombstone over every key
                        // (they all start with 'k'), which hides the whole memtable: the put after it rewrites the
                        // memtable (keeping what a snapshot still reads).
                        for (int i = 0; i < 80; i++) {
                            byte[] k = key(rnd);
                            byte[] v = value(rnd, counters);
                            db.put(k, v);
                            rocks.put(k, v);
                        }
                        db.deleteRange(new byte[] {'k'}, new byte[] {'l'});
                        rocks.deleteRange(new byte[] {'k'}, new byte[] {'l'});
                        byte[] k = key(rnd);
                        byte[] v = value(rnd, counters);
                        db.put(k, v);
                        rocks.put(k, v);
                    }
                    int r = rnd.nextInt(1000);
                    if (r < 200) {
                        byte[] k = key(rnd);
                        byte[] v = value(rnd, counters);
                        db.put(k, v);
                        rocks.put(k, v);
                    } else if (r < 250) {
                        byte[] k = key(rnd);
                        db.delete(k);
                        rocks.delete(k);
                    } else if (r < 500) {
                        byte[] k = key(rnd);
                        byte[] v = operand(rnd, counters);
                        db.merge(k, v);
                        rocks.merge(k, v);
                    } else if (r < 530 && rangeDeletes) {
                        byte[][] range = range(rnd);
                        db.deleteRange(range[0], range[1]);
                        rocks.deleteRange(range[0], range[1]);
                    } else if (r < 550) {
                        WriteBatch b = new WriteBatch();
                        try (org.rocksdb.WriteBatch rb = new org.rocksdb.WriteBatch();
                                org.rocksdb.WriteOptions wo = new org.rocksdb.WriteOptions()) {
                            for (int i = 0, n = 1 + rnd.nextInt(8); i < n; i++) {
                                byte[] k = key(rnd);
                                int kind = rnd.nextInt(rangeDeletes ? 4 : 3);
                                if (kind == 0) {
                                    b.delete(k);
                                    rb.delete(k);
                                } else if (kind == 1) {
                                    byte[] v = value(rnd, counters);
                                    b.put(k, v);
                                    rb.put(k, v);
                                } else if (kind == 2) {
                                    byte[] v = operand(rnd, counters);
                                    b.merge(k, v);
                                    rb.merge(k, v);
                                } else {
                                    byte[][] range = range(rnd);
                                    b.deleteRange(range[0], range[1]);
                                    rb.deleteRange(range[0], range[1]);
                                }
                            }
                            db.write(b);
                            rocks.write(wo, rb);
                        }
                    } else if (r < 700 || r >= 940) {
                        int s = snaps.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(snaps.size());
                        byte[] k = key(rnd);
                        if (s < 0) {
                            assertThat(db.get(k))
                                    .as(where + " get " + Arrays.toString(k))
                                    .isEqualTo(rocks.get(k));
                        } else {
                            try (org.rocksdb.ReadOptions rro =
                                    new org.rocksdb.ReadOptions().setSnapshot(rsnaps.get(s))) {
                                assertThat(db.get(k, ReadOptions.defaults().snapshot(snaps.get(s))))
                                        .as(where + " get at snapshot " + Arrays.toString(k))
                                        .isEqualTo(rocks.get(rro, k));
                            }
                        }
                    } else if (r < 740) {
                        List<byte[]> keys = new ArrayList<>();
                        for (int i = 0, n = 1 + rnd.nextInt(20); i < n; i++) {
                            keys.add(key(rnd));
                        }
                        List<byte[]> expected = rocks.multiGetAsList(keys);
                        List<byte[]> actual = db.multiGet(keys);
                        for (int i = 0; i < keys.size(); i++) {
                            assertThat(actual.get(i))
                                    .as(where + " multiGet " + Arrays.toString(keys.get(i)))
                                    .isEqualTo(expected.get(i));
                        }
                    } else if (r < 860) {
                        int s = snaps.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(snaps.size());
                        byte[] lower = rnd.nextInt(3) == 0 ? key(rnd) : null;
                        byte[] upper = rnd.nextInt(3) == 0 ? key(rnd) : null;
                        byte[] start = rnd.nextInt(4) == 0 ? null : key(rnd);
                        boolean reverse = rnd.nextBoolean();
                        int limit = 1 + rnd.nextInt(rnd.nextInt(8) == 0 ? 2000 : 30);
                        assertThat(scan(db, s < 0 ? null : snaps.get(s), lower, upper, start, reverse, limit))
                                .as(where + " scan " + (reverse ? "back" : "fwd") + " from " + Arrays.toString(start)
                                        + " in [" + Arrays.toString(lower) + ", " + Arrays.toString(upper) + ")")
                                .isEqualTo(
                                        scan(rocks, s < 0 ? null : rsnaps.get(s), lower, upper, start, reverse, limit));
                    } else if (r < 900) {
                        if (snaps.size() < 4 && rnd.nextBoolean()) {
                            snaps.add(db.getSnapshot());
                            rsnaps.add(rocks.getSnapshot());
                        } else if (!snaps.isEmpty()) {
                            int s = rnd.nextInt(snaps.size());
                            snaps.remove(s).close();
                            rocks.releaseSnapshot(rsnaps.remove(s));
                        }
                    } else if (r < 925) {
                        db.flush();
                    } else if (r < 930) {
                        byte[] a = key(rnd);
                        byte[] b = key(rnd);
                        if (Arrays.compareUnsigned(a, b) > 0) {
                            byte[] t = a;
                            a = b;
                            b = t;
                        }
                        db.compactRange(rnd.nextBoolean() ? null : a, rnd.nextBoolean() ? null : b);
                    } else if (r < 940 && snaps.isEmpty()) {
                        skips += db.stats().rangeTombstoneSkips();
                        merges += db.stats().mergeLookups();
                        rewrites += db.stats().memtableRewrites();
                        db.close();
                        db = Db.open(ours, options);
                    }
                }
                assertThat(scan(db, null, null, null, null, false, Integer.MAX_VALUE))
                        .as(ctx + " full scan")
                        .isEqualTo(scan(rocks, null, null, null, null, false, Integer.MAX_VALUE));
                db.compactRange(null, null);
                assertThat(scan(db, null, null, null, null, true, Integer.MAX_VALUE))
                        .as(ctx + " full reverse scan after compactRange")
                        .isEqualTo(scan(rocks, null, null, null, null, true, Integer.MAX_VALUE));
                System.out.println("RocksFeaturesDifferentialTest." + name + ": " + db.stats());
                skips += db.stats().rangeTombstoneSkips();
                merges += db.stats().mergeLookups();
                rewrites += db.stats().memtableRewrites();
                assertThat(merges).as("gets read past merge operands").isPositive();
                if (expectRewrites) {
                    assertThat(rewrites)
                            .as("memtables rewritten without their hidden entries")
                            .isPositive();
                }
                if (rangeDeletes) {
                    assertThat(skips)
                            .as("gets answered by a range tombstone without reading a table")
                            .isPositive();
                }
            } finally {
                for (Snapshot s : snaps) {
                    s.close();
                }
                for (org.rocksdb.Snapshot s : rsnaps) {
                    rocks.releaseSnapshot(s);
                }
                db.close();
            }
        }
    }

    private static byte[] key(Random rnd) {
        int id = rnd.nextInt(300);
        byte[] k = new byte[1 + id % 4];
        k[0] = 'k';
        for (int i = 1; i < k.length; i++) {
            k[i] = (byte) (id * 31 * i + (id >> 3));
        }
        return k;
    }

    /** [begin, end) with begin < end, mostly short. */
    private static byte[][] range(Random rnd) {
        byte[] a = key(rnd);
        byte[] b = rnd.nextInt(4) == 0 ? key(rnd) : Arrays.copyOf(a, a.length + 1);
        int c = Arrays.compareUnsigned(a, b);
        if (c == 0) {
            b = Arrays.copyOf(a, a.length + 1);
        } else if (c > 0) {
            byte[] t = a;
            a = b;
            b = t;
        }
        return new byte[][] {a, b};
    }

    private static byte[] value(Random rnd, boolean counters) {
        if (counters && rnd.nextInt(10) != 0) {
            return MergeOperators.encodeUint64(rnd.nextInt(1000));
        }
        return TestKeys.value(rnd, 12);
    }

    private static byte[] operand(Random rnd, boolean counters) {
        if (counters) {
            return rnd.nextInt(20) == 0 ? TestKeys.value(rnd, 4) : MergeOperators.encodeUint64(rnd.nextLong());
        }
        return TestKeys.value(rnd, 6);
    }

    private static List<String> scan(
            Db db, Snapshot snap, byte[] lower, byte[] upper, byte[] start, boolean reverse, int limit) {
        List<String> out = new ArrayList<>();
        ReadOptions o = ReadOptions.defaults().snapshot(snap);
        if (lower != null) {
            o.iterateLowerBound(lower);
        }
        if (upper != null) {
            o.iterateUpperBound(upper);
        }
        try (DbIterator it = db.iterator(o)) {
            if (start == null) {
                if (reverse) {
                    it.seekToLast();
                } else {
                    it.seekToFirst();
                }
            } else if (reverse) {
                it.seekForPrev(start);
            } else {
                it.seek(start);
            }
            for (; it.valid() && out.size() < limit; ) {
                out.add(Arrays.toString(it.key()) + "=" + Arrays.toString(it.value()));
                if (reverse) {
                    it.prev();
                } else {
                    it.next();
                }
            }
            // a change of direction after the walk must land on the neighbour of the last key
            if (it.valid() && out.size() > 1) {
                if (reverse) {
                    it.next();
                } else {
                    it.prev();
                }
                out.add("turn:" + (it.valid() ? Arrays.toString(it.key()) + "=" + Arrays.toString(it.value()) : "end"));
            }
        }
        return out;
    }

    private static List<String> scan(
            RocksDB rocks,
            org.rocksdb.Snapshot snap,
            byte[] lower,
            byte[] upper,
            byte[] start,
            boolean reverse,
            int limit) {
        List<String> out = new ArrayList<>();
        List<AbstractSlice<?>> slices = new ArrayList<>();
        try (org.rocksdb.ReadOptions ro = new org.rocksdb.ReadOptions()) {
            if (snap != null) {
                ro.setSnapshot(snap);
            }
            if (lower != null) {
                Slice s = new Slice(lower);
                slices.add(s);
                ro.setIterateLowerBound(s);
            }
            if (upper != null) {
                Slice s = new Slice(upper);
                slices.add(s);
                ro.setIterateUpperBound(s);
            }
            try (RocksIterator it = rocks.newIterator(ro)) {
                if (start == null) {
                    if (reverse) {
                        it.seekToLast();
                    } else {
                        it.seekToFirst();
                    }
                } else if (reverse) {
                    it.seekForPrev(start);
                } else {
                    it.seek(start);
                }
                for (; it.isValid() && out.size() < limit; ) {
                    out.add(Arrays.toString(it.key()) + "=" + Arrays.toString(it.value()));
                    if (reverse) {
                        it.prev();
                    } else {
                        it.next();
                    }
                }
                if (it.isValid() && out.size() > 1) {
                    if (reverse) {
                        it.next();
                    } else {
                        it.prev();
                    }
                    out.add("turn:"
                            + (it.isValid() ? Arrays.toString(it.key()) + "=" + Arrays.toString(it.value()) : "end"));
                }
            }
        } finally {
            for (AbstractSlice<?> s : slices) {
                s.close();
            }
        }
        return out;
    }
}
