package io.bloomkv.engine;

import io.bloomkv.engine.internal.table.BlockCache;

/**
 * One block-cache bound for several databases (RocksDB's shared {@code Cache}): pass the same instance
 * to each database's {@link Options#blockCache(SharedBlockCache)} and their data blocks together stay
 * within {@link #capacityBytes()} (on-heap, CLOCK eviction with hit counters). Each database keeps its own key space
 * in it; closing a database drops its blocks. Thread-safe; nothing to release.
 */
public final class SharedBlockCache {
    private final BlockCache cache;

    /** @throws InvalidArgumentException when {@code capacityBytes <= 0} */
    public SharedBlockCache(long capacityBytes) {
        if (capacityBytes <= 0) {
            throw new InvalidArgumentException("shared block cache capacity must be > 0: " + capacityBytes);
        }
        this.cache = new BlockCache(capacityBytes);
    }

    public long capacityBytes() {
        return cache.capacityBytes();
    }

    /** Bytes charged for the blocks cached now, by every database sharing it. */
    public long usedBytes() {
        return cache.usedBytes();
    }

    /** Blocks cached now, by every database sharing it. */
    public long blockCount() {
        return cache.blockCount();
    }

    /** A view for one more database. */
    BlockCache newView() {
        return cache.newView();
    }

    @Override
    public String toString() {
        return "SharedBlockCache[capacity=" + capacityBytes() + ", used=" + usedBytes() + "]";
    }
}
