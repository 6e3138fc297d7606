package io.bloomkv.engine;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.fs.FileSystem;

/**
 * Settings of a {@link Db}, with fluent setters: {@code Options.defaults().bitsPerKey(12).syncMode(SyncMode.GROUP_COMMIT)}.
 * {@link Db#open} copies the options, so changing them afterwards has no effect on an open database.
 * A setter given a value out of range throws {@link InvalidArgumentException}.
 *
 * <h2>Write stalls</h2>
 * A full memtable becomes immutable and is flushed by a background thread. When
 * {@link #maxImmutableMemtables} immutable memtables already wait, a writer that needs a fresh
 * memtable blocks until a flush finishes. Level 0 adds two thresholds (LevelDB's): from
 * {@link #l0SlowdownWritesTrigger} tables on, each write batch is delayed by 1 ms once, letting
 * compaction catch up; from {@link #l0StopWritesTrigger} tables on, writers that need a fresh
 * memtable block until compaction brings level 0 below it. Writes stall, they never fail for this.
 */
public final class Options {
    private FilterKind filterKind = FilterKind.BLOCKED;
    private double bitsPerKey = 10;
    private FilterAllocation filterAllocation = FilterAllocation.UNIFORM;
    private FilterBudget filterBudget = FilterBudget.FALSE_POSITIVE_RATE;
    private int ribbonFromLevel = -1;
    private int prefixLength;
    private double rangeFilterBitsPerKey;
    private long writeBufferSize = 96L << 20;
    private int maxImmutableMemtables = 1;
    private int blockSize = 4096;
    private int blockRestartInterval = 16;
    private long blockCacheSize = 32L << 20;
    private SharedBlockCache blockCache;
    private WriteBufferManager writeBufferManager;
    private long filterMemoryBudget;
    private int filterPartitionSize = 4096;
    private SharedFilterBudget sharedFilterBudget;
    private boolean manualWalFlush;
    private boolean useMmapWal = true;
    private boolean disableWal;
    private SyncMode syncMode = SyncMode.NONE;
    private FileSystem fileSystem;
    private boolean createIfMissing = true;
    private boolean errorIfExists = false;
    private boolean readOnly = false;
    private boolean autoCompaction = true;
    private int numLevels = 7;
    private int l0CompactionTrigger = 4;
    private int l0SlowdownWritesTrigger = 20;
    private int l0StopWritesTrigger = 36;
    private long targetFileSize = 64L << 20;
    private int tablePartitionPrefixLength = 0;
    private long maxBytesForLevelBase = 512L << 20;
    private int levelSizeMultiplier = 10;
    private boolean dynamicLevelBytes = true;
    private double memtableFilterBitsPerKey = 10;
    private boolean memtablePointIndex = true;
    private Compression compression = Compression.LZ4;
    private Compression bottommostCompression; // null: same as compression
    private boolean useDirectReads;
    private boolean useMmapReads = true;
    private java.util.List<EventListener> listeners = java.util.List.of();
    private long rateLimiterBytesPerSecond;
    private RateLimiter sharedRateLimiter;
    private long bytesPerSync;
    private boolean useDirectWritesForBulkLoad = false;
    // RocksDB-semantics features (MergeOperator, ...): null/zero = off.
    private MergeOperator mergeOperator;
    private CompactionFilter compactionFilter;
    // TTL and periodic compaction (issue 39): null = off; the clock both read.
    private java.time.Duration ttl;
    private java.time.Duration periodicCompaction;
    private java.time.Clock clock = java.time.Clock.systemUTC();

    private Options() {}

    /**
     * The defaults: BLOCKED filters at 10 bits per key, 96 MiB write buffer (1 immutable), 4 KiB blocks, 32 MiB block
     * cache, SyncMode.NONE, level sizes computed from the last level upward over a 512 MiB base with a
     * multiplier of 10, 64 MiB tables, level-0 triggers 4 / 20 / 36. docs/user-guide.md ("Why these defaults")
     * gives the reason for each.
     */
    public static Options defaults() {
        return new Options();
    }

    /** An independent copy. */
    public Options copy() {
        Options o = new Options();
        o.filterKind = filterKind;
        o.bitsPerKey = bitsPerKey;
        o.filterAllocation = filterAllocation;
        o.filterBudget = filterBudget;
        o.ribbonFromLevel = ribbonFromLevel;
        o.prefixLength = prefixLength;
        o.rangeFilterBitsPerKey = rangeFilterBitsPerKey;
        o.writeBufferSize = writeBufferSize;
        o.maxImmutableMemtables = maxImmutableMemtables;
        o.blockSize = blockSize;
        o.blockRestartInterval = blockRestartInterval;
        o.blockCacheSize = blockCacheSize;
        o.blockCache = blockCache;
        o.writeBufferManager = writeBufferManager;
        o.filterMemoryBudget = filterMemoryBudget;
        o.filterPartitionSize = filterPartitionSize;
        o.sharedFilterBudget = sharedFilterBudget;
        o.manualWalFlush = manualWalFlush;
        o.useMmapWal = useMmapWal;
        o.disableWal = disableWal;
        o.syncMode = syncMode;
        o.fileSystem = fileSystem;
        o.createIfMissing = createIfMissing;
        o.errorIfExists = errorIfExists;
        o.readOnly = readOnly;
        o.autoCompaction = autoCompaction;
        o.numLevels = numLevels;
        o.l0CompactionTrigger = l0CompactionTrigger;
        o.l0SlowdownWritesTrigger = l0SlowdownWritesTrigger;
        o.l0StopWritesTrigger = l0StopWritesTrigger;
        o.targetFileSize = targetFileSize;
        o.tablePartitionPrefixLength = tablePartitionPrefixLength;
        o.maxBytesForLevelBase = maxBytesForLevelBase;
        o.levelSizeMultiplier = levelSizeMultiplier;
        o.dynamicLevelBytes = dynamicLevelBytes;
        o.memtableFilterBitsPerKey = memtableFilterBitsPerKey;
        o.memtablePointIndex = memtablePointIndex;
        o.compression = compression;
        o.bottommostCompression = bottommostCompression;
        o.useDirectReads = useDirectReads;
        o.useMmapReads = useMmapReads;
        o.bytesPerSync = bytesPerSync;
        o.useDirectWritesForBulkLoad = useDirectWritesForBulkLoad;
        o.listeners = listeners;
        o.rateLimiterBytesPerSecond = rateLimiterBytesPerSecond;
        o.sharedRateLimiter = sharedRateLimiter;
        o.mergeOperator = mergeOperator;
        o.compactionFilter = compactionFilter;
        o.ttl = ttl;
        o.periodicCompaction = periodicCompaction;
        o.clock = clock;
        return o;
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new InvalidArgumentException(message);
        }
    }

    /**
     * Filter kind of every new table (above {@link #ribbonFromLevel}). Default {@link FilterKind#BLOCKED}. COUNTING is
     * not allowed (tables are immutable). RIBBON here makes every table RIBBON, at Bloom-equivalent bits per key.
     */
    public Options filterKind(FilterKind kind) {
        check(kind != null, "filterKind must not be null");
        check(kind != FilterKind.COUNTING, "COUNTING filters are for mutable sets, not tables");
        this.filterKind = kind;
        return this;
    }

    public FilterKind filterKind() {
        return filterKind;
    }

    /** Filter bits per key of every new table, in [0, 64]; 0 writes tables without a filter. Default 10. */
    public Options bitsPerKey(double bits) {
        check(bits >= 0 && bits <= 64 && !Double.isNaN(bits), "bitsPerKey must be in [0, 64]: " + bits);
        this.bitsPerKey = bits;
        return this;
    }

    public double bitsPerKey() {
        return bitsPerKey;
    }

    /** How {@link #bitsPerKey} is spread over the levels. Default {@link FilterAllocation#UNIFORM}. */
    public Options filterAllocation(FilterAllocation allocation) {
        check(allocation != null, "filterAllocation must not be null");
        this.filterAllocation = allocation;
        return this;
    }

    public FilterAllocation filterAllocation() {
        return filterAllocation;
    }

    /**
     * What {@link #bitsPerKey} holds fixed for RIBBON tables: their false-positive rate (the default,
     * {@link FilterBudget#FALSE_POSITIVE_RATE}: Bloom-equivalent bits, as in RocksDB, ~30% less memory) or their memory
     * ({@link FilterBudget#MEMORY}: the same bits per key as a Bloom table, ~8x fewer false positives at 10 bits).
     */
    public Options filterBudget(FilterBudget budget) {
        check(budget != null, "filterBudget must not be null");
        this.filterBudget = budget;
        return this;
    }

    public FilterBudget filterBudget() {
        return filterBudget;
    }

    /**
     * Tables of {@code level} and every deeper level get {@link FilterKind#RIBBON} filters, the levels above keep
     * {@link #filterKind()} (RocksDB's {@code NewRibbonFilterPolicy(bits, bloom_before_level)}): the deep levels hold
     * most keys and are asked least, so the static filter's ~30% smaller memory pays there and its several times
     * costlier construction (tables are rebuilt by compaction) is spent where it saves most. {@code -1} (the default)
     * turns it off; {@code 0} makes every table RIBBON. A RIBBON table gets the bits per key at which RIBBON reaches
     * the rate BLOCKED has at {@link #bitsPerKey} (or at the level's {@link FilterAllocation#MONKEY} share): "bits per
     * key" stays the Bloom-equivalent budget, as in RocksDB; under {@link FilterBudget#MEMORY} it spends those bits
     * instead, for a lower rate.
     */
    public Options ribbonFromLevel(int level) {
        check(level >= -1, "ribbonFromLevel must be -1 (off) or a level >= 0: " + level);
        this.ribbonFromLevel = level;
        return this;
    }

    /**
     * A fixed-length prefix extractor (RocksDB's {@code NewFixedPrefixTransform}): every new table's filter also holds
     * the first {@code bytes} bytes of each of its keys that is at least that long, next to the whole keys (one filter,
     * as RocksDB's whole-key + prefix filtering), so a {@link ReadOptions#prefixSameAsStart} seek skips tables
     * without the prefix. 0 (the default) turns it off. Each table records the length it was written with
     * (property {@code bloomkv.filter.prefix.length}); a table written with another length, or none, is never
     * skipped (it fails open), so the length may change between opens.
     */
    public Options prefixLength(int bytes) {
        check(bytes >= 0 && bytes <= Db.MAX_KEY_SIZE, "prefixLength must be in [0, " + Db.MAX_KEY_SIZE + "]: " + bytes);
        this.prefixLength = bytes;
        return this;
    }

    /**
     * Bits per key of each new table's RANGE filter (bloom's {@code RangeFilter}: Grafite over order-preserving windows
     * of the keys; docs/filters.md "Range filters"); 0 (the default) writes none. A bounded iterator's seeks
     * ({@link ReadOptions#iterateUpperBound} for {@link DbIterator#seek}, {@link ReadOptions#iterateLowerBound} for
     * {@link DbIterator#seekForPrev}) skip, before touching its index, every table whose range filter says the range
     * [target, bound] holds no key; an empty range of ℓ values passes a table with probability at most ℓ / 2^(B-2).
     * Values in (0, 2) are rejected (the filter needs 2 bits per key for its Elias–Fano upper bits), as are values above 60.
     * Each table records its own setting; tables written without one are never skipped, so it may change between opens.
     */
    public Options rangeFilterBitsPerKey(double bits) {
        check(bits == 0 || (bits >= 2 && bits <= 60), "rangeFilterBitsPerKey must be 0 or in [2, 60]: " + bits);
        this.rangeFilterBitsPerKey = bits;
        return this;
    }

    public double rangeFilterBitsPerKey() {
        return rangeFilterBitsPerKey;
    }

    public int prefixLength() {
        return prefixLength;
    }

    /** The first RIBBON level, -1 when {@link #ribbonFromLevel(int)} is off. */
    public int ribbonFromLevel() {
        return ribbonFromLevel;
    }

    /**
     * Bytes a memtable takes (its entries laid out flat: links, lengths, keys, values) before it is frozen and flushed,
     * at least 4 KiB. Default 96 MiB: ~147 bytes per 16-byte key with a 100-byte value, so ~685,000 such entries and
     * ~84 MB tables; a 10M-key load writes 2.10x its data at 96 MiB against 2.65x at 64 MiB (docs/user-guide.md, "Why
     * these defaults").
     */
    public Options writeBufferSize(long bytes) {
        check(bytes >= 4096, "writeBufferSize must be >= 4096: " + bytes);
        this.writeBufferSize = bytes;
        return this;
    }

    public long writeBufferSize() {
        return writeBufferSize;
    }

    /** Immutable memtables allowed to wait for a flush before writers stall, at least 1. Default 1 (RocksDB's max_write_buffer_number 2). */
    public Options maxImmutableMemtables(int n) {
        check(n >= 1, "maxImmutableMemtables must be >= 1: " + n);
        this.maxImmutableMemtables = n;
        return this;
    }

    public int maxImmutableMemtables() {
        return maxImmutableMemtables;
    }

    /** Target uncompressed size of a data block, in [256, 4 MiB]. Default 4096. */
    public Options blockSize(int bytes) {
        check(bytes >= 256 && bytes <= (4 << 20), "blockSize must be in [256, 4 MiB]: " + bytes);
        this.blockSize = bytes;
        return this;
    }

    public int blockSize() {
        return blockSize;
    }

    /** Keys between restart points of a data block, at least 1. Default 16. */
    public Options blockRestartInterval(int n) {
        check(n >= 1, "blockRestartInterval must be >= 1: " + n);
        this.blockRestartInterval = n;
        return this;
    }

    public int blockRestartInterval() {
        return blockRestartInterval;
    }

    /**
     * How the data and index blocks of new tables are compressed (a block that compression does not
     * shrink by at least 1/8 is stored as-is). Default {@link Compression#LZ4}, chosen by measurement
     * (docs/operations.md, "Compression: why LZ4 by default"): on values with repetition it stores about what
     * RocksDB's default Snappy stores, and on incompressible values every block stays raw and a table whose data
     * blocks all stayed raw is read as an uncompressed one (from the mapping, without the block cache), so it costs
     * those reads nothing. Flushes and compactions into any level but the bottommost use it; see
     * {@link #bottommostCompression}. Tables keep the compression they were written with, so it may change between
     * opens.
     */
    public Options compression(Compression c) {
        check(c != null, "compression must not be null");
        this.compression = c;
        return this;
    }

    public Compression compression() {
        return compression;
    }

    /**
     * Compression of tables a compaction writes into the bottommost level: its output level when no
     * deeper level holds a table (as RocksDB's {@code bottommost_compression}; flushes into level 0 always
     * use {@link #compression}). Default: the same as {@link #compression}. Most data lives in the
     * bottommost level, so a stronger codec there (ZSTD) saves the most space for the least CPU.
     */
    public Options bottommostCompression(Compression c) {
        check(c != null, "bottommostCompression must not be null");
        this.bottommostCompression = c;
        return this;
    }

    public Compression bottommostCompression() {
        return bottommostCompression != null ? bottommostCompression : compression;
    }

    /**
     * Read table files with O_DIRECT, bypassing the OS page cache (RocksDB's {@code use_direct_reads}):
     * every data block that misses the block cache is a device read of the block-aligned window around
     * it. Index, properties and filters are read once, at table open, and kept in memory as usual.
     * {@link Db#open} refuses with {@link InvalidArgumentException} where the file system (or
     * {@link #fileSystem}) does not support direct reads. Writes are unaffected. Default false.
     */
    public Options useDirectReads(boolean direct) {
        this.useDirectReads = direct;
        return this;
    }

    public boolean useDirectReads() {
        return useDirectReads;
    }

    /**
     * Read table files through a read-only memory mapping of each (LevelDB's table reads, RocksDB's
     * {@code allow_mmap_reads}): a data block that misses the block cache is copied out of the mapping, with no system
     * call, instead of read with {@code pread} (a system call per block). The blocks of a mapped table written without
     * compression skip the block cache, as LevelDB's do: the mapping is their cache, and a copy out of it costs less
     * than a cache insert (docs/operations.md, "Mapped reads"; the measurements are in bench/RESULTS.md). A table whose
     * file cannot be mapped (a {@link #fileSystem} without mapped reads, the process's mapping limit) is read with
     * {@code pread}. Ignored under {@link #useDirectReads}, which bypasses the page cache a mapping reads from. Default
     * true.
     */
    public Options useMmapReads(boolean mmap) {
        this.useMmapReads = mmap;
        return this;
    }

    public boolean useMmapReads() {
        return useMmapReads;
    }

    /** Bytes of the block cache shared by all tables; 0 disables it. Default 32 MiB. */
    public Options blockCacheSize(long bytes) {
        check(bytes >= 0, "blockCacheSize must be >= 0: " + bytes);
        this.blockCacheSize = bytes;
        return this;
    }

    public long blockCacheSize() {
        return blockCacheSize;
    }

    /**
     * A block cache shared with other databases (one memory bound for all of them); when set,
     * {@link #blockCacheSize(long)} is ignored. Default null: the database has its own cache.
     */
    public Options blockCache(SharedBlockCache cache) {
        this.blockCache = cache;
        return this;
    }

    public SharedBlockCache blockCache() {
        return blockCache;
    }

    /**
     * Bytes the database's table filters may take, point and range filters together; 0 (the default) means no bound:
     * every table's filter is resident off-heap for the table's life. With a bound, the filters of level 0 and then
     * of each level down are pinned (resident) while they take at most half the budget; the other tables' filters
     * (the deepest levels) are loaded on demand through an off-heap cache holding the rest of the budget (W-TinyLFU
     * eviction). Tables written with a budget set have partitioned filters (engine/FORMAT.md "Partitioned filter"):
     * every filter larger than one partition ({@link #filterPartitionSize(int)}) is cut into partitions plus a small
     * top-level index, which stays resident (charged to the pinned half); a get loads only the one partition its key
     * hashes to, so even a table whose filter is far larger than the cache share is filtered. A table read through its
     * mapping ({@link #useMmapReads(boolean)}, the default) does not copy partitions into the cache at all: a get
     * probes the partition where it lies in the mapping, its checksums verified at its first probe after the table
     * opened (one bit a partition, charged with the top-level index); the mapped pages are the operating system's page
     * cache, as a mapped table's data blocks are, not filter memory. A whole filter (a table
     * written without a budget) larger than the cache share is not loaded, and its table is read without a filter (a
     * whole-filter read per get would cost more than it saves); compactions rewrite such tables partitioned. Pinned
     * plus cached filter bytes, top-level indexes included, never exceed the budget ({@code bloomkv.filter-memory},
     * {@link Stats#filterMemoryBytes()}). A range filter is loaded at open only while it fits the pinned half. A
     * cached filter or partition that fails its checksum when loaded is reported ({@link TableInfo},
     * {@code filterProblem}) and the gets it would answer read the table (fail open), as an unbounded table's corrupt
     * filter is. RocksDB's counterpart: {@code cache_index_and_filter_blocks} and {@code partition_filters} with
     * {@code pin_l0_filter_and_index_blocks_in_cache}. Ignored when {@link #filterMemoryBudget(SharedFilterBudget)}
     * is set.
     *
     * @throws InvalidArgumentException if {@code bytes < 0}
     */
    public Options filterMemoryBudget(long bytes) {
        check(bytes >= 0, "filterMemoryBudget must be >= 0: " + bytes);
        this.filterMemoryBudget = bytes;
        return this;
    }

    public long filterMemoryBudget() {
        return filterMemoryBudget;
    }

    /**
     * Target bytes of one partition of a partitioned filter, written by tables of a database with a filter memory
     * budget (RocksDB's {@code metadata_block_size}); default 4096. Smaller partitions waste less of the cache on
     * keys a workload does not ask for, and cost a larger top-level index (20 bytes a partition, resident).
     *
     * @throws InvalidArgumentException unless {@code bytes} is in [64, 1 MiB]
     */
    public Options filterPartitionSize(int bytes) {
        check(bytes >= 64 && bytes <= (1 << 20), "filterPartitionSize must be in [64, 1048576]: " + bytes);
        this.filterPartitionSize = bytes;
        return this;
    }

    public int filterPartitionSize() {
        return filterPartitionSize;
    }

    /**
     * A filter memory budget shared with other databases of this JVM (one bound for all of their filters, like
     * {@link #blockCache(SharedBlockCache)} for blocks); when set, {@link #filterMemoryBudget(long)} is ignored.
     * Default null.
     */
    public Options filterMemoryBudget(SharedFilterBudget budget) {
        this.sharedFilterBudget = budget;
        return this;
    }

    public SharedFilterBudget sharedFilterBudget() {
        return sharedFilterBudget;
    }

    /**
     * Listeners told of flushes, compactions, table files, write stalls and background errors (RocksDB's
     * {@code listeners}); replaces those set before. Default none. See {@link EventListener} for the threads.
     *
     * @throws InvalidArgumentException if the array or one of them is null
     */
    public Options listeners(EventListener... listeners) {
        check(listeners != null, "listeners must not be null");
        for (EventListener l : listeners) {
            check(l != null, "a listener is null");
        }
        this.listeners = java.util.List.of(listeners);
        return this;
    }

    /** The listeners (unmodifiable). */
    public java.util.List<EventListener> listeners() {
        return listeners;
    }

    /**
     * Caps the bytes per second that flushes and compactions write to table files, shared by both (RocksDB's
     * {@code NewGenericRateLimiter(rate_bytes_per_sec)}): a token bucket refilled continuously, at most one second
     * of tokens banked. Foreground writes (the WAL) are never limited. 0 (the default) means no limit. Each database
     * opened with these options gets its own limiter at this rate, fixed while it runs; to change the rate while the
     * database runs, or to share one budget between databases, pass a {@link RateLimiter} to
     * {@link #rateLimiter(RateLimiter)} instead. Ignored when that is set.
     *
     * @throws InvalidArgumentException if negative
     */
    public Options rateLimiter(long bytesPerSecond) {
        check(bytesPerSecond >= 0, "rateLimiter bytes per second must be >= 0, got " + bytesPerSecond);
        this.rateLimiterBytesPerSecond = bytesPerSecond;
        return this;
    }

    /** {@link #rateLimiter(long)}'s bytes per second, 0 when unlimited. */
    public long rateLimiter() {
        return rateLimiterBytesPerSecond;
    }

    /**
     * A rate limiter for flushes' and compactions' table writes that the caller keeps (RocksDB's
     * {@code Options.setRateLimiter}): shared by every database given the same instance (one budget for all of
     * them), and its rate can be changed while they run with {@link RateLimiter#setBytesPerSecond(long)}. When set,
     * {@link #rateLimiter(long)} is ignored. Default null.
     */
    public Options rateLimiter(RateLimiter limiter) {
        this.sharedRateLimiter = limiter;
        return this;
    }

    /** {@link #rateLimiter(RateLimiter)}'s limiter, or null. */
    public RateLimiter sharedRateLimiter() {
        return sharedRateLimiter;
    }

    /**
     * A memtable budget shared with other databases (RocksDB's {@code write_buffer_manager}): a write
     * freezes this database's memtable early when the databases sharing it hold too much memtable memory
     * (see {@link WriteBufferManager}). Default null: only {@link #writeBufferSize(long)} bounds the memtable.
     */
    public Options writeBufferManager(WriteBufferManager manager) {
        this.writeBufferManager = manager;
        return this;
    }

    public WriteBufferManager writeBufferManager() {
        return writeBufferManager;
    }

    /**
     * Under {@link SyncMode#NONE}: keep WAL records in the write buffer of the log file (written out
     * when it fills, at {@link Db#syncWal()}, at a memtable switch and at close) instead of handing
     * each write to the operating system (RocksDB's {@code manual_wal_flush}). Saves a system call per
     * write; a process crash may then lose the writes since the last {@code syncWal}, as a power loss
     * may under NONE. For callers that sync at their own commit points (the Kafka Streams store).
     * Default false.
     */
    public Options manualWalFlush(boolean manual) {
        this.manualWalFlush = manual;
        return this;
    }

    public boolean manualWalFlush() {
        return manualWalFlush;
    }

    /**
     * Write the write-ahead log through a shared memory mapping of the file (RocksDB's {@code allow_mmap_writes}, for
     * the log only): a write's record is copied into the OS page cache, with no system call, instead of handed over
     * with a {@code write(2)} per write. The guarantees are those of {@link #syncMode} unchanged: the record is in the
     * page cache when the write returns, so a process crash (kill -9) loses no acknowledged write; a sync is an
     * {@code fdatasync(2)} of the log. The log's space is allocated on the device a megabyte ahead of the writes (a
     * full disk fails the write that needs the next megabyte, with a {@link BloomKvIOException}); a log left by a crash
     * may end in zeros, which recovery reads as the end of the log (docs/operations.md, "The write-ahead log"). Linux
     * with native access only (where {@link #fileSystem}'s {@code supportsMappedWrites}); elsewhere, and with
     * {@link #disableWal}, the log is written with {@code write(2)}. Default true.
     */
    public Options useMmapWal(boolean mmap) {
        this.useMmapWal = mmap;
        return this;
    }

    public boolean useMmapWal() {
        return useMmapWal;
    }

    /**
     * Writes go to the memtable only, never to a write-ahead log (RocksDB's {@code WriteOptions.disableWAL}, which
     * Kafka Streams' RocksDB store sets on every write: its changelog topic, not a log on disk, is what a crash is
     * restored from). Saves the WAL record's encoding, checksum and copy on every write.
     *
     * <p>Crash semantics: a write becomes durable when the memtable holding it is written to a level-0 table
     * (when it fills, at {@link Db#flush()}, at {@link Db#close()}, which flushes the memtable, before a
     * {@link Db#checkpoint} and before an ingestion that overlaps it). A crash, of the process or of the machine, loses
     * every write not yet in a table, and only those: memtables are flushed one at a time, oldest first, each
     * recorded by a synced MANIFEST record, so what survives is always a prefix of the writes in their order. An
     * {@link Db#ingest} is durable when it returns; one that overlaps nothing in the memtable does not flush it, so a
     * crash can keep the ingested keys and lose memtable writes made before them.
     * {@link Db#syncWal()} then makes nothing durable (there is no log to sync) and {@link #manualWalFlush} has no
     * effect. A database may be reopened with or without a WAL: a WAL left by an earlier run is replayed into tables
     * at open, as always. Default false.
     *
     * @see SyncMode
     */
    public Options disableWal(boolean disable) {
        this.disableWal = disable;
        return this;
    }

    public boolean disableWal() {
        return disableWal;
    }

    /**
     * When writes are fsynced. Default {@link SyncMode#NONE}, the only mode allowed with {@link #disableWal} (a
     * synced write needs a log to sync; RocksDB refuses {@code sync} with {@code disableWAL} the same way).
     */
    public Options syncMode(SyncMode mode) {
        check(mode != null, "syncMode must not be null");
        this.syncMode = mode;
        return this;
    }

    public SyncMode syncMode() {
        return syncMode;
    }

    /** The file system every file operation goes through. Default {@link FileSystem#disk()}. */
    public Options fileSystem(FileSystem fs) {
        check(fs != null, "fileSystem must not be null");
        this.fileSystem = fs;
        return this;
    }

    public FileSystem fileSystem() {
        return fileSystem != null ? fileSystem : FileSystem.disk();
    }

    /** Create the database when the directory does not hold one. Default true. */
    public Options createIfMissing(boolean create) {
        this.createIfMissing = create;
        return this;
    }

    public boolean createIfMissing() {
        return createIfMissing;
    }

    /** Fail with {@link InvalidArgumentException} when the database already exists. Default false. */
    public Options errorIfExists(boolean error) {
        this.errorIfExists = error;
        return this;
    }

    public boolean errorIfExists() {
        return errorIfExists;
    }

    /**
     * Open for reading only (Pebble's ReadOnly, RocksDB's OpenForReadOnly): the open never writes
     * to the directory (no LOCK taken, no WAL replayed into a table, no new WAL or MANIFEST, no
     * file deleted, no flush or compaction), WAL contents are replayed into memory so reads see
     * every acknowledged write, and every call that would write throws {@link DbReadOnlyException}.
     * The database must exist. Default false.
     */
    public Options readOnly(boolean readOnly) {
        this.readOnly = readOnly;
        return this;
    }

    public boolean readOnly() {
        return readOnly;
    }

    /** Run compactions in the background when levels overflow. Default true; {@link Db#compactRange} works either way. */
    public Options autoCompaction(boolean auto) {
        this.autoCompaction = auto;
        return this;
    }

    public boolean autoCompaction() {
        return autoCompaction;
    }

    /** Number of levels, in [2, 20]. Default 7. Fixed for the life of a database. */
    public Options numLevels(int n) {
        check(n >= 2 && n <= 20, "numLevels must be in [2, 20]: " + n);
        this.numLevels = n;
        return this;
    }

    public int numLevels() {
        return numLevels;
    }

    /** Level-0 tables that trigger a compaction into level 1, at least 1. Default 4. */
    public Options l0CompactionTrigger(int n) {
        check(n >= 1, "l0CompactionTrigger must be >= 1: " + n);
        this.l0CompactionTrigger = n;
        return this;
    }

    public int l0CompactionTrigger() {
        return l0CompactionTrigger;
    }

    /** Level-0 tables from which each write is delayed by 1 ms. Default 20. */
    public Options l0SlowdownWritesTrigger(int n) {
        check(n >= 1, "l0SlowdownWritesTrigger must be >= 1: " + n);
        this.l0SlowdownWritesTrigger = n;
        return this;
    }

    public int l0SlowdownWritesTrigger() {
        return l0SlowdownWritesTrigger;
    }

    /** Level-0 tables from which writers needing a new memtable wait for compaction. Default 36. */
    public Options l0StopWritesTrigger(int n) {
        check(n >= 1, "l0StopWritesTrigger must be >= 1: " + n);
        this.l0StopWritesTrigger = n;
        return this;
    }

    public int l0StopWritesTrigger() {
        return l0StopWritesTrigger;
    }

    /** Size at which compaction starts a new output table, at least 4 KiB. Default 64 MiB. */
    public Options targetFileSize(long bytes) {
        check(bytes >= 4096, "targetFileSize must be >= 4096: " + bytes);
        this.targetFileSize = bytes;
        return this;
    }

    public long targetFileSize() {
        return targetFileSize;
    }

    /**
     * Compaction outputs end wherever the first {@code length} bytes of the user keys change (RocksDB's
     * {@code SstPartitionerFixedPrefix}), so no table written by a compaction holds keys of two such prefixes.
     * For key spaces whose leading bytes name a unit that is dropped whole (a time segment, a tenant): a
     * {@link Db#deleteRange} over whole prefixes then covers whole tables, and compactions drop those unread instead
     * of rewriting tables that mix dead and live keys. Tables written by flushes are not split. 0 (the default)
     * partitions nothing. Many small prefixes make many small tables: use it for coarse units only.
     */
    public Options tablePartitionPrefixLength(int length) {
        check(length >= 0, "tablePartitionPrefixLength must be >= 0: " + length);
        this.tablePartitionPrefixLength = length;
        return this;
    }

    public int tablePartitionPrefixLength() {
        return tablePartitionPrefixLength;
    }

    /**
     * Maximum bytes of the base level (level 1 with static sizing; with {@link #dynamicLevelBytes} the
     * largest target a level above the last may have and still be the base level); level n+1 may hold
     * {@link #levelSizeMultiplier} times level n. Default 512 MiB.
     */
    public Options maxBytesForLevelBase(long bytes) {
        check(bytes >= 4096, "maxBytesForLevelBase must be >= 4096: " + bytes);
        this.maxBytesForLevelBase = bytes;
        return this;
    }

    public long maxBytesForLevelBase() {
        return maxBytesForLevelBase;
    }

    /** Size ratio between adjacent levels, at least 2. Default 10. */
    public Options levelSizeMultiplier(int ratio) {
        check(ratio >= 2, "levelSizeMultiplier must be >= 2: " + ratio);
        this.levelSizeMultiplier = ratio;
        return this;
    }

    public int levelSizeMultiplier() {
        return levelSizeMultiplier;
    }

    /**
     * Size the levels from the last level upward (RocksDB's {@code level_compaction_dynamic_level_bytes}):
     * the last level's target is its actual size, each level above is {@link #levelSizeMultiplier} times
     * smaller, levels whose target would be below {@link #maxBytesForLevelBase} stay empty, and level 0
     * compacts straight into the first non-empty level. The tree then has as few levels as its data needs.
     * False: LevelDB's static sizes ({@link #maxBytesForLevel}). Default true.
     */
    public Options dynamicLevelBytes(boolean dynamic) {
        this.dynamicLevelBytes = dynamic;
        return this;
    }

    public boolean dynamicLevelBytes() {
        return dynamicLevelBytes;
    }

    /**
     * Bits per key of each memtable's whole-key Bloom filter (RocksDB's memtable_whole_key_filtering),
     * in [0, 64]; 0 = no memtable filter. The filter is on the heap, sized for the entries a full write
     * buffer of 16-byte keys and values holds (about {@code writeBufferSize / 64}), so a get for a key no
     * memtable holds costs one probe per memtable instead of a skip-list search. With {@link #memtablePointIndex}
     * (the default) a get asks the filter only once the memtable's index takes more heap than the filter: before that
     * the index's one probe answers as cheaply (every key is still added to the filter from the first). Default 10 (a
     * 96 MiB write buffer: about 1.9 MiB of filter).
     */
    public Options memtableFilterBitsPerKey(double bits) {
        check(bits >= 0 && bits <= 64 && !Double.isNaN(bits), "memtableFilterBitsPerKey must be in [0, 64]: " + bits);
        this.memtableFilterBitsPerKey = bits;
        return this;
    }

    public double memtableFilterBitsPerKey() {
        return memtableFilterBitsPerKey;
    }

    /**
     * Whether each memtable keeps a hash index from a user key to its entries beside its skip list (RocksDB's
     * hash-linked-list memtable does the like), so a get or an update of a key the memtable holds finds it in one or two
     * cache misses instead of a skip-list search. It costs about 15 bytes of heap per distinct key the memtable holds,
     * charged to the memtable (a full memtable holds fewer entries), and a write of a new key one more cache miss.
     * Default true; false suits write-once workloads of small values that rarely read what they just wrote.
     */
    public Options memtablePointIndex(boolean on) {
        this.memtablePointIndex = on;
        return this;
    }

    public boolean memtablePointIndex() {
        return memtablePointIndex;
    }

    /** Static level sizing: maximum bytes of {@code level} (>= 1) before it is compacted into the next one. */
    public long maxBytesForLevel(int level) {
        double bytes = maxBytesForLevelBase;
        for (int i = 1; i < level; i++) {
            bytes *= levelSizeMultiplier;
        }
        return bytes >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) bytes;
    }

    /**
     * The operator that combines {@link Db#merge} operands with older values (RocksDB's {@code merge_operator}); null
     * (the default) = none, and {@link Db#merge} is refused. A database holding merge operands must be opened with one.
     */
    public Options mergeOperator(MergeOperator operator) {
        this.mergeOperator = operator;
        return this;
    }

    public MergeOperator mergeOperator() {
        return mergeOperator;
    }

    /**
     * The filter compactions ask about each value they write (RocksDB's {@code compaction_filter}); null (the default) =
     * none. See {@link CompactionFilter} for which values it sees.
     */
    public Options compactionFilter(CompactionFilter filter) {
        this.compactionFilter = filter;
        return this;
    }

    public CompactionFilter compactionFilter() {
        return compactionFilter;
    }

    // ---- TTL and periodic compaction (RocksDB's DBWithTTL and periodic_compaction_seconds)

    /**
     * Makes this a TTL database (RocksDB's {@code TtlDB}, Cassandra's TTL): every value written carries its write time
     * (whole seconds of {@link #clock}, engine/FORMAT.md "TTL values"); a value older than {@code ttl} reads as absent at
     * once (get, multiGet, iterators, snapshots), and compactions remove it. Null (the default) = no TTL. A database is
     * created with or without TTL for life: {@link Db#open} of a TTL database without a TTL, or of a plain database
     * with one, fails with {@link TtlMismatchException}; the duration itself may change from one open to the next (as
     * in RocksDB). Whole seconds, at least one. See docs/user-guide.md ("TTL and periodic compaction") for how merge
     * operands and TTL combine.
     */
    public Options ttl(java.time.Duration ttl) {
        check(
                ttl == null || (ttl.getSeconds() >= 1 && ttl.getNano() == 0 && ttl.getSeconds() <= 0xFFFF_FFFFL),
                "ttl must be null or whole seconds in [1, 2^32 - 1]: " + ttl);
        this.ttl = ttl;
        return this;
    }

    public java.time.Duration ttl() {
        return ttl;
    }

    /**
     * Tables whose file is older than this are compacted even when no level is over its target (RocksDB's
     * {@code periodic_compaction_seconds}): a cold level is revisited, so what a compaction removes (expired TTL
     * values, {@link #compactionFilter} decisions, overwritten versions) does leave the disk. A table's age is measured
     * from the creation time in its properties (engine/FORMAT.md); tables written before that property existed count
     * as old. Null (the default) = off. At least one second.
     */
    public Options periodicCompaction(java.time.Duration period) {
        check(
                period == null || period.toMillis() >= 1000,
                "periodicCompaction must be null or at least one second: " + period);
        this.periodicCompaction = period;
        return this;
    }

    public java.time.Duration periodicCompaction() {
        return periodicCompaction;
    }

    /**
     * The clock write times ({@link #ttl}) and table creation times ({@link #periodicCompaction}) are read from; the
     * system clock by default. Tests inject their own. It should not go backwards (as RocksDB's {@code Env} clock): a
     * value written under an earlier time expires earlier.
     */
    public Options clock(java.time.Clock clock) {
        check(clock != null, "clock must not be null");
        this.clock = clock;
        return this;
    }

    public java.time.Clock clock() {
        return clock;
    }

    /**
     * Incremental syncs of the files a {@link TableFileWriter} writes (RocksDB's {@code bytes_per_sync}, which its
     * {@code SstFileWriter} applies): above 0, the writer's second thread (which writes the finished blocks while the
     * caller builds the next ones) syncs the file every time this many bytes were written since the last sync. 0 (the
     * default, as RocksDB's): the data blocks are synced once, in the background while the filter is built, and the
     * rest at {@link TableFileWriter#finish()}. Either way the file is durable when {@code finish()} returns. With
     * {@link #useDirectWritesForBulkLoad} the blocks reach the device as they are written, so there is no backlog of
     * dirty pages to spread, and the syncs only flush the device's cache. A sync
     * while the file grows may slow the writes that follow it (it did on ext4 on the bench host, see
     * docs/operations.md), so measure before setting it. Flush and compaction outputs are not affected (synced once at
     * their end).
     */
    public Options bytesPerSync(long bytes) {
        check(bytes >= 0, "bytesPerSync must be >= 0: " + bytes);
        this.bytesPerSync = bytes;
        return this;
    }

    public long bytesPerSync() {
        return bytesPerSync;
    }

    /**
     * Whether a {@link TableFileWriter} writes its file with O_DIRECT, bypassing the OS page cache (default false). By
     * default the file is written through the page cache and stays there until evicted, so reads right after the
     * ingestion find it in memory, as they find the tables a flush or compaction wrote. With true the blocks go to the
     * device while the caller builds the next ones, so {@link TableFileWriter#finish()} has no backlog of dirty pages to
     * sync, and loading a file larger than memory does not evict the page cache's other contents (RocksDB's
     * {@code SstFileWriter} drops its pages as it writes, {@code invalidate_page_cache}); the cost is that the first
     * reads of the ingested data go to the device. Where the file system (or {@link #fileSystem}) does not support
     * direct writes, the writer uses the page cache. {@link #bytesPerSync} applies either way. Flush and compaction
     * outputs are not affected.
     */
    public Options useDirectWritesForBulkLoad(boolean enabled) {
        this.useDirectWritesForBulkLoad = enabled;
        return this;
    }

    public boolean useDirectWritesForBulkLoad() {
        return useDirectWritesForBulkLoad;
    }

    @Override
    public String toString() {
        return "Options{filterKind=" + filterKind + ", bitsPerKey=" + bitsPerKey + ", filterAllocation="
                + filterAllocation + ", filterBudget=" + filterBudget + ", ribbonFromLevel=" + ribbonFromLevel
                + ", prefixLength=" + prefixLength + ", rangeFilterBitsPerKey=" + rangeFilterBitsPerKey
                + ", writeBufferSize=" + writeBufferSize + ", blockSize=" + blockSize + ", blockCacheSize="
                + blockCacheSize
                + ", disableWal=" + disableWal
                + ", syncMode=" + syncMode + ", numLevels=" + numLevels + ", l0CompactionTrigger=" + l0CompactionTrigger
                + ", targetFileSize=" + targetFileSize + ", tablePartitionPrefixLength=" + tablePartitionPrefixLength
                + ", levelSizeMultiplier=" + levelSizeMultiplier
                + ", dynamicLevelBytes=" + dynamicLevelBytes + ", maxBytesForLevelBase=" + maxBytesForLevelBase
                + ", l0Triggers=" + l0CompactionTrigger + "/" + l0SlowdownWritesTrigger + "/" + l0StopWritesTrigger
                + ", memtableFilterBitsPerKey=" + memtableFilterBitsPerKey + ", memtablePointIndex="
                + memtablePointIndex + ", compression=" + compression
                + ", bottommostCompression=" + bottommostCompression() + ", useDirectReads=" + useDirectReads
                + ", useMmapReads=" + useMmapReads
                + ", useMmapWal=" + useMmapWal
                + (sharedFilterBudget != null
                        ? ", filterMemoryBudget=" + sharedFilterBudget
                        : filterMemoryBudget > 0 ? ", filterMemoryBudget=" + filterMemoryBudget : "")
                + (filterPartitionSize != 4096 ? ", filterPartitionSize=" + filterPartitionSize : "")
                + (sharedRateLimiter != null
                        ? ", rateLimiter=shared " + sharedRateLimiter.getBytesPerSecond() + " B/s"
                        : rateLimiterBytesPerSecond > 0 ? ", rateLimiter=" + rateLimiterBytesPerSecond + " B/s" : "")
                + "}";
    }
}
