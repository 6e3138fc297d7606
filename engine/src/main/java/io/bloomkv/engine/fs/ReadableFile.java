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

    /**
     * The native address of byte 0 of a read-only mapping of the whole file that stays valid until {@link #close()},
     * or 0 when the file is not read through a mapping (the default). A caller that reads the mapping directly (the
     * filter partitions probed in place, engine/FORMAT.md "Partitioned filter") stops doing so before it closes the
     * file, and must expect what a mapped read meets: a page that cannot be read in raises {@link InternalError}.
     */
    default long mappedAddress() {
        return 0;
    }

    Path path();
}
