package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bloomkv bench} runs the bench harness's own command when the bench is on the class path (it
 * is, for these tests, in test scope only); the CLI jar itself carries no bench and no RocksDB.
 */
class BenchMountTest {
    @TempDir
    Path tmp;

    @Test
    void runsATinyBench() {
        Path report = tmp.resolve("report");
        Cli.Result r = Cli.run(
                "bench",
                "--num",
                "500",
                "--engines",
                "bloomkv",
                "--filters",
                "on",
                "--workloads",
                "fillseq,readmissing",
                "--no-fpr-sweep",
                "--no-progress",
                "--db-dir",
                tmp.toString(),
                "--report-dir",
                report.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("readmissing", "useful (lookups avoided)");
        assertThat(Files.exists(report.resolve("results.json"))).isTrue();
    }

    @Test
    void badBenchFlagIsAUsageError() {
        Cli.Result r = Cli.run("bench", "--num", "0");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).startsWith("bloomkv bench: ").contains("--num");
        assertThat(r.err().lines()).hasSize(1);
    }

    @Test
    void aCommandClassNotOnTheClassPathIsNotMounted() {
        assertThat(BloomKvCli.commandIfPresent("io.bloomkv.bench.NoSuchCommand"))
                .isNull();
        assertThat(BloomKvCli.benchCommandIfPresent()).isNotNull();
        assertThat(BloomKvCli.newCommandLine().getSubcommands()).containsKey("bench");
    }

    @Test
    void helpListsTheBench() {
        assertThat(Cli.run("--help").out()).contains("bench", "db_bench");
        assertThat(Cli.run("bench", "--help").out()).contains("--workloads", "--bits-per-key");
    }
}
