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
