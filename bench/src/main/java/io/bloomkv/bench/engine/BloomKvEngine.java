package io.bloomkv.bench.engine;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.SyncMode;
import io.bloomkv.engine.WriteBatch;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.table.ReadCounters;
import io.bloomkv.engine.table.TableReader;
import io.bloomkv.engine.version.FileNames;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * bloomkv driven through its public {@link Db} API, with the same settings as RocksDB: filters of
 * the configured kind at the same bits per key (or none), the same block size, block cache and write
 * buffer, WAL on, {@link SyncMode#EVERY_WRITE} only when sync is asked. Counters come from
 * {@link Db#stats()}; WAL bytes from a counting file system around the real one.
 */
public final class BloomKvEngine implements BenchEngine {
    private final Path dir;
    private final EngineSettings settings;
    private final Options options;
    private final CountingFileSystem fs = new CountingFileSystem(FileSystem.disk());
    /** Counters of databases closed by {@link #reopen()}: Db.stats() restarts at 0 on open. */
    private EngineCounters carried = EngineCounters.ZERO;
    private Db db;

    private BloomKvEngine(Path dir, EngineSettings settings) {
        this.dir = dir;
        this.settings = settings;
        this.options = Options.defaults()
                .filterKind(FilterKind.valueOf(settings.filterKind()))
                .bitsPerKey(settings.filters() ? settings.bitsPerKey() : 0)
                .blockSize(settings.blockSize())
                .blockCacheSize(settings.cacheSize())
                .writeBufferSize(settings.writeBufferSize())
                .syncMode(settings.sync() ? SyncMode.EVERY_WRITE : SyncMode.NONE)
                .fileSystem(fs)
                .createIfMissing(true);
    }

    public static BloomKvEngine open(Path dir, EngineSettings settings) throws IOException {
        BloomKvEngine e = new BloomKvEngine(dir, settings);
        e.db = Db.open(dir, e.options);
        return e;
    }

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
    public int scan(byte[] start, int count) {
        int seen = 0;
        try (DbIterator it = db.iterator()) {
            for (it.seek(start); seen < count && it.valid(); it.next()) {
                if (it.key().length == 0 || it.value() == null) {
                    throw new IllegalStateException("bloomkv iterator returned an empty entry");
                }
                seen++;
            }
        }
        return seen;
    }

    @Override
    public void flushAndSettle() throws IOException {
        db.flush();
        db.waitForBackgroundWork();
    }

    @Override
    public void compactAll() throws IOException {
        db.compactRange(null, null);
        flushAndSettle();
    }

    @Override
    public void reopen() throws IOException {
        EngineCounters now = counters();
        carried = new EngineCounters(now.filterChecks(), now.filterUseful(), now.filterPositive(),
                now.filterTruePositive(), now.blockReads(), now.blockReadBytes(), now.tableBytesWritten(), 0);
        db.close();
        db = null;
        db = Db.open(dir, options);
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
                fs.walBytes.sum());
    }

    @Override
    public TableSummary tables() throws IOException {
        Stats s = db.stats();
        long entries = 0;
        double weightedFpr = 0;
        long tables = 0;
        for (Path p : tableFiles()) {
            FileNames.Parsed parsed = FileNames.parse(p.getFileName().toString());
            try (TableReader r = TableReader.open(FileSystem.disk(), p, parsed.number(), null, new ReadCounters())) {
                long n = r.properties().entries();
                entries += n;
                tables++;
                if (r.hasFilter() && !r.filterBroken()) {
                    weightedFpr += n * r.filterExpectedFpp();
                }
            } catch (NoSuchFileException gone) {
                // deleted by a compaction between listing and opening: not live any more
            }
        }
        double fpr = settings.filters() && entries > 0 ? weightedFpr / entries : Double.NaN;
        return new TableSummary(tables, entries, s.filterMemoryBytes(), s.tableBytes(), fpr);
    }

    @Override
    public List<Path> tableFiles() throws IOException {
        try (Stream<Path> st = Files.list(dir)) {
            return st.filter(p -> p.getFileName().toString().endsWith(".sst")).sorted().toList();
        }
    }

    @Override
    public String describe() {
        return "bloomkv: " + (settings.filters() ? settings.filterKind() + " filters, " + settings.bitsPerKey() + " bits/key (off-heap)" : "no filters")
                + ", block " + settings.blockSize() + " B, block cache " + settings.cacheSize() + " B, write buffer "
                + settings.writeBufferSize() + " B, no compression, WAL on, sync " + (settings.sync() ? "EVERY_WRITE" : "NONE");
    }

    @Override
    public void close() {
        if (db != null) {
            db.close();
            db = null;
        }
    }
}
