package io.bloomkv.engine.fs;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

/**
 * An append-only file. Appended bytes may sit in a user-space buffer until {@link #flush()}, and in
 * the operating system's cache until {@link #sync()}; only synced bytes survive a crash. Not
 * thread-safe: callers serialize appends. {@link #close()} flushes but does not sync, and is
 * idempotent.
 */
public interface WritableFile extends Closeable {
    void append(byte[] b, int off, int len) throws IOException;

    default void append(byte[] b) throws IOException {
        append(b, 0, b.length);
    }

    /** Hands buffered bytes to the operating system. */
    void flush() throws IOException;

    /** Flushes, then makes every appended byte durable (fdatasync). */
    void sync() throws IOException;

    /** Bytes appended so far (including buffered ones). */
    long size();

    Path path();

    /**
     * Closes the file without handing to the operating system what is still buffered in user space: for a writer whose
     * append, flush or sync failed, whose buffer may hold the end of a record that was reported as failed (a
     * write-ahead log's group that was never applied); flushed at close, it would be read back after a reopen.
     * RocksDB's {@code WritableFileWriter::Close} does the same after an error. Idempotent, as {@link #close()}; a
     * close after it does nothing. The default closes as {@link #close()} does: a file system that buffers appends
     * overrides it.
     */
    default void closeWithoutFlush() throws IOException {
        close();
    }
}
