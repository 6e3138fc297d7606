package io.bloomkv.tools;

import picocli.CommandLine.Command;

/** {@code bloomkv bloom calc|test}: size a filter, or measure one. */
@Command(
        name = "bloom",
        mixinStandardHelpOptions = true,
        description = "Size a Bloom filter from the library's formulas, or build one and measure it.",
        subcommands = {BloomCalcCommand.class, BloomTestCommand.class})
final class BloomCommand {}
