package io.bloomkv.engine;

import io.bloomkv.engine.internal.table.FilterMemory;

/**
 * One filter memory bound for several databases of a JVM (as {@link SharedBlockCache} is for data blocks): pass the
 * same instance to each database's {@link Options#filterMemoryBudget(SharedFilterBudget)} and their table filters
 * together, pinned and cached, stay within {@link #capacityBytes()}. Pinned filters (level 0 and the upper levels of
 * each database, first come first served) take at most half of it; the rest caches the deepest levels' filters of all
 * the databases (off-heap, W-TinyLFU eviction). Closing a database frees its filters. Thread-safe; nothing to release.
 */
public final class SharedFilterBudget {
    private final FilterMemory memory;

    /** @throws InvalidArgumentException when {@code capacityBytes <= 0} */
    public SharedFilterBudget(long capacityBytes) {
        if (capacityBytes <= 0) {
            throw new InvalidArgumentException("shared filter budget must be > 0: " + capacityBytes);
        }
        this.memory = new FilterMemory(capacityBytes);
    }

    public long capacityBytes() {
        return memory.capacityBytes();
    }

    /** Bytes of the pinned filters now, of every database sharing the budget. */
    public long pinnedBytes() {
        return memory.pinnedBytes();
    }

    /** Bytes charged for the cached filters now, of every database sharing the budget. */
    public long cachedBytes() {
        return memory.cachedBytes();
    }

    /** Filters loaded into the cache so far (cache misses), of every database sharing the budget. */
    public long loads() {
        return memory.loads();
    }

    FilterMemory memory() {
        return memory;
    }

    @Override
    public String toString() {
        return "SharedFilterBudget[capacity=" + capacityBytes() + ", pinned=" + pinnedBytes() + ", cached="
                + cachedBytes() + "]";
    }
}
