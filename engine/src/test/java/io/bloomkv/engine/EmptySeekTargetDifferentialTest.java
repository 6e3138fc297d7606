package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.StringAppendOperator;

/**
 * {@link DbIterator#seek} and {@link DbIterator#seekForPrev} with an empty target, against RocksDB (rocksdbjni) as the
 * oracle: {@code Seek("")} lands on the first key at or above the lower bound, {@code SeekForPrev("")} on no key (no
 * stored key is {@code <= ""}), neither throws. Each case is compared with no bounds, empty bounds, key bounds and
 * inverted bounds, with the data in the memtable only, in tables only, and in both (newer deletes, range deletions and
 * merge operands in the memtable over the tables' first keys), at the latest state and at snapshots; the iterator is
 * sometimes positioned elsewhere first (a prefix seek's confinement must not survive an empty seek) and is then walked
 * by a mix of next and prev. With a prefix length, RocksDB has a fixed-length prefix extractor and prefix Bloom filters
 * (memtable and tables), and half the iterators are made with {@code prefix_same_as_start} on both sides: an empty
 * target lies outside the extractor's domain, so RocksDB sets no prefix and bloomkv confines nothing. There
 * seekForPrev("") is compared with RocksDB's prefix-mode iterator, but seek("") with its total-order one: RocksDB
 * leaves iteration outside a prefix undefined in prefix mode, and its prefix-mode iterator does leave the total order
 * after seek("") (see {@code walk}; the departures are counted and printed, not failed). Null targets throw on
 * both sides ({@link InvalidArgumentException} here, {@code NullPointerException} in rocksdbjni). Replay with
 * -Dbloomkv.seed=N.
 */
@ExtendWith(NoTableLeak.class)
class EmptySeekTargetDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    private static final byte[] EMPTY = new byte[0];
    private static final byte[] ALPHABET = {0x00, 0x01, 'a', (byte) 0x80, (byte) 0xff};
    private static final int PREFIX = 2;

    @TempDir
    Path dir;

    @Test
    void emptyTargetsMatchRocksDb() throws Exception {
        new Run(dir, "plain", SmallLevels.options(), 0).run();
    }

    /** Bounded positionings first ask the range filters whether the range can hold a key (DbIterator.provablyEmpty). */
    @Test
    void emptyTargetsWithRangeFiltersMatchRocksDb() throws Exception {
        new Run(dir, "rangeFilters", SmallLevels.options().rangeFilterBitsPerKey(10), 0).run();
    }

    /** Prefix length 2, prefix_same_as_start on half the iterators; one-byte keys lie outside the domain. */
    @Test
    void emptyTargetsWithPrefixSeeksMatchRocksDb() throws Exception {
        Options o = SmallLevels.options().prefixLength(PREFIX).tablePartitionPrefixLength(PREFIX);
        new Run(dir, "prefix", o, PREFIX).run();
    }

    @Test
    void nullTargetsThrowOnBothSides() throws Exception {
        try (org.rocksdb.Options ro = new org.rocksdb.Options().setCreateIfMissing(true);
                RocksDB rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                Db db = Db.open(dir.resolve("bloomkv"), Options.defaults());
                RocksIterator rit = rocks.newIterator();
                DbIterator it = db.iterator()) {
            db.put(new byte[] {'a'}, new byte[] {'1'});
            assertThatThrownBy(() -> rit.seek((byte[]) null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> rit.seekForPrev((byte[]) null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> it.seek(null)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> it.seekForPrev(null)).isInstanceOf(InvalidArgumentException.class);
            // Keys stay non-empty everywhere else.
            assertThatThrownBy(() -> db.put(EMPTY, new byte[] {'1'})).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.get(EMPTY)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.delete(EMPTY)).isInstanceOf(InvalidArgumentException.class);
        }
    }

    private static String s(byte[] k) {
        return k == null ? "null" : "'" + HexFormat.of().formatHex(k) + "'";
    }

    private static byte[] key(Random rnd) {
        byte[] k = new byte[1 + rnd.nextInt(3)];
        for (int i = 0; i < k.length; i++) {
            k[i] = ALPHABET[rnd.nextInt(ALPHABET.length)];
        }
        return k;
    }

    /** A bound: none, empty, or a key. */
    private static byte[] bound(Random rnd) {
        int r = rnd.nextInt(3);
        return r == 0 ? null : r == 1 ? EMPTY : key(rnd);
    }

    private static final class Run {
        private final Path dir;
        private final Options options;
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
        /** Empty seeks made, and how many of them landed on a key (the test must see both outcomes). */
        private int seeks;

        private int seeksLanded;
        /** Prefix-mode walks after seek("") on which RocksDB's prefix-mode iterator left the total order. */
        private int prefixModeWalks;

        private int prefixModeDepartures;
        private String firstDeparture;

        Run(Path dir, String name, Options options, int prefixLength) {
            this.dir = dir;
            this.options = options.mergeOperator(MergeOperators.stringAppend(','));
            this.prefixLength = prefixLength;
            this.seed = TestSeeds.seed("EmptySeekTargetDifferentialTest." + name);
            this.rnd = new Random(seed);
            this.ctx = name + " seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        }

        void run() throws Exception {
            try (StringAppendOperator rop = new StringAppendOperator(',');
                    BloomFilter bloom = new BloomFilter(10);
                    org.rocksdb.Options ro = new org.rocksdb.Options()
                            .setCreateIfMissing(true)
                            .setMergeOperator(rop)
                            .setWriteBufferSize(64 << 10);
                    FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
                if (prefixLength > 0) {
                    ro.useFixedLengthPrefixExtractor(prefixLength)
                            .setMemtablePrefixBloomSizeRatio(0.1)
                            .setTableFormatConfig(new BlockBasedTableConfig()
                                    .setFilterPolicy(bloom)
                                    .setWholeKeyFiltering(true));
                }
                flush = fo;
                try (RocksDB r = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                        Db d = Db.open(dir.resolve("bloomkv"), options)) {
                    rocks = r;
                    db = d;
                    try {
                        phases();
                    } finally {
                        for (Snapshot sn : ours) {
                            db.releaseSnapshot(sn);
                        }
                        for (org.rocksdb.Snapshot sn : theirs) {
                            rocks.releaseSnapshot(sn);
                        }
                    }
                }
            }
            assertThat(seeksLanded)
                    .as(ctx + ": empty seeks that landed on a key")
                    .isGreaterThan(0);
            assertThat(seeks - seeksLanded)
                    .as(ctx + ": empty seeks that found none")
                    .isGreaterThan(0);
            if (prefixLength > 0) {
                System.out.println(ctx + ": of " + prefixModeWalks + " prefix-mode walks from seek(''), RocksDB's "
                        + "prefix-mode iterator left the total order on " + prefixModeDepartures
                        + (firstDeparture == null ? "" : ", first: " + firstDeparture));
            }
        }

        /** Empty database; memtable only; tables only; tables with newer memtable entries; then a random history. */
        private void phases() throws Exception {
            checkAll("empty database");
            for (int i = 0; i < 60; i++) {
                put(key(rnd));
            }
            checkAll("memtable only");
            db.flush();
            rocks.flush(flush);
            db.compactRange(null, null);
            rocks.compactRange();
            checkAll("tables only");
            // Newer entries over the smallest keys, in the memtable: a seek to "" must pass them.
            try (DbIterator it = db.iterator()) {
                it.seekToFirst();
                for (int i = 0; i < 3 && it.valid(); i++, it.next()) {
                    byte[] k = it.key();
                    if (i == 0) {
                        history.add("delete " + s(k));
                        db.delete(k);
                        rocks.delete(k);
                    } else {
                        history.add("merge " + s(k));
                        db.merge(k, new byte[] {'m'});
                        rocks.merge(k, new byte[] {'m'});
                    }
                }
            }
            byte[] lo = {0x00};
            byte[] hi = {0x01, 0x01};
            history.add("deleteRange " + s(lo) + " " + s(hi));
            db.deleteRange(lo, hi);
            rocks.deleteRange(lo, hi);
            checkAll("tables and memtable");
            for (int op = 0; op < 400; op++) {
                int r = rnd.nextInt(100);
                if (r < 35) {
                    put(key(rnd));
                } else if (r < 45) {
                    byte[] k = key(rnd);
                    history.add("delete " + s(k));
                    db.delete(k);
                    rocks.delete(k);
                } else if (r < 55) {
                    byte[] k = key(rnd);
                    byte[] v = ("m" + op).getBytes();
                    history.add("merge " + s(k));
                    db.merge(k, v);
                    rocks.merge(k, v);
                } else if (r < 58) {
                    byte[] a = key(rnd);
                    byte[] b = key(rnd);
                    if (Arrays.compareUnsigned(a, b) > 0) {
                        byte[] t = a;
                        a = b;
                        b = t;
                    }
                    history.add("deleteRange " + s(a) + " " + s(b));
                    db.deleteRange(a, b);
                    rocks.deleteRange(a, b);
                } else if (r < 62) {
                    history.add("flush");
                    db.flush();
                    rocks.flush(flush);
                } else if (r < 63) {
                    history.add("compactRange");
                    db.compactRange(null, null);
                    rocks.compactRange();
                } else if (r < 66) {
                    if (ours.size() < 3 && rnd.nextBoolean()) {
                        history.add("snapshot #" + ours.size());
                        ours.add(db.getSnapshot());
                        theirs.add(rocks.getSnapshot());
                    } else if (!ours.isEmpty()) {
                        int i = rnd.nextInt(ours.size());
                        history.add("release #" + i);
                        db.releaseSnapshot(ours.remove(i));
                        rocks.releaseSnapshot(theirs.remove(i));
                    }
                } else {
                    int sn = ours.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(ours.size());
                    check("op " + op, bound(rnd), bound(rnd), sn, prefixLength > 0 && rnd.nextBoolean());
                }
            }
        }

        private void put(byte[] k) throws Exception {
            byte[] v = ("v" + history.size()).getBytes();
            history.add("put " + s(k));
            db.put(k, v);
            rocks.put(k, v);
        }

        /** No, empty, key and inverted bounds, at the latest state, with and without prefix mode. */
        private void checkAll(String phase) throws Exception {
            byte[][][] bounds = {
                {null, null},
                {EMPTY, null},
                {null, EMPTY},
                {EMPTY, EMPTY},
                {{'a'}, null},
                {null, {'a'}},
                {EMPTY, {'a', 'a'}},
                {{0x01}, {(byte) 0x80}},
                {{(byte) 0x80}, {0x01}},
                {{(byte) 0xff, (byte) 0xff, (byte) 0xff}, null},
            };
            for (byte[][] b : bounds) {
                check(phase, b[0], b[1], -1, false);
                if (prefixLength > 0) {
                    check(phase, b[0], b[1], -1, true);
                }
            }
        }

        /**
         * Iterators with these bounds (at snapshot {@code sn}, or the latest state when negative), in prefix mode or
         * not: three rounds of an optional positioning elsewhere, then seek("") or seekForPrev(""), each followed by
         * up to 10 steps of next or prev, compared at each step with RocksDB. In prefix mode a second RocksDB iterator
         * with the same bounds reads in total order: see {@link #walk}.
         */
        private void check(String phase, byte[] lower, byte[] upper, int sn, boolean prefixMode) throws Exception {
            String what = ctx + " " + phase + " after " + tail() + " iterator [" + s(lower) + ", " + s(upper) + ")"
                    + (sn < 0 ? "" : " at snapshot #" + sn) + (prefixMode ? " prefixSameAsStart" : "") + ":";
            try (SeekOracle o = new SeekOracle(
                    db,
                    rocks,
                    sn < 0 ? null : ours.get(sn),
                    sn < 0 ? null : theirs.get(sn),
                    lower,
                    upper,
                    prefixMode)) {
                DbIterator it = o.ours;
                RocksIterator rit = o.theirs;
                RocksIterator total = o.totalOrder;
                List<RocksIterator> rocksIts = o.rocksIterators;
                StringBuilder steps = new StringBuilder(what);
                for (int round = 0; round < 3; round++) {
                    positionElsewhere(it, rocksIts, steps);
                    boolean forward = rnd.nextInt(3) > 0;
                    steps.append(forward ? " seek('')" : " seekForPrev('')");
                    for (RocksIterator r : rocksIts) {
                        if (forward) {
                            r.seek(EMPTY);
                        } else {
                            r.seekForPrev(EMPTY);
                        }
                        r.status(); // RocksDB takes an empty target without an error
                    }
                    if (forward) {
                        it.seek(EMPTY);
                        seeks++;
                        if (it.valid()) {
                            seeksLanded++;
                        }
                    } else {
                        // No key is <= "" (RocksDB could store the empty key; the history never writes it).
                        assertThat(rit.isValid()).as(steps + " RocksDB valid").isFalse();
                        it.seekForPrev(EMPTY);
                    }
                    if (forward && total != null) {
                        prefixModeWalks++;
                    }
                    walk(it, rit, forward ? total : null, steps);
                }
            }
        }

        /**
         * Sometimes a positioning before the empty seek, not compared (a prefix seek's iterator is compared elsewhere
         * within the prefix only): an empty seek must undo whatever state it left, a prefix confinement among them.
         */
        private void positionElsewhere(DbIterator it, List<RocksIterator> rocksIts, StringBuilder steps) {
            int how = rnd.nextInt(6);
            byte[] t = how <= 1 ? key(rnd) : null;
            if (how == 0) {
                steps.append(" (seek ").append(s(t)).append(')');
                it.seek(t);
            } else if (how == 1) {
                steps.append(" (seekForPrev ").append(s(t)).append(')');
                it.seekForPrev(t);
            } else if (how == 2) {
                steps.append(" (seekToFirst)");
                it.seekToFirst();
            } else if (how == 3) {
                steps.append(" (seekToLast)");
                it.seekToLast();
            }
            for (RocksIterator r : rocksIts) {
                if (how == 0) {
                    r.seek(t);
                } else if (how == 1) {
                    r.seekForPrev(t);
                } else if (how == 2) {
                    r.seekToFirst();
                } else if (how == 3) {
                    r.seekToLast();
                }
            }
        }

        /**
         * From where the empty seek left both iterators, up to 10 steps of next or prev, compared at each step (the
         * position first) with RocksDB's iterator, or with {@code total} when given: after seek("") in prefix mode. An
         * empty target lies outside the prefix extractor's domain, so bloomkv confines nothing and iterates in total
         * order, and RocksDB sets no prefix either; but its prefix-mode iterator reseeks its children with in-domain
         * keys (the lower bound, a direction switch, the end of a range tombstone, a skip past many versions), which
         * are prefix seeks that may leave out other prefixes' tables: RocksDB leaves iteration outside a prefix
         * undefined, and it does leave the total order there. It is stepped alongside until it does, which is counted.
         */
        private void walk(DbIterator it, RocksIterator rit, RocksIterator total, StringBuilder steps) throws Exception {
            RocksIterator oracle = total == null ? rit : total;
            boolean together = total != null;
            for (int step = 0; ; step++) {
                if (together && !spot(rit).equals(spot(total))) {
                    together = false;
                    prefixModeDepartures++;
                    if (firstDeparture == null) {
                        firstDeparture = steps + ": RocksDB's prefix-mode iterator at " + spot(rit)
                                + ", its total-order one at " + spot(total);
                    }
                }
                assertThat(spot(it)).as(steps + " position").isEqualTo(spot(oracle));
                if (!oracle.isValid()) {
                    oracle.status();
                    return;
                }
                assertThat(it.value()).as(steps + " value of " + s(it.key())).isEqualTo(oracle.value());
                if (step >= 10) {
                    return;
                }
                boolean back = rnd.nextInt(4) == 0;
                steps.append(back ? " prev" : " next");
                for (RocksIterator r : together ? List.of(rit, total) : List.of(oracle)) {
                    if (back) {
                        r.prev();
                    } else {
                        r.next();
                    }
                }
                if (back) {
                    it.prev();
                } else {
                    it.next();
                }
            }
        }

        private static String spot(DbIterator it) {
            return it.valid() ? s(it.key()) : "invalid";
        }

        private static String spot(RocksIterator it) {
            return it.isValid() ? s(it.key()) : "invalid";
        }

        private String tail() {
            return history.subList(Math.max(0, history.size() - 6), history.size())
                    .toString();
        }
    }
}
