package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bloomkv backup create|list|verify|restore}, and a corrupted backup file refused with exit code 4. */
class BackupCommandTest {
    @TempDir
    Path tmp;

    @Test
    void createListVerifyRestore() throws Exception {
        String db = tmp.resolve("db").toString();
        String backups = tmp.resolve("backups").toString();
        assertThat(Cli.run("put", db, "--create", "--flush", "apple", "red").exitCode()).isZero();
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
        Cli.Result refused = Cli.run("backup", "restore", backups, "1", tmp.resolve("again").toString());
        assertThat(refused.exitCode()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(Cli.run("backup", "list", tmp.resolve("nothing").toString()).exitCode()).isEqualTo(ExitCodes.IO_ERROR);
    }
}
