package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.ReadOptions;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.WriteBatch;
import java.nio.file.Path;
import org.apache.kafka.streams.errors.ProcessorStateException;

/**
 * One time segment of a window or session store: one bloomkv database in its own directory (Kafka's
 * {@code KeyValueSegment}, one database instance per segment). Expiry closes it and deletes its directory,
 * so retention costs no write per record. Keys are the schema's composite keys as they are, values as
 * Kafka's changelog carries them. Used under the owning store's lock, except reads (the engine is thread-safe).
 */
final class Segment {
    final long id;
    final String name;
    private final Path dir;
    private final Options options;
    private volatile Db db;
    /** Written since the last WAL sync (flush() of the store syncs only those). */
    private boolean unsynced;
    /** Written since its memtable was last frozen to a table (an idle segment then gives its memtable back). */
    private boolean unflushed;

    private Segment(long id, String name, Path dir, Options options, Db db) {
        this.id = id;
        this.name = name;
        this.dir = dir;
        this.options = options;
        this.db = db;
    }

    /** Opens (or creates) the segment's database under {@code dir}. */
    static Segment open(long id, String name, Path dir, Options options) {
        try {
            return new Segment(id, name, dir, options, Db.open(dir, options));
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": cannot open bloomkv database under " + dir, e);
        }
    }

    boolean isOpen() {
        return db != null;
    }

    private Db db() {
        Db d = db;
        if (d == null) {
            throw new org.apache.kafka.streams.errors.InvalidStateStoreException("segment " + name + " is closed");
        }
        return d;
    }

    byte[] get(byte[] key) {
        try {
            return db().get(key);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": get failed", e);
        }
    }

    /** A null value deletes. */
    void put(byte[] key, byte[] value) {
        try {
            if (value == null) {
                db().delete(key);
            } else {
                db().put(key, value);
            }
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": put failed", e);
        }
        unsynced = true;
        unflushed = true;
    }

    void write(WriteBatch batch) {
        if (batch.count() == 0) {
            return;
        }
        try {
            db().write(batch);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": write failed", e);
        }
        unsynced = true;
        unflushed = true;
    }

    /**
     * An iterator over [{@code lower}, {@code upperInclusive}] (null bounds are open), positioned at the first
     * entry of the direction by the caller. The caller owns it.
     */
    DbIterator iterator(byte[] lower, byte[] upperInclusive) {
        ReadOptions ro = ReadOptions.defaults();
        if (lower != null) {
            ro.iterateLowerBound(lower);
        }
        if (upperInclusive != null) {
            // The engine's upper bound is exclusive: the smallest key after upperInclusive is upperInclusive + 0x00.
            ro.iterateUpperBound(java.util.Arrays.copyOf(upperInclusive, upperInclusive.length + 1));
        }
        return db().iterator(ro);
    }

    /** Makes the writes so far durable (one WAL sync), if any. */
    void syncWal() {
        if (!unsynced) {
            return;
        }
        try {
            db().syncWal();
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": flush failed", e);
        }
        unsynced = false;
    }

    /**
     * Freezes and writes the memtable to a table when the segment was written since it last did: called when
     * the segment stops receiving in-order writes (a newer segment opened), so that idle segments hold no
     * memtable memory against the shared write-buffer budget.
     */
    void flushMemtable() {
        if (!unflushed) {
            return;
        }
        try {
            db().flush();
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": memtable flush failed", e);
        }
        unflushed = false;
        unsynced = false;
    }

    Stats statsOrNull() {
        Db d = db;
        if (d == null) {
            return null;
        }
        try {
            return d.stats();
        } catch (BloomKvException e) {
            return null;
        }
    }

    /** Closes the database (its open iterators too). Idempotent. */
    void close() {
        Db d = db;
        db = null;
        if (d != null) {
            try {
                d.close();
            } catch (BloomKvException e) {
                throw new ProcessorStateException("segment " + name + ": close failed", e);
            }
        }
    }

    /** Closes the segment and deletes its database and directory: how expired data leaves. */
    void destroy() {
        close();
        try {
            Db.destroy(dir, options);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("segment " + name + ": cannot delete " + dir, e);
        }
    }

    @Override
    public String toString() {
        return "Segment[" + name + (isOpen() ? "" : ", closed") + "]";
    }
}
