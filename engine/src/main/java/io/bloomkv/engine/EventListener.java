package io.bloomkv.engine;

import java.nio.file.Path;
import java.util.List;

/**
 * Callbacks on what a database does in the background (RocksDB's {@code EventListener}): flushes and compactions
 * begun and completed, table files created and deleted, writes stalled and resumed, background errors, and the
 * recovery from one by {@link Db#resume}. Install
 * with {@link Options#listeners}. Every method has an empty default, so a listener overrides only what it needs.
 *
 * <p>Threads: events are delivered, in the order they happened (a table's {@link #onTableFileCreated} before any
 * event of a compaction that reads it and before its {@link #onTableFileDeleted}), on one event thread per database
 * ({@code bloomkv-events-<dir>}), never under an engine lock: a listener may call the database (read, write, take a
 * {@link Db#property}); a slow listener delays later events, not the engine. {@link #onBackgroundError} is the
 * exception: it runs on the background thread that failed (again holding no engine lock), because its answer
 * decides what happens next (an error from a foreground path, which no answer changes, comes on the event thread);
 * it may also close the database, or pause its background work: neither waits for the thread it runs on, whose failed
 * job then ends. It may not call {@link Db#resume} (refused: the error is recorded only once it returns); hand that to
 * another thread.
 * Whatever a listener throws (an Error or an undeclared checked exception too) is logged at WARN on the logger
 * {@code io.bloomkv.engine.Db} and changes nothing: the other listeners, the later events and the engine go on (an
 * answer {@link #onBackgroundError} did not give counts as false).
 * Events still queued when the database closes are delivered before {@link Db#close} returns.
 */
public interface EventListener {

    /** A memtable starts being written to a level-0 table. */
    record FlushInfo(Path directory, long walNumber, long entries, long memtableBytes) {}

    /**
     * A memtable is in level-0 tables, recorded in the MANIFEST: {@code tableNumber} the first of them (-1 when none
     * was written: the memtable held nothing, or only what every reader sees as deleted), {@code tableBytes} all of
     * them. With {@link Options#tablePartitionPrefixLength} a flush writes a table per key partition, each announced by
     * {@link #onTableFileCreated}.
     */
    record FlushCompletedInfo(Path directory, long walNumber, long tableNumber, long tableBytes, long entries) {}

    /**
     * A compaction of {@code inputs} (table numbers, from {@code level} and {@code outputLevel}) into
     * {@code outputLevel}; {@code trivialMove} when the one input moves down without a rewrite.
     */
    record CompactionInfo(
            Path directory, int level, int outputLevel, List<Long> inputs, long inputBytes, boolean trivialMove) {}

    /** A compaction is recorded: its outputs (table numbers) replaced its inputs; bytes read and written. */
    record CompactionCompletedInfo(
            Path directory,
            int level,
            int outputLevel,
            List<Long> inputs,
            List<Long> outputs,
            long bytesRead,
            long bytesWritten,
            boolean trivialMove) {}

    /** Why a table file was created. */
    enum TableReason {
        FLUSH,
        COMPACTION,
        INGEST
    }

    /** A table file is in the live set ({@code path}, its number, size and entries). */
    record TableFileCreatedInfo(Path path, long number, long bytes, long entries, TableReason reason) {}

    /**
     * An obsolete table file was deleted ({@code error} null), or its deletion failed ({@code error} the failure, a
     * {@link BloomKvIOException} whose cause is what the file system threw; RocksDB's {@code info.status}). A file
     * whose deletion failed stays obsolete and is tried again by the next pass (each failure is an event and is logged
     * at WARN); the event of its deletion comes then, or the next open deletes it without one.
     */
    record TableFileDeletedInfo(Path path, long number, BloomKvException error) {}

    /**
     * Writes stopped ({@code stalled}: too many level-0 tables or memtables waiting for flush) or the stall ended; the
     * level-0 table count and immutable memtable count at that moment. Each stall gets exactly one event of its end,
     * whatever ends it: room made, a background error (after its {@link #onBackgroundError}), or close.
     */
    record WriteStallInfo(Path directory, boolean stalled, int level0Tables, int immutableMemtables) {}

    /**
     * A background flush or compaction failed (operation {@code flush} or {@code compaction}, a failed
     * {@link Db#compactRange} included), or an error stopped writes on a foreground path ({@code WAL sync}, {@code WAL
     * append}, {@code WAL switch}, the MANIFEST write of {@code ingest} or {@code deleteFilesInRange}, and a step of
     * {@link Db#resume} other than its flushes, {@code resume}: delivered on the event thread, never recoverable).
     * {@code recoverable} when ignoring it is safe: the failure happened before anything was recorded (a compaction
     * whose merge or output write failed leaves its inputs in place and is retried later). A failure of a flush or of a
     * MANIFEST write, and a corrupt table a compaction reads, is never recoverable.
     */
    record BackgroundErrorInfo(Path directory, String operation, BloomKvException error, boolean recoverable) {}

    /**
     * {@link Db#resume} clears the background error {@code error}, which stopped writes when {@code operation} failed
     * (named as in {@link BackgroundErrorInfo}; {@code resume} when a step of an earlier resume failed).
     */
    record ErrorRecoveryInfo(Path directory, String operation, BloomKvException error) {}

    default void onFlushBegin(FlushInfo info) {}

    default void onFlushCompleted(FlushCompletedInfo info) {}

    default void onCompactionBegin(CompactionInfo info) {}

    default void onCompactionCompleted(CompactionCompletedInfo info) {}

    default void onTableFileCreated(TableFileCreatedInfo info) {}

    default void onTableFileDeleted(TableFileDeletedInfo info) {}

    default void onWriteStallChanged(WriteStallInfo info) {}

    /**
     * A background error (RocksDB's {@code OnBackgroundError}). Return true to ignore a recoverable one: it then
     * does not stop writes. An unrecoverable error stops writes whatever the answer ({@link Db#resume} once its cause
     * is fixed, or reopen the database).
     */
    default boolean onBackgroundError(BackgroundErrorInfo info) {
        return false;
    }

    /**
     * {@link Db#resume} begins to recover from the background error (RocksDB's {@code OnErrorRecoveryBegin}; bloomkv
     * never recovers on its own, so there is nothing to veto). The events of its flushes follow.
     */
    default void onErrorRecoveryBegin(ErrorRecoveryInfo info) {}

    /**
     * {@link Db#resume} recovered: {@code info.error()} is cleared and writes are accepted again (RocksDB's
     * {@code OnErrorRecoveryCompleted} with the old error). When a step of the resume fails instead, this is not
     * called: {@link #onBackgroundError} tells of the new error, which stops writes as before.
     */
    default void onErrorRecoveryCompleted(ErrorRecoveryInfo info) {}
}
