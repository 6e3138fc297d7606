package io.bloomkv.engine;

import java.nio.file.Path;

/**
 * Stored bytes failed a check (checksum, magic, length, format version). Names the file and the
 * byte offset of the damaged region so an operator can find it. Never replaced by a wrong answer.
 */
public class CorruptionException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final long offset;

    public CorruptionException(String what, Path file, long offset) {
        super(message(what, file, offset));
        this.file = file;
        this.offset = offset;
    }

    public CorruptionException(String what, Path file, long offset, Throwable cause) {
        super(message(what, file, offset), cause);
        this.file = file;
        this.offset = offset;
    }

    /** {@code what (file F, offset N)}; the offset left out when unknown (a whole file's checksum). */
    private static String message(String what, Path file, long offset) {
        return what + " (file " + file + (offset < 0 ? "" : ", offset " + offset) + ")";
    }

    /** The damaged file. */
    public Path file() {
        return file;
    }

    /** Byte offset in {@link #file()} where the damaged region starts, or -1 when unknown. */
    public long offset() {
        return offset;
    }
}
