package io.bloomkv.bench.engine;

import io.bloomkv.bloom.FilterMath;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.ConfigOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Statistics;
import org.rocksdb.TableProperties;
import org.rocksdb.TickerType;
import org.rocksdb.UInt64AddOperator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * RocksDB (rocksdbjni) configured to match bloomkv: block-based tables with a whole-key
 * {@code BloomFilter(bitsPerKey)} (format_version 6: the cache-local FastLocalBloom), the same
 * block size, an LRU block cache of the same capacity (index and filter blocks held by the table
 * readers, outside the cache, as bloomkv keeps them), a whole-key memtable Bloom filter of the same
 * size as bloomkv's, no compression, WAL on, fsync per write only when asked. Counters come from RocksDB's Statistics tickers.
 */
public final class RocksDbEngine implements BenchEngine {
    static {
        RocksDB.loadLibrary();
    }

    /** FastLocalBloom needs format_version 5 or later. */
    public static final int FORMAT_VERSION = 6;

    private static final long SETTLE_TIMEOUT_NANOS = 600_000_000_000L;

    private final Path dir;
    private final EngineSettings settings;
    /** {@code settings.filterKind()}, parsed once. */
    private final FilterPolicySpec filterSpec;
    /** The bits per key RocksDB's filter policy is given: Bloom's, or Ribbon's Bloom-equivalent under the spec. */
    private final double filterSettingBits;

    private final Statistics statistics = new Statistics();
    private final WriteOptions writeOptions = new WriteOptions();
    private final ReadOptions readOptions = new ReadOptions();
    private final ReadOptions prefixReadOptions = new ReadOptions().setPrefixSameAsStart(true);
    private Options options;
    /** The merge operator of every open (the mergerandom workload's counters); closed with the engine. */
    private final UInt64AddOperator mergeOperator = new UInt64AddOperator();

    private LRUCache cache;
    /** bench --rate-limit: flushes and compactions, as bloomkv's Options.rateLimiter; null when unlimited. */
    private org.rocksdb.RateLimiter rateLimiter;

    private BloomFilter filter;
    private RocksDB db;
    /**
     * bench --filter-budget for RocksDB: bytes of block cache reserved for index and filter blocks (0: none; for a
     * percentage, measured after each settle from the tables' filter sizes, then applied by a reopen).
     */
    private long filterBudgetBytes;

    private RocksDbEngine(Path dir, EngineSettings settings) {
        this.dir = dir;
        this.settings = settings;
        this.filterSpec = FilterPolicySpec.parse(settings.filterKind());
        this.filterSettingBits = filterSpec.rocksdbRibbon()
                ? filterSpec.ribbonBloomEquivalentBits(settings.bitsPerKey())
                : settings.bitsPerKey();
        writeOptions.setSync(settings.sync());
        writeOptions.setDisableWAL(false);
        this.filterBudgetBytes = settings.filterBudget().bytes();
    }

    /**
     * Under a filter budget, RocksDB's own answer to bounded filter memory with the same memory: partitioned filters
     * and a two-level index ({@code partition_filters}, {@code kTwoLevelIndexSearch}, 4 KiB metadata blocks) whose
     * blocks live in the block cache ({@code cache_index_and_filter_blocks}, at high priority), level-0 and top-level
     * index/filter blocks pinned there; the cache grows by the budget and its high-priority pool is the budget's share,
     * so data blocks keep the cache they have without a budget and index plus filter blocks get the budget. RocksDB
     * charges its index blocks to that share too, where bloomkv keeps its index outside the filter budget (on the heap):
     * the describe line says so.
     */
    private boolean budgeted() {
        return filterBudgetBytes > 0 && settings.filters();
    }

    /**
     * Whether tables are written and read in the budgeted format (partitioned filters, two-level index, index and filter
     * blocks through the cache): from the first open whenever a budget is asked for, also as a percentage whose bytes
     * are known only after the load (as bloomkv's engine writes partitioned filters during the load). Written without
     * it, the load's tables would keep one full filter block each, which a budget smaller than the filters would read
     * whole through the cache at every miss: not RocksDB's answer to a filter budget.
     */
    private boolean budgetFormat() {
        return settings.filters() && !settings.filterBudget().none();
    }

    private LRUCache newCache() {
        if (!budgeted()) {
            return new LRUCache(settings.cacheSize());
        }
        long total = settings.cacheSize() + filterBudgetBytes;
        return new LRUCache(total, -1, false, filterBudgetBytes / (double) total);
    }

    private void budgetTableOptions(BlockBasedTableConfig table) {
        if (budgetFormat()) {
            table.setCacheIndexAndFilterBlocks(true)
                    .setCacheIndexAndFilterBlocksWithHighPriority(true)
                    .setPinL0FilterAndIndexBlocksInCache(true)
                    .setPinTopLevelIndexAndFilter(true)
                    .setPartitionFilters(true)
                    .setIndexType(org.rocksdb.IndexType.kTwoLevelIndexSearch)
                    .setMetadataBlockSize(4096);
        }
    }

    /** The option-string form of {@link #budgetTableOptions} (for the Ribbon set-up), with a leading ';', or "". */
    private String budgetTableOptionString() {
        return budgetFormat()
                ? ";cache_index_and_filter_blocks_with_high_priority=true;pin_l0_filter_and_index_blocks_in_cache=true"
                        + ";pin_top_level_index_and_filter=true;partition_filters=true;index_type=kTwoLevelIndexSearch;metadata_block_size=4096"
                : "";
    }

    /** Opens (creating) a database in {@code dir}. */
    public static RocksDbEngine open(Path dir, EngineSettings settings) throws IOException {
        RocksDbEngine e = new RocksDbEngine(dir, settings);
        try {
            e.openDb();
        } catch (IOException | RuntimeException ex) {
            e.close();
            throw ex;
        }
        return e;
    }

    /** The RocksDB version the JNI library reports. */
    public static String version() {
        RocksDB.Version v = RocksDB.rocksdbVersion();
        return v.toString();
    }

    private void openDb() throws IOException {
        if (settings.ownDefaults()) {
            openWithOwnDefaults();
            return;
        }
        if (settings.filters() && filterSpec.rocksdbRibbon()) {
            options = ribbonOptions();
        } else {
            cache = newCache();
            BlockBasedTableConfig table = new BlockBasedTableConfig()
                    .setFormatVersion(FORMAT_VERSION)
                    .setBlockSize(settings.blockSize())
                    .setBlockCache(cache)
                    .setCacheIndexAndFilterBlocks(false)
                    .setWholeKeyFiltering(true);
            budgetTableOptions(table);
            if (settings.filters()) {
                filter = new BloomFilter(settings.bitsPerKey());
                table.setFilterPolicy(filter);
            }
            options = new Options().setTableFormatConfig(table);
        }
        options.setCreateIfMissing(true)
                .setStatistics(statistics)
                .setWriteBufferSize(settings.writeBufferSize())
                // bloomkv's memtable filter: bitsPerKey bits per ~64 bytes of write buffer (MemTable.expectedEntries)
                .setMemtableWholeKeyFiltering(settings.filters())
                .setMemtablePrefixBloomSizeRatio(settings.filters() ? settings.bitsPerKey() / (8.0 * 64) : 0)
                .setCompressionType(compressionType(settings.compression()))
                .setBottommostCompressionType(compressionType(settings.compression()))
                .setUseDirectReads(settings.directReads())
                // RocksDB refuses mmap reads together with direct reads; bloomkv ignores useMmapReads under them
                .setAllowMmapReads(settings.mmapReads() && !settings.directReads());
        if (settings.prefixLength() > 0) {
            options.useFixedLengthPrefixExtractor(settings.prefixLength());
        }
        if (settings.rateLimit() > 0) {
            rateLimiter = new org.rocksdb.RateLimiter(settings.rateLimit());
            options.setRateLimiter(rateLimiter);
        }
        try {
            options.setMergeOperator(mergeOperator);
            db = RocksDB.open(options, dir.toString());
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    /**
     * Matched options whose tables carry RocksDB's Ribbon filter ({@code +ROCKSDB-RIBBON}). rocksdbjni has no Java class
     * for {@code NewRibbonFilterPolicy}, so the block-based table factory comes from RocksDB's option string, with the
     * same block size, format version, block-cache capacity and whole-key filtering as the Bloom set-up.
     */
    private Options ribbonOptions() throws IOException {
        Properties props = new Properties();
        props.setProperty("block_based_table_factory", ribbonTableOptions());
        try (ConfigOptions config = new ConfigOptions().setIgnoreUnknownOptions(false);
                DBOptions dbOptions = new DBOptions();
                ColumnFamilyOptions cf = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(config, props)) {
            if (cf == null) {
                throw new IOException("RocksDB rejected the table options " + props);
            }
            return new Options(dbOptions, cf);
        }
    }

    /** The {@code block_based_table_factory} option string of {@link #ribbonOptions}. */
    private String ribbonTableOptions() {
        return String.format(
                Locale.ROOT,
                "{filter_policy=ribbonfilter:%.3f:%d;format_version=%d;block_size=%d;"
                        + "block_cache=%d;cache_index_and_filter_blocks=%b;whole_key_filtering=true%s}",
                filterSettingBits,
                filterSpec.rocksdbBloomBeforeLevel(),
                FORMAT_VERSION,
                settings.blockSize(),
                settings.cacheSize() + (budgeted() ? filterBudgetBytes : 0),
                budgetFormat(),
                budgetTableOptionString());
    }

    /** RocksDB's default Options, with a BlockBasedTableConfig that only sets the Bloom filter (a new user's set-up). */
    private void openWithOwnDefaults() throws IOException {
        BlockBasedTableConfig table = new BlockBasedTableConfig();
        if (settings.filters()) {
            filter = new BloomFilter(settings.bitsPerKey());
            table.setFilterPolicy(filter);
        }
        options =
                new Options().setCreateIfMissing(true).setStatistics(statistics).setTableFormatConfig(table);
        if (settings.prefixLength() > 0) {
            options.useFixedLengthPrefixExtractor(settings.prefixLength());
        }
        if (settings.rateLimit() > 0) {
            rateLimiter = new org.rocksdb.RateLimiter(settings.rateLimit());
            options.setRateLimiter(rateLimiter);
        }
        try {
            options.setMergeOperator(mergeOperator);
            db = RocksDB.open(options, dir.toString());
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    /** RocksDB's compression for the bench's name (none, lz4, zstd); ZSTD at its default level (3), as bloomkv. */
    static CompressionType compressionType(String name) {
        return switch (name) {
            case "none" -> CompressionType.NO_COMPRESSION;
            case "lz4" -> CompressionType.LZ4_COMPRESSION;
            case "zstd" -> CompressionType.ZSTD_COMPRESSION;
            default -> throw new IllegalArgumentException("unknown compression '" + name + "'");
        };
    }

    @Override
    public String name() {
        return "rocksdb";
    }

    @Override
    public boolean filtersEnabled() {
        return settings.filters();
    }

    @Override
    public void put(byte[] key, byte[] value) throws IOException {
        try {
            db.put(writeOptions, key, value);
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    @Override
    public BulkLoad bulkLoad(Path file) throws IOException {
        org.rocksdb.EnvOptions env = new org.rocksdb.EnvOptions();
        org.rocksdb.SstFileWriter w = new org.rocksdb.SstFileWriter(env, options);
        try {
            w.open(file.toString());
        } catch (RocksDBException e) {
            w.close();
            env.close();
            throw new IOException(e);
        }
        return new BulkLoad() {
            @Override
            public void put(byte[] key, byte[] value) throws IOException {
                try {
                    w.put(key, value);
                } catch (RocksDBException e) {
                    throw new IOException(e);
                }
            }

            @Override
            public void ingest() throws IOException {
                try (org.rocksdb.IngestExternalFileOptions io = new org.rocksdb.IngestExternalFileOptions()) {
                    w.finish();
                    io.setMoveFiles(true);
                    db.ingestExternalFile(List.of(file.toString()), io);
                } catch (RocksDBException e) {
                    throw new IOException(e);
                }
            }

            @Override
            public void close() {
                w.close();
                env.close();
            }
        };
    }

    @Override
    public void putAll(List<byte[]> keys, List<byte[]> values) throws IOException {
        try (WriteBatch batch = new WriteBatch()) {
            for (int i = 0; i < keys.size(); i++) {
                batch.put(keys.get(i), values.get(i));
            }
            db.write(writeOptions, batch);
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    @Override
    public byte[] get(byte[] key) throws IOException {
        try {
            return db.get(readOptions, key);
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    @Override
    public List<byte[]> multiGet(List<byte[]> keys) throws IOException {
        try {
            return db.multiGetAsList(readOptions, keys);
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    @Override
    public void delete(byte[] key) throws IOException {
        try {
            db.delete(writeOptions, key);
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    @Override
    public void merge(byte[] key, byte[] operand) throws IOException {
        try {
            db.merge(writeOptions, key, operand);
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    @Override
    public void deleteRange(byte[] begin, byte[] end) throws IOException {
        try {
            db.deleteRange(writeOptions, begin, end);
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    @Override
    public int scan(byte[] start, int count, byte[][] keysOut, byte[][] valuesOut) throws IOException {
        return scan(readOptions, start, 0, count, keysOut, valuesOut);
    }

    @Override
    public int scanPrefix(byte[] start, int prefixLength, int count, byte[][] keysOut, byte[][] valuesOut)
            throws IOException {
        return scan(prefixReadOptions, start, prefixLength, count, keysOut, valuesOut);
    }

    /**
     * Seeks to {@code start} and steps over up to {@code count} entries sharing its first {@code prefixLength} bytes,
     * handing each out into {@code keysOut} / {@code valuesOut} when they are not null.
     */
    private int scan(ReadOptions ro, byte[] start, int prefixLength, int count, byte[][] keysOut, byte[][] valuesOut)
            throws IOException {
        int seen = 0;
        try (RocksIterator it = db.newIterator(ro)) {
            it.seek(start);
            while (seen < count && it.isValid()) {
                byte[] k = it.key(); // once per entry: each call is a JNI crossing and a copy
                if (!BloomKvEngine.startsWith(k, start, prefixLength)) {
                    break;
                }
                byte[] v = it.value();
                if (k.length == 0 || v == null) {
                    throw new IOException("rocksdb iterator returned an empty entry");
                }
                if (keysOut != null) {
                    keysOut[seen] = k;
                    valuesOut[seen] = v;
                }
                seen++;
                it.next();
            }
            it.status();
        } catch (RocksDBException e) {
            throw io(e);
        }
        return seen;
    }

    @Override
    public void flushAndSettle() throws IOException {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.flush(fo);
            long deadline = System.nanoTime() + SETTLE_TIMEOUT_NANOS;
            while (db.getLongProperty("rocksdb.compaction-pending") != 0
                    || db.getLongProperty("rocksdb.num-running-compactions") != 0
                    || db.getLongProperty("rocksdb.num-running-flushes") != 0
                    || db.getLongProperty("rocksdb.mem-table-flush-pending") != 0) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("rocksdb compactions still running after 10 minutes");
                }
                Thread.sleep(10);
            }
        } catch (RocksDBException e) {
            throw io(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for compactions", e);
        }
        applyFilterBudgetShare();
    }

    /**
     * For a --filter-budget given as a percentage: the share of the tables' filter bytes now (as bloomkv's engine takes
     * the share of its unbounded filters), applied by reopening with it when it changed.
     */
    private void applyFilterBudgetShare() throws IOException {
        double percent = settings.filterBudget().percent();
        if (percent <= 0 || !settings.filters() || settings.ownDefaults()) {
            return;
        }
        long full = tablesOnce().filterBytes();
        long budget = Math.max(1, (long) (full * percent / 100));
        if (budget != filterBudgetBytes) {
            filterBudgetBytes = budget;
            reopen();
        }
    }

    /** The filter budget in force for RocksDB's cached index and filter blocks, in bytes (0: none). */
    public long filterMemoryBudget() {
        return budgeted() ? filterBudgetBytes : 0;
    }

    @Override
    public void compactAll() throws IOException {
        try {
            db.compactRange();
        } catch (RocksDBException e) {
            throw io(e);
        }
        flushAndSettle();
    }

    @Override
    public void reopen() throws IOException {
        closeDb();
        openDb();
    }

    @Override
    public int backgroundJobsRunning() throws IOException {
        try {
            return (int) (db.getLongProperty("rocksdb.num-running-flushes")
                    + db.getLongProperty("rocksdb.num-running-compactions"));
        } catch (RocksDBException e) {
            throw new IOException(e);
        }
    }

    @Override
    public EngineCounters counters() {
        // whole-key probes (gets) plus prefix probes (point reads by prefix, and seeks: the *_SEEK_FILTERED /
        // *_SEEK_FILTER_MATCH tickers), as bloomkv's Stats count both
        long seekFiltered = t(TickerType.LAST_LEVEL_SEEK_FILTERED) + t(TickerType.NON_LAST_LEVEL_SEEK_FILTERED);
        long seekMatched = t(TickerType.LAST_LEVEL_SEEK_FILTER_MATCH) + t(TickerType.NON_LAST_LEVEL_SEEK_FILTER_MATCH);
        long prefixChecked = t(TickerType.BLOOM_FILTER_PREFIX_CHECKED) + seekFiltered + seekMatched;
        long prefixUseful = t(TickerType.BLOOM_FILTER_PREFIX_USEFUL) + seekFiltered;
        long useful = t(TickerType.BLOOM_FILTER_USEFUL) + prefixUseful;
        long positive = t(TickerType.BLOOM_FILTER_FULL_POSITIVE) + (prefixChecked - prefixUseful);
        long truePositive = t(TickerType.BLOOM_FILTER_FULL_TRUE_POSITIVE); // whole keys only, as bloomkv's
        long blockReads = t(TickerType.BLOCK_CACHE_DATA_MISS)
                + t(TickerType.BLOCK_CACHE_INDEX_MISS)
                + t(TickerType.BLOCK_CACHE_FILTER_MISS);
        long blockBytes = t(TickerType.BLOCK_CACHE_DATA_BYTES_INSERT)
                + t(TickerType.BLOCK_CACHE_INDEX_BYTES_INSERT)
                + t(TickerType.BLOCK_CACHE_FILTER_BYTES_INSERT);
        long tableBytes = t(TickerType.FLUSH_WRITE_BYTES) + t(TickerType.COMPACT_WRITE_BYTES);
        return new EngineCounters(
                useful + positive,
                useful,
                positive,
                truePositive,
                blockReads,
                blockBytes,
                tableBytes,
                t(TickerType.WAL_FILE_BYTES));
    }

    @Override
    public long writeStallMicros() {
        return t(TickerType.STALL_MICROS);
    }

    private long t(TickerType type) {
        return statistics.getTickerCount(type);
    }

    @Override
    public TableSummary tables() throws IOException {
        // Unsettled (bench --no-settle), a compaction may install new files between the two snapshots below; the
        // summary is then taken again, at most this many times, until both saw the same files.
        for (int attempt = 1; ; attempt++) {
            try {
                return tablesOnce();
            } catch (FilesChangedException e) {
                if (attempt == 20) {
                    throw new IOException(e.getMessage());
                }
            }
        }
    }

    /** The open database, for tests that hold RocksDB state (an iterator) the bench interface does not. */
    RocksDB rocksDb() {
        return db;
    }

    /** Index partitions of each live table (0: a one-level index), for tests of the budgeted format. */
    List<Long> indexPartitionsPerTable() throws IOException {
        try {
            return db.getPropertiesOfAllTables().values().stream()
                    .map(TableProperties::getIndexPartitions)
                    .toList();
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    /** The live files changed while {@link #tablesOnce} read them (a background compaction finished). */
    private static final class FilesChangedException extends IOException {
        FilesChangedException(String message) {
            super(message);
        }
    }

    private TableSummary tablesOnce() throws IOException {
        try {
            Map<String, TableProperties> all = db.getPropertiesOfAllTables();
            long entries = 0;
            long filterBytes = 0;
            double weightedFpr = 0;
            Map<TableProperties, Double> rates = new java.util.IdentityHashMap<>();
            for (TableProperties p : all.values()) {
                entries += p.getNumEntries();
                filterBytes += p.getFilterSize();
                if (p.getNumEntries() > 0 && p.getFilterSize() > RocksBloomMath.FILTER_METADATA_BYTES) {
                    double rate = tableFpRate(p);
                    rates.put(p, rate);
                    weightedFpr += p.getNumEntries() * rate;
                }
            }
            double fpr = settings.filters() && entries > 0 ? weightedFpr / entries : Double.NaN;
            // the live tables' bytes, as bloomkv's side counts them (its live tables' file sizes): not
            // total-sst-files-size, which adds the files of older versions an iterator or a finishing job still pins
            long sst = db.getLongProperty("rocksdb.live-sst-files-size");
            List<TableRange> ranges = new ArrayList<>();
            List<LiveFileMetaData> files = db.getLiveFilesMetaData();
            // FilePicker (db/version_set.cc) range-checks level-0 files only when more than one level is
            // non-empty or level 0 holds more than 3 files; otherwise it asks every level-0 filter
            long nonEmptyLevels =
                    files.stream().mapToInt(LiveFileMetaData::level).distinct().count();
            boolean l0RangeChecked = nonEmptyLevels > 1
                    || files.stream().filter(f -> f.level() == 0).count() > 3;
            for (LiveFileMetaData f : files) {
                TableProperties p = all.get(f.path() + f.fileName());
                if (p == null) {
                    p = all.get(Path.of(f.path(), f.fileName()).toString());
                }
                double tableFpr = p == null ? Double.NaN : rates.getOrDefault(p, Double.NaN);
                if (p == null && settings.filters()) {
                    throw new FilesChangedException(
                            "no table properties for live file " + f.path() + f.fileName() + " among " + all.keySet());
                }
                ranges.add(new TableRange(f.smallestKey(), f.largestKey(), tableFpr, f.level() != 0 || l0RangeChecked));
            }
            return new TableSummary(all.size(), entries, filterBytes, sst, fpr, ranges);
        } catch (RocksDBException e) {
            throw io(e);
        }
    }

    /**
     * The expected false-positive rate of one table's filter. Under {@code +ROCKSDB-RIBBON} a table whose filter spends
     * clearly fewer bits per key than the Bloom-equivalent setting is a Ribbon table (RocksDB builds Bloom filters above
     * {@code bloom_before_level} at the full setting), estimated by bloomkv's Ribbon model at its bits per key.
     */
    private double tableFpRate(TableProperties p) {
        double bitsPerKey = p.getFilterSize() * 8.0 / p.getNumEntries();
        if (filterSpec.rocksdbRibbon() && bitsPerKey < 0.85 * filterSettingBits) {
            return FilterMath.ribbonFppForBitsPerKey(p.getNumEntries(), bitsPerKey);
        }
        return RocksBloomMath.estimatedFpRate(
                p.getNumEntries(),
                p.getFilterSize() - RocksBloomMath.FILTER_METADATA_BYTES,
                RocksBloomMath.chooseNumProbes(filterSettingBits));
    }

    @Override
    public List<Path> tableFiles() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".sst"))
                    .sorted()
                    .toList();
        }
    }

    @Override
    public String describe() {
        if (settings.ownDefaults()) {
            return "rocksdb " + version() + " on its defaults"
                    + (settings.filters() ? " + BloomFilter(" + settings.bitsPerKey() + ")" : "")
                    + ": write buffer " + options.writeBufferSize() + " B, compression " + options.compressionType()
                    + ", dynamic level bytes " + options.levelCompactionDynamicLevelBytes() + ", L0 trigger "
                    + options.level0FileNumCompactionTrigger() + ", max bytes for level base "
                    + options.maxBytesForLevelBase()
                    + " B, target file size " + options.targetFileSizeBase() + " B, background jobs "
                    + options.maxBackgroundJobs()
                    + ", WAL on, sync " + settings.sync();
        }
        return "rocksdb " + version() + ": BlockBasedTable format_version " + FORMAT_VERSION
                + (!settings.filters()
                        ? ", no filter"
                        : filterSpec.rocksdbRibbon()
                                ? ", Ribbon filter " + ribbonTableOptions()
                                : ", BloomFilter(" + settings.bitsPerKey() + ") [FastLocalBloom, whole key]")
                + ", block " + settings.blockSize() + " B, "
                + (budgeted()
                        ? "LRUCache " + (settings.cacheSize() + filterBudgetBytes) + " B with a high-priority pool of "
                                + filterBudgetBytes
                                + " B (filter budget) for index and filter blocks: partition_filters, "
                                + "kTwoLevelIndexSearch, cache_index_and_filter_blocks, pin_l0_filter_and_index_blocks_in_cache, "
                                + "pin_top_level_index_and_filter"
                        : budgetFormat()
                                ? "LRUCache " + settings.cacheSize() + " B, partitioned filters and index blocks in it"
                                        + " (the filter budget's share not measured yet)"
                                : "LRUCache " + settings.cacheSize() + " B (index/filter outside the cache)")
                + ", write buffer " + settings.writeBufferSize() + " B"
                + (settings.filters() ? " with a whole-key memtable bloom" : "")
                + ", compression " + settings.compression()
                + (settings.directReads() ? ", direct reads" : "")
                + (settings.prefixLength() > 0 ? ", fixed-length prefix extractor " + settings.prefixLength() : "")
                + (settings.rateLimit() > 0 ? ", rate limit " + settings.rateLimit() + " B/s" : "")
                + ", WAL on, sync " + settings.sync();
    }

    private void closeDb() {
        if (db != null) {
            db.close();
            db = null;
        }
        if (options != null) {
            options.close();
            options = null;
        }
        if (filter != null) {
            filter.close();
            filter = null;
        }
        if (cache != null) {
            cache.close();
            cache = null;
        }
        if (rateLimiter != null) {
            rateLimiter.close();
            rateLimiter = null;
        }
    }

    @Override
    public void close() {
        closeDb();
        writeOptions.close();
        readOptions.close();
        prefixReadOptions.close();
        statistics.close();
        mergeOperator.close();
    }

    private static IOException io(RocksDBException e) {
        return new IOException("rocksdb: " + e.getMessage(), e);
    }
}
