package io.bloomkv.tools;

import picocli.CommandLine.Command;

/** {@code bloomkv sst dump|verify}: inspect and check table files. */
@Command(name = "sst", mixinStandardHelpOptions = true,
        description = "Inspect table files (like RocksDB's sst_dump) and verify their checksums.",
        subcommands = {SstDumpCommand.class, SstVerifyCommand.class})
final class SstCommand {}
