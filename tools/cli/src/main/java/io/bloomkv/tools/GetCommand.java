package io.bloomkv.tools;

import io.bloomkv.engine.Db;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code bloomkv get DB_DIR KEY}: prints the value, or exits 1 when the key is absent. */
@Command(
        name = "get",
        mixinStandardHelpOptions = true,
        description = "Print the value of KEY (exit code 1 when the key is absent).")
final class GetCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory.")
    Path dir;

    @Parameters(index = "1", paramLabel = "KEY", description = "The key (UTF-8, or hex with --hex/--key-hex).")
    String key;

    @Mixin
    KeyValueFormat format;

    @Mixin
    OpenOptions open;

    @Override
    public Integer call() {
        byte[] k = Args.parse(spec, format.keys(), key, "KEY");
        try (Db db = DbOpener.open(dir, open.apply(DbOpener.readOptions()), false)) {
            byte[] v = db.get(k);
            if (v == null) {
                spec.commandLine()
                        .getErr()
                        .println("bloomkv get: key not found: " + format.keys().format(k));
                return ExitCodes.NOT_FOUND;
            }
            spec.commandLine().getOut().println(format.values().format(v));
            return ExitCodes.OK;
        }
    }
}
