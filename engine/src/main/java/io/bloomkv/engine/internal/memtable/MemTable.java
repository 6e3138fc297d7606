package io.bloomkv.engine.internal.memtable;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.KeyLookup;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.rangedel.RangeTombstoneList;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory sorted table of the newest writes: internal keys ({@link InternalKey}) to values, in
 * {@link InternalKey#COMPARATOR} order, so a delete is a tombstone entry and a reader at sequence s sees exactly the
 * entries with sequence <= s.
 *
 * <p>One writer at a time ({@link #add} is called by the database's write leader only); any number
 * of concurrent readers ({@link #get}, {@link #iterator}), lock-free, backed by a {@link MemSkipList} (LevelDB's
 * single-writer skip list, laid out flat in large arrays as RocksDB's InlineSkipList). Arrays handed out are copies.
 *
 * <p>With a {@link MemTableFilter} (whole-key Bloom filter over the user keys), a get for a key the
 * memtable does not hold usually costs one filter probe instead of a skip-list search or, once the point index
 * outgrows the filter, instead of a probe of the index ({@link #filterAsked}).
 */
public final class MemTable {
    /**
     * Bytes an entry takes besides its key, trailer and value, on average: its skip-list links (1.33 words of 8 bytes),
     * its lengths' word and the padding of key and value to whole words ({@link MemSkipList}). Only sizes the filter: the memtable counts the
     * bytes it really holds ({@link #approximateMemoryUsage}).
     */
    static final int ENTRY_OVERHEAD = 24;

    private static final byte[] EMPTY = new byte[0];

    /** The entries, keys and values copied in (flat, in large chunks), with their point index. */
    private final MemSkipList table;

    private final AtomicLong approximateBytes = new AtomicLong();
    private final AtomicLong entries = new AtomicLong();
    /** Point tombstones among {@link #entries} (RocksDB's {@code num_deletes}, for the key-count estimate). */
    private final AtomicLong deletes = new AtomicLong();

    private final long logNumber;
    /** Range tombstones, in the order added (one writer; readers take the published array). */
    private volatile RangeTombstone[] rangeTombstones = new RangeTombstone[0];
    /** {@link #rangeTombstones} fragmented, rebuilt by the first reader after each addition. */
    private volatile RangeTombstoneList fragmented = RangeTombstoneList.EMPTY;
    /** Set once a merge operand is added (a read-only open checks it holds none without a merge operator). */
    private volatile boolean hasMergeOperands;
    /** Null when the memtable has no filter. */
    private final MemTableFilter filter;
    /**
     * A get asks {@link #filter} once the point index takes more heap than this (see {@link #filterAsked}):
     * the filter's size with a point index, -1 without one (the filter is asked from the first entry).
     */
    private final long askFilterAbove;
    /** What the constructor was given, for {@link #withoutHidden} (a rewritten memtable is made as this one was). */
    private final long writeBufferSize;

    private final double filterBitsPerKey;
    /**
     * Bytes of entries hidden by this memtable's range tombstones, as {@link MemSkipList#bytesBelow} counts them when
     * each tombstone is added (overlapping tombstones count an entry twice: an estimate). Writer only.
     */
    private long hiddenBytes;
    /**
     * Set by {@link #addRangeTombstone} when the entries its tombstones hide pass half of the memtable's bytes (and
     * the memtable is past {@link #rewriteMinBytes}): the write path then replaces it with {@link #withoutHidden}.
     * Written by the write leader outside the database mutex, read by the next leader after it took the mutex.
     */
    private boolean rewriteWanted;

    /**
     * A memtable with a point index and without a filter. @param logNumber number of the WAL file holding this
     * memtable's writes
     */
    public MemTable(long logNumber) {
        this(logNumber, 0, 0, true);
    }

    /**
     * @param logNumber        number of the WAL file holding this memtable's writes
     * @param writeBufferSize  bytes the memtable takes before it is frozen (sizes the filter)
     * @param filterBitsPerKey bits per key of the whole-key filter, sized for the entries a full memtable
     *                         of small values holds ({@link #expectedEntries}); 0 = no filter
     * @param pointIndex       whether gets and updates find a key through a hash index ({@link MemIndex}) rather
     *                         than a skip-list search
     */
    public MemTable(long logNumber, long writeBufferSize, double filterBitsPerKey, boolean pointIndex) {
        this.logNumber = logNumber;
        this.writeBufferSize = writeBufferSize;
        this.filterBitsPerKey = filterBitsPerKey;
        this.filter =
                filterBitsPerKey > 0 ? new MemTableFilter(expectedEntries(writeBufferSize), filterBitsPerKey) : null;
        this.askFilterAbove = filter != null && pointIndex ? filter.memoryBytes() : -1;
        this.table = new MemSkipList(pointIndex);
    }

    /**
     * Entries a memtable of {@code writeBufferSize} bytes holds when keys are 16 bytes and values 16
     * bytes (larger entries: fewer, so more bits per key and a lower false-positive rate).
     */
    static long expectedEntries(long writeBufferSize) {
        return Math.max(64, writeBufferSize / (16 + InternalKey.TRAILER_SIZE + 16 + ENTRY_OVERHEAD));
    }

    /** Heap bytes of the memtable's filter (0 without one). */
    public long filterMemoryBytes() {
        return filter == null ? 0 : filter.memoryBytes();
    }

    /**
     * Whether a get asks the filter before the memtable's entries now. Without a point index, always: the filter
     * spares a skip-list search. With one, only once the index takes more heap than the filter: a get for a key the
     * memtable does not hold costs one probe of the index's slots (tags spare reading any node), so the filter spares
     * a cache miss only where its array is the smaller one and the more likely in cache; before that, while the
     * memtable is small (every memtable starts empty, and one of 1 KB values never holds enough keys), asking it
     * would add a miss into an array sized for a full memtable. The writer adds every key to the filter from the
     * first, so the filter is whole whenever gets start asking it.
     */
    boolean filterAsked() {
        return filter != null && table.indexBytes() > askFilterAbove;
    }

    /** Heap bytes of the memtable's point index (0 without one); its growth is part of {@link #approximateMemoryUsage}. */
    public long indexMemoryBytes() {
        return table.indexBytes();
    }

    public long logNumber() {
        return logNumber;
    }

    /**
     * Adds one entry; {@code value} is ignored for deletes. Key and value are copied in: the caller may
     * change its arrays afterwards.
     */
    public void add(long sequence, ValueType type, byte[] userKey, byte[] value) {
        byte[] v = type == ValueType.DELETE ? EMPTY : value;
        add(sequence, type, userKey, v, 0, v.length);
    }

    /**
     * As {@link #add(long, ValueType, byte[], byte[])} with the value {@code buf[valueOffset .. +valueLength)}, which
     * is copied into the arena (the write path passes a slice of the write batch, so the value is copied once).
     */
    public void add(long sequence, ValueType type, byte[] userKey, byte[] buf, int valueOffset, int valueLength) {
        long hash = filter == null && !table.indexed() ? 0 : Hashing.hash64(userKey);
        // before the entry becomes visible (see MemTableFilter); a key whose bits were not all set is not held here
        boolean mayHold = filter == null || filter.add(hash);
        if (type == ValueType.MERGE) {
            hasMergeOperands = true;
        }
        long bytes = table.insert(
                userKey, hash, mayHold, InternalKey.packTrailer(sequence, type), buf, valueOffset, valueLength);
        entries.incrementAndGet();
        if (type == ValueType.DELETE) {
            deletes.incrementAndGet();
        }
        approximateBytes.addAndGet(bytes);
    }

    /**
     * Adds a range tombstone: the memtable's and older entries of keys in [begin, end) with sequence below
     * {@code sequence} read as deleted (arrays copied). Called by the write leader only, as {@link #add}. Counts the
     * bytes of this memtable's entries it hides, and asks for a {@link #withoutHidden rewrite} once hidden entries
     * are over half of the memtable.
     */
    public void addRangeTombstone(long sequence, byte[] begin, byte[] end) {
        addTombstone(new RangeTombstone(begin.clone(), end.clone(), sequence));
        if (Arrays.compareUnsigned(begin, end) < 0) {
            hiddenBytes += table.bytesBelow(begin, end, sequence, ENTRY_OVERHEAD + InternalKey.TRAILER_SIZE);
            long used = approximateBytes.get();
            if (hiddenBytes > used / 2 && used >= rewriteMinBytes()) {
                rewriteWanted = true;
            }
        }
    }

    private void addTombstone(RangeTombstone t) {
        RangeTombstone[] old = rangeTombstones;
        RangeTombstone[] now = Arrays.copyOf(old, old.length + 1);
        now[old.length] = t;
        approximateBytes.addAndGet(t.begin().length + t.end().length + ENTRY_OVERHEAD + InternalKey.TRAILER_SIZE);
        entries.incrementAndGet();
        rangeTombstones = now;
    }

    /**
     * Bytes below which a memtable is not rewritten however much of it its tombstones hide: a sixteenth of the write
     * buffer (a rewrite then frees at least a thirty-second of it), at least 1 KiB.
     */
    long rewriteMinBytes() {
        return Math.max(1 << 10, writeBufferSize / 16);
    }

    /**
     * True when this memtable's range tombstones hide over half of its bytes: the write leader should replace it with
     * {@link #withoutHidden} before its next write. Read by the leader under the database mutex.
     */
    public boolean rewriteWanted() {
        return rewriteWanted;
    }

    /** Bytes of entries hidden by the range tombstones as last counted (tests, and the rewrite's decision). */
    public long hiddenBytes() {
        return hiddenBytes;
    }

    /**
     * A memtable of the same WAL and configuration holding exactly what every reader at a sequence of at least
     * {@code smallestSnapshot} reads here: this memtable's entries less those hidden from all of them (under a range
     * tombstone of a sequence above the entry's and at most {@code smallestSnapshot}, or under a newer put or delete
     * of their key at most {@code smallestSnapshot}: the entries a flush at that snapshot drops), and every range
     * tombstone (they still hide older tables' entries). Sequence numbers are kept, so the WAL, which still holds
     * every entry, replays to a memtable that reads the same. Must not run concurrently with {@link #add} (the write
     * leader calls it at the head of the write queue); readers of this memtable are not disturbed, and readers that
     * already hold it keep reading it. Merge operands are copied as they are (never collapsed: no merge operator here).
     */
    public MemTable withoutHidden(long smallestSnapshot) {
        MemTable out = new MemTable(logNumber, writeBufferSize, filterBitsPerKey, table.indexed());
        RangeTombstoneList fragmented = rangeTombstoneList();
        MemSkipList.LentValue lent = new MemSkipList.LentValue();
        long[] kept = new long[8];
        long stillHidden = 0;
        byte[] key = null; // reused while keys keep their length (add copies it into the new arena)
        for (long x = table.first(); x != 0; x = table.next(x)) {
            key = table.userKey(x, key);
            // Versions are visited newest first; a key's versions are added oldest first (insert's order).
            long cover = fragmented.isEmpty() ? -1 : fragmented.maxCovering(key, smallestSnapshot);
            long coverAll = fragmented.isEmpty() ? -1 : fragmented.maxCovering(key, Long.MAX_VALUE);
            long shadow = -1;
            int n = 0;
            for (long v = table.newest(x); v != 0; v = table.older(x, v)) {
                long trailer = table.trailer(v);
                long seq = trailer >>> 8;
                boolean hidden = (shadow >= 0 && shadow <= smallestSnapshot) || cover > seq;
                if ((trailer & 0xFF) != ValueType.MERGE.code()) {
                    shadow = seq; // an operand does not hide the value under it
                }
                if (!hidden) {
                    if (n == kept.length) {
                        kept = Arrays.copyOf(kept, 2 * n);
                    }
                    kept[n++] = v;
                }
            }
            for (int i = n - 1; i >= 0; i--) {
                long trailer = table.trailer(kept[i]);
                byte[] value = table.value(kept[i], lent);
                out.add(trailer >>> 8, ValueType.fromCode((int) (trailer & 0xFF)), key, value, 0, value.length);
                if (coverAll > trailer >>> 8) {
                    // kept for a snapshot older than its tombstone: still counts as hidden
                    stillHidden += value.length + ENTRY_OVERHEAD + InternalKey.TRAILER_SIZE;
                }
            }
        }
        for (RangeTombstone t : rangeTombstones) {
            out.addTombstone(t);
        }
        out.hiddenBytes = stillHidden;
        return out;
    }

    /** True once a range tombstone was added. */
    public boolean hasRangeTombstones() {
        return rangeTombstones.length > 0;
    }

    /** The range tombstones added so far, in the order added. */
    public java.util.List<RangeTombstone> rangeTombstones() {
        return java.util.List.of(rangeTombstones);
    }

    /** The range tombstones added so far, fragmented (cached until the next one is added). */
    public RangeTombstoneList rangeTombstoneList() {
        RangeTombstone[] now = rangeTombstones;
        RangeTombstoneList f = fragmented;
        if (f.tombstoneCount() != countNonEmpty(now)) {
            f = RangeTombstoneList.of(java.util.Arrays.asList(now));
            fragmented = f;
        }
        return f;
    }

    private static int countNonEmpty(RangeTombstone[] ts) {
        int n = 0;
        for (RangeTombstone t : ts) {
            if (java.util.Arrays.compareUnsigned(t.begin(), t.end()) < 0) {
                n++;
            }
        }
        return n;
    }

    /**
     * The newest entry of {@code userKey} with sequence <= {@code snapshotSequence}: a PUT with its
     * value, a DELETE (tombstone), or null when this memtable holds nothing for the key.
     */
    public TableReader.Entry get(byte[] userKey, long snapshotSequence) {
        return get(userKey, filter == null && !table.indexed() ? 0 : Hashing.hash64(userKey), snapshotSequence);
    }

    /**
     * As {@link #get(byte[], long)}, with the key's {@link Hashing#hash64} already computed (the one hash a get
     * computes for every filter it asks, and the one the point index is keyed by: it must be the key's).
     */
    public TableReader.Entry get(byte[] userKey, long userKeyHash, long snapshotSequence) {
        if (entries.get() == 0) {
            return null; // nothing added before the reader's sequence was published (see MemTableFilter)
        }
        if (filterAsked() && !filter.mightContain(userKeyHash)) {
            return null;
        }
        long x = table.findKey(userKey, userKeyHash);
        if (x == 0) {
            return null;
        }
        for (long v = table.newest(x); v != 0; v = table.older(x, v)) {
            long trailer = table.trailer(v);
            if (trailer >>> 8 <= snapshotSequence) {
                ValueType type = ValueType.fromCode((int) (trailer & 0xFF));
                return new TableReader.Entry(type, trailer >>> 8, type == ValueType.DELETE ? null : table.value(v));
            }
        }
        return null; // every version is newer than the reader's snapshot
    }

    /**
     * Feeds {@code lookup} this memtable's entries of its key visible at its snapshot, newest first, until it is done
     * (a get past merge operands). Returns {@link KeyLookup#isDone()}.
     */
    public boolean collect(long userKeyHash, KeyLookup lookup) {
        if (rangeTombstones.length > 0) {
            lookup.coveredBy(rangeTombstoneList().maxCovering(lookup.userKey(), lookup.snapshot()));
        }
        if (entries.get() == 0 || (filterAsked() && !filter.mightContain(userKeyHash))) {
            return lookup.isDone();
        }
        long x = table.findKey(lookup.userKey(), userKeyHash);
        for (long v = x == 0 ? 0 : table.newest(x); v != 0; v = table.older(x, v)) {
            long trailer = table.trailer(v);
            if (trailer >>> 8 > lookup.snapshot()) {
                continue;
            }
            ValueType type = ValueType.fromCode((int) (trailer & 0xFF));
            if (lookup.add(type, trailer >>> 8, type == ValueType.DELETE ? null : table.value(v))) {
                return true;
            }
        }
        return false;
    }

    /** An iterator over a live view: entries added later may or may not be seen (callers filter by sequence). */
    public InternalIterator iterator() {
        return new MemTableIterator(table);
    }

    /**
     * Heap bytes the entries take: links, lengths, keys, values, padding, and the unused ends of the chunks they filled
     * (not of the chunk being filled, so a small write buffer is not charged a whole first chunk), plus the point
     * index's growth past its first small table (so a memtable with an index is frozen at the same heap size as one
     * without: it holds fewer entries).
     */
    public long approximateMemoryUsage() {
        return approximateBytes.get();
    }

    /**
     * An estimate of the heap bytes ({@link #approximateMemoryUsage}) of the entries with user keys in
     * [{@code lo}, {@code hi}) (null: open), RocksDB's {@code MemTable::ApproximateStats}: the key nodes estimated
     * below each bound from the skip list's upper levels ({@link MemSkipList#estimateCountBelow}, a few nodes per
     * level, no walk of the range), their share of all key nodes applied to the memtable's bytes (a key's versions are
     * taken to weigh as much as any other key's). 0 for a memtable without point entries; the whole memtable's bytes
     * for a range holding all its keys.
     */
    public long approximateBytesIn(byte[] lo, byte[] hi) {
        if (table.isEmpty()) {
            return 0;
        }
        long total = table.estimateCountBelow(null);
        long below = lo == null ? 0 : table.estimateCountBelow(lo);
        long inRange = Math.min(total, table.estimateCountBelow(hi)) - below;
        if (total <= 0 || inRange <= 0) {
            return 0;
        }
        long bytes = approximateMemoryUsage();
        return inRange >= total ? bytes : (long) ((double) inRange / total * bytes);
    }

    /** True once a merge operand was added. */
    public boolean hasMergeOperands() {
        return hasMergeOperands;
    }

    public long entryCount() {
        return entries.get();
    }

    /** Point tombstones added (among {@link #entryCount()}). */
    public long deleteCount() {
        return deletes.get();
    }

    /** True when nothing was added (no entry, no range tombstone). */
    public boolean isEmpty() {
        return table.isEmpty() && rangeTombstones.length == 0;
    }

    /** True when no point entry was added (range tombstones aside). */
    public boolean hasNoPointEntries() {
        return table.isEmpty();
    }
}
