package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bloomkv backup create|list|verify|restore|delete|purge|gc}, and a corrupted backup file refused with exit code
 * 4.
 */
class BackupCommandTest {
    @TempDir
    Path tmp;

    @Test
    void createListVerifyRestore() throws Exception {
        String db = tmp.resolve("db").toString();
        String backups = tmp.resolve("backups").toString();
        assertThat(Cli.run("put", db, "--create", "--flush", "apple", "red").exitCode())
                .isZero();
        Cli.Result created = Cli.run("backup", "create", db, backups);
        assertThat(created.exitCode()).as(created.toString()).isZero();
        assertThat(created.out()).startsWith("backup 1:");
        assertThat(Cli.run("put", db, "apple", "green").exitCode()).isZero();
        assertThat(Cli.run("backup", "create", db, backups).out()).startsWith("backup 2:");

        Cli.Result list = Cli.run("backup", "list", backups);
        assertThat(list.exitCode()).as(list.toString()).isZero();
        assertThat(list.out().lines().count()).isEqualTo(3);
        Cli.Result verify = Cli.run("backup", "verify", backups);
        assertThat(verify.out()).isEqualTo("backup 1: ok\nbackup 2: ok\n");

        String restored = tmp.resolve("restored").toString();
        Cli.Result restore = Cli.run("backup", "restore", backups, "1", restored);
        assertThat(restore.exitCode()).as(restore.toString()).isZero();
        assertThat(Cli.run("get", restored, "apple").out()).isEqualTo("red\n");

        // Damage every stored table: backup 1's table is among them.
        java.util.List<Path> victims;
        try (Stream<Path> s = Files.list(Path.of(backups, "shared"))) {
            victims = s.toList();
        }
        for (Path victim : victims) {
            try (RandomAccessFile f = new RandomAccessFile(victim.toFile(), "rw")) {
                f.seek(5);
                int b = f.read();
                f.seek(5);
                f.write(b ^ 1);
            }
        }
        Cli.Result bad = Cli.run("backup", "verify", backups, "1");
        assertThat(bad.exitCode()).as(bad.toString()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(victims).anyMatch(v -> bad.err().contains(v.getFileName().toString()));
        Cli.Result refused =
                Cli.run("backup", "restore", backups, "1", tmp.resolve("again").toString());
        assertThat(refused.exitCode()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(Cli.run("backup", "list", tmp.resolve("nothing").toString()).exitCode())
                .isEqualTo(ExitCodes.IO_ERROR);
    }

    /**
     * While a writable BackupEngine (a service's) holds the backup directory, create, delete, purge and gc fail with
     * exit code 5 and one line naming the directory, and change nothing; list and verify (read-only) still run; once it
     * closes, the commands work again (each command closes its own engine, so they also follow one another).
     */
    @Test
    void writableCommandsOnALockedBackupDirectoryAreExitFive() throws Exception {
        String db = tmp.resolve("db").toString();
        String backups = tmp.resolve("backups").toString();
        assertThat(Cli.run("put", db, "--create", "--flush", "apple", "red").exitCode())
                .isZero();
        assertThat(Cli.run("backup", "create", db, backups).exitCode()).isZero();
        java.util.Set<String> before;
        try (io.bloomkv.engine.BackupEngine held = io.bloomkv.engine.BackupEngine.open(Path.of(backups))) {
            before = files(Path.of(backups));
            for (String[] args : new String[][] {
                {"backup", "create", db, backups},
                {"backup", "delete", backups, "1"},
                {"backup", "purge", backups, "--keep", "0"},
                {"backup", "gc", backups}
            }) {
                Cli.Result r = Cli.run(args);
                assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.LOCKED);
                assertThat(r.err())
                        .startsWith("bloomkv backup " + args[1] + ": backup directory ")
                        .contains(Path.of(backups).toAbsolutePath().toString())
                        .contains("already open for writing");
                assertThat(r.err().lines()).hasSize(1);
            }
            assertThat(files(Path.of(backups))).isEqualTo(before);
            assertThat(Cli.run("backup", "list", backups).exitCode()).isZero();
            assertThat(Cli.run("backup", "verify", backups).out()).isEqualTo("backup 1: ok\n");
            assertThat(held.backups()).hasSize(1);
        }
        assertThat(Cli.run("backup", "create", db, backups).out()).startsWith("backup 2:");
        assertThat(Cli.run("backup", "delete", backups, "1").out()).isEqualTo("backup 1 deleted\n");
        assertThat(Cli.run("backup", "gc", backups).exitCode()).isZero();
    }

    private static java.util.Set<String> files(Path root) throws java.io.IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return new java.util.TreeSet<>(
                    s.map(p -> root.relativize(p).toString()).toList());
        }
    }

    /** backup create starts no compaction in the source, even when one is due; the backup restores every key. */
    @Test
    void createStartsNoCompactionAndBacksUpEveryKey() throws Exception {
        Path db = tmp.resolve("db");
        java.util.SortedMap<String, String> expected = TestDbs.compactionDue(db, 6);
        WatchedOpens watch = new WatchedOpens();
        String backups = tmp.resolve("backups").toString();
        Cli.Result created = Cli.run(watch, "backup", "create", db.toString(), backups);
        assertThat(created.exitCode()).as(created.toString()).isZero();
        assertThat(watch.installed).as("the listener watched the open").hasPositiveValue();
        assertThat(watch.compactions).as("compactions begun in the source").isEmpty();
        assertThat(TestDbs.levelTables(db)).startsWith(7, 0, 0);
        Path restored = tmp.resolve("restored");
        Cli.Result restore = Cli.run("backup", "restore", backups, "1", restored.toString());
        assertThat(restore.exitCode()).as(restore.toString()).isZero();
        assertThat(TestDbs.pairs(restored)).isEqualTo(expected);
    }

    /**
     * A backup whose metadata is damaged: listed as such, verify of all fails naming it, create still works, purge
     * neither counts nor deletes it and names it apart.
     */
    @Test
    void aBackupWithDamagedMetadataIsListedAndFailsVerify() throws Exception {
        String backups = oneBackup();
        String db = tmp.resolve("db").toString();
        Path meta = Path.of(backups, "meta", "1");
        Files.writeString(meta, Files.readString(meta).replace("timestamp", "timestamq"));
        Cli.Result created = Cli.run("backup", "create", db, backups);
        assertThat(created.exitCode()).as(created.toString()).isZero();
        assertThat(created.out()).startsWith("backup 2:");
        Cli.Result list = Cli.run("backup", "list", backups);
        assertThat(list.exitCode()).as(list.toString()).isZero();
        assertThat(list.out()).contains("1   metadata damaged").containsPattern("(?m)^2 ");
        Cli.Result verify = Cli.run("backup", "verify", backups);
        assertThat(verify.exitCode()).as(verify.toString()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(verify.err()).contains("meta");
        assertThat(Cli.run("backup", "verify", backups, "2").out()).isEqualTo("backup 2: ok\n");
        Cli.Result kept = Cli.run("backup", "purge", backups, "--keep", "1");
        assertThat(kept.exitCode()).as(kept.toString()).isZero();
        assertThat(kept.out()).isEqualTo("0 deleted, 1 kept; damaged, left for backup delete: 1\n");
        Cli.Result purged = Cli.run("backup", "purge", backups, "--keep", "0");
        assertThat(purged.out()).isEqualTo("backup 2 deleted\n1 deleted, 0 kept; damaged, left for backup delete: 1\n");
        assertThat(Cli.run("backup", "delete", backups, "1").out()).isEqualTo("backup 1 deleted\n");
        assertThat(Cli.run("backup", "list", backups).out()).doesNotContain("damaged");
    }

    /**
     * A backup naming a missing file: listed as damaged with the file, neither counted nor deleted by purge, and
     * removed by delete.
     */
    @Test
    void aBackupWithAMissingFileIsListedAsDamaged() throws Exception {
        String backups = oneBackup();
        assertThat(Cli.run("backup", "create", tmp.resolve("db").toString(), backups)
                        .exitCode())
                .isZero();
        Path manifest;
        try (java.util.stream.Stream<Path> s = Files.list(Path.of(backups, "private", "2"))) {
            manifest = s.filter(p -> p.getFileName().toString().startsWith("MANIFEST-"))
                    .findFirst()
                    .orElseThrow();
        }
        Files.delete(manifest);
        Cli.Result list = Cli.run("backup", "list", backups);
        assertThat(list.exitCode()).as(list.toString()).isZero();
        assertThat(list.out())
                .containsPattern("(?m)^1 ")
                .contains("2   damaged: backup 2: file is missing (file ")
                .contains(manifest.getFileName().toString());
        Cli.Result kept = Cli.run("backup", "purge", backups, "--keep", "0");
        assertThat(kept.out()).isEqualTo("backup 1 deleted\n1 deleted, 0 kept; damaged, left for backup delete: 2\n");
        assertThat(Cli.run("backup", "delete", backups, "2").out()).isEqualTo("backup 2 deleted\n");
        assertThat(Cli.run("backup", "list", backups).out()).doesNotContain("damaged");
    }

    /**
     * What an interrupted backup left (its checkpoint in tmp/, a private directory without metadata, a table no backup
     * names): list, verify and restore open the directory read-only and leave it; gc removes it and says how much.
     */
    @Test
    void gcRemovesWhatAnInterruptedBackupLeftAndListLeavesIt() throws Exception {
        String backups = oneBackup();
        Path work = Path.of(backups, "tmp", "2");
        Files.createDirectories(work);
        Files.writeString(work.resolve("CURRENT"), "MANIFEST-000001\n");
        Files.createDirectories(Path.of(backups, "private", "2"));
        Files.writeString(Path.of(backups, "private", "2", "CURRENT"), "MANIFEST-000001\n");
        Files.writeString(Path.of(backups, "shared", "9_0badf00d_5.sst"), "table");

        assertThat(Cli.run("backup", "list", backups).out()).containsPattern("(?m)^1 ");
        assertThat(Cli.run("backup", "verify", backups).out()).isEqualTo("backup 1: ok\n");
        assertThat(Cli.run("backup", "restore", backups, "1", tmp.resolve("r").toString())
                        .exitCode())
                .isZero();
        assertThat(work.resolve("CURRENT")).exists();
        assertThat(Path.of(backups, "shared", "9_0badf00d_5.sst")).exists();

        Cli.Result gc = Cli.run("backup", "gc", backups);
        assertThat(gc.exitCode()).as(gc.toString()).isZero();
        assertThat(gc.out()).isEqualTo("removed 3 files (37 bytes)\n");
        assertThat(work).doesNotExist();
        assertThat(Path.of(backups, "private", "2")).doesNotExist();
        assertThat(Path.of(backups, "shared", "9_0badf00d_5.sst")).doesNotExist();
        assertThat(Cli.run("backup", "verify", backups).out()).isEqualTo("backup 1: ok\n");
        assertThat(Cli.run("backup", "gc", backups).out()).isEqualTo("removed 0 files (0 bytes)\n");
        assertThat(Cli.run("backup", "gc", tmp.resolve("nothing").toString()).exitCode())
                .isEqualTo(ExitCodes.IO_ERROR);
    }

    /** tmp/db holding apple=red, backed up once into tmp/backups (returned). */
    private String oneBackup() {
        String db = tmp.resolve("db").toString();
        assertThat(Cli.run("put", db, "--create", "--flush", "apple", "red").exitCode())
                .isZero();
        String backups = tmp.resolve("backups").toString();
        assertThat(Cli.run("backup", "create", db, backups).exitCode()).isZero();
        return backups;
    }

    @Test
    void deleteAndPurge() throws Exception {
        String db = tmp.resolve("db").toString();
        String backups = tmp.resolve("backups").toString();
        assertThat(Cli.run("put", db, "--create", "--flush", "k1", "v1").exitCode())
                .isZero();
        for (int i = 1; i <= 4; i++) {
            assertThat(Cli.run("put", db, "--flush", "k" + (i + 1), "v" + (i + 1))
                            .exitCode())
                    .isZero();
            assertThat(Cli.run("backup", "create", db, backups).out()).startsWith("backup " + i + ":");
        }
        Cli.Result deleted = Cli.run("backup", "delete", backups, "2");
        assertThat(deleted.exitCode()).as(deleted.toString()).isZero();
        assertThat(deleted.out()).isEqualTo("backup 2 deleted\n");
        assertThat(Cli.run("backup", "verify", backups).out()).isEqualTo("backup 1: ok\nbackup 3: ok\nbackup 4: ok\n");
        Cli.Result missing = Cli.run("backup", "delete", backups, "2");
        assertThat(missing.exitCode()).as(missing.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.err()).contains("no backup 2");

        Cli.Result purged = Cli.run("backup", "purge", backups, "--keep", "1");
        assertThat(purged.exitCode()).as(purged.toString()).isZero();
        assertThat(purged.out()).isEqualTo("backup 1 deleted\nbackup 3 deleted\n2 deleted, 1 kept\n");
        assertThat(Cli.run("backup", "verify", backups).out()).isEqualTo("backup 4: ok\n");
        String restored = tmp.resolve("restored").toString();
        assertThat(Cli.run("backup", "restore", backups, "4", restored).exitCode())
                .isZero();
        assertThat(Cli.run("get", restored, "k5").out()).isEqualTo("v5\n");
        assertThat(Cli.run("backup", "purge", backups, "--keep", "-1").exitCode())
                .isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("backup", "purge", backups).exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("backup", "purge", backups, "--keep", "0").out())
                .isEqualTo("backup 4 deleted\n1 deleted, 0 kept\n");
        try (Stream<Path> s = Files.list(Path.of(backups, "shared"))) {
            assertThat(s.count()).as("no table left once no backup names it").isZero();
        }
    }
}
