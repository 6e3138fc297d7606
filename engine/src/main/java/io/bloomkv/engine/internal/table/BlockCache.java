package io.bloomkv.engine.internal.table;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A CLOCK cache with small hit counters (GCLOCK) of parsed data blocks shared by the tables of a database, bounded
 * by the blocks' bytes, keyed by (view, table file number, block offset), with TinyLFU's admission door in front of
 * it. Thread-safe. Blocks are on-heap (decompressed, restart array checked: {@link Block}), so there is no memory to
 * release: a dropped block is garbage once no reader holds it. A table's blocks are dropped when the table's last
 * reference is released ({@link #evictFile}).
 *
 * <p>The hit path writes no shared state except the slot's own hit counter, and only while that counter is below
 * {@link #MAX_HITS} (a block hit over and over saturates it and is then only read): no lock, no access-order list,
 * no read buffer, no allocation. This is RocksDB's {@code HyperClockCache} design (a hit is one atomic on the slot;
 * eviction by a clock hand at insert that counts entries down) rather than its sharded {@code LRUCache} (a shard
 * mutex on every hit) or Caffeine's W-TinyLFU, whose hits record into striped read buffers drained, with the
 * access-order deques' maintenance, on the reading threads.
 *
 * <p>Layout: the cache is split into {@code 2^k} shards by the key's hash (at most 16, each at least
 * {@link #MIN_SHARD_BYTES}, as RocksDB's default shard bits keep shards at 512 KiB or more), each bounded by
 * {@code capacity / 2^k} bytes. A shard is an open-addressed, linearly probed table kept as parallel arrays: a
 * 32-bit tag per slot (from the key's hash; or empty, or tombstone), the block, its hit counter and its charge. The
 * block carries its own key ({@link Block#isCachedAs}), so a probe compares tags in one dense array, loads a block
 * only where the tag matches, and a hit goes from the slot to the block with no entry object between them; the clock
 * hand counts hits down in the counters' array without loading any block.
 *
 * <ul>
 *   <li>Readers take no lock: they read the shard's current table (volatile) and probe its tags with acquire loads
 *       until they find the key or an empty slot. A slot only ever changes from empty to an entry, from an entry to a
 *       tombstone, or from a tombstone to an entry, so no probe chain is cut while a reader walks it; an entry's
 *       block is stored before its tag is (release), so a reader that matches the tag sees the block or a later
 *       state of the slot, and checks the block's key before returning it. A rebuilt table is new arrays, published
 *       whole, and a reader still on the old ones sees a consistent (older) picture. A reader may miss an entry
 *       inserted concurrently (it then reads the block from the file and its put finds the entry present) or get a
 *       block evicted a moment earlier (blocks are immutable, and their table is retained by the caller): both
 *       harmless for a cache.</li>
 *   <li>Writers (put, eviction, {@link #evictFile}, {@link #clear}) hold the shard's monitor. Put first makes
 *       room: while the shard's charge plus the new block's would pass its bound, it advances the shard's clock
 *       hand over the slots: an entry with hits has its counter decremented (a block hit k times survives k
 *       passes of the hand), one at zero is evicted (its slot becomes a tombstone). After {@code MAX_HITS + 1}
 *       full sweeps without reaching the bound (readers kept counting) the hand evicts regardless, so a put's
 *       work is bounded. Then it inserts the entry with no hits (a block read once goes before one read again: a
 *       burst of one-off reads does not flush the hot blocks). A block larger than a shard is not cached. So each
 *       shard, and the whole, stays within its bound at every moment, not only when a put returns.</li>
 *   <li>Admission (TinyLFU's doorkeeper, Einziger and Friedman): a put into a shard with room is admitted; into a
 *       full shard, only when the key was refused before since the door was last cleared, i.e. at its second miss
 *       within about one shard's worth of refusals. A block read once (most misses of a skewed workload, and every
 *       block of a broad scan) then neither evicts a block that is read again nor costs the insert; a block read
 *       twice gets in at its second miss. The door is a two-probe Bloom filter per shard, under its monitor.</li>
 *   <li>The table is rebuilt (tombstones dropped, grown or shrunk to 4x the live entries) when live entries plus
 *       tombstones would pass half its slots, so probes stay short and an empty slot always ends them.</li>
 * </ul>
 *
 * <p>Several databases may share one bound: {@link #newView()} gives each its own key space over the same cache
 * (file numbers repeat between databases), so {@link #evictFile} and {@link #clear} touch only the view's blocks
 * while {@link #usedBytes()} and the capacity are the shared cache's. A block is keyed once: offered under a second
 * key (another view, file or offset) it is cached as a copy sharing its contents.
 */
public final class BlockCache {
    /** Bytes charged per cached block on top of its contents (the Block object, array header, a slot's side arrays). */
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

    /** A slot's tag when it never held an entry: it ends every probe. */
    private static final int EMPTY = 0;
    /** A slot's tag after its entry was evicted: probes continue past it, inserts may reuse it. */
    private static final int TOMBSTONE = 1;

    private static final VarHandle TAGS = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle BLOCKS = MethodHandles.arrayElementVarHandle(Block[].class);

    private static final AtomicLong OWNERS = new AtomicLong();

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
     * The cached block, or null. Lock-free and allocation-free; the only write is the slot's hit counter, and only
     * while it is below {@link #MAX_HITS}.
     */
    public Block get(long fileNumber, long offset) {
        long h = hash(owner, fileNumber, offset);
        int tag = tag(h);
        Table t = shards[shardIndex(h)].table;
        int[] tags = t.tags;
        int mask = tags.length - 1;
        for (int i = tag & mask; ; i = (i + 1) & mask) {
            int x = (int) TAGS.getAcquire(tags, i);
            if (x == tag) {
                Block b = t.blocks[i]; // written before the tag's release store
                if (b != null && b.isCachedAs(owner, fileNumber, offset)) {
                    byte[] hits = t.hits;
                    int k = hits[i];
                    if (k < MAX_HITS) {
                        // A plain store: a lost or late increment only changes which block goes first.
                        hits[i] = (byte) (k + 1);
                    }
                    return b;
                }
            } else if (x == EMPTY) {
                return null;
            }
        }
    }

    /**
     * Caches {@code block} as (fileNumber, offset) of this view, unless that key is cached already (the block read
     * by another thread that missed at the same time: the cached one stays), the block is larger than a shard, or
     * the shard is full and the key does not pass its admission door (see the class comment); evicts first what the
     * block needs of room in its shard.
     */
    public void put(long fileNumber, long offset, Block block) {
        long h = hash(owner, fileNumber, offset);
        shards[shardIndex(h)].put(owner, fileNumber, offset, tag(h), block, true);
    }

    /**
     * The admission decision of a {@link #put} of a block of {@code size} bytes as (fileNumber, offset), asked before
     * the block is built (a reader that will not keep it decodes it into a buffer it reuses): true when the shard has
     * room for it or the door lets the key in, which then {@link #putAdmitted} caches; false when it is larger than a
     * shard or refused at the door (its key is recorded there, as a refused put's is).
     */
    public boolean admit(long fileNumber, long offset, int size) {
        long h = hash(owner, fileNumber, offset);
        return shards[shardIndex(h)].admit(tag(h), (long) size + PER_BLOCK_OVERHEAD);
    }

    /** {@link #put} of a block {@link #admit} admitted: not asked at the door again. */
    public void putAdmitted(long fileNumber, long offset, Block block) {
        long h = hash(owner, fileNumber, offset);
        shards[shardIndex(h)].put(owner, fileNumber, offset, tag(h), block, false);
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

    /** The slot tag of a key's hash: its low 32 bits, moved off {@link #EMPTY} and {@link #TOMBSTONE}; its home slot. */
    private static int tag(long h) {
        int t = (int) h;
        return t == EMPTY || t == TOMBSTONE ? 2 : t;
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

    /**
     * One open-addressed table of a shard: slot {@code i} is {@code tags[i]} (EMPTY, TOMBSTONE or the entry's tag),
     * {@code blocks[i]} (the block, which carries its own key), {@code hits[i]} and {@code charges[i]}. Parallel
     * arrays so that a probe compares tags in one dense array and loads a block only where its tag matches, and the
     * clock hand reads and counts down hits without loading any block.
     */
    private static final class Table {
        final int[] tags;
        final Block[] blocks;
        final byte[] hits;
        final int[] charges;

        Table(int length) {
            tags = new int[length];
            blocks = new Block[length];
            hits = new byte[length];
            charges = new int[length];
        }
    }

    /** A part of the cache with its own bound, table, clock hand, admission door and monitor (see the class comment). */
    private static final class Shard {
        final long capacity;
        /** Read lock-free by get; replaced (never shrunk in place) under the monitor. */
        volatile Table table = new Table(MIN_TABLE_LENGTH);
        /** Written under the monitor; read by {@link #usedBytes()} / {@link #blockCount()} without it. */
        volatile long used;

        volatile int count;
        /** Under the monitor. */
        int tombstones;

        int hand;
        /**
         * The admission door (TinyLFU's doorkeeper): a two-probe Bloom filter of the keys refused lately, under the
         * monitor. A put into a full shard is admitted only if its key is already in the door (it missed before, since
         * the last reset); otherwise its key is added and the block is not cached. Cleared after {@link #doorLimit}
         * refusals, so a key must miss twice within about one shard's worth of misses to get in.
         */
        long[] door;

        int doorAdds;
        /** Refusals until the door is cleared: the blocks the shard held at the last reset (0: not sized yet). */
        int doorLimit;

        Shard(long capacity) {
            this.capacity = capacity;
        }

        synchronized void put(long owner, long fileNumber, long offset, int tag, Block block, boolean door) {
            long charge = charge(block);
            if (charge > capacity || contains(owner, fileNumber, offset, tag)) {
                return; // larger than the shard (Caffeine evicts such an entry at once), or already cached
            }
            if (door && used + charge > capacity && !passDoor(tag)) {
                return; // full, and the key was not refused lately: a one-off read does not push out a cached block
            }
            Block b = block.offset() == offset && block.claimCacheKey(owner, fileNumber)
                    ? block
                    : keyedCopy(block, owner, fileNumber, offset);
            evict(capacity - charge);
            Table t = table;
            if (count + tombstones + 1 > t.tags.length >> 1) {
                t = rebuild(count + 1);
            }
            int[] tags = t.tags;
            int mask = tags.length - 1;
            int i = tag & mask;
            while (tags[i] != EMPTY && tags[i] != TOMBSTONE) {
                i = (i + 1) & mask;
            }
            if (tags[i] == TOMBSTONE) {
                tombstones--;
            }
            t.blocks[i] = b;
            t.hits[i] = 0;
            t.charges[i] = (int) charge;
            TAGS.setRelease(tags, i, tag); // publishes the block (and its key) to readers that match the tag
            count = count + 1;
            used = used + charge;
        }

        private static Block keyedCopy(Block block, long owner, long fileNumber, long offset) {
            Block copy = block.withOffset(offset);
            copy.claimCacheKey(owner, fileNumber);
            return copy;
        }

        private boolean contains(long owner, long fileNumber, long offset, int tag) {
            Table t = table;
            int[] tags = t.tags;
            int mask = tags.length - 1;
            for (int i = tag & mask; ; i = (i + 1) & mask) {
                int x = tags[i];
                if (x == EMPTY) {
                    return false;
                }
                if (x == tag && t.blocks[i].isCachedAs(owner, fileNumber, offset)) {
                    return true;
                }
            }
        }

        /**
         * The door's answer for a put into the full shard: true (admit) when the tag was refused since the last reset;
         * else records it and answers false. The door is sized at each reset to about 16 bits per block the shard
         * holds (two probes: under 2% false admissions at its fill).
         */
        synchronized boolean admit(int tag, long charge) {
            return charge <= capacity && (used + charge <= capacity || passDoor(tag));
        }

        private boolean passDoor(int tag) {
            // One branch for the first reset (doorLimit is 0 until the shard is first full) and every later one (the
            // refusals reached the limit at the previous call): the first is taken within the shard's first few
            // full-cache reads, so the branch is seen both ways before C2 compiles the read path it is inlined into.
            // A second branch for the later resets would be one taken only after doorLimit refusals, likely after
            // that compile, and its uncommon trap would deoptimize the compiled read path (readPointBlock).
            if (doorAdds >= doorLimit) {
                resetDoor();
            }
            long[] d = door;
            int bits = d.length << 6;
            int a = tag & (bits - 1);
            int b = (tag * 0x9E3779B9 >>> 7) & (bits - 1);
            if ((d[a >>> 6] & 1L << a) != 0 && (d[b >>> 6] & 1L << b) != 0) {
                return true;
            }
            d[a >>> 6] |= 1L << a;
            d[b >>> 6] |= 1L << b;
            doorAdds++; // the door is cleared at the next call once this reaches doorLimit
            return false;
        }

        private void resetDoor() {
            int entries = Math.max(count, 64);
            int words = Integer.highestOneBit(Math.max(1, entries * 16 / 64 - 1)) << 1;
            if (door != null && door.length == words) {
                java.util.Arrays.fill(door, 0);
            } else {
                door = new long[words];
            }
            doorAdds = 0;
            doorLimit = entries;
        }

        /**
         * Advances the clock hand until the shard's charge is at most {@code limit} (see the class comment), so an
         * insert never takes the shard past its bound, even for a moment.
         */
        private void evict(long limit) {
            Table t = table;
            int[] tags = t.tags;
            byte[] hits = t.hits;
            int mask = tags.length - 1;
            long steps = 0;
            long sweeps = (MAX_HITS + 1L) * tags.length;
            while (used > limit && count > 0) {
                int i = hand;
                hand = (i + 1) & mask;
                int x = tags[i];
                if (x != EMPTY && x != TOMBSTONE) {
                    int k = hits[i];
                    if (k > 0 && steps < sweeps) {
                        hits[i] = (byte) (k - 1);
                    } else {
                        remove(t, i);
                    }
                }
                steps++;
            }
        }

        private void remove(Table t, int i) {
            TAGS.setRelease(t.tags, i, TOMBSTONE);
            t.blocks[i] = null; // a reader that matched the tag before sees null or the block: a miss or a late hit
            tombstones++;
            count = count - 1;
            used = used - t.charges[i];
        }

        /** Tombstones every entry of {@code owner} (and of {@code fileNumber} when {@code byFile}). */
        synchronized void removeIf(long owner, long fileNumber, boolean byFile) {
            Table t = table;
            int[] tags = t.tags;
            for (int i = 0; i < tags.length; i++) {
                int x = tags[i];
                if (x != EMPTY && x != TOMBSTONE) {
                    Block b = t.blocks[i];
                    if (b.cacheOwner() == owner && (!byFile || b.cacheFile() == fileNumber)) {
                        remove(t, i);
                    }
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
        private Table rebuild(int live) {
            int length = MIN_TABLE_LENGTH;
            while (length < 4 * live) {
                length <<= 1;
            }
            Table old = table;
            Table t = new Table(length);
            int mask = length - 1;
            for (int j = 0; j < old.tags.length; j++) {
                int x = old.tags[j];
                if (x != EMPTY && x != TOMBSTONE) {
                    int i = x & mask;
                    while (t.tags[i] != EMPTY) {
                        i = (i + 1) & mask;
                    }
                    t.tags[i] = x;
                    t.blocks[i] = old.blocks[j];
                    t.hits[i] = old.hits[j];
                    t.charges[i] = old.charges[j];
                }
            }
            tombstones = 0;
            hand = 0;
            table = t; // volatile write: publishes the filled arrays to readers
            return t;
        }
    }
}
