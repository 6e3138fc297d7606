package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class BenchHelpTest {
    /** A bare '%' in a picocli description is a format error: picocli warns on stderr and prints the raw text. */
    @Test
    void helpFormatsEveryDescriptionWithoutWarnings() {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        String help;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            help = new CommandLine(new BenchCommand()).getUsageMessage(CommandLine.Help.Ansi.OFF);
        } finally {
            System.setErr(err);
        }
        assertThat(captured.toString(StandardCharsets.UTF_8)).doesNotContain("Could not format");
        // the help wraps lines: compare with runs of white space as one blank
        assertThat(help.replaceAll("\\s+", " "))
                .contains("readupdate (50% get / 50% read-modify-write)")
                .contains("readheavy (95% get / 5% update)");
    }

    /** --help names every subcommand BenchMain dispatches by hand, each with a one-line description. */
    @Test
    void helpListsTheHandDispatchedSubcommands() {
        String help = new CommandLine(new BenchCommand()).getUsageMessage(CommandLine.Help.Ansi.OFF);
        assertThat(help).contains("Other benches: java -jar bloomkv-bench.jar NAME [ARGS]");
        for (String name : List.of("cpu-cost", "jmh", "kafka-streams", "range-fpr", "rangeseek", "scale-chart")) {
            assertThat(help)
                    .as("bench --help names %s", name)
                    .containsPattern("(?m)^  " + Pattern.quote(name) + " +\\S.*\\.$");
        }
    }

    /** The phase warm-up's keys are generated before it runs: a count beyond the bound is a usage error, not an OOM. */
    @Test
    void phaseWarmupAboveItsBoundIsAUsageError() {
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new BenchCommand());
        cl.setOut(new PrintWriter(new StringWriter()));
        cl.setErr(new PrintWriter(err));
        int exit = cl.execute("--num", "1000", "--phase-warmup", String.valueOf(BenchConfig.MAX_PHASE_WARMUP + 1));
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("--phase-warmup must be in [0, 10000000], got 10000001");
    }

    /** A heap that may shrink between phases gets a note with the flags that fix it; a fixed heap gets none. */
    @Test
    void heapThatMayShrinkGetsTheFixedHeapAdvice() {
        assertThat(BenchCommand.heapAdvice(64L << 20, 2048L << 20))
                .contains("starts at 64 MiB of 2048 MiB")
                .contains("-Xms2g -Xmx2g -XX:+AlwaysPreTouch");
        assertThat(BenchCommand.heapAdvice(2048L << 20, 2048L << 20)).isNull();
        assertThat(BenchCommand.heapAdvice(-1, 2048L << 20)).isNull(); // undefined initial size: nothing to say
    }

    /** --direct with Bloom-type filters gets a note naming the Ribbon setting; Ribbon, no filters or no --direct none. */
    @Test
    void directReadsWithBloomFiltersGetTheRibbonAdvice() {
        assertThat(BenchCommand.directFilterAdvice(true, true, "BLOCKED"))
                .contains("BLOCKED filters")
                .contains("--filter-kind RIBBON+MEMORY");
        assertThat(BenchCommand.directFilterAdvice(true, true, "blocked+monkey"))
                .contains("blocked+monkey filters");
        assertThat(BenchCommand.directFilterAdvice(true, true, "RIBBON+MEMORY")).isNull();
        assertThat(BenchCommand.directFilterAdvice(true, true, "RIBBON@2")).isNull();
        assertThat(BenchCommand.directFilterAdvice(false, true, "BLOCKED")).isNull();
        assertThat(BenchCommand.directFilterAdvice(true, false, "BLOCKED")).isNull();
    }
}
