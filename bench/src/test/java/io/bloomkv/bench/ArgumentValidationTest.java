package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A bad flag value is a usage error before anything runs: its message on stderr, exit code 2, no stack trace (and
 * not an exception thrown minutes later, after the load, or from deep inside an engine).
 */
class ArgumentValidationTest {
    private static BenchRun bench(Path tmp, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--no-progress", "--no-fpr-sweep", "--warmup", "0"));
        return BenchRun.of(tmp, all);
    }

    private static void assertUsageError(BenchRun r, String message) {
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).contains(message).doesNotContain("Exception", "\tat ");
        assertThat(r.out()).as("nothing ran").doesNotContain("machine:");
    }

    @Test
    void aNegativeRateLimitIsAUsageError(@TempDir Path tmp) {
        assertUsageError(
                bench(tmp, "--num", "100", "--workloads", "readrandom", "--rate-limit", "-5"),
                "--rate-limit must be >= 0 (0 = unlimited), got -5");
    }

    @Test
    void moreReadsOrSeeksThanAPhaseCanHoldAreAUsageError(@TempDir Path tmp) {
        assertUsageError(
                bench(tmp, "--num", "100", "--workloads", "readrandom", "--reads", "3000000000"),
                "--reads must be at most 2147483639");
        assertUsageError(
                bench(tmp, "--num", "100", "--workloads", "seekrandom", "--seeks", "3000000000"),
                "--seeks must be at most 2147483639");
    }

    @Test
    void seekprefixWithTooFewKeysIsAUsageError(@TempDir Path tmp) {
        assertUsageError(
                bench(tmp, "--num", "10", "--workloads", "seekprefix"), "seekprefix needs --num >= 32, got 10");
    }

    /** A phase named twice in one run would count as two runs and pair each engine's run with the other's. */
    @Test
    void aWorkloadNamedTwiceIsAUsageError(@TempDir Path tmp) {
        assertUsageError(
                bench(tmp, "--num", "100", "--workloads", "readrandom,readmissing,readrandom"),
                "--workloads names readrandom twice");
        assertUsageError(
                bench(tmp, "--num", "100", "--workloads", "records,recordsread"),
                "--workloads names recordsread twice");
    }

    /** Neither engine reads with O_DIRECT on its own defaults, where the report had said both did. */
    @Test
    void directReadsOnTheEnginesOwnDefaultsIsAUsageError(@TempDir Path tmp) {
        assertUsageError(
                bench(tmp, "--num", "100", "--workloads", "readrandom", "--defaults", "--direct"),
                "--direct cannot be combined with --defaults");
    }

    @Test
    void cpuCostRejectsABadFlagWithoutAStackTraceAndHelpMeasuresNothing() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit =
                BenchMain.cpuCost(new String[] {"--num", "1"}, new PrintWriter(out, true), new PrintWriter(err, true));
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("--num must be at least 2, got 1").doesNotContain("\tat ");
        assertThat(out.toString()).isEmpty();

        err = new StringWriter();
        exit = BenchMain.cpuCost(new String[] {"--bogus"}, new PrintWriter(out, true), new PrintWriter(err, true));
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("Unknown option: '--bogus'").doesNotContain("\tat ");

        out = new StringWriter();
        exit = BenchMain.cpuCost(new String[] {"--help"}, new PrintWriter(out, true), new PrintWriter(err, true));
        assertThat(exit).isZero();
        assertThat(out.toString()).contains("Usage:").doesNotContain("puts in");
    }
}
