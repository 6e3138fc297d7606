package io.bloomkv.tools;

import io.bloomkv.engine.BackupEngine;
import io.bloomkv.engine.Db;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv backup create|list|restore|verify|delete|purge|gc}: a thin shell over {@link BackupEngine}
 * (incremental backups sharing tables by name and checksum). A corrupted backup file fails with exit code 4, naming the
 * file; a backup directory another writable engine holds ({@code BackupEngineLockedException}) fails create, delete,
 * purge and gc with exit code 5, as a locked database does. Every engine is closed before the command returns, so the
 * lock is released.
 */
@Command(
        name = "backup",
        mixinStandardHelpOptions = true,
        description = "Incremental backups: create, list, verify, restore, delete, purge, gc.",
        subcommands = {
            BackupCommand.Create.class,
            BackupCommand.ListBackups.class,
            BackupCommand.Verify.class,
            BackupCommand.Restore.class,
            BackupCommand.Delete.class,
            BackupCommand.Purge.class,
            BackupCommand.GarbageCollect.class
        })
final class BackupCommand {
    // Not a Callable: without a subcommand picocli reports "Missing required subcommand" in one line (exit code 2),
    // as for 'sst', 'db' and 'bloom'.

    /**
     * An existing backup directory, read-only: list, verify and restore write nothing there, so they may run while a
     * service makes a backup in it (a writable engine's first create, delete or purge would remove that backup's
     * unfinished files).
     */
    static BackupEngine existingReadOnly(Path backupDir) {
        checkExisting(backupDir);
        return BackupEngine.openReadOnly(backupDir);
    }

    /**
     * An existing backup directory, writable (its first delete or purge, or garbageCollect, removes what an interrupted
     * backup or delete left): delete, purge and gc never create one, nor its subdirectories in a directory that is not
     * one (BackupEngine.open would). The caller closes it, releasing the directory's lock.
     */
    static BackupEngine existing(Path backupDir) {
        checkExisting(backupDir);
        return BackupEngine.open(backupDir);
    }

    private static void checkExisting(Path backupDir) {
        if (Files.exists(backupDir) && !Files.isDirectory(backupDir)) {
            throw new CliException(ExitCodes.IO_ERROR, "not a directory: " + backupDir);
        }
        if (!Files.isDirectory(backupDir)) {
            throw new CliException(ExitCodes.IO_ERROR, "no such backup directory: " + backupDir);
        }
        if (!Files.isDirectory(backupDir.resolve("meta"))) {
            throw new CliException(ExitCodes.IO_ERROR, "not a backup directory (no meta/): " + backupDir);
        }
    }

    @Command(
            name = "create",
            mixinStandardHelpOptions = true,
            description = {
                "Back up the database in DB_DIR into BACKUP_DIR (created if missing).",
                "Prints the new backup's id. The database is opened with automatic compaction",
                "off: a backup starts no compaction in it."
            })
    static final class Create implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory.")
        Path dir;

        @Parameters(index = "1", paramLabel = "BACKUP_DIR", description = "The backup directory.")
        Path backupDir;

        @Mixin
        OpenOptions open;

        @Mixin
        ProgressOption progress;

        @Override
        public Integer call() {
            if (Files.isDirectory(dir.resolve("meta")) && !Files.exists(dir.resolve("CURRENT"))) {
                // The arguments swapped: the engine would say "no CURRENT file, but it holds [meta, private, ...]".
                throw new CliException(
                        ExitCodes.IO_ERROR,
                        dir + " is a backup directory, not a database (the order is: backup create DB_DIR BACKUP_DIR)");
            }
            if (Files.exists(backupDir) && !Files.isDirectory(backupDir)) {
                // Before the source is opened, and exit code 3 as for the other subcommands' BACKUP_DIR.
                throw new CliException(ExitCodes.IO_ERROR, "not a directory: " + backupDir);
            }
            BackupEngine.BackupInfo info;
            try (Progress shown = progress.start(spec, "backup", "files");
                    Db db = DbOpener.open(dir, open.apply(DbOpener.copyOptions()), false);
                    BackupEngine engine = BackupEngine.open(backupDir)) {
                info = engine.createBackup(db, new BackupEngine.Progress() {
                    @Override
                    public void started(int files, long bytes) {
                        shown.total(files, bytes);
                    }

                    @Override
                    public void progressed(int files, long bytes) {
                        shown.set(files, bytes);
                    }
                });
                shown.done();
            }
            spec.commandLine()
                    .getOut()
                    .println("backup " + info.id() + ": " + info.files().size() + " files, " + info.size() + " bytes");
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the backups in BACKUP_DIR.")
    static final class ListBackups implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "BACKUP_DIR", description = "The backup directory.")
        Path backupDir;

        @Override
        public Integer call() {
            try (BackupEngine engine = existingReadOnly(backupDir)) {
                list(engine);
            }
            return ExitCodes.OK;
        }

        private void list(BackupEngine engine) {
            List<BackupEngine.BackupInfo> all = engine.backups();
            PrintWriter out = spec.commandLine().getOut();
            out.println("id  created                   files  bytes");
            for (BackupEngine.BackupInfo b : all) {
                out.printf(
                        "%-3d %-25s %5d  %d%n",
                        b.id(),
                        Instant.ofEpochMilli(b.timestampMillis()),
                        b.files().size(),
                        b.size());
            }
            Path metaDir = engine.directory().resolve("meta");
            engine.corruptedBackupReasons().forEach((id, why) -> {
                if (why.file() != null && metaDir.equals(why.file().getParent())) {
                    out.printf(
                            "%-3d metadata damaged (backup verify %s %d names it; backup delete removes it)%n",
                            id, backupDir, id);
                } else {
                    // A file it names is missing or of the wrong size (the listing checks sizes, not checksums).
                    out.printf("%-3d damaged: %s (backup delete removes it)%n", id, why.getMessage());
                }
            });
        }
    }

    @Command(
            name = "verify",
            mixinStandardHelpOptions = true,
            description = "Check every file of backup ID (or of all backups) against its size and CRC32C.")
    static final class Verify implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "BACKUP_DIR", description = "The backup directory.")
        Path backupDir;

        @Parameters(index = "1", paramLabel = "ID", arity = "0..1", description = "The backup (default: all).")
        Integer id;

        @Override
        public Integer call() {
            try (BackupEngine engine = existingReadOnly(backupDir)) {
                verify(engine);
            }
            return ExitCodes.OK;
        }

        private void verify(BackupEngine engine) {
            List<Integer> ids;
            if (id != null) {
                ids = List.of(id);
            } else {
                // Every backup, those with damaged metadata too: verifying one names the damage and fails the run.
                java.util.TreeSet<Integer> all = new java.util.TreeSet<>(engine.corruptedBackups());
                engine.backups().forEach(b -> all.add(b.id()));
                ids = List.copyOf(all);
            }
            for (int i : ids) {
                engine.verify(i);
                spec.commandLine().getOut().println("backup " + i + ": ok");
            }
        }
    }

    @Command(
            name = "restore",
            mixinStandardHelpOptions = true,
            description = {
                "Restore backup ID into TARGET_DIR, checking every file.",
                "TARGET_DIR must not exist or be empty."
            })
    static final class Restore implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "BACKUP_DIR", description = "The backup directory.")
        Path backupDir;

        @Parameters(index = "1", paramLabel = "ID", description = "The backup.")
        int id;

        @Parameters(index = "2", paramLabel = "TARGET_DIR", description = "Where the database is restored.")
        Path target;

        @Override
        public Integer call() {
            try (BackupEngine engine = existingReadOnly(backupDir)) {
                engine.restore(id, target);
            }
            spec.commandLine().getOut().println("backup " + id + " restored to " + target);
            return ExitCodes.OK;
        }
    }

    @Command(
            name = "delete",
            mixinStandardHelpOptions = true,
            description = {
                "Delete backup ID and the stored tables no other backup uses.",
                "Crash-safe: the other backups stay whole."
            })
    static final class Delete implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "BACKUP_DIR", description = "The backup directory.")
        Path backupDir;

        @Parameters(index = "1", paramLabel = "ID", description = "The backup to delete.")
        int id;

        @Override
        public Integer call() {
            try (BackupEngine engine = existing(backupDir)) {
                engine.deleteBackup(id);
            }
            spec.commandLine().getOut().println("backup " + id + " deleted");
            return ExitCodes.OK;
        }
    }

    @Command(
            name = "purge",
            mixinStandardHelpOptions = true,
            description = {
                "Keep the N newest valid backups; delete older ones and the tables only they use.",
                "Damaged backups (metadata, or a file missing or of the wrong size) are neither",
                "counted nor deleted (as RocksDB's PurgeOldBackups): backup delete removes them."
            })
    static final class Purge implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "BACKUP_DIR", description = "The backup directory.")
        Path backupDir;

        @Option(
                names = "--keep",
                paramLabel = "N",
                required = true,
                description = "How many of the newest valid backups to keep.")
        int keep;

        @Override
        public Integer call() {
            if (keep < 0) {
                throw new CliException(ExitCodes.USAGE, "--keep must be >= 0, got " + keep);
            }
            try (BackupEngine engine = existing(backupDir)) {
                purge(engine);
            }
            return ExitCodes.OK;
        }

        private void purge(BackupEngine engine) {
            List<Integer> deleted = engine.purgeOldBackups(keep);
            PrintWriter out = spec.commandLine().getOut();
            for (int i : deleted) {
                out.println("backup " + i + " deleted");
            }
            // Kept: the valid backups, those --keep counts. Damaged backups (metadata, or a file missing or of the
            // wrong size) are neither counted nor deleted by a purge (as RocksDB's PurgeOldBackups): named apart, for
            // backup delete.
            String line = deleted.size() + " deleted, " + engine.backups().size() + " kept";
            List<Integer> damaged = engine.corruptedBackups();
            if (!damaged.isEmpty()) {
                line += "; damaged, left for backup delete: "
                        + damaged.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(", "));
            }
            out.println(line);
        }
    }

    @Command(
            name = "gc",
            mixinStandardHelpOptions = true,
            description = {
                "Remove the files no backup in BACKUP_DIR needs.",
                "What interrupted backups and deletes left; the files of damaged backups stay.",
                "Prints how many files and bytes were removed."
            })
    static final class GarbageCollect implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "BACKUP_DIR", description = "The backup directory.")
        Path backupDir;

        @Override
        public Integer call() throws java.io.IOException {
            long[] before = filesAndBytes(backupDir);
            // The open removes nothing, so the difference is what the collection removed; a failure is exit code 3.
            try (BackupEngine engine = existing(backupDir)) {
                engine.garbageCollect();
            }
            long[] after = filesAndBytes(backupDir);
            spec.commandLine()
                    .getOut()
                    .println("removed " + (before[0] - after[0]) + " files (" + (before[1] - after[1]) + " bytes)");
            return ExitCodes.OK;
        }

        private static long[] filesAndBytes(Path dir) throws java.io.IOException {
            long[] n = new long[2];
            try (java.util.stream.Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.filter(Files::isRegularFile).toList()) {
                    n[0]++;
                    n[1] += Files.size(p);
                }
            }
            return n;
        }
    }
}
