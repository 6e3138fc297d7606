package io.bloomkv.tools;

import io.bloomkv.engine.InvalidArgumentException;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.TableFileWriter;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv sst write FILE --input FILE}: a table file for {@code bloomkv ingest}, through {@link TableFileWriter},
 * from {@code KEY<TAB>VALUE} lines sorted by key (byte order); an unsorted or repeated key stops it (exit code 2) and
 * no file is left. With {@code --ops} each line is an operation instead: {@code put|merge<TAB>KEY<TAB>VALUE},
 * {@code delete<TAB>KEY} or {@code delete-range<TAB>BEGIN<TAB>END}, under the writer's rules (puts, merges and deletes
 * in strictly increasing key order, one per key; range deletions anywhere, BEGIN not after END).
 */
@Command(
        name = "write",
        mixinStandardHelpOptions = true,
        description = {
            "Write a table file for 'bloomkv ingest' from sorted KEY<TAB>VALUE lines.",
            "The lines must be sorted by key (byte order); the table gets the default",
            "options' filter and block layout. An unsorted or repeated key stops it",
            "(exit code 2) and no file is left. With --ops each line is one of",
            "  put<TAB>KEY<TAB>VALUE, merge<TAB>KEY<TAB>OPERAND, delete<TAB>KEY,",
            "  delete-range<TAB>BEGIN<TAB>END",
            "where put, merge and delete keys are strictly increasing (one entry per",
            "key) and delete-range lines may come anywhere (BEGIN must not sort after",
            "END; BEGIN = END deletes nothing)."
        })
final class SstWriteCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The table file to write (replaced if it exists).")
    Path file;

    @Option(
            names = "--input",
            paramLabel = "FILE",
            defaultValue = "-",
            description = "KEY<TAB>VALUE lines, or operation lines with --ops (default: - = stdin).")
    String input;

    @Option(
            names = "--ops",
            description = "Read operation lines (put, merge, delete, delete-range) instead of KEY<TAB>VALUE pairs.")
    boolean ops;

    @Mixin
    KeyValueFormat format;

    @Mixin
    ProgressOption progress;

    /** The key of the last put, merge or delete, and its line: the order the writer requires, checked per line. */
    private byte[] lastKey;

    private long lastKeyLine;

    private long puts;
    private long merges;
    private long deletes;
    private long rangeDeletions;

    @Override
    public Integer call() throws IOException {
        try (Progress shown = progress.start(spec, "sst write", "lines");
                BufferedReader in = shown.lines(input);
                TableFileWriter w = TableFileWriter.create(file, Options.defaults())) {
            long lineNo = 0;
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                lineNo++;
                shown.advance(1, 0); // the bytes come from the input stream
                if (line.isEmpty()) {
                    continue;
                }
                if (ops) {
                    writeOperation(w, line, lineNo);
                    continue;
                }
                int tab = line.indexOf('\t');
                if (tab < 0) {
                    throw new CliException(
                            ExitCodes.USAGE, input + ":" + lineNo + ": expected KEY<TAB>VALUE, found no tab");
                }
                byte[] k;
                byte[] v;
                try {
                    k = format.keys().parse(line.substring(0, tab));
                    v = format.values().parse(line.substring(tab + 1));
                } catch (IllegalArgumentException e) {
                    throw new CliException(ExitCodes.USAGE, input + ":" + lineNo + ": " + e.getMessage());
                }
                checkOrder(k, lineNo);
                add(lineNo, () -> w.put(k, v));
                puts++;
            }
            if (puts + merges + deletes + rangeDeletions == 0) {
                // The writer would refuse it in its API's words; closing it unfinished leaves no file.
                throw new CliException(
                        ExitCodes.USAGE,
                        "no entries in " + (input.equals("-") ? "stdin" : input)
                                + ": a table file needs at least one entry or range deletion");
            }
            w.finish();
            shown.done();
        }
        String wrote = ops
                ? count(puts, "put") + ", " + count(merges, "merge") + ", " + count(deletes, "delete") + ", "
                        + count(rangeDeletions, "range deletion")
                : puts + (puts == 1 ? " pair" : " pairs");
        spec.commandLine().getOut().println("wrote " + wrote + " to " + file);
        return ExitCodes.OK;
    }

    private static String count(long n, String what) {
        return n + " " + what + (n == 1 ? "" : "s");
    }

    /** One {@code --ops} line: the operation's name, a tab, then its fields. */
    private void writeOperation(TableFileWriter w, String line, long lineNo) {
        int tab = line.indexOf('\t');
        String op = tab < 0 ? line : line.substring(0, tab);
        String rest = tab < 0 ? null : line.substring(tab + 1);
        switch (op) {
            case "put", "merge" -> {
                int t = rest == null ? -1 : rest.indexOf('\t');
                if (t < 0) {
                    throw usage(
                            lineNo,
                            "expected " + op + "<TAB>KEY<TAB>" + (op.equals("put") ? "VALUE" : "OPERAND") + ", found "
                                    + (rest == null ? "no tab" : "no tab after the key"));
                }
                byte[] k = field(rest.substring(0, t), format.keys(), lineNo, "key");
                byte[] v =
                        field(rest.substring(t + 1), format.values(), lineNo, op.equals("put") ? "value" : "operand");
                checkOrder(k, lineNo);
                if (op.equals("put")) {
                    add(lineNo, () -> w.put(k, v));
                    puts++;
                } else {
                    add(lineNo, () -> w.merge(k, v));
                    merges++;
                }
            }
            case "delete" -> {
                if (rest == null || rest.indexOf('\t') >= 0) {
                    throw usage(
                            lineNo,
                            "expected delete<TAB>KEY, found " + (rest == null ? "no tab" : "a tab after the key"));
                }
                byte[] k = field(rest, format.keys(), lineNo, "key");
                checkOrder(k, lineNo);
                add(lineNo, () -> w.delete(k));
                deletes++;
            }
            case "delete-range" -> {
                int t = rest == null ? -1 : rest.indexOf('\t');
                if (t < 0 || rest.indexOf('\t', t + 1) >= 0) {
                    throw usage(
                            lineNo,
                            "expected delete-range<TAB>BEGIN<TAB>END, found "
                                    + (rest == null ? "no tab" : t < 0 ? "no tab after BEGIN" : "a tab after END"));
                }
                byte[] begin = field(rest.substring(0, t), format.keys(), lineNo, "BEGIN");
                byte[] end = field(rest.substring(t + 1), format.keys(), lineNo, "END");
                if (Arrays.compareUnsigned(begin, end) > 0) {
                    throw usage(
                            lineNo,
                            "delete-range BEGIN " + format.keys().format(begin) + " sorts after END "
                                    + format.keys().format(end));
                }
                int before = w.rangeDeletions();
                add(lineNo, () -> w.deleteRange(begin, end));
                rangeDeletions += w.rangeDeletions() - before; // BEGIN = END adds nothing
            }
            default ->
                throw usage(lineNo, "unknown operation '" + op + "': expected put, merge, delete or delete-range");
        }
    }

    /**
     * The writer's order rule, checked here to name the lines: a put, merge or delete key must sort after the previous
     * one (byte order), one entry per key; range deletions are not part of that order.
     */
    private void checkOrder(byte[] key, long lineNo) {
        if (lastKey != null) {
            int c = Arrays.compareUnsigned(key, lastKey);
            if (c <= 0) {
                throw usage(
                        lineNo,
                        "key " + format.keys().format(key)
                                + (c == 0 ? " repeats the key of line " : " sorts before the key of line ")
                                + lastKeyLine + ": keys must be in strictly increasing order (byte order),"
                                + " one entry per key");
            }
        }
        lastKey = key;
        lastKeyLine = lineNo;
    }

    /** Runs one writer call; a refusal of the entry (an empty or oversized key, say) names the line. */
    private void add(long lineNo, Runnable call) {
        try {
            call.run();
        } catch (InvalidArgumentException e) {
            throw usage(lineNo, e.getMessage());
        }
    }

    private byte[] field(String text, ByteFormat f, long lineNo, String what) {
        try {
            return f.parse(text);
        } catch (IllegalArgumentException e) {
            throw usage(lineNo, "bad " + what + ": " + e.getMessage());
        }
    }

    private CliException usage(long lineNo, String message) {
        return new CliException(ExitCodes.USAGE, input + ":" + lineNo + ": " + message);
    }
}
