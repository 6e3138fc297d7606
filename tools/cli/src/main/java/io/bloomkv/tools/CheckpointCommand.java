package io.bloomkv.tools;

import io.bloomkv.engine.Db;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv checkpoint DB_DIR CHECKPOINT_DIR}: {@link Db#checkpoint} of a database that no other process has
 * open (the command opens it, which takes its lock), opened with automatic compaction off ({@link
 * DbOpener#copyOptions}). A running service takes its checkpoints through the API.
 */
@Command(
        name = "checkpoint",
        mixinStandardHelpOptions = true,
        description = {
            "Write a consistent copy of the database into CHECKPOINT_DIR.",
            "CHECKPOINT_DIR must not exist or be empty. Tables are hard-linked where the",
            "file system allows, copied otherwise; the copy opens as a database. The source",
            "is opened with automatic compaction off: taking the copy starts no compaction",
            "in it."
        })
final class CheckpointCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory.")
    Path dir;

    @Parameters(index = "1", paramLabel = "CHECKPOINT_DIR", description = "Where the checkpoint goes.")
    Path target;

    @Mixin
    OpenOptions open;

    @Override
    public Integer call() throws IOException {
        // The target is checked before the source is opened: a refused checkpoint leaves the source as it was (an
        // open writes a WAL an earlier process left to a table). A file is exit code 3, as for every directory
        // argument; a non-empty directory exit code 2, as the engine's own refusal.
        if (Files.exists(target)) {
            if (!Files.isDirectory(target)) {
                throw new CliException(ExitCodes.IO_ERROR, "not a directory: " + target);
            }
            try (Stream<Path> entries = Files.list(target)) {
                if (entries.findAny().isPresent()) {
                    throw new CliException(
                            ExitCodes.USAGE,
                            "CHECKPOINT_DIR " + target + " is not empty (it must not exist or be empty)");
                }
            }
        }
        try (Db db = DbOpener.open(dir, open.apply(DbOpener.copyOptions()), false)) {
            db.checkpoint(target);
        }
        spec.commandLine().getOut().println("checkpoint of " + dir + " written to " + target);
        return ExitCodes.OK;
    }
}
