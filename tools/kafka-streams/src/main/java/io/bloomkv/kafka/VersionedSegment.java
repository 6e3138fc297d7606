package io.bloomkv.kafka;

import io.bloomkv.engine.WriteBatch;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.InvalidStateStoreException;

/**
 * One key range of a {@link BloomKvVersionedStore}'s database: a segment of old versions (id >= 0: the versions
 * whose validTo falls in {@code [id * segmentInterval, (id + 1) * segmentInterval)}) or the latest values (id -1,
 * Kafka's reserved segment). Kafka keys are stored as {@code [segment prefix (8)][StoreKeys encoding]}
 * ({@link Segment#prefix}), as Kafka's {@code LogicalKeyValueSegment}s share one RocksDB instance. A segment
 * leaves the store whole: {@link VersionedSegments} removes its key range with one range tombstone, so expiry
 * writes nothing per record. Writes go through write batches ({@link #addTo}): a put's rows are one atomic write.
 */
final class VersionedSegment {
    /** The id of the latest-value key range (Kafka's reserved segment -1). */
    static final long LATEST_ID = -1L;

    private final long id;
    private final VersionedSegments owner;
    private final byte[] prefix;
    /** False once the segment expired or the store closed. */
    private volatile boolean open = true;

    VersionedSegment(long id, VersionedSegments owner) {
        this.id = id;
        this.owner = owner;
        this.prefix = Segment.prefix(id);
    }

    long id() {
        return id;
    }

    /** {@code [prefix][StoreKeys encoding of key]} built in one array (one copy of the key per read). */
    private byte[] storedKey(Bytes key) {
        byte[] k = key.get();
        return fill(new byte[Segment.PREFIX_SIZE + 1 + k.length], k);
    }

    /** Fills {@code out} (exactly the stored key's length) with this segment's stored key of {@code k}. */
    private byte[] fill(byte[] out, byte[] k) {
        System.arraycopy(prefix, 0, out, 0, Segment.PREFIX_SIZE);
        out[Segment.PREFIX_SIZE] = StoreKeys.PLAIN;
        System.arraycopy(k, 0, out, Segment.PREFIX_SIZE + 1, k.length);
        return out;
    }

    private void checkOpen() {
        if (!open) {
            throw new InvalidStateStoreException("versioned store segment " + id + " is closed");
        }
    }

    /** The row of {@code key} in this key range, or null. */
    byte[] get(Bytes key) {
        checkOpen();
        return owner.db().get(storedKey(key));
    }

    /**
     * Adds a put of {@code key} in this segment (a delete, for a null value) to {@code batch}. The stored key is built
     * in {@code scratch} when it has the key's length (the batch copies it), else in a new array; returns the array
     * used, for the caller to keep as its next scratch.
     */
    byte[] addTo(WriteBatch batch, Bytes key, byte[] value, byte[] scratch) {
        checkOpen();
        byte[] k = key.get();
        int length = Segment.PREFIX_SIZE + 1 + k.length;
        byte[] stored = fill(scratch != null && scratch.length == length ? scratch : new byte[length], k);
        if (value == null) {
            batch.delete(stored);
        } else {
            batch.put(stored, value);
        }
        return stored;
    }

    boolean isOpen() {
        return open;
    }

    /** Marks the segment dropped (expired, or the store closed). */
    void markClosed() {
        open = false;
    }

    @Override
    public String toString() {
        return "VersionedSegment[" + id + (open ? "" : ", closed") + "]";
    }
}
