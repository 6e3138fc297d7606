package io.bloomkv.engine;

import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.record.LogWriter;
import io.bloomkv.engine.internal.version.Version;
import io.bloomkv.engine.internal.version.VersionSet;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The state of a {@link Db} guarded by its one mutex (Pebble's {@code d.mu}): the mutable memtable
 * and its WAL, the immutable memtables waiting for flush, the shutdown flag, and the published
 * {@link SuperVersion}. Methods that need the mutex say so and assert it (LevelDB's
 * {@code mutex_.AssertHeld()}); {@link #superVersion}, {@link #closed} and {@link #backgroundError}
 * are also read without it.
 */
final class DbState {
    /**
     * The queue-node classes of {@link java.util.concurrent.locks.AbstractQueuedSynchronizer}, loaded by the first
     * database before its write path runs: see {@link #loadLockNodeClasses}.
     */
    static final int LOCK_NODE_CLASSES = loadLockNodeClasses();

    private final ReentrantLock mutex = new ReentrantLock();
    /** Signalled when a flush or compaction finishes, a memtable is frozen, an error is set, or the database closes. */
    private final Condition backgroundChanged = mutex.newCondition();

    private final VersionSet versions;

    /** Guarded by the mutex. */
    MemTable mem;
    /** Guarded by the mutex; newest first. */
    final ArrayDeque<MemTable> imms = new ArrayDeque<>();
    /** Guarded by the mutex: the WAL of {@link #mem}. */
    LogWriter log;
    /** Guarded by the mutex. */
    long logFileNumber;
    /**
     * Guarded by the mutex: WALs of immutable memtables closed for appends at their switch but not synced
     * ({@link SyncMode#NONE}), by number. Each leaves when its memtable is flushed (closed, no longer needed) or when a
     * WAL sync takes it (synced, then closed); close closes the rest.
     */
    final java.util.TreeMap<Long, LogWriter> unsyncedLogs = new java.util.TreeMap<>();
    /** Guarded by the mutex: set once by close (or a failed open); background threads and writers stop. */
    boolean shuttingDown;
    /** Set together with {@link #shuttingDown}; readable without the mutex. */
    volatile boolean closed;

    /**
     * Guarded by the mutex: {@link Db#pauseBackgroundWork} calls not yet matched by a continue, counted once each
     * pause has waited for the running flush (RocksDB's {@code bg_work_paused_}). While above 0 the flusher picks no
     * memtable, unless {@link #pauseLiftedForClose}.
     */
    int backgroundWorkPaused;

    /**
     * Guarded by the mutex: a close under {@link Options#disableWal} flushes its memtables (they are in no log) and so
     * lifts the pause for good: the flusher (and the compactor, which a stall of that flush may wait for) run again.
     */
    boolean pauseLiftedForClose;

    /** Guarded by the mutex: the flusher took a memtable and writes it (a pause waits for this to end). */
    boolean flushing;

    /**
     * Guarded by the mutex: new snapshots wait until the ingestion is done. Set when it adds tables at sequence 0
     * because no snapshot was open (a snapshot taken meanwhile would otherwise see the ingested keys), or from when it
     * publishes its new sequence number to its install (a snapshot taken at that sequence meanwhile would read the
     * tree without the ingested tables, then with them).
     */
    boolean ingestHoldsSnapshots;

    /**
     * Guarded by the mutex: {@link FileRangeDeleter} chose the tables to remove by the open snapshots; new snapshots
     * wait until its edit is installed (one taken meanwhile would read the tables, then lose them).
     */
    boolean deletingFiles;

    /**
     * Guarded by the mutex: a compaction whose filter changed entries checked that no snapshot reads them; new
     * snapshots wait until its Version is installed (one taken meanwhile would read the entries, then lose them).
     */
    boolean compactionHoldsSnapshots;

    private volatile SuperVersion superVersion;
    private volatile BloomKvException backgroundError;
    /**
     * Background errors recorded since open (RocksDB's {@code rocksdb.background-errors}): each new one counts, a
     * resume does not reset it. Written under the mutex, read without it ({@link Db#stats}).
     */
    private volatile long backgroundErrorCount;
    /** Guarded by the mutex: what failed with {@link #backgroundError} (BackgroundErrorInfo's operation), or null. */
    private String backgroundErrorOperation;

    /**
     * Guarded by the mutex: {@link Db#resume} runs, the background error still set (writes keep failing with it
     * meanwhile); errors recorded now are its failures.
     */
    private boolean resuming;
    /**
     * Guarded by the mutex: while {@link #resuming}, its WAL switch is done and the flusher takes memtables despite the
     * error ({@link #flushesStopped}).
     */
    private boolean resumeFlushes;
    /** Guarded by the mutex: the first error recorded while {@link #resuming}, and what failed; resume throws it. */
    private BloomKvException resumeFailure;

    private String resumeFailureOperation;
    /**
     * Guarded by the mutex: the errors a {@link Db#resume} cleared or replaced. A job records its error twice when a
     * MANIFEST write failed (at the failure, then after asking the listeners: the compaction thread and compactRange);
     * a resume may run in between, and the second record must not bring back the error it cleared. Weak: an error no
     * thread holds any more cannot be recorded again. (Throwable's equality is identity.)
     */
    private final java.util.Set<BloomKvException> retired =
            java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>());
    /** Point reads' per-thread SuperVersions (RocksDB's thread-local SuperVersion); scraped on every install. */
    private final ThreadLocalRefs<SuperVersion> local =
            new ThreadLocalRefs<>(() -> closed ? null : superVersion, this::acquireSuperVersion, SuperVersion::release);

    /**
     * Loads the JDK's AbstractQueuedSynchronizer queue-node classes (ExclusiveNode, SharedNode, ConditionNode), each
     * loaded lazily by the JDK on the first use of its kind: a lock's first contended acquire, a latch's or read lock's
     * first wait, a condition's first await. Until a second one is loaded, the JIT compiles every method that inlines
     * the lock code (the commit pipeline, {@link #unlock}, a caller's loop around {@code put}) on the assumption that
     * the one loaded is the only one, and loading another later discards all of that compiled code at once: in a fresh
     * JVM the mutex's first contended acquire can come after the write path was compiled (a background thread holding
     * the mutex while a writer arrives), and the write path then runs in lower tiers until it is compiled again. Loaded
     * here, before the first database's writes, the hierarchy is complete before anything that uses it is compiled.
     *
     * <p>The class names are the JDK's private implementation: a JDK without one of them skips it (no error; the
     * database works the same, only the early recompilation may come back).
     *
     * @return how many of the three classes were found
     */
    static int loadLockNodeClasses() {
        String outer = java.util.concurrent.locks.AbstractQueuedSynchronizer.class.getName();
        ClassLoader loader = java.util.concurrent.locks.AbstractQueuedSynchronizer.class.getClassLoader();
        int found = 0;
        for (String inner : new String[] {"ExclusiveNode", "SharedNode", "ConditionNode"}) {
            try {
                Class.forName(outer + "$" + inner, true, loader);
                found++;
            } catch (ClassNotFoundException | LinkageError e) {
                // another JDK's implementation: nothing to load
            }
        }
        return found;
    }

    /**
     * Told of each Version a SuperVersion publishes for the first time (the mutex held: it must be quick and take no
     * engine lock): the database's check for tables read without a filter. Set once, before recovery installs the
     * first SuperVersion.
     */
    private java.util.function.Consumer<Version> versionPublished = v -> {};

    DbState(VersionSet versions) {
        this.versions = versions;
    }

    /** Sets {@link #versionPublished}; before the first {@link #installSuperVersion()}. */
    void onVersionPublished(java.util.function.Consumer<Version> hook) {
        versionPublished = hook;
    }

    void lock() {
        mutex.lock();
    }

    void unlock() {
        mutex.unlock();
    }

    /** Whether the calling thread holds the mutex (tests check that listeners never run under it). */
    boolean heldByCurrentThread() {
        return mutex.isHeldByCurrentThread();
    }

    /** @throws IllegalStateException when the calling thread does not hold the mutex */
    void assertHeld() {
        if (!mutex.isHeldByCurrentThread()) {
            throw new IllegalStateException("the database mutex must be held");
        }
    }

    Condition newCondition() {
        return mutex.newCondition();
    }

    /** Mutex held. Waits for the next background change (or a spurious wake-up). */
    void awaitChange() {
        assertHeld();
        backgroundChanged.awaitUninterruptibly();
    }

    /** Mutex held. Waits at most {@code nanos} for the next background change. */
    void awaitChangeNanos(long nanos) throws InterruptedException {
        assertHeld();
        backgroundChanged.awaitNanos(nanos);
    }

    /** Takes the mutex and wakes every thread waiting for a background change. */
    void signalChange() {
        mutex.lock();
        try {
            backgroundChanged.signalAll();
        } finally {
            mutex.unlock();
        }
    }

    /** Mutex held. Wakes every thread waiting for a background change. */
    void signalChangeHeld() {
        assertHeld();
        backgroundChanged.signalAll();
    }

    /**
     * Mutex held. Waits until no immutable memtable waits for flush, or a background error is set,
     * or the database shuts down.
     */
    void awaitImmutablesFlushed() {
        assertHeld();
        while (!imms.isEmpty() && backgroundError == null && !shuttingDown) {
            backgroundChanged.awaitUninterruptibly();
        }
    }

    /** Mutex held. True while the flusher must take no memtable: paused, and the pause not lifted by close. */
    boolean flushesPaused() {
        assertHeld();
        return backgroundWorkPaused > 0 && !pauseLiftedForClose;
    }

    /**
     * Mutex held. Throws {@link DbClosedException} (with {@code closingMessage}) when the database is
     * shutting down, else the background error if one is set. Closing wins: a write racing close
     * is told the database closed, not what a compaction abandoned by close left behind.
     */
    void throwIfClosingOrFailed(String closingMessage) {
        assertHeld();
        if (shuttingDown) {
            throw new DbClosedException(closingMessage);
        }
        if (backgroundError != null) {
            throw backgroundError;
        }
    }

    /** The first error of a background task or of the write path; writes fail once it is set. */
    BloomKvException backgroundError() {
        return backgroundError;
    }

    /** Background errors recorded since open (no lock taken). */
    long backgroundErrorCount() {
        return backgroundErrorCount;
    }

    /**
     * Records {@code e}, the failure of {@code operation} (as {@link EventListener.BackgroundErrorInfo#operation}
     * names it), unless an error is recorded already, and wakes every waiter. While {@link Db#resume} runs, the first
     * error of its steps (the flushes it waits for) is kept apart as the one it throws ({@link #endResume}).
     */
    void setBackgroundError(String operation, BloomKvException e) {
        mutex.lock();
        try {
            if (e == backgroundError || e == resumeFailure || retired.contains(e)) {
                // recorded already (a failed MANIFEST write, then the job that made it), or cleared by a resume since:
                // not a new failure
            } else if (backgroundError == null) {
                backgroundError = e;
                backgroundErrorOperation = operation;
                backgroundErrorCount++;
            } else if (resuming && resumeFailure == null) {
                resumeFailure = e;
                resumeFailureOperation = operation;
                backgroundErrorCount++;
            }
            backgroundChanged.signalAll();
        } finally {
            mutex.unlock();
        }
    }

    /** Mutex held. {@link Db#resume} gives up (the database closes): the background error stays as it is. */
    void abandonResume() {
        assertHeld();
        resuming = false;
        resumeFlushes = false;
        resumeFailure = null;
        resumeFailureOperation = null;
        backgroundChanged.signalAll();
    }

    /** Mutex held. What failed with the background error (null when none is set). */
    String backgroundErrorOperation() {
        assertHeld();
        return backgroundErrorOperation;
    }

    /**
     * Mutex held. True while the flusher must take no memtable because of the background error: one is set and no
     * {@link Db#resume} is flushing past it (or one is, and a step of it failed).
     */
    boolean flushesStopped() {
        assertHeld();
        return backgroundError != null && (!resumeFlushes || resumeFailure != null);
    }

    /** Mutex held, an error set. {@link Db#resume} begins: errors recorded from now on are its failures. */
    void beginResume() {
        assertHeld();
        resuming = true;
        resumeFailure = null;
        resumeFailureOperation = null;
    }

    /** Mutex held, resuming. The flusher may take memtables despite the error (resume waits for them). */
    void resumeFlushes() {
        assertHeld();
        resumeFlushes = true;
        backgroundChanged.signalAll();
    }

    /** Mutex held, while resuming: the first error of resume's steps, or null. */
    BloomKvException resumeFailure() {
        assertHeld();
        return resumeFailure;
    }

    /**
     * Mutex held. {@link Db#resume} ends: with {@code failure} null and no step failed, the background error is
     * cleared (writes and background work go on); otherwise the step's error (the first recorded, else {@code failure}
     * of {@code operation}) replaces it, so writes fail with what stopped them now. Returns that error, or null.
     */
    BloomKvException endResume(String operation, BloomKvException failure) {
        assertHeld();
        resuming = false;
        resumeFlushes = false;
        if (resumeFailure == null && failure != null) {
            resumeFailure = failure;
            resumeFailureOperation = operation;
        }
        BloomKvException now = resumeFailure;
        retired.add(backgroundError); // a later record of it is no new failure (see retired)
        backgroundError = now;
        backgroundErrorOperation = now == null ? null : resumeFailureOperation;
        resumeFailure = null;
        resumeFailureOperation = null;
        backgroundChanged.signalAll();
        return now;
    }

    /** Mutex held (or single-threaded open). Publishes the current memtables and Version to readers. */
    void installSuperVersion() {
        assertHeld();
        Version v = versions.retainCurrent();
        List<MemTable> list = new ArrayList<>(imms.size());
        for (MemTable m : imms) {
            // A flush installs the Version holding its memtable's table before it drops the memtable from imms (under
            // the mutex, after): a SuperVersion published in between (a memtable switch, a compaction) leaves the
            // memtable out, or its entries would be read twice (a merge operand applied twice).
            if (m.logNumber() >= v.logNumber()) {
                list.add(m);
            }
        }
        SuperVersion next = new SuperVersion(mem, list, v);
        SuperVersion old = superVersion;
        superVersion = next;
        if (old == null || old.version != v) {
            versionPublished.accept(v);
        }
        if (old != null) {
            old.release();
        }
        local.scrape(); // no thread keeps the old one cached (and its memtables and tables alive)
    }

    /** Takes the mutex; republishes the SuperVersion (a new Version was installed) unless closed. */
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

    /** The published SuperVersion, retained for the caller. @throws DbClosedException once closed */
    SuperVersion acquireSuperVersion() {
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

    /** The calling thread's SuperVersion slot, for {@link #acquireLocal} and {@link #releaseLocal}. */
    ThreadLocalRefs.Slot localSlot() {
        return local.slot();
    }

    /**
     * The published SuperVersion for one point read by the calling thread, whose {@link #localSlot} is {@code slot},
     * without touching its shared reference count in the common case ({@link ThreadLocalRefs}). Give it back with
     * {@link #releaseLocal} from the same thread (nested reads on one thread are safe). For reads that hold it longer
     * (iterators) or hand it to another thread, use {@link #acquireSuperVersion}. @throws DbClosedException once closed
     */
    SuperVersion acquireLocal(ThreadLocalRefs.Slot slot) {
        return local.acquire(slot);
    }

    /** Gives back a SuperVersion of {@link #acquireLocal} (same thread, same slot). */
    void releaseLocal(ThreadLocalRefs.Slot slot, SuperVersion sv) {
        local.release(slot, sv);
    }

    /** Unpublishes and releases the SuperVersion (close): readers that retained it keep it. */
    void dropSuperVersion() {
        SuperVersion sv = superVersion;
        superVersion = null;
        if (sv != null) {
            sv.release();
        }
        local.scrape(); // after unpublishing: no slot can take it again
    }
}
