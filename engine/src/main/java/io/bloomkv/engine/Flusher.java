package io.bloomkv.engine;

import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.record.LogWriter;
import io.bloomkv.engine.internal.util.Threads;
import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.Version;
import io.bloomkv.engine.internal.version.VersionEdit;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The flush thread: writes the oldest immutable memtable to level-0 tables ({@link TableOutputs#writeLevel0Tables}:
 * one per key partition when tables are partitioned by prefix), records them in the
 * MANIFEST with the new oldest live WAL, drops the memtable, deletes what became obsolete and
 * wakes the compactor. A failure becomes the background error (writes and flush() then fail). While
 * {@link Db#pauseBackgroundWork paused} it takes no memtable (one being written is finished first).
 */
final class Flusher {
    private final DbState state;
    private final VersionSet versions;
    private final TableOutputs outputs;
    private final ObsoleteFiles obsolete;
    private final DbCounters counters;
    private final Runnable afterFlush;
    private final WriteBufferCharge writeBufferCharge;
    /** The oldest sequence a reader may read at (flush collapses merge chains only where every reader agrees). */
    private java.util.function.LongSupplier smallestSnapshot = () -> 0;

    private Thread thread;
    private Events events = new Events(java.util.List.of(), Path.of("."));

    /** {@code afterFlush} runs after every flush (it wakes the compactor). */
    Flusher(
            DbState state,
            VersionSet versions,
            TableOutputs outputs,
            ObsoleteFiles obsolete,
            DbCounters counters,
            Runnable afterFlush,
            WriteBufferCharge writeBufferCharge) {
        this.writeBufferCharge = writeBufferCharge;
        this.state = state;
        this.versions = versions;
        this.outputs = outputs;
        this.obsolete = obsolete;
        this.counters = counters;
        this.afterFlush = afterFlush;
    }

    /** Where the oldest live snapshot comes from (by default: as if one at sequence 0, so nothing collapses). */
    void smallestSnapshot(java.util.function.LongSupplier s) {
        this.smallestSnapshot = s;
    }

    /** Where flush events go (none by default). */
    void events(Events e) {
        this.events = e;
    }

    void start(Path dir) {
        thread = new Thread(this::loop, "bloomkv-flush-" + dir.getFileName());
        thread.setDaemon(true);
        thread.start();
    }

    /** Whether the caller is the flush thread (a listener's onBackgroundError after a failed flush runs there). */
    boolean isCurrentThread() {
        return Thread.currentThread() == thread;
    }

    /** Waits for the thread to end (the database must be shutting down). */
    void join() {
        Threads.joinUninterruptibly(thread);
    }

    private void loop() {
        while (true) {
            MemTable imm;
            state.lock();
            try {
                // A job is picked here only: Db.pauseBackgroundWork waits for the one running, then stops the next.
                while (!state.shuttingDown
                        && (state.imms.isEmpty() || state.flushesStopped() || state.flushesPaused())) {
                    state.awaitChange();
                }
                if (state.shuttingDown) {
                    return;
                }
                imm = state.imms.peekLast();
                state.flushing = true;
            } finally {
                state.unlock();
            }
            try {
                flush(imm);
            } catch (IOException | RuntimeException | Error e) {
                BloomKvException err = BackgroundErrors.of("flush of memtable (WAL " + imm.logNumber() + ") failed", e);
                events.backgroundError("flush", err, false); // no lock held here; a flush error is never ignored
                // A listener that interrupted this thread (its own, as Events' loop is) must not fail every later
                // flush: a FileChannel used by an interrupted thread is closed with ClosedByInterruptException.
                Thread.interrupted();
                state.setBackgroundError("flush", err);
            } finally {
                state.lock();
                try {
                    state.flushing = false;
                    state.signalChangeHeld();
                } finally {
                    state.unlock();
                }
            }
        }
    }

    /** Writes the oldest immutable memtable to level-0 tables, records them, and drops the memtable and its WAL. */
    private void flush(MemTable imm) throws IOException {
        VersionEdit edit = new VersionEdit();
        Path dir = events.directory();
        long wal = imm.logNumber();
        long memEntries = imm.entryCount();
        long memBytes = imm.approximateMemoryUsage();
        events.post(l -> l.onFlushBegin(new EventListener.FlushInfo(dir, wal, memEntries, memBytes)));
        long snapshot = smallestSnapshot.getAsLong();
        // The tables under this memtable: a tombstone of it that overlaps none of them hides nothing and is not
        // written.
        // (Flushes run oldest memtable first, so no older memtable is left; tables that appear meanwhile come from
        // compactions of these, or from an ingestion, which waits for a memtable its files overlap.)
        Version below = versions.retainCurrent();
        List<FileMetaData> metas;
        try {
            metas = outputs.writeLevel0Tables(imm, edit, snapshot, below);
        } finally {
            below.release();
        }
        long oldestLiveLog;
        state.lock();
        try {
            // WALs older than the next memtable to flush (or the current one) are no longer needed.
            MemTable newerImm = null;
            for (MemTable m : state.imms) {
                if (m == imm) {
                    break;
                }
                newerImm = m;
            }
            oldestLiveLog = newerImm != null ? newerImm.logNumber() : state.mem.logNumber();
        } finally {
            state.unlock();
        }
        edit.logNumber(oldestLiveLog);
        // The tables are announced in this place of the event order, taken before they become visible: a compaction
        // (or a file-range deletion) that reads them at once queues its events behind. The events themselves are
        // delivered once the memtable is dropped, as before, so a listener reading the database sees the flush done.
        List<java.util.function.Consumer<EventListener>> announced = new java.util.ArrayList<>();
        Events.Reservation place = events.reserve();
        try {
            try {
                versions.logAndApply(edit);
            } catch (IOException | RuntimeException e) {
                // Before the table leaves pendingOutputs: the edit may be on disk though its sync failed. Thrown as
                // recorded, so that the loop records nothing more (DbState.setBackgroundError knows it).
                BloomKvException err = BackgroundErrors.of(
                        "flush of memtable (WAL " + imm.logNumber() + "): MANIFEST write failed", e);
                state.setBackgroundError("flush", err);
                throw err;
            } finally {
                for (FileMetaData meta : metas) {
                    obsolete.released(meta.number());
                }
            }
            // One event per callback: a listener that throws from one still gets the others.
            long bytes = 0;
            for (FileMetaData meta : metas) {
                bytes += meta.fileSize();
                EventListener.TableFileCreatedInfo created = new EventListener.TableFileCreatedInfo(
                        io.bloomkv.engine.internal.version.FileNames.tableFile(dir, meta.number()),
                        meta.number(),
                        meta.fileSize(),
                        meta.entries(),
                        EventListener.TableReason.FLUSH);
                announced.add(l -> l.onTableFileCreated(created));
            }
            EventListener.FlushCompletedInfo completed = new EventListener.FlushCompletedInfo(
                    dir, wal, metas.isEmpty() ? -1 : metas.get(0).number(), bytes, memEntries);
            announced.add(l -> l.onFlushCompleted(completed));
            // Counted before the memtable leaves imms and waiters are signalled: whoever waitForBackgroundWork let go
            // reads a flush count that includes this one.
            counters.flushes.increment();
            state.lock();
            try {
                state.imms.remove(imm);
                LogWriter unsynced = state.unsyncedLogs.remove(imm.logNumber());
                if (unsynced != null) {
                    // Its records are in the table now (and the MANIFEST no longer names the log): nothing to sync.
                    CommitPipeline.closeLogs(java.util.List.of(unsynced));
                }
                writeBufferCharge.flushed(imm);
                state.installSuperVersion();
                state.signalChangeHeld();
            } finally {
                state.unlock();
            }
        } finally {
            place.fill(announced); // nothing when the MANIFEST write failed
        }
        obsolete.delete();
        afterFlush.run();
    }
}
