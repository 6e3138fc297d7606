package io.bloomkv.engine.internal.version;

import io.bloomkv.engine.internal.KeyLookup;
import io.bloomkv.engine.internal.compaction.CompactionPicker;
import io.bloomkv.engine.internal.compaction.LevelView;
import io.bloomkv.engine.internal.iterator.LevelIterator;
import io.bloomkv.engine.internal.iterator.RangeFilteredIterator;
import io.bloomkv.engine.internal.iterator.RangeProbeMemo;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.rangedel.RangeTombstoneList;
import io.bloomkv.engine.internal.table.FilterMemory;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.PointRead;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.util.KeyPrefix;
import io.bloomkv.engine.internal.util.RefCount;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;

/**
 * One immutable set of live tables, by level. Level 0 holds flushed memtables, which may overlap,
 * newest first; every deeper level holds tables with disjoint user-key ranges, sorted by key.
 *
 * <p>Reference-counted: a reader retains the Version it starts with and releases it when done, so
 * its tables stay open even if a compaction replaces them meanwhile. The Version retains each of
 * its {@link TableReader}s; when its count reaches zero it releases them and tells its
 * {@link VersionSet}, which deletes the files no live Version names.
 */
public final class Version implements LevelView {
    private final VersionSet owner;
    private final FileMetaData[][] files;
    private final TableReader[][] readers;
    /** {@link KeyPrefix}es of each table's smallest and largest user key, per level: a get compares these first. */
    private final long[][] smallestPrefix;

    private final long[][] largestPrefix;
    private final RefCount refs = new RefCount("version");
    private final LevelTargets targets;
    private final int compactionLevel;
    private final double compactionScore;
    /**
     * The MANIFEST's log number when this Version was installed: the oldest WAL whose memtable is not in its tables. A
     * memtable of an older WAL was flushed into them (flushes go oldest memtable first).
     */
    private final long logNumber;
    /** True when some table holds a range tombstone (point reads then take {@link #collect}). */
    private final boolean hasRangeTombstones;
    /** Some table of this version has a usable range filter. */
    private final boolean hasRangeFilters;
    /** Tables in all levels ({@link #get} asks none when 0). */
    private final int tableCount;
    /**
     * The levels below 0 that hold a table, in order: {@link #get} visits only these. A loop over every level would
     * take a backward branch per empty level, and a fresh process's first thousands of gets would then count enough
     * backward branches to have the JIT compile {@link #get} on stack (twice, one per loop) before its normal compile.
     */
    private final int[] deepLevels;
    /**
     * References to the pinned filter copies of this Version's tables, held until its release: gets probe a pinned copy
     * without a reference of their own ({@code TableReader#retainPinnedFilter}). Guarded by itself; null once released.
     */
    private List<FilterMemory.Hold> pinHolds = new ArrayList<>();

    Version(
            VersionSet owner,
            List<List<FileMetaData>> levels,
            TableCache tables,
            LevelTargets targets,
            int compactionLevel,
            double compactionScore,
            long logNumber) {
        this.owner = owner;
        this.logNumber = logNumber;
        this.files = new FileMetaData[levels.size()][];
        this.readers = new TableReader[levels.size()][];
        this.smallestPrefix = new long[levels.size()][];
        this.largestPrefix = new long[levels.size()][];
        int tableTotal = 0;
        for (int level = 0; level < levels.size(); level++) {
            files[level] = levels.get(level).toArray(new FileMetaData[0]);
            tableTotal += files[level].length;
            readers[level] = new TableReader[files[level].length];
            smallestPrefix[level] = new long[files[level].length];
            largestPrefix[level] = new long[files[level].length];
            for (int i = 0; i < files[level].length; i++) {
                smallestPrefix[level][i] = KeyPrefix.of(files[level][i].smallestUserKey());
                largestPrefix[level][i] = KeyPrefix.of(files[level][i].largestUserKey());
            }
            for (int i = 0; i < files[level].length; i++) {
                readers[level][i] = tables.get(files[level][i].number());
            }
        }
        this.tableCount = tableTotal;
        int deep = 0;
        for (int level = 1; level < files.length; level++) {
            deep += files[level].length > 0 ? 1 : 0;
        }
        this.deepLevels = new int[deep];
        for (int level = 1, d = 0; level < files.length; level++) {
            if (files[level].length > 0) {
                deepLevels[d++] = level;
            }
        }
        for (TableReader[] rs : readers) {
            for (TableReader r : rs) {
                r.retain();
                FilterMemory.Hold h = r.retainPinnedFilter();
                if (h != null) {
                    pinHolds.add(h);
                }
            }
        }
        boolean tombstones = false;
        boolean rangeFilters = false;
        for (TableReader[] rs : readers) {
            for (TableReader r : rs) {
                tombstones |= !r.rangeTombstones().isEmpty();
                rangeFilters |= r.hasRangeFilter();
            }
        }
        this.hasRangeTombstones = tombstones;
        this.hasRangeFilters = rangeFilters;
        this.targets = targets;
        this.compactionLevel = compactionLevel;
        this.compactionScore = compactionScore;
    }

    /** Adds a reference. @throws IllegalStateException if the Version is already dead */
    public void retain() {
        if (!tryRetain()) {
            throw new IllegalStateException("version already released");
        }
    }

    /** Adds a reference unless the count already reached zero. */
    public boolean tryRetain() {
        return refs.tryRetain();
    }

    /**
     * Takes a reference to {@code r}'s pinned filter copy for this Version's life, when this Version names {@code r}
     * and is not released yet: the residency pass pinned it while this Version lived, and gets holding this Version may
     * read it. Called under the VersionSet's lock.
     */
    void holdPinnedFilter(TableReader r) {
        boolean names = false;
        for (TableReader[] rs : readers) {
            for (TableReader x : rs) {
                names |= x == r;
            }
        }
        if (!names) {
            return;
        }
        synchronized (this) {
            if (pinHolds == null) {
                return; // released: no get reads through it any more
            }
            FilterMemory.Hold h = r.retainPinnedFilter();
            if (h != null) {
                pinHolds.add(h);
            }
        }
    }

    /** Drops a reference; the last one releases the pinned filter copies it holds, then the tables. */
    public void release() {
        if (refs.release()) {
            List<FilterMemory.Hold> holds;
            synchronized (this) {
                holds = pinHolds;
                pinHolds = null;
            }
            for (FilterMemory.Hold h : holds) {
                h.release();
            }
            for (TableReader[] rs : readers) {
                for (TableReader r : rs) {
                    r.release();
                }
            }
            owner.versionDropped(this);
        }
    }

    /** True when some table of this Version holds a range tombstone. */
    public boolean hasRangeTombstones() {
        return hasRangeTombstones;
    }

    /**
     * True when some table of this version has a usable range filter: without one, a bounded seek's up-front check
     * ({@link #tablesRuleOut}) could only rule tables out on their key ranges, which the table iterators' own seeks
     * settle about as cheaply, so it is not made.
     */
    public boolean hasRangeFilters() {
        return hasRangeFilters;
    }

    /** Every range tombstone of every table (fragments), for an iterator's view; empty for most Versions. */
    public List<RangeTombstone> rangeTombstones() {
        if (!hasRangeTombstones) {
            return List.of();
        }
        List<RangeTombstone> out = new ArrayList<>();
        for (TableReader[] rs : readers) {
            for (TableReader r : rs) {
                out.addAll(r.rangeTombstones().fragments());
            }
        }
        return out;
    }

    /**
     * The oldest WAL whose memtable this Version's tables do not hold: a memtable of a smaller log number is in them,
     * and a reader of this Version must not read it as well (it would meet each of its entries twice).
     */
    public long logNumber() {
        return logNumber;
    }

    @Override
    public int numLevels() {
        return files.length;
    }

    /** The tables of {@code level}: level 0 newest first, deeper levels by smallest key. */
    @Override
    public List<FileMetaData> files(int level) {
        return Collections.unmodifiableList(Arrays.asList(files[level]));
    }

    public int numFiles(int level) {
        return files[level].length;
    }

    public int totalFiles() {
        int n = 0;
        for (FileMetaData[] f : files) {
            n += f.length;
        }
        return n;
    }

    public long levelBytes(int level) {
        long sum = 0;
        for (FileMetaData f : files[level]) {
            sum += f.fileSize();
        }
        return sum;
    }

    public long levelEntries(int level) {
        long sum = 0;
        for (FileMetaData f : files[level]) {
            sum += f.entries();
        }
        return sum;
    }

    /** Point tombstones among {@link #levelEntries}, from the tables' properties. */
    public long levelDeletions(int level) {
        long sum = 0;
        for (TableReader r : readers[level]) {
            sum += r.properties().deletions();
        }
        return sum;
    }

    /** Off-heap bytes of the filters of {@code level}'s tables. */
    public long levelFilterMemory(int level) {
        long sum = 0;
        for (TableReader r : readers[level]) {
            sum += r.filterMemoryBytes();
        }
        return sum;
    }

    /** Tables of this Version that gets read without a point filter now ({@link TableReader#readWithoutFilter()}). */
    public int tablesWithoutFilter() {
        int n = 0;
        for (TableReader[] level : readers) {
            for (TableReader r : level) {
                if (r.readWithoutFilter()) {
                    n++;
                }
            }
        }
        return n;
    }

    public TableReader reader(int level, int index) {
        return readers[level][index];
    }

    /** The level level 0 compacts into (1 with static level sizes; see {@link LevelTargets}). */
    public int baseLevel() {
        return targets.baseLevel();
    }

    /** The size targets of the levels this Version's compaction score was computed with. */
    public LevelTargets levelTargets() {
        return targets;
    }

    /** Level whose compaction is most urgent, and its score (>= 1 means it needs one). */
    public int compactionLevel() {
        return compactionLevel;
    }

    public double compactionScore() {
        return compactionScore;
    }

    /**
     * The newest entry of {@code userKey} visible at {@code snapshotSequence}, or null (LevelDB's {@code Version::Get}).
     * Asks level-0 tables newest first, then at most one table per deeper level, each only if its key range includes
     * the key, with one probe per table ({@link TableReader#get(PointRead)}: filter, index, data block) until one
     * finds an entry (a value, a tombstone, or a merge operand the caller reads on past).
     */
    public TableReader.Entry get(byte[] userKey, long userKeyHash, long snapshotSequence) {
        // Three passes. The first finds the tables whose key range holds the key (level-0 tables newest first, then
        // one per deeper level; table bounds compared by their KeyPrefix first). The second loads one word of each
        // one's filter line (TableReader.touchFilter), in a loop of a few instructions per table: the loads are
        // independent, so their cache misses overlap, where the probes alone would take them one after another (a
        // get at 10M keys asks 4-5 filters, each line a DRAM access once the filters outgrow the caches). Touching
        // each table as the first pass finds it overlapped them less: the binary searches between two touches
        // (mispredicted branches, ~100 instructions a level) fill the reorder buffer behind the first miss before the
        // next load issues, so the touches sit in a loop of their own (docs/architecture.md; bench/RESULTS.md, "The
        // touch loop"). The third pass probes each table once, its filter from the cache now, in the same order.
        // Probes are counted once per get (PointRead.recordProbes), not once per table: each count is an atomic
        // update, which also fences the next probe's load.
        if (tableCount == 0) {
            return null; // nothing to ask (a store whose data is all in its memtables): no candidate array, no read
        }
        long keyPrefix = KeyPrefix.of(userKey);
        FileMetaData[] l0 = files[0];
        int[] deep = deepLevels;
        TableReader[] candidates = new TableReader[l0.length + deep.length];
        int n = 0;
        // The range tests first compare prefixes without branches (KeyPrefix.inRange): "store the table, then advance
        // by 0 or 1". A key outside a table's range is rare in a fresh process's first thousands of gets, and as a
        // branch C2 would compile its untaken side as an uncommon trap that deoptimizes and recompiles this method (the
        // read path's largest compile unit) when such a key comes. Only a key whose prefix equals a bound's prefix
        // takes a branch, to compare whole keys: rare with keys that differ early, the common case with keys that
        // share their first 8 bytes (where the branch is then seen both ways).
        long[] l0Smallest = smallestPrefix[0];
        long[] l0Largest = largestPrefix[0];
        TableReader[] l0Readers = readers[0];
        for (int i = 0; i < l0.length; i++) {
            long lo = l0Smallest[i];
            long hi = l0Largest[i];
            int in = KeyPrefix.inRange(keyPrefix, lo, hi);
            if ((in & (KeyPrefix.same(keyPrefix, lo) | KeyPrefix.same(keyPrefix, hi))) != 0) {
                in = Arrays.compareUnsigned(userKey, l0[i].smallestUserKey()) >= 0
                                && Arrays.compareUnsigned(userKey, l0[i].largestUserKey()) <= 0
                        ? 1
                        : 0;
            }
            candidates[n] = l0Readers[i];
            n += in;
        }
        for (int d = 0; d < deep.length; d++) {
            int level = deep[d];
            FileMetaData[] fs = files[level];
            int count = fs.length; // > 0
            int i = findFile(level, userKey, keyPrefix); // the first table whose largest key is >= the key
            int j = Math.min(i, count - 1);
            long lo = smallestPrefix[level][j];
            int in = ((i - count) >>> 31) & KeyPrefix.atLeast(keyPrefix, lo);
            if ((in & KeyPrefix.same(keyPrefix, lo)) != 0) {
                in = Arrays.compareUnsigned(userKey, fs[j].smallestUserKey()) >= 0 ? 1 : 0;
            }
            candidates[n] = readers[level][j];
            n += in;
        }
        long touched = 0;
        for (int c = 0; c < n; c++) {
            touched += candidates[c].touchFilter(userKeyHash);
        }
        if (touched == TOUCH_SENTINEL) {
            touchSink++;
        }
        PointRead read = PointRead.newest(userKey, userKeyHash, snapshotSequence);
        try {
            for (int c = 0; c < n; c++) {
                if (candidates[c].get(read)) {
                    return read.entry();
                }
            }
            return null;
        } finally {
            read.recordProbes();
        }
    }

    /**
     * {@link #get} for a lookup that may need more than the newest entry (merge operands, range tombstones; RocksDB's
     * {@code Version::Get} with a {@code GetContext}): asks the same tables in the same order, one probe each
     * ({@link TableReader#get(PointRead)}), feeding {@code lookup} every visible entry of its key until it is done.
     * Before a table's probe its range tombstones are weighed (in memory): a covering tombstone newer than all of the
     * table ends the lookup without its filter or a block. Returns {@link KeyLookup#isDone()}.
     */
    public boolean collect(long userKeyHash, KeyLookup lookup) {
        return collect(userKeyHash, lookup, false);
    }

    /**
     * {@link #collect} without reading a file ({@code Db.keyMayExist}): the same tables in the same order, their range
     * tombstones weighed the same way, each table asked through {@link TableReader#getCached} (its filter as a get
     * asks it, then blocks from the block cache only). A table whose filter lets the key through and whose blocks the
     * cache lacks ends the lookup as {@link KeyLookup#isIncomplete()}. Counts nothing. Returns
     * {@link KeyLookup#isDone()}.
     */
    public boolean collectCached(long userKeyHash, KeyLookup lookup) {
        return collect(userKeyHash, lookup, true);
    }

    /** {@link #collect}, or {@link #collectCached} when {@code cacheOnly}. */
    private boolean collect(long userKeyHash, KeyLookup lookup, boolean cacheOnly) {
        byte[] userKey = lookup.userKey();
        long keyPrefix = KeyPrefix.of(userKey);
        PointRead read = PointRead.collecting(lookup, userKeyHash);
        try {
            for (int level = 0; level < files.length && !lookup.isDone(); level++) {
                FileMetaData[] fs = files[level];
                int from;
                int to;
                if (level == 0) {
                    from = 0;
                    to = fs.length;
                } else {
                    from = findFile(level, userKey, keyPrefix);
                    to = Math.min(fs.length, from + 1);
                }
                for (int i = from; i < to && !lookup.isDone(); i++) {
                    if (!fs[i].mayContain(userKey)) {
                        continue;
                    }
                    TableReader r = readers[level][i];
                    // Range tombstones first (in memory): a covering tombstone newer than all of this table (and so
                    // of every deeper one) answers without the filter or a block.
                    RangeTombstoneList ts = r.rangeTombstones();
                    if (!ts.isEmpty()) {
                        lookup.coveredBy(ts.maxCovering(userKey, lookup.snapshot()));
                    }
                    if (lookup.coversAllOf(fs[i].largestSequence())) {
                        if (!cacheOnly) {
                            r.recordRangeTombstoneSkip();
                        }
                        break;
                    }
                    if (cacheOnly) {
                        r.getCached(read);
                    } else {
                        r.get(read);
                    }
                }
            }
            return lookup.isDone();
        } finally {
            read.recordProbes();
        }
    }

    /** An improbable sum of touched filter words: comparing with it keeps the JIT from dropping the loads. */
    private static final long TOUCH_SENTINEL = 0x5DEECE66DL * 0x9E3779B97F4A7C15L;
    /** Written only when the touched words sum to {@link #TOUCH_SENTINEL} (practically never). */
    @SuppressWarnings("unused")
    private static long touchSink;

    /**
     * {@link #get} for a batch: for each key k not yet {@code resolved}, {@code out[k]} becomes its newest entry
     * visible at {@code snapshotSequence} (or stays null) and {@code resolved[k]} true when one is found. Tables are
     * asked in {@link #get}'s order, one batch probe each ({@link TableReader#getAll}: the table's filter tests all its
     * candidate keys at once, so the filter's cache-line loads overlap, then the keys it let through are searched in
     * key order, so keys sharing a data block read it back to back, the second from the block cache).
     * {@code order} lists the key indices sorted by key.
     */
    public void multiGet(
            byte[][] userKeys,
            long[] hashes,
            int[] order,
            long snapshotSequence,
            TableReader.Entry[] out,
            boolean[] resolved) {
        int n = order.length;
        int[] batchKeys = new int[n];
        long[] batchHashes = new long[n];
        boolean[] passed = new boolean[n];
        for (int i = 0; i < files[0].length; i++) {
            // The keys are sorted: those in the table's range are one run, found by a binary search for its first.
            FileMetaData f = files[0][i];
            int count = 0;
            for (int j = firstAtLeast(userKeys, order, f.smallestUserKey()); j < n; j++) {
                int k = order[j];
                if (Arrays.compareUnsigned(userKeys[k], f.largestUserKey()) > 0) {
                    break;
                }
                if (!resolved[k]) {
                    batchKeys[count] = k;
                    batchHashes[count++] = hashes[k];
                }
            }
            readers[0][i].getAll(userKeys, batchKeys, batchHashes, count, snapshotSequence, passed, out, resolved);
        }
        for (int level = 1; level < files.length; level++) {
            FileMetaData[] fs = files[level];
            if (fs.length == 0) {
                continue;
            }
            int table = -1;
            int count = 0;
            int t = -1; // the sorted keys walk the level's sorted tables forward: a binary search for the first only
            for (int k : order) {
                if (resolved[k]) {
                    continue;
                }
                if (t < 0) {
                    t = findFile(fs, userKeys[k]);
                } else {
                    while (t < fs.length && Arrays.compareUnsigned(fs[t].largestUserKey(), userKeys[k]) < 0) {
                        t++;
                    }
                }
                if (t >= fs.length) {
                    break;
                }
                if (Arrays.compareUnsigned(userKeys[k], fs[t].smallestUserKey()) < 0) {
                    continue;
                }
                if (t != table) {
                    if (count > 0) {
                        readers[level][table].getAll(
                                userKeys, batchKeys, batchHashes, count, snapshotSequence, passed, out, resolved);
                    }
                    table = t;
                    count = 0;
                }
                batchKeys[count] = k;
                batchHashes[count++] = hashes[k];
            }
            if (count > 0) {
                readers[level][table].getAll(
                        userKeys, batchKeys, batchHashes, count, snapshotSequence, passed, out, resolved);
            }
        }
    }

    /** The first position j of {@code order} (indices of keys in ascending key order) whose key is >= {@code bound}. */
    private static int firstAtLeast(byte[][] userKeys, int[] order, byte[] bound) {
        int lo = 0;
        int hi = order.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Arrays.compareUnsigned(userKeys[order[mid]], bound) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Index of the first table whose largest user key is >= {@code userKey} (length when none). */
    /** {@link #findFile(FileMetaData[], byte[])} in {@code level}, comparing {@link KeyPrefix}es first. */
    private int findFile(int level, byte[] userKey, long keyPrefix) {
        FileMetaData[] sorted = files[level];
        long[] largest = largestPrefix[level];
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (KeyPrefix.compare(largest[mid], sorted[mid].largestUserKey(), keyPrefix, userKey) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    static int findFile(FileMetaData[] sorted, byte[] userKey) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Arrays.compareUnsigned(sorted[mid].largestUserKey(), userKey) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** One iterator per level-0 table, then one concatenating iterator per non-empty deeper level. */
    public List<InternalIterator> iterators() {
        List<InternalIterator> out = new ArrayList<>(readers[0].length + files.length);
        for (TableReader r : readers[0]) {
            out.add(r.iterator());
        }
        for (int level = 1; level < files.length; level++) {
            if (files[level].length > 0) {
                out.add(new LevelIterator(files[level], readers[level]));
            }
        }
        return out;
    }

    /**
     * As {@link #iterators()} for a read bounded by [lower, upper) (user keys; null = open; at least one set): every table
     * sits behind its range filter ({@code RangeFilteredIterator}), which rules it out of a seek whose range it holds
     * no key of, before its index is read.
     */
    public List<InternalIterator> iterators(byte[] lower, byte[] upper) {
        return iterators(lower, upper, null);
    }

    /** As {@link #iterators(byte[], byte[])}, the tables taking the answers {@code memo} holds (null: none). */
    public List<InternalIterator> iterators(byte[] lower, byte[] upper, RangeProbeMemo memo) {
        List<InternalIterator> out = new ArrayList<>(readers[0].length + files.length);
        for (TableReader r : readers[0]) {
            out.add(new RangeFilteredIterator(r, lower, upper, memo));
        }
        for (int level = 1; level < files.length; level++) {
            if (files[level].length > 0) {
                out.add(new LevelIterator(files[level], readers[level], lower, upper, memo));
            }
        }
        return out;
    }

    /**
     * True when no table of this version can hold a point entry (put, delete, merge operand) with a user key in the
     * range [lo, hi] ([lo, hi) when not {@code hiInclusive}: an iterator's exclusive upper bound; user keys; a null bound
     * is open, not both): a table whose key range misses it is passed on
     * its metadata alone, every other one must have a range filter that rules the range out. Lets a bounded seek that
     * finds nothing return before any table iterator is made. A table that may hold the range ends the walk at once
     * (its filter's answer is kept in {@code memo}, when given, for its iterator), so the tables are asked where a
     * range holding keys most likely finds them first: the deepest level first (it holds most keys), up to level 1,
     * then level 0 oldest first. A table whose filter's recent answers were almost all "may hold" is not asked
     * ({@link TableReader#rangeProbeWorthwhile}) and counts as may hold. Range tombstones play no part: with no point
     * entry in the range there is nothing for them to hide. Probes are counted in the tables' range-filter counters as
     * the iterators' are.
     */
    public boolean tablesRuleOut(byte[] lo, byte[] hi, boolean hiInclusive, RangeProbeMemo memo) {
        for (int level = files.length - 1; level >= 1; level--) {
            FileMetaData[] fs = files[level];
            int i = lo == null ? 0 : firstFileEndingAtOrAfter(fs, lo);
            for (; i < fs.length; i++) {
                if (startsAbove(fs[i], hi, hiInclusive)) {
                    break; // this and every later file of the level start above the range
                }
                if (!ruledOutByFilter(readers[level][i], lo, hi, hiInclusive, memo)) {
                    return false;
                }
            }
        }
        FileMetaData[] l0 = files[0];
        for (int i = l0.length - 1; i >= 0; i--) {
            if (overlaps(l0[i], lo, hi, hiInclusive) && !ruledOutByFilter(readers[0][i], lo, hi, hiInclusive, memo)) {
                return false;
            }
        }
        return true;
    }

    /** True when every user key of {@code f} lies above the range's upper end (none when hi is open). */
    private static boolean startsAbove(FileMetaData f, byte[] hi, boolean hiInclusive) {
        if (hi == null) {
            return false;
        }
        int cmp = Arrays.compareUnsigned(f.smallestUserKey(), hi);
        return cmp > 0 || (cmp == 0 && !hiInclusive);
    }

    private static boolean overlaps(FileMetaData f, byte[] lo, byte[] hi, boolean hiInclusive) {
        return (lo == null || Arrays.compareUnsigned(f.largestUserKey(), lo) >= 0) && !startsAbove(f, hi, hiInclusive);
    }

    /**
     * True when {@code r}'s range filter says [lo, hi] ([lo, hi) when not {@code hiInclusive}) holds no key. Otherwise the table's "may hold" is kept in
     * {@code memo} for its iterator: its filter's answer, or that the filter was passed by
     * ({@link TableReader#rangeProbeWorthwhile}: its probes of late have almost never ruled a range out), so the
     * iterator neither asks again nor asks where this check chose not to. A table without a filter is not recorded.
     */
    private static boolean ruledOutByFilter(
            TableReader r, byte[] lo, byte[] hi, boolean hiInclusive, RangeProbeMemo memo) {
        if (!r.hasRangeFilter()) {
            return false;
        }
        boolean probe = r.rangeProbeWorthwhile();
        if (probe
                && !r.rangeMayContainRetained(
                        lo, lo == null ? 0 : lo.length, hi, hi == null ? 0 : hi.length, hiInclusive)) {
            return true;
        }
        if (memo != null) {
            memo.maybe(r, lo, hi, hiInclusive, probe);
        }
        return false;
    }

    /**
     * The first table of {@code level} (1 or deeper: sorted and disjoint, so both the smallest and the largest user
     * keys ascend) whose largest user key is &gt;= {@code key}: the first that may hold a key of a range starting at
     * {@code key} (0 when {@code key} is null, an open start). A binary search.
     */
    public int firstFileEndingAtOrAfter(int level, byte[] key) {
        return key == null ? 0 : firstFileEndingAtOrAfter(files[level], key);
    }

    /**
     * The first table of {@code level} (1 or deeper) whose smallest user key is &gt;= {@code key}: the tables before it
     * are the ones that may hold a key below {@code key}, the exclusive end of a range (the number of tables when
     * {@code key} is null, an open end). A binary search.
     */
    public int firstFileStartingAtOrAfter(int level, byte[] key) {
        return key == null ? files[level].length : firstFileAtOrAfter(files[level], key, true);
    }

    /** The first file of a sorted, disjoint level whose largest user key is &gt;= key (fs.length if none). */
    private static int firstFileEndingAtOrAfter(FileMetaData[] fs, byte[] key) {
        return firstFileAtOrAfter(fs, key, false);
    }

    /**
     * The first file of a sorted, disjoint level whose smallest user key ({@code bySmallest}), else largest, is &gt;=
     * key (fs.length if none): both ascend through such a level.
     */
    private static int firstFileAtOrAfter(FileMetaData[] fs, byte[] key, boolean bySmallest) {
        int lo = 0;
        int hi = fs.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            byte[] bound = bySmallest ? fs[mid].smallestUserKey() : fs[mid].largestUserKey();
            if (Arrays.compareUnsigned(bound, key) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * As {@link #iterators()}, restricted to the tables that may hold a user key starting with {@code prefix}
     * ({@code prefixHash} = its {@code Hashing.hash64}): tables whose key range cannot hold one are left out without
     * touching them, and so are tables whose prefix filter says the prefix is absent
     * ({@link TableReader#mayContainPrefixRetained}). The result is only meaningful for keys with that prefix.
     */
    public List<InternalIterator> prefixIterators(byte[] prefix, long prefixHash) {
        int p = prefix.length;
        List<InternalIterator> out = new ArrayList<>();
        for (int i = 0; i < files[0].length; i++) {
            if (mayHoldPrefix(files[0][i], prefix) && readers[0][i].mayContainPrefixRetained(p, prefixHash)) {
                out.add(readers[0][i].iterator());
            }
        }
        for (int level = 1; level < files.length; level++) {
            FileMetaData[] fs = files[level];
            if (fs.length == 0) {
                continue;
            }
            List<FileMetaData> keptFiles = null; // made for the first table kept: most levels keep none
            List<TableReader> keptReaders = null;
            for (int i = findFile(fs, prefix); i < fs.length && mayHoldPrefix(fs[i], prefix); i++) {
                if (readers[level][i].mayContainPrefixRetained(p, prefixHash)) {
                    if (keptFiles == null) {
                        keptFiles = new ArrayList<>(1);
                        keptReaders = new ArrayList<>(1);
                    }
                    keptFiles.add(fs[i]);
                    keptReaders.add(readers[level][i]);
                }
            }
            if (keptFiles != null) {
                out.add(new LevelIterator(
                        keptFiles.toArray(new FileMetaData[0]), keptReaders.toArray(new TableReader[0])));
            }
        }
        return out;
    }

    /** The table's user-key range [smallest, largest] can hold a key starting with {@code prefix}. */
    private static boolean mayHoldPrefix(FileMetaData f, byte[] prefix) {
        byte[] smallest = f.smallestUserKey();
        int n = Math.min(smallest.length, prefix.length);
        // largest >= prefix, and smallest's first bytes <= prefix
        return Arrays.compareUnsigned(f.largestUserKey(), prefix) >= 0
                && Arrays.compareUnsigned(smallest, 0, n, prefix, 0, prefix.length) <= 0;
    }

    /**
     * Tables of {@code level} whose user-key range overlaps [from, to] (null = open bound). For
     * level 0 the range grows to cover every overlapping table's range, transitively, so that no
     * newer entry of a key is left behind.
     */
    public List<FileMetaData> overlapping(int level, byte[] fromUserKey, byte[] toUserKey) {
        return CompactionPicker.overlapping(this, level, fromUserKey, toUserKey);
    }

    /** True when some table of a level below {@code level} may hold {@code userKey}. */
    public boolean keyMayExistBelow(int level, byte[] userKey) {
        for (int l = level + 1; l < files.length; l++) {
            int i = findFile(files[l], userKey);
            if (i < files[l].length && Arrays.compareUnsigned(userKey, files[l][i].smallestUserKey()) >= 0) {
                return true;
            }
        }
        return false;
    }

    /** True when a table of a level below {@code level} overlaps [from, endExclusive] (inclusive: conservative). */
    public boolean rangeMayExistBelow(int level, byte[] from, byte[] endExclusive) {
        for (int l = level + 1; l < files.length; l++) {
            for (FileMetaData f : files[l]) {
                if (f.overlaps(from, endExclusive)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Every file number this Version names. */
    public void addLiveFiles(Set<Long> out) {
        for (FileMetaData[] fs : files) {
            for (FileMetaData f : fs) {
                out.add(f.number());
            }
        }
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Version{");
        for (int level = 0; level < files.length; level++) {
            if (files[level].length > 0) {
                sb.append(" L").append(level).append('=').append(Arrays.toString(files[level]));
            }
        }
        return sb.append(" }").toString();
    }
}
