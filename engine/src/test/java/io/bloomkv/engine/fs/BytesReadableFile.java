package io.bloomkv.engine.fs;

import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;

/** A {@link ReadableFile} over a byte array (fuzz targets read thousands of inputs a second). */
public final class BytesReadableFile implements ReadableFile {
    private final byte[] bytes;
    private final Path path;

    public BytesReadableFile(byte[] bytes, Path path) {
        this.bytes = bytes;
        this.path = path;
    }

    @Override
    public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, dst.length);
        if (pos < 0) {
            throw new IOException("negative position " + pos);
        }
        if (pos > bytes.length - (long) len) {
            throw new EOFException(
                    path + ": " + len + " bytes at " + pos + " run past the end (" + bytes.length + " bytes)");
        }
        System.arraycopy(bytes, (int) pos, dst, off, len);
    }

    @Override
    public long size() {
        return bytes.length;
    }

    @Override
    public Path path() {
        return path;
    }

    @Override
    public void close() {
        // nothing held
    }
}
