package io.bloomkv.tools;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv scan DB_DIR [--from KEY] [--to KEY] [--limit N]}: prints {@code KEY<TAB>VALUE} lines in
 * key order, from {@code --from} (inclusive) to {@code --to} (exclusive).
 */
@Command(
        name = "scan",
        mixinStandardHelpOptions = true,
        description = {
            "Print KEY<TAB>VALUE lines in key order, from --from up to --to.",
            "--from is inclusive, --to exclusive; keys compare as unsigned bytes."
        })
final class ScanCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory.")
    Path dir;

    @Option(names = "--from", paramLabel = "KEY", description = "First key (inclusive).")
    String from;

    @Option(names = "--to", paramLabel = "KEY", description = "End key (exclusive).")
    String to;

    @Option(names = "--limit", paramLabel = "N", description = "Print at most N pairs.")
    Long limit;

    @Option(names = "--keys-only", description = "Print keys only (refused with --value-hex, which would do nothing).")
    boolean keysOnly;

    @Mixin
    KeyValueFormat format;

    @Mixin
    OpenOptions open;

    @Override
    public Integer call() {
        if (limit != null && limit < 0) {
            throw new ParameterException(spec.commandLine(), "--limit must not be negative: " + limit);
        }
        if (keysOnly && spec.commandLine().getParseResult().hasMatchedOption("--value-hex")) {
            // No value is printed: the value format would be ignored.
            throw new ParameterException(
                    spec.commandLine(), "--value-hex applies to values, which --keys-only leaves out");
        }
        byte[] start = from == null ? null : Args.parse(spec, format.keys(), from, "--from");
        byte[] end = to == null ? null : Args.parse(spec, format.keys(), to, "--to");
        long max = limit == null ? Long.MAX_VALUE : limit;
        PrintWriter out = spec.commandLine().getOut();
        try (Db db = DbOpener.open(dir, open.apply(DbOpener.readOptions()), false);
                DbIterator it = db.iterator()) {
            if (start == null) {
                it.seekToFirst();
            } else {
                it.seek(start);
            }
            long printed = 0;
            while (it.valid() && printed < max) {
                byte[] k = it.key();
                if (end != null && Arrays.compareUnsigned(k, end) >= 0) {
                    break;
                }
                if (keysOnly) {
                    out.println(format.keys().format(k));
                } else {
                    out.println(format.keys().format(k) + "\t" + format.values().format(it.value()));
                }
                printed++;
                it.next();
            }
        }
        out.flush();
        return ExitCodes.OK;
    }
}
