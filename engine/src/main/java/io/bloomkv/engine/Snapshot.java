package io.bloomkv.engine;

/**
 * A point in time of a {@link Db}: gets and iterators given it (through {@link ReadOptions}) see
 * exactly the writes acknowledged before {@link Db#getSnapshot()} returned. While a snapshot is
 * open, compaction keeps the entries it can see. Close it when done. Release is idempotent however
 * it is reached: {@code close()} and {@link Db#releaseSnapshot} may each be called any number of
 * times, in any order, and only the first call releases the snapshot (so other snapshots at the
 * same sequence keep their view). Closing after the database was closed is a no-op.
 */
public final class Snapshot implements AutoCloseable {
    private final Db db;
    private final long sequence;
    private volatile boolean released;

    Snapshot(Db db, long sequence) {
        this.db = db;
        this.sequence = sequence;
    }

    /** The sequence number of the last write this snapshot sees. */
    public long sequence() {
        return sequence;
    }

    Db db() {
        return db;
    }

    boolean isReleased() {
        return released;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
        }
        db.snapshotReleased(this);
    }

    @Override
    public String toString() {
        return "Snapshot{sequence=" + sequence + (released ? ", released" : "") + "}";
    }
}
