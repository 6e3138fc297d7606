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
     * Options of the commands that only read (get, scan): no automatic compaction, so reading a
     * database does not start rewriting it. (Opening still replays and flushes a leftover WAL.)
     */
    static Options readOptions() {
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
