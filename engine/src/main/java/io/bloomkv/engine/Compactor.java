package io.bloomkv.engine;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.compaction.Compaction;
import io.bloomkv.engine.internal.compaction.CompactionPicker;
import io.bloomkv.engine.internal.compaction.MergeCollapser;
import io.bloomkv.engine.internal.compaction.OutputCutter;
import io.bloomkv.engine.internal.iterator.MergingIterator;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.rangedel.RangeTombstoneList;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.util.Threads;
import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.Version;
import io.bloomkv.engine.internal.version.VersionEdit;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs leveled compactions, as in LevelDB, on one background thread, and {@link #compactRange} on
 * the caller's. What to compact is chosen by {@link CompactionPicker} from the current Version
 * alone; inputs with nothing to merge below and no key in two of them (one table, or level-0 tables of disjoint
 * ranges where the filter policy allows it, {@link Compaction#isTrivialMove}) are moved down without rewriting.
 *
 * <p>The merge drops an entry when a newer entry of the same user key is visible to every open
 * snapshot, and a tombstone when additionally no deeper level may hold the key. Where outputs end
 * is {@link OutputCutter}'s choice: at {@link Options#targetFileSize()} in the last level, else aligned
 * with the boundaries of the tables one level further down; never inside one user key's entries, so
 * the tables of a level have disjoint user-key ranges. Each output gets its own filter. Readers are never blocked: the
 * new Version is installed atomically and the input tables live until their last reader is done.
 */
final class Compactor {
    private final CompactionEnv env;
    /** Serializes compactions (background and {@link #compactRange}). */
    private final ReentrantLock compactionLock = new ReentrantLock();
    /**
     * Guarded by compactionLock: the failed MANIFEST write that {@link #run} recorded as the background error and
     * threw, so that {@link #compactRange} tells the listeners of its own failure (as the background loop does) while
     * it passes on, untold, a background error that was set before (which rangeCompaction throws).
     */
    private BloomKvException recordedManifestFailure;

    private final ReentrantLock stateLock = new ReentrantLock();
    private final Condition stateChanged = stateLock.newCondition();
    private boolean wakeRequested = true;
    private boolean running;
    private boolean stop;
    /**
     * Under stateLock: {@link #pause} calls not yet matched by {@link #resume} (RocksDB's
     * {@code bg_compaction_paused_}, counted as soon as a pause begins). While above 0 the thread picks no compaction,
     * unless {@link #pauseLifted}.
     */
    private int paused;
    /** Under stateLock: a close flushing the memtables of a database without WAL lifted the pause for good. */
    private boolean pauseLifted;

    private Thread thread;

    Compactor(CompactionEnv env) {
        this.env = env;
    }

    void start() {
        thread = new Thread(this::loop, "bloomkv-compact-" + env.directory().getFileName());
        thread.setDaemon(true);
        thread.start();
    }

    /** Asks the thread to look for work (after a flush added a level-0 table). */
    void wake() {
        stateLock.lock();
        try {
            wakeRequested = true;
            stateChanged.signalAll();
        } finally {
            stateLock.unlock();
        }
    }

    /** Stops the thread; an ongoing compaction is abandoned at its next entry (its outputs deleted). */
    void shutdown() {
        stateLock.lock();
        try {
            stop = true;
            stateChanged.signalAll();
        } finally {
            stateLock.unlock();
        }
        Threads.joinUninterruptibly(thread);
        // A compactRange running on a caller's thread sees the database closing and gives up; wait for it.
        compactionLock.lock();
        compactionLock.unlock();
    }

    /**
     * Waits until the background thread has no compaction to do (or stopped, or hit an error, or is paused: returns
     * at once while {@link #isPaused}, and when a pause begins meanwhile).
     */
    void waitIdle() {
        stateLock.lock();
        try {
            while (!stop
                    && !pausedHeld()
                    && (running || wakeRequested || needsCompaction())
                    && env.backgroundError() == null) {
                stateChanged.awaitUninterruptibly();
            }
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * Stops background compactions from being picked (nested: each call needs a {@link #resume}) and waits until none
     * runs: the background thread's step in progress ends first (a compaction is never abandoned for a pause), then
     * any {@link #compactRange} or {@link #exclusive} body running on a caller's thread (those are not paused: a
     * compactRange started later runs, as RocksDB's manual compaction runs while background work is paused). Returns
     * early when the database stops. On the background thread itself (a listener's {@code onBackgroundError} after a
     * failed step) it does not wait for that step, which ends when the listener returns.
     */
    void pause() {
        stateLock.lock();
        try {
            paused++;
            stateChanged.signalAll(); // waitIdle callers stop waiting
            // Called on this thread (a listener's onBackgroundError): its failed step ends once the listener returns.
            while (running && !stop && Thread.currentThread() != thread) {
                stateChanged.awaitUninterruptibly();
            }
        } finally {
            stateLock.unlock();
        }
        compactionLock.lock(); // a compactRange or ingestion under way on a caller's thread
        compactionLock.unlock();
    }

    /** Undoes one {@link #pause}; the last one lets the thread look for work at once. */
    void resume() {
        stateLock.lock();
        try {
            if (paused == 0) {
                throw new IllegalStateException("compactions are not paused");
            }
            paused--;
            if (paused == 0) {
                wakeRequested = true;
                stateChanged.signalAll();
            }
        } finally {
            stateLock.unlock();
        }
    }

    /** Lets compactions run again whatever the pauses (a closing database that flushes its memtables first). */
    void liftPause() {
        stateLock.lock();
        try {
            pauseLifted = true;
            wakeRequested = true;
            stateChanged.signalAll();
        } finally {
            stateLock.unlock();
        }
    }

    /** Whether a pause holds background compactions (counted from the start of a {@link #pause} call). */
    boolean isPaused() {
        stateLock.lock();
        try {
            return pausedHeld();
        } finally {
            stateLock.unlock();
        }
    }

    private boolean pausedHeld() {
        return paused > 0 && !pauseLifted;
    }

    private boolean needsCompaction() {
        if (!env.options().autoCompaction()) {
            return false;
        }
        Version v = env.versions().current();
        return v != null && v.compactionScore() >= 1;
    }

    private void loop() {
        while (true) {
            stateLock.lock();
            try {
                // A job is picked here and before each step below only: a pause waits for the step in progress.
                while (!stop && (!wakeRequested || pausedHeld())) {
                    java.time.Duration period = env.options().periodicCompaction();
                    if (period == null || pausedHeld()) {
                        stateChanged.awaitUninterruptibly();
                    } else if (!awaitPeriodicCheck(period)) {
                        // A quiet database still looks for tables that reached the period (RocksDB re-checks too).
                        wakeRequested = true;
                    }
                }
                if (stop) {
                    stateChanged.signalAll();
                    return;
                }
                wakeRequested = false;
                running = true;
            } finally {
                stateLock.unlock();
            }
            try {
                while (env.options().autoCompaction()
                        && !isStopping()
                        && !isPaused()
                        && env.backgroundError() == null
                        && backgroundCompactionStep()) {
                    // one compaction per step; loop while levels still overflow
                }
            } catch (CompactionAbortedException e) {
                // the database is closing: abandoning a compaction is not an error
            } catch (IOException | RuntimeException | Error e) {
                if (!isStopping()) {
                    BloomKvException err = BackgroundErrors.of("compaction failed", e);
                    // Recoverable when nothing was recorded: a MANIFEST failure set the background error already.
                    boolean recoverable = env.backgroundError() == null
                            && !(e instanceof Error)
                            && !(err instanceof CorruptionException);
                    // No lock is held here (compactionLock and stateLock were released).
                    boolean ignored = env.events().backgroundError("compaction", err, recoverable);
                    // A listener that interrupted this thread (the database's own) must not fail every later
                    // compaction: a FileChannel used by an interrupted thread is closed (ClosedByInterruptException).
                    Thread.interrupted();
                    if (!ignored) {
                        env.setBackgroundError("compaction", err);
                    }
                }
            } finally {
                stateLock.lock();
                try {
                    running = false;
                    stateChanged.signalAll();
                } finally {
                    stateLock.unlock();
                }
            }
        }
    }

    /**
     * Waits for a signal, at most half the period and at most ten minutes: a table that reached
     * {@link Options#periodicCompaction} waits that long at most for a compaction to be picked. False on timeout.
     */
    private boolean awaitPeriodicCheck(java.time.Duration period) {
        long nanos = Math.min(period.toNanos() / 2, java.util.concurrent.TimeUnit.MINUTES.toNanos(10));
        try {
            return stateChanged.awaitNanos(Math.max(1, nanos)) > 0;
        } catch (InterruptedException e) {
            return true; // nothing interrupts this thread; treated as a signal (the loop re-checks)
        }
    }

    private boolean isStopping() {
        stateLock.lock();
        try {
            return stop;
        } finally {
            stateLock.unlock();
        }
    }

    /** Runs one compaction if some level needs one; false when none does. */
    private boolean backgroundCompactionStep() throws IOException {
        compactionLock.lock();
        try {
            Compaction c;
            Version v = env.versions().retainCurrent();
            try {
                // With Options.periodicCompaction, an old table is picked when no level overflows (creation times
                // come from the tables' properties; the clock is Options.clock).
                c = env.options().periodicCompaction() == null
                        ? CompactionPicker.pickAuto(v, env.options(), env.versions()::compactPointer)
                        : CompactionPicker.pickAuto(
                                v,
                                env.options(),
                                env.versions()::compactPointer,
                                n -> env.table(n).properties().creationTime(),
                                Math.floorDiv(env.options().clock().millis(), 1000L));
            } finally {
                v.release();
            }
            if (c == null) {
                return false;
            }
            run(c);
            return true;
        } finally {
            compactionLock.unlock();
        }
    }

    /**
     * Runs {@code body} while no compaction runs or is being picked (it waits for the running one to finish), then
     * wakes the thread: an ingestion chooses its levels and installs its tables without a compaction writing into the
     * same key range meanwhile (RocksDB checks the ranges of running compactions; one lock is simpler).
     */
    <T> T exclusive(java.util.concurrent.Callable<T> body) throws Exception {
        compactionLock.lock();
        try {
            return body.call();
        } finally {
            compactionLock.unlock();
            wake();
        }
    }

    /**
     * Compacts every table overlapping [from, to] down to the deepest level that holds such a table,
     * level by level, then rewrites that level's overlapping tables in place if no merge wrote into
     * it, so overwritten values and tombstones in the range are dropped everywhere. Runs on the
     * caller's thread, serialized with background compactions.
     */
    void compactRange(byte[] from, byte[] to) {
        BloomKvException failure = null; // as a background compaction's failure, for the listeners and writes
        Throwable thrown = null; // what the caller gets
        boolean recoverable = false;
        compactionLock.lock();
        recordedManifestFailure = null;
        try {
            Version v = env.versions().retainCurrent();
            int maxLevel;
            int baseLevel;
            try {
                maxLevel = CompactionPicker.deepestOverlappingLevel(v, from, to);
                baseLevel = v.baseLevel();
            } finally {
                v.release();
            }
            // Levels above the base level stay empty: level 0 goes straight to the base level.
            int last = Math.max(maxLevel, baseLevel);
            boolean mergedIntoLast = false;
            for (int level = 0; level < last; level++) {
                Compaction c = rangeCompaction(level, from, to, false, last);
                if (c != null) {
                    run(c);
                    mergedIntoLast = c.outputLevel() == last && !c.isTrivialMove();
                }
            }
            if (!mergedIntoLast) {
                Compaction c = rangeCompaction(last, from, to, true, last);
                if (c != null) {
                    run(c);
                }
            }
        } catch (IOException | UncheckedIOException e) {
            // A table read fails unchecked (UncheckedIOException) inside the merge's iterators.
            failure = new BloomKvIOException(
                    "compactRange failed", e instanceof UncheckedIOException u ? u.getCause() : (IOException) e);
            thrown = failure;
            // Recoverable when nothing was recorded (a MANIFEST failure set the background error already).
            recoverable = env.backgroundError() == null;
        } catch (RuntimeException | Error e) {
            // The background error already set (rangeCompaction throws it) and a close abandoning the compaction are
            // no new failure. Anything else is judged as the background loop judges it: a corrupt table (RocksDB stops
            // writes there too, as a manual compaction's background error), an Error, or a merge operator's or
            // compaction filter's exception (recoverable: the inputs stay).
            if (e == recordedManifestFailure) {
                // This call's MANIFEST write failed: recorded by run (recording it again is a no-op), still untold.
                failure = recordedManifestFailure;
                thrown = e;
                recoverable = false;
            } else if (e == env.backgroundError() || env.isShuttingDown()) {
                throw e;
            } else {
                failure = BackgroundErrors.of("compactRange failed", e);
                thrown = e;
                recoverable = env.backgroundError() == null
                        && !(e instanceof Error)
                        && !(failure instanceof CorruptionException);
            }
        } finally {
            compactionLock.unlock();
        }
        if (failure != null) {
            // As a background compaction's failure (no lock held now): a listener may choose to ignore a recoverable
            // one.
            if (!env.events().backgroundError("compaction", failure, recoverable)) {
                env.setBackgroundError("compaction", failure);
            }
            if (thrown instanceof Error err) {
                throw err;
            }
            throw (RuntimeException) thrown;
        }
        wake();
    }

    /** The tables of {@code level} overlapping [from, to], merged into the next level or (inPlace) rewritten in it. */
    private Compaction rangeCompaction(int level, byte[] from, byte[] to, boolean inPlace, int last) {
        if (env.backgroundError() != null) {
            throw env.backgroundError();
        }
        Version cur = env.versions().retainCurrent();
        try {
            int outputLevel = inPlace ? level : level == 0 ? Math.min(cur.baseLevel(), last) : level + 1;
            return CompactionPicker.pickRange(cur, level, from, to, outputLevel);
        } finally {
            cur.release();
        }
    }

    /** Executes {@code c}: a trivial move or a merge, then one MANIFEST edit. */
    private void run(Compaction c) throws IOException {
        VersionEdit edit = new VersionEdit();
        Events events = env.events();
        List<Long> inputs = new ArrayList<>();
        c.base().forEach(f -> inputs.add(f.number()));
        c.below().forEach(f -> inputs.add(f.number()));
        long inputBytes = sizeOf(c.base()) + sizeOf(c.below());
        events.post(l -> l.onCompactionBegin(new EventListener.CompactionInfo(
                events.directory(), c.level(), c.outputLevel(), List.copyOf(inputs), inputBytes, c.isTrivialMove())));
        if (c.isTrivialMove()) {
            byte[] largest = null;
            for (FileMetaData f : c.base()) {
                edit.deleteFile(c.level(), f.number());
                edit.addFile(c.outputLevel(), f);
                if (largest == null || InternalKey.compare(f.largest(), largest) > 0) {
                    largest = f.largest();
                }
            }
            edit.compactPointer(c.level(), largest);
            env.versions().logAndApply(edit);
            env.versionInstalled();
            env.deleteObsoleteFiles();
            events.post(l -> l.onCompactionCompleted(new EventListener.CompactionCompletedInfo(
                    events.directory(),
                    c.level(),
                    c.outputLevel(),
                    List.copyOf(inputs),
                    List.copyOf(inputs),
                    0,
                    0,
                    true)));
            return;
        }
        List<FileMetaData> outputs = new ArrayList<>();
        long bytesRead = 0;
        boolean holdingSnapshots = false;
        try {
            long filteredFrom = merge(c, outputs);
            while (filteredFrom != Long.MAX_VALUE) {
                // The filter changed entries newer than every snapshot the merge knew of. New snapshots wait from here
                // until the new Version is installed; when one taken since the merge began reads such an entry, the
                // merge is redone, and then leaves the entries that snapshot reads alone (CompactionFilter's contract).
                holdingSnapshots = true;
                if (env.holdSnapshots() < filteredFrom) {
                    break;
                }
                env.releaseSnapshots();
                holdingSnapshots = false;
                BloomKvException redone = new BloomKvException("compaction redone: a snapshot reads what it filtered");
                for (FileMetaData f : outputs) {
                    env.discardOutput(f.number(), redone);
                }
                outputs.clear();
                filteredFrom = merge(c, outputs);
            }
            for (FileMetaData f : c.base()) {
                edit.deleteFile(c.level(), f.number());
                bytesRead += f.fileSize();
            }
            for (FileMetaData f : c.below()) {
                edit.deleteFile(c.outputLevel(), f.number());
                bytesRead += f.fileSize();
            }
            byte[] largest = null;
            for (FileMetaData f : c.base()) {
                if (largest == null || InternalKey.compare(f.largest(), largest) > 0) {
                    largest = f.largest();
                }
            }
            edit.compactPointer(c.level(), largest);
            long written = 0;
            for (FileMetaData f : outputs) {
                edit.addFile(c.outputLevel(), f);
                written += f.fileSize();
            }
            try {
                env.versions().logAndApply(edit);
            } catch (IOException | RuntimeException e) {
                // Before the outputs leave pendingOutputs: the edit may be on disk though its sync
                // failed, so no file may be deleted from now on (see ObsoleteFiles.delete). Thrown as recorded: the
                // loop and compactRange record nothing more.
                BloomKvException err = BackgroundErrors.of("compaction: MANIFEST write failed", e);
                env.setBackgroundError("compaction", err);
                recordedManifestFailure = err;
                throw err;
            }
            env.compactionFinished(bytesRead, written);
            long read = bytesRead;
            long wrote = written;
            List<FileMetaData> made = List.copyOf(outputs);
            // One event per callback: a listener that throws from one still gets the others.
            List<Long> outs = new ArrayList<>();
            for (FileMetaData f : made) {
                outs.add(f.number());
                EventListener.TableFileCreatedInfo created = new EventListener.TableFileCreatedInfo(
                        io.bloomkv.engine.internal.version.FileNames.tableFile(events.directory(), f.number()),
                        f.number(),
                        f.fileSize(),
                        f.entries(),
                        EventListener.TableReason.COMPACTION);
                events.post(l -> l.onTableFileCreated(created));
            }
            EventListener.CompactionCompletedInfo completed = new EventListener.CompactionCompletedInfo(
                    events.directory(),
                    c.level(),
                    c.outputLevel(),
                    List.copyOf(inputs),
                    List.copyOf(outs),
                    read,
                    wrote,
                    false);
            events.post(l -> l.onCompactionCompleted(completed));
        } catch (IOException | RuntimeException | Error e) {
            if (holdingSnapshots) {
                env.releaseSnapshots();
            }
            throw e;
        } finally {
            for (FileMetaData f : outputs) {
                env.outputRecorded(f.number());
            }
        }
        env.versionInstalled();
        if (holdingSnapshots) {
            env.releaseSnapshots(); // after the install: a snapshot taken now reads the new Version
        }
        env.deleteObsoleteFiles(); // after the release: new snapshots do not wait for the unlinks
    }

    /** Whether the calling thread holds the compaction lock (tests check that listeners never run under it). */
    boolean lockHeldByCurrentThread() {
        return compactionLock.isHeldByCurrentThread();
    }

    /**
     * Bytes a compaction reads from an input table at a time (RocksDB's {@code compaction_readahead_size}, 2 MiB
     * there). 1 MiB keeps a direct-read file on its reused bounce buffer; a compaction of 15 input tables holds
     * 15 MiB of windows.
     */
    static final int COMPACTION_READAHEAD = 1 << 20;

    /**
     * Merges the inputs of {@code c} into new tables of the output level, added to {@code outputs} (already open).
     * Returns the smallest sequence of an entry the compaction filter removed or changed, Long.MAX_VALUE when none.
     */
    private long merge(Compaction c, List<FileMetaData> outputs) throws IOException {
        Version v = env.versions().retainCurrent();
        long smallestSnapshot = env.smallestSnapshot();
        List<InternalIterator> inputs = new ArrayList<>();
        MergeOutputs out = null;
        long[] filteredFrom = {Long.MAX_VALUE};
        try {
            // Range tombstones of the inputs: an input whose whole range they cover, newer than all of it and seen by
            // every snapshot, is dropped unread; the others' tombstones decide which entries are dead.
            List<FileMetaData> all = new ArrayList<>(c.base());
            all.addAll(c.below());
            List<RangeTombstone> inputTombstones = new ArrayList<>();
            for (FileMetaData f : all) {
                inputTombstones.addAll(env.table(f.number()).rangeTombstones().fragments());
            }
            RangeTombstoneList covering = RangeTombstoneList.of(inputTombstones);
            List<RangeTombstone> kept = new ArrayList<>();
            for (FileMetaData f : all) {
                TableReader r = env.table(f.number());
                if (!covering.isEmpty()
                        && covering.coversRange(
                                f.smallestUserKey(), f.largestUserKey(), f.largestSequence(), smallestSnapshot)) {
                    r.recordDroppedByRangeDeletion();
                    continue;
                }
                kept.addAll(r.rangeTombstones().fragments());
                inputs.add(r.compactionIterator(COMPACTION_READAHEAD));
            }
            RangeTombstoneList tombstones = RangeTombstoneList.of(kept);
            MergeCollapser.Dead dead =
                    tombstones.isEmpty() ? null : (k, s) -> tombstones.maxCovering(k, smallestSnapshot) > s;
            List<RangeTombstone> outputTombstones =
                    TableOutputs.tombstonesToWrite(tombstones, smallestSnapshot, v, c.outputLevel());
            long expected = 0;
            for (FileMetaData f : c.base()) {
                expected += f.entries();
            }
            for (FileMetaData f : c.below()) {
                expected += f.entries();
            }
            long targetSize = env.options().targetFileSize();
            long expectedPerTable = Math.max(
                    1, Math.min(expected, expected * targetSize / Math.max(1, sizeOf(c.base()) + sizeOf(c.below()))));
            OutputCutter cutter = new OutputCutter(
                    CompactionPicker.grandparents(v, c),
                    targetSize,
                    env.options().tablePartitionPrefixLength());
            out = new MergeOutputs(c, expectedPerTable, cutter, outputTombstones, outputs);
            try (MergingIterator it = new MergingIterator(inputs)) {
                inputs.clear();
                it.seekToFirst();
                // The user key being merged is currentKey[0, currentKeyLength): the internal key of its newest entry,
                // kept as the merging iterator gave it (never reused: see MergingIterator.keyNoCopy). An entry's user
                // key is copied out only where a decision needs it alone (range tombstones, keys below, merges,
                // compaction filters, a new output); the common entry is compared in place and handed to the
                // writer as its own key (TableWriter.addOwned), one array per entry from the input block to the
                // output block.
                byte[] currentKey = null;
                int currentKeyLength = 0;
                byte[] currentUserKey = null; // currentKey's user key, copied on first need
                long lastSequenceForKey = Long.MAX_VALUE;
                long count = 0;
                MergeOperator operator = env.options().mergeOperator();
                CompactionFilter filter = env.compactionFilter(c); // with Options.ttl, the TTL step first (Ttl)
                long newestSnapshot = env.newestSnapshot();
                while (it.valid()) {
                    if ((++count & 1023) == 0 && (isStopping() || env.isShuttingDown())) {
                        throw new CompactionAbortedException();
                    }
                    byte[] ik = it.keyNoCopy();
                    int userKeyLength = ik.length - InternalKey.TRAILER_SIZE;
                    long trailer = InternalKey.trailer(ik);
                    long sequence = trailer >>> 8;
                    if (currentKey == null || !Arrays.equals(ik, 0, userKeyLength, currentKey, 0, currentKeyLength)) {
                        currentKey = ik;
                        currentKeyLength = userKeyLength;
                        currentUserKey = null;
                        lastSequenceForKey = Long.MAX_VALUE;
                    }
                    ValueType type = ValueType.fromCode((int) (trailer & 0xff));
                    boolean newestOfKey = lastSequenceForKey == Long.MAX_VALUE;
                    boolean drop;
                    if (lastSequenceForKey <= smallestSnapshot) {
                        // A newer entry of this key is visible to every reader.
                        drop = true;
                    } else if (dead != null || (type == ValueType.DELETE && sequence <= smallestSnapshot)) {
                        if (currentUserKey == null) {
                            currentUserKey = Arrays.copyOf(currentKey, currentKeyLength);
                        }
                        // A range tombstone every reader sees covers it (and every older entry of the key), or a
                        // tombstone every reader sees has nothing left to hide below.
                        drop = (dead != null && dead.isDead(currentUserKey, sequence))
                                || (type == ValueType.DELETE
                                        && sequence <= smallestSnapshot
                                        && !v.keyMayExistBelow(c.outputLevel(), currentUserKey));
                    } else {
                        drop = false;
                    }
                    lastSequenceForKey = sequence;
                    if (drop) {
                        it.next();
                        continue;
                    }
                    boolean collapse = type == ValueType.MERGE && sequence <= smallestSnapshot;
                    boolean filtered = filter != null && newestOfKey && sequence > newestSnapshot;
                    if (!collapse && !filtered) {
                        // The common entry: written as it is.
                        byte[] value = it.value();
                        it.next();
                        out.add(ik, value);
                        continue;
                    }
                    if (currentUserKey == null) {
                        currentUserKey = Arrays.copyOf(currentKey, currentKeyLength);
                    }
                    List<MergeCollapser.Out> entries;
                    if (collapse) {
                        // The newest entry every reader sees is an operand: its chain collapses (consumes the
                        // key's rest).
                        entries = MergeCollapser.collapse(
                                it,
                                currentUserKey,
                                operator,
                                v.keyMayExistBelow(c.outputLevel(), currentUserKey),
                                dead);
                    } else {
                        entries = List.of(new MergeCollapser.Out(ik, it.value()));
                        it.next();
                    }
                    if (filtered) {
                        // The key's newest entry, which no live snapshot can read: the filter may decide its fate.
                        entries = applyFilter(
                                filter, c.outputLevel(), currentUserKey, entries, smallestSnapshot, v, filteredFrom);
                    }
                    for (MergeCollapser.Out e : entries) {
                        out.add(e.internalKey(), e.value());
                    }
                }
            }
            out.finish();
            return filteredFrom[0];
        } catch (IOException | RuntimeException e) {
            for (InternalIterator i : inputs) {
                i.close();
            }
            if (out != null) {
                out.abandon(e);
            }
            for (FileMetaData f : outputs) {
                env.discardOutput(f.number(), e);
            }
            outputs.clear();
            throw e;
        } finally {
            v.release();
        }
    }

    /**
     * Asks {@code filter} about the value heading {@code entries} (the newest entry of one user key, which no live
     * snapshot reads; what follows it is older and untouched). A removed value becomes a tombstone under its sequence,
     * or disappears when no deeper level may hold the key and no reader can see an older version. The sequence of an
     * entry removed or changed lowers {@code filteredFrom[0]}.
     */
    private static List<MergeCollapser.Out> applyFilter(
            CompactionFilter filter,
            int level,
            byte[] userKey,
            List<MergeCollapser.Out> entries,
            long smallestSnapshot,
            Version v,
            long[] filteredFrom) {
        List<MergeCollapser.Out> out = null;
        for (int i = 0; i < Math.min(1, entries.size()); i++) {
            MergeCollapser.Out e = entries.get(i);
            long seq = InternalKey.sequence(e.internalKey());
            if (InternalKey.type(e.internalKey()) != ValueType.PUT) {
                continue;
            }
            boolean below = v.keyMayExistBelow(level, userKey);
            CompactionFilter.Decision d = filter.filter(level, !below, userKey, e.value());
            if (d == null) {
                throw new IllegalStateException("compaction filter returned null");
            }
            if (d == CompactionFilter.Decision.KEEP || (!d.isRemove() && d.newValueNoCopy() == null)) {
                continue;
            }
            if (out == null) {
                out = new ArrayList<>(entries);
            }
            filteredFrom[0] = Math.min(filteredFrom[0], seq);
            if (d.isRemove()) {
                boolean tombstone = below || seq > smallestSnapshot;
                out.set(
                        i,
                        tombstone
                                ? new MergeCollapser.Out(
                                        InternalKey.encode(userKey, seq, ValueType.DELETE), new byte[0])
                                : null);
            } else {
                out.set(i, new MergeCollapser.Out(e.internalKey(), d.newValueNoCopy()));
            }
        }
        if (out == null) {
            return entries;
        }
        out.removeIf(java.util.Objects::isNull);
        return out;
    }

    /**
     * The output tables of one merge: entries go to the current table until {@link OutputCutter} ends it before a new
     * user key; each table gets the share of the range tombstones between its first key and the next table's.
     */
    private final class MergeOutputs {
        private final Compaction c;
        private final long expectedPerTable;
        private final OutputCutter cutter;
        private final List<RangeTombstone> tombstones;
        private final List<FileMetaData> finished;
        /** Bounds every output's keys (MonkeyAllocation asks what they overlap). */
        private final byte[] largestInput;

        private TableOutputs.Output out;
        /** The internal key of the last entry added (its array, owned by the current output's writer), or null. */
        private byte[] lastKey;
        /** Where the current output's share of the tombstones starts (null: open). */
        private byte[] outputLower;

        MergeOutputs(
                Compaction c,
                long expectedPerTable,
                OutputCutter cutter,
                List<RangeTombstone> tombstones,
                List<FileMetaData> finished) {
            this.c = c;
            this.expectedPerTable = expectedPerTable;
            this.cutter = cutter;
            this.tombstones = tombstones;
            this.finished = finished;
            this.largestInput = c.largestUserKey();
        }

        /**
         * Adds an entry, after every entry added before in internal-key order. The writer keeps {@code internalKey}
         * (TableWriter.addOwned): the caller hands it over and never changes it.
         */
        void add(byte[] internalKey, byte[] value) throws IOException {
            int userKeyLength = internalKey.length - InternalKey.TRAILER_SIZE;
            boolean newUserKey = lastKey == null
                    || !Arrays.equals(
                            internalKey, 0, userKeyLength, lastKey, 0, lastKey.length - InternalKey.TRAILER_SIZE);
            // the cutter sees every new user key (out == null: size 0, never a cut), so it tracks the grandparents
            if (newUserKey
                    && cutter.shouldCutBefore(
                            internalKey, userKeyLength, out == null ? 0 : out.writer.estimatedFileSize())) {
                // This output's tombstones end where its keys do: the next output starts after its last key.
                byte[] upper = RangeTombstone.successor(InternalKey.userKey(lastKey));
                addClipped(out, tombstones, outputLower, upper);
                outputLower = upper;
                TableOutputs.Output done = out;
                out = null;
                finished.add(done.finish());
            }
            if (out == null) {
                out = env.newOutput(
                        c.outputLevel(), expectedPerTable, c, InternalKey.userKey(internalKey), largestInput);
            }
            out.writer.addOwned(internalKey, value);
            lastKey = internalKey;
        }

        /** Finishes the last output (one of tombstones only when every entry was dropped but tombstones remain). */
        void finish() throws IOException {
            if (out == null && !tombstones.isEmpty()) {
                out = env.newOutput(c.outputLevel(), 1, c, tombstones.get(0).begin(), largestInput);
            }
            if (out != null) {
                addClipped(out, tombstones, outputLower, null);
                TableOutputs.Output done = out;
                out = null;
                finished.add(done.finish());
            }
        }

        /** Deletes the unfinished output, if any, after {@code cause}. */
        void abandon(Exception cause) {
            if (out != null) {
                TableOutputs.Output o = out;
                out = null;
                o.abandon(cause);
            }
        }
    }

    /** Adds to {@code out} the parts of {@code tombstones} within [lower, upper) (null: open). */
    private static void addClipped(
            TableOutputs.Output out, List<RangeTombstone> tombstones, byte[] lower, byte[] upper) {
        for (RangeTombstone t : tombstones) {
            byte[] b = lower != null && Arrays.compareUnsigned(t.begin(), lower) < 0 ? lower : t.begin();
            byte[] e = upper != null && Arrays.compareUnsigned(t.end(), upper) > 0 ? upper : t.end();
            if (Arrays.compareUnsigned(b, e) < 0) {
                out.writer.addRangeTombstone(new RangeTombstone(b, e, t.sequence()));
            }
        }
    }

    private static long sizeOf(List<FileMetaData> files) {
        long n = 0;
        for (FileMetaData f : files) {
            n += f.fileSize();
        }
        return n;
    }

    /** Thrown inside a merge when the database is closing; its outputs are deleted. */
    private static final class CompactionAbortedException extends BloomKvException {
        private static final long serialVersionUID = 1L;

        CompactionAbortedException() {
            super("compaction abandoned: database closing");
        }
    }
}
