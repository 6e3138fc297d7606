package io.bloomkv.tools;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.table.TableReader;
import io.bloomkv.engine.version.FileNames;
import io.bloomkv.engine.wal.LogReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code bloomkv sst verify FILE|DB_DIR}: reads every block of the table (or of every table, WAL and
 * MANIFEST of the database directory) and checks its checksum. Prints one line per file and one per
 * bad block; exits 0 only when everything is good, {@link ExitCodes#CORRUPTION} otherwise. A torn
 * WAL tail (a crash mid-write, cut on the next open) is reported but is not an error.
 */
@Command(name = "verify", mixinStandardHelpOptions = true,
        description = {"Check every checksum of a table file, or of every table, WAL and MANIFEST",
            "of a database directory. Names every bad block. Exit code 0 only when all",
            "are good, 4 otherwise."})
final class SstVerifyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE|DB_DIR", description = "A table file or a database directory.")
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
            List<Path> paths = databaseFiles(target);
            if (paths.isEmpty()) {
                throw new CliException(ExitCodes.IO_ERROR, target + " holds no table, WAL or MANIFEST file");
            }
            for (Path p : paths) {
                FileNames.Kind kind = FileNames.parse(p.getFileName().toString()).kind();
                if (kind == FileNames.Kind.TABLE) {
                    verifyTable(out, p);
                } else {
                    verifyLog(out, p, kind == FileNames.Kind.MANIFEST ? "MANIFEST" : "WAL");
                }
            }
        } else {
            verifyTable(out, target);
        }
        out.println("verified " + files + (files == 1 ? " file" : " files") + ": "
                + (badFiles == 0 ? "all checksums good" : badBlocks + " bad " + (badBlocks == 1 ? "block" : "blocks")
                        + " in " + badFiles + (badFiles == 1 ? " file" : " files")));
        out.flush();
        if (badFiles > 0) {
            throw new CliException(ExitCodes.CORRUPTION, badBlocks + " bad " + (badBlocks == 1 ? "block" : "blocks")
                    + " in " + badFiles + " of " + files + (files == 1 ? " file" : " files") + " (listed on stdout)");
        }
        return ExitCodes.OK;
    }

    /** Tables, WALs and MANIFESTs of {@code dir}, by name. */
    private static List<Path> databaseFiles(Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.sorted().forEach(p -> {
                FileNames.Parsed parsed = FileNames.parse(p.getFileName().toString());
                if (parsed != null && (parsed.kind() == FileNames.Kind.TABLE || parsed.kind() == FileNames.Kind.LOG
                        || parsed.kind() == FileNames.Kind.MANIFEST)) {
                    out.add(p);
                }
            });
        }
        return out;
    }

    private void verifyTable(PrintWriter out, Path file) throws IOException {
        files++;
        List<TableReader.BadBlock> bad;
        int blocks;
        try (TableReader t = TableFiles.open(file)) {
            bad = t.verifyChecksums();
            blocks = t.indexEntries().size() + 2 + (t.footer().hasFilter() ? 1 : 0);
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
        for (TableReader.BadBlock b : bad) {
            out.println("       " + b.kind() + " block at offset " + b.offset() + " (size " + b.size() + "): " + b.problem());
        }
    }

    private void verifyLog(PrintWriter out, Path file, String what) throws IOException {
        files++;
        long records = 0;
        try (ReadableFile f = FileSystem.disk().newReadableFile(file); LogReader reader = new LogReader(f)) {
            while (reader.readRecord() != null) {
                records++;
            }
            String tail = reader.tailDropped()
                    ? "; torn tail of " + reader.droppedBytes() + " bytes after offset " + reader.lastGoodOffset()
                            + " (a crash mid-write; cut on the next open)"
                    : "";
            out.println("OK   " + file + ": " + what + ", " + records + " records" + tail);
        } catch (CorruptionException e) {
            badFiles++;
            badBlocks++;
            out.println("BAD  " + file + ": " + what + " record after " + records + " good records: " + e.getMessage());
        }
    }
}
