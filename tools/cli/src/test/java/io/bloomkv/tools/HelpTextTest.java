package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.UsageMessageSpec;

/**
 * The help texts of every command and subcommand (the bench's too, mounted as {@code bloomkv bench}): the summary a
 * command list shows is a whole sentence, and no hand-broken description line is wider than the usage width.
 */
class HelpTextTest {
    /** The width the help is laid out for (picocli's default; a terminal may be wider, never assumed narrower). */
    static final int WIDTH = UsageMessageSpec.DEFAULT_USAGE_WIDTH;

    /** Every command of the tree under {@code cl}, itself first. */
    private static List<CommandLine> commands(CommandLine cl) {
        List<CommandLine> all = new ArrayList<>();
        all.add(cl);
        for (CommandLine sub : cl.getSubcommands().values()) {
            all.addAll(commands(sub));
        }
        return all;
    }

    /** What picocli shows for a command in its parent's command list: the first header line, else the first description line. */
    private static String summary(UsageMessageSpec usage) {
        return usage.header().length > 0
                ? usage.header()[0]
                : usage.description().length > 0 ? usage.description()[0] : "";
    }

    @Test
    void everyCommandHasACompleteSummaryAndLinesWithinTheWidth() {
        List<CommandLine> commands = commands(BloomKvCli.newCommandLine());
        assertThat(commands)
                .extracting(c -> c.getCommandSpec().qualifiedName())
                .contains("bloomkv", "bloomkv sst dump", "bloomkv db stats", "bloomkv backup purge", "bloomkv bench");
        SoftAssertions soft = new SoftAssertions();
        for (CommandLine c : commands) {
            String name = c.getCommandSpec().qualifiedName();
            UsageMessageSpec usage = c.getCommandSpec().usageMessage();
            String summary = summary(usage).strip();
            soft.assertThat(summary)
                    .as("summary of '%s' (its first description line) must be a whole sentence", name)
                    .isNotEmpty()
                    .doesNotEndWith(":")
                    .doesNotEndWith(",")
                    .endsWith(".");
            List<String> lines = new ArrayList<>();
            lines.addAll(List.of(usage.header()));
            lines.addAll(List.of(usage.description()));
            lines.addAll(List.of(usage.footer()));
            for (String line : lines) {
                soft.assertThat(line.length())
                        .as("help line of '%s' wider than %d columns: %s", name, WIDTH, line)
                        .isLessThanOrEqualTo(WIDTH);
            }
        }
        soft.assertAll();
    }

    /** {@code sst dump} takes no keys or values, so its hex options speak of output only; it lists every type it prints. */
    @Test
    void sstDumpHelpDescribesWhatItPrints() {
        CommandLine dump = BloomKvCli.newCommandLine()
                .getSubcommands()
                .get("sst")
                .getSubcommands()
                .get("dump");
        for (String option : List.of("--hex", "--key-hex", "--value-hex")) {
            assertThat(String.join(" ", dump.getCommandSpec().findOption(option).description()))
                    .as("description of sst dump %s", option)
                    .doesNotContainIgnoringCase("input")
                    .contains("hex");
        }
        String help = dump.getUsageMessage();
        assertThat(help).contains("PUT|DEL|MERGE").contains("range deletions ([begin, end) @sequence)");
    }
}
