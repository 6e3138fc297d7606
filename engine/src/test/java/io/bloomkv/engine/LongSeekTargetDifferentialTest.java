package io.bloomkv.engine;

import static io.bloomkv.engine.LongKeysForTests.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
 * Seek targets, iterator bounds and point reads with keys longer than {@link Db#MAX_KEY_SIZE}, against RocksDB
 * (rocksdbjni) as the oracle, whose default options take keys of any length: both databases get the same keys (at
 * most {@code MAX} bytes, which bloomkv stores), and reads with longer ones must answer as RocksDB's do. Stored keys
 * have many lengths: 1 to 3 bytes, and {@code MAX - 3} to exactly {@code MAX} bytes sharing long stems (a two-byte
 * head, then a run of one filler byte, 'm', 0x00 or 0xFF, then up to three more bytes), with 0x00 and 0xFF bytes, and
 * the keys of {@code MAX} and {@code MAX - 1} bytes of 0xFF. Long targets and bounds are {@code MAX + 1} bytes and
 * more, whose first {@code MAX} bytes equal a stored key, or precede or follow one by the last byte, or are a key's
 * stem padded with 0x00, 0xFF or 'm' bytes, or are all 0xFF (no key of at most {@code MAX} bytes is above them). Each
 * case is compared with no bounds, short bounds and long bounds, with the data in the memtable only, in tables only,
 * and in both (newer deletes, range deletions and merge operands in the memtable over the tables' keys), at the latest
 * state and at snapshots: seek and seekForPrev (after a positioning elsewhere now and then), each followed by up to 10
 * steps of next or prev, position by position; and get and multiGet of long keys (none is found).
 *
 * <p>With range filters, bounded positionings first ask them ({@link DbIterator#provablyEmpty}), so the reduced bounds
 * reach the filters. With a prefix length (RocksDB: a fixed-length prefix extractor, memtable and table prefix
 * Blooms), half the iterators are made with {@code prefix_same_as_start} on both sides: a long target is always in
 * the extractor's domain, and its prefix is its first prefixLength bytes. As in
 * {@code RocksMixedHistoryDifferentialTest}, a prefix-mode walk is compared with RocksDB's total-order iterator
 * confined to the target's prefix (what {@code prefix_same_as_start} promises), and RocksDB's own prefix-mode iterator
 * is stepped alongside: where it leaves that answer the departure is counted and printed, not failed, apart for
 * targets in the extractor's domain (every long target) and shorter ones (the stored-length targets mixed in), which
 * confine nothing and where RocksDB leaves iteration undefined in prefix mode, as
 * {@link EmptySeekTargetDifferentialTest} describes. Replay with -Dbloomkv.seed=N.
 */
@ExtendWith(NoTableLeak.class)
class LongSeekTargetDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    private static final byte[] EMPTY = new byte[0];

    @TempDir
    Path dir;

    @Test
    void longTargetsMatchRocksDb() throws Exception {
        new Run(dir, "plain", options(), 0).run();
    }

    /** Bounded positionings first ask the range filters whether the range can hold a key (DbIterator.provablyEmpty). */
    @Test
    void longTargetsWithRangeFiltersMatchRocksDb() throws Exception {
        new Run(dir, "rangeFilters", options().rangeFilterBitsPerKey(10), 0).run();
    }

    /** Prefix length 2 (a long key's head), prefix_same_as_start on half the iterators. */
    @Test
    void longTargetsWithPrefixSeeksMatchRocksDb() throws Exception {
        new Run(dir, "prefix", options().prefixLength(2).tablePartitionPrefixLength(2), 2).run();
    }

    /**
     * Prefix length {@code MAX - 1}: only the keys of {@code MAX - 1} and {@code MAX} bytes are in the extractor's
     * domain, and a long target's prefix is all but the last of its first {@code MAX} bytes.
     */
    @Test
    void longTargetsWithLongPrefixesMatchRocksDb() throws Exception {
        new Run(dir, "longPrefix", options().prefixLength(MAX - 1), MAX - 1).run();
    }

    /**
     * A get or multiGet of a long key is not found on both sides, and asks no filter (the tables' filter checks do not
     * move, while a get of a stored key's neighbour does move them); a write of one stays refused (RocksDB takes it).
     */
    @Test
    void longPointReadsFindNothingAndAskNoFilter() throws Exception {
        byte[] stored = filled(MAX, (byte) 'k');
        byte[] longer = Arrays.copyOf(stored, MAX + 1);
        byte[] neighbour = stored.clone();
        neighbour[MAX - 1] = 'j';
        try (org.rocksdb.Options ro = new org.rocksdb.Options().setCreateIfMissing(true);
                RocksDB rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                Db db = Db.open(dir.resolve("bloomkv"), Options.defaults())) {
            for (byte[] k : List.of(stored, new byte[] {'a'})) {
                db.put(k, new byte[] {'1'});
                rocks.put(k, new byte[] {'1'});
            }
            db.flush();
            assertThat(rocks.get(longer)).isNull();
            assertThat(rocks.multiGetAsList(List.of(longer, stored)).get(0)).isNull();
            Stats before = db.stats();
            assertThat(db.get(longer)).isNull();
            try (Snapshot sn = db.getSnapshot()) {
                assertThat(db.get(longer, ReadOptions.defaults().snapshot(sn))).isNull();
            }
            List<byte[]> got = db.multiGet(Arrays.asList(longer, stored, longer, ALL_FF));
            assertThat(got.get(0)).isNull();
            assertThat(got.get(1)).isEqualTo(new byte[] {'1'});
            assertThat(got.get(2)).isNull();
            assertThat(got.get(3)).isNull();
            Stats after = db.stats();
            // The multiGet's stored key is the one filter check (ALL_FF sorts after the table's last key).
            assertThat(after.filterChecks() - before.filterChecks())
                    .as("filter checks")
                    .isEqualTo(1);
            assertThat(after.misses() - before.misses()).as("misses").isEqualTo(5);
            assertThat(db.get(neighbour)).isNull();
            assertThat(db.stats().filterChecks() - after.filterChecks())
                    .as("filter checks of a stored key's neighbour")
                    .isEqualTo(1);
            // Released and foreign snapshots stay refused, whatever the key.
            Snapshot released = db.getSnapshot();
            released.close();
            assertThatThrownBy(() -> db.get(longer, ReadOptions.defaults().snapshot(released)))
                    .isInstanceOf(InvalidArgumentException.class);
            // Null and empty keys stay refused; writes of long keys too.
            assertThatThrownBy(() -> db.get(null)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.get(EMPTY)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.multiGet(Arrays.asList(longer, null)))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.put(longer, new byte[] {'1'})).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.delete(longer)).isInstanceOf(InvalidArgumentException.class);
            rocks.delete(longer); // RocksDB takes keys of any length
        }
    }

    private static Options options() {
        // SmallLevels' shapes, scaled to keys of up to 64 KiB: the memtable holds the first phase's keys, tables a few.
        return SmallLevels.options()
                .writeBufferSize(8 << 20)
                .targetFileSize(256 << 10)
                .maxBytesForLevelBase(1 << 20);
    }

    private static final class Run {
        private final Path dir;
        private final Options options;
        private final int prefixLength;
        private final long seed;
        private final Random rnd;
        private final String ctx;
        private final List<String> history = new ArrayList<>();
        /** Every key written (put or merge), for targets near them. */
        private final List<byte[]> written = new ArrayList<>();

        private final List<Snapshot> ours = new ArrayList<>();
        private final List<org.rocksdb.Snapshot> theirs = new ArrayList<>();
        private Db db;
        private RocksDB rocks;
        private FlushOptions flush;
        /** Long-target positionings made, and how many of them landed on a key (the test must see both outcomes). */
        private int seeks;

        private int seeksLanded;
        /** Long-bound iterators made, and how many of their positionings landed on a key. */
        private int longBoundIterators;

        private int longBoundLanded;
        /** Gets and multiGets of long keys asked. */
        private int longGets;
        /** The range filters' checks of the whole run (reduced bounds and targets reach them). */
        private long rangeFilterChecks;
        /**
         * Prefix-mode walks, and those on which RocksDB's prefix-mode iterator left the confined total order; index 0
         * after a target shorter than the prefix length (outside the extractor's domain), 1 after one in it (every long
         * target).
         */
        private final int[] prefixModeWalks = new int[2];

        private final int[] prefixModeDepartures = new int[2];
        private final String[] firstDeparture = new String[2];

        Run(Path dir, String name, Options options, int prefixLength) {
            this.dir = dir;
            this.options = options.mergeOperator(MergeOperators.stringAppend(','));
            this.prefixLength = prefixLength;
            this.seed = TestSeeds.seed("LongSeekTargetDifferentialTest." + name);
            this.rnd = new Random(seed);
            this.ctx = name + " seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        }

        void run() throws Exception {
            try (StringAppendOperator rop = new StringAppendOperator(',');
                    BloomFilter bloom = new BloomFilter(10);
                    org.rocksdb.Options ro = new org.rocksdb.Options()
                            .setCreateIfMissing(true)
                            .setMergeOperator(rop)
                            .setWriteBufferSize(8 << 20);
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
                        rangeFilterChecks = db.stats().rangeFilterChecks();
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
            System.out.println(ctx + ": " + seeks + " long-target positionings (" + seeksLanded + " on a key), "
                    + longBoundIterators + " iterators with a long bound (" + longBoundLanded
                    + " positionings on a key), " + longGets + " long keys read, " + rangeFilterChecks
                    + " range filter checks");
            assertThat(seeksLanded)
                    .as(ctx + ": long-target positionings that landed on a key")
                    .isGreaterThan(0);
            assertThat(seeks - seeksLanded)
                    .as(ctx + ": long-target positionings that found none")
                    .isGreaterThan(0);
            assertThat(longBoundLanded)
                    .as(ctx + ": positionings with a long bound that landed on a key")
                    .isGreaterThan(0);
            if (options.rangeFilterBitsPerKey() > 0) {
                assertThat(rangeFilterChecks).as(ctx + ": range filter checks").isGreaterThan(0);
            }
            if (prefixLength > 0) {
                for (int d = 0; d < 2; d++) {
                    System.out.println(ctx + ": of " + prefixModeWalks[d] + " prefix-mode walks from targets "
                            + (d == 0 ? "shorter than" : "at least") + " the prefix length, RocksDB's prefix-mode "
                            + "iterator left the confined total order on " + prefixModeDepartures[d]
                            + (firstDeparture[d] == null ? "" : ", first: " + firstDeparture[d]));
                }
                assertThat(prefixModeWalks[1])
                        .as(ctx + ": prefix-mode walks in a prefix")
                        .isGreaterThan(0);
            }
        }

        /** Empty database; memtable only; tables only; tables with newer memtable entries; then a random history. */
        private void phases() throws Exception {
            checkAll("empty database");
            put(ALL_FF);
            put(ALL_FF_SHORT);
            for (int i = 0; i < 40; i++) {
                put(key(rnd));
            }
            assertThat(db.tables()).as(ctx + ": tables after the first puts").isEmpty();
            checkAll("memtable only");
            db.flush();
            rocks.flush(flush);
            db.compactRange(null, null);
            rocks.compactRange();
            checkAll("tables only");
            // Newer entries over some keys, in the memtable, and a range deletion over a run of them.
            for (int i = 0; i < 6; i++) {
                byte[] k = written.get(rnd.nextInt(written.size()));
                if (i % 2 == 0) {
                    delete(k);
                } else {
                    merge(k, new byte[] {'m'});
                }
            }
            deleteRange(key(rnd), key(rnd));
            checkAll("tables and memtable");
            for (int op = 0; op < 400; op++) {
                int r = rnd.nextInt(100);
                if (r < 30) {
                    put(key(rnd));
                } else if (r < 38) {
                    delete(rnd.nextBoolean() ? key(rnd) : written.get(rnd.nextInt(written.size())));
                } else if (r < 46) {
                    byte[] k = rnd.nextBoolean() ? key(rnd) : written.get(rnd.nextInt(written.size()));
                    merge(k, ("m" + op).getBytes());
                } else if (r < 49) {
                    deleteRange(key(rnd), key(rnd));
                } else if (r < 53) {
                    history.add("flush");
                    db.flush();
                    rocks.flush(flush);
                } else if (r < 54) {
                    history.add("compactRange");
                    db.compactRange(null, null);
                    rocks.compactRange();
                } else if (r < 57) {
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
                } else if (r < 62) {
                    pointReads("op " + op, ours.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(ours.size()));
                } else {
                    int sn = ours.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(ours.size());
                    check("op " + op, bound(), bound(), sn, prefixLength > 0 && rnd.nextBoolean());
                }
            }
        }

        private void put(byte[] k) throws Exception {
            byte[] v = ("v" + history.size()).getBytes();
            history.add("put " + s(k));
            written.add(k);
            db.put(k, v);
            rocks.put(k, v);
        }

        private void delete(byte[] k) throws Exception {
            history.add("delete " + s(k));
            db.delete(k);
            rocks.delete(k);
        }

        private void merge(byte[] k, byte[] v) throws Exception {
            history.add("merge " + s(k));
            written.add(k);
            db.merge(k, v);
            rocks.merge(k, v);
        }

        private void deleteRange(byte[] a, byte[] b) throws Exception {
            if (Arrays.compareUnsigned(a, b) > 0) {
                byte[] t = a;
                a = b;
                b = t;
            }
            history.add("deleteRange " + s(a) + " " + s(b));
            db.deleteRange(a, b);
            rocks.deleteRange(a, b);
        }

        /**
         * A key of more than {@code MAX} bytes: its first {@code MAX} bytes are a written key (when it has {@code MAX}
         * bytes, else padded with one filler byte), sometimes with the last byte one less or one more (preceding or
         * following that key), or a fresh stem, or all 0xFF; then 1 to 40 more bytes, or up to a few thousand.
         */
        private byte[] longKey() {
            byte[] head;
            int r = rnd.nextInt(12);
            if (r == 0) {
                head = ALL_FF.clone();
            } else if (r < 8 && !written.isEmpty()) {
                byte[] k = written.get(rnd.nextInt(written.size()));
                head = Arrays.copyOf(k, MAX);
                Arrays.fill(head, Math.min(k.length, MAX), MAX, pick(rnd, FILLERS));
            } else {
                head = stem(rnd, MAX, 1 + rnd.nextInt(3));
            }
            int nudge = rnd.nextInt(4);
            if (nudge == 1) {
                head[MAX - 1]--;
            } else if (nudge == 2) {
                head[MAX - 1]++;
            }
            int extra = rnd.nextInt(5) == 0 ? 1 + rnd.nextInt(3000) : 1 + rnd.nextInt(40);
            byte[] k = Arrays.copyOf(head, MAX + extra);
            for (int i = MAX; i < k.length; i++) {
                k[i] = pick(rnd, ALPHABET);
            }
            return k;
        }

        /** A seek target: mostly a long key, sometimes a stored-length one (to move between them). */
        private byte[] target() {
            return rnd.nextInt(5) == 0 ? key(rnd) : longKey();
        }

        /** A bound: none, empty, a stored-length key, or (often) a long key. */
        private byte[] bound() {
            int r = rnd.nextInt(8);
            return r < 2 ? null : r == 2 ? EMPTY : r < 4 ? key(rnd) : longKey();
        }

        /** Fixed bounds around the stems, with long ones among them, then random ones; with and without prefix mode. */
        private void checkAll(String phase) throws Exception {
            byte[] longFf = Arrays.copyOf(ALL_FF, MAX + 1);
            longFf[MAX] = (byte) 0xff;
            byte[][][] bounds = {
                {null, null},
                {longKey(), null},
                {null, longKey()},
                {longKey(), longKey()},
                {longFf, null},
                {null, longFf},
                {{'a'}, longKey()},
                {longKey(), {(byte) 0x80}},
                {EMPTY, longKey()},
            };
            for (byte[][] b : bounds) {
                check(phase, b[0], b[1], -1, false);
                if (prefixLength > 0) {
                    check(phase, b[0], b[1], -1, true);
                }
            }
            pointReads(phase, -1);
        }

        /**
         * get and multiGet of long keys (with written keys among them in the multiGet), at snapshot {@code sn} or the
         * latest state, compared with RocksDB's.
         */
        private void pointReads(String phase, int sn) throws Exception {
            String what = ctx + " " + phase + " after " + tail() + (sn < 0 ? "" : " at snapshot #" + sn) + ":";
            ReadOptions our = ReadOptions.defaults().snapshot(sn < 0 ? null : ours.get(sn));
            try (org.rocksdb.ReadOptions their = new org.rocksdb.ReadOptions()) {
                if (sn >= 0) {
                    their.setSnapshot(theirs.get(sn));
                }
                List<byte[]> keys = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    byte[] k = longKey();
                    assertThat(db.get(k, our)).as(what + " get " + s(k)).isEqualTo(rocks.get(their, k));
                    keys.add(k);
                    longGets++;
                    if (!written.isEmpty() && rnd.nextBoolean()) {
                        keys.add(written.get(rnd.nextInt(written.size())));
                    }
                }
                keys.add(keys.get(0)); // a duplicate
                List<byte[]> mine = db.multiGet(our, keys);
                List<byte[]> expected = rocks.multiGetAsList(their, keys);
                for (int i = 0; i < keys.size(); i++) {
                    assertThat(mine.get(i))
                            .as(what + " multiGet " + s(keys.get(i)))
                            .isEqualTo(expected.get(i));
                }
            }
        }

        /**
         * Iterators with these bounds (at snapshot {@code sn}, or the latest state when negative), in prefix mode or
         * not: three rounds of an optional positioning elsewhere, then seek or seekForPrev of a target (mostly long),
         * each followed by up to 10 steps of next or prev, compared at each step with RocksDB. In prefix mode the
         * oracle is RocksDB's total-order iterator with the same bounds, confined to the target's prefix: see
         * {@link #walk}.
         */
        private void check(String phase, byte[] lower, byte[] upper, int sn, boolean prefixMode) throws Exception {
            String what = ctx + " " + phase + " after " + tail() + " iterator [" + s(lower) + ", " + s(upper) + ")"
                    + (sn < 0 ? "" : " at snapshot #" + sn) + (prefixMode ? " prefixSameAsStart" : "") + ":";
            boolean longBound = (lower != null && lower.length > MAX) || (upper != null && upper.length > MAX);
            if (longBound) {
                longBoundIterators++;
            }
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
                    boolean forward = rnd.nextBoolean();
                    byte[] t = target();
                    steps.append(forward ? " seek(" : " seekForPrev(")
                            .append(s(t))
                            .append(')');
                    for (RocksIterator r : rocksIts) {
                        if (forward) {
                            r.seek(t);
                        } else {
                            r.seekForPrev(t);
                        }
                        r.status(); // RocksDB takes a target of any length without an error
                    }
                    if (forward) {
                        it.seek(t);
                    } else {
                        it.seekForPrev(t);
                    }
                    byte[] prefix = prefixMode && t.length >= prefixLength ? Arrays.copyOf(t, prefixLength) : null;
                    boolean landed = walk(it, rit, total, prefix, steps);
                    if (t.length > MAX) {
                        seeks++;
                        seeksLanded += landed ? 1 : 0;
                    }
                    if (longBound && landed) {
                        longBoundLanded++;
                    }
                }
            }
        }

        /**
         * Sometimes a positioning before the compared one, not compared (a prefix seek's iterator is compared within
         * the prefix only): the next positioning must undo whatever state it left, a prefix confinement among them.
         */
        private void positionElsewhere(DbIterator it, List<RocksIterator> rocksIts, StringBuilder steps) {
            int how = rnd.nextInt(6);
            byte[] t = how <= 1 ? target() : null;
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
         * From where the positioning left the iterators, up to 10 steps of next or prev, compared at each step (the
         * position first, by its bytes, then the value). The oracle is RocksDB's iterator, or in prefix mode
         * {@code total} (RocksDB's total-order iterator) read as not valid once outside {@code prefix} (the target's
         * prefix; null when the target is shorter than the prefix length, which confines nothing, and then every key
         * counts): what {@code prefix_same_as_start} promises. RocksDB's prefix-mode iterator {@code rit} is stepped
         * alongside while it agrees, and a departure is counted. Returns whether bloomkv landed on a key.
         */
        private boolean walk(DbIterator it, RocksIterator rit, RocksIterator total, byte[] prefix, StringBuilder steps)
                throws Exception {
            RocksIterator oracle = total == null ? rit : total;
            boolean together = total != null;
            int domain = prefix == null ? 0 : 1;
            if (together) {
                prefixModeWalks[domain]++;
            }
            boolean landed = it.valid();
            for (int step = 0; ; step++) {
                byte[] expected = oracle.isValid() ? oracle.key() : null;
                if (expected != null && prefix != null && !startsWith(expected, prefix)) {
                    expected = null; // outside the target's prefix: prefix_same_as_start ends the walk there
                }
                if (together) {
                    byte[] theirPrefixMode = rit.isValid() ? rit.key() : null;
                    if (!Arrays.equals(theirPrefixMode, expected)) {
                        together = false;
                        prefixModeDepartures[domain]++;
                        if (firstDeparture[domain] == null) {
                            firstDeparture[domain] = steps + ": RocksDB's prefix-mode iterator at " + s(theirPrefixMode)
                                    + ", its total-order one confined to the prefix at " + s(expected);
                        }
                    }
                }
                byte[] actual = it.valid() ? it.key() : null;
                if (!Arrays.equals(actual, expected)) {
                    throw new AssertionError(
                            steps + " position: bloomkv at " + s(actual) + ", RocksDB at " + s(expected));
                }
                if (expected == null) {
                    oracle.status();
                    return landed;
                }
                assertThat(it.value()).as(steps + " value of " + s(actual)).isEqualTo(oracle.value());
                if (step >= 10) {
                    return landed;
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

        private static boolean startsWith(byte[] key, byte[] prefix) {
            return key.length >= prefix.length && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
        }

        private String tail() {
            return history.subList(Math.max(0, history.size() - 6), history.size())
                    .toString();
        }
    }
}
