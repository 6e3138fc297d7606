package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.WriteBatch;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;

/**
 * One key range of a {@link BloomKvVersionedStore}'s database: a segment of old versions (id >= 0: the versions
 * whose validTo falls in {@code [id * segmentInterval, (id + 1) * segmentInterval)}) or the latest values (id -1,
 * Kafka's reserved segment). Kafka keys are stored as {@code [segment prefix (8)][StoreKeys encoding]}
 * ({@link Segment#prefix}), as Kafka's {@code LogicalKeyValueSegment}s share one RocksDB instance. A segment
 * leaves the store whole: {@link VersionedSegments} removes its key range with one range tombstone, so expiry
 * writes nothing per record.
 */
final class VersionedSegment implements VersionedStoreClient.Segment {
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

    @Override
    public long id() {
        return id;
    }

    /** {@code [prefix][StoreKeys encoding of key]} built in one array (one copy of the key per read or write). */
    private byte[] storedKey(Bytes key) {
        byte[] k = key.get();
        byte[] out = new byte[Segment.PREFIX_SIZE + 1 + k.length];
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

    @Override
    public byte[] get(Bytes key) {
        checkOpen();
        return owner.db().get(storedKey(key));
    }

    @Override
    public void put(Bytes key, byte[] value) {
        checkOpen();
        owner.db().put(storedKey(key), value);
        owner.written();
    }

    void delete(Bytes key) {
        checkOpen();
        owner.db().delete(storedKey(key));
        owner.written();
    }

    /** Adds a put of {@code key} in this segment (a delete, for a null value) to {@code batch}. */
    void addTo(WriteBatch batch, Bytes key, byte[] value) {
        if (value == null) {
            batch.delete(storedKey(key));
        } else {
            batch.put(storedKey(key), value);
        }
    }

    boolean isOpen() {
        return open;
    }

    /** Marks the segment dropped (expired, or the store closed). */
    void markClosed() {
        open = false;
    }

    /** Wraps an engine failure of this segment. */
    ProcessorStateException failure(String what, BloomKvException e) {
        return new ProcessorStateException("versioned store segment " + id + ": " + what, e);
    }

    @Override
    public String toString() {
        return "VersionedSegment[" + id + (open ? "" : ", closed") + "]";
    }
}
