package io.bloomkv.engine.internal.table;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An LRU-like (Caffeine W-TinyLFU) cache of parsed data blocks shared by the tables of a database,
 * bounded by the blocks' bytes, keyed by (table file number, block offset). Thread-safe. Blocks
 * are on-heap; a table's blocks are dropped when the table's last reference is released.
 *
 * <p>Several databases may share one bound: {@link #newView()} gives each its own key space over the
 * same cache (file numbers repeat between databases), so {@link #evictFile} and {@link #clear} touch
 * only the view's blocks while {@link #usedBytes()} and the capacity are the shared cache's.
 */
public final class BlockCache {
    /** Bytes charged per cached block on top of its contents (objects, map entry). */
    static final int PER_BLOCK_OVERHEAD = 96;

    private record Key(long owner, long fileNumber, long offset) {}

    private static final AtomicLong OWNERS = new AtomicLong();

    private final long capacityBytes;
    private final Cache<Key, Block> cache;
    /** The key space of this view. */
    private final long owner;

    public BlockCache(long capacityBytes) {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("block cache capacity must be > 0: " + capacityBytes);
        }
        this.capacityBytes = capacityBytes;
        this.cache = Caffeine.newBuilder()
                .maximumWeight(capacityBytes)
                .weigher((Key k, Block b) -> b.size() + PER_BLOCK_OVERHEAD)
                // Evict on the calling thread: the bound holds when put returns. (Caffeine's asynchronous
                // maintenance saves the pass per put, 19% of a get's CPU at 1 KB values when most gets miss, but
                // lets the cache overshoot its bound by up to its write buffer, 256 blocks on 2 cores.)
                .executor(Runnable::run)
                .build();
        this.owner = OWNERS.incrementAndGet();
    }

    private BlockCache(BlockCache shared) {
        this.capacityBytes = shared.capacityBytes;
        this.cache = shared.cache;
        this.owner = OWNERS.incrementAndGet();
    }

    /** Another view of this cache's memory, with its own key space (for another database). */
    public BlockCache newView() {
        return new BlockCache(this);
    }

    /** The cached block, or null. */
    public Block get(long fileNumber, long offset) {
        return cache.getIfPresent(new Key(owner, fileNumber, offset));
    }

    public void put(long fileNumber, long offset, Block block) {
        cache.put(new Key(owner, fileNumber, offset), block);
    }

    /** Drops every block of one table file (of this view). */
    public void evictFile(long fileNumber) {
        cache.asMap().keySet().removeIf(k -> k.owner() == owner && k.fileNumber() == fileNumber);
    }

    /** Drops every block of this view. */
    public void clear() {
        cache.asMap().keySet().removeIf(k -> k.owner() == owner);
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** Bytes charged for the cached blocks now (of every view). */
    public long usedBytes() {
        cache.cleanUp();
        return cache.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    }

    /** Blocks cached now (of every view). */
    public long blockCount() {
        cache.cleanUp();
        return cache.estimatedSize();
    }
}
