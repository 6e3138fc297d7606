package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bloom.JvmEnvironment;
import io.bloomkv.tools.ProgressCommandsTest.Mode;
import io.bloomkv.tools.ProgressCommandsTest.Shown;
import java.io.IOException;
import java.nio.file.Files;
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
 * stdout, whose lines stay the results alone; {@code --no-progress} leaves stderr empty. A stress child that fails is
 * shown by its last lines, its error among them and no progress line: the children run with {@code --no-progress}.
 *
 * <p>The in-process crashtest gets the clock of {@link Shown}, which jumps 10 s at each reading, so every report of
 * the check prints a line however short the run. The failing child is {@link StressChildWithTestClock}: the real stress
 * command with that clock too, so that a child showing its progress would print a line at each report of its check at
 * open, before it fails.
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

    /**
     * A child that fails (here at the creation of its ingestion directory, {@code DB_DIR.ingest}, where a file stands,
     * after its check at open and before its threads start) is shown by its last lines: its settings, the result of its
     * check and its error line, and no progress line of its check.
     */
    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aFailedChildIsShownWithItsErrorAndNoProgressLine() throws IOException {
        Path blocked = Files.writeString(tmp.resolve("db.ingest"), "a file where stress wants a directory\n");
        CommandLine.IFactory childWithTestClock = new CommandLine.IFactory() {
            @Override
            public <K> K create(Class<K> type) throws Exception {
                K created = CommandLine.defaultFactory().create(type);
                if (created instanceof CrashTestCommand c) {
                    c.childMainClass = StressChildWithTestClock.class.getName();
                }
                return created;
            }
        };
        Cli.Result r = run(childWithTestClock, crashtest("db", 1, "CrashTestProgressTest.failedChild"));
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.NOT_FOUND);
        List<String> out = r.out().lines().toList();
        int at = -1;
        for (int i = 0; i < out.size(); i++) {
            if (out.get(i).endsWith("the stress child did not start its threads; its last output:")) {
                at = i;
            }
        }
        assertThat(at).as(r.toString()).isPositive();
        List<String> dump = new ArrayList<>();
        for (int i = at + 1; i < out.size() && out.get(i).startsWith("  | "); i++) {
            dump.add(out.get(i).substring("  | ".length()));
        }
        String error = "bloomkv stress: I/O error: " + blocked.toAbsolutePath().normalize();
        assertThat(dump)
                .as(r.toString())
                .allMatch(l -> l.startsWith("stress: seed ")
                        || l.startsWith("stress: open: " + KEYS + " keys verified: lost 0, wrong 0")
                        || l.equals(error));
        // All that the child printed, in order: its stdout (flushed at every line) and its stderr share the pipe that
        // crashtest reads.
        assertThat(dump).as(r.toString()).hasSize(3).last().isEqualTo(error);
        assertThat(out.get(out.size() - 1)).as(r.toString()).endsWith("children that failed 1");
        assertThat(r.err()).as("crashtest's own check did not run").isEmpty();
    }

    /**
     * A stress child for {@link #aFailedChildIsShownWithItsErrorAndNoProgressLine}: {@code bloomkv} with the arguments
     * crashtest gives a child, and the clock of {@link Shown} (plain lines), as {@link BloomKvCli#main} runs it.
     */
    public static final class StressChildWithTestClock {
        private StressChildWithTestClock() {}

        public static void main(String[] args) {
            System.setProperty("chronicle.analytics.disable", "true");
            System.setProperty("slf4j.internal.verbosity", "ERROR");
            System.setProperty(JvmEnvironment.NOTICE_PROPERTY, "false");
            System.exit(BloomKvCli.newCommandLine(new Shown(Mode.LINES)).execute(args));
        }
    }
}
