package io.bloomkv.engine;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The info log of a database (RocksDB's LOG file), through SLF4J: logger {@code io.bloomkv.engine.Db}, the
 * application's binding decides where it goes. Levels as a RocksDB LOG reader expects them: INFO for open,
 * recovery, close, flushes and compactions (begun and finished, with tables and bytes), {@link Db#resume}; WARN when
 * writes stall; ERROR for background errors. It is an {@link EventListener} the database adds to its own unless the
 * logger is off (ERROR disabled), so it runs on the event thread, never under an engine lock; a logger at WARN or ERROR
 * still gets the stalls and background errors.
 */
final class DbLog implements EventListener {
    static final Logger LOG = LoggerFactory.getLogger(Db.class);

    private final Logger log;

    DbLog() {
        this(LOG);
    }

    /** Writes to {@code log} (tests pass a recording logger). */
    DbLog(Logger log) {
        this.log = log;
    }

    /** {@code listeners} plus the log unless the logger is off (ERROR disabled). */
    static List<EventListener> withLog(List<EventListener> listeners) {
        return withLog(listeners, LOG);
    }

    /** {@code listeners} plus a log writing to {@code log}, unless it has ERROR disabled (then nothing would reach it). */
    static List<EventListener> withLog(List<EventListener> listeners, Logger log) {
        if (!log.isErrorEnabled()) {
            return listeners;
        }
        List<EventListener> out = new ArrayList<>(listeners);
        out.add(new DbLog(log));
        return out;
    }

    @Override
    public void onFlushBegin(FlushInfo info) {
        log.info(
                "[{}] flush begun: memtable of WAL {}, {} entries, {} bytes",
                info.directory(),
                info.walNumber(),
                info.entries(),
                info.memtableBytes());
    }

    @Override
    public void onFlushCompleted(FlushCompletedInfo info) {
        log.info(
                "[{}] flush finished: WAL {} -> table #{} ({} bytes, {} entries)",
                info.directory(),
                info.walNumber(),
                info.tableNumber(),
                info.tableBytes(),
                info.entries());
    }

    @Override
    public void onCompactionBegin(CompactionInfo info) {
        log.info(
                "[{}] compaction begun: L{} -> L{}, inputs {} ({} bytes){}",
                info.directory(),
                info.level(),
                info.outputLevel(),
                info.inputs(),
                info.inputBytes(),
                info.trivialMove() ? ", trivial move" : "");
    }

    @Override
    public void onCompactionCompleted(CompactionCompletedInfo info) {
        log.info(
                "[{}] compaction finished: L{} -> L{}, inputs {} -> outputs {}, read {} bytes, wrote {} bytes",
                info.directory(),
                info.level(),
                info.outputLevel(),
                info.inputs(),
                info.outputs(),
                info.bytesRead(),
                info.bytesWritten());
    }

    @Override
    public void onTableFileDeleted(TableFileDeletedInfo info) {
        if (info.error() == null) {
            log.debug("table file deleted: {}", info.path());
        } else {
            // the pass that failed already logged it at WARN
            log.debug("table file not deleted: {}", info.path(), info.error());
        }
    }

    @Override
    public void onWriteStallChanged(WriteStallInfo info) {
        if (info.stalled()) {
            log.warn(
                    "[{}] stalling writes: {} level-0 tables, {} memtables waiting for flush",
                    info.directory(),
                    info.level0Tables(),
                    info.immutableMemtables());
        } else {
            log.info("[{}] writes resumed", info.directory());
        }
    }

    @Override
    public boolean onBackgroundError(BackgroundErrorInfo info) {
        log.error(
                "[{}] background {} failed{}",
                info.directory(),
                info.operation(),
                info.recoverable() ? " (recoverable)" : ", writes stopped until resume() or reopen",
                info.error());
        return false;
    }

    /**
     * WARN that {@code tables} of the {@code of} live tables are read without a filter: the database calls it once per
     * open, when it first finds any (not an {@link EventListener} event: the log's own, delivered on the event thread).
     */
    void tablesWithoutFilter(java.nio.file.Path dir, int tables, int of) {
        log.warn(
                "[{}] {} of {} tables are read without a filter (none written, unusable, or too large for the filter"
                        + " memory budget): every get reaching them reads a block; see"
                        + " bloomkv.num-tables-without-filter and Db.tables()",
                dir,
                tables,
                of);
    }

    @Override
    public void onErrorRecoveryBegin(ErrorRecoveryInfo info) {
        log.info("[{}] resuming after the background {} error: {}", info.directory(), info.operation(), info.error());
    }

    @Override
    public void onErrorRecoveryCompleted(ErrorRecoveryInfo info) {
        log.info("[{}] resumed: the {} error is cleared, writes go on", info.directory(), info.operation());
    }
}
