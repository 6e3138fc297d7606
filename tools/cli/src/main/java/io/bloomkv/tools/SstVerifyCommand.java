package io.bloomkv.tools;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.inspect.DatabaseFiles;
import io.bloomkv.engine.inspect.LogDump;
import io.bloomkv.engine.inspect.TableDump;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv sst verify FILE|DB_DIR}: reads every block of the table (or of every table, WAL and
 * MANIFEST of the database directory) and checks its checksum. Prints one line per file and one per
 * bad block; exits 0 only when everything is good, {@link ExitCodes#CORRUPTION} otherwise. A torn
 * WAL tail (a crash mid-write, cut on the next open) is reported but is not an error.
 */
@Command(
        name = "verify",
        mixinStandardHelpOptions = true,
        description = {
            "Check every checksum of a table file, or of a whole database directory.",
            "In a database directory every table, WAL and MANIFEST is checked (a WAL or",
            "MANIFEST file may also be given by itself). Names every bad block.",
            "Exit code 0 only when all are good, 4 otherwise."
        })
final class SstVerifyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(
            index = "0",
            paramLabel = "FILE|DB_DIR",
            description = "A table file (or a WAL or MANIFEST file) or a database directory.")
    Path target;

    /** Totals over the files checked. */
    private int files;

    private int badFiles;
    private int badBlocks;

    @Override
    public Integer call() throws IOException {
        if (!Files.exists(target)) {
            throw new CliException(ExitCodes.IO_ERROR, "no such file or directory: " + target);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (Files.isDirectory(target)) {
            List<DatabaseFiles.DbFile> files = DatabaseFiles.list(target).stream()
                    .filter(f -> f.kind() == DatabaseFiles.Kind.TABLE
                            || f.kind() == DatabaseFiles.Kind.WAL
                            || f.kind() == DatabaseFiles.Kind.MANIFEST)
                    .toList();
            if (files.isEmpty()) {
                throw new CliException(ExitCodes.IO_ERROR, target + " holds no table, WAL or MANIFEST file");
            }
            for (DatabaseFiles.DbFile f : files) {
                if (f.kind() == DatabaseFiles.Kind.TABLE) {
                    verifyTable(out, f.path());
                } else {
                    verifyLog(out, f.path(), f.kind().name());
                }
            }
        } else {
            // A WAL or MANIFEST given by itself is checked as in a directory (read as a table it would fail).
            DatabaseFiles.Kind kind = TableFiles.kindByName(target);
            if (kind == DatabaseFiles.Kind.WAL || kind == DatabaseFiles.Kind.MANIFEST) {
                verifyLog(out, target, kind.name());
            } else {
                verifyTable(out, target);
            }
        }
        out.println("verified " + files + (files == 1 ? " file" : " files") + ": "
                + (badFiles == 0
                        ? "all checksums good"
                        : badBlocks + " bad " + (badBlocks == 1 ? "block" : "blocks") + " in " + badFiles
                                + (badFiles == 1 ? " file" : " files")));
        out.flush();
        if (badFiles > 0) {
            throw new CliException(
                    ExitCodes.CORRUPTION,
                    badBlocks + " bad " + (badBlocks == 1 ? "block" : "blocks") + " in " + badFiles + " of " + files
                            + (files == 1 ? " file" : " files") + " (listed on stdout)");
        }
        return ExitCodes.OK;
    }

    private void verifyTable(PrintWriter out, Path file) throws IOException {
        files++;
        List<TableDump.BadBlock> bad;
        int blocks;
        try (TableDump t = TableFiles.open(file)) {
            bad = t.verifyChecksums();
            blocks = t.blockCount();
        } catch (CorruptionException e) {
            // The footer, index or properties block is damaged: the table cannot even be opened.
            badFiles++;
            badBlocks++;
            out.println("BAD  " + file + ": cannot open: " + e.getMessage());
            return;
        }
        if (bad.isEmpty()) {
            out.println("OK   " + file + ": " + blocks + " blocks and the footer");
            return;
        }
        badFiles++;
        badBlocks += bad.size();
        out.println("BAD  " + file + ": " + bad.size() + " of " + blocks + " blocks bad");
        for (TableDump.BadBlock b : bad) {
            out.println("       " + b.kind() + " block at offset " + b.offset() + " (size " + b.size() + "): "
                    + b.problem());
        }
    }

    private void verifyLog(PrintWriter out, Path file, String what) throws IOException {
        files++;
        try {
            LogDump.Summary log = LogDump.read(file);
            String tail = log.tailDropped()
                    ? "; torn tail of " + log.droppedBytes() + " bytes after offset " + log.lastGoodOffset()
                            + " (a crash mid-write; cut on the next open)"
                    : "";
            out.println("OK   " + file + ": " + what + ", " + log.records()
                    + (log.records() == 1 ? " record" : " records") + tail);
        } catch (CorruptionException e) {
            badFiles++;
            badBlocks++;
            out.println("BAD  " + file + ": " + what + " record: " + e.getMessage());
        }
    }
}
