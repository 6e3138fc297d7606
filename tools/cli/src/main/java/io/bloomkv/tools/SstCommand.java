package io.bloomkv.tools;

import picocli.CommandLine.Command;

/** {@code bloomkv sst dump|verify|write}: inspect and check table files, write one for ingest. */
@Command(
        name = "sst",
        mixinStandardHelpOptions = true,
        description = "Inspect table files like RocksDB's sst_dump, verify them, write one to ingest.",
        subcommands = {SstDumpCommand.class, SstVerifyCommand.class, SstWriteCommand.class})
final class SstCommand {}
