package io.bloomkv.tools;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

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
        return open(dir, options, create, null);
    }

    /**
     * {@link #open(Path, Options, boolean)} for a command that has an option to create the database ({@code
     * createOption}, e.g. {@code --create}): a missing or empty directory opened without it is refused with a message
     * naming the option. A writable open of an empty directory is refused before the engine is called, so the refusal
     * leaves the directory empty (the engine would take the LOCK first, leaving a LOCK file behind).
     */
    static Db open(Path dir, Options options, boolean create, String createOption) {
        requireDirectory(dir, create, createOption);
        if (!create && !options.readOnly()) {
            requireNotEmpty(dir, createOption);
        }
        return Db.open(dir, options.createIfMissing(create));
    }

    /** Refuses an empty directory (or one holding only a LOCK file) as "not a database", naming {@code createOption}. */
    private static void requireNotEmpty(Path dir, String createOption) {
        if (Files.exists(dir.resolve("CURRENT"))) {
            return;
        }
        try (Stream<Path> entries = Files.list(dir)) {
            if (entries.allMatch(p -> p.getFileName().toString().equals("LOCK"))) {
                throw new CliException(
                        ExitCodes.IO_ERROR,
                        dir + " is not a bloomkv database: the directory is empty"
                                + (createOption == null ? "" : " (give " + createOption + " to create one)"));
            }
        } catch (IOException e) {
            // Not readable: the engine's open reports it.
        }
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
        requireDirectory(dir, create, null);
    }

    /** {@link #requireDirectory(Path, boolean)}, naming {@code createOption} when a missing directory is refused. */
    static void requireDirectory(Path dir, boolean create, String createOption) {
        if (Files.exists(dir)) {
            if (!Files.isDirectory(dir)) {
                throw new CliException(ExitCodes.IO_ERROR, "not a directory: " + dir);
            }
        } else if (!create) {
            throw new CliException(
                    ExitCodes.IO_ERROR,
                    "no such database directory: " + dir
                            + (createOption == null ? "" : " (give " + createOption + " to create it)"));
        }
    }
}
