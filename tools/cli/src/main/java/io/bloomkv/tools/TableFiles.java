package io.bloomkv.tools;

import io.bloomkv.engine.inspect.DatabaseFiles;
import io.bloomkv.engine.inspect.TableDump;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Opening table files for the {@code sst} commands (through the engine's inspection API), and showing keys. */
final class TableFiles {
    private TableFiles() {}

    /**
     * Opens {@code file} for inspection; the caller closes it.
     *
     * @throws CliException with {@link ExitCodes#IO_ERROR} when the path is missing or a directory
     */
    static TableDump open(Path file) throws IOException {
        if (!Files.exists(file)) {
            throw new CliException(ExitCodes.IO_ERROR, "no such file: " + file);
        }
        if (Files.isDirectory(file)) {
            throw new CliException(ExitCodes.IO_ERROR, file + " is a directory, not a table file");
        }
        DatabaseFiles.Kind kind = kindByName(file);
        if (kind == DatabaseFiles.Kind.WAL || kind == DatabaseFiles.Kind.MANIFEST) {
            // Read as a table, a healthy log fails the table's footer checks: say what it is rather than "corruption".
            throw new CliException(
                    ExitCodes.IO_ERROR,
                    file + " is a " + kind + " file, not a table file ('bloomkv sst verify " + file
                            + "' checks its records)");
        }
        return TableDump.open(file);
    }

    /** What {@code file} is by its name (engine/FORMAT.md, "Files"); null for a name no database file has. */
    static DatabaseFiles.Kind kindByName(Path file) {
        return DatabaseFiles.kindOf(file);
    }

    /** A decoded internal key as {@code userKey @sequence TYPE}, the user key in {@code format}. */
    static String internalKey(ByteFormat format, TableDump.Key key) {
        return format.format(key.userKey()) + " @" + key.sequence() + " " + key.type();
    }
}
