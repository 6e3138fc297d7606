package io.bloomkv.tools;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code bloomkv delete DB_DIR KEY}: writes a tombstone for KEY (absent keys are not an error). */
@Command(
        name = "delete",
        mixinStandardHelpOptions = true,
        description = "Delete KEY (writes a tombstone; deleting an absent key is not an error).")
final class DeleteCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory.")
    Path dir;

    @Parameters(index = "1", paramLabel = "KEY", description = "The key (UTF-8, or hex with --hex/--key-hex).")
    String key;

    @Mixin
    KeyFormat format;

    @Mixin
    WriteOptions write;

    @Override
    public Integer call() throws IOException {
        byte[] k = Args.parse(spec, format.keys(), key, "KEY");
        write.writeTo(dir, db -> {
            db.delete(k);
            return null;
        });
        return ExitCodes.OK;
    }
}
