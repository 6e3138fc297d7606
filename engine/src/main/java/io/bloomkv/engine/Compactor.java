package io.bloomkv.engine;

import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.iterator.MergingIterator;
import io.bloomkv.engine.table.InternalIterator;
import io.bloomkv.engine.table.TableProperties;
import io.bloomkv.engine.table.TableWriter;
import io.bloomkv.engine.util.Threads;
import io.bloomkv.engine.version.FileMetaData;
import io.bloomkv.engine.version.FileNames;
import io.bloomkv.engine.version.Version;
import io.bloomkv.engine.version.VersionEdit;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Leveled compaction, as in LevelDB, on one background thread. A Version's score says which level
 * overflows most: level 0 by table count against {@link Options#l0CompactionTrigger()}, level n >= 1
 * by bytes against {@link Options#maxBytesForLevel(int)}. A level-0 compaction merges every level-0
 * table with the overlapping level-1 tables; a level-n compaction takes the next table after the
 * level's compaction pointer (round robin over the key space) and the overlapping tables of level
 * n+1. A single input with nothing to merge below is moved down without rewriting.
 *
 * <p>The merge drops an entry when a newer entry of the same user key is visible to every open
 * snapshot, and a tombstone when additionally no deeper level may hold the key. Outputs are cut at
 * {@link Options#targetFileSize()}, never inside one user key's entries, so the tables of a level
 * have disjoint user-key ranges. Each output gets its own filter. Readers are never blocked: the
 * new Version is installed atomically and the input tables live until their last reader is done.
 */
final class Compactor {
    /** What one compaction merges: {@code inputs[0]} from {@code level}, {@code inputs[1]} from {@code level + 1}. */
    record Compaction(int level, int outputLevel, List<FileMetaData> base, List<FileMetaData> below) {
        /** A single input with nothing to merge below is moved, not rewritten (not for in-place rewrites). */
        boolean isTrivialMove() {
            return outputLevel != level && base.size() == 1 && below.isEmpty();
        }
    }

    private final Db db;
    /** Serializes compactions (background and {@link #compactRange}). */
    private final ReentrantLock compactionLock = new ReentrantLock();
    private final ReentrantLock stateLock = new ReentrantLock();
    private final Condition stateChanged = stateLock.newCondition();
    private boolean wakeRequested = true;
    private boolean running;
    private boolean stop;
    private Thread thread;

    Compactor(Db db) {
        this.db = db;
    }

    void start() {
        thread = new Thread(this::loop, "bloomkv-compact-" + db.directory().getFileName());
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
            while (!stop && (running || wakeRequested || needsCompaction()) && db.backgroundError() == null) {
                stateChanged.awaitUninterruptibly();
            }
        } finally {
            stateLock.unlock();
        }
    }

    private boolean needsCompaction() {
        if (!db.opts().autoCompaction()) {
            return false;
        }
        Version v = db.versions().current();
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
                while (db.opts().autoCompaction() && !isStopping() && db.backgroundError() == null && backgroundCompactionStep()) {
                    // one compaction per step; loop while levels still overflow
                }
            } catch (CompactionAbortedException e) {
                // the database is closing: abandoning a compaction is not an error
            } catch (BloomKvException e) {
                if (!isStopping()) {
                    db.setBackgroundError(e);
                }
            } catch (IOException e) {
                if (!isStopping()) {
                    db.setBackgroundError(new BloomKvIOException("compaction failed", e));
                }
            } catch (UncheckedIOException e) {
                if (!isStopping()) {
                    db.setBackgroundError(new BloomKvIOException("compaction failed", e.getCause()));
                }
            } catch (RuntimeException | Error e) {
                if (!isStopping()) {
                    db.setBackgroundError(new BloomKvException("compaction failed", e));
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
            Version v = db.versions().retainCurrent();
            Compaction c;
            try {
                if (v.compactionScore() < 1) {
                    return false;
                }
                c = pick(v, v.compactionLevel());
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

    /** Picks the inputs of a compaction of {@code level} in {@code v}; null when the level is empty. */
    private Compaction pick(Version v, int level) {
        List<FileMetaData> base;
        if (level == 0) {
            base = new ArrayList<>(v.files(0));
        } else {
            List<FileMetaData> files = v.files(level);
            if (files.isEmpty()) {
                return null;
            }
            byte[] pointer = db.versions().compactPointer(level);
            FileMetaData chosen = files.get(0);
            if (pointer != null) {
                for (FileMetaData f : files) {
                    if (InternalKey.compare(f.largest(), pointer) > 0) {
                        chosen = f;
                        break;
                    }
                }
            }
            base = List.of(chosen);
        }
        if (base.isEmpty()) {
            return null;
        }
        return withBelow(v, level, base);
    }

    private static Compaction withBelow(Version v, int level, List<FileMetaData> base) {
        byte[] smallest = null;
        byte[] largest = null;
        for (FileMetaData f : base) {
            if (smallest == null || Arrays.compareUnsigned(f.smallestUserKey(), smallest) < 0) {
                smallest = f.smallestUserKey();
            }
            if (largest == null || Arrays.compareUnsigned(f.largestUserKey(), largest) > 0) {
                largest = f.largestUserKey();
            }
        }
        List<FileMetaData> below = v.overlapping(level + 1, smallest, largest);
        return new Compaction(level, level + 1, List.copyOf(base), List.copyOf(below));
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
            Version v = db.versions().retainCurrent();
            int maxLevel = 0;
            try {
                for (int level = 0; level < v.numLevels(); level++) {
                    if (!v.overlapping(level, from, to).isEmpty()) {
                        maxLevel = level;
                    }
                }
            } finally {
                v.release();
            }
            int last = Math.max(1, maxLevel);
            boolean mergedIntoLast = false;
            for (int level = 0; level < last; level++) {
                Compaction c = rangeCompaction(level, from, to, false);
                if (c != null) {
                    run(c);
                    mergedIntoLast = c.outputLevel() == last && !c.isTrivialMove();
                }
            }
            if (!mergedIntoLast) {
                Compaction c = rangeCompaction(last, from, to, true);
                if (c != null) {
                    run(c);
                }
            }
        } catch (IOException | UncheckedIOException e) {
            // A table read fails unchecked (UncheckedIOException) inside the merge's iterators.
            BloomKvIOException err = new BloomKvIOException("compactRange failed",
                    e instanceof UncheckedIOException u ? u.getCause() : (IOException) e);
            db.setBackgroundError(err);
            throw err;
        } finally {
            compactionLock.unlock();
        }
        wake();
    }

    /** The tables of {@code level} overlapping [from, to], merged into the next level or (inPlace) rewritten in it. */
    private Compaction rangeCompaction(int level, byte[] from, byte[] to, boolean inPlace) {
        if (db.backgroundError() != null) {
            throw db.backgroundError();
        }
        Version cur = db.versions().retainCurrent();
        try {
            List<FileMetaData> base = cur.overlapping(level, from, to);
            if (base.isEmpty()) {
                return null;
            }
            if (inPlace) {
                return new Compaction(level, level, List.copyOf(base), List.of());
            }
            return withBelow(cur, level, base);
        } finally {
            cur.release();
        }
    }

    /** Executes {@code c}: a trivial move or a merge, then one MANIFEST edit. */
    private void run(Compaction c) throws IOException {
        VersionEdit edit = new VersionEdit();
        if (c.isTrivialMove()) {
            FileMetaData f = c.base().get(0);
            edit.deleteFile(c.level(), f.number());
            edit.addFile(c.outputLevel(), f);
            edit.compactPointer(c.level(), f.largest());
            db.versions().logAndApply(edit);
            db.versionChanged();
            db.deleteObsoleteFiles();
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
                edit.deleteFile(c.level() + 1, f.number());
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
                db.versions().logAndApply(edit);
            } catch (IOException | RuntimeException e) {
                // Before the outputs leave pendingOutputs: the edit may be on disk though its sync
                // failed, so no file may be deleted from now on (see Db.deleteObsoleteFiles).
                String what = "compaction: MANIFEST write failed";
                db.setBackgroundError(e instanceof IOException io ? new BloomKvIOException(what, io) : new BloomKvException(what, e));
                throw e;
            }
            db.compactions.increment();
            db.compactionBytesRead.add(bytesRead);
            db.compactionBytesWritten.add(written);
        } finally {
            for (FileMetaData f : outputs) {
                db.pendingOutputs().remove(f.number());
            }
        }
        db.versionChanged();
        db.deleteObsoleteFiles();
    }

    /** Merges the inputs of {@code c} into new tables of the output level, added to {@code outputs} (already open). */
    private void merge(Compaction c, List<FileMetaData> outputs) throws IOException {
        Version v = db.versions().retainCurrent();
        long smallestSnapshot = db.smallestSnapshot();
        List<InternalIterator> inputs = new ArrayList<>();
        Output out = null;
        try {
            for (FileMetaData f : c.base()) {
                inputs.add(db.tableCache().get(f.number()).iterator());
            }
            for (FileMetaData f : c.below()) {
                inputs.add(db.tableCache().get(f.number()).iterator());
            }
            long expected = 0;
            for (FileMetaData f : c.base()) {
                expected += f.entries();
            }
            for (FileMetaData f : c.below()) {
                expected += f.entries();
            }
            long targetSize = db.opts().targetFileSize();
            long expectedPerTable = Math.max(1, Math.min(expected, expected * targetSize
                    / Math.max(1, sizeOf(c.base()) + sizeOf(c.below()))));
            try (MergingIterator it = new MergingIterator(inputs)) {
                inputs.clear();
                it.seekToFirst();
                byte[] currentUserKey = null;
                long lastSequenceForKey = Long.MAX_VALUE;
                byte[] lastAddedUserKey = null;
                long count = 0;
                while (it.valid()) {
                    if ((++count & 1023) == 0 && (isStopping() || db.isShuttingDown())) {
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
                        if (out != null && out.writer.estimatedFileSize() >= targetSize && !Arrays.equals(userKey, lastAddedUserKey)) {
                            outputs.add(out.finish());
                            out = null;
                        }
                        if (out == null) {
                            out = new Output(c.outputLevel(), expectedPerTable);
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
                db.tableCache().evict(f.number());
                try {
                    db.fileSystem().delete(FileNames.tableFile(db.directory(), f.number()));
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
                db.pendingOutputs().remove(f.number());
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

    /** One output table being written. */
    private final class Output {
        final long number;
        final Path path;
        final TableWriter writer;

        Output(int level, long expectedEntries) throws IOException {
            number = db.versions().newFileNumber();
            db.pendingOutputs().add(number);
            path = FileNames.tableFile(db.directory(), number);
            WritableFile file = null;
            try {
                file = db.fileSystem().newWritableFile(path);
                writer = new TableWriter(file, db.tableOptions(level, expectedEntries), expectedEntries);
            } catch (IOException | RuntimeException e) {
                if (file != null) {
                    try {
                        file.close();
                    } catch (IOException suppressed) {
                        e.addSuppressed(suppressed);
                    }
                }
                db.pendingOutputs().remove(number);
                throw e;
            }
        }

        FileMetaData finish() throws IOException {
            TableProperties props;
            try {
                props = writer.finish();
                writer.close();
                db.tableCache().open(number);
            } catch (IOException | RuntimeException e) {
                abandon(e);
                throw e;
            }
            return new FileMetaData(number, props.fileSize(), props.smallestKey(), props.largestKey(), props.entries(),
                    props.smallestSeq(), props.largestSeq());
        }

        void abandon(Exception e) {
            try {
                writer.close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            db.tableCache().evict(number);
            try {
                db.fileSystem().delete(path);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            db.pendingOutputs().remove(number);
        }
    }
}
