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
}
