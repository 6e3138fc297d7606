package io.bloomkv.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.record.LogReader;
import io.bloomkv.engine.internal.record.LogWriter;
import io.bloomkv.engine.internal.util.ByteReader;
import io.bloomkv.engine.internal.version.FileNames;
import io.bloomkv.engine.internal.version.VersionEdit;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * What {@link Db#open} does to a directory before the database serves (LevelDB's DBImpl::Recover,
 * Pebble's open.go): create or replay the MANIFEST, replay every WAL not yet in a table into
 * level-0 tables (a torn tail is cut, damage before valid records is a {@link CorruptionException}),
 * start a new WAL and memtable, record it all in one edit, publish the first SuperVersion and delete
 * what is obsolete.
 */
final class Recovery {
    private final Path dir;
    private final Options options;
    private final FileSystem fs;
    private final VersionSet versions;
    private final TableOutputs outputs;
    private final ObsoleteFiles obsolete;
    private final DbState state;
    private final DbCounters counters;

    Recovery(
            Path dir,
            Options options,
            FileSystem fs,
            VersionSet versions,
            TableOutputs outputs,
            ObsoleteFiles obsolete,
            DbState state,
            DbCounters counters) {
        this.dir = dir;
        this.options = options;
        this.fs = fs;
        this.versions = versions;
        this.outputs = outputs;
        this.obsolete = obsolete;
        this.state = state;
        this.counters = counters;
    }

    /**
     * A directory with files but no CURRENT is a database only if every file is one of ours and no
     * table or WAL. @throws NotADatabaseException otherwise, or when {@code dir} is not a directory
     */
    static void checkLooksLikeDatabase(FileSystem fs, Path dir) throws IOException {
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
            throw new NotADatabaseException(
                    dir,
                    "no CURRENT file, but it holds " + foreign.subList(0, Math.min(5, foreign.size()))
                            + (foreign.size() > 5 ? " and " + (foreign.size() - 5) + " more" : ""));
        }
    }

    /**
     * Recovers for a read-only open: replays the MANIFEST and every live WAL into one memtable in
     * memory, and publishes it; writes nothing (no table, no WAL, no MANIFEST, no deletion).
     */
    void runReadOnly() throws IOException {
        if (!fs.exists(FileNames.currentFile(dir))) {
            throw new NotADatabaseException(dir, "it holds no database (a read-only open creates nothing)");
        }
        versions.recover();
        MemTable replay = new MemTable(0, 0, 0, options.memtablePointIndex());
        long maxSequence = replayLogs(liveLogs(), replay, null);
        versions.setLastSequence(maxSequence);
        state.lock();
        try {
            state.mem = replay;
            state.installSuperVersion();
        } finally {
            state.unlock();
        }
    }

    /** Recovers the database; on return it is ready to serve. */
    void run() throws IOException {
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
        VersionEdit edit = new VersionEdit();
        long maxSequence = replayLogs(liveLogs(), new MemTable(0, 0, 0, options.memtablePointIndex()), edit);
        versions.setLastSequence(maxSequence);
        long logNumber = versions.newFileNumber();
        LogWriter log = CommitPipeline.newLog(fs, FileNames.logFile(dir, logNumber), options);
        state.lock();
        try {
            state.log = log;
            state.logFileNumber = logNumber;
            state.mem = new MemTable(
                    logNumber,
                    options.writeBufferSize(),
                    options.memtableFilterBitsPerKey(),
                    options.memtablePointIndex());
        } finally {
            state.unlock();
        }
        edit.logNumber(logNumber);
        versions.logAndApply(edit);
        for (VersionEdit.LevelFile lf : edit.newFiles()) {
            obsolete.released(lf.file().number());
        }
        state.lock();
        try {
            state.installSuperVersion();
        } finally {
            state.unlock();
        }
        obsolete.enable(true);
        obsolete.delete();
    }

    /** The WALs at or after the MANIFEST's log number, by number; marks every file number present as used. */
    private TreeMap<Long, Path> liveLogs() throws IOException {
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
        return logs;
    }

    /**
     * Replays {@code logs} into {@code replay}; with an {@code edit}, a full memtable (and the last
     * one) is written to a level-0 table added to it, without one everything stays in {@code replay}.
     * Returns the largest sequence seen.
     */
    private long replayLogs(TreeMap<Long, Path> logs, MemTable replay, VersionEdit edit) throws IOException {
        long maxSequence = versions.lastSequence();
        // The last replayed log and its length up to its last complete record, for the next one's log-start record.
        long lastLog = -1;
        long lastLength = 0;
        replay:
        for (var entry : logs.entrySet()) {
            Path logPath = entry.getValue();
            try (ReadableFile f = fs.newReadableFile(logPath);
                    LogReader reader = new LogReader(f)) {
                byte[] record;
                boolean first = true;
                while ((record = reader.readRecord()) != null) {
                    if (first && LogStart.is(record)) {
                        first = false;
                        LogStart.Previous prev = LogStart.decode(record);
                        Long length = prev.logNumber() == lastLog ? lastLength : null; // null: not replayed, missing
                        if (prev.logNumber() >= versions.logNumber() && (length == null || length < prev.length())) {
                            // The log before this one came back shorter than it was written (a power loss took its
                            // unsynced end): this log's writes, and every later log's, follow writes that are lost.
                            // Replaying them would keep later writes without earlier ones; what survives must be a
                            // prefix of the writes. Not replayed, they are deleted once the recovered tables are
                            // recorded with a newer log number.
                            int dropped = logs.tailMap(entry.getKey(), true).size();
                            DbLog.LOG.warn(
                                    "[{}] WAL {} ends at {} of its {} bytes: {} later WAL(s) from {} not replayed",
                                    dir,
                                    prev.logNumber(),
                                    length == null ? "(missing)" : length,
                                    prev.length(),
                                    dropped,
                                    logPath.getFileName());
                            counters.walsNotReplayed.add(dropped);
                            break replay;
                        }
                        continue;
                    }
                    first = false;
                    long firstSequence;
                    int count;
                    try {
                        count = WriteBatch.countOf(record);
                        firstSequence = WriteBatch.decode(record, MemTableInserter.into(replay));
                    } catch (ByteReader.MalformedInputException e) {
                        throw new CorruptionException(
                                "WAL record does not parse as a write batch: " + e.getMessage(),
                                logPath,
                                reader.lastGoodOffset(),
                                e);
                    }
                    maxSequence = Math.max(maxSequence, firstSequence + count - 1);
                    if (edit != null && replay.approximateMemoryUsage() >= options.writeBufferSize()) {
                        outputs.writeLevel0Tables(replay, edit);
                        replay = new MemTable(0, 0, 0, options.memtablePointIndex());
                    }
                }
                if (reader.tailDropped()) {
                    counters.walTailsDropped.increment();
                }
                lastLog = entry.getKey();
                lastLength = reader.lastGoodOffset();
            }
        }
        if (edit != null) {
            outputs.writeLevel0Tables(replay, edit);
        }
        return maxSequence;
    }
}
