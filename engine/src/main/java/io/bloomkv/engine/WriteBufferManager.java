package io.bloomkv.engine;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One memtable-memory budget for several databases (RocksDB's {@code WriteBufferManager}): pass the same
 * instance to each database's {@link Options#writeBufferManager(WriteBufferManager)} and their memtables
 * together stay near {@link #capacityBytes()}, however many databases there are (segments of a window
 * store times partitions of a Kafka Streams application).
 *
 * <p>Contract, as RocksDB's {@code WriteBufferManager::ShouldFlush}: every database charges the
 * approximate bytes of its memtables here (the mutable one and those frozen and waiting for flush); a
 * write to a database freezes that database's memtable (and so schedules its flush) when it is not
 * empty and either the mutable memtables together exceed 7/8 of the capacity, or all memtables
 * together reach the capacity while the mutable ones hold at least half of it, and the memtable holds at least
 * {@link #minFreezeBytes()} (1/64 of the capacity): a budget held by databases that receive no more writes
 * (their memtables stay until they flush or close) then makes the written ones flush tables of that size, not one
 * table per write; the overrun is at most that size per written database. A flushed memtable's
 * bytes are released when its table is recorded; a closed database releases all its bytes. Each
 * database's own {@link Options#writeBufferSize} still applies. The bound is soft, as RocksDB's
 * without {@code allow_stall}: writes are not stalled for the budget, memtables are frozen earlier.
 * Thread-safe; nothing to release.
 */
public final class WriteBufferManager {
    private final long capacityBytes;
    private final AtomicLong mutableBytes = new AtomicLong();
    private final AtomicLong totalBytes = new AtomicLong();

    /** @throws InvalidArgumentException when {@code capacityBytes <= 0} */
    public WriteBufferManager(long capacityBytes) {
        if (capacityBytes <= 0) {
            throw new InvalidArgumentException("write buffer manager capacity must be > 0: " + capacityBytes);
        }
        this.capacityBytes = capacityBytes;
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** Bytes of every memtable charged now (mutable and frozen), by every database sharing the budget. */
    public long usedBytes() {
        return totalBytes.get();
    }

    /** Bytes of the mutable (not yet frozen) memtables charged now. */
    public long mutableBytes() {
        return mutableBytes.get();
    }

    /** The smallest memtable a write freezes for the budget: 1/64 of the capacity. */
    public long minFreezeBytes() {
        return Math.max(1, capacityBytes / 64);
    }

    /** True when a write should freeze its database's memtable (RocksDB's ShouldFlush, see the class comment). */
    public boolean shouldFlush() {
        long mutable = mutableBytes.get();
        if (mutable > capacityBytes - capacityBytes / 8) {
            return true;
        }
        return totalBytes.get() >= capacityBytes && mutable >= capacityBytes / 2;
    }

    /** A mutable memtable grew (or shrank) by {@code delta} bytes. */
    void chargeMutable(long delta) {
        mutableBytes.addAndGet(delta);
        totalBytes.addAndGet(delta);
    }

    /** A mutable memtable of {@code bytes} was frozen: it stays charged until {@link #releaseFrozen}. */
    void freeze(long bytes) {
        mutableBytes.addAndGet(-bytes);
    }

    /** A frozen memtable of {@code bytes} was flushed or dropped. */
    void releaseFrozen(long bytes) {
        totalBytes.addAndGet(-bytes);
    }

    @Override
    public String toString() {
        return "WriteBufferManager[capacity=" + capacityBytes + ", used=" + usedBytes() + ", mutable=" + mutableBytes()
                + "]";
    }
}
