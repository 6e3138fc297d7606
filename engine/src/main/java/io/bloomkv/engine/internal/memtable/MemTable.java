package io.bloomkv.engine.internal.memtable;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory sorted table of the newest writes: internal keys ({@link InternalKey}, kept as
 * {@link MemKey}s) to values, in {@link InternalKey#COMPARATOR} order, so a delete is a tombstone entry and a reader at
 * sequence s sees exactly the entries with sequence <= s.
 *
 * <p>One writer at a time ({@link #add} is called by the database's write leader only); any number
 * of concurrent readers ({@link #get}, {@link #iterator}), lock-free, backed by a
 * {@link ConcurrentSkipListMap}. Arrays handed out are copies.
 */
public final class MemTable {
    /** Bytes charged per entry besides key and value: skip-list node, index levels, array headers. */
    static final int ENTRY_OVERHEAD = 80;
    private static final byte[] EMPTY = new byte[0];

    /** Key -> the array holding its value (see {@link MemKey#valueOffset}): an arena chunk, shared by many keys. */
    private final ConcurrentSkipListMap<MemKey, byte[]> table = new ConcurrentSkipListMap<>(MemKey.ORDER);
    private final MemArena arena = new MemArena();
    private final AtomicLong approximateBytes = new AtomicLong();
    private final AtomicLong entries = new AtomicLong();
    private final long logNumber;

    /** @param logNumber number of the WAL file holding this memtable's writes */
    public MemTable(long logNumber) {
        this.logNumber = logNumber;
    }

    public long logNumber() {
        return logNumber;
    }

    /**
     * Adds one entry; {@code value} is ignored for deletes. The memtable keeps the key array (it must
     * not be changed afterwards) and copies the value into its arena ({@link MemArena}).
     */
    public void add(long sequence, ValueType type, byte[] userKey, byte[] value) {
        byte[] v = type == ValueType.DELETE ? EMPTY : value;
        int at = arena.copy(v, 0, v.length);
        MemKey key = new MemKey(userKey, InternalKey.packTrailer(sequence, type), at, v.length);
        table.put(key, arena.lastArray());
        entries.incrementAndGet();
        approximateBytes.addAndGet(userKey.length + InternalKey.TRAILER_SIZE + v.length + ENTRY_OVERHEAD);
    }

    /**
     * The newest entry of {@code userKey} with sequence <= {@code snapshotSequence}: a PUT with its
     * value, a DELETE (tombstone), or null when this memtable holds nothing for the key.
     */
    public TableReader.Entry get(byte[] userKey, long snapshotSequence) {
        Map.Entry<MemKey, byte[]> e = table.ceilingEntry(
                new MemKey(userKey, InternalKey.packTrailer(snapshotSequence, ValueType.FOR_SEEK)));
        if (e == null || !Arrays.equals(e.getKey().userKey, userKey)) {
            return null;
        }
        long trailer = e.getKey().trailer;
        ValueType type = ValueType.fromCode((int) (trailer & 0xFF));
        return new TableReader.Entry(type, trailer >>> 8, type == ValueType.PUT ? e.getKey().value(e.getValue()) : null);
    }

    /** An iterator over a live view: entries added later may or may not be seen (callers filter by sequence). */
    public InternalIterator iterator() {
        return new MemTableIterator(table);
    }

    /** Approximate heap bytes used by the entries. */
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
