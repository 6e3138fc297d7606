package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.WriteBatch;
import java.nio.file.Path;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.ProcessorStateException;

/**
 * One bloomkv database of a {@link BloomKvVersionedStore}: a segment of old versions (id >= 0: the versions whose
 * validTo falls in {@code [id * segmentInterval, (id + 1) * segmentInterval)}) or the latest-value database
 * (id -1). Kafka keys are stored as {@link StoreKeys} encodes them. A segment leaves the store whole: its
 * database is closed and its directory destroyed ({@link #destroy()}), the counterpart of Kafka dropping a
 * segment, so expiry writes nothing per record.
 */
final class VersionedSegment implements VersionedStoreClient.Segment {
    /** The id of the latest-value database (Kafka's reserved segment -1). */
    static final long LATEST_ID = -1L;

    private final long id;
    private final Path dir;
    private final Options options;
    private Db db;
    /** Written since the last sync of its write-ahead log. */
    private boolean dirty;

    VersionedSegment(long id, Path dir, Options options) {
        this.id = id;
        this.dir = dir;
        this.options = options;
        try {
            this.db = Db.open(dir, options);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("cannot open bloomkv versioned store segment " + dir, e);
        }
    }

    @Override
    public long id() {
        return id;
    }

    Db db() {
        return db;
    }

    @Override
    public byte[] get(Bytes key) {
        return db.get(StoreKeys.encode(key));
    }

    @Override
    public void put(Bytes key, byte[] value) {
        db.put(StoreKeys.encode(key), value);
        dirty = true;
    }

    void delete(Bytes key) {
        db.delete(StoreKeys.encode(key));
        dirty = true;
    }

    /** Adds a put (or a delete, for a null value) of {@code key} to {@code batch}. */
    static void addTo(WriteBatch batch, Bytes key, byte[] value) {
        if (value == null) {
            batch.delete(StoreKeys.encode(key));
        } else {
            batch.put(StoreKeys.encode(key), value);
        }
    }

    void write(WriteBatch batch) {
        if (batch.count() > 0) {
            db.write(batch);
            dirty = true;
        }
    }

    /** Syncs the write-ahead log when something was written since the last sync. */
    void sync() {
        if (dirty) {
            db.syncWal();
            dirty = false;
        }
    }

    boolean isOpen() {
        return db != null;
    }

    void close() {
        Db d = db;
        db = null;
        if (d != null) {
            d.close();
        }
    }

    /** Closes the database and deletes its files and directory. */
    void destroy() {
        close();
        Db.destroy(dir, options);
    }

    @Override
    public String toString() {
        return "VersionedSegment[" + id + " " + dir + "]";
    }
}
