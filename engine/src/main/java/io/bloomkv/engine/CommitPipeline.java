package io.bloomkv.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.record.LogWriter;
import io.bloomkv.engine.internal.util.ByteWriter;
import io.bloomkv.engine.internal.version.FileNames;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * The write path (LevelDB's DBImpl::Write, Pebble's commit pipeline): writers queue under the
 * database mutex; the writer at the head (the leader) makes room in the memtable, forms a group
 * from the writers behind it (one only under {@link SyncMode#EVERY_WRITE}), appends one WAL record
 * for the group outside the mutex, syncs it as the sync mode says, applies it to the memtable,
 * publishes the new last sequence and wakes the group. Making room may stall (too many level-0
 * tables or immutable memtables) or freeze the memtable into a new WAL. Under {@link Options#disableWal} the group
 * goes to the memtable only (the WAL files stay empty) and a WAL sync does nothing.
 */
final class CommitPipeline {
    /** Largest write group a GROUP_COMMIT or NONE leader forms from queued writers. */
    static final int MAX_GROUP_BYTES = 1 << 20;

    private final DbState state;
    private final VersionSet versions;
    private final Options options;
    private final FileSystem fs;
    private final Path dir;
    private final DbCounters counters;
    private final WriteBufferCharge writeBufferCharge;
    /** Guarded by the state's mutex. */
    private final ArrayDeque<Writer> writers = new ArrayDeque<>();
    /**
     * The leader's group, reused (one allocation fewer per write): only the leader, the head of {@link #writers},
     * uses it, from its start to the end of its finally block, mutex held at both ends; the next leader starts only
     * after this one left the queue under the mutex. Emptied after each use, so it holds no batch between writes.
     */
    private final ArrayList<Writer> group = new ArrayList<>();
    /**
     * Bytes up to which the leader encodes a WAL record into {@link #walScratch}; a larger record gets a buffer of its
     * own, so the scratch never holds more than this between writes.
     */
    static final int WAL_SCRATCH_MAX = 256 << 10;
    /**
     * The leader's buffer for the WAL record of a group or of a single put (a write that is not one batch alone), reused:
     * owned by the leader as {@link #group} is, and holding nothing a later write reads.
     */
    private final ByteWriter walScratch = new ByteWriter(4096);
    /** Leader writes between calls of makeRoomForWrite by {@link #leadWrite} when it had room (a power of two). */
    static final int ROOM_CALL_PERIOD = 1024;
    /** Guarded by the state's mutex: writes led since the count started (wraps; only its low bits are read). */
    private int ledWrites;
    /** Guarded by the state's mutex: writes are stopped (last told to the listeners). */
    private boolean stalled;

    private Events events = new Events(List.of(), Path.of("."));
    /** The oldest sequence a reader may still need ({@code Db.smallestSnapshot}); called with the mutex held. */
    private java.util.function.LongSupplier smallestSnapshot = () -> 0;

    /** Where a memtable rewrite learns which entries every reader is past ({@link #rewriteMemTable}). */
    void smallestSnapshot(java.util.function.LongSupplier s) {
        this.smallestSnapshot = s;
    }

    /** Where write-stall events go (none by default). */
    void events(Events e) {
        this.events = e;
    }

    /** Mutex held. Tells the listeners (asynchronously) when writes stop or resume. */
    private void stallChanged(boolean now) {
        if (stalled != now) {
            stalled = now;
            int l0 = versions.current().numFiles(0);
            int imms = state.imms.size();
            events.post(l -> l.onWriteStallChanged(new EventListener.WriteStallInfo(dir, now, l0, imms)));
        }
    }

    /**
     * A queued write: its batch, or the key and value of a single put ({@link #put}: no batch is built for it), or
     * neither (make room only, or sync the WAL); once done, its outcome.
     */
    private static final class Writer {
        final WriteBatch batch;
        /** A single put's key and value (the caller's arrays, read only while the write runs), or null. */
        final byte[] putKey;

        final byte[] putValue;
        final boolean forceSwitch;
        /**
         * Made when the writer first waits (mutex held): a writer that finds the queue empty never waits, and needs
         * none. A writer in the queue holds the mutex from its enqueueing to its first wait, so whoever signals it
         * (mutex held) finds it either waiting on this condition or not waiting at all.
         */
        private Condition turn;

        boolean done;
        RuntimeException error;

        Writer(WriteBatch batch, boolean forceSwitch) {
            this.batch = batch;
            this.putKey = null;
            this.putValue = null;
            this.forceSwitch = forceSwitch;
        }

        /** A single put. */
        Writer(byte[] key, byte[] value) {
            this.batch = null;
            this.putKey = key;
            this.putValue = value;
            this.forceSwitch = false;
        }

        /** True for a write (a batch or a single put), false for a memtable switch or a WAL sync. */
        boolean writes() {
            return batch != null || putKey != null;
        }

        /** Operations written (sequence numbers taken). */
        int count() {
            return batch != null ? batch.count() : 1;
        }

        /** Most bytes its operations take in a WAL record, without the record's batch header. */
        int operationBytes() {
            return batch != null
                    ? batch.approximateSize() - WriteBatch.HEADER_SIZE
                    : WriteBatch.putOpMaxSize(putKey, putValue);
        }

        /** Mutex held: waits for a signal (releasing the mutex meanwhile). */
        void await(DbState state) {
            if (turn == null) {
                turn = state.newCondition();
            }
            turn.awaitUninterruptibly();
        }

        /** Mutex held: wakes the writer if it waits. */
        void signal() {
            if (turn != null) {
                turn.signal();
            }
        }
    }

    CommitPipeline(
            DbState state,
            VersionSet versions,
            Options options,
            FileSystem fs,
            Path dir,
            DbCounters counters,
            WriteBufferCharge writeBufferCharge) {
        this.writeBufferCharge = writeBufferCharge;
        this.state = state;
        this.versions = versions;
        this.options = options;
        this.fs = fs;
        this.dir = dir;
        this.counters = counters;
    }

    /** Appends {@code batch} (not empty) to the WAL and the memtable, after the writes queued before it. */
    void write(WriteBatch batch) {
        commit(new Writer(batch, false));
    }

    /**
     * Appends a put of {@code key} to {@code value} (both checked) as {@link #write} appends a batch of that one put,
     * building no batch: the leader encodes it straight into the group's WAL record and copies the value from the
     * caller's array into the memtable. The arrays are read until this returns and not kept.
     */
    void put(byte[] key, byte[] value) {
        commit(new Writer(key, value));
    }

    /** Freezes the memtable unless it is empty, after the writes queued before; returns it or null. */
    MemTable freezeMemTable() {
        return runControl(new Writer(null, true));
    }

    /**
     * Mutex held, the database shutting down. Wakes queued writers until the queue is empty: each
     * finds the database closing and leaves with a {@link DbClosedException}.
     */
    void drainOnClose() throws InterruptedException {
        state.assertHeld();
        while (!writers.isEmpty()) {
            writers.peekFirst().signal();
            state.awaitChangeNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /**
     * Fsyncs the WALs after the writes queued before: the older ones not synced at their memtable's switch
     * ({@link SyncMode#NONE}), then the current one; every write that returned is then durable.
     */
    void syncWal() {
        runControl(new Writer(null, false));
    }

    /**
     * Runs {@code body} at the head of the write queue, with the mutex held on entry and exit (it may release it
     * while it waits or does I/O): writes queued after it wait until it returns, and it starts only after the writes
     * queued before it are done (RocksDB's ingestion enters the write thread the same way). A leader never takes an
     * exclusive entry into its group ({@link #leadWrite} stops its group at an entry without a batch). Used by
     * {@link Db#ingest}, so that no write takes a sequence number or enters a memtable meanwhile.
     *
     * @throws DbClosedException if the database is closing, or the background error if one is set
     */
    <T> T exclusive(java.util.function.Supplier<T> body) {
        return exclusive(body, true);
    }

    /**
     * {@link #exclusive} for {@link Db#resume}, which runs while the background error is set.
     *
     * @throws DbClosedException if the database is closing
     */
    <T> T exclusiveDespiteError(java.util.function.Supplier<T> body) {
        return exclusive(body, false);
    }

    private <T> T exclusive(java.util.function.Supplier<T> body, boolean failIfFailed) {
        Writer w = new Writer(null, false);
        state.lock();
        try {
            writers.addLast(w);
            while (writers.peekFirst() != w) {
                w.await(state);
            }
            try {
                if (failIfFailed) {
                    state.throwIfClosingOrFailed("database is closed");
                } else if (state.shuttingDown) {
                    throw new DbClosedException("database is closed");
                }
                return body.get();
            } finally {
                if (!state.heldByCurrentThread()) {
                    state.lock();
                }
                if (writers.pollFirst() != w) {
                    throw new IllegalStateException("write queue out of order");
                }
                Writer next = writers.peekFirst();
                if (next != null) {
                    next.signal();
                }
            }
        } finally {
            state.unlock();
        }
    }

    /**
     * Inside {@link #exclusive}, mutex held: freezes the memtable unless it is empty (waiting while too many
     * memtables wait for flush), as a forced memtable switch does.
     */
    MemTable freezeMemTableHeld() {
        return makeRoomForWrite(true);
    }

    /**
     * A write (a batch or a single put): queues {@code w}, waits until it is done by a leader or leads a group itself.
     * Kept apart from {@link #runControl} and small (the rare branches are methods of their own) so that the JIT
     * compiles the write path early, and its profile never sees a memtable switch or a WAL sync.
     */
    private void commit(Writer w) {
        state.lock();
        try {
            if (!awaitTurn(w)) {
                return;
            }
            RuntimeException error = null;
            try {
                leadWrite(w);
            } catch (RuntimeException e) {
                error = e;
                throw e;
            } finally {
                releaseGroup(w, error);
            }
        } finally {
            state.unlock();
        }
    }

    /** A memtable switch ({@code w.forceSwitch}) or a WAL sync (neither): queued as a write is, never in a group. */
    private MemTable runControl(Writer w) {
        state.lock();
        try {
            if (!awaitTurn(w)) {
                return null;
            }
            RuntimeException error = null;
            try {
                return w.forceSwitch ? makeRoomForWrite(true) : syncWalHeld();
            } catch (RuntimeException e) {
                error = e;
                throw e;
            } finally {
                releaseGroup(w, error);
            }
        } finally {
            state.unlock();
        }
    }

    /**
     * Mutex held. Queues {@code w} and waits until it is the head of the queue (returns true: it leads, its group
     * holds it alone) or a leader has done it (returns false, or throws the error that leader met).
     */
    private boolean awaitTurn(Writer w) {
        writers.addLast(w);
        while (!w.done && writers.peekFirst() != w) {
            w.await(state);
        }
        if (w.done) {
            if (w.error != null) {
                throw w.error;
            }
            return false;
        }
        group.clear(); // empty unless a leader before threw out of its finally block
        group.add(w);
        return true;
    }

    /**
     * Leader, mutex held on entry and exit (released for the WAL append and the memtable insert). Makes room, forms
     * the group (the writers queued behind the leader, up to {@link #MAX_GROUP_BYTES}: a leader of up to 128 KiB takes
     * up to 128 KiB more), writes it and publishes its last sequence.
     *
     * <p>One method, with the group's forming in it, and so larger than C2 inlines into a hot caller (325 bytes of
     * bytecode, {@code FreqInlineSize}), as {@code Db.getStored} is for reads: the write path is compiled once, on its
     * own, not into every compile of the application's code around {@code put} (where it filled a loop's compile up to
     * C2's budget: bench/RESULTS.md, "thirteenth session"). CompileBoundaryTest keeps it above that size.
     */
    private void leadWrite(Writer w) {
        // One branch, taken when the write needs room and also every ROOM_CALL_PERIOD-th write with room (then
        // makeRoomForWrite returns at its first check). A branch taken only when the memtable is full would be one the
        // first memtable never takes: C2 would compile this method without the call and throw the compiled write
        // path away at the first memtable switch, to run it in lower tiers until it is compiled again.
        int periodic = (((++ledWrites) & (ROOM_CALL_PERIOD - 1)) - 1) >>> 31; // 1 every period, else 0
        if ((roomNeeded() | periodic) != 0) {
            makeRoomForWrite(false);
        }
        int operationBytes = w.operationBytes();
        if (options.syncMode() != SyncMode.EVERY_WRITE && writers.size() > 1) {
            int max = operationBytes <= (128 << 10) ? operationBytes + (128 << 10) : MAX_GROUP_BYTES;
            boolean first = true;
            for (Writer next : writers) {
                if (first) {
                    first = false; // the leader, in the group already
                    continue;
                }
                if (!next.writes() || next.forceSwitch) {
                    break;
                }
                long grown = (long) operationBytes + next.operationBytes();
                if (grown > max) {
                    break;
                }
                operationBytes = (int) grown;
                group.add(next);
            }
        }
        int count = 0;
        for (int i = 0; i < group.size(); i++) {
            count += group.get(i).count();
        }
        long first = versions.lastSequence() + 1;
        long last = first + count - 1;
        MemTable target = state.mem;
        LogWriter wal = state.log;
        long walNumber = state.logFileNumber;
        state.unlock();
        try {
            if (!options.disableWal()) {
                appendToWal(wal, walNumber, group, operationBytes, count, first);
            }
            insert(target, group, first);
        } finally {
            state.lock();
        }
        versions.setLastSequence(last);
    }

    /**
     * Leader, mutex held on entry and exit, also when it throws. Takes the group's writers off the queue, tells the
     * others they are done (with {@code error} if the leader failed) and wakes the next head.
     */
    private void releaseGroup(Writer w, RuntimeException error) {
        int members = group.size();
        for (int i = 0; i < members; i++) {
            Writer done = group.get(i);
            Writer head = writers.pollFirst();
            if (head != done) {
                throw new IllegalStateException("write queue out of order");
            }
            if (done != w) {
                done.done = true;
                done.error = error;
                done.signal();
            }
        }
        group.clear();
        Writer next = writers.peekFirst();
        if (next != null) {
            next.signal();
        }
    }

    /** Leader of a WAL sync, mutex held on entry and exit (released during the fsync). Returns null. */
    private MemTable syncWalHeld() {
        if (options.disableWal()) {
            return null; // no log: nothing to make durable but a flush (Options.disableWal)
        }
        if (state.shuttingDown) {
            throw new DbClosedException("database is closed"); // its log is being closed: nothing to sync
        }
        LogWriter wal = state.log;
        long walNumber = state.logFileNumber;
        // The older WALs not synced at their switch (SyncMode.NONE) first, oldest first: taken out of unsyncedLogs,
        // they are this sync's to sync and close (a flush of their memtable meanwhile finds them gone).
        java.util.Map<Long, LogWriter> older = new java.util.TreeMap<>(state.unsyncedLogs);
        state.unsyncedLogs.clear();
        state.unlock();
        long syncing = walNumber;
        IOException failed = null;
        // A current WAL that failed earlier cannot be synced; its failure is the background error already (resume()
        // replaces the WAL), so it is thrown as is below: recorded as a new failure, it would be reported to the
        // listeners again and, while a resume runs ahead of its WAL switch, become the failure of that resume.
        boolean failedEarlier = wal.failed();
        try {
            for (var e : older.entrySet()) {
                syncing = e.getKey();
                e.getValue().sync();
                counters.walSyncs.increment();
            }
            syncing = walNumber;
            if (!failedEarlier) {
                wal.sync();
                counters.walSyncs.increment();
            }
        } catch (IOException e) {
            failed = e;
        } finally {
            closeLogs(older.values());
            state.lock();
        }
        if (failed != null) {
            if (state.shuttingDown) {
                // A close that began during the sync closed the log under it: the database is closed, not broken.
                throw new DbClosedException("database closed during syncWal");
            }
            BloomKvIOException err =
                    new BloomKvIOException("WAL sync failed (" + FileNames.logFile(dir, syncing) + ")", failed);
            state.setBackgroundError("WAL sync", err);
            events.writesStopped("WAL sync", err);
            throw err;
        }
        if (failedEarlier) {
            BloomKvException error = state.backgroundError();
            throw error != null
                    ? error
                    : new BloomKvIOException(
                            "WAL " + FileNames.logFile(dir, walNumber) + " failed earlier",
                            new IOException("log writer failed earlier"));
        }
        return null;
    }

    /** Closes logs that are no longer written; a failure is logged (the log's records are in it). */
    static void closeLogs(java.util.Collection<LogWriter> logs) {
        for (LogWriter l : logs) {
            try {
                l.close();
            } catch (IOException e) {
                DbLog.LOG.warn("closing WAL {} failed", l.path(), e);
            }
        }
    }

    /**
     * Mutex not held (only the leader writes the WAL). Appends one record holding the group's operations, numbered from
     * {@code firstSequence}: a batch alone is its own record; otherwise the operations are encoded once into the
     * leader's scratch (or, past {@link #WAL_SCRATCH_MAX}, a buffer of the record's size), with no batch merged on the
     * heap. The record is the serialized batch of engine/FORMAT.md, as recovery decodes it. A failure becomes the
     * background error.
     */
    private void appendToWal(
            LogWriter wal, long walNumber, List<Writer> group, int operationBytes, int count, long firstSequence) {
        try {
            long walStart = wal.size();
            Writer leader = group.get(0);
            if (group.size() == 1 && leader.batch != null) {
                byte[] rec = leader.batch.contents(firstSequence);
                wal.addRecord(rec, 0, leader.batch.approximateSize());
            } else {
                int bound = WriteBatch.HEADER_SIZE + operationBytes;
                ByteWriter out = bound <= WAL_SCRATCH_MAX ? walScratch : new ByteWriter(bound);
                out.truncate(0);
                out.ensure(bound);
                out.putFixed64(firstSequence);
                out.putFixed32(count);
                for (int i = 0; i < group.size(); i++) {
                    Writer m = group.get(i);
                    if (m.batch != null) {
                        m.batch.appendOperationsTo(out);
                    } else {
                        WriteBatch.encodePut(out, m.putKey, m.putValue);
                    }
                }
                wal.addRecord(out.array(), 0, out.size());
            }
            counters.walRecords.increment();
            counters.walBytes.add(wal.size() - walStart);
            try {
                if (options.syncMode() == SyncMode.NONE) {
                    if (!options.manualWalFlush()) {
                        wal.flush();
                    }
                } else {
                    wal.sync();
                    counters.walSyncs.increment();
                }
            } catch (IOException e) {
                // Every group before this one was flushed or synced at its own append, so what the file still buffers
                // is this group's record, which fails: written out when the WAL is closed (by resume() or close), a
                // reopen would replay it.
                wal.discardUnflushed();
                throw e;
            }
        } catch (IOException e) {
            BloomKvIOException err =
                    new BloomKvIOException("WAL append failed (" + FileNames.logFile(dir, walNumber) + ")", e);
            state.setBackgroundError("WAL append", err);
            events.writesStopped("WAL append", err);
            throw err;
        }
    }

    /**
     * Mutex not held, after the WAL append. Adds the group's operations to {@code target} in order, numbered from
     * {@code firstSequence}; a single put's value is copied from the caller's array into the arena.
     */
    private static void insert(MemTable target, List<Writer> group, long firstSequence) {
        long seq = firstSequence;
        WriteBatch.Handler inserter = null;
        for (int i = 0; i < group.size(); i++) {
            Writer m = group.get(i);
            if (m.batch != null) {
                if (inserter == null) {
                    inserter = MemTableInserter.into(target);
                }
                m.batch.forEachLendingKeys(seq, inserter); // the memtable copies each key it adds
                seq += m.batch.count();
            } else {
                target.add(seq, ValueType.PUT, m.putKey, m.putValue, 0, m.putValue.length);
                seq++;
            }
        }
    }

    /**
     * Leader, mutex held. 0 when a write may go ahead at once: the database is open and healthy, level 0 is below
     * the slowdown trigger, the memtable has room (and no {@link MemTable#rewriteWanted rewrite}) and writes were not
     * stalled. Exactly the case in which
     * {@link #makeRoomForWrite makeRoomForWrite(false)} would return at its first check without waiting or acting;
     * otherwise 1, and the leader calls it. The memtable's fill, the one condition every load meets, is computed without
     * a branch (see leadWrite); the others stay branches (a stall, an error, a write buffer manager's freeze).
     */
    private int roomNeeded() {
        if (stalled || state.shuttingDown || state.backgroundError() != null) {
            return 1;
        }
        if (options.autoCompaction() && versions.current().numFiles(0) >= options.l0SlowdownWritesTrigger()) {
            return 1;
        }
        MemTable mem = state.mem;
        long spare = options.writeBufferSize() - mem.approximateMemoryUsage(); // > 0 while the memtable has room
        int full = (int) ((spare - 1) >>> 63); // 1 when spare <= 0 (both far from overflow)
        return full | (writeBufferCharge.mustFreeze(mem) ? 1 : 0) | (mem.rewriteWanted() ? 1 : 0);
    }

    /**
     * Leader only, mutex held. Waits while the write must stall; freezes the memtable when it is
     * full (or when {@code force} and it is not empty). Returns the frozen memtable or null.
     */
    private MemTable makeRoomForWrite(boolean force) {
        state.assertHeld();
        try {
            return makeRoomOrStall(force);
        } catch (RuntimeException | Error e) {
            // The stall ends with the wait, whatever ends it: a background error, close, or the failure of what the
            // leader did next. Writes stay stalled only while a leader waits here, so the listeners always get the
            // resumed event of each stalled one (RocksDB tells of the condition's change, not of the next write's).
            stallChanged(false);
            throw e;
        }
    }

    /** {@link #makeRoomForWrite}, which ends a stall this leaves on when it throws. */
    private MemTable makeRoomOrStall(boolean force) {
        boolean allowDelay = !force;
        while (true) {
            state.throwIfClosingOrFailed("database is closed");
            if (!force && state.mem.rewriteWanted()) {
                rewriteMemTable(); // (a frozen memtable is not rewritten: its flush drops the same entries)
                continue;
            }
            int l0 = versions.current().numFiles(0);
            if (allowDelay && options.autoCompaction() && l0 >= options.l0SlowdownWritesTrigger()) {
                allowDelay = false;
                counters.writeSlowdowns.increment();
                long t0 = System.nanoTime();
                state.unlock();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    state.lock();
                }
                counters.writeStallNanos.add(System.nanoTime() - t0);
                continue;
            }
            if (!force
                    && state.mem.approximateMemoryUsage() < options.writeBufferSize()
                    && !writeBufferCharge.mustFreeze(state.mem)) {
                stallChanged(false);
                return null;
            }
            if (force && state.mem.isEmpty()) {
                stallChanged(false);
                return null;
            }
            if (state.imms.size() >= options.maxImmutableMemtables()
                    || (options.autoCompaction() && l0 >= options.l0StopWritesTrigger())) {
                counters.writeStalls.increment();
                stallChanged(true);
                long t0 = System.nanoTime();
                state.awaitChange();
                counters.writeStallNanos.add(System.nanoTime() - t0);
                continue;
            }
            stallChanged(false);
            return switchMemTable();
        }
    }

    /**
     * Leader, mutex held on entry and exit (released while the copy is made: the leader is the head of the write queue,
     * so nothing else adds to the memtable or replaces it meanwhile). Replaces the memtable with its copy without the
     * entries its range tombstones hide from every reader ({@link MemTable#withoutHidden}), as RocksDB's segmented
     * stores lose an expired segment's memtable with its instance: a database that drops whole key ranges (Kafka
     * Streams' expired window segments) does not keep their dead entries on the heap until the memtable fills. Nothing
     * is written: the WAL keeps every entry and replays to a memtable that reads the same; readers that hold the old
     * memtable keep reading it.
     */
    private void rewriteMemTable() {
        MemTable old = state.mem;
        long snapshot = smallestSnapshot.getAsLong();
        state.unlock();
        MemTable fresh;
        try {
            fresh = old.withoutHidden(snapshot);
        } finally {
            state.lock();
        }
        state.mem = fresh;
        writeBufferCharge.mustFreeze(fresh); // the shared budget charged the smaller memtable
        counters.memtableRewrites.increment();
        counters.memtableRewriteBytesFreed.add(
                Math.max(0, old.approximateMemoryUsage() - fresh.approximateMemoryUsage()));
        state.installSuperVersion();
    }

    /**
     * Creates the write-ahead log {@code p}: written through a memory mapping ({@link Options#useMmapWal}) where the
     * file system supports it and there is a log to write, else with a {@code write(2)} per flush.
     */
    static LogWriter newLog(FileSystem fs, Path p, Options options) throws IOException {
        boolean mapped = options.useMmapWal() && !options.disableWal() && fs.supportsMappedWrites();
        return new LogWriter(mapped ? fs.newMappedWritableFile(p) : fs.newWritableFile(p));
    }

    /** The new WAL {@code number}; a failure to create it changes nothing and is thrown, not recorded. */
    private LogWriter createLog(long number) {
        try {
            return newLog(fs, FileNames.logFile(dir, number), options);
        } catch (IOException e) {
            throw new BloomKvIOException("cannot create WAL " + FileNames.logFile(dir, number), e);
        }
    }

    /** Mutex held. Starts a new WAL and memtable; the old memtable joins the immutables. */
    private MemTable switchMemTable() {
        state.assertHeld();
        long number = versions.newFileNumber();
        LogWriter next = createLog(number);
        try {
            // A crash must lose at most a suffix of the writes: no write of the new WAL may survive while one of the
            // old WAL is lost. Under the syncing modes the old WAL is synced already, and synced again here (little
            // or nothing left to write). Under NONE it is not synced, as RocksDB does not: the writers would wait for
            // the whole memtable's log to reach the device. The new WAL starts with a log-start record naming the old
            // one and its length instead, and recovery stops before a WAL whose predecessor came back shorter
            // (LogStart). The old WAL stays open until its memtable is flushed or a syncWal() syncs it (unsyncedLogs).
            // Without a WAL the file is empty (it only numbers the memtable) and the flushes, oldest first, keep the
            // prefix.
            if (options.disableWal()) {
                state.log.close();
            } else {
                if (options.syncMode() == SyncMode.NONE) {
                    state.log.flush();
                    state.unsyncedLogs.put(state.logFileNumber, state.log);
                } else {
                    state.log.sync();
                    counters.walSyncs.increment();
                    state.log.close();
                }
                next.addRecord(LogStart.encode(state.logFileNumber, state.log.size()));
                counters.walBytes.add(next.size());
            }
        } catch (IOException e) {
            BloomKvIOException err = new BloomKvIOException(
                    "cannot switch from WAL " + FileNames.logFile(dir, state.logFileNumber) + " to "
                            + FileNames.logFile(dir, number),
                    e);
            state.setBackgroundError("WAL switch", err);
            events.writesStopped("WAL switch", err);
            // The old WAL stays the current one (state.log): not an older unsynced log as well, or a syncWal() would
            // sync and close it as one, and the next would find the current WAL closed.
            state.unsyncedLogs.remove(state.logFileNumber, state.log);
            try {
                next.close();
            } catch (IOException suppressed) {
                err.addSuppressed(suppressed);
            }
            throw err;
        }
        return installNewMemTable(next, number);
    }

    /**
     * Inside {@link #exclusiveDespiteError}, mutex held, for {@link Db#resume}: freezes the memtable (empty or not, and
     * however many memtables wait for flush) into a new WAL, and returns it; the old WAL is closed without a sync and
     * is needed only until the flush of the frozen memtable is recorded. Resume then flushes every memtable, so the
     * WALs that saw the failure (a torn or unsynced record of a group that failed and was not applied, a sync that
     * failed, a switch that failed halfway) are never replayed once it returns: the MANIFEST's log number is then this
     * new WAL's. Not syncing the old WAL loses nothing: under the syncing modes every acknowledged group was synced
     * before it was acknowledged, under {@link SyncMode#NONE} nothing is promised before a sync or a flush, and the
     * flush follows; the new WAL takes no write before that flush is recorded (writes fail with the error until then),
     * so a crash in between replays the old WAL alone (or stops before the new one at its log-start record, losing
     * nothing it holds). A failure to create the new WAL changes nothing and is thrown (not recorded: resume records
     * it).
     */
    MemTable switchForResume() {
        state.assertHeld();
        long number = versions.newFileNumber();
        LogWriter next = createLog(number);
        LogWriter old = state.log;
        if (!options.disableWal()) {
            try {
                // Every WAL started at a switch begins with this record (engine/FORMAT.md, "Log-start record").
                next.addRecord(LogStart.encode(state.logFileNumber, old.size()));
                counters.walBytes.add(next.size());
            } catch (IOException e) {
                BloomKvIOException err = new BloomKvIOException("cannot start WAL " + next.path(), e);
                closeLogs(List.of(next)); // a failure to close is logged; the empty file is deleted as obsolete
                throw err;
            }
        }
        closeLogs(List.of(old)); // a failure to close is logged: the log is abandoned
        return installNewMemTable(next, number);
    }

    /** Mutex held. {@code next} (numbered {@code number}) becomes the WAL of a new memtable; the old one is frozen. */
    private MemTable installNewMemTable(LogWriter next, long number) {
        MemTable frozen = state.mem;
        state.log = next;
        state.logFileNumber = number;
        state.imms.addFirst(frozen);
        writeBufferCharge.frozen(frozen);
        state.mem = new MemTable(
                number, options.writeBufferSize(), options.memtableFilterBitsPerKey(), options.memtablePointIndex());
        state.installSuperVersion();
        state.signalChangeHeld();
        return frozen;
    }
}
