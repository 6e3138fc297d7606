package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bloomkv checkpoint}: the copy answers as the source did; a non-empty target is refused. */
class CheckpointCommandTest {
    @TempDir
    Path tmp;

    @Test
    void checkpointCopiesTheDatabase() throws Exception {
        String db = tmp.resolve("db").toString();
        String cp = tmp.resolve("cp").toString();
        assertThat(Cli.run("put", db, "--create", "--flush", "apple", "red").exitCode())
                .isZero();
        assertThat(Cli.run("put", db, "pear", "green").exitCode()).isZero();
        Cli.Result r = Cli.run("checkpoint", db, cp);
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("written to");
        assertThat(Cli.run("put", db, "apple", "yellow").exitCode()).isZero();
        assertThat(Cli.run("get", cp, "apple").out()).isEqualTo("red\n");
        assertThat(Cli.run("get", cp, "pear").out()).isEqualTo("green\n");

        Files.writeString(tmp.resolve("full"), "");
        Path full = Files.createDirectories(tmp.resolve("fulldir"));
        Files.writeString(full.resolve("x"), "x");
        Cli.Result refused = Cli.run("checkpoint", db, full.toString());
        assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(refused.err()).contains("not empty");
    }

    /**
     * A checkpoint starts no compaction in the source (RocksDB's checkpoint does not compact), even when one is due
     * (more level-0 tables than the trigger), and the copy still holds every write, those the open recovered from the
     * WAL included.
     */
    @Test
    void checkpointStartsNoCompactionAndCopiesEveryKey() throws Exception {
        Path db = tmp.resolve("db");
        Path cp = tmp.resolve("cp");
        java.util.SortedMap<String, String> expected = TestDbs.compactionDue(db, 6);
        WatchedOpens watch = new WatchedOpens();
        Cli.Result r = Cli.run(watch, "checkpoint", db.toString(), cp.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(watch.installed).as("the listener watched the open").hasPositiveValue();
        assertThat(watch.compactions).as("compactions begun in the source").isEmpty();
        // Six tables and the one the open wrote from the WAL, all still in level 0.
        assertThat(TestDbs.levelTables(db)).startsWith(7, 0, 0);
        assertThat(TestDbs.pairs(cp)).isEqualTo(expected);
        assertThat(TestDbs.pairs(db)).isEqualTo(expected);
    }
}
