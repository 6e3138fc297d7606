package io.bloomkv.tools;

import io.bloomkv.engine.Options;
import io.bloomkv.engine.TableFileWriter;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv sst write FILE --input TSV}: a table file for {@code bloomkv ingest}, through {@link TableFileWriter},
 * from {@code KEY<TAB>VALUE} lines sorted by key (byte order); an unsorted or repeated key stops it (exit code 2) and
 * no file is left.
 */
@Command(
        name = "write",
        mixinStandardHelpOptions = true,
        description = {
            "Write a table file for 'bloomkv ingest' from sorted KEY<TAB>VALUE lines.",
            "The lines must be sorted by key (byte order); the table gets the default",
            "options' filter and block layout. An unsorted or repeated key stops it",
            "(exit code 2) and no file is left."
        })
final class SstWriteCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The table file to write (replaced if it exists).")
    Path file;

    @Option(
            names = "--input",
            paramLabel = "TSV",
            defaultValue = "-",
            description = "KEY<TAB>VALUE lines (default: - = stdin).")
    String input;

    @Mixin
    KeyValueFormat format;

    @Override
    public Integer call() throws IOException {
        long n = 0;
        try (BufferedReader in = input.equals("-")
                        ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                        : Files.newBufferedReader(Path.of(input), StandardCharsets.UTF_8);
                TableFileWriter w = TableFileWriter.create(file, Options.defaults())) {
            long lineNo = 0;
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                lineNo++;
                if (line.isEmpty()) {
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
                w.put(k, v);
                n++;
            }
            w.finish();
        }
        spec.commandLine().getOut().println("wrote " + n + (n == 1 ? " pair" : " pairs") + " to " + file);
        return ExitCodes.OK;
    }
}
