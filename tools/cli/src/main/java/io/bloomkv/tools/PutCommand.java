package io.bloomkv.tools;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.WriteBatch;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv put DB_DIR KEY VALUE} or {@code bloomkv put DB_DIR [--input FILE]}: writes one pair, or every
 * {@code KEY<TAB>VALUE} line of a file, in batches. Without KEY VALUE the lines come from {@code --input}, whose
 * default is "-" (stdin), as for {@code sst write}.
 */
@Command(
        name = "put",
        mixinStandardHelpOptions = true,
        description = {
            "Set KEY to VALUE, or load KEY<TAB>VALUE lines when KEY VALUE are left out.",
            "The lines come from --input FILE (default: - = stdin, as for 'sst write') and",
            "are written in atomic batches of --batch-size pairs. A malformed line stops",
            "the load (exit code 2); the batches before it stay written."
        })
final class PutCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory.")
    Path dir;

    @Parameters(
            index = "1",
            arity = "0..1",
            paramLabel = "KEY",
            description = "The key (UTF-8, or hex with --hex/--key-hex).")
    String key;

    @Parameters(
            index = "2",
            arity = "0..1",
            paramLabel = "VALUE",
            description = "The value (UTF-8, or hex with --hex/--value-hex).")
    String value;

    @Option(
            names = "--input",
            paramLabel = "FILE",
            description =
                    "Instead of KEY VALUE: read KEY<TAB>VALUE lines from FILE (- = stdin, the default without KEY VALUE).")
    String input;

    @Option(
            names = "--batch-size",
            paramLabel = "N",
            defaultValue = "1000",
            description =
                    "Pairs per atomic batch when loading lines; refused with KEY VALUE (default: ${DEFAULT-VALUE}).")
    int batchSize;

    @Mixin
    KeyValueFormat format;

    @Mixin
    WriteOptions write;

    @Mixin
    ProgressOption progress;

    @Override
    public Integer call() throws IOException {
        if (batchSize < 1) {
            throw new ParameterException(spec.commandLine(), "--batch-size must be at least 1");
        }
        if (input != null && key != null) {
            throw new ParameterException(spec.commandLine(), "give either KEY VALUE or --input FILE, not both");
        }
        if (key != null && value == null) {
            throw new ParameterException(spec.commandLine(), "missing VALUE after KEY");
        }
        if (key != null && spec.commandLine().getParseResult().hasMatchedOption("--batch-size")) {
            // One pair is one write: a batch size would be ignored.
            throw new ParameterException(spec.commandLine(), "--batch-size applies to loading lines, not to KEY VALUE");
        }
        if (key == null && input == null) {
            input = "-"; // no pair: the lines come from stdin, as for sst write
        }
        if (key != null) {
            byte[] k = Args.parse(spec, format.keys(), key, "KEY");
            byte[] v = Args.parse(spec, format.values(), value, "VALUE");
            write.writeTo(dir, db -> {
                db.put(k, v);
                return null;
            });
            return ExitCodes.OK;
        }
        long loaded;
        try (Progress shown = progress.start(spec, "put", "lines");
                BufferedReader in = shown.lines(input)) {
            loaded = write.writeTo(dir, db -> load(in, db, shown));
            shown.done();
        }
        spec.commandLine().getOut().println("put " + loaded + (loaded == 1 ? " pair" : " pairs"));
        return ExitCodes.OK;
    }

    private long load(BufferedReader in, Db db, Progress shown) throws IOException {
        long lineNo = 0;
        long loaded = 0;
        WriteBatch batch = new WriteBatch();
        int inBatch = 0;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            lineNo++;
            shown.advance(1, 0); // the bytes come from the input stream
            if (line.isEmpty()) {
                continue;
            }
            int tab = line.indexOf('\t');
            if (tab < 0) {
                throw new CliException(
                        ExitCodes.USAGE, input + ":" + lineNo + ": expected KEY<TAB>VALUE, found no tab");
            }
            byte[] k = parseField(line.substring(0, tab), format.keys(), lineNo, "key");
            byte[] v = parseField(line.substring(tab + 1), format.values(), lineNo, "value");
            batch.put(k, v);
            if (++inBatch == batchSize) {
                db.write(batch);
                batch = new WriteBatch();
                inBatch = 0;
            }
            loaded++;
        }
        if (inBatch > 0) {
            db.write(batch);
        }
        return loaded;
    }

    private byte[] parseField(String text, ByteFormat f, long lineNo, String what) {
        try {
            return f.parse(text);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, input + ":" + lineNo + ": bad " + what + ": " + e.getMessage());
        }
    }
}
