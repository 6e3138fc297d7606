package io.bloomkv.tools;

import io.bloomkv.engine.InternalKey;
import io.bloomkv.engine.ValueType;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.table.TableReader;
import io.bloomkv.engine.version.FileNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Opening table files read-only for the {@code sst} commands, and showing internal keys. */
final class TableFiles {
    private TableFiles() {}

    /**
     * Opens {@code file} with no block cache and private counters; the caller closes it. Takes no
     * lock: a table file is immutable once written.
     *
     * @throws CliException with {@link ExitCodes#IO_ERROR} when the path is missing or a directory
     */
    static TableReader open(Path file) throws IOException {
        if (!Files.exists(file)) {
            throw new CliException(ExitCodes.IO_ERROR, "no such file: " + file);
        }
        if (Files.isDirectory(file)) {
            throw new CliException(ExitCodes.IO_ERROR, file + " is a directory, not a table file");
        }
        return TableReader.open(FileSystem.disk(), file, fileNumber(file), null, null);
    }

    /** The number in a table file's name ({@code 000007.sst} is 7), or 0 for another name. */
    static long fileNumber(Path file) {
        FileNames.Parsed parsed = FileNames.parse(file.getFileName().toString());
        return parsed != null && parsed.kind() == FileNames.Kind.TABLE ? parsed.number() : 0;
    }

    /** An internal key as {@code userKey @sequence TYPE}, the user key in {@code format}. */
    static String internalKey(ByteFormat format, byte[] internalKey) {
        if (internalKey.length < InternalKey.TRAILER_SIZE) {
            return "<malformed internal key " + ByteFormat.HEX.format(internalKey) + ">";
        }
        int code = (int) (InternalKey.trailer(internalKey) & 0xff);
        String type;
        if (code == ValueType.PUT.code()) {
            type = "PUT";
        } else if (code == ValueType.DELETE.code()) {
            type = "DEL";
        } else {
            type = "type" + code;
        }
        return format.format(InternalKey.userKey(internalKey)) + " @" + InternalKey.sequence(internalKey) + " " + type;
    }
}
