package io.bloomkv.tools;

import picocli.CommandLine.Option;

/** The mutually exclusive {@code --fpp P} / {@code --bits-per-key B} choice of the bloom commands. */
final class FilterSizing {
    @Option(
            names = "--fpp",
            paramLabel = "P",
            required = true,
            description = "Target false-positive probability, in (0, 1).")
    Double fpp;

    @Option(
            names = "--bits-per-key",
            paramLabel = "B",
            required = true,
            description = "Bits (counters, for COUNTING) per key, > 0.")
    Double bitsPerKey;
}
