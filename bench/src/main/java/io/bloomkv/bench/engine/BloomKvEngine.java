package io.bloomkv.bench.engine;

import io.bloomkv.engine.Compression;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.MergeOperators;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.ReadOptions;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.SyncMode;
import io.bloomkv.engine.TableInfo;
import io.bloomkv.engine.WriteBatch;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * bloomkv driven through its public {@link Db} API, with the same settings as RocksDB: filters of
 * the configured kind at the same bits per key (or none), the same block size, block cache and write
 * buffer, WAL on, {@link SyncMode#EVERY_WRITE} only when sync is asked. Counters come from
 * {@link Db#stats()}, WAL bytes included ({@code Stats.walBytesWritten}), as RocksDB's come from its statistics: no
 * wrapper around the file system counts them on the engine's write paths.
 */
public final class BloomKvEngine implements BenchEngine {
    private final Path dir;
    private final EngineSettings settings;
    private final Options options;
    /** {@link #options} with the filter memory budget in force now (bench --filter-budget), or without one. */
    private Options openOptions;

    private static final ReadOptions PREFIX_SAME_AS_START =
            ReadOptions.defaults().prefixSameAsStart(true);
    /** Flushes and compactions running ({@link #backgroundJobsRunning}). */
    private final RunningJobs jobs = new RunningJobs();

    /** Counters of databases closed by {@link #reopen()}: Db.stats() restarts at 0 on open. */
    private EngineCounters carried = EngineCounters.ZERO;

    private Db db;

    private BloomKvEngine(Path dir, EngineSettings settings) {
        this.dir = dir;
        this.settings = settings;
        FilterPolicySpec spec = FilterPolicySpec.parse(settings.filterKind());
        this.options = settings.ownDefaults()
                ? Options.defaults() // bloomkv's own defaults: only the filter bits and the sync mode are set
                        .bitsPerKey(settings.filters() ? settings.bitsPerKey() : 0)
                        .memtableFilterBitsPerKey(
                                settings.filters() ? Options.defaults().memtableFilterBitsPerKey() : 0)
                        .syncMode(settings.sync() ? SyncMode.EVERY_WRITE : SyncMode.NONE)
                        .prefixLength(settings.prefixLength())
                        .rateLimiter(settings.rateLimit())
                        .mergeOperator(MergeOperators.uint64Add())
                        .listeners(jobs)
                : Options.defaults()
                        .filterKind(spec.kind())
                        .ribbonFromLevel(spec.ribbonFromLevel())
                        .filterAllocation(
                                spec.monkey()
                                        ? io.bloomkv.engine.FilterAllocation.MONKEY
                                        : io.bloomkv.engine.FilterAllocation.UNIFORM)
                        .filterBudget(
                                spec.memoryBudget()
                                        ? io.bloomkv.engine.FilterBudget.MEMORY
                                        : io.bloomkv.engine.FilterBudget.FALSE_POSITIVE_RATE)
                        .bitsPerKey(settings.filters() ? settings.bitsPerKey() : 0)
                        .blockSize(settings.blockSize())
                        .blockCacheSize(settings.cacheSize())
                        .writeBufferSize(settings.writeBufferSize())
                        .memtableFilterBitsPerKey(settings.filters() ? settings.bitsPerKey() : 0)
                        .syncMode(settings.sync() ? SyncMode.EVERY_WRITE : SyncMode.NONE)
                        .compression(compression(settings.compression()))
                        .bottommostCompression(compression(settings.compression()))
                        .useDirectReads(settings.directReads())
                        .useMmapReads(settings.mmapReads())
                        // matched: the log written with write(2), as RocksDB writes its WAL by default
                        .useMmapWal(false)
                        .prefixLength(settings.prefixLength())
                        .rateLimiter(settings.rateLimit())
                        .mergeOperator(MergeOperators.uint64Add())
                        .listeners(jobs)
                        .createIfMissing(true);
    }

    /** The engine's compression for the bench's name (none, lz4, zstd). */
    static Compression compression(String name) {
        return switch (name) {
            case "none" -> Compression.NONE;
            case "lz4" -> Compression.LZ4;
            case "zstd" -> Compression.ZSTD;
            default -> throw new IllegalArgumentException("unknown compression '" + name + "'");
        };
    }

    public static BloomKvEngine open(Path dir, EngineSettings settings) throws IOException {
        BloomKvEngine e = new BloomKvEngine(dir, settings);
        // A percentage is applied after each load (applyFilterBudgetShare); until then a budget that binds nothing, so
        // the load writes its tables as under the final budget: partitioned filters (docs/operations.md, "Partitioned
        // filters"), which a store that runs under a budget has.
        e.openOptions = settings.filterBudget().bytes() > 0
                ? e.options.copy().filterMemoryBudget(settings.filterBudget().bytes())
                : settings.filterBudget().percent() > 0
                        ? e.options.copy().filterMemoryBudget(UNBINDING_BUDGET)
                        : e.options;
        e.db = Db.open(dir, e.openOptions);
        return e;
    }

    /** A filter memory budget larger than any filter set: tables are written partitioned, every filter stays pinned. */
    static final long UNBINDING_BUDGET = Long.MAX_VALUE / 4;

    /** The database, for benchmarks that call it directly. */
    public Db db() {
        return db;
    }

    @Override
    public String name() {
        return "bloomkv";
    }

    @Override
    public boolean filtersEnabled() {
        return settings.filters();
    }

    @Override
    public void put(byte[] key, byte[] value) {
        db.put(key, value);
    }

    @Override
    public int backgroundJobsRunning() {
        return jobs.running();
    }

    @Override
    public long writeStallMicros() {
        return db.stats().writeStallMicros();
    }

    @Override
    public BulkLoad bulkLoad(Path file) {
        io.bloomkv.engine.TableFileWriter w = io.bloomkv.engine.TableFileWriter.create(file, options);
        return new BulkLoad() {
            @Override
            public void put(byte[] key, byte[] value) {
                w.put(key, value);
            }

            @Override
            public void ingest() {
                w.finish();
                db.ingest(
                        List.of(file),
                        io.bloomkv.engine.IngestOptions.defaults().moveFiles(true));
            }

            @Override
            public void close() {
                w.close();
            }
        };
    }

    @Override
    public void putAll(List<byte[]> keys, List<byte[]> values) {
        WriteBatch batch = new WriteBatch();
        for (int i = 0; i < keys.size(); i++) {
            batch.put(keys.get(i), values.get(i));
        }
        db.write(batch);
    }

    @Override
    public byte[] get(byte[] key) {
        return db.get(key);
    }

    @Override
    public void delete(byte[] key) {
        db.delete(key);
    }

    @Override
    public void merge(byte[] key, byte[] operand) {
        db.merge(key, operand);
    }

    @Override
    public void deleteRange(byte[] begin, byte[] end) {
        db.deleteRange(begin, end);
    }

    @Override
    public List<byte[]> multiGet(List<byte[]> keys) {
        return db.multiGet(keys);
    }

    @Override
    public int scan(byte[] start, int count, byte[][] keysOut, byte[][] valuesOut) {
        return scan(null, start, 0, count, keysOut, valuesOut);
    }

    @Override
    public int scanPrefix(byte[] start, int prefixLength, int count, byte[][] keysOut, byte[][] valuesOut) {
        return scan(PREFIX_SAME_AS_START, start, prefixLength, count, keysOut, valuesOut);
    }

    /**
     * Seeks to {@code start} and steps over up to {@code count} entries sharing its first {@code prefixLength} bytes,
     * handing each out into {@code keysOut} / {@code valuesOut} when they are not null.
     */
    private int scan(ReadOptions ro, byte[] start, int prefixLength, int count, byte[][] keysOut, byte[][] valuesOut) {
        int seen = 0;
        try (DbIterator it = db.iterator(ro)) {
            for (it.seek(start); seen < count && it.valid(); it.next()) {
                byte[] k = it.key(); // once per entry, as RocksDbEngine fetches it (each call copies the key)
                if (!startsWith(k, start, prefixLength)) {
                    break;
                }
                byte[] v = it.value();
                if (k.length == 0 || v == null) {
                    throw new IllegalStateException("bloomkv iterator returned an empty entry");
                }
                if (keysOut != null) {
                    keysOut[seen] = k;
                    valuesOut[seen] = v;
                }
                seen++;
            }
        }
        return seen;
    }

    /** {@code key} has {@code target}'s first {@code prefixLength} bytes as its own first bytes. */
    static boolean startsWith(byte[] key, byte[] target, int prefixLength) {
        return key.length >= prefixLength && java.util.Arrays.equals(key, 0, prefixLength, target, 0, prefixLength);
    }

    @Override
    public void flushAndSettle() throws IOException {
        db.flush();
        db.waitForBackgroundWork();
        applyFilterBudgetShare();
    }

    /**
     * For a --filter-budget given as a percentage: reopens the database without a budget to read the filters' unbounded
     * size ({@code bloomkv.filter-memory}), then with that share of it as {@link Options#filterMemoryBudget(long)}.
     */
    private void applyFilterBudgetShare() throws IOException {
        double percent = settings.filterBudget().percent();
        if (percent <= 0) {
            return;
        }
        openOptions = options;
        reopen();
        long full = Long.parseLong(db.property("bloomkv.filter-memory").orElse("0"));
        openOptions = options.copy().filterMemoryBudget(Math.max(1, (long) (full * percent / 100)));
        reopen();
    }

    /** The filter memory budget in force, in bytes (0: none, or none binding yet). */
    public long filterMemoryBudget() {
        long b = openOptions.filterMemoryBudget();
        return b == UNBINDING_BUDGET ? 0 : b;
    }

    @Override
    public void compactAll() throws IOException {
        db.compactRange(null, null);
        flushAndSettle();
    }

    @Override
    public void reopen() throws IOException {
        EngineCounters now = counters();
        carried = new EngineCounters(
                now.filterChecks(),
                now.filterUseful(),
                now.filterPositive(),
                now.filterTruePositive(),
                now.blockReads(),
                now.blockReadBytes(),
                now.tableBytesWritten(),
                now.walBytesWritten());
        db.close();
        db = null;
        db = Db.open(dir, openOptions);
    }

    @Override
    public EngineCounters counters() {
        Stats s = db.stats();
        return new EngineCounters(
                carried.filterChecks() + s.filterChecks(),
                carried.filterUseful() + s.filterUseful(),
                carried.filterPositive() + s.filterPositive(),
                carried.filterTruePositive() + s.filterTruePositive(),
                carried.blockReads() + s.blockReads(),
                carried.blockReadBytes() + s.blockReadBytes(),
                carried.tableBytesWritten() + s.flushBytesWritten() + s.compactionBytesWritten(),
                carried.walBytesWritten() + s.walBytesWritten());
    }

    @Override
    public TableSummary tables() {
        long entries = 0;
        long filterBytes = 0;
        long sst = 0;
        double weightedFpr = 0;
        List<TableInfo> live = db.tables();
        List<TableRange> ranges = new java.util.ArrayList<>();
        for (TableInfo t : live) {
            ranges.add(new TableRange(
                    t.smallestUserKey(),
                    t.largestUserKey(),
                    t.filterKind() == null ? Double.NaN : t.filterExpectedFpp(),
                    true));
            entries += t.entries();
            filterBytes += t.filterMemoryBytes();
            sst += t.fileSize();
            if (t.filterKind() != null) {
                weightedFpr += t.entries() * t.filterExpectedFpp();
            }
        }
        double fpr = settings.filters() && entries > 0 ? weightedFpr / entries : Double.NaN;
        return new TableSummary(live.size(), entries, filterBytes, sst, fpr, ranges);
    }

    @Override
    public List<Path> tableFiles() {
        return db.tables().stream().map(TableInfo::path).toList();
    }

    @Override
    public String describe() {
        if (settings.ownDefaults()) {
            return "bloomkv on Options.defaults(): " + openOptions;
        }
        return "bloomkv: "
                + (settings.filters()
                        ? settings.filterKind() + " filters, " + settings.bitsPerKey() + " bits/key (off-heap)"
                        : "no filters")
                + ", block " + settings.blockSize() + " B, block cache " + settings.cacheSize() + " B, write buffer "
                + settings.writeBufferSize() + " B" + (settings.filters() ? " with a memtable filter" : "")
                + ", compression " + settings.compression()
                + (settings.directReads() ? ", direct reads" : "")
                + (settings.prefixLength() > 0 ? ", prefix length " + settings.prefixLength() : "")
                + (settings.filterBudget().none()
                        ? ""
                        : settings.filterBudget().bytes() > 0
                                ? ", filter memory budget "
                                        + settings.filterBudget().bytes() + " B"
                                : ", filter memory budget " + settings.filterBudget()
                                        + " of the unbounded filters (measured after each load)")
                + (settings.rateLimit() > 0 ? ", rate limit " + settings.rateLimit() + " B/s" : "") + ", WAL on, sync "
                + (settings.sync() ? "EVERY_WRITE" : "NONE");
    }

    @Override
    public void close() {
        if (db != null) {
            db.close();
            db = null;
        }
    }
}
