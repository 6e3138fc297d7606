package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.tools.ProgressCommandsTest.Mode;
import io.bloomkv.tools.ProgressCommandsTest.Shown;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The progress of {@code bloomkv crashtest}: the check after each kill shows the keys it has checked on stderr (plain
 * lines counting up to the expected state's keys and a done line, or a line redrawn and erased on a terminal), never on
 * stdout, whose lines stay the results alone; {@code --no-progress} leaves stderr empty.
 *
 * <p>The in-process crashtest gets the clock of {@link Shown}, which jumps 10 s at each reading, so every report of
 * the check prints a line however short the run.
 */
class CrashTestProgressTest {
    @TempDir
    Path tmp;

    private static final int KEYS = 2000;

    private List<String> crashtest(String db, int rounds, String seedName, String... more) {
        long seed = StressCommandsTest.seed(seedName);
        List<String> args = new ArrayList<>(List.of(
                "crashtest",
                tmp.resolve(db).toString(),
                "--rounds=" + rounds,
                "--keys=" + KEYS,
                "--threads=2",
                "--kill-min-ms=50",
                "--kill-max-ms=300",
                "--seed=" + seed));
        args.addAll(List.of(more));
        return args;
    }

    private static Cli.Result run(CommandLine.IFactory factory, List<String> args) {
        return Cli.run(factory, args.toArray(String[]::new));
    }

    /** Stdout of a crashtest run of {@code rounds} rounds that lost nothing: banner, a line per round, summary. */
    private static void assertResultsOnly(Cli.Result r, int rounds) {
        assertThat(r.exitCode()).as(r.toString()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines).as(r.toString()).hasSize(rounds + 2);
        assertThat(lines.get(0)).startsWith("crashtest: seed ");
        for (int round = 0; round < rounds; round++) {
            assertThat(lines.get(1 + round))
                    .matches("crashtest: round " + round + ": killed after [0-9]+ ms; " + KEYS
                            + " keys verified: lost 0, wrong 0.*");
        }
        assertThat(lines.get(rounds + 1))
                .startsWith("crashtest: " + rounds + " rounds in ")
                .endsWith("lost 0, failed opens 0, wrong answers 0, children that failed 0");
    }

    /**
     * The plain lines of the check after round {@code round}: a report before the first key, every 1024 keys and after
     * the last, then the done line.
     */
    private static List<String> checkLines(int round) {
        String task = "crashtest: round " + round + " check: ";
        return List.of(
                task + "0 of 2,000 keys (0%)",
                task + "1,024 of 2,000 keys (51%)",
                task + "2,000 of 2,000 keys (100%)",
                task + "done: 2,000 of 2,000 keys (100%)");
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void theCheckAfterEachKillShowsTheKeysCheckedOnStderrOnly() {
        Shown lines = new Shown(Mode.LINES);
        Cli.Result r = run(lines, crashtest("lines", 2, "CrashTestProgressTest.lines"));
        assertThat(lines.installed)
                .as("the factory made crashtest's --progress mixin")
                .isPositive();
        assertResultsOnly(r, 2);
        List<String> expected = new ArrayList<>(checkLines(0));
        expected.addAll(checkLines(1));
        assertThat(r.err().lines()).as(r.toString()).containsExactlyElementsOf(expected);

        Cli.Result t = run(new Shown(Mode.TERMINAL), crashtest("terminal", 1, "CrashTestProgressTest.terminal"));
        assertResultsOnly(t, 1);
        assertThat(t.err())
                .as(t.toString())
                .contains("\rcrashtest: round 0 check: 0 of 2,000 keys (0%)")
                .contains("\rcrashtest: round 0 check: 2,000 of 2,000 keys (100%)");
        assertThat(ProgressCommandsTest.screen(t.err()))
                .as("the line is erased before the round's result")
                .isEmpty();
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void noProgressLeavesStderrEmpty() {
        for (Mode mode : Mode.values()) {
            Cli.Result r =
                    run(new Shown(mode), crashtest("quiet-" + mode, 1, "CrashTestProgressTest.quiet", "--no-progress"));
            assertResultsOnly(r, 1);
            assertThat(r.err()).as(r.toString()).isEmpty();
        }
    }
}
