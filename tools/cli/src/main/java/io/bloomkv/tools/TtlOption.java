package io.bloomkv.tools;

import io.bloomkv.engine.Options;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * {@code --ttl}: opens a TTL database (Options.ttl). A database created with a TTL opens only with one (the engine
 * refuses otherwise with TtlMismatchException), and reads hide what is older than it; the duration may differ from the
 * one it was written with.
 */
final class TtlOption {
    @Option(
            names = "--ttl",
            paramLabel = "SECONDS",
            description =
                    "Open a TTL database (Options.ttl) with this TTL in seconds; values older than it read as absent. "
                            + "Needed for a database created with a TTL, refused for one without.")
    Long seconds;

    /** {@code options} with the TTL set (unchanged without the option). */
    Options apply(Options options) {
        if (seconds == null) {
            return options;
        }
        if (seconds < 1) {
            throw new CliException(ExitCodes.USAGE, "--ttl must be at least 1 second: " + seconds);
        }
        return options.ttl(Duration.ofSeconds(seconds));
    }
}
