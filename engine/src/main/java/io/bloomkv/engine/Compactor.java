package io.bloomkv.engine;

import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.compaction.Compaction;
import io.bloomkv.engine.internal.compaction.CompactionPicker;
import io.bloomkv.engine.internal.compaction.OutputCutter;
import io.bloomkv.engine.internal.iterator.MergingIterator;
import io.bloomkv.engine.internal.table.InternalIterator;
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
 * alone; a single input with nothing to merge below is moved down without rewriting.
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
    private final ReentrantLock stateLock = new ReentrantLock();
    private final Condition stateChanged = stateLock.newCondition();
    private boolean wakeRequested = true;
    private boolean running;
    private boolean stop;
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

    /** Waits until the background thread has no compaction to do (or stopped, or hit an error). */
    void waitIdle() {
        stateLock.lock();
        try {
            while (!stop && (running || wakeRequested || needsCompaction()) && env.backgroundError() == null) {
                stateChanged.awaitUninterruptibly();
            }
        } finally {
            stateLock.unlock();
        }
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
                while (!stop && !wakeRequested) {
                    stateChanged.awaitUninterruptibly();
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
                while (env.options().autoCompaction() && !isStopping() && env.backgroundError() == null && backgroundCompactionStep()) {
                    // one compaction per step; loop while levels still overflow
                }
            } catch (CompactionAbortedException e) {
                // the database is closing: abandoning a compaction is not an error
            } catch (IOException | RuntimeException | Error e) {
                if (!isStopping()) {
                    BloomKvException err = BackgroundErrors.of("compaction failed", e);
                    // Recoverable when nothing was recorded: a MANIFEST failure set the background error already.
                    boolean recoverable = env.backgroundError() == null && !(e instanceof Error)
                            && !(err instanceof CorruptionException);
                    // No lock is held here (compactionLock and stateLock were released).
                    if (!env.events().backgroundError("compaction", err, recoverable)) {
                        env.setBackgroundError(err);
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
                c = CompactionPicker.pickAuto(v, env.options(), env.versions()::compactPointer);
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
        compactionLock.lock();
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
            BloomKvIOException err = new BloomKvIOException("compactRange failed",
                    e instanceof UncheckedIOException u ? u.getCause() : (IOException) e);
            env.setBackgroundError(err);
            throw err;
        } finally {
            compactionLock.unlock();
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
        events.post(l -> l.onCompactionBegin(new EventListener.CompactionInfo(events.directory(), c.level(),
                c.outputLevel(), List.copyOf(inputs), inputBytes, c.isTrivialMove())));
        if (c.isTrivialMove()) {
            FileMetaData f = c.base().get(0);
            edit.deleteFile(c.level(), f.number());
            edit.addFile(c.outputLevel(), f);
            edit.compactPointer(c.level(), f.largest());
            env.versions().logAndApply(edit);
            env.versionInstalled();
            events.post(l -> l.onCompactionCompleted(new EventListener.CompactionCompletedInfo(events.directory(),
                    c.level(), c.outputLevel(), List.copyOf(inputs), List.copyOf(inputs), 0, 0, true)));
            return;
        }
        List<FileMetaData> outputs = new ArrayList<>();
        long bytesRead = 0;
        try {
            merge(c, outputs);
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
                // failed, so no file may be deleted from now on (see ObsoleteFiles.delete).
                env.setBackgroundError(BackgroundErrors.of("compaction: MANIFEST write failed", e));
                throw e;
            }
            env.compactionFinished(bytesRead, written);
            long read = bytesRead;
            long wrote = written;
            List<FileMetaData> made = List.copyOf(outputs);
            events.post(l -> {
                List<Long> outs = new ArrayList<>();
                for (FileMetaData f : made) {
                    outs.add(f.number());
                    l.onTableFileCreated(new EventListener.TableFileCreatedInfo(
                            io.bloomkv.engine.internal.version.FileNames.tableFile(events.directory(), f.number()),
                            f.number(), f.fileSize(), f.entries(), EventListener.TableReason.COMPACTION));
                }
                l.onCompactionCompleted(new EventListener.CompactionCompletedInfo(events.directory(), c.level(),
                        c.outputLevel(), List.copyOf(inputs), List.copyOf(outs), read, wrote, false));
            });
        } finally {
            for (FileMetaData f : outputs) {
                env.outputRecorded(f.number());
            }
        }
        env.versionInstalled();
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

    /** Merges the inputs of {@code c} into new tables of the output level, added to {@code outputs} (already open). */
    private void merge(Compaction c, List<FileMetaData> outputs) throws IOException {
        Version v = env.versions().retainCurrent();
        long smallestSnapshot = env.smallestSnapshot();
        List<InternalIterator> inputs = new ArrayList<>();
        TableOutputs.Output out = null;
        try {
            for (FileMetaData f : c.base()) {
                inputs.add(env.table(f.number()).compactionIterator(COMPACTION_READAHEAD));
            }
            for (FileMetaData f : c.below()) {
                inputs.add(env.table(f.number()).compactionIterator(COMPACTION_READAHEAD));
            }
            long expected = 0;
            for (FileMetaData f : c.base()) {
                expected += f.entries();
            }
            for (FileMetaData f : c.below()) {
                expected += f.entries();
            }
            long targetSize = env.options().targetFileSize();
            long expectedPerTable = Math.max(1, Math.min(expected, expected * targetSize
                    / Math.max(1, sizeOf(c.base()) + sizeOf(c.below()))));
            OutputCutter cutter = new OutputCutter(CompactionPicker.grandparents(v, c), targetSize);
            byte[] largestInput = c.largestUserKey(); // bounds every output's keys (MonkeyAllocation asks what they overlap)
            try (MergingIterator it = new MergingIterator(inputs)) {
                inputs.clear();
                it.seekToFirst();
                byte[] currentUserKey = null;
                long lastSequenceForKey = Long.MAX_VALUE;
                byte[] lastAddedUserKey = null;
                long count = 0;
                while (it.valid()) {
                    if ((++count & 1023) == 0 && (isStopping() || env.isShuttingDown())) {
                        throw new CompactionAbortedException();
                    }
                    byte[] ik = it.keyNoCopy();
                    byte[] userKey = InternalKey.userKey(ik);
                    long sequence = InternalKey.sequence(ik);
                    if (currentUserKey == null || !Arrays.equals(userKey, currentUserKey)) {
                        currentUserKey = userKey;
                        lastSequenceForKey = Long.MAX_VALUE;
                    }
                    boolean drop;
                    if (lastSequenceForKey <= smallestSnapshot) {
                        // A newer entry of this key is visible to every reader.
                        drop = true;
                    } else {
                        drop = InternalKey.type(ik) == ValueType.DELETE && sequence <= smallestSnapshot
                                && !v.keyMayExistBelow(c.outputLevel(), userKey);
                    }
                    lastSequenceForKey = sequence;
                    if (!drop) {
                        boolean newUserKey = !Arrays.equals(userKey, lastAddedUserKey);
                        // the cutter sees every new user key (out == null: size 0, never a cut), so it tracks the grandparents
                        if (newUserKey && cutter.shouldCutBefore(userKey, out == null ? 0 : out.writer.estimatedFileSize())) {
                            outputs.add(out.finish());
                            out = null;
                        }
                        if (out == null) {
                            out = env.newOutput(c.outputLevel(), expectedPerTable, c, userKey, largestInput);
                        }
                        out.writer.add(it.key(), it.value());
                        lastAddedUserKey = userKey;
                    }
                    it.next();
                }
            }
            if (out != null) {
                outputs.add(out.finish());
                out = null;
            }
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
