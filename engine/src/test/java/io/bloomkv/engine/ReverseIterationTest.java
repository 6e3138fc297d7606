package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * {@link DbIterator} in both directions: seekToLast, seekForPrev, prev, and random direction switches,
 * with and without iterate bounds, checked move by move against a {@link TreeMap} model (latest state
 * and snapshots, while flushes and compactions replace the tables under open iterators) and against
 * RocksDB's iterator on the same operations. Seeded: replay with -Dbloomkv.seed=N.
 */
class ReverseIterationTest {
    @TempDir
    Path dir;

    private static final NavigableMap<byte[], byte[]> EMPTY = new TreeMap<>(Arrays::compareUnsigned);

    private static Options tinyTables() {
        return Options.defaults()
                .writeBufferSize(4 << 10)
                .blockSize(256)
                .blockRestartInterval(4)
                .targetFileSize(4 << 10)
                .maxBytesForLevelBase(16 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .l0SlowdownWritesTrigger(6)
                .l0StopWritesTrigger(6);
    }

    /** Keys from a small space (versions pile up) with bytes >= 0x80 (unsigned order) and prefixes of each other. */
    private static byte[] key(Random rnd) {
        int i = rnd.nextInt(400);
        byte[] base = TestKeys.key(i);
        int extra = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(2) : 0;
        byte[] k = Arrays.copyOf(base, base.length + extra);
        for (int j = base.length; j < k.length; j++) {
            k[j] = (byte) (rnd.nextBoolean() ? 0xF0 : 0x00);
        }
        return k;
    }

    private static byte[] target(Random rnd) {
        return switch (rnd.nextInt(10)) {
            case 0 -> new byte[] {'a'};
            case 1 -> new byte[] {(byte) 0xFF};
            default -> key(rnd);
        };
    }

    @Test
    void bothDirectionsAgainstTreeMapAcrossFlushesCompactionsAndSnapshots() {
        long seed = TestKeys.seed("ReverseIterationTest.model");
        Random rnd = new Random(seed);
        String ctx = "seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
        try (Db db = Db.open(dir, tinyTables())) {
            Snapshot snap = null;
            TreeMap<byte[], byte[]> snapModel = null;
            DbIterator held = null;
            TreeMap<byte[], byte[]> heldModel = null;
            for (int op = 0; op < 2500; op++) {
                String where = ctx + " op " + op;
                int r = rnd.nextInt(1000);
                if (r < 500) {
                    byte[] k = key(rnd);
                    byte[] v = TestKeys.value(rnd, 60);
                    db.put(k, v);
                    model.put(k, v);
                } else if (r < 700) {
                    byte[] k = key(rnd);
                    db.delete(k);
                    model.remove(k);
                } else if (r < 720) {
                    db.flush();
                } else if (r < 725) {
                    db.compactRange(null, null);
                } else if (r < 740) {
                    if (snap != null) {
                        walks(db, ReadOptions.defaults().snapshot(snap), snapModel, rnd, where + " snapshot");
                        snap.close();
                    }
                    snap = db.getSnapshot();
                    snapModel = new TreeMap<>(model);
                } else if (r < 760) {
                    if (held != null) {
                        // Opened many writes, flushes and compactions ago: still the state it was opened at.
                        walk(held, heldModel, rnd, 20, 30, where + " held iterator");
                        held.close();
                    }
                    held = db.iterator();
                    heldModel = new TreeMap<>(model);
                } else if (r < 790) {
                    walks(db, ReadOptions.defaults(), model, rnd, where);
                }
            }
            walks(db, ReadOptions.defaults(), model, rnd, ctx + " end");
            if (held != null) {
                db.waitForBackgroundWork();
                walk(held, heldModel, rnd, 20, 30, ctx + " held iterator at the end");
                held.close();
            }
            if (snap != null) {
                snap.close();
            }
            assertThat(db.stats().compactions()).as(ctx + " compactions ran").isGreaterThan(10);
            long deeper = 0;
            for (int level = 1; level < db.stats().numLevels(); level++) {
                deeper += db.stats().levelTables(level);
            }
            assertThat(deeper).as(ctx + " deeper levels exist").isGreaterThan(0);
        }
    }

    /** Full backward scan, then random walks, unbounded and with random bounds. */
    private static void walks(Db db, ReadOptions base, TreeMap<byte[], byte[]> model, Random rnd, String where) {
        try (DbIterator it = db.iterator(base)) {
            TreeMap<byte[], byte[]> back = new TreeMap<>(Arrays::compareUnsigned);
            byte[] last = null;
            for (it.seekToLast(); it.valid(); it.prev()) {
                if (last != null) {
                    assertThat(Arrays.compareUnsigned(it.key(), last))
                            .as(where + " descending")
                            .isLessThan(0);
                }
                last = it.key();
                back.put(it.key(), it.value());
            }
            assertThat(hex(back)).as(where + " full backward scan").isEqualTo(hex(model));
            walk(it, model, rnd, 10, 40, where);
        }
        byte[] lo = rnd.nextInt(3) == 0 ? null : key(rnd);
        byte[] hi = rnd.nextInt(3) == 0 ? null : key(rnd);
        NavigableMap<byte[], byte[]> view;
        if (lo != null && hi != null && Arrays.compareUnsigned(lo, hi) >= 0) {
            view = EMPTY;
        } else if (lo != null && hi != null) {
            view = model.subMap(lo, true, hi, false);
        } else if (lo != null) {
            view = model.tailMap(lo, true);
        } else if (hi != null) {
            view = model.headMap(hi, false);
        } else {
            view = model;
        }
        ReadOptions bounded = ReadOptions.defaults()
                .snapshot(base.snapshot())
                .iterateLowerBound(lo)
                .iterateUpperBound(hi);
        try (DbIterator it = db.iterator(bounded)) {
            walk(it, view, rnd, 10, 40, where + " bounds [" + TestKeys.str(lo) + ", " + TestKeys.str(hi) + ")");
        }
    }

    private static java.util.List<String> hex(Map<byte[], byte[]> m) {
        java.util.HexFormat h = java.util.HexFormat.of();
        return m.entrySet().stream()
                .map(e -> h.formatHex(e.getKey()) + "=" + h.formatHex(e.getValue()))
                .toList();
    }

    /** Random seeks of the four kinds, each followed by random next/prev moves, compared with {@code view}. */
    static void walk(DbIterator it, NavigableMap<byte[], byte[]> view, Random rnd, int walks, int steps, String ctx) {
        for (int w = 0; w < walks; w++) {
            String where = ctx + " walk " + w;
            Map.Entry<byte[], byte[]> e;
            byte[] t = target(rnd);
            switch (rnd.nextInt(4)) {
                case 0 -> {
                    it.seekToFirst();
                    e = view.isEmpty() ? null : view.firstEntry();
                    where += " seekToFirst";
                }
                case 1 -> {
                    it.seekToLast();
                    e = view.isEmpty() ? null : view.lastEntry();
                    where += " seekToLast";
                }
                case 2 -> {
                    it.seek(t);
                    e = view.ceilingEntry(t);
                    where += " seek " + TestKeys.str(t);
                }
                default -> {
                    it.seekForPrev(t);
                    e = view.floorEntry(t);
                    where += " seekForPrev " + TestKeys.str(t);
                }
            }
            check(it, e, where);
            for (int s = 0; s < steps && e != null; s++) {
                if (rnd.nextBoolean()) {
                    it.next();
                    e = view.higherEntry(e.getKey());
                    where += " n";
                } else {
                    it.prev();
                    e = view.lowerEntry(e.getKey());
                    where += " p";
                }
                check(it, e, where);
            }
            if (e == null) {
                assertThatThrownBy(it::prev).isInstanceOf(NoSuchElementException.class);
                assertThatThrownBy(it::next).isInstanceOf(NoSuchElementException.class);
            }
        }
    }

    private static void check(DbIterator it, Map.Entry<byte[], byte[]> e, String where) {
        if (e == null) {
            assertThat(it.valid()).as(where + ": not valid").isFalse();
        } else {
            assertThat(it.valid()).as(where + ": valid").isTrue();
            assertThat(TestKeys.str(it.key())).as(where + ": key").isEqualTo(TestKeys.str(e.getKey()));
            assertThat(it.key()).as(where + ": key bytes").isEqualTo(e.getKey());
            assertThat(it.value()).as(where + ": value").isEqualTo(e.getValue());
        }
    }

    @Test
    void sameMovesAsRocksDb() throws Exception {
        RocksDB.loadLibrary();
        long seed = TestKeys.seed("ReverseIterationTest.rocksdb");
        Random rnd = new Random(seed);
        String ctx = "seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        try (org.rocksdb.Options ro =
                        new org.rocksdb.Options().setCreateIfMissing(true).setWriteBufferSize(64 << 10);
                RocksDB rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                Db db = Db.open(dir.resolve("bloomkv"), tinyTables())) {
            for (int op = 0; op < 2500; op++) {
                int r = rnd.nextInt(1000);
                byte[] k = key(rnd);
                if (r < 600) {
                    byte[] v = TestKeys.value(rnd, 60);
                    db.put(k, v);
                    rocks.put(k, v);
                } else if (r < 900) {
                    db.delete(k);
                    rocks.delete(k);
                } else if (r < 920) {
                    db.flush();
                } else if (r < 960) {
                    compareMoves(db, rocks, rnd, ctx + " op " + op);
                }
            }
            db.waitForBackgroundWork();
            compareMoves(db, rocks, rnd, ctx + " end");
        }
    }

    private static void compareMoves(Db db, RocksDB rocks, Random rnd, String ctx) {
        byte[] lo = rnd.nextBoolean() ? null : key(rnd);
        byte[] hi = rnd.nextBoolean() ? null : key(rnd);
        if (lo != null && hi != null && Arrays.compareUnsigned(lo, hi) > 0) {
            byte[] x = lo;
            lo = hi;
            hi = x;
        }
        String where = ctx + " bounds [" + TestKeys.str(lo) + ", " + TestKeys.str(hi) + ")";
        try (Slice loSlice = lo == null ? null : new Slice(lo);
                Slice hiSlice = hi == null ? null : new Slice(hi);
                org.rocksdb.ReadOptions rro = new org.rocksdb.ReadOptions()) {
            if (loSlice != null) {
                rro.setIterateLowerBound(loSlice);
            }
            if (hiSlice != null) {
                rro.setIterateUpperBound(hiSlice);
            }
            try (RocksIterator theirs = rocks.newIterator(rro);
                    DbIterator ours = db.iterator(
                            ReadOptions.defaults().iterateLowerBound(lo).iterateUpperBound(hi))) {
                for (int w = 0; w < 10; w++) {
                    byte[] t = target(rnd);
                    String move;
                    switch (rnd.nextInt(4)) {
                        case 0 -> {
                            ours.seekToFirst();
                            theirs.seekToFirst();
                            move = "seekToFirst";
                        }
                        case 1 -> {
                            ours.seekToLast();
                            theirs.seekToLast();
                            move = "seekToLast";
                        }
                        case 2 -> {
                            ours.seek(t);
                            theirs.seek(t);
                            move = "seek " + TestKeys.str(t);
                        }
                        default -> {
                            ours.seekForPrev(t);
                            theirs.seekForPrev(t);
                            move = "seekForPrev " + TestKeys.str(t);
                        }
                    }
                    for (int s = 0; s < 30; s++) {
                        assertThat(ours.valid())
                                .as(where + " " + move + ": valid")
                                .isEqualTo(theirs.isValid());
                        if (!ours.valid()) {
                            break;
                        }
                        assertThat(TestKeys.str(ours.key()))
                                .as(where + " " + move)
                                .isEqualTo(TestKeys.str(theirs.key()));
                        assertThat(ours.value())
                                .as(where + " " + move + " value")
                                .isEqualTo(theirs.value());
                        if (rnd.nextBoolean()) {
                            ours.next();
                            theirs.next();
                            move += " n";
                        } else {
                            ours.prev();
                            theirs.prev();
                            move += " p";
                        }
                    }
                }
            }
        }
    }
}
