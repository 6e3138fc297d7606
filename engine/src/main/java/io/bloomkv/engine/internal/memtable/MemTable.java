package io.bloomkv.engine.internal.memtable;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
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
 * memtable does not hold usually costs one filter probe instead of a skip-list search.
 */
public final class MemTable {
    /**
     * Bytes an entry takes besides its key, trailer and value, on average: its skip-list links (1.33 words of 8 bytes),
     * its lengths' word and the padding of key and value to whole words ({@link MemSkipList}). Only sizes the filter: the memtable counts the
     * bytes it really holds ({@link #approximateMemoryUsage}).
     */
    static final int ENTRY_OVERHEAD = 24;
    private static final byte[] EMPTY = new byte[0];

    /** The entries, keys and values copied in (flat, in large chunks). */
    private final MemSkipList table = new MemSkipList();
    private final AtomicLong approximateBytes = new AtomicLong();
    private final AtomicLong entries = new AtomicLong();
    private final long logNumber;
    /** Null when the memtable has no filter. */
    private final MemTableFilter filter;

    /** A memtable without a filter. @param logNumber number of the WAL file holding this memtable's writes */
    public MemTable(long logNumber) {
        this(logNumber, 0, 0);
    }

    /**
     * @param logNumber        number of the WAL file holding this memtable's writes
     * @param writeBufferSize  bytes the memtable takes before it is frozen (sizes the filter)
     * @param filterBitsPerKey bits per key of the whole-key filter, sized for the entries a full memtable
     *                         of small values holds ({@link #expectedEntries}); 0 = no filter
     */
    public MemTable(long logNumber, long writeBufferSize, double filterBitsPerKey) {
        this.logNumber = logNumber;
        this.filter = filterBitsPerKey > 0 ? new MemTableFilter(expectedEntries(writeBufferSize), filterBitsPerKey) : null;
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
        if (filter != null) {
            filter.add(Hashing.hash64(userKey)); // before the entry becomes visible (see MemTableFilter)
        }
        long bytes = table.insert(userKey, InternalKey.packTrailer(sequence, type), buf, valueOffset, valueLength);
        entries.incrementAndGet();
        approximateBytes.addAndGet(bytes);
    }

    /**
     * The newest entry of {@code userKey} with sequence <= {@code snapshotSequence}: a PUT with its
     * value, a DELETE (tombstone), or null when this memtable holds nothing for the key.
     */
    public TableReader.Entry get(byte[] userKey, long snapshotSequence) {
        return get(userKey, filter == null ? 0 : Hashing.hash64(userKey), snapshotSequence);
    }

    /**
     * As {@link #get(byte[], long)}, with the key's {@link Hashing#hash64} already computed (the one
     * hash a get computes for every filter it asks).
     */
    public TableReader.Entry get(byte[] userKey, long userKeyHash, long snapshotSequence) {
        if (entries.get() == 0) {
            return null; // nothing added before the reader's sequence was published (see MemTableFilter)
        }
        if (filter != null && !filter.mightContain(userKeyHash)) {
            return null;
        }
        MemKey lookup = new MemKey(userKey, InternalKey.packTrailer(snapshotSequence, ValueType.FOR_SEEK));
        long e = table.findGreaterOrEqual(lookup, null);
        if (e == 0 || !table.userKeyEquals(e, lookup)) {
            return null;
        }
        long trailer = table.trailer(e);
        ValueType type = ValueType.fromCode((int) (trailer & 0xFF));
        return new TableReader.Entry(type, trailer >>> 8, type == ValueType.PUT ? table.value(e) : null);
    }

    /** An iterator over a live view: entries added later may or may not be seen (callers filter by sequence). */
    public InternalIterator iterator() {
        return new MemTableIterator(table);
    }

    /**
     * Heap bytes the entries take: links, lengths, keys, values, padding, and the unused ends of the chunks they filled
     * (not of the chunk being filled, so a small write buffer is not charged a whole first chunk).
     */
    public long approximateMemoryUsage() {
        return approximateBytes.get();
    }

    public long entryCount() {
        return entries.get();
    }

    public boolean isEmpty() {
        return table.isEmpty();
    }
}
