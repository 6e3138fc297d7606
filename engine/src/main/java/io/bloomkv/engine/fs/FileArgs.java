package io.bloomkv.engine.fs;

import java.util.Objects;

/** The argument checks every {@link ReadableFile} makes. */
final class FileArgs {
    private FileArgs() {}

    /** {@code dst[off, off + len)} lies in {@code dst} and {@code pos} is not negative. */
    static void checkRead(long pos, byte[] dst, int off, int len) {
        Objects.checkFromIndexSize(off, len, dst.length);
        if (pos < 0) {
            throw new IllegalArgumentException("negative position " + pos);
        }
    }
}
