package io.bloomkv.engine.internal.table;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A CLOCK cache with small hit counters (GCLOCK) of parsed data blocks shared by the tables of a database, bounded
 * by the blocks' bytes, keyed by (view, table file number, block offset). Thread-safe. Blocks are on-heap
 * (decompressed, restart array checked: {@link Block}), so there is no memory to release: a dropped block is
 * garbage once no reader holds it. A table's blocks are dropped when the table's last reference is released
 * ({@link #evictFile}).
 *
 * <p>The hit path writes no shared state except the entry's own hit counter, and only while that counter is below
 * {@link #MAX_HITS} (a block hit over and over saturates it and is then only read): no lock, no access-order list,
 * no read buffer, no allocation. This is RocksDB's {@code HyperClockCache} design (a hit is one atomic on the slot;
 * eviction by a clock hand at insert that counts entries down) rather than its sharded {@code LRUCache} (a shard
 * mutex on every hit) or Caffeine's W-TinyLFU, whose hits record into striped read buffers drained, with the
 * access-order deques' maintenance, on the reading threads.
 *
 * <p>Layout: the cache is split into {@code 2^k} shards by the key's hash (at most 16, each at least
 * {@link #MIN_SHARD_BYTES}, as RocksDB's default shard bits keep shards at 512 KiB or more), each bounded by
 * {@code capacity / 2^k} bytes. A shard is an open-addressed, linearly probed table of immutable entries:
 *
 * <ul>
 *   <li>Readers take no lock: they read the shard's current table array (volatile) and probe its slots with
 *       acquire loads until they find the key or an empty slot. A slot only ever changes from empty to an
 *       entry, from an entry to a tombstone, or from a tombstone to an entry, so no probe chain is cut while a
 *       reader walks it; a rebuilt table is a new array, published whole, and a reader still on the old one sees
 *       a consistent (older) picture. A reader may miss an entry inserted concurrently (it then reads the block
 *       from the file and its put finds the entry present) or get a block evicted a moment earlier (blocks are
 *       immutable, and their table is retained by the caller): both harmless for a cache.</li>
 *   <li>Writers (put, eviction, {@link #evictFile}, {@link #clear}) hold the shard's monitor. Put first makes
 *       room: while the shard's charge plus the new block's would pass its bound, it advances the shard's clock
 *       hand over the slots: an entry with hits has its counter decremented (a block hit k times survives k
 *       passes of the hand), one at zero is evicted (its slot becomes a tombstone). After {@code MAX_HITS + 1}
 *       full sweeps without reaching the bound (readers kept counting) the hand evicts regardless, so a put's
 *       work is bounded. Then it inserts the entry with no hits (a block read once goes before one read again: a
 *       burst of one-off reads does not flush the hot blocks). A block larger than a shard is not cached. So each
 *       shard, and the whole, stays within its bound at every moment, not only when a put returns.</li>
 *   <li>The table is rebuilt (tombstones dropped, grown or shrunk to 4x the live entries) when live entries plus
 *       tombstones would pass half its slots, so probes stay short and an empty slot always ends them.</li>
 * </ul>
 *
 * <p>Several databases may share one bound: {@link #newView()} gives each its own key space over the same cache
 * (file numbers repeat between databases), so {@link #evictFile} and {@link #clear} touch only the view's blocks
 * while {@link #usedBytes()} and the capacity are the shared cache's.
 */
public final class BlockCache {
    /** Bytes charged per cached block on top of its contents (entry, Block object, array header, slot). */
    static final int PER_BLOCK_OVERHEAD = 96;

    /** The smallest shard the cache is split into (RocksDB's {@code min_shard_size}, 512 KiB). */
    static final long MIN_SHARD_BYTES = 512L << 10;

    /** At most {@code 2^MAX_SHARD_BITS} shards: enough to keep writers apart on the cores a JVM runs on. */
    static final int MAX_SHARD_BITS = 4;

    private static final int MIN_TABLE_LENGTH = 16;

    /**
     * The most hits an entry counts (a 2-bit counter, as RocksDB's clock caches keep a few bits per slot). One bit
     * (plain CLOCK) is LRU-like; a few bits let a block hit often outlive one hit once, which on a Zipfian access
     * pattern brings the hit ratio close to Caffeine's W-TinyLFU, where one bit stayed a point and a half below it.
     */
    static final int MAX_HITS = 3;

    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Entry[].class);

    private static final AtomicLong OWNERS = new AtomicLong();

    /** The slot of an evicted entry: probes continue past it; inserts may reuse it. */
    private static final Entry TOMBSTONE = new Entry(-1, -1, -1, 0, null, 0);

    private final long capacityBytes;
    private final Shard[] shards;
    private final int shardMask;
    /** The key space of this view. */
    private final long owner;

    public BlockCache(long capacityBytes) {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("block cache capacity must be > 0: " + capacityBytes);
        }
        this.capacityBytes = capacityBytes;
        int bits = 0;
        while (bits < MAX_SHARD_BITS && (capacityBytes >> (bits + 1)) >= MIN_SHARD_BYTES) {
            bits++;
        }
        this.shards = new Shard[1 << bits];
        long perShard = capacityBytes >> bits;
        for (int i = 0; i < shards.length; i++) {
            shards[i] = new Shard(perShard);
        }
        this.shardMask = shards.length - 1;
        this.owner = OWNERS.incrementAndGet();
    }

    private BlockCache(BlockCache shared) {
        this.capacityBytes = shared.capacityBytes;
        this.shards = shared.shards;
        this.shardMask = shared.shardMask;
        this.owner = OWNERS.incrementAndGet();
    }

    /** Another view of this cache's memory, with its own key space (for another database). */
    public BlockCache newView() {
        return new BlockCache(this);
    }

    /**
     * The cached block, or null. Lock-free and allocation-free; the only write is the entry's hit counter, and
     * only while it is below {@link #MAX_HITS}.
     */
    public Block get(long fileNumber, long offset) {
        long h = hash(owner, fileNumber, offset);
        Entry[] tab = shards[shardIndex(h)].table;
        int mask = tab.length - 1;
        for (int i = (int) h & mask; ; i = (i + 1) & mask) {
            Entry e = (Entry) SLOTS.getAcquire(tab, i);
            if (e == null) {
                return null;
            }
            if (e.offset == offset && e.fileNumber == fileNumber && e.owner == owner) {
                int hits = e.hits;
                if (hits < MAX_HITS) {
                    // A plain store: a lost or late increment only changes which block goes first.
                    e.hits = hits + 1;
                }
                return e.block;
            }
        }
    }

    /**
     * Caches {@code block} as (fileNumber, offset) of this view, unless that key is cached already (the block read
     * by another thread that missed at the same time: the cached one stays) or larger than a shard; evicts first
     * what the block needs of room in its shard.
     */
    public void put(long fileNumber, long offset, Block block) {
        long h = hash(owner, fileNumber, offset);
        shards[shardIndex(h)].put(new Entry(owner, fileNumber, offset, (int) h, block, charge(block)));
    }

    /** Drops every block of one table file (of this view). */
    public void evictFile(long fileNumber) {
        for (Shard s : shards) {
            s.removeIf(owner, fileNumber, true);
        }
    }

    /** Drops every block of this view. */
    public void clear() {
        for (Shard s : shards) {
            s.removeIf(owner, 0, false);
        }
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** Bytes charged for the cached blocks now (of every view). */
    public long usedBytes() {
        long sum = 0;
        for (Shard s : shards) {
            sum += s.used;
        }
        return sum;
    }

    /** Blocks cached now (of every view). */
    public long blockCount() {
        long sum = 0;
        for (Shard s : shards) {
            sum += s.count;
        }
        return sum;
    }

    /** Shards the capacity is split into (a power of two). */
    int shardCount() {
        return shards.length;
    }

    /** Bytes one cached block is charged. */
    static long charge(Block b) {
        return (long) b.size() + PER_BLOCK_OVERHEAD;
    }

    private int shardIndex(long h) {
        return (int) (h >>> 40) & shardMask;
    }

    /** A 64-bit mix of the key (murmur3's finalizer over a multiply-xor of the three parts). */
    static long hash(long owner, long fileNumber, long offset) {
        long h = offset * 0x9E3779B97F4A7C15L ^ fileNumber * 0xC2B2AE3D27D4EB4FL ^ owner * 0x165667B19E3779F9L;
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        h *= 0xC4CEB9FE1A85EC53L;
        h ^= h >>> 33;
        return h;
    }

    /** One cached block; immutable but for its hit counter. */
    private static final class Entry {
        final long owner;
        final long fileNumber;
        final long offset;
        /** The low 32 bits of the key's hash: the entry's home slot when a table is rebuilt. */
        final int hash;

        final Block block;
        final long charge;
        /** 0..MAX_HITS: incremented by hits, decremented by the clock hand (under the shard's monitor). */
        int hits;

        Entry(long owner, long fileNumber, long offset, int hash, Block block, long charge) {
            this.owner = owner;
            this.fileNumber = fileNumber;
            this.offset = offset;
            this.hash = hash;
            this.block = block;
            this.charge = charge;
        }
    }

    /** A part of the cache with its own bound, table, clock hand and monitor (see the class comment). */
    private static final class Shard {
        final long capacity;
        /** Read lock-free by get; replaced (never shrunk in place) under the monitor. */
        volatile Entry[] table = new Entry[MIN_TABLE_LENGTH];
        /** Written under the monitor; read by {@link #usedBytes()} / {@link #blockCount()} without it. */
        volatile long used;

        volatile int count;
        /** Under the monitor. */
        int tombstones;

        int hand;

        Shard(long capacity) {
            this.capacity = capacity;
        }

        synchronized void put(Entry e) {
            if (e.charge > capacity || contains(e)) {
                return; // larger than the shard (Caffeine evicts such an entry at once), or already cached
            }
            evict(capacity - e.charge);
            Entry[] tab = table;
            if (count + tombstones + 1 > tab.length >> 1) {
                tab = rebuild(count + 1);
            }
            int mask = tab.length - 1;
            int i = e.hash & mask;
            while (tab[i] != null && tab[i] != TOMBSTONE) {
                i = (i + 1) & mask;
            }
            if (tab[i] == TOMBSTONE) {
                tombstones--;
            }
            SLOTS.setRelease(tab, i, e);
            count = count + 1;
            used = used + e.charge;
        }

        private boolean contains(Entry e) {
            Entry[] tab = table;
            int mask = tab.length - 1;
            for (int i = e.hash & mask; ; i = (i + 1) & mask) {
                Entry x = tab[i];
                if (x == null) {
                    return false;
                }
                if (x != TOMBSTONE && x.offset == e.offset && x.fileNumber == e.fileNumber && x.owner == e.owner) {
                    return true;
                }
            }
        }

        /**
         * Advances the clock hand until the shard's charge is at most {@code limit} (see the class comment), so an
         * insert never takes the shard past its bound, even for a moment.
         */
        private void evict(long limit) {
            Entry[] tab = table;
            int mask = tab.length - 1;
            long steps = 0;
            long sweeps = (MAX_HITS + 1L) * tab.length;
            while (used > limit && count > 0) {
                int i = hand;
                hand = (i + 1) & mask;
                Entry x = tab[i];
                if (x != null && x != TOMBSTONE) {
                    if (x.hits > 0 && steps < sweeps) {
                        x.hits = x.hits - 1;
                    } else {
                        remove(tab, i, x);
                    }
                }
                steps++;
            }
        }

        private void remove(Entry[] tab, int i, Entry x) {
            SLOTS.setRelease(tab, i, TOMBSTONE);
            tombstones++;
            count = count - 1;
            used = used - x.charge;
        }

        /** Tombstones every entry of {@code owner} (and of {@code fileNumber} when {@code byFile}). */
        synchronized void removeIf(long owner, long fileNumber, boolean byFile) {
            Entry[] tab = table;
            for (int i = 0; i < tab.length; i++) {
                Entry x = tab[i];
                if (x != null && x != TOMBSTONE && x.owner == owner && (!byFile || x.fileNumber == fileNumber)) {
                    remove(tab, i, x);
                }
            }
            if (count == 0 && tombstones > 0) {
                rebuild(0);
            }
        }

        /**
         * Publishes a new table of at least {@link #MIN_TABLE_LENGTH} slots and at least 4x {@code live} holding
         * the live entries (no tombstones), each at its first free slot from its home; returns it.
         */
        private Entry[] rebuild(int live) {
            int length = MIN_TABLE_LENGTH;
            while (length < 4 * live) {
                length <<= 1;
            }
            Entry[] old = table;
            Entry[] tab = new Entry[length];
            int mask = length - 1;
            for (Entry x : old) {
                if (x != null && x != TOMBSTONE) {
                    int i = x.hash & mask;
                    while (tab[i] != null) {
                        i = (i + 1) & mask;
                    }
                    tab[i] = x;
                }
            }
            tombstones = 0;
            hand = 0;
            table = tab; // volatile write: publishes the filled array to readers
            return tab;
        }
    }
}
