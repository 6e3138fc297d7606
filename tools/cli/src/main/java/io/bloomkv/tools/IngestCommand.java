package io.bloomkv.tools;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.IngestOptions;
import io.bloomkv.engine.Options;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv ingest DB_DIR FILE...}: {@link Db#ingest} of table files written by {@code TableFileWriter} (or
 * {@code bloomkv sst write}) into a database that no other process has open (the command opens it, which takes its
 * lock). A running service ingests through the API.
 */
@Command(
        name = "ingest",
        mixinStandardHelpOptions = true,
        description = {
            "Add table files to the database, all or none.",
            "The files come from TableFileWriter (or 'bloomkv sst write'); their key ranges",
            "must not overlap. Files whose keys overlap nothing in the database go to the",
            "last level as written, others get a new sequence number (their values win",
            "over what the database held)."
        })
final class IngestCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory.")
    Path dir;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "FILE", description = "Table files to ingest.")
    List<Path> files;

    @Option(names = "--create", description = "Create the database if it does not exist (as for put).")
    boolean create;

    @Option(
            names = "--move",
            description = "Hard-link the files in and delete their original names (copied where "
                    + "links fail); default: copy them and leave the originals.")
    boolean move;

    @Option(
            names = "--no-flush",
            description =
                    "Refuse (exit code 2) instead of flushing when the memtable holds keys " + "in the files' ranges.")
    boolean noFlush;

    @Mixin
    OpenOptions open;

    @Override
    public Integer call() {
        for (Path f : files) {
            if (java.nio.file.Files.isDirectory(f)) {
                throw new CliException(ExitCodes.IO_ERROR, f + " is a directory, not a table file");
            }
            if (!java.nio.file.Files.isRegularFile(f)) {
                // A missing input is exit code 3, as for every command that reads a file (checked before the open).
                throw new CliException(ExitCodes.IO_ERROR, "no such file: " + f);
            }
        }
        try (Db db = DbOpener.open(dir, open.apply(Options.defaults()), create, "--create")) {
            db.ingest(files, IngestOptions.defaults().moveFiles(move).allowBlockingFlush(!noFlush));
        }
        spec.commandLine()
                .getOut()
                .println("ingested " + files.size() + " file" + (files.size() == 1 ? "" : "s") + " into " + dir);
        return ExitCodes.OK;
    }
}
