package io.bloomkv.tools;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import java.nio.file.Files;
import java.nio.file.Path;

/** Opens the database a command names, turning the common mistakes into one-line errors. */
final class DbOpener {
    private DbOpener() {}

    /**
     * Opens {@code dir} with {@code options}; when {@code create} is false the directory must
     * already exist.
     *
     * @throws CliException with {@link ExitCodes#IO_ERROR} for a missing directory or a regular file
     */
    static Db open(Path dir, Options options, boolean create) {
        requireDirectory(dir, create);
        return Db.open(dir, options.createIfMissing(create));
    }

    /**
     * Options of the commands that only read (get, scan, db stats): a read-only open, so reading a
     * database never changes its directory (no LOCK, no WAL flushed into a table, no compaction).
     */
    static Options readOptions() {
        return Options.defaults().readOnly(true);
    }

    /**
     * Options of the commands that copy a database (checkpoint, backup create): a writable open ({@code Db.checkpoint}
     * takes the LOCK and syncs the WAL) with automatic compaction off, as RocksDB's checkpoint and backup engine never
     * compact: taking a copy starts no compaction in the source, whatever the shape of its levels. The open still
     * writes a WAL left by an earlier process to a level-0 table (recovery), and a flush still works (it never waits
     * for a compaction: write stalls apply only with automatic compaction on), so the copy holds every write.
     */
    static Options copyOptions() {
        return Options.defaults().autoCompaction(false);
    }

    /** Checks that {@code dir} is an existing directory (or may be created when {@code create}). */
    static void requireDirectory(Path dir, boolean create) {
        if (Files.exists(dir)) {
            if (!Files.isDirectory(dir)) {
                throw new CliException(ExitCodes.IO_ERROR, "not a directory: " + dir);
            }
        } else if (!create) {
            throw new CliException(ExitCodes.IO_ERROR, "no such database directory: " + dir);
        }
    }
}
