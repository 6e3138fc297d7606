package io.bloomkv.engine.internal.table;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.InPlaceFilters;
import io.bloomkv.engine.internal.util.RefCount;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The filter memory of the tables that share one budget ({@code Options.filterMemoryBudget}): pinned filters, resident
 * for their table's life like an unbounded table's (level 0 and the upper levels, chosen by the version's residency
 * pass, see {@code TableCache#planFilterResidency}), and a cache of the other tables' filters loaded on demand (the
 * deepest levels). RocksDB's counterpart: {@code cache_index_and_filter_blocks} with
 * {@code pin_l0_filter_and_index_blocks_in_cache} / {@code pin_top_level_index_and_filter}, filters charged to the
 * block cache.
 *
 * <p>Invariant: pinned bytes + the cache's charged bytes <= {@link #capacityBytes()} whenever a call returns. Pins are
 * reserved under this object's lock before their memory is allocated, and the cache's maximum weight is lowered to
 * {@code capacity - pinned} first (Caffeine evicts on the calling thread: {@code executor(Runnable::run)}). Pinned
 * filters together take at most {@link #pinAllowanceBytes()}, half the budget, so the cache keeps room for the deepest
 * levels' hot filters, except those of tables read through their mappings, which may take all of it (their unpinned
 * partitions are probed in place, not through the cache: {@link #tryReservePin(long, boolean)}); pinned copies a residency pass unpinned while Versions still hold them (retired) stay charged
 * until freed, and for that while the pins may take more than the allowance, never more than the budget. A filter
 * evicted from the cache while a get still probes it is freed when that get releases it (its {@link Loaded}
 * reference), so for the length of one probe the off-heap memory may exceed the budget by the cached filters in use;
 * none of them is charged twice.
 *
 * <p>Filters are off-heap (bloom's {@code Filters.read}), cached ones too: the same probe code as a resident filter,
 * no garbage-collector pressure from multi-megabyte arrays, and the memory is freed at eviction, not at the next GC,
 * which is what makes the budget a bound on the process's memory.
 */
public final class FilterMemory {
    /** Share of the budget pinned filters may take. */
    static final double PIN_SHARE = 0.5;

    /** A cached filter: a table's whole filter ({@code partition} -1) or one partition of its partitioned filter. */
    private record Key(long tableId, int partition) {}

    /**
     * One loaded filter, reference counted: the cache (or the pinning table) holds one, each probe one more. Either a
     * whole filter ({@link #filter()}), or a partition in a recycled slot ({@link #slotBytes}) probed through its
     * descriptor ({@link #mightContain}), whose memory goes back to its budget's pool when the last reference goes.
     */
    public static final class Loaded {
        private final Filter filter;
        private final InPlaceFilters slot;
        private final long word0;
        private final long word1;
        private final FilterMemory owner;
        private final long charge;
        private final RefCount refs = new RefCount("filter");

        Loaded(Filter filter, long charge) {
            this.filter = filter;
            this.slot = null;
            this.word0 = 0;
            this.word1 = 0;
            this.owner = null;
            this.charge = charge;
            LIVE_BYTES.addAndGet(charge);
        }

        /** A partition written at offset 0 of {@code slot} (of {@code charge} bytes) and described by the two words. */
        Loaded(InPlaceFilters slot, long word0, long word1, long charge, FilterMemory owner) {
            this.filter = null;
            this.slot = slot;
            this.word0 = word0;
            this.word1 = word1;
            this.owner = owner;
            this.charge = charge;
            LIVE_BYTES.addAndGet(charge);
        }

        /** The whole filter (null for a partition in a slot). */
        public Filter filter() {
            return filter;
        }

        /** Whether the loaded filter might contain {@code hash}. */
        boolean mightContain(long hash) {
            return filter != null ? filter.mightContain(hash) : slot.mightContain(0, word0, word1, hash);
        }

        boolean tryRetain() {
            return refs.tryRetain();
        }

        /** A probe of {@code l} (retained, or null): 1 when it rules the hash out, 0 when not, -1 when null. Releases it. */
        static int probeAndRelease(Loaded l, long hash) {
            if (l == null) {
                return -1;
            }
            try {
                return l.mightContain(hash) ? 0 : 1;
            } finally {
                l.release();
            }
        }

        /** Drops a reference; the last frees the off-heap memory, or returns a slot to its budget's pool. */
        public void release() {
            if (refs.release()) {
                LIVE_BYTES.addAndGet(-charge);
                if (filter != null) {
                    filter.close();
                } else {
                    owner.recycle(slot, charge);
                }
            }
        }
    }

    /** Granularity of partition slots: a partition of n bytes takes a slot of n rounded up to this. */
    static final int SLOT_GRANULARITY = 512;
    /** Most bytes of the cache's share held back for recycled slots (a few partitions of the default 4 KiB). */
    static final long POOL_MAX = 64 << 10;

    /** Bytes of the slot a partition of {@code size} bytes is loaded into (its charge in the cache). */
    static long slotBytes(long size) {
        return (size + SLOT_GRANULARITY - 1) & -(long) SLOT_GRANULARITY;
    }

    /**
     * One reference to a table's pinned filter memory that a {@code Version} naming the table holds while it lives
     * ({@code TableReader#retainPinnedFilter}); released once.
     */
    public interface Hold {
        void release();
    }

    private static final AtomicLong IDS = new AtomicLong();
    /** Off-heap bytes of filters loaded through any budget and not yet freed, in this JVM. */
    private static final AtomicLong LIVE_BYTES = new AtomicLong();

    private final long capacityBytes;
    private final long pinAllowanceBytes;
    private long pinnedBytes;
    /**
     * Of {@link #pinnedBytes}: pinned copies unpinned by a residency pass but not freed yet, because a Version through
     * which gets may still read them holds them (PartitionedFilterReader.Pinned). They are still charged (the cache
     * stays smaller by them), but no longer count against the pin allowance, so the pass that unpinned them can pin
     * their successors, up to the whole budget.
     */
    private long retiredBytes;

    private final Cache<Key, Loaded> cache;
    private final AtomicLong loads = new AtomicLong();

    /**
     * Recycled partition slots by size: the memory of partitions evicted from the cache, which the next load of a
     * partition of the same slot size reuses, so a cache miss neither allocates and zeroes off-heap memory nor frees
     * it at eviction (in steady state every load evicts one partition). At most {@link #poolLimitBytes}, which the
     * cache's share is smaller by while some partitioned reader of this budget is open ({@link #registerReader}), so
     * pinned, cached and pooled bytes together stay within the budget; freed when the last such reader closes. Guarded
     * by itself.
     */
    private final Map<Long, ArrayDeque<InPlaceFilters>> pool = new HashMap<>();

    private final AtomicLong slotAllocations = new AtomicLong();
    private final long poolLimitBytes;
    private long pooledBytes;
    private int readers;
    /** {@link #poolLimitBytes} while a partitioned reader is open, else 0: held back from the cache. Guarded by this. */
    private long poolReserveBytes;

    public FilterMemory(long capacityBytes) {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("filter memory budget must be > 0: " + capacityBytes);
        }
        this.capacityBytes = capacityBytes;
        this.pinAllowanceBytes = (long) (capacityBytes * PIN_SHARE);
        this.poolLimitBytes = Math.min(POOL_MAX, capacityBytes / 8);
        this.cache = Caffeine.newBuilder()
                .maximumWeight(capacityBytes)
                .weigher((Key k, Loaded l) -> (int) Math.min(Integer.MAX_VALUE, l.charge))
                .executor(Runnable::run)
                .removalListener((Key k, Loaded l, RemovalCause cause) -> {
                    if (l != null) {
                        l.release();
                    }
                })
                .build();
    }

    /** A new key for one table's filter (file numbers repeat between databases sharing this budget). */
    static long newTableId() {
        return IDS.incrementAndGet();
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    public long pinAllowanceBytes() {
        return pinAllowanceBytes;
    }

    public synchronized long pinnedBytes() {
        return pinnedBytes;
    }

    /** Bytes charged for the cached (not pinned) filters now. */
    public long cachedBytes() {
        cache.cleanUp();
        return cache.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    }

    /** What the cache may hold now: the budget less the pinned bytes and the recycled slots' reserve. */
    public synchronized long cacheCapacityBytes() {
        return Math.max(0, capacityBytes - pinnedBytes - poolReserveBytes);
    }

    /** A slot of off-heap memory for one partition, and its size (its charge in the cache, its class in the pool). */
    record Slot(InPlaceFilters memory, long bytes) {}

    /**
     * A slot of at least {@code bytes} ({@link #slotBytes}) for a partition load: a recycled one if the pool has one at
     * most a quarter larger (partitions of equal hash ranges differ in size by a few percent, so the smallest that
     * fits, not only the exact size; its old contents are overwritten by the load), else fresh memory of
     * {@code bytes}.
     */
    Slot takeSlot(long bytes) {
        synchronized (pool) {
            long best = Long.MAX_VALUE;
            for (Map.Entry<Long, ArrayDeque<InPlaceFilters>> e : pool.entrySet()) {
                long size = e.getKey();
                if (size >= bytes
                        && size <= bytes + bytes / 4
                        && size < best
                        && !e.getValue().isEmpty()) {
                    best = size;
                }
            }
            if (best != Long.MAX_VALUE) {
                pooledBytes -= best;
                LIVE_BYTES.addAndGet(-best);
                return new Slot(pool.get(best).pop(), best);
            }
        }
        slotAllocations.incrementAndGet();
        return new Slot(InPlaceFilters.allocate(bytes), bytes);
    }

    /** Fresh slots allocated so far (loads that found no recycled slot of their size). */
    public long slotAllocations() {
        return slotAllocations.get();
    }

    /** Takes back a slot no probe reads any more: pooled while there is room and a reader is open, else freed. */
    void recycle(InPlaceFilters slot, long bytes) {
        synchronized (pool) {
            if (readers > 0 && pooledBytes + bytes <= poolLimitBytes) {
                pool.computeIfAbsent(bytes, b -> new ArrayDeque<>()).push(slot);
                pooledBytes += bytes;
                LIVE_BYTES.addAndGet(bytes);
                return;
            }
        }
        slot.close();
    }

    /** A partitioned reader of this budget opened (the pool is kept while one is open). */
    void registerReader() {
        boolean first;
        synchronized (pool) {
            first = readers++ == 0;
        }
        if (first) {
            setPoolReserve(poolLimitBytes);
        }
    }

    private synchronized void setPoolReserve(long bytes) {
        poolReserveBytes = bytes;
        cache.policy().eviction().ifPresent(e -> e.setMaximum(cacheMaximum()));
    }

    /** A partitioned reader of this budget closed (after evicting its partitions); the last one frees the pool. */
    void unregisterReader() {
        List<InPlaceFilters> drained = new ArrayList<>();
        synchronized (pool) {
            if (--readers > 0) {
                return;
            }
            setPoolReserve(0); // (this lock inside the pool's: registerReader takes them one after the other)
            for (ArrayDeque<InPlaceFilters> q : pool.values()) {
                drained.addAll(q);
            }
            pool.clear();
            LIVE_BYTES.addAndGet(-pooledBytes);
            pooledBytes = 0;
        }
        for (InPlaceFilters slot : drained) {
            slot.close();
        }
    }

    /** Filters (or filter partitions) loaded into the cache so far (misses). */
    public long loads() {
        return loads.get();
    }

    /** Off-heap bytes of budgeted filters not yet freed in this JVM (cached, pinned or evicted but still probed). */
    public static long liveBytes() {
        return LIVE_BYTES.get();
    }

    /** Adds {@code bytes} (negative: freed) to {@link #liveBytes()}, for filter memory held outside {@link Loaded}. */
    static void addLive(long bytes) {
        LIVE_BYTES.addAndGet(bytes);
    }

    /**
     * Reserves {@code bytes} of pinned memory when the pins (less the retired ones) stay within
     * {@link #pinAllowanceBytes()} and all of them within the budget; the cache shrinks first so the budget holds.
     * False (nothing reserved) otherwise.
     */
    synchronized boolean tryReservePin(long bytes) {
        return tryReservePin(bytes, false);
    }

    /**
     * {@link #tryReservePin(long)}; with {@code wholeBudget}, the pins may take the whole budget (less the slot pool's
     * reserve) instead of {@link #pinAllowanceBytes()}: for the filters of a table read through its mapping, whose
     * unpinned partitions are probed in place and never need the cache, so the cache's half would otherwise stay
     * empty while those partitions are probed from 4 KiB page-cache pages instead of a copy on huge pages.
     */
    synchronized boolean tryReservePin(long bytes, boolean wholeBudget) {
        long allowance = wholeBudget ? capacityBytes - poolReserveBytes : pinAllowanceBytes;
        if (pinnedBytes - retiredBytes + bytes > allowance || pinnedBytes + bytes > capacityBytes - poolReserveBytes) {
            return false;
        }
        pinnedBytes += bytes;
        cache.policy().eviction().ifPresent(e -> e.setMaximum(cacheMaximum()));
        return true;
    }

    /** Returns a reservation of {@link #tryReservePin} (after its filter was freed or failed to load). */
    synchronized void unreservePin(long bytes) {
        pinnedBytes -= bytes;
        cache.policy().eviction().ifPresent(e -> e.setMaximum(cacheMaximum()));
    }

    /** The cache's maximum weight now (under this object's lock). */
    private long cacheMaximum() {
        return Math.max(0, capacityBytes - pinnedBytes - poolReserveBytes);
    }

    /** Marks {@code bytes} of pins unpinned but still held ({@link #retiredBytes}); undone by {@link #unreservePin}. */
    synchronized void retirePin(long bytes) {
        retiredBytes += bytes;
    }

    /** Returns the reservation of a retired pin ({@link #retirePin}) when its memory is freed. */
    synchronized void unreserveRetiredPin(long bytes) {
        retiredBytes -= bytes;
        unreservePin(bytes);
    }

    /** Pin allowance not reserved yet, for a residency pass planning one database's share (retired pins not counted). */
    public synchronized long pinAvailableBytes() {
        return pinAvailableBytes(false);
    }

    /** {@link #pinAvailableBytes()} against the whole budget (less the slot pool's reserve) with {@code wholeBudget}. */
    public synchronized long pinAvailableBytes(boolean wholeBudget) {
        long allowance = wholeBudget ? capacityBytes - poolReserveBytes : pinAllowanceBytes;
        return allowance - (pinnedBytes - retiredBytes);
    }

    /**
     * The cached filter of table {@code tableId}, retained for the caller (who releases it), loading it with
     * {@code loader} on a miss. Null when the loader returns null (no usable filter), or when the filter's
     * {@code charge} exceeds what the cache may hold now: loaded for one probe and evicted at once, it would cost a read
     * of the whole filter block per get, more than the data block read it saves, so the get reads the table without it.
     */
    Loaded acquire(long tableId, long charge, Supplier<Loaded> loader) {
        return acquire(tableId, -1, charge, loader);
    }

    /**
     * {@link #acquire(long, long, Supplier)} of partition {@code partition} of table {@code tableId}'s partitioned
     * filter (engine/FORMAT.md "Partitioned filter"): a few KiB, cached and evicted on its own.
     */
    Loaded acquire(long tableId, int partition, long charge, Supplier<Loaded> loader) {
        Key key = new Key(tableId, partition);
        while (true) {
            Loaded l = cache.getIfPresent(key);
            if (l == null) {
                if (charge > cacheCapacityBytes()) {
                    return null;
                }
                Loaded loaded = loader.get();
                if (loaded == null) {
                    return null;
                }
                loads.incrementAndGet();
                loaded.tryRetain(); // the caller's reference; the loader's one goes to the cache
                Loaded prior = cache.asMap().putIfAbsent(key, loaded);
                if (prior != null) {
                    // another get loaded it first: use that one, free ours
                    loaded.release();
                    loaded.release();
                    l = prior;
                } else {
                    cache.cleanUp(); // evictions run now, so the bound holds when this returns
                    return loaded;
                }
            }
            if (l.tryRetain()) {
                return l;
            }
            // evicted and freed between the lookup and the retain: look again
        }
    }

    /**
     * The cached filter of table {@code tableId} (partition {@code partition}, -1 for a whole filter) retained for the
     * caller (who releases it), or null when the cache does not hold it: never loads, and records no access, so these
     * lookups change neither what the cache holds nor what it evicts next ({@code Db.keyMayExist}, which reads no file
     * and must not make the budget keep what gets do not ask for).
     */
    Loaded peek(long tableId, int partition) {
        Loaded l = cache.policy().getIfPresentQuietly(new Key(tableId, partition));
        return l != null && l.tryRetain() ? l : null; // evicted and freed meanwhile: not in memory
    }

    /** Whether table {@code tableId}'s filter is in the cache now. */
    boolean isCached(long tableId) {
        return isCached(tableId, -1);
    }

    /** Whether partition {@code partition} of table {@code tableId}'s filter is in the cache now. */
    boolean isCached(long tableId, int partition) {
        return cache.policy().getIfPresentQuietly(new Key(tableId, partition)) != null; // no access recorded
    }

    /** The charge of partition {@code partition} of table {@code tableId}'s filter in the cache now, or 0. */
    long cachedCharge(long tableId, int partition) {
        Loaded l = cache.policy().getIfPresentQuietly(new Key(tableId, partition)); // no access recorded
        return l == null ? 0 : l.charge;
    }

    /** Drops table {@code tableId}'s cached filter (its table was released). */
    void evict(long tableId) {
        evict(tableId, -1);
    }

    /** Drops partition {@code partition} of table {@code tableId}'s filter from the cache. */
    void evict(long tableId, int partition) {
        cache.invalidate(new Key(tableId, partition));
    }
}
