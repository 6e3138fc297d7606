package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.ReadOptions;
import io.bloomkv.engine.WriteBatch;
import java.util.Arrays;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;

/**
 * One time segment of a window or session store: the key range of its id in the store's one bloomkv database
 * (Kafka's {@code LogicalKeyValueSegment} of its versioned store, one RocksDB instance with segment-prefixed
 * keys, rather than the one-instance-per-segment {@code KeyValueSegment} of its window stores). Every key of
 * the segment is stored as {@code [segment prefix (8)][composite key]} ({@link #prefix(long)}); expiry marks the
 * segment dropped and {@link Segments} removes its whole key range with one range tombstone. Writes are made by
 * the owning store under its lock; reads are thread-safe (the engine is).
 */
final class Segment {
    /** Bytes of the segment prefix in front of every stored key. */
    static final int PREFIX_SIZE = 8;

    /**
     * The value of a segment's marker: the key that is the bare prefix, written when the segment is created and
     * removed with the segment's range. It keeps a segment whose records were all deleted in existence across a
     * restart ({@code Segments.openExisting} finds segments by their first key), as Kafka's segment directories do, so
     * that iterators see the same segments as Kafka's. Every scan skips it ({@link #isMarker}).
     */
    static final byte[] MARKER = new byte[0];

    final long id;
    final String name;
    private final Db db;
    private final byte[] prefix;
    /** False once the segment expired or the store closed: reads then skip it, as Kafka skips a closed segment. */
    private volatile boolean open = true;

    Segment(long id, String name, Db db) {
        this.id = id;
        this.name = name;
        this.db = db;
        this.prefix = prefix(id);
    }

    /**
     * The 8-byte prefix of segment {@code id}: the id big-endian with its sign bit flipped, so that the byte order of
     * prefixes is the numeric order of ids (negative ids, such as the versioned store's latest-value id -1, first).
     */
    static byte[] prefix(long id) {
        long v = id ^ Long.MIN_VALUE;
        byte[] p = new byte[PREFIX_SIZE];
        for (int i = PREFIX_SIZE - 1; i >= 0; i--) {
            p[i] = (byte) v;
            v >>>= 8;
        }
        return p;
    }

    /** The segment id of a stored (prefixed) key. */
    static long idOf(byte[] storedKey) {
        long v = 0;
        for (int i = 0; i < PREFIX_SIZE; i++) {
            v = (v << 8) | (storedKey[i] & 0xFF);
        }
        return v ^ Long.MIN_VALUE;
    }

    /**
     * Removes segments {@code first..last} of {@code db} as whole key ranges: one range tombstone over their prefixes
     * (the ids between hold nothing), which hides them at once, then, on {@code deletions}' thread, the tables lying
     * in that range removed with {@link Db#deleteFilesInRange} (the database's flushes and compactions write one
     * segment per table): no flush, no compaction, no data written. Entries of the range still in the memtable go at
     * its next flush, which drops what the tombstone covers, and the tombstone itself once no table below overlaps
     * it. Shared by the window and session stores (the versioned
     * store writes the tombstone only: see {@link VersionedSegments}); {@code store} names the store in the error.
     * Without a write-ahead log the engine flushes the memtables holding the tombstone before it removes the tables
     * ({@link Db#deleteFilesInRange}), so a crash never keeps the removal and loses the tombstone: the window and
     * session stores then write the tombstone alone ({@link #writeTombstone}) and remove the tables after the engine's
     * own flush of that memtable ({@link Segments}), so that expiry forces no flush.
     */
    static void dropRange(Db db, ExpiryDeletions deletions, long first, long last, String store) {
        try {
            byte[] from = prefix(first);
            byte[] to = prefix(last + 1);
            db.deleteRange(from, to);
            deletions.submit(db, from, to);
        } catch (BloomKvException e) {
            throw new ProcessorStateException(store + ": cannot drop the expired segments " + first + ".." + last, e);
        }
    }

    /** The range tombstone of {@link #dropRange} alone: its tables' removal left to the caller. */
    static void writeTombstone(Db db, long first, long last, String store) {
        try {
            db.deleteRange(prefix(first), prefix(last + 1));
        } catch (BloomKvException e) {
            throw new ProcessorStateException(store + ": cannot drop the expired segments " + first + ".." + last, e);
        }
    }

    /** {@code key} behind {@code prefix}. */
    static byte[] prefixed(byte[] prefix, byte[] key) {
        byte[] out = Arrays.copyOf(prefix, PREFIX_SIZE + key.length);
        System.arraycopy(key, 0, out, PREFIX_SIZE, key.length);
        return out;
    }

    /** Writes this segment's prefix into the first {@link #PREFIX_SIZE} bytes of {@code storedKey}. */
    void fillPrefix(byte[] storedKey) {
        System.arraycopy(prefix, 0, storedKey, 0, PREFIX_SIZE);
    }

    /** Whether {@code storedKey} is a segment's marker (the bare prefix), not a record. */
    static boolean isMarker(byte[] storedKey) {
        return storedKey.length == PREFIX_SIZE;
    }

    /** Writes this segment's marker ({@link #MARKER}). */
    void writeMarker() {
        try {
            db.put(prefix.clone(), MARKER);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": put failed", e);
        }
    }

    /** The composite key of a stored key (the prefix removed). */
    static byte[] strip(byte[] storedKey) {
        return Arrays.copyOfRange(storedKey, PREFIX_SIZE, storedKey.length);
    }

    boolean isOpen() {
        return open;
    }

    /** Marks the segment dropped (expired, or its store closed); its key range is removed by {@link Segments}. */
    void markClosed() {
        open = false;
    }

    private void checkOpen() {
        if (!open) {
            throw new InvalidStateStoreException("segment " + name + " is closed");
        }
    }

    /** Adds a put of composite key {@code key} (a delete for a null value) in this segment to {@code batch}. */
    void addTo(WriteBatch batch, byte[] key, byte[] value) {
        // The stored key as two parts: the batch copies them once, no prefixed array is made per record.
        if (value == null) {
            batch.delete(prefix, key);
        } else {
            batch.put(prefix, key, value);
        }
    }

    /**
     * The value of a stored key already carrying this segment's prefix ({@link #fillPrefix}): no copy of the key is
     * made on the way to the engine.
     */
    byte[] getStored(byte[] storedKey) {
        checkOpen();
        try {
            return db.get(storedKey);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": get failed", e);
        }
    }

    /**
     * Puts (a null value deletes) a stored key already carrying this segment's prefix: a put through {@link Db#put}
     * (no batch), a delete through {@code scratch}, a batch the caller reuses from write to write (cleared here).
     */
    void putStored(byte[] storedKey, byte[] value, WriteBatch scratch) {
        checkOpen();
        try {
            if (value == null) {
                scratch.clear();
                scratch.delete(storedKey);
                db.write(scratch);
            } else {
                // No batch: the write leader copies key and value straight from these arrays into the memtable (a
                // batch would be encoded, then decoded into a fresh key array, per put).
                db.put(storedKey, value);
            }
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": put failed", e);
        }
    }

    /**
     * A bound over composite keys as a stored key: {@link #PREFIX_SIZE} bytes of room for a segment prefix, the
     * composite key, then {@code extraZeros} zero bytes (1 turns an inclusive upper bound into the engine's exclusive
     * one: nothing sorts between x and x + 0x00). Filled per segment by {@link #iteratorStored}.
     */
    static byte[] storedBound(byte[] composite, int extraZeros) {
        byte[] out = new byte[PREFIX_SIZE + composite.length + extraZeros];
        System.arraycopy(composite, 0, out, PREFIX_SIZE, composite.length);
        return out;
    }

    /**
     * An iterator over the segment's stored keys from {@code lowerStored} (inclusive) to {@code upperStoredExclusive}
     * ({@link #storedBound}s; this segment's prefix is written into them here, and the engine copies them, so the
     * caller reuses them for its next segment; null bounds: the segment's own), positioned by the caller; its keys
     * carry the prefix ({@link #strip}). The caller owns it.
     */
    DbIterator iteratorStored(byte[] lowerStored, byte[] upperStoredExclusive) {
        checkOpen();
        ReadOptions ro = ReadOptions.defaults();
        if (lowerStored != null) {
            fillPrefix(lowerStored);
            ro.iterateLowerBound(lowerStored);
        } else {
            ro.iterateLowerBound(prefix);
        }
        if (upperStoredExclusive != null) {
            fillPrefix(upperStoredExclusive);
            ro.iterateUpperBound(upperStoredExclusive);
        } else {
            ro.iterateUpperBound(prefix(id + 1));
        }
        return db.iterator(ro);
    }

    @Override
    public String toString() {
        return "Segment[" + name + (isOpen() ? "" : ", closed") + "]";
    }
}
