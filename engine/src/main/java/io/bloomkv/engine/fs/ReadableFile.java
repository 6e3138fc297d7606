package io.bloomkv.engine.fs;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

/** A file read at explicit positions. Concurrent reads from several threads are safe. */
public interface ReadableFile extends Closeable {
    /**
     * Reads exactly {@code len} bytes at {@code pos} into {@code dst[off..off+len)}.
     *
     * @throws java.io.EOFException when the file ends before {@code pos + len}
     */
    void readFully(long pos, byte[] dst, int off, int len) throws IOException;

    long size() throws IOException;

    Path path();
}
