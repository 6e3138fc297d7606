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
    private int ribbonFromLevel = -1;
    private long writeBufferSize = 4L << 20;
    private int maxImmutableMemtables = 2;
    private int blockSize = 4096;
    private int blockRestartInterval = 16;
    private long blockCacheSize = 8L << 20;
    private SharedBlockCache blockCache;
    private SyncMode syncMode = SyncMode.NONE;
    private FileSystem fileSystem;
    private boolean createIfMissing = true;
    private boolean errorIfExists = false;
    private boolean readOnly = false;
    private boolean autoCompaction = true;
    private int numLevels = 7;
    private int l0CompactionTrigger = 4;
    private int l0SlowdownWritesTrigger = 8;
    private int l0StopWritesTrigger = 12;
    private long targetFileSize = 64L << 20;
    private long maxBytesForLevelBase = 256L << 20;
    private int levelSizeMultiplier = 10;
    private Compression compression = Compression.NONE;
    private Compression bottommostCompression; // null: same as compression
    private boolean useDirectReads;

    private Options() {}

    /** The defaults: BLOCKED filters at 10 bits per key, 4 MiB write buffer, 4 KiB blocks, 8 MiB block cache, SyncMode.NONE. */
    public static Options defaults() {
        return new Options();
    }

    /** An independent copy. */
    public Options copy() {
        Options o = new Options();
        o.filterKind = filterKind;
        o.bitsPerKey = bitsPerKey;
        o.filterAllocation = filterAllocation;
        o.ribbonFromLevel = ribbonFromLevel;
        o.writeBufferSize = writeBufferSize;
        o.maxImmutableMemtables = maxImmutableMemtables;
        o.blockSize = blockSize;
        o.blockRestartInterval = blockRestartInterval;
        o.blockCacheSize = blockCacheSize;
        o.blockCache = blockCache;
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
        o.maxBytesForLevelBase = maxBytesForLevelBase;
        o.levelSizeMultiplier = levelSizeMultiplier;
        o.compression = compression;
        o.bottommostCompression = bottommostCompression;
        o.useDirectReads = useDirectReads;
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
     * Tables of {@code level} and every deeper level get {@link FilterKind#RIBBON} filters, the levels above keep
     * {@link #filterKind()} (RocksDB's {@code NewRibbonFilterPolicy(bits, bloom_before_level)}): the deep levels hold
     * most keys and are asked least, so the static filter's ~30% smaller memory pays there and its 3-4x costlier
     * construction (tables are rebuilt by compaction) is spent where it saves most. {@code -1} (the default) turns
     * it off; {@code 0} makes every table RIBBON. A RIBBON table gets the bits per key at which RIBBON reaches the
     * rate BLOCKED has at {@link #bitsPerKey} (or at the level's {@link FilterAllocation#MONKEY} share): "bits per
     * key" stays the Bloom-equivalent budget, as in RocksDB.
     */
    public Options ribbonFromLevel(int level) {
        check(level >= -1, "ribbonFromLevel must be -1 (off) or a level >= 0: " + level);
        this.ribbonFromLevel = level;
        return this;
    }

    /** The first RIBBON level, -1 when {@link #ribbonFromLevel(int)} is off. */
    public int ribbonFromLevel() {
        return ribbonFromLevel;
    }

    /** The filter kind of a new table of {@code level}: RIBBON from {@link #ribbonFromLevel()} down, else {@link #filterKind()}. */
    public FilterKind filterKindForLevel(int level) {
        return ribbonFromLevel >= 0 && level >= ribbonFromLevel ? FilterKind.RIBBON : filterKind;
    }

    /** Bytes of entries a memtable takes before it is frozen and flushed, at least 4 KiB. Default 4 MiB. */
    public Options writeBufferSize(long bytes) {
        check(bytes >= 4096, "writeBufferSize must be >= 4096: " + bytes);
        this.writeBufferSize = bytes;
        return this;
    }

    public long writeBufferSize() {
        return writeBufferSize;
    }

    /** Immutable memtables allowed to wait for a flush before writers stall, at least 1. Default 2. */
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
     * shrink by at least 1/8 is stored as-is). Default {@link Compression#NONE}. Flushes and compactions
     * into any level but the bottommost use it; see {@link #bottommostCompression}. Tables keep the
     * compression they were written with, so it may change between opens.
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

    /** Bytes of the block cache shared by all tables; 0 disables it. Default 8 MiB. */
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

    /** When writes are fsynced. Default {@link SyncMode#NONE}. */
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

    /** Level-0 tables from which each write is delayed by 1 ms. Default 8. */
    public Options l0SlowdownWritesTrigger(int n) {
        check(n >= 1, "l0SlowdownWritesTrigger must be >= 1: " + n);
        this.l0SlowdownWritesTrigger = n;
        return this;
    }

    public int l0SlowdownWritesTrigger() {
        return l0SlowdownWritesTrigger;
    }

    /** Level-0 tables from which writers needing a new memtable wait for compaction. Default 12. */
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

    /** Maximum bytes of level 1; level n+1 may hold {@link #levelSizeMultiplier} times level n. Default 256 MiB. */
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

    /** Maximum bytes of {@code level} (>= 1) before it is compacted into the next one. */
    public long maxBytesForLevel(int level) {
        double bytes = maxBytesForLevelBase;
        for (int i = 1; i < level; i++) {
            bytes *= levelSizeMultiplier;
        }
        return bytes >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) bytes;
    }

    @Override
    public String toString() {
        return "Options{filterKind=" + filterKind + ", bitsPerKey=" + bitsPerKey + ", filterAllocation=" + filterAllocation + ", ribbonFromLevel=" + ribbonFromLevel
                + ", writeBufferSize=" + writeBufferSize + ", blockSize=" + blockSize + ", blockCacheSize=" + blockCacheSize
                + ", syncMode=" + syncMode + ", numLevels=" + numLevels + ", l0CompactionTrigger=" + l0CompactionTrigger
                + ", targetFileSize=" + targetFileSize + ", levelSizeMultiplier=" + levelSizeMultiplier + "}";
    }
}
