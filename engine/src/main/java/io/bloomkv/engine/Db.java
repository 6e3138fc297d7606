package io.bloomkv.engine;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.iterator.MergingIterator;
import io.bloomkv.engine.memtable.MemTable;
import io.bloomkv.engine.table.BlockCache;
import io.bloomkv.engine.table.InternalIterator;
import io.bloomkv.engine.table.ReadCounters;
import io.bloomkv.engine.table.TableBuilderOptions;
import io.bloomkv.engine.table.TableProperties;
import io.bloomkv.engine.table.TableReader;
import io.bloomkv.engine.table.TableWriter;
import io.bloomkv.engine.util.ByteReader;
import io.bloomkv.engine.util.Threads;
import io.bloomkv.engine.version.FileMetaData;
import io.bloomkv.engine.version.FileNames;
import io.bloomkv.engine.version.TableCache;
import io.bloomkv.engine.version.Version;
import io.bloomkv.engine.version.VersionEdit;
import io.bloomkv.engine.version.VersionSet;
import io.bloomkv.engine.wal.LogReader;
import io.bloomkv.engine.wal.LogWriter;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

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
 * table's filter before any block read. {@link #stats()} counts the lookups the filters avoided.
 *
 * <h2>Errors</h2>
 * Bad input is an {@link InvalidArgumentException} and changes nothing; use after close is a
 * {@link DbClosedException}; I/O errors are {@link BloomKvIOException}s; damaged files are
 * {@link CorruptionException}s naming the file. After an I/O error in the write path, writes fail
 * until the database is reopened; reads go on.
 */
public final class Db implements AutoCloseable {
    /** Longest key accepted, 64 KiB. */
    public static final int MAX_KEY_SIZE = 64 * 1024;
    /** Longest value accepted, 16 MiB. */
    public static final int MAX_VALUE_SIZE = 16 * 1024 * 1024;
    /** Largest write group a GROUP_COMMIT or NONE leader forms from queued writers. */
    static final int MAX_GROUP_BYTES = 1 << 20;

    private final Path dir;
    private final Options options;
    private final FileSystem fs;
    private final Closeable dirLock;
    private final ReadCounters readCounters = new ReadCounters();
    private final BlockCache blockCache;
    private final TableCache tableCache;
    private final VersionSet versions;
    private final SnapshotList snapshots = new SnapshotList();
    private final Set<Long> pendingOutputs = ConcurrentHashMap.newKeySet();
    private final Set<DbIterator> openIterators = ConcurrentHashMap.newKeySet();
    private final Object obsoleteLock = new Object();
    private volatile boolean obsoleteDeletionEnabled;

    private final LongAdder gets = new LongAdder();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder memtableHits = new LongAdder();
    private final LongAdder puts = new LongAdder();
    private final LongAdder deletes = new LongAdder();
    private final LongAdder writeBatches = new LongAdder();
    private final LongAdder userBytes = new LongAdder();
    private final LongAdder walRecords = new LongAdder();
    private final LongAdder walSyncs = new LongAdder();
    private final LongAdder writeStalls = new LongAdder();
    private final LongAdder writeStallNanos = new LongAdder();
    private final LongAdder writeSlowdowns = new LongAdder();
    private final LongAdder flushes = new LongAdder();
    private final LongAdder flushBytes = new LongAdder();
    final LongAdder compactions = new LongAdder();
    final LongAdder compactionBytesRead = new LongAdder();
    final LongAdder compactionBytesWritten = new LongAdder();
    private long walTailsDropped;

    /** Guards the write queue, the memtables, the WAL writer and the background-work state. */
    private final ReentrantLock mutex = new ReentrantLock();
    /** Signalled when a flush or compaction finishes, a memtable is frozen, or the database closes. */
    private final Condition backgroundChanged = mutex.newCondition();
    private final ArrayDeque<Writer> writers = new ArrayDeque<>();
    private MemTable mem;
    private final ArrayDeque<MemTable> imms = new ArrayDeque<>();
    private LogWriter log;
    private long logFileNumber;
    private volatile SuperVersion superVersion;
    private volatile BloomKvException backgroundError;
    private volatile boolean closed;
    private boolean shuttingDown;
    private Thread flushThread;
    private Compactor compactor;

    /** A queued write: its batch (null = make room only) and, once done, its outcome. */
    private static final class Writer {
        final WriteBatch batch;
        final boolean forceSwitch;
        final Condition turn;
        boolean done;
        RuntimeException error;

        Writer(WriteBatch batch, boolean forceSwitch, Condition turn) {
            this.batch = batch;
            this.forceSwitch = forceSwitch;
            this.turn = turn;
        }
    }

    private Db(Path dir, Options options, Closeable dirLock) {
        this.dir = dir;
        this.options = options;
        this.fs = options.fileSystem();
        this.dirLock = dirLock;
        this.blockCache = options.blockCacheSize() > 0 ? new BlockCache(options.blockCacheSize()) : null;
        this.tableCache = new TableCache(fs, dir, blockCache, readCounters);
        this.versions = new VersionSet(fs, dir, options, tableCache, this::deleteObsoleteFiles);
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
        if (dir == null) {
            throw new InvalidArgumentException("directory is null");
        }
        if (options == null) {
            throw new InvalidArgumentException("options are null");
        }
        Options opts = options.copy();
        if (opts.l0SlowdownWritesTrigger() < opts.l0CompactionTrigger() || opts.l0StopWritesTrigger() < opts.l0SlowdownWritesTrigger()) {
            throw new InvalidArgumentException("need l0CompactionTrigger <= l0SlowdownWritesTrigger <= l0StopWritesTrigger, got "
                    + opts.l0CompactionTrigger() + ", " + opts.l0SlowdownWritesTrigger() + ", " + opts.l0StopWritesTrigger());
        }
        FileSystem fs = opts.fileSystem();
        Path abs = dir.toAbsolutePath().normalize();
        Closeable lock = null;
        Db db = null;
        try {
            if (!fs.exists(abs)) {
                if (!opts.createIfMissing()) {
                    throw new NotADatabaseException(abs, "it does not exist and createIfMissing is false");
                }
                fs.createDirectories(abs);
            }
            checkLooksLikeDatabase(fs, abs);
            Optional<Closeable> l = fs.tryLock(FileNames.lockFile(abs));
            if (l.isEmpty()) {
                throw new DbLockedException(abs);
            }
            lock = l.get();
            db = new Db(abs, opts, lock);
            db.recover();
            db.startBackgroundThreads();
            return db;
        } catch (IOException e) {
            cleanupFailedOpen(db, lock, e);
            throw new BloomKvIOException("cannot open database " + abs, e);
        } catch (RuntimeException | Error e) {
            cleanupFailedOpen(db, lock, e);
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

    private static void cleanupFailedOpen(Db db, Closeable lock, Throwable failure) {
        try {
            if (db != null) {
                db.releaseAfterFailedOpen();
            }
        } catch (RuntimeException | IOException e) {
            failure.addSuppressed(e);
        }
        try {
            if (lock != null) {
                lock.close();
            }
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    /** A directory with files but no CURRENT is a database only if every file is one of ours and no table or WAL. */
    private static void checkLooksLikeDatabase(FileSystem fs, Path dir) throws IOException {
        List<Path> entries;
        try {
            entries = fs.list(dir);
        } catch (NotDirectoryException e) {
            throw new NotADatabaseException(dir, "it is not a directory");
        }
        boolean hasCurrent = false;
        List<String> foreign = new ArrayList<>();
        for (Path p : entries) {
            String name = p.getFileName().toString();
            FileNames.Parsed parsed = FileNames.parse(name);
            if (parsed == null) {
                foreign.add(name);
            } else if (parsed.kind() == FileNames.Kind.CURRENT) {
                hasCurrent = true;
            } else if (parsed.kind() == FileNames.Kind.LOG || parsed.kind() == FileNames.Kind.TABLE) {
                foreign.add(name);
            }
        }
        if (!hasCurrent && !foreign.isEmpty()) {
            throw new NotADatabaseException(dir, "no CURRENT file, but it holds " + foreign.subList(0, Math.min(5, foreign.size()))
                    + (foreign.size() > 5 ? " and " + (foreign.size() - 5) + " more" : ""));
        }
    }

    private void recover() throws IOException {
        boolean exists = fs.exists(FileNames.currentFile(dir));
        if (!exists) {
            if (!options.createIfMissing()) {
                throw new NotADatabaseException(dir, "it holds no database and createIfMissing is false");
            }
            versions.create();
        } else {
            if (options.errorIfExists()) {
                throw new InvalidArgumentException("database " + dir + " exists and errorIfExists is set");
            }
            versions.recover();
        }
        // Numbers of every file present are used, so no new file overwrites an orphan.
        TreeMap<Long, Path> logs = new TreeMap<>();
        for (Path p : fs.list(dir)) {
            FileNames.Parsed parsed = FileNames.parse(p.getFileName().toString());
            if (parsed == null || parsed.number() < 0) {
                continue;
            }
            versions.markFileNumberUsed(parsed.number());
            if (parsed.kind() == FileNames.Kind.LOG && parsed.number() >= versions.logNumber()) {
                logs.put(parsed.number(), p);
            }
        }
        VersionEdit edit = new VersionEdit();
        MemTable replay = new MemTable(0);
        long maxSequence = versions.lastSequence();
        for (Path logPath : logs.values()) {
            try (ReadableFile f = fs.newReadableFile(logPath); LogReader reader = new LogReader(f)) {
                byte[] record;
                while ((record = reader.readRecord()) != null) {
                    long first;
                    int count;
                    try {
                        count = WriteBatch.countOf(record);
                        first = WriteBatch.decode(record, inserterInto(replay));
                    } catch (ByteReader.MalformedInputException e) {
                        throw new CorruptionException("WAL record does not parse as a write batch: " + e.getMessage(),
                                logPath, reader.lastGoodOffset(), e);
                    }
                    maxSequence = Math.max(maxSequence, first + count - 1);
                    if (replay.approximateMemoryUsage() >= options.writeBufferSize()) {
                        writeLevel0Table(replay, edit);
                        replay = new MemTable(0);
                    }
                }
                if (reader.tailDropped()) {
                    walTailsDropped++;
                }
            }
        }
        if (!replay.isEmpty()) {
            writeLevel0Table(replay, edit);
        }
        versions.setLastSequence(maxSequence);
        logFileNumber = versions.newFileNumber();
        log = new LogWriter(fs.newWritableFile(FileNames.logFile(dir, logFileNumber)));
        mem = new MemTable(logFileNumber);
        edit.logNumber(logFileNumber);
        versions.logAndApply(edit);
        for (VersionEdit.LevelFile lf : edit.newFiles()) {
            pendingOutputs.remove(lf.file().number());
        }
        installSuperVersion();
        obsoleteDeletionEnabled = true;
        deleteObsoleteFiles();
    }

    /** Releases what a failed open built (background threads, tables, MANIFEST writer, WAL writer), best effort. */
    private void releaseAfterFailedOpen() throws IOException {
        obsoleteDeletionEnabled = false;
        mutex.lock();
        try {
            closed = true;
            shuttingDown = true;
            backgroundChanged.signalAll();
        } finally {
            mutex.unlock();
        }
        if (compactor != null) {
            compactor.shutdown();
        }
        Threads.joinUninterruptibly(flushThread);
        try {
            if (log != null) {
                log.close();
            }
        } finally {
            SuperVersion sv = superVersion;
            superVersion = null;
            if (sv != null) {
                sv.release();
            }
            try {
                versions.close();
            } finally {
                tableCache.close();
            }
        }
    }

    private void startBackgroundThreads() {
        flushThread = new Thread(this::flushLoop, "bloomkv-flush-" + dir.getFileName());
        flushThread.setDaemon(true);
        flushThread.start();
        compactor = new Compactor(this);
        compactor.start();
    }

    // ------------------------------------------------------------------ reads

    /** The value of {@code key}, or null when absent. */
    public byte[] get(byte[] key) {
        return get(key, null);
    }

    /** The value of {@code key} at {@code readOptions.snapshot()} (the latest state when null), or null. */
    public byte[] get(byte[] key, ReadOptions readOptions) {
        checkOpen();
        WriteBatch.checkKey(key);
        long sequence = readSequence(readOptions);
        SuperVersion sv = acquireSuperVersion();
        gets.increment();
        try {
            TableReader.Entry e = sv.mem.get(key, sequence);
            for (int i = 0; e == null && i < sv.imms.size(); i++) {
                e = sv.imms.get(i).get(key, sequence);
            }
            if (e != null) {
                memtableHits.increment();
            } else {
                long hash = Hashing.hash64(key);
                e = sv.version.get(key, hash, sequence);
            }
            if (e != null && e.type() == ValueType.PUT) {
                hits.increment();
                return e.value();
            }
            misses.increment();
            return null;
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("get failed", e.getCause());
        } finally {
            sv.release();
        }
    }

    /**
     * The values of {@code keys} (null where absent), equal to a {@link #get} of each, read at one point in time.
     * Batched ({@link MultiGet}): every table filters all candidate keys at once, overlapping the filters' cache
     * misses, before any block is read. The list may hold duplicates; the result has one entry per key.
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
        long sequence = readSequence(readOptions);
        SuperVersion sv = acquireSuperVersion();
        try {
            MultiGet.Outcome o = MultiGet.run(sv, keys, sequence);
            gets.add(keys.size());
            hits.add(o.hits());
            misses.add(keys.size() - o.hits());
            memtableHits.add(o.memtableHits());
            return o.values();
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("multiGet failed", e.getCause());
        } finally {
            sv.release();
        }
    }

    /** An iterator over the latest state; close it when done. */
    public DbIterator iterator() {
        return iterator(null);
    }

    /** An iterator at {@code readOptions.snapshot()} (the latest state when null); close it when done. */
    public DbIterator iterator(ReadOptions readOptions) {
        checkOpen();
        long sequence = readSequence(readOptions);
        SuperVersion sv = acquireSuperVersion();
        DbIterator it;
        try {
            List<InternalIterator> children = new ArrayList<>();
            children.add(sv.mem.iterator());
            for (MemTable imm : sv.imms) {
                children.add(imm.iterator());
            }
            children.addAll(sv.version.iterators());
            it = new DbIterator(this, sv, new MergingIterator(children), sequence, PrefixSeek.of(options, readOptions, sv));
        } catch (RuntimeException e) {
            sv.release();
            throw e;
        }
        openIterators.add(it);
        if (closed) {
            it.closeInternal(true);
            openIterators.remove(it);
            throw new DbClosedException("database is closed");
        }
        return it;
    }

    void iteratorClosed(DbIterator it) {
        openIterators.remove(it);
    }

    private long readSequence(ReadOptions readOptions) {
        Snapshot s = readOptions == null ? null : readOptions.snapshot();
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

    private SuperVersion acquireSuperVersion() {
        while (true) {
            SuperVersion sv = superVersion;
            if (sv == null || closed) {
                throw new DbClosedException("database is closed");
            }
            if (sv.tryRetain()) {
                return sv;
            }
        }
    }

    /** Must hold {@link #mutex} or be single-threaded (open). Publishes the current memtables and Version. */
    private void installSuperVersion() {
        List<MemTable> list = new ArrayList<>(imms);
        SuperVersion next = new SuperVersion(mem, list, versions.retainCurrent());
        SuperVersion old = superVersion;
        superVersion = next;
        if (old != null) {
            old.release();
        }
    }

    /** Called by the compactor after it installed a new Version. */
    void versionChanged() {
        mutex.lock();
        try {
            if (superVersion != null) {
                installSuperVersion();
            }
            backgroundChanged.signalAll();
        } finally {
            mutex.unlock();
        }
    }

    // ------------------------------------------------------------------ snapshots

    /** A snapshot of the current state; close it (or {@link #releaseSnapshot}) when done. */
    public Snapshot getSnapshot() {
        checkOpen();
        mutex.lock();
        try {
            long seq = versions.lastSequence();
            snapshots.add(seq);
            return new Snapshot(this, seq);
        } finally {
            mutex.unlock();
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

    /** Sets {@code key} to {@code value}. */
    public void put(byte[] key, byte[] value) {
        checkOpen();
        WriteBatch b = new WriteBatch().put(key, value);
        write(b);
    }

    /** Removes {@code key}; removing an absent key is not an error. */
    public void delete(byte[] key) {
        checkOpen();
        WriteBatch b = new WriteBatch().delete(key);
        write(b);
    }

    /** Applies every operation of {@code batch} atomically. An empty batch does nothing. */
    public void write(WriteBatch batch) {
        checkOpen();
        if (batch == null) {
            throw new InvalidArgumentException("batch is null");
        }
        if (batch.isEmpty()) {
            return;
        }
        int n = batch.count();
        int nPuts = batch.putCount();
        long bytes = batch.userBytes();
        writeInternal(batch, false);
        puts.add(nPuts);
        deletes.add(n - nPuts);
        userBytes.add(bytes);
        writeBatches.increment();
    }

    /**
     * Freezes the memtable (if it holds anything) and waits until it, and every memtable frozen
     * before it, is in a level-0 table; their WALs are then deleted.
     */
    public void flush() {
        checkOpen();
        writeInternal(null, true);
        mutex.lock();
        try {
            while (!imms.isEmpty() && backgroundError == null && !shuttingDown) {
                backgroundChanged.awaitUninterruptibly();
            }
            if (shuttingDown) {
                throw new DbClosedException("database closed during flush");
            }
            if (backgroundError != null) {
                throw backgroundError;
            }
        } finally {
            mutex.unlock();
        }
    }

    /**
     * Queues the write and waits for its turn; the writer at the head of the queue (the leader)
     * makes room, forms a group from the writers behind it (one only under EVERY_WRITE), appends
     * one WAL record for the group, syncs it as the sync mode says, applies it to the memtable,
     * publishes the new last sequence and wakes the group. With {@code batch == null} the leader
     * only freezes the memtable and returns it (null when it was empty).
     */
    private MemTable writeInternal(WriteBatch batch, boolean forceSwitch) {
        Writer w = new Writer(batch, forceSwitch, mutex.newCondition());
        mutex.lock();
        try {
            writers.addLast(w);
            while (!w.done && writers.peekFirst() != w) {
                w.turn.awaitUninterruptibly();
            }
            if (w.done) {
                if (w.error != null) {
                    throw w.error;
                }
                return null;
            }
            List<Writer> group = new ArrayList<>();
            group.add(w);
            RuntimeException error = null;
            MemTable frozen = null;
            try {
                if (forceSwitch) {
                    frozen = makeRoomForWrite(true);
                    return frozen;
                }
                makeRoomForWrite(false);
                WriteBatch merged = formGroup(w, group);
                long first = versions.lastSequence() + 1;
                long last = first + merged.count() - 1;
                MemTable target = mem;
                LogWriter wal = log;
                long walNumber = logFileNumber;
                mutex.unlock();
                try {
                    appendToWal(wal, walNumber, merged, first);
                    merged.forEach(first, inserterInto(target));
                } finally {
                    mutex.lock();
                }
                versions.setLastSequence(last);
                return null;
            } catch (RuntimeException e) {
                error = e;
                throw e;
            } finally {
                for (Writer done : group) {
                    Writer head = writers.pollFirst();
                    if (head != done) {
                        throw new IllegalStateException("write queue out of order");
                    }
                    if (done != w) {
                        done.done = true;
                        done.error = error;
                        done.turn.signal();
                    }
                }
                Writer next = writers.peekFirst();
                if (next != null) {
                    next.turn.signal();
                }
            }
        } finally {
            mutex.unlock();
        }
    }

    /** Takes the writers queued behind the leader into its group, up to {@link #MAX_GROUP_BYTES}. */
    private WriteBatch formGroup(Writer leader, List<Writer> group) {
        if (options.syncMode() == SyncMode.EVERY_WRITE) {
            return leader.batch;
        }
        WriteBatch merged = null;
        int size = leader.batch.approximateSize();
        int max = size <= (128 << 10) ? size + (128 << 10) : MAX_GROUP_BYTES;
        boolean first = true;
        for (Writer next : writers) {
            if (first) {
                first = false;
                continue;
            }
            if (next.batch == null || next.forceSwitch) {
                break;
            }
            size += next.batch.approximateSize() - WriteBatch.HEADER_SIZE;
            if (size > max) {
                break;
            }
            if (merged == null) {
                merged = new WriteBatch().append(leader.batch);
            }
            merged.append(next.batch);
            group.add(next);
        }
        return merged == null ? leader.batch : merged;
    }

    private void appendToWal(LogWriter wal, long walNumber, WriteBatch batch, long firstSequence) {
        try {
            byte[] rec = batch.contents(firstSequence);
            wal.addRecord(rec, 0, batch.approximateSize());
            walRecords.increment();
            if (options.syncMode() == SyncMode.NONE) {
                wal.flush();
            } else {
                wal.sync();
                walSyncs.increment();
            }
        } catch (IOException e) {
            BloomKvIOException err = new BloomKvIOException("WAL append failed (" + FileNames.logFile(dir, walNumber) + ")", e);
            setBackgroundError(err);
            throw err;
        }
    }

    /**
     * Leader only, {@link #mutex} held. Waits while the write must stall; freezes the memtable when
     * it is full (or when {@code force} and it is not empty). Returns the frozen memtable or null.
     */
    private MemTable makeRoomForWrite(boolean force) {
        boolean allowDelay = !force;
        while (true) {
            if (shuttingDown) {
                throw new DbClosedException("database is closed");
            }
            if (backgroundError != null) {
                throw backgroundError;
            }
            int l0 = versions.current().numFiles(0);
            if (allowDelay && options.autoCompaction() && l0 >= options.l0SlowdownWritesTrigger()) {
                allowDelay = false;
                writeSlowdowns.increment();
                long t0 = System.nanoTime();
                mutex.unlock();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    mutex.lock();
                }
                writeStallNanos.add(System.nanoTime() - t0);
                continue;
            }
            if (!force && mem.approximateMemoryUsage() < options.writeBufferSize()) {
                return null;
            }
            if (force && mem.isEmpty()) {
                return null;
            }
            if (imms.size() >= options.maxImmutableMemtables()
                    || (options.autoCompaction() && l0 >= options.l0StopWritesTrigger())) {
                writeStalls.increment();
                long t0 = System.nanoTime();
                backgroundChanged.awaitUninterruptibly();
                writeStallNanos.add(System.nanoTime() - t0);
                continue;
            }
            return switchMemTable();
        }
    }

    /** {@link #mutex} held. Starts a new WAL and memtable; the old memtable joins the immutables. */
    private MemTable switchMemTable() {
        long number = versions.newFileNumber();
        LogWriter next;
        try {
            next = new LogWriter(fs.newWritableFile(FileNames.logFile(dir, number)));
        } catch (IOException e) {
            throw new BloomKvIOException("cannot create WAL " + FileNames.logFile(dir, number), e);
        }
        try {
            // Synced under every mode, so that a crash loses at most a suffix of the writes: no
            // write of the new WAL can survive while one of the old WAL is lost.
            log.sync();
            walSyncs.increment();
            log.close();
        } catch (IOException e) {
            BloomKvIOException err = new BloomKvIOException("cannot close WAL " + FileNames.logFile(dir, logFileNumber), e);
            setBackgroundError(err);
            try {
                next.close();
            } catch (IOException suppressed) {
                err.addSuppressed(suppressed);
            }
            throw err;
        }
        MemTable frozen = mem;
        log = next;
        logFileNumber = number;
        imms.addFirst(frozen);
        mem = new MemTable(number);
        installSuperVersion();
        backgroundChanged.signalAll();
        return frozen;
    }

    void setBackgroundError(BloomKvException e) {
        mutex.lock();
        try {
            if (backgroundError == null) {
                backgroundError = e;
            }
            backgroundChanged.signalAll();
        } finally {
            mutex.unlock();
        }
    }

    BloomKvException backgroundError() {
        return backgroundError;
    }

    // ------------------------------------------------------------------ flush

    private void flushLoop() {
        while (true) {
            MemTable imm;
            mutex.lock();
            try {
                while (!shuttingDown && (imms.isEmpty() || backgroundError != null)) {
                    backgroundChanged.awaitUninterruptibly();
                }
                if (shuttingDown) {
                    return;
                }
                imm = imms.peekLast();
            } finally {
                mutex.unlock();
            }
            try {
                flushImmutable(imm);
            } catch (BloomKvException e) {
                setBackgroundError(e);
            } catch (IOException e) {
                setBackgroundError(new BloomKvIOException("flush of memtable (WAL " + imm.logNumber() + ") failed", e));
            } catch (RuntimeException | Error e) {
                // Recorded, never lost with the thread: writers and flush() then fail instead of waiting forever.
                setBackgroundError(new BloomKvException("flush of memtable (WAL " + imm.logNumber() + ") failed", e));
            } finally {
                mutex.lock();
                try {
                    backgroundChanged.signalAll();
                } finally {
                    mutex.unlock();
                }
            }
        }
    }

    /** Writes the oldest immutable memtable to a level-0 table, records it, and drops the memtable and its WAL. */
    private void flushImmutable(MemTable imm) throws IOException {
        VersionEdit edit = new VersionEdit();
        FileMetaData meta = writeLevel0Table(imm, edit);
        long oldestLiveLog;
        mutex.lock();
        try {
            // WALs older than the next memtable to flush (or the current one) are no longer needed.
            MemTable newerImm = null;
            for (MemTable m : imms) {
                if (m == imm) {
                    break;
                }
                newerImm = m;
            }
            oldestLiveLog = newerImm != null ? newerImm.logNumber() : mem.logNumber();
        } finally {
            mutex.unlock();
        }
        edit.logNumber(oldestLiveLog);
        try {
            versions.logAndApply(edit);
        } catch (IOException | RuntimeException e) {
            // Before the table leaves pendingOutputs: the edit may be on disk though its sync failed.
            String what = "flush of memtable (WAL " + imm.logNumber() + "): MANIFEST write failed";
            setBackgroundError(e instanceof IOException io ? new BloomKvIOException(what, io) : new BloomKvException(what, e));
            throw e;
        } finally {
            if (meta != null) {
                pendingOutputs.remove(meta.number());
            }
        }
        mutex.lock();
        try {
            imms.remove(imm);
            installSuperVersion();
            backgroundChanged.signalAll();
        } finally {
            mutex.unlock();
        }
        flushes.increment();
        deleteObsoleteFiles();
        if (compactor != null) {
            compactor.wake();
        }
    }

    /**
     * Writes {@code m} to a new table of level 0, opens it, and adds it to {@code edit}; the file
     * stays in {@link #pendingOutputs} until the caller has applied the edit. Null when {@code m} is empty.
     */
    private FileMetaData writeLevel0Table(MemTable m, VersionEdit edit) throws IOException {
        if (m.isEmpty()) {
            return null;
        }
        long number = versions.newFileNumber();
        pendingOutputs.add(number);
        FileMetaData meta;
        try (InternalIterator it = m.iterator()) {
            meta = buildTable(number, it, tableOptions(0, m.entryCount()), m.entryCount());
        } catch (IOException | RuntimeException e) {
            pendingOutputs.remove(number);
            throw e;
        }
        flushBytes.add(meta.fileSize());
        edit.addFile(0, meta);
        return meta;
    }

    /**
     * Writes entries of {@code it} from its current position (seekToFirst is called when it is not
     * valid yet) into table {@code number}, until it ends; fsyncs the table and opens it in the
     * table cache. On failure the partial file is deleted.
     */
    FileMetaData buildTable(long number, InternalIterator it, TableBuilderOptions tableOptions, long expectedKeys)
            throws IOException {
        Path path = FileNames.tableFile(dir, number);
        TableProperties props;
        try {
            try (TableWriter writer = new TableWriter(fs.newWritableFile(path), tableOptions, Math.max(1, expectedKeys))) {
                if (!it.valid()) {
                    it.seekToFirst();
                }
                while (it.valid()) {
                    writer.add(it.key(), it.value());
                    it.next();
                }
                props = writer.finish();
            }
            tableCache.open(number);
        } catch (IOException | RuntimeException e) {
            tableCache.evict(number);
            try {
                fs.delete(path);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return new FileMetaData(number, props.fileSize(), props.smallestKey(), props.largestKey(), props.entries(),
                props.smallestSeq(), props.largestSeq());
    }

    /** How tables of {@code level} are built: block layout from the options, filter bits per key per the allocation. */
    TableBuilderOptions tableOptions(int level, long expectedEntries) {
        FilterKind kind = options.filterKindForLevel(level);
        return TableBuilderOptions.defaults()
                .blockSize(options.blockSize())
                .restartInterval(options.blockRestartInterval())
                .filterKind(kind)
                .bitsPerKey(LevelFilterPolicy.bitsPerKey(kind, bitsPerKeyForLevel(level, expectedEntries), expectedEntries))
                .prefixLength(options.prefixLength());
    }

    /** Filter bits per key for a new table of {@code level}, per {@link Options#filterAllocation()}. */
    double bitsPerKeyForLevel(int level, long expectedEntries) {
        if (options.filterAllocation() == FilterAllocation.UNIFORM || options.bitsPerKey() == 0) {
            return options.bitsPerKey();
        }
        Version v = versions.retainCurrent();
        try {
            return io.bloomkv.engine.compaction.MonkeyAllocation.bitsPerKeyForLevel(v, level, options, expectedEntries);
        } finally {
            v.release();
        }
    }

    // ------------------------------------------------------------------ files

    /** Numbers of tables being written, which obsolete-file deletion must keep. */
    Set<Long> pendingOutputs() {
        return pendingOutputs;
    }

    /**
     * Deletes WALs older than the log number, MANIFESTs older than the current one, stray temp files,
     * and tables no live Version names (closing their readers). Runs on whichever thread dropped
     * the last reference of a Version, or after a flush or compaction.
     */
    void deleteObsoleteFiles() {
        // After a background error a failed MANIFEST write may still have reached the disk, naming
        // tables no live Version names: nothing is deleted until the next open reads the MANIFEST
        // (LevelDB's rule). The error is set before a failed edit's outputs leave pendingOutputs.
        if (!obsoleteDeletionEnabled || backgroundError != null) {
            return;
        }
        synchronized (obsoleteLock) {
            // Order matters. A table's number enters pendingOutputs before its file is created or
            // opened, and leaves only once a live Version names it. So: first list the files and the
            // open readers, then read pendingOutputs, then the live files; whatever the listing saw
            // is then either pending or live, unless it is really obsolete.
            List<Long> openTables = tableCache.openNumbers();
            List<Path> entries;
            try {
                entries = fs.list(dir);
            } catch (IOException e) {
                entries = List.of();
            }
            long manifest = versions.manifestNumber();
            Set<Long> keep = new HashSet<>(pendingOutputs);
            keep.addAll(versions.liveFiles());
            long logNumber = versions.logNumber();
            for (Long n : openTables) {
                if (!keep.contains(n)) {
                    tableCache.evict(n);
                    if (blockCache != null) {
                        blockCache.evictFile(n);
                    }
                }
            }
            for (Path p : entries) {
                FileNames.Parsed parsed = FileNames.parse(p.getFileName().toString());
                if (parsed == null) {
                    continue;
                }
                boolean delete;
                switch (parsed.kind()) {
                    case LOG:
                        delete = parsed.number() < logNumber;
                        break;
                    case TABLE:
                        delete = !keep.contains(parsed.number());
                        break;
                    case MANIFEST:
                    case TEMP:
                        delete = parsed.number() < manifest;
                        break;
                    default:
                        delete = false;
                }
                if (delete) {
                    try {
                        fs.delete(p);
                    } catch (IOException e) {
                        // Left for the next pass; an obsolete file is harmless.
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ stats, accessors

    /** The counters and the shape of the database now. */
    public Stats stats() {
        checkOpen();
        Stats s = new Stats();
        ReadCounters c = readCounters;
        s.filterChecks = c.filterChecks.sum();
        s.filterUseful = c.filterUseful.sum();
        s.filterPositive = c.filterPositive.sum();
        s.filterTruePositive = c.filterTruePositive.sum();
        s.tablesReadWithoutFilter = c.tablesReadWithoutFilter.sum();
        s.blockReads = c.blockReads.sum();
        s.blockReadBytes = c.blockReadBytes.sum();
        s.dataBlockAccesses = c.dataBlockAccesses.sum();
        s.blockCacheHits = c.blockCacheHits.sum();
        s.blockCacheMisses = c.blockCacheMisses.sum();
        s.gets = gets.sum();
        s.hits = hits.sum();
        s.misses = misses.sum();
        s.memtableHits = memtableHits.sum();
        s.puts = puts.sum();
        s.deletes = deletes.sum();
        s.writeBatches = writeBatches.sum();
        s.userBytesWritten = userBytes.sum();
        s.walRecords = walRecords.sum();
        s.walSyncs = walSyncs.sum();
        s.walTailsDropped = walTailsDropped;
        s.flushes = flushes.sum();
        s.flushBytesWritten = flushBytes.sum();
        s.compactions = compactions.sum();
        s.compactionBytesRead = compactionBytesRead.sum();
        s.compactionBytesWritten = compactionBytesWritten.sum();
        s.writeStalls = writeStalls.sum();
        s.writeStallMicros = writeStallNanos.sum() / 1000;
        s.writeSlowdowns = writeSlowdowns.sum();
        s.lastSequence = versions.lastSequence();
        s.liveVersions = versions.liveVersionCount();
        s.openIterators = openIterators.size();
        s.openSnapshots = snapshots.size();
        s.tablesOpened = tableCache.openedCount();
        s.tablesClosed = tableCache.evictedCount();
        SuperVersion sv = acquireSuperVersion();
        try {
            long memBytes = sv.mem.approximateMemoryUsage();
            for (MemTable m : sv.imms) {
                memBytes += m.approximateMemoryUsage();
            }
            s.memtableBytes = memBytes;
            s.immutableMemtables = sv.imms.size();
            Version v = sv.version;
            int n = v.numLevels();
            s.levelTables = new int[n];
            s.levelBytes = new long[n];
            s.levelEntries = new long[n];
            s.levelFilterMemory = new long[n];
            long filterMemory = 0;
            for (int level = 0; level < n; level++) {
                s.levelTables[level] = v.numFiles(level);
                s.levelBytes[level] = v.levelBytes(level);
                s.levelEntries[level] = v.levelEntries(level);
                s.levelFilterMemory[level] = v.levelFilterMemory(level);
                filterMemory += s.levelFilterMemory[level];
            }
            s.filterMemoryBytes = filterMemory;
        } finally {
            sv.release();
        }
        return s;
    }

    /** The live tables, level by level (level 0 newest first, deeper levels by key). */
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
                    boolean filter = r.hasFilter();
                    out.add(new TableInfo(level, f.number(), FileNames.tableFile(dir, f.number()), f.fileSize(), f.entries(),
                            f.smallestUserKey().clone(), f.largestUserKey().clone(), f.smallestSequence(), f.largestSequence(),
                            filter ? r.filterKind() : null, filter ? r.filterHashCount() : 0, filter ? r.filterBitSize() : 0,
                            filter ? r.filterKeyCount() : 0, r.filterMemoryBytes(), filter ? r.filterExpectedFpp() : 1.0));
                }
            }
            return out;
        } finally {
            v.release();
        }
    }

    /** The database directory (absolute). */
    public Path directory() {
        return dir;
    }

    /** A copy of the options the database was opened with. */
    public Options options() {
        return options.copy();
    }

    Options opts() {
        return options;
    }

    VersionSet versions() {
        return versions;
    }

    TableCache tableCache() {
        return tableCache;
    }

    FileSystem fileSystem() {
        return fs;
    }

    ReentrantLock mutex() {
        return mutex;
    }

    boolean isShuttingDown() {
        return shuttingDown || closed;
    }

    /** Waits until no memtable waits for a flush and the compactor is idle; for tests and benchmarks. */
    public void waitForBackgroundWork() {
        checkOpen();
        mutex.lock();
        try {
            while (!imms.isEmpty() && backgroundError == null && !shuttingDown) {
                backgroundChanged.awaitUninterruptibly();
            }
        } finally {
            mutex.unlock();
        }
        if (compactor != null) {
            compactor.waitIdle();
        }
        if (backgroundError != null) {
            throw backgroundError;
        }
    }

    /**
     * Compacts every table overlapping [{@code from}, {@code to}] (a null bound is open) down the
     * levels, after flushing the memtable: overwritten values and unneeded tombstones in the range are dropped.
     */
    public void compactRange(byte[] from, byte[] to) {
        checkOpen();
        if (from != null) {
            WriteBatch.checkKey(from);
        }
        if (to != null) {
            WriteBatch.checkKey(to);
        }
        if (from != null && to != null && java.util.Arrays.compareUnsigned(from, to) > 0) {
            throw new InvalidArgumentException("compactRange: from > to");
        }
        flush();
        compactor.compactRange(from, to);
    }

    private void checkOpen() {
        if (closed) {
            throw new DbClosedException("database is closed");
        }
    }

    // ------------------------------------------------------------------ close

    /**
     * Stops the background threads (an ongoing flush or compaction finishes or is abandoned),
     * closes iterators left open, the WAL and MANIFEST, releases every table's off-heap filter and
     * the directory lock. Acknowledged writes are in the WAL; the next open replays them. Idempotent.
     */
    @Override
    public void close() {
        mutex.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            shuttingDown = true;
            backgroundChanged.signalAll();
            while (!writers.isEmpty()) {
                Writer head = writers.peekFirst();
                head.turn.signal();
                backgroundChanged.awaitNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            mutex.unlock();
        }
        if (compactor != null) {
            compactor.shutdown();
        }
        Threads.joinUninterruptibly(flushThread);
        IOException failure = null;
        for (DbIterator it : new ArrayList<>(openIterators)) {
            it.closeInternal(true);
        }
        openIterators.clear();
        mutex.lock();
        try {
            if (log != null) {
                log.close();
            }
        } catch (IOException e) {
            failure = e;
        } finally {
            mutex.unlock();
        }
        obsoleteDeletionEnabled = false;
        SuperVersion sv = superVersion;
        superVersion = null;
        if (sv != null) {
            sv.release();
        }
        try {
            versions.close();
        } catch (IOException e) {
            if (failure == null) {
                failure = e;
            }
        }
        tableCache.close();
        if (blockCache != null) {
            blockCache.clear();
        }
        try {
            dirLock.close();
        } catch (IOException e) {
            if (failure == null) {
                failure = e;
            }
        }
        if (failure != null) {
            throw new BloomKvIOException("error closing database " + dir, failure);
        }
    }

    /** A handler that adds each operation of a batch to {@code target} under its sequence number. */
    private static WriteBatch.Handler inserterInto(MemTable target) {
        return new WriteBatch.Handler() {
            @Override
            public void put(long sequence, byte[] key, byte[] value) {
                target.add(sequence, ValueType.PUT, key, value);
            }

            @Override
            public void delete(long sequence, byte[] key) {
                target.add(sequence, ValueType.DELETE, key, null);
            }
        };
    }

    @Override
    public String toString() {
        return "Db{" + dir + (closed ? ", closed" : "") + "}";
    }
}
