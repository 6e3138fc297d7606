package io.bloomkv.tools;

import java.util.function.LongSupplier;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * {@code --[no-]progress} of the long commands ({@code put --input}, {@code sst write}, {@code backup create},
 * {@code stress}, {@code crashtest}), as the bench's option: on by default, shown on stderr only ({@link Progress}).
 */
final class ProgressOption {
    @Option(
            names = "--progress",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "Show progress on stderr: a line redrawn in place on a terminal, else a line every few"
                    + " seconds on a long run (default: ${DEFAULT-VALUE}).")
    boolean enabled = true;

    /**
     * The clock (nanoseconds) and whether stderr is a terminal (null: {@link Progress#stderrIsTerminal} decides). Not
     * options: a test creates the command line with a factory that sets them, as {@link OpenOptions#listeners}.
     */
    LongSupplier clock = System::nanoTime;

    Boolean terminal;

    /** A display of {@code task} counting {@code unit} on the command's stderr. */
    Progress start(CommandSpec spec, String task, String unit) {
        boolean tty = enabled && (terminal != null ? terminal : Progress.stderrIsTerminal());
        return new Progress(spec.commandLine().getErr(), task, unit, enabled, tty, clock);
    }
}
