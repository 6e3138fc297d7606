package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The help's parameter labels follow one convention across commands: an option of the same long name shows the same
 * label everywhere ({@code --seed=SEED}, {@code --input=FILE}, counts {@code N}, durations {@code SECONDS}), so a user
 * who learnt it in one command reads it the same in the next. A genuine difference (the same name for a different
 * kind of value) goes into {@link #ALLOWED} with its reason.
 *
 * <p>{@code bloomkv bench} is left out: it is the bench module's command, mounted as it is when the bench jar is on
 * the class path, and keeps picocli's default labels ({@code --seed=<seed>}) with its own documentation.
 */
class ParamLabelsTest {
    /** Long option names whose labels may differ between commands, each with the reason. None so far. */
    static final Map<String, String> ALLOWED = Map.of();

    /** Every command of the tree under {@code cl}, itself first, without the bench's. */
    private static List<CommandSpec> commands(CommandLine cl) {
        List<CommandSpec> all = new ArrayList<>();
        all.add(cl.getCommandSpec());
        for (CommandLine sub : cl.getSubcommands().values()) {
            if (sub.getCommandSpec().qualifiedName().equals("bloomkv bench")) {
                continue;
            }
            all.addAll(commands(sub));
        }
        return all;
    }

    /** Long option name -> label -> the commands showing it, for every option that takes a value. */
    private static Map<String, Map<String, TreeSet<String>>> labels() {
        Map<String, Map<String, TreeSet<String>>> labels = new TreeMap<>();
        for (CommandSpec c : commands(BloomKvCli.newCommandLine())) {
            for (OptionSpec o : c.options()) {
                if (o.arity().max() == 0) {
                    continue; // a flag shows no label (--ops of sst write is one, --ops N of stress is not)
                }
                labels.computeIfAbsent(o.longestName(), k -> new TreeMap<>())
                        .computeIfAbsent(o.paramLabel(), k -> new TreeSet<>())
                        .add(c.qualifiedName());
            }
        }
        return labels;
    }

    @Test
    void optionsOfTheSameNameShowTheSameLabelInEveryCommand() {
        Map<String, Map<String, TreeSet<String>>> labels = labels();
        assertThat(labels).as("the walk found the commands' options").containsKeys("--seed", "--input", "--ttl");
        Map<String, Map<String, TreeSet<String>>> differing = new TreeMap<>();
        labels.forEach((name, byLabel) -> {
            if (byLabel.size() > 1 && !ALLOWED.containsKey(name)) {
                differing.put(name, byLabel);
            }
        });
        assertThat(differing)
                .as("options whose label differs between commands (label -> commands)")
                .isEmpty();
        assertThat(ALLOWED.keySet())
                .as("allowed differences that no longer differ")
                .allMatch(name -> labels.containsKey(name) && labels.get(name).size() > 1);
    }

    @Test
    void everyOptionThatTakesAValueNamesItsLabel() {
        List<String> defaults = new ArrayList<>();
        labels().forEach((name, byLabel) -> byLabel.forEach((label, commands) -> {
            if (label.startsWith("<")) { // picocli's default: the field's name, e.g. <seed>
                defaults.add(name + "=" + label + " in " + commands);
            }
        }));
        assertThat(defaults).as("options showing picocli's default label").isEmpty();
    }

    @Test
    void seedsAndInputFilesFollowTheConvention() {
        Map<String, Map<String, TreeSet<String>>> labels = labels();
        assertThat(labels.get("--seed")).containsOnlyKeys("SEED");
        assertThat(labels.get("--input")).containsOnlyKeys("FILE");
        assertThat(labels.get("--probes")).containsOnlyKeys("N");
    }
}
