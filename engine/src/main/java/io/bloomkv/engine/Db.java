package io.bloomkv.engine;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.bloom.JvmEnvironment;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.KeyLookup;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.compaction.Compaction;
import io.bloomkv.engine.internal.iterator.MergingIterator;
import io.bloomkv.engine.internal.iterator.RangeProbeMemo;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.table.BlockCache;
import io.bloomkv.engine.internal.table.FilterMemory;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.table.TableReadMode;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.FileNames;
import io.bloomkv.engine.internal.version.TableCache;
import io.bloomkv.engine.internal.version.Version;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * An embedded LSM key-value store. Keys and values are byte arrays; keys are ordered unsigned
 * lexicographically. Thread-safe: any number of threads may read and write at once.
 *
 * <pre>{@code
 * try (Db db = Db.open(Path.of("/tmp/kv"), Options.defaults().syncMode(SyncMode.GROUP_COMMIT))) {
 *     db.put(key, value);
 *     byte[] v = db.get(key);                     // null when absent
 *     db.delete(key);
 *     db.write(new WriteBatch().put(k1, v1).delete(k2));   // atomic
 *     try (DbIterator it = db.iterator()) {
 *         for (it.seekToFirst(); it.valid(); it.next()) { ... it.key() ... it.value() ... }
 *     }
 *     System.out.println(db.stats().filterUseful() + " disk lookups avoided");
 * }
 * }</pre>
 *
 * <h2>Durability</h2>
 * Each write goes to the WAL of the current memtable first, synced as {@link Options#syncMode}
 * says. A full memtable is flushed to a level-0 table by a background thread; its WAL is deleted
 * once the table is recorded in the MANIFEST. {@link #open} replays the MANIFEST, then the WALs; a
 * torn WAL tail (a crash mid-append) is cut at the last whole record.
 *
 * <h2>Reads</h2>
 * A get hashes the key once ({@link Hashing#hash64}), looks in the memtable, the immutable
 * memtables, then the tables of the current {@link Version} (level 0 newest first, then one table
 * per deeper level), skipping tables whose key range excludes the key and asking each remaining
 * table's filter before any block read. {@link #stats()} counts the lookups the filters avoided. {@link #keyMayExist}
 * asks the same sources, and the filters in memory, but reads nothing from a file: the block cache only.
 *
 * <h2>Where each step lives</h2>
 * Open and WAL replay: {@link Recovery}. Writes: {@link CommitPipeline} (write queue, group commit,
 * memtable switch). Flush: {@link Flusher}. New tables: {@link TableOutputs}. Compaction:
 * {@link Compactor}, choosing with {@link io.bloomkv.engine.internal.compaction.CompactionPicker}. File
 * deletion: {@link ObsoleteFiles}. State under the mutex: {@link DbState}. Counters:
 * {@link DbCounters} beside {@link ReadCounters}. This class wires them and serves reads.
 *
 * <h2>Merges, range deletions, compaction filters (RocksDB's semantics)</h2>
 * {@link #merge} writes operands that {@link Options#mergeOperator} combines on reads ({@link PointLookup} with
 * {@link io.bloomkv.engine.internal.KeyLookup} for gets, {@link DbIterator} for scans) and in compactions
 * ({@link io.bloomkv.engine.internal.compaction.MergeCollapser}). {@link #deleteRange} writes range tombstones
 * ({@link io.bloomkv.engine.internal.rangedel.RangeTombstoneList}), kept by memtables and in each table's
 * range-deletion block; reads weigh them before any filter or block, compactions drop what they cover
 * ({@link Compactor}). {@link Options#compactionFilter} decides the fate of values in compactions.
 *
 * <h2>Errors</h2>
 * Bad input is an {@link InvalidArgumentException} and changes nothing; use after close is a
 * {@link DbClosedException}; I/O errors are {@link BloomKvIOException}s; damaged files are
 * {@link CorruptionException}s naming the file. After an I/O error in the write path, writes fail
 * until {@link #resume} or a reopen; reads go on.
 */
public final class Db implements AutoCloseable {
    /**
     * Longest key stored, 64 KiB: a write of a longer key is refused. Reads take longer keys, as RocksDB does: a get of
     * one finds nothing, and seek targets and iterator bounds may be longer ({@link DbIterator#seek}).
     */
    public static final int MAX_KEY_SIZE = 64 * 1024;
    /** Longest value accepted, 16 MiB. */
    public static final int MAX_VALUE_SIZE = 16 * 1024 * 1024;

    private final Path dir;
    private final Options options;
    private final FileSystem fs;
    private final Closeable dirLock;
    private final ReadCounters readCounters = new ReadCounters();
    private final DbCounters counters = new DbCounters();
    private final BlockCache blockCache;
    private final TableCache tableCache;
    private final VersionSet versions;
    private final DbState state;
    private final ObsoleteFiles obsolete;
    private final TableOutputs outputs;
    private final CommitPipeline commits;
    /** This database's share of {@link Options#writeBufferManager()} (nothing without one); under the mutex. */
    private final WriteBufferCharge writeBufferCharge;

    private final SnapshotList snapshots = new SnapshotList();
    /** {@link Options#ttl}: stamps writes, hides expired values on reads, removes them in compactions; null = no TTL. */
    private final Ttl ttl;
    /** The merge operator the caller set (with a TTL, {@link #options} holds its {@link Ttl.TtlMergeOperator}). */
    private final MergeOperator userMergeOperator;

    private final Set<DbIterator> openIterators = ConcurrentHashMap.newKeySet();
    private final Events events;
    /**
     * Set when the info log was told that tables are read without a filter: it warns once per open, at the first
     * Version or {@link #stats()} call that finds one (see {@link #noteTablesWithoutFilter}).
     */
    private final java.util.concurrent.atomic.AtomicBoolean warnedTablesWithoutFilter =
            new java.util.concurrent.atomic.AtomicBoolean();
    /** Held by the {@link #resume} call that runs: a concurrent one waits for it, then finds the error it left. */
    private final java.util.concurrent.locks.ReentrantLock resumeLock = new java.util.concurrent.locks.ReentrantLock();

    private Flusher flusher;
    private Compactor compactor;
    /** Unregisters this database's {@link DbMXBean}; taken (once) by {@link #close}. */
    private final java.util.concurrent.atomic.AtomicReference<AutoCloseable> jmx =
            new java.util.concurrent.atomic.AtomicReference<>();

    private Db(Path dir, Options options, Closeable dirLock) {
        this.dir = dir;
        this.options = options;
        this.ttl = Ttl.of(options);
        this.userMergeOperator = options.mergeOperator();
        if (ttl != null) {
            // Every reader, flush and compaction merges through it: operands and values carry their write time.
            options.mergeOperator(ttl.mergeOperator(options.mergeOperator()));
        }
        this.fs = options.fileSystem();
        this.dirLock = dirLock;
        this.blockCache = options.blockCache() != null
                ? options.blockCache().newView()
                : options.blockCacheSize() > 0 ? new BlockCache(options.blockCacheSize()) : null;
        this.tableCache = new TableCache(
                fs,
                dir,
                blockCache,
                readCounters,
                TableReadMode.of(options.useDirectReads(), options.useMmapReads()),
                options.sharedFilterBudget() != null
                        ? options.sharedFilterBudget().memory()
                        : options.filterMemoryBudget() > 0 ? new FilterMemory(options.filterMemoryBudget()) : null);
        // The VersionSet calls back into obsolete-file deletion whenever a Version dies; never a pass under the mutex
        // (a SuperVersion install): the installer of the new Version runs one after releasing it (see ObsoleteFiles).
        ObsoleteFiles[] obsoleteRef = new ObsoleteFiles[1];
        this.versions = new VersionSet(fs, dir, options, tableCache, () -> obsoleteRef[0].delete());
        this.state = new DbState(versions);
        this.obsolete = new ObsoleteFiles(
                fs, dir, versions, tableCache, blockCache, state::backgroundError, state::heldByCurrentThread);
        obsoleteRef[0] = obsolete;
        this.outputs = new TableOutputs(fs, dir, options, versions, tableCache, obsolete, counters);
        this.writeBufferCharge = new WriteBufferCharge(options.writeBufferManager());
        this.commits = new CommitPipeline(state, versions, options, fs, dir, counters, writeBufferCharge);
        this.events = new Events(DbLog.withLog(options.listeners()), dir);
        this.state.onVersionPublished(v -> {
            if (!warnedTablesWithoutFilter.get()) {
                noteTablesWithoutFilter(v);
            }
        });
        this.obsolete.events(events);
        this.commits.events(events);
        this.commits.smallestSnapshot(this::smallestSnapshot);
    }

    // ------------------------------------------------------------------ open

    /**
     * Opens (or, with {@link Options#createIfMissing}, creates) the database in {@code dir},
     * recovering what a crash left: the MANIFEST, then every WAL not yet in a table.
     *
     * @throws NotADatabaseException if {@code dir} is a file, or a directory holding other files but
     *     no database, or missing while createIfMissing is false
     * @throws DbLockedException if another process or Db instance has it open
     * @throws CorruptionException if a MANIFEST, CURRENT or WAL record is damaged (a torn WAL tail is not)
     * @throws BloomKvIOException on an I/O error
     */
    public static Db open(Path dir, Options options) {
        JvmEnvironment.ensureInitialized(); // before Chronicle, posix or XXH3 is touched: see its class comment
        if (dir == null) {
            throw new InvalidArgumentException("directory is null");
        }
        if (options == null) {
            throw new InvalidArgumentException("options are null");
        }
        Options opts = options.copy();
        if (opts.l0SlowdownWritesTrigger() < opts.l0CompactionTrigger()
                || opts.l0StopWritesTrigger() < opts.l0SlowdownWritesTrigger()) {
            throw new InvalidArgumentException(
                    "need l0CompactionTrigger <= l0SlowdownWritesTrigger <= l0StopWritesTrigger, got "
                            + opts.l0CompactionTrigger() + ", " + opts.l0SlowdownWritesTrigger() + ", "
                            + opts.l0StopWritesTrigger());
        }
        if (opts.disableWal() && opts.syncMode() != SyncMode.NONE) {
            throw new InvalidArgumentException(
                    "syncMode " + opts.syncMode() + " needs a WAL to sync (disableWal is set): use SyncMode.NONE");
        }
        FileSystem fs = opts.fileSystem();
        Path abs = dir.toAbsolutePath().normalize();
        if (opts.readOnly()) {
            return openReadOnly(fs, abs, opts, dir.toString());
        }
        Closeable lock = null;
        Db db = null;
        try {
            if (!fs.exists(abs)) {
                if (!opts.createIfMissing()) {
                    throw new NotADatabaseException(abs, "it does not exist and createIfMissing is false");
                }
                fs.createDirectories(abs);
            }
            Recovery.checkLooksLikeDatabase(fs, abs);
            Optional<Closeable> l = fs.tryLock(FileNames.lockFile(abs));
            if (l.isEmpty()) {
                throw new DbLockedException(abs);
            }
            lock = l.get();
            if (opts.useDirectReads()) {
                checkDirectReads(fs, abs);
            }
            db = new Db(abs, opts, lock);
            new Recovery(abs, opts, fs, db.versions, db.outputs, db.obsolete, db.state, db.counters).run();
            db.checkMergeOperator();
            db.startBackgroundThreads();
            if (DbLog.LOG.isInfoEnabled()) {
                Stats st = db.stats();
                DbLog.LOG.info(
                        "[{}] opened: {} tables in {} levels, last sequence {}, {} torn WAL tails dropped in recovery,"
                                + " {} WALs not replayed after a lost one",
                        abs,
                        st.tableCount(),
                        st.numLevels(),
                        st.lastSequence(),
                        st.walTailsDropped(),
                        st.walsNotReplayed());
            }
            db.jmx.set(DbJmx.register(db, dir.toString(), db.state::backgroundError));
            return db;
        } catch (IOException e) {
            cleanupFailedOpen(db, lock, e);
            throw new BloomKvIOException("cannot open database " + abs, e);
        } catch (RuntimeException | Error e) {
            cleanupFailedOpen(db, lock, e);
            throw e;
        }
    }

    /** {@link #open} with {@link Options#readOnly}: takes no lock, writes nothing, starts no thread. */
    private static Db openReadOnly(FileSystem fs, Path abs, Options opts, String dirAsPassed) {
        Db db = null;
        try {
            if (!fs.exists(abs)) {
                throw new NotADatabaseException(abs, "it does not exist (a read-only open creates nothing)");
            }
            Recovery.checkLooksLikeDatabase(fs, abs);
            if (opts.useDirectReads()) {
                checkDirectReads(fs, abs);
            }
            db = new Db(abs, opts, () -> {});
            new Recovery(abs, opts, fs, db.versions, db.outputs, db.obsolete, db.state, db.counters).runReadOnly();
            db.checkMergeOperator();
            db.jmx.set(DbJmx.register(db, dirAsPassed, db.state::backgroundError));
            return db;
        } catch (IOException e) {
            cleanupFailedOpen(db, null, e);
            throw new BloomKvIOException("cannot open database " + abs + " read-only", e);
        } catch (RuntimeException | Error e) {
            cleanupFailedOpen(db, null, e);
            throw e;
        }
    }

    /**
     * Deletes the database in {@code dir} (LevelDB's DestroyDB): every file with a database name
     * (WALs, tables, MANIFESTs, CURRENT, LOCK, temp files), then the directory if it is left empty.
     * Other files are left alone. A missing directory is not an error.
     *
     * @throws DbLockedException if the database is open
     * @throws BloomKvIOException on an I/O error
     */
    public static void destroy(Path dir, Options options) {
        if (dir == null || options == null) {
            throw new InvalidArgumentException("directory and options must not be null");
        }
        FileSystem fs = options.fileSystem();
        Path abs = dir.toAbsolutePath().normalize();
        try {
            if (!fs.exists(abs)) {
                return;
            }
            List<Path> entries;
            try {
                entries = fs.list(abs);
            } catch (NotDirectoryException e) {
                throw new NotADatabaseException(abs, "it is not a directory");
            }
            Optional<Closeable> lock = fs.tryLock(FileNames.lockFile(abs));
            if (lock.isEmpty()) {
                throw new DbLockedException(abs);
            }
            boolean foreign = false;
            try (Closeable held = lock.get()) {
                for (Path p : entries) {
                    FileNames.Parsed parsed = FileNames.parse(p.getFileName().toString());
                    if (parsed == null) {
                        foreign = true;
                    } else if (parsed.kind() != FileNames.Kind.LOCK) {
                        fs.delete(p);
                    }
                }
            }
            fs.delete(FileNames.lockFile(abs));
            if (!foreign && fs.list(abs).isEmpty()) {
                fs.delete(abs);
            }
        } catch (IOException e) {
            throw new BloomKvIOException("cannot destroy database " + abs, e);
        }
    }

    /**
     * Refuses {@link Options#useDirectReads} where {@code fs} cannot open a file of {@code dir} with
     * O_DIRECT (probed on CURRENT, or LOCK for a new database).
     */
    private static void checkDirectReads(FileSystem fs, Path dir) {
        Path probe = fs.exists(FileNames.currentFile(dir)) ? FileNames.currentFile(dir) : FileNames.lockFile(dir);
        try (ReadableFile f = fs.newDirectReadableFile(probe)) {
            f.size();
        } catch (IOException e) {
            throw new InvalidArgumentException(
                    "useDirectReads: direct reads (O_DIRECT) are not available for " + dir + ": " + e.getMessage());
        }
    }

    /** Releases what a failed open built, best effort; problems are added to {@code failure}. */
    private static void cleanupFailedOpen(Db db, Closeable lock, Throwable failure) {
        if (db != null) {
            IOException e = db.shutDown(false);
            if (e != null) {
                failure.addSuppressed(e);
            }
        }
        try {
            if (lock != null) {
                lock.close();
            }
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * Refuses a database that holds merge operands (in a table, or a replayed memtable) when no merge operator is set:
     * its reads could not be answered (RocksDB fails each such read; bloomkv fails the open, once and clearly).
     */
    private void checkMergeOperator() {
        if (options.mergeOperator() != null) {
            return;
        }
        SuperVersion sv = state.acquireSuperVersion();
        try {
            boolean found = sv.mem.hasMergeOperands();
            for (MemTable m : sv.imms) {
                found |= m.hasMergeOperands();
            }
            for (int level = 0; level < sv.version.numLevels() && !found; level++) {
                for (int i = 0; i < sv.version.numFiles(level) && !found; i++) {
                    found = sv.version.reader(level, i).properties().mergeOperands() > 0;
                }
            }
            if (found) {
                throw new MergeOperatorException(
                        "database " + dir + " holds merge operands: open it with Options.mergeOperator");
            }
        } finally {
            sv.release();
        }
    }

    private void startBackgroundThreads() {
        compactor = new Compactor(new DbCompactionEnv());
        flusher = new Flusher(state, versions, outputs, obsolete, counters, compactor::wake, writeBufferCharge);
        flusher.events(events);
        flusher.smallestSnapshot(this::smallestSnapshot);
        flusher.start(dir);
        compactor.start();
    }

    // ------------------------------------------------------------------ reads

    /**
     * The value of {@code key}, or null when absent. A key longer than {@link #MAX_KEY_SIZE} is absent (no stored key
     * is that long), as in RocksDB, which reads keys of any length.
     *
     * @throws InvalidArgumentException when {@code key} is null or empty
     */
    public byte[] get(byte[] key) {
        return get(key, null);
    }

    /**
     * The value of {@code key} at {@code readOptions.snapshot()} (the latest state when null), or null. With
     * {@link Options#ttl}, an expired value reads as null. A key longer than {@link #MAX_KEY_SIZE} reads as null.
     *
     * @throws InvalidArgumentException when {@code key} is null or empty, or the snapshot is released or another
     *     database's
     */
    public byte[] get(byte[] key, ReadOptions readOptions) {
        byte[] v = getStored(key, readOptions);
        return ttl == null ? v : ttl.visible(v, ttl.now());
    }

    /** The stored value (with its write time in a TTL database) of {@code key}, or null. */
    private byte[] getStored(byte[] key, ReadOptions readOptions) {
        checkOpen();
        if (!LongKeys.mayBeStored(key)) {
            // Longer than MAX_KEY_SIZE: no stored key is, so not found, as in RocksDB; no memtable, filter or table
            // is asked. The snapshot is still checked, as for any key.
            readSequence(readOptions);
            counters.misses.increment();
            return null;
        }
        ThreadLocalRefs.Slot slot = state.localSlot();
        SuperVersion sv = state.acquireLocal(slot); // no shared reference count written (ThreadLocalRefs)
        try {
            long sequence = readSequence(readOptions); // after the SuperVersion: see readSequence
            long hash = Hashing.hash64(key); // once per get: the memtables' and the tables' filters use it
            if (sv.rangeTombstonesMayCover(key)) {
                // Tombstones are weighed against each source's entries (PointLookup consults them before any block).
                byte[] v = PointLookup.get(sv, key, hash, sequence, options.mergeOperator(), readCounters);
                (v != null ? counters.hits : counters.misses).increment();
                return v;
            }
            TableReader.Entry e = sv.mem.get(key, hash, sequence);
            for (int i = 0; e == null && i < sv.imms.size(); i++) {
                e = sv.imms.get(i).get(key, hash, sequence);
            }
            if (e != null) {
                counters.memtableHits.increment();
            } else {
                e = sv.version.get(key, hash, sequence);
            }
            if (e != null && e.type() == ValueType.MERGE) {
                byte[] merged = PointLookup.get(sv, key, hash, sequence, options.mergeOperator(), readCounters);
                (merged != null ? counters.hits : counters.misses).increment();
                return merged;
            }
            if (e != null && e.type() == ValueType.PUT) {
                counters.hits.increment();
                return e.value();
            }
            counters.misses.increment();
            return null;
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("get failed", e.getCause());
        } finally {
            state.releaseLocal(slot, sv);
        }
    }

    /**
     * The values of {@code keys} (null where absent), equal to a {@link #get} of each, read at one point in time.
     * Batched ({@link MultiGet}): every table filters all candidate keys at once, overlapping the filters' cache
     * misses, before any block is read. The list may hold duplicates; the result has one entry per key. A key longer
     * than {@link #MAX_KEY_SIZE} is absent (null), as for {@link #get}, and asks no memtable, filter or table.
     *
     * @throws InvalidArgumentException when the list or one of its keys is null, or a key is empty
     */
    public List<byte[]> multiGet(List<byte[]> keys) {
        return multiGet(null, keys);
    }

    /** {@link #multiGet(List)} at {@code readOptions.snapshot()} (the latest state when null). */
    public List<byte[]> multiGet(ReadOptions readOptions, List<byte[]> keys) {
        checkOpen();
        if (keys == null) {
            throw new InvalidArgumentException("keys must not be null");
        }
        ThreadLocalRefs.Slot slot = state.localSlot();
        SuperVersion sv = state.acquireLocal(slot);
        try {
            long sequence = readSequence(readOptions); // after the SuperVersion: see readSequence
            MultiGet.Outcome o = MultiGet.run(sv, keys, sequence, options.mergeOperator(), readCounters);
            counters.hits.add(o.hits());
            counters.misses.add(keys.size() - o.hits());
            counters.memtableHits.add(o.memtableHits());
            if (ttl == null) {
                return o.values();
            }
            long now = ttl.now();
            List<byte[]> out = new ArrayList<>(o.values().size());
            for (byte[] v : o.values()) {
                out.add(ttl.visible(v, now));
            }
            return out;
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("multiGet failed", e.getCause());
        } finally {
            state.releaseLocal(slot, sv);
        }
    }

    /**
     * Whether {@code key} may have a value at the latest state: false means certainly none, true that it may (RocksDB's
     * {@code KeyMayExist}). See {@link #keyMayExist(ReadOptions, byte[], Holder)}.
     */
    public boolean keyMayExist(byte[] key) {
        return keyMayExist(null, key, null);
    }

    /** {@link #keyMayExist(ReadOptions, byte[], Holder)} at the latest state. */
    public boolean keyMayExist(byte[] key, Holder<byte[]> valueHolder) {
        return keyMayExist(null, key, valueHolder);
    }

    /**
     * Whether {@code key} may have a value at {@code readOptions.snapshot()} (the latest state when {@code readOptions}
     * or its snapshot is null), answered without reading a data block from a file (RocksDB's {@code KeyMayExist},
     * rocksdbjni's {@code keyMayExist}): false means the key certainly has no value there (a get would return null);
     * true means it may, and a caller that must know reads it ({@link #get}, {@link #keyExists}).
     *
     * <p>How it decides. The memtables answer exactly, as for a get: a put, a delete, a range deletion covering the
     * key, merge operands over a value (merged by {@link Options#mergeOperator}, as a get merges them). Then come the
     * tables a get asks, in its order (level 0 newest first, then the one table of each deeper level whose key range
     * holds the key), their range tombstones weighed first, and each table's filter probed as a get probes it (the
     * same hash of the whole key, also with {@link Options#prefixLength}). A table whose filter rules the key out is
     * passed; when every one does, the answer is exact (false, or the merge of the operands found in the memtables onto
     * no value). Where a filter lets the key through, the table's index (on the heap) and the block cache are searched:
     * a data block the cache holds answers exactly, as a get would; a block it lacks, or a table that skips the cache
     * (a mapped table of uncompressed blocks, {@link Options#useMmapReads}), ends the call with true and no value. A
     * filter false positive thus costs a "may exist", never a file read. Under a {@link Options#filterMemoryBudget}, a
     * table whose filter (or the key's filter partition) is not in memory lets the key through without loading it, as
     * RocksDB's cache-only read does: the call reads no file at all, and its look-ups in the budget's cache do not
     * count as uses there, so it does not change what the budget keeps.
     *
     * <p>{@code valueHolder}, when not null, is set to the key's value when it was found in memory (a memtable or a
     * cached block), and to null otherwise: true with a null value means "may exist, value not known". The array is a
     * copy, the caller's to keep.
     *
     * <p>With {@link Options#ttl}, a value found in memory and expired gives false and no value, as a get returns null
     * for it; an expired entry not found in memory may still give true.
     *
     * <p>Statistics: the call counts in none of {@link #stats()}' read statistics, neither as a get nor as filter
     * probes. Its probes would add to {@link Stats#filterPositive()} positives it cannot tell true from false without
     * the block (skewing {@link Stats#measuredFalsePositiveRate()}), and the usual pattern, this call and then a get of
     * a key it lets through, would count the key's probes twice. (RocksDB counts its filter tickers here, as its
     * {@code KeyMayExist} runs through its get path.)
     *
     * <p>A key longer than {@link #MAX_KEY_SIZE} is absent, as for {@link #get}: false, asking no memtable, filter or
     * table.
     *
     * @throws InvalidArgumentException for a null or empty key (as {@link #get}), or a snapshot of another database or
     *     one released
     * @throws DbClosedException once the database is closed
     * @throws MergeOperatorException when merging operands found in memory fails, as it would for a get
     */
    public boolean keyMayExist(ReadOptions readOptions, byte[] key, Holder<byte[]> valueHolder) {
        checkOpen();
        if (!LongKeys.mayBeStored(key)) {
            readSequence(readOptions); // the snapshot is checked, as for any key (and as get checks it)
            if (valueHolder != null) {
                valueHolder.setValue(null);
            }
            return false;
        }
        ThreadLocalRefs.Slot slot = state.localSlot();
        SuperVersion sv = state.acquireLocal(slot);
        try {
            long sequence = readSequence(readOptions); // after the SuperVersion: see readSequence
            long hash = Hashing.hash64(key);
            KeyLookup lookup = PointLookup.withoutFileReads(sv, key, hash, sequence, options.mergeOperator());
            boolean mayExist;
            byte[] value = null;
            if (lookup.isIncomplete()) {
                mayExist = true;
            } else {
                value = lookup.finish();
                if (ttl != null) {
                    value = ttl.visible(value, ttl.now());
                }
                mayExist = value != null;
            }
            if (valueHolder != null) {
                valueHolder.setValue(value);
            }
            return mayExist;
        } finally {
            state.releaseLocal(slot, sv);
        }
    }

    /** {@link #keyExists(ReadOptions, byte[])} at the latest state. */
    public boolean keyExists(byte[] key) {
        return keyExists(null, key);
    }

    /**
     * Whether {@code key} has a value at {@code readOptions.snapshot()} (the latest state when {@code readOptions} or
     * its snapshot is null): exact, {@code get(key, readOptions) != null} (rocksdbjni 8's {@code keyExists}); with
     * {@link Options#ttl} an expired value counts as absent. It runs a get (the table read path copies a value out of
     * its block as it finds it: there is no read that leaves it there), so it costs what a get costs, may read blocks
     * from files, and counts as a get in {@link #stats()}. {@link #keyMayExist(ReadOptions, byte[], Holder)} answers
     * without file reads, but only "may exist" where a filter lets the key through and the block is not cached.
     *
     * @throws InvalidArgumentException for a null or empty key, or a snapshot of another database or one released (as
     *     {@link #get}, which answers a key longer than {@link #MAX_KEY_SIZE} as absent)
     * @throws DbClosedException once the database is closed
     */
    public boolean keyExists(ReadOptions readOptions, byte[] key) {
        return get(key, readOptions) != null;
    }

    /** An iterator over the latest state; close it when done. */
    public DbIterator iterator() {
        return iterator(null);
    }

    /**
     * An iterator at {@code readOptions.snapshot()} (the latest state when null); close it when done.
     * {@link DbIterator#refresh()} moves it to the latest state, bounds and prefix mode kept.
     */
    public DbIterator iterator(ReadOptions readOptions) {
        checkOpen();
        // The bounds as they are now, as the iterator itself takes them: a later change to readOptions (reused
        // for the next iterator) must not reach the table children made at the first seek.
        // Bounds longer than MAX_KEY_SIZE are reduced to keys of at most MAX bytes that admit the same keys.
        byte[][] bounds = LongKeys.iteratorBounds(
                readOptions == null ? null : readOptions.lowerBound(),
                readOptions == null ? null : readOptions.upperBound());
        IteratorView view = iteratorView(readOptions, bounds[0], bounds[1]);
        DbIterator it;
        try {
            it = new DbIterator(this, view, readOptions, bounds[0], bounds[1]);
        } catch (RuntimeException e) {
            view.sv().release();
            throw e;
        }
        openIterators.add(it);
        if (state.closed) {
            it.closeInternal(true);
            openIterators.remove(it);
            throw new DbClosedException("database is closed");
        }
        return it;
    }

    void iteratorClosed(DbIterator it) {
        openIterators.remove(it);
    }

    /**
     * What an iterator reads: a SuperVersion retained for it, the sequence it reads at, and how to make its merged
     * iterator over every memtable and table of that SuperVersion within its bounds.
     */
    record IteratorView(SuperVersion sv, long sequence, Function<RangeProbeMemo, MergingIterator> makeFull) {}

    /**
     * The published SuperVersion, retained, and the sequence of {@code readOptions} (read after it: see
     * {@link #readSequence}) for an iterator bounded by {@code lower} and {@code upper} (already reduced by
     * {@link LongKeys#iteratorBounds}). @throws DbClosedException once closed
     */
    private IteratorView iteratorView(ReadOptions readOptions, byte[] lower, byte[] upper) {
        return iteratorView(readOptions == null ? null : readOptions.snapshot(), lower, upper);
    }

    /** {@link #iteratorView(ReadOptions, byte[], byte[])} at {@code snapshot} (the latest sequence when null). */
    private IteratorView iteratorView(Snapshot snapshot, byte[] lower, byte[] upper) {
        SuperVersion sv = state.acquireSuperVersion();
        try {
            long sequence = readSequence(snapshot); // after the SuperVersion: see readSequence
            Function<RangeProbeMemo, MergingIterator> makeFull = memo -> {
                // A bounded read puts each table behind its range filter (Options.rangeFilterBitsPerKey).
                List<InternalIterator> tables = lower == null && upper == null
                        ? sv.version.iterators()
                        : sv.version.iterators(lower, upper, memo);
                List<MemTable> imms = sv.imms;
                List<InternalIterator> children = new ArrayList<>(1 + imms.size() + tables.size());
                children.add(sv.mem.iterator());
                for (int i = 0; i < imms.size(); i++) {
                    children.add(imms.get(i).iterator());
                }
                children.addAll(tables);
                // DbIterator copies every key it keeps, so the merge may borrow its children's keys.
                return MergingIterator.lendingKeys(children);
            };
            return new IteratorView(sv, sequence, makeFull);
        } catch (RuntimeException e) {
            sv.release();
            throw e;
        }
    }

    /**
     * A view of the current state at the latest sequence for {@link DbIterator#refresh} of an iterator bounded by
     * {@code lower} and {@code upper}. @throws DbClosedException once closed (or closing)
     */
    IteratorView latestIteratorView(byte[] lower, byte[] upper) {
        return refreshedIteratorView(null, lower, upper);
    }

    /**
     * A view of the current state at {@code snapshot}'s sequence (the latest when null) for
     * {@link DbIterator#refresh(Snapshot)} of an iterator bounded by {@code lower} and {@code upper}.
     *
     * @throws InvalidArgumentException for a snapshot of another database or one released
     * @throws DbClosedException once closed (or closing)
     */
    IteratorView refreshedIteratorView(Snapshot snapshot, byte[] lower, byte[] upper) {
        checkOpen();
        return iteratorView(snapshot, lower, upper);
    }

    /**
     * The sequence a read reads at: its snapshot's, else the last published one. Read AFTER the read acquires its
     * SuperVersion (RocksDB's order): a flush or a memtable rewrite drops only entries hidden from every reader at the
     * oldest snapshot or later, and installs its result before a later reader can acquire it, so a sequence read
     * after the SuperVersion is at least that point and every entry the SuperVersion lacks is hidden at it. Read
     * before, a reader delayed between the two could read a newer SuperVersion at an older sequence and miss an
     * entry its sequence still sees. A write that lands, after the acquire, in a memtable the SuperVersion does not
     * hold is one that finished during the read: not seeing it is still a state the read may return.
     */
    private long readSequence(ReadOptions readOptions) {
        return readSequence(readOptions == null ? null : readOptions.snapshot());
    }

    /** {@link #readSequence(ReadOptions)} of a read at {@code s} (the latest state when null). */
    private long readSequence(Snapshot s) {
        if (s == null) {
            return versions.lastSequence();
        }
        if (s.db() != this) {
            throw new InvalidArgumentException("snapshot belongs to another database");
        }
        if (s.isReleased()) {
            throw new InvalidArgumentException("snapshot was released");
        }
        return s.sequence();
    }

    // ------------------------------------------------------------------ snapshots

    /**
     * The sequence number of the last write made visible (RocksDB's {@code GetLatestSequenceNumber}): 0 for a new
     * database; each write takes the next numbers, one per operation: a put, delete, merge or range deletion one, a
     * {@link WriteBatch} {@link WriteBatch#count()}. An empty batch, and a range deletion of an empty range
     * ({@code begin == end}, which RocksDB writes and numbers), take none. An {@link #ingest} takes one when it must
     * order its files after what the database holds (a file whose key range overlaps a table's, after the memtables
     * it overlaps were flushed, or any file while a snapshot is open), whatever the number of files, and none
     * otherwise; RocksDB takes one per such file, and judges the overlap by the keys the levels hold in the file's
     * range, not by the tables' ranges. Flushes, compactions, {@link #deleteFilesInRange}, checkpoints, close and
     * reopen leave it as it is (RocksDB's can go back at a reopen when its last writes ended in empty range deletions,
     * never below the last number it gave an entry); a read-only database reports the number it recovered. A
     * {@link #getSnapshot()} taken now has this {@link Snapshot#sequence()}. Also the {@code bloomkv.last-sequence}
     * {@link #property}.
     *
     * @throws DbClosedException if the database is closed
     */
    public long latestSequenceNumber() {
        checkOpen();
        return versions.lastSequence();
    }

    /** A snapshot of the current state; close it (or {@link #releaseSnapshot}) when done. */
    public Snapshot getSnapshot() {
        checkOpen();
        state.lock();
        try {
            while ((state.ingestHoldsSnapshots || state.deletingFiles || state.compactionHoldsSnapshots)
                    && !state.shuttingDown) {
                state.awaitChange();
            }
            if (state.shuttingDown) {
                throw new DbClosedException("database is closed");
            }
            long seq = versions.lastSequence();
            snapshots.add(seq);
            return new Snapshot(this, seq);
        } finally {
            state.unlock();
        }
    }

    /** Same as {@code snapshot.close()}: idempotent, only the first release of a snapshot counts. */
    public void releaseSnapshot(Snapshot snapshot) {
        if (snapshot == null) {
            throw new InvalidArgumentException("snapshot is null");
        }
        if (snapshot.db() != this) {
            throw new InvalidArgumentException("snapshot belongs to another database");
        }
        snapshot.close();
    }

    /** Called exactly once per snapshot, by the first {@link Snapshot#close()}. */
    void snapshotReleased(Snapshot snapshot) {
        snapshots.remove(snapshot.sequence());
    }

    /** Oldest sequence number some reader may still need: the oldest snapshot, or the latest write. */
    long smallestSnapshot() {
        return snapshots.oldest(versions.lastSequence());
    }

    // ------------------------------------------------------------------ writes

    /**
     * Sets {@code key} to {@code value}. Both arrays are read while the call runs and not kept: the caller may change
     * them once it returns (not during it: another thread changing them meanwhile races with the write).
     */
    public void put(byte[] key, byte[] value) {
        checkWritable("put");
        WriteBatch.checkKey(key);
        WriteBatch.checkValue(value);
        if (ttl != null) {
            write(new WriteBatch(WriteBatch.putSize(key, value)).put(key, value));
            return;
        }
        // no batch: the write leader encodes the put into the WAL record and copies the value into the memtable
        commits.put(key, value);
        counters.batchWritten(1, 1, 0, (long) key.length + value.length);
    }

    /**
     * Adds {@code operand} to {@code key}'s merge operands (RocksDB's {@code Merge}): reads then see
     * {@link Options#mergeOperator}'s {@link MergeOperator#fullMerge} of the key's older value and its operands; flush
     * and compaction combine them ahead of reads. One write, no read.
     *
     * @throws InvalidArgumentException when the database was opened without a merge operator
     */
    public void merge(byte[] key, byte[] operand) {
        checkWritable("merge");
        write(new WriteBatch().merge(key, operand));
    }

    /**
     * Removes every key in [{@code beginInclusive}, {@code endExclusive}) (RocksDB's {@code DeleteRange}): one write of
     * one range tombstone, whatever the number of keys covered. Reads see the keys as absent at once (a get for a
     * covered key reads no block of a table older than the tombstone); compactions drop the covered entries, and
     * tables wholly covered, and at the last level the tombstone itself. An empty range does nothing.
     *
     * <p>A bound may be longer than {@link #MAX_KEY_SIZE}, as in RocksDB: it is reduced to a key of at most {@code MAX}
     * bytes that bounds the same stored keys before the write reaches the log, and a range that then holds no key
     * writes nothing ({@link WriteBatch#deleteRange} has the details).
     *
     * @throws InvalidArgumentException when a bound is null or empty, or {@code beginInclusive > endExclusive}
     */
    public void deleteRange(byte[] beginInclusive, byte[] endExclusive) {
        checkWritable("deleteRange");
        write(new WriteBatch().deleteRange(beginInclusive, endExclusive));
    }

    /**
     * Removes every table whose keys (and range tombstones) all lie in [{@code beginInclusive}, {@code endExclusive})
     * with one MANIFEST record, writing no data (RocksDB's {@code DeleteFilesInRange}; a null bound is open): the disk
     * space comes back at once, without the compaction a range tombstone needs. Tables of every level go, level 0
     * included. The entries in that range of tables that only partly lie in it, and of the memtables, stay.
     *
     * <p>Write a {@link #deleteRange} over the same range first (the pattern RocksDB documents for dropping a range):
     * the tombstone hides every entry of the range at once, and this call then changes nothing that reads see, only
     * gives the space back; the tombstone and what it covers in the memtable and in the tables that stay are dropped
     * by the flush and the compactions that reach them. Alone, this call removes data, whatever its age, and older
     * versions of keys in the range that tables left in place hold may become visible again.
     *
     * <p>Unlike RocksDB it never changes what an open snapshot reads: a table holding an entry an open snapshot can see
     * stays (RocksDB removes it, and "snapshots before the delete might not see the data"), and snapshots taken during
     * the call wait for it. Nor does it remove a range tombstone that still hides an entry of a table that stays. Open
     * iterators keep reading the tables they started with. Serialized with compactions (waits for a running one). A
     * range tombstone over the range still in a memtable is made durable first (the log synced, or without a log the
     * memtable flushed): a crash never keeps the removal without the tombstone.
     *
     * <p>A bound may be longer than {@link #MAX_KEY_SIZE}, as in RocksDB: a long begin is taken as the smallest key of
     * at most {@code MAX} bytes above its first {@code MAX} bytes, a long end likewise, or as open when its first
     * {@code MAX} bytes are all 0xFF (no storable key is above them), so the range holds the same stored keys
     * ({@link LongKeys}); one that then holds none removes nothing (0).
     *
     * @return how many tables were removed
     * @throws InvalidArgumentException when a bound is empty, or {@code beginInclusive > endExclusive}
     * @throws DbReadOnlyException when opened read-only
     * @throws BloomKvIOException on an I/O error (writing the MANIFEST: then a background error, as for a flush)
     */
    public int deleteFilesInRange(byte[] beginInclusive, byte[] endExclusive) {
        checkWritable("deleteFilesInRange");
        if (beginInclusive != null) {
            LongKeys.checkBound(beginInclusive);
        }
        if (endExclusive != null) {
            LongKeys.checkBound(endExclusive);
        }
        if (beginInclusive != null
                && endExclusive != null
                && Arrays.compareUnsigned(beginInclusive, endExclusive) > 0) {
            throw new InvalidArgumentException("deleteFilesInRange: begin sorts after end");
        }
        // Bounds longer than MAX_KEY_SIZE reduced to keys of at most MAX bytes holding the same stored keys; the
        // tables' bounds and the memtables' tombstones are compared with those.
        LongKeys.Range range = LongKeys.halfOpen(beginInclusive, endExclusive);
        if (range == null) {
            return 0; // no key of at most MAX bytes in the range (begin == end, say): no table lies in it
        }
        return new FileRangeDeleter(
                        state,
                        versions,
                        tableCache,
                        obsolete,
                        compactor,
                        snapshots,
                        options,
                        commits,
                        this::flush,
                        events)
                .run(range.begin(), range.end());
    }

    /** Removes {@code key}; removing an absent key is not an error. */
    public void delete(byte[] key) {
        checkWritable("delete");
        write(new WriteBatch().delete(key));
    }

    /** Applies every operation of {@code batch} atomically. An empty batch does nothing. */
    public void write(WriteBatch batch) {
        checkWritable("write");
        if (batch == null) {
            throw new InvalidArgumentException("batch is null");
        }
        if (batch.isEmpty()) {
            return;
        }
        if (batch.mergeCount() > 0 && options.mergeOperator() == null) {
            throw new InvalidArgumentException("merge needs a merge operator (Options.mergeOperator)");
        }
        int n = batch.count();
        int nPuts = batch.putCount();
        int nMerges = batch.mergeCount();
        long bytes = batch.userBytes();
        commits.write(ttl == null ? batch : ttl.stamp(batch, ttl.now()));
        counters.batchWritten(n, nPuts, nMerges, bytes);
    }

    /**
     * Makes every write that returned durable without a flush: fsyncs the write-ahead log, after the
     * writes queued before (what {@link SyncMode#EVERY_WRITE} does per write, once for all of them). Under
     * {@link Options#disableWal} there is no log and this does nothing: only {@link #flush()} makes writes durable.
     *
     * @throws DbReadOnlyException on a database opened {@link Options#readOnly} (it has no log to sync)
     * @throws BloomKvIOException when the sync fails (writes stop), or the background error itself when a write to
     *     the WAL failed earlier (that WAL cannot be synced; {@link #resume} replaces it)
     */
    public void syncWal() {
        checkWritable("syncWal");
        commits.syncWal();
    }

    /**
     * Freezes the memtable (if it holds anything) and waits until it, and every memtable frozen
     * before it, is in a level-0 table; their WALs are then deleted.
     */
    public void flush() {
        checkWritable("flush");
        commits.freezeMemTable();
        state.lock();
        try {
            state.awaitImmutablesFlushed();
            state.throwIfClosingOrFailed("database closed during flush");
        } finally {
            state.unlock();
        }
        obsolete.delete(); // the flusher's pass runs after it lets waiters go: the WALs are gone on return
    }

    /**
     * Compacts every table overlapping [{@code from}, {@code to}] (a null bound is open) down the
     * levels, after flushing the memtable: overwritten values and unneeded tombstones in the range are dropped.
     * A failure is a background compaction's (as in RocksDB): the listeners' {@link EventListener#onBackgroundError}
     * is asked on the calling thread, and unless it ignores a recoverable one (an I/O error, a merge operator's or
     * compaction filter's exception: the inputs stay), writes stop; a corrupt table always stops them. Then the
     * failure is thrown (an I/O error as a {@link BloomKvIOException}).
     *
     * <p>A bound may be longer than {@link #MAX_KEY_SIZE}, as in RocksDB: a long {@code from} is taken as the smallest
     * key of at most {@code MAX} bytes above its first {@code MAX} bytes, a long {@code to} as its first {@code MAX}
     * bytes, so the range holds the same stored keys ({@link LongKeys}); one that then holds none (a {@code from}
     * whose first {@code MAX} bytes are all 0xFF, say) compacts nothing, after the flush.
     *
     * @throws InvalidArgumentException when a bound is empty, or {@code from > to}
     */
    public void compactRange(byte[] from, byte[] to) {
        checkWritable("compactRange");
        if (from != null) {
            LongKeys.checkBound(from);
        }
        if (to != null) {
            LongKeys.checkBound(to);
        }
        if (from != null && to != null && Arrays.compareUnsigned(from, to) > 0) {
            throw new InvalidArgumentException("compactRange: from > to");
        }
        // Bounds longer than MAX_KEY_SIZE reduced to keys of at most MAX bytes holding the same stored keys.
        LongKeys.Range range = LongKeys.closed(from, to);
        flush();
        if (range != null) {
            compactor.compactRange(range.begin(), range.end());
        }
    }

    /**
     * Waits until the background work due now is done: every immutable memtable flushed to a table, and no
     * compaction running or needed (no level's compaction score at 1 or above, when automatic compaction is on), and
     * the files that work made obsolete deleted (tables an open iterator still reads stay until it is closed).
     * RocksDB's {@code DB::WaitForCompact} is the counterpart. Use it after a bulk load so that reads which follow
     * find the tree in its settled shape, before measuring, or before copying the database's files elsewhere.
     *
     * <p>The active memtable is not flushed: call {@link #flush()} first for that (RocksDB's
     * {@code WaitForCompactOptions.flush}). Writes made by other threads while it waits may start new work, which it
     * may or may not wait for; it returns once it has seen the background idle. The wait is not interruptible and has
     * no time limit: it ends when the work ends, when a background error stops the work, or when the database is
     * closed by another thread.
     *
     * <p>While background work is paused ({@link #pauseBackgroundWork()}) the work it would wait for cannot run: it
     * throws {@link BackgroundWorkPausedException} at once, and as soon as a pause begins while it waits, instead of
     * waiting until {@link #continueBackgroundWork()} (RocksDB's {@code WaitForCompact} with {@code abort_on_pause};
     * without that option RocksDB would wait for the continue).
     *
     * @throws DbClosedException if the database is closed
     * @throws BackgroundWorkPausedException if background work is paused, or a pause began while it waited
     * @throws BloomKvException the background error that stopped flushes or compactions (the database then
     *     refuses writes with the same error)
     */
    public void waitForBackgroundWork() {
        checkOpen();
        state.lock();
        try {
            // awaitImmutablesFlushed, also ended by a pause (pauseBackgroundWork signals once flushes are held)
            while (!state.imms.isEmpty()
                    && state.backgroundError() == null
                    && !state.shuttingDown
                    && !state.flushesPaused()) {
                state.awaitChange();
            }
        } finally {
            state.unlock();
        }
        if (compactor != null) {
            compactor.waitIdle(); // returns at once while compactions are paused
        }
        if (backgroundWorkPaused()) {
            throw new BackgroundWorkPausedException(
                    "waitForBackgroundWork: background work of " + dir + " is paused (pauseBackgroundWork)");
        }
        // The flusher's pass runs after it lets waiters go: no obsolete file (unless a reader still needs it) is left
        // on return, for a caller that copies the database's files or counts them.
        obsolete.delete();
        BloomKvException error = state.backgroundError();
        if (error != null) {
            throw error;
        }
    }

    /**
     * Pauses background work (RocksDB's {@code PauseBackgroundWork}): waits until the flush and the compaction running
     * now, if any, are done (each is finished, never cut short), and from then on no flush and no background compaction
     * starts until {@link #continueBackgroundWork()}. Compactions stop being picked as soon as the call begins, flushes
     * once it returns. Calls nest: each needs its own continue, and work resumes with the last one. A
     * {@link #compactRange} running on another thread when it is called is waited for as well.
     *
     * <p>While paused:
     *
     * <ul>
     *   <li>Writes go on into the memtable. A full memtable is frozen and waits for its flush; once
     *       {@link Options#maxImmutableMemtables} memtables wait (or level 0 holds {@link Options#l0StopWritesTrigger}
     *       tables), writes stall as they would behind a slow flush or compaction: they block (a write stall like any
     *       other, counted in {@link Stats#writeStalls()} and told to {@link EventListener#onWriteStallChanged}) until
     *       the continue lets the work run and make room, or fail with {@link DbClosedException} when the database is
     *       closed.</li>
     *   <li>{@link #flush()} freezes the memtable and waits for its flush: until the continue, or until close (then
     *       {@link DbClosedException}), as RocksDB's {@code Flush} waits for the flush it scheduled. So do the calls
     *       that flush first: {@link #compactRange} when a memtable holds anything, {@link #ingest} of files a memtable
     *       overlaps, {@link #deleteFilesInRange} under {@link Options#disableWal} over a memtable's range tombstone,
     *       and {@link #checkpoint} under {@link Options#disableWal}. Calling them on the thread that will continue
     *       the work waits forever.</li>
     *   <li>{@link #compactRange} with nothing to flush runs its compaction on the calling thread, as RocksDB runs a
     *       manual compaction while background work is paused (it is scheduled directly, not through the paused
     *       background scheduling).</li>
     *   <li>{@link #waitForBackgroundWork()} throws {@link BackgroundWorkPausedException} instead of waiting.</li>
     *   <li>{@link #close()} completes: the flusher and compactor stop without starting anything, and the next open
     *       replays the WAL. Under {@link Options#disableWal} close first flushes the memtables (they are in no log),
     *       and lifts the pause to do it (RocksDB's close, which flushes such memtables too, would wait for the
     *       paused flush).</li>
     * </ul>
     *
     * <p>On a database opened {@link Options#readOnly} there is no background work: the call only counts the pause
     * (the continue must follow), as RocksDB's read-only database accepts it. A listener's
     * {@link EventListener#onBackgroundError}, which runs on the failed flush's or compaction's thread, may pause: the
     * call does not wait for that failed job, which ends when the listener returns.
     *
     * @throws DbClosedException if the database is closed (or closes while the call waits)
     */
    public void pauseBackgroundWork() {
        checkOpen();
        if (compactor != null) {
            compactor.pause(); // no compaction is picked from here; waits for the running one
        }
        // On the flush thread (a listener's onBackgroundError) its failed flush ends once the listener returns.
        boolean onFlushThread = flusher != null && flusher.isCurrentThread();
        state.lock();
        try {
            while (state.flushing && !state.shuttingDown && !onFlushThread) {
                state.awaitChange();
            }
            if (state.shuttingDown) {
                throw new DbClosedException("database closed during pauseBackgroundWork");
            }
            state.backgroundWorkPaused++;
            state.signalChangeHeld(); // waitForBackgroundWork callers stop waiting
        } finally {
            state.unlock();
        }
    }

    /**
     * Undoes one {@link #pauseBackgroundWork()} (RocksDB's {@code ContinueBackgroundWork}); with the last one the
     * flushes and compactions that were held start at once, and writes stalled by the pause go on as soon as a flush
     * (or a compaction) makes room for them.
     *
     * @throws InvalidArgumentException if background work is not paused: more continues than pauses (RocksDB returns
     *     {@code InvalidArgument("Background work already unpaused")})
     * @throws DbClosedException if the database is closed
     */
    public void continueBackgroundWork() {
        checkOpen();
        state.lock();
        try {
            if (state.backgroundWorkPaused == 0) {
                throw new InvalidArgumentException(
                        "continueBackgroundWork: background work is not paused (each continue must follow a pause)");
            }
            state.backgroundWorkPaused--;
            state.signalChangeHeld(); // the flusher looks for work
        } finally {
            state.unlock();
        }
        if (compactor != null) {
            compactor.resume();
        }
    }

    /**
     * Clears the background error that stopped writes, once its cause is fixed (space freed on a full disk, say), so
     * the database goes on without a reopen: RocksDB's {@code DB::Resume}. Returns at once when no error is set.
     * Otherwise it
     *
     * <ol>
     *   <li>starts a new MANIFEST holding the whole current state, if a MANIFEST write failed (the failed one may end
     *       in a partial or unsynced record);</li>
     *   <li>freezes the memtable into a new WAL, at the head of the write queue, and flushes every memtable: the WALs
     *       that saw the failure (a torn record of a write that failed, a failed sync) are then no longer needed, and
     *       a later open does not replay them;</li>
     *   <li>clears the error, deletes what became obsolete (a failed flush's or compaction's partial table, the old
     *       WALs and MANIFEST) and lets compactions run again.</li>
     * </ol>
     *
     * Every write acknowledged before the error is kept; a write that failed with it is not applied, neither now nor
     * after a reopen. Writes (and flush, ingest, ...) made while resume runs fail with the error, as before the call;
     * once it returns they are accepted. Listeners get {@link EventListener#onErrorRecoveryBegin} and, on success,
     * {@link EventListener#onErrorRecoveryCompleted}, in order with the flush events; the info log records both at
     * INFO, and the property {@code bloomkv.background-errors} is 0 again.
     *
     * <p>If a step fails (the disk still full), its error becomes the background error (reported to
     * {@link EventListener#onBackgroundError} like any other) and is thrown; the database is as consistent as before,
     * and a later resume, or a reopen, recovers. Concurrent calls run one at a time: the later one finds the error
     * cleared and returns, or tries again. While background work is paused ({@link #pauseBackgroundWork}) resume waits
     * for {@link #continueBackgroundWork}, as RocksDB's {@code Resume} waits for its flush, and as {@link #flush()}
     * does; calling it on the thread that would continue the work waits forever. It is refused inside a listener's
     * {@link EventListener#onBackgroundError}: hand it to another thread there.
     *
     * @throws NotResumableException when the error cannot be cleared safely: a corrupt file, or anything but an I/O
     *     error (an Error, an unexpected exception of a background job), after which the state in memory may disagree
     *     with the files; reopen the database (the error is the cause)
     * @throws BloomKvException the error of a step that failed (a {@link BloomKvIOException} for an I/O error)
     * @throws DbClosedException if the database is closed, or closes while resume waits
     * @throws DbReadOnlyException when opened read-only (it has no background error to clear)
     * @throws InvalidArgumentException when called inside {@link EventListener#onBackgroundError}
     */
    public void resume() {
        checkWritable("resume");
        if (events.insideBackgroundError()) {
            throw new InvalidArgumentException("resume: cannot be called inside EventListener.onBackgroundError (on the"
                    + " failed flush's thread it would wait for that thread's own flushes, and the error is recorded"
                    + " only once the listeners return): call it from another thread once the listener returned");
        }
        resumeLock.lock();
        try {
            resumeHeld();
        } finally {
            resumeLock.unlock();
        }
    }

    /**
     * Why each error kind recovers by the steps of {@link #resume} without losing an acknowledged write or showing one
     * that failed:
     *
     * <ul>
     *   <li>WAL append or sync ({@link CommitPipeline}): the failed group was neither applied to the memtable nor
     *       acknowledged, and its sequence numbers were not published; the WAL may hold a torn or whole record of it,
     *       or a failed sync may have lost acknowledged records of it (under {@link SyncMode#NONE}). The memtables
     *       hold every acknowledged write; flushed, and recorded with the new WAL's number, they make those WALs
     *       unneeded: no open replays them.</li>
     *   <li>WAL switch: the old WAL stayed the current one (its memtable not frozen); as for an append.</li>
     *   <li>Flush table write: the memtable is still waiting for flush and its WAL is live; the flush is retried, the
     *       partial table's number left pendingOutputs (not in any Version: deleted as obsolete).</li>
     *   <li>A MANIFEST write (flush, compaction, ingest, deleteFilesInRange): the edit was not installed, but may be
     *       on disk; no file was deleted since (ObsoleteFiles waits while an error is set). Rolling to a new MANIFEST
     *       of the installed state first makes the disk agree with memory again, before anything is deleted.</li>
     *   <li>Compaction output: the inputs are still live and the outputs left pendingOutputs; compactions run again.
     *   </li>
     * </ul>
     */
    private void resumeHeld() {
        BloomKvException error;
        String operation;
        state.lock();
        try {
            if (state.shuttingDown) {
                throw new DbClosedException("database is closed");
            }
            error = state.backgroundError();
            if (error == null) {
                return;
            }
            operation = state.backgroundErrorOperation();
            String why = error instanceof CorruptionException
                    ? "a corrupt file"
                    : !(error instanceof BloomKvIOException)
                            ? (error.getCause() instanceof Error ? "an Error" : "not an I/O error")
                            : null;
            if (why != null) {
                throw new NotResumableException(
                        "resume: the background error of " + operation + " (" + why + ") cannot be cleared safely:"
                                + " reopen the database",
                        error);
            }
            state.beginResume();
        } finally {
            state.unlock();
        }
        EventListener.ErrorRecoveryInfo info = new EventListener.ErrorRecoveryInfo(dir, operation, error);
        events.post(l -> l.onErrorRecoveryBegin(info));
        BloomKvException failure = null;
        boolean closed = false;
        try {
            if (versions.rollManifestAfterFailure()) {
                state.versionChanged(); // readers drop the Version the roll replaced (the same tables)
            }
            commits.exclusiveDespiteError(commits::switchForResume);
            state.lock();
            try {
                // The flusher takes memtables again (DbState.flushesStopped), the error still set; a failure of one
                // becomes the resume's failure.
                state.resumeFlushes();
                while (!state.imms.isEmpty() && state.resumeFailure() == null && !state.shuttingDown) {
                    state.awaitChange();
                }
                closed = state.shuttingDown;
            } finally {
                state.unlock();
            }
        } catch (DbClosedException e) {
            closed = true;
        } catch (IOException | RuntimeException e) {
            failure = BackgroundErrors.of("resume failed", e);
        }
        BloomKvException now;
        state.lock();
        try {
            if (closed) {
                state.abandonResume(); // the error stays: close deletes nothing, the next open recovers
                throw new DbClosedException("database closed during resume");
            }
            now = state.endResume("resume", failure);
        } finally {
            state.unlock();
        }
        if (now != null) {
            if (now == failure) {
                events.writesStopped("resume", now); // a flush's failure was reported by the flusher
            }
            throw now;
        }
        obsolete.delete(); // the failed outputs, the WALs and MANIFEST the recovery replaced
        if (compactor != null) {
            compactor.wake();
        }
        events.post(l -> l.onErrorRecoveryCompleted(info));
    }

    /**
     * Whether background work is paused, or a pause has begun (compactions are held from its start); also what
     * {@code bloomkv.background-work-paused} and the MBean's {@code BackgroundWorkPaused} show.
     */
    boolean backgroundWorkPaused() {
        boolean flushes;
        state.lock();
        try {
            flushes = state.flushesPaused();
        } finally {
            state.unlock();
        }
        return flushes || (compactor != null && compactor.isPaused());
    }

    /**
     * Asks the compaction thread to look for work now, as the timer of {@link Options#periodicCompaction} does (tests
     * with an injected {@link Options#clock} call it after moving the clock on).
     */
    void scheduleCompactionCheck() {
        if (compactor != null) {
            compactor.wake();
        }
    }

    // ------------------------------------------------------------------ operations

    /**
     * Writes a consistent point-in-time copy of the database into {@code dir} (RocksDB's
     * {@code Checkpoint::CreateCheckpoint}): a directory {@link #open} accepts, in this process or another, holding
     * exactly the writes acknowledged before this call. Writers go on meanwhile. Tables are hard-linked where the
     * file system allows (same device), copied otherwise; the WAL is cut at the point. {@code dir} must not exist or
     * be empty. A checkpoint cut short by an error or a crash has no CURRENT file and is refused by {@link #open};
     * after an error its files are removed. See {@link Checkpointer}.
     *
     * @throws InvalidArgumentException if {@code dir} is null, not empty, a file, or this database's directory, or
     *     another checkpoint into {@code dir} is running in this process
     * @throws DbReadOnlyException when opened read-only
     * @throws BloomKvIOException on an I/O error
     */
    public void checkpoint(Path dir) {
        checkpoint(dir, Checkpointer.Listener.NONE);
    }

    /** {@link #checkpoint(Path)}, telling {@code listener} its files and the tables it copies (for BackupEngine). */
    void checkpoint(Path dir, Checkpointer.Listener listener) {
        checkWritable("checkpoint");
        if (dir == null) {
            throw new InvalidArgumentException("checkpoint: directory is null");
        }
        if (options.disableWal()) {
            flush(); // the memtable is in no log: only a table puts its writes into the checkpoint
        }
        new Checkpointer(fs, this.dir, versions, obsolete, commits::syncWal).run(dir, listener);
    }

    /**
     * Adds table files written by {@link TableFileWriter} to the database (RocksDB's {@code IngestExternalFile}):
     * afterwards every key of the files reads as written there (a put's value, a delete's absence, a merge operand
     * merged onto the key's older value; a range deletion hides the older keys of its range), newer than every write
     * made before the call, older than every write after it. Files whose keys overlap nothing in the database go to the
     * last level as written (linked with {@link IngestOptions#moveFiles}, else copied); otherwise they get one new
     * sequence number and are rewritten into the deepest level where nothing above overlaps them. A memtable holding
     * keys in their ranges is flushed first, or the call is refused, as {@link IngestOptions#allowBlockingFlush} says.
     * Writes wait while an ingestion runs; reads go on. All files are added by one MANIFEST record: after an error or a
     * crash the database holds all of them or none. See {@link Ingester}.
     *
     * @throws InvalidArgumentException if the list or an options argument is null or empty, a file is missing, listed
     *     twice, holds entries above sequence 0, holds merge operands while the database has no
     *     {@link Options#mergeOperator}, the files' key ranges overlap each other, or a memtable overlaps
     *     them while blocking flushes are not allowed (the database is then unchanged), or the database has a
     *     {@link Options#ttl} (external files carry no write times)
     * @throws CorruptionException if a file is not a valid table
     * @throws DbReadOnlyException when opened read-only
     * @throws BloomKvIOException on an I/O error
     */
    public void ingest(List<Path> files, IngestOptions ingestOptions) {
        checkWritable("ingest");
        if (files == null || files.isEmpty()) {
            throw new InvalidArgumentException("ingest: no files");
        }
        if (ingestOptions == null) {
            throw new InvalidArgumentException("ingest: options are null");
        }
        if (ttl != null) {
            // TableFileWriter's values carry no write time; read as TTL values they would lose their last 4 bytes.
            throw new InvalidArgumentException("ingest: not supported on a TTL database (Options.ttl)");
        }
        new Ingester(
                        fs,
                        dir,
                        state,
                        versions,
                        tableCache,
                        obsolete,
                        outputs,
                        commits,
                        compactor,
                        snapshots,
                        events,
                        options.mergeOperator() != null)
                .run(files, ingestOptions);
    }

    /**
     * The value of a named property, for scripts and health checks (RocksDB's {@code DB::GetProperty}, with
     * {@code bloomkv.} for {@code rocksdb.}): {@code bloomkv.estimate-num-keys}, {@code bloomkv.levelstats},
     * {@code bloomkv.num-files-at-level<N>}, {@code bloomkv.filter-memory}, {@code bloomkv.background-errors},
     * {@code bloomkv.stats}, ... (the full list: docs/operations.md, "Properties"). Unknown names, and a level
     * the database does not have, give an empty result.
     *
     * @throws InvalidArgumentException if {@code name} is null
     */
    public Optional<String> property(String name) {
        checkOpen();
        if (name == null) {
            throw new InvalidArgumentException("property name is null");
        }
        Stats s = stats();
        return DbProperties.get(
                name,
                s,
                blockCacheUsedBytes(),
                blockCache == null ? -1 : blockCache.capacityBytes(),
                state.backgroundError(),
                backgroundWorkPaused(),
                s.compactionPending());
    }

    /**
     * Approximate bytes the database holds for each key range (RocksDB's {@code GetApproximateSizes}; rocksdbjni's
     * {@code getApproximateSizes(List<Range>, SizeApproximationFlag...)}): one answer per range, in order. With
     * {@link SizeApproximation#INCLUDE_FILES}, or no flag at all (RocksDB's default), the table files' bytes in the
     * range: each live table wholly inside it counts its file size; a table the range cuts counts the bytes between
     * the data blocks its index points {@code start} and {@code limit} to, as a share of its data applied to its file
     * size (so its filter and index count pro rata). Only the tables' indexes are searched, and they are in memory:
     * no data block is read, no file is touched; below level 0 the tables a range touches are found by binary search.
     * With {@link SizeApproximation#INCLUDE_MEMTABLES} it adds an estimate of the memtables' heap bytes in the range
     * (their {@link Stats#memtableBytes} share), made from the upper levels of their skip lists (RocksDB's {@code
     * ApproximateStats}: a few nodes per level, no walk of the range); it is sampled, so it varies with the skip list's
     * shape, and heap bytes count links and padding a table file does not hold. Without that flag, data not yet flushed
     * counts nothing.
     *
     * <p>An estimate, as RocksDB's: a bound inside a data block counts that block from its start (off by up to one
     * block per bound and table); the bytes are stored bytes (compressed ones for compressed tables), including the
     * versions and tombstones of keys the range holds and their range deletions' tables; an ongoing compaction moves
     * bytes between tables. A range whose {@code start} is not below its {@code limit} counts 0, as in RocksDB.
     * Bounds longer than {@link #MAX_KEY_SIZE} are reduced to keys of at most {@code MAX} bytes bounding the same
     * stored keys ({@link LongKeys}), as the iterator's bounds are.
     *
     * @param ranges the key ranges, each [{@code start}, {@code limit})
     * @param flags what to count: {@link SizeApproximation#INCLUDE_FILES} (the default when none is given) and/or
     *     {@link SizeApproximation#INCLUDE_MEMTABLES}
     * @return the approximate bytes of each range, in the order of {@code ranges}
     * @throws InvalidArgumentException when {@code ranges}, one of them or a flag is null
     * @throws DbClosedException once the database is closed
     */
    public long[] approximateSizes(List<KeyRange> ranges, SizeApproximation... flags) {
        checkOpen();
        if (ranges == null) {
            throw new InvalidArgumentException("approximateSizes: ranges is null");
        }
        boolean files = flags == null || flags.length == 0;
        boolean memtables = false;
        for (int i = 0; flags != null && i < flags.length; i++) {
            if (flags[i] == null) {
                throw new InvalidArgumentException("approximateSizes: a flag is null");
            }
            files |= flags[i] == SizeApproximation.INCLUDE_FILES;
            memtables |= flags[i] == SizeApproximation.INCLUDE_MEMTABLES;
        }
        LongKeys.Range[] reduced = new LongKeys.Range[ranges.size()];
        for (int i = 0; i < reduced.length; i++) {
            KeyRange r = ranges.get(i);
            if (r == null) {
                throw new InvalidArgumentException("approximateSizes: range " + i + " is null");
            }
            if (Arrays.compareUnsigned(r.start(), r.limit()) < 0) {
                // An empty start bounds nothing (no stored key is empty); null: no stored key in the range.
                reduced[i] = LongKeys.halfOpen(r.start().length == 0 ? null : r.start(), r.limit());
            }
        }
        long[] sizes = new long[reduced.length];
        SuperVersion sv = state.acquireSuperVersion();
        try {
            for (int i = 0; i < reduced.length; i++) {
                LongKeys.Range r = reduced[i];
                if (r == null) {
                    continue;
                }
                if (files) {
                    sizes[i] += approximateFileBytes(sv.version, r.begin(), r.end());
                }
                if (memtables) {
                    sizes[i] += sv.mem.approximateBytesIn(r.begin(), r.end());
                    for (MemTable m : sv.imms) {
                        sizes[i] += m.approximateBytesIn(r.begin(), r.end());
                    }
                }
            }
        } finally {
            sv.release();
        }
        return sizes;
    }

    /** The table bytes of {@code v} in [{@code lo}, {@code hi}) (null: open; at most MAX_KEY_SIZE bytes each). */
    private static long approximateFileBytes(Version v, byte[] lo, byte[] hi) {
        long total = 0;
        for (int level = 0; level < v.numLevels(); level++) {
            total += approximateLevelBytes(v, level, lo, hi);
        }
        return total;
    }

    /**
     * The bytes of {@code level}'s tables in [{@code lo}, {@code hi}). Level 0's tables overlap: each is checked.
     * A deeper level is sorted and disjoint, so the tables the range overlaps are one run, found by two binary searches
     * (RocksDB's {@code FindFile} for the first and the last file); every table outside it is one the check would skip,
     * so the answer is the same as checking each.
     */
    static long approximateLevelBytes(Version v, int level, byte[] lo, byte[] hi) {
        List<FileMetaData> files = v.files(level);
        int from = level == 0 ? 0 : v.firstFileEndingAtOrAfter(level, lo);
        int to = level == 0 ? files.size() : v.firstFileStartingAtOrAfter(level, hi);
        long total = 0;
        for (int i = from; i < to; i++) {
            FileMetaData f = files.get(i);
            if ((lo != null && Arrays.compareUnsigned(f.largestUserKey(), lo) < 0)
                    || (hi != null && Arrays.compareUnsigned(f.smallestUserKey(), hi) >= 0)) {
                continue; // no key of the table in the range (only in level 0)
            }
            if ((lo == null || Arrays.compareUnsigned(f.smallestUserKey(), lo) >= 0)
                    && (hi == null || Arrays.compareUnsigned(f.largestUserKey(), hi) < 0)) {
                total += f.fileSize(); // wholly inside, as RocksDB counts it
            } else {
                total += v.reader(level, i).approximateSize(lo, hi);
            }
        }
        return total;
    }

    /** {@code f} applied to the current Version, retained meanwhile; for tests. */
    <T> T withCurrentVersionForTests(Function<Version, T> f) {
        checkOpen();
        SuperVersion sv = state.acquireSuperVersion();
        try {
            return f.apply(sv.version);
        } finally {
            sv.release();
        }
    }

    /** Bytes the block cache holds now (for a shared cache, all its users'), or -1 without a cache. */
    long blockCacheUsedBytes() {
        return blockCache == null ? -1 : blockCache.usedBytes();
    }

    // ------------------------------------------------------------------ stats, accessors

    /** The counters and the shape of the database now. */
    public Stats stats() {
        checkOpen();
        Stats s = new Stats();
        ReadCounters c = readCounters;
        s.filterChecks = c.filterChecks.sum();
        s.filterUseful = c.filterUseful.sum();
        s.filterPositive = c.filterPositive();
        s.filterTruePositive = c.filterTruePositive.sum();
        s.rangeFilterChecks = c.rangeFilterChecks.sum();
        s.rangeFilterUseful = c.rangeFilterUseful.sum();
        s.rangeFilterFalsePositives = c.rangeFilterFalsePositives.sum();
        s.tablesReadWithoutFilter = c.tablesReadWithoutFilter.sum();
        s.blockReads = c.blockReads.sum();
        s.blockReadBytes = c.blockReadBytes.sum();
        s.dataBlockAccesses = c.dataBlockAccesses.sum();
        s.blockCacheHits = c.blockCacheHits.sum();
        s.blockCacheMisses = c.blockCacheMisses.sum();
        s.rangeTombstoneSkips = c.rangeTombstoneSkips.sum();
        s.tablesDroppedByRangeDeletion = c.tablesDroppedByRangeDeletion.sum();
        s.mergeLookups = c.mergeLookups.sum();
        counters.fill(s);
        s.lastSequence = versions.lastSequence();
        s.liveVersions = versions.liveVersionCount();
        s.openIterators = openIterators.size();
        s.openSnapshots = snapshots.size();
        s.tablesOpened = tableCache.openedCount();
        s.tablesClosed = tableCache.evictedCount();
        s.backgroundErrors = state.backgroundErrorCount();
        SuperVersion sv = state.acquireSuperVersion();
        try {
            long activeBytes = sv.mem.approximateMemoryUsage();
            long memBytes = activeBytes;
            // Read once: writers add to the active memtable meanwhile, and the frozen ones' entries are the difference.
            long activeEntries = sv.mem.entryCount();
            long memEntries = activeEntries;
            long activeDeletes = sv.mem.deleteCount();
            long memDeletes = activeDeletes;
            for (MemTable m : sv.imms) {
                memBytes += m.approximateMemoryUsage();
                memEntries += m.entryCount();
                memDeletes += m.deleteCount();
            }
            s.memtableBytes = memBytes;
            s.memtableEntries = memEntries;
            s.activeMemtableEntries = activeEntries;
            s.memtableDeletes = memDeletes;
            s.activeMemtableDeletes = activeDeletes;
            s.activeMemtableBytes = activeBytes;
            s.immutableMemtables = sv.imms.size();
            Version v = sv.version;
            int n = v.numLevels();
            s.levelTables = new int[n];
            s.levelBytes = new long[n];
            s.levelEntries = new long[n];
            s.levelDeletions = new long[n];
            s.levelFilterMemory = new long[n];
            long filterMemory = 0;
            for (int level = 0; level < n; level++) {
                s.levelTables[level] = v.numFiles(level);
                s.levelBytes[level] = v.levelBytes(level);
                s.levelEntries[level] = v.levelEntries(level);
                s.levelDeletions[level] = v.levelDeletions(level);
                s.levelFilterMemory[level] = v.levelFilterMemory(level);
                filterMemory += s.levelFilterMemory[level];
            }
            s.filterMemoryBytes = filterMemory;
            s.tablesWithoutFilter = noteTablesWithoutFilter(v);
            s.compactionPending = options.autoCompaction() && v.compactionScore() >= 1;
        } finally {
            sv.release();
        }
        return s;
    }

    /**
     * Counts the tables of {@code v} that gets read without a filter now ({@link Stats#tablesWithoutFilter()}) and,
     * the first time since open that there are any, queues one WARN for the info log ({@link DbLog}, on the event
     * thread); not with {@code bitsPerKey(0)}, where tables without filters are what the user asked for. Checked at
     * each new Version (flushes, compactions, ingestions, recovery) and each {@link #stats()} call, never on the read
     * path: under a shared budget, another database's pins can shrink the cache between Versions.
     */
    private int noteTablesWithoutFilter(Version v) {
        int n = v.tablesWithoutFilter();
        if (n > 0 && options.bitsPerKey() > 0 && warnedTablesWithoutFilter.compareAndSet(false, true)) {
            int total = 0;
            for (int level = 0; level < v.numLevels(); level++) {
                total += v.numFiles(level);
            }
            int of = total;
            events.post(l -> {
                if (l instanceof DbLog log) {
                    log.tablesWithoutFilter(dir, n, of);
                }
            });
        }
        return n;
    }

    /**
     * Reads every block of every live table and checks its checksum and structure (rocksdbjni's {@code verifyChecksum},
     * C++ {@code DB::VerifyChecksum}): data, index, filter, properties and range-deletion blocks and the footer.
     * Returns when all are sound; throws at the first table with a bad block, naming its file and the first bad block's
     * offset (the message says what failed and how many of the table's blocks are bad). The tables are those of the
     * current state when the call starts, held until it returns, so a compaction meanwhile cannot delete them; writes
     * and reads go on. It reads the files, not the block cache, counts nothing in {@link #stats()} and changes nothing:
     * a bad block found here does not stop writes (RocksDB's does not set a background error either). WALs and the
     * MANIFEST are checked by {@code bloomkv sst verify DB_DIR}.
     *
     * @throws CorruptionException at the first table with a bad block
     * @throws DbClosedException once the database is closed
     * @throws BloomKvIOException on an I/O error
     */
    public void verifyChecksum() {
        checkOpen();
        Version v = versions.retainCurrent();
        try {
            for (int level = 0; level < v.numLevels(); level++) {
                for (int i = 0; i < v.numFiles(level); i++) {
                    TableReader r = v.reader(level, i);
                    Path file = FileNames.tableFile(dir, v.files(level).get(i).number());
                    List<TableReader.BadBlock> bad;
                    try {
                        bad = r.verifyChecksums();
                    } catch (IOException e) {
                        throw new BloomKvIOException("verifyChecksum: cannot read " + file, e);
                    }
                    if (!bad.isEmpty()) {
                        TableReader.BadBlock b = bad.get(0);
                        throw new CorruptionException(
                                "verifyChecksum: " + bad.size() + (bad.size() == 1 ? " bad block" : " bad blocks")
                                        + " in table level " + level + "; first: " + b.kind() + " block of "
                                        + b.size() + " bytes: " + b.problem(),
                                file,
                                b.offset());
                    }
                }
            }
        } finally {
            v.release();
        }
    }

    /**
     * The live tables, level by level (level 0 newest first, deeper levels by key). A table's filter facts are read
     * once and kept (the table is immutable). Under a {@link Options#filterMemoryBudget}, a filter that is neither
     * pinned nor in the budget's cache is read from the file for this alone and freed, never loaded into the cache:
     * listing the tables changes nothing the budget holds.
     */
    public List<TableInfo> tables() {
        checkOpen();
        Version v = versions.retainCurrent();
        try {
            List<TableInfo> out = new ArrayList<>();
            for (int level = 0; level < v.numLevels(); level++) {
                List<FileMetaData> files = v.files(level);
                for (int i = 0; i < files.size(); i++) {
                    FileMetaData f = files.get(i);
                    TableReader r = v.reader(level, i);
                    boolean filter = !r.readWithoutFilter(); // TableInfo's contract: facts of a usable filter only
                    out.add(new TableInfo(
                            level,
                            f.number(),
                            FileNames.tableFile(dir, f.number()),
                            f.fileSize(),
                            f.entries(),
                            f.smallestUserKey().clone(),
                            f.largestUserKey().clone(),
                            f.smallestSequence(),
                            f.largestSequence(),
                            filter ? r.filterKind() : null,
                            filter ? r.filterHashCount() : 0,
                            filter ? r.filterBitSize() : 0,
                            filter ? r.filterKeyCount() : 0,
                            r.filterMemoryBytes(),
                            filter ? r.filterExpectedFpp() : 1.0,
                            filter ? r.filterFractionOfBitsSet() : Double.NaN,
                            r.filterBroken() ? r.filterProblem() : null,
                            r.rangeFilterProblem(),
                            r.properties().compression(),
                            r.properties().dataSize(),
                            r.properties().dataUncompressedSize()));
                }
            }
            return out;
        } finally {
            v.release();
        }
    }

    /** The compression a new table of {@code level} gets now (see {@link TableOutputs#compressionForLevel}). */
    Compression compressionForLevel(int level) {
        return outputs.compressionForLevel(level);
    }

    /** The database directory (absolute). */
    public Path directory() {
        return dir;
    }

    /** A copy of the options the database was opened with. */
    public Options options() {
        Options o = options.copy();
        if (ttl != null) {
            o.mergeOperator(userMergeOperator); // the caller's operator, not the TTL wrapper the engine merges through
        }
        return o;
    }

    /** The TTL of this database, or null (for iterators). */
    Ttl ttl() {
        return ttl;
    }

    /** {@link Options#mergeOperator()} without a copy of the options (for iterators). */
    MergeOperator mergeOperator() {
        return options.mergeOperator();
    }

    /** {@link Options#prefixLength()} without a copy of the options (for iterators). */
    int prefixLength() {
        return options.prefixLength();
    }

    private void checkOpen() {
        if (state.closed) {
            throw new DbClosedException("database is closed");
        }
    }

    /** @throws DbClosedException once closed; @throws DbReadOnlyException when opened read-only */
    private void checkWritable(String operation) {
        checkOpen();
        if (options.readOnly()) {
            throw new DbReadOnlyException(dir, operation);
        }
    }

    // ------------------------------------------------------------------ close

    /**
     * Stops the background threads (an ongoing flush or compaction finishes or is abandoned),
     * invalidates iterators left open (after a call in progress on each returns), closes the WAL,
     * deletes the files that are obsolete then (as RocksDB's close: the WALs and tables that the last flush or
     * compaction replaced, those the invalidated iterators still read, and those an earlier failed deletion left;
     * not the WALs and tables a {@link #checkpoint} still running reads, which stay for the next open), closes the
     * MANIFEST, releases every table's off-heap filter and the directory lock. A deletion that fails there is logged
     * (WARN), not thrown, as RocksDB's close logs it: the data is whole and the next open deletes the file.
     * Acknowledged writes are in the WAL; the next open replays them. Under {@link Options#disableWal} the memtables
     * are flushed to tables first (they are in no log), as RocksDB flushes unpersisted memtables at close; if that
     * flush fails the database still closes, and close throws that failure. A read-only database deletes nothing, nor
     * does one whose writes a background error stopped (the next open deletes what is obsolete). Idempotent.
     *
     * @throws BloomKvIOException when closing the WAL or the MANIFEST or releasing the lock failed: the database is
     *     closed all the same (every file, table and thread released, the lock too)
     */
    @Override
    public void close() {
        BloomKvException flushFailure = null;
        if (options.disableWal() && !options.readOnly() && !closing()) {
            liftPauseForClose(); // the memtables are in no log: they are flushed, paused or not
            try {
                flush();
            } catch (BloomKvException e) {
                flushFailure = e;
            }
        }
        AutoCloseable mbean = jmx.getAndSet(null);
        // A failure here must not keep the database open (its threads, files and lock): it is thrown after the close.
        IllegalStateException unregisterFailure = null;
        if (mbean != null) {
            try {
                mbean.close();
            } catch (Exception e) {
                unregisterFailure = new IllegalStateException("cannot unregister the MBean of " + dir, e);
            }
        }
        state.lock();
        try {
            if (state.closed) {
                return;
            }
            state.closed = true;
            state.shuttingDown = true;
            state.signalChangeHeld();
            commits.drainOnClose();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            state.unlock();
        }
        // Passes stop before the iterators left open release their Versions: the tables only they read are deleted by
        // close's own pass (in shutDown, once the background threads stopped), whose failure close reports.
        obsolete.enable(false);
        for (DbIterator it : new ArrayList<>(openIterators)) {
            it.closeInternal(true);
        }
        openIterators.clear();
        IOException failure = shutDown(true);
        if (blockCache != null) {
            blockCache.clear();
        }
        try {
            dirLock.close();
        } catch (IOException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            DbLog.LOG.error("[{}] error closing", dir, failure);
            BloomKvIOException e = new BloomKvIOException("error closing database " + dir, failure);
            if (flushFailure != null) {
                e.addSuppressed(flushFailure);
            }
            if (unregisterFailure != null) {
                e.addSuppressed(unregisterFailure);
            }
            throw e;
        }
        if (flushFailure != null) {
            DbLog.LOG.error("[{}] closed, but its memtables (in no WAL) could not be flushed", dir, flushFailure);
            if (unregisterFailure != null) {
                flushFailure.addSuppressed(unregisterFailure);
            }
            throw flushFailure;
        }
        if (unregisterFailure != null) {
            throw unregisterFailure;
        }
        DbLog.LOG.info("[{}] closed", dir);
    }

    /**
     * Lets the flusher and the compactor run whatever {@link #pauseBackgroundWork} said, for the rest of this
     * database's life: close flushes memtables that are in no WAL, and a write stall that flush meets may wait for a
     * compaction.
     */
    private void liftPauseForClose() {
        state.lock();
        try {
            state.pauseLiftedForClose = true;
            state.signalChangeHeld();
        } finally {
            state.unlock();
        }
        if (compactor != null) {
            compactor.liftPause();
        }
    }

    /** Whether close already ran or began (a second close flushes nothing). */
    private boolean closing() {
        state.lock();
        try {
            return state.closed || state.shuttingDown;
        } finally {
            state.unlock();
        }
    }

    /**
     * Shared by close and a failed open: marks the database shut down, stops the background
     * threads, closes the WAL, deletes the obsolete files ({@code atClose} only: RocksDB's close runs this pass only
     * for a database that opened), closes the MANIFEST, releases the SuperVersion and every table. Every
     * step runs; returns the first I/O failure (later ones suppressed), or null.
     */
    private IOException shutDown(boolean atClose) {
        obsolete.enable(false);
        state.lock();
        try {
            state.closed = true;
            state.shuttingDown = true;
            state.signalChangeHeld();
        } finally {
            state.unlock();
        }
        if (compactor != null) {
            compactor.shutdown();
        }
        if (flusher != null) {
            flusher.join();
        }
        IOException failure = null;
        state.lock();
        try {
            writeBufferCharge.releaseAll();
            CommitPipeline.closeLogs(state.unsyncedLogs.values()); // as the current one: closed, not synced
            state.unsyncedLogs.clear();
            if (state.log != null) {
                state.log.close();
            }
        } catch (IOException e) {
            failure = e;
        } finally {
            state.unlock();
        }
        if (atClose) {
            // Background work has stopped and the iterators are closed: what no live Version names is obsolete now.
            // Before the tables, the MANIFEST and the lock are released. A failure is logged, not thrown, as RocksDB's
            // close logs a failed deletion: the data is whole and the next open deletes what is left.
            IOException e = obsolete.deleteAtClose();
            if (e != null) {
                DbLog.LOG.warn("[{}] obsolete files left at close; the next open deletes them", dir, e);
            }
        }
        state.dropSuperVersion();
        try {
            versions.close();
        } catch (IOException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        tableCache.close();
        events.close(); // after the background threads: their last events are delivered
        return failure;
    }

    /** The rate limiter of table writes ({@link Options#rateLimiter}), or null. */
    RateLimiter rateLimiterForTests() {
        return outputs.rateLimiter();
    }

    /** Whether the calling thread holds an engine lock (the mutex, the compaction lock); for listener tests. */
    boolean engineLockHeldByCurrentThread() {
        return state.heldByCurrentThread() || (compactor != null && compactor.lockHeldByCurrentThread());
    }

    /** Whether the calling thread holds the database mutex (not the compaction lock); for listener tests. */
    boolean mutexHeldByCurrentThread() {
        return state.heldByCurrentThread();
    }

    @Override
    public String toString() {
        return "Db{" + dir + (state.closed ? ", closed" : "") + "}";
    }

    /** What the compactor may do to this database. */
    private final class DbCompactionEnv implements CompactionEnv {
        @Override
        public Options options() {
            return options;
        }

        @Override
        public Path directory() {
            return dir;
        }

        @Override
        public VersionSet versions() {
            return versions;
        }

        @Override
        public TableReader table(long number) {
            return tableCache.get(number);
        }

        @Override
        public long smallestSnapshot() {
            return Db.this.smallestSnapshot();
        }

        @Override
        public long newestSnapshot() {
            return snapshots.newest(-1); // none: every entry is newer, an ingested one at sequence 0 too
        }

        @Override
        public long holdSnapshots() {
            state.lock();
            try {
                state.compactionHoldsSnapshots = true;
                return snapshots.newest(-1);
            } finally {
                state.unlock();
            }
        }

        @Override
        public void releaseSnapshots() {
            state.lock();
            try {
                state.compactionHoldsSnapshots = false;
                state.signalChangeHeld();
            } finally {
                state.unlock();
            }
        }

        @Override
        public boolean isShuttingDown() {
            return state.closed;
        }

        @Override
        public BloomKvException backgroundError() {
            return state.backgroundError();
        }

        @Override
        public void setBackgroundError(String operation, BloomKvException e) {
            state.setBackgroundError(operation, e);
        }

        @Override
        public TableOutputs.Output newOutput(
                int level, long expectedEntries, Compaction job, byte[] smallestUserKey, byte[] largestUserKey)
                throws IOException {
            return outputs.newOutput(level, expectedEntries, job, smallestUserKey, largestUserKey);
        }

        @Override
        public void discardOutput(long number, Exception cause) {
            outputs.discard(number, cause);
        }

        @Override
        public void outputRecorded(long number) {
            obsolete.released(number);
        }

        @Override
        public void versionInstalled() {
            state.versionChanged();
        }

        @Override
        public void deleteObsoleteFiles() {
            obsolete.delete();
        }

        @Override
        public Events events() {
            return events;
        }

        @Override
        public void compactionFinished(long bytesRead, long bytesWritten) {
            counters.compactionFinished(bytesRead, bytesWritten);
        }

        @Override
        public CompactionFilter compactionFilter(Compaction c) {
            if (ttl == null) {
                return options.compactionFilter();
            }
            return ttl.compactionFilter(options.compactionFilter(), ttl.now(), key -> newerOperandMayExist(c, key));
        }
    }

    /**
     * Whether the newest entry of {@code userKey} outside compaction {@code c} (memtables, then tables of the levels
     * down to {@code c}'s input level that are not its inputs, newest first) may be a merge operand: a TTL compaction
     * keeps an expired value such an operand may still apply to ({@link Ttl#compactionFilter}). Filters decide which
     * tables are read, as on a get.
     */
    private boolean newerOperandMayExist(Compaction c, byte[] userKey) {
        long hash = Hashing.hash64(userKey);
        java.util.Set<Long> inputs = new java.util.HashSet<>();
        c.base().forEach(f -> inputs.add(f.number()));
        c.below().forEach(f -> inputs.add(f.number()));
        SuperVersion sv = state.acquireSuperVersion();
        try {
            TableReader.Entry e = sv.mem.get(userKey, hash, InternalKey.MAX_SEQUENCE);
            for (int i = 0; e == null && i < sv.imms.size(); i++) {
                e = sv.imms.get(i).get(userKey, hash, InternalKey.MAX_SEQUENCE);
            }
            for (int level = 0; e == null && level <= c.level() && level < sv.version.numLevels(); level++) {
                for (int i = 0; e == null && i < sv.version.numFiles(level); i++) {
                    io.bloomkv.engine.internal.version.FileMetaData f =
                            sv.version.files(level).get(i);
                    if (!inputs.contains(f.number()) && f.mayContain(userKey)) {
                        e = sv.version.reader(level, i).get(userKey, hash, InternalKey.MAX_SEQUENCE);
                    }
                }
            }
            return e != null && e.type() == ValueType.MERGE;
        } finally {
            sv.release();
        }
    }
}
