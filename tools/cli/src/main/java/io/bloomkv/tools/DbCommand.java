package io.bloomkv.tools;

import picocli.CommandLine.Command;

/** {@code bloomkv db stats}: look at a whole database. */
@Command(
        name = "db",
        mixinStandardHelpOptions = true,
        description = "Look at a whole database: levels, tables, filter memory, a read probe.",
        subcommands = {DbStatsCommand.class})
final class DbCommand {}
