package io.bloomkv.engine.internal.record;

import static io.bloomkv.engine.internal.record.LogFormat.BLOCK_SIZE;
import static io.bloomkv.engine.internal.record.LogFormat.FIRST;
import static io.bloomkv.engine.internal.record.LogFormat.FULL;
import static io.bloomkv.engine.internal.record.LogFormat.HEADER_SIZE;
import static io.bloomkv.engine.internal.record.LogFormat.LAST;
import static io.bloomkv.engine.internal.record.LogFormat.MIDDLE;

import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.util.Crc32c;
import java.io.Closeable;
import java.io.IOException;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Appends records to a log file in the format of engine/FORMAT.md, "Write-ahead log". A record is
 * durable once {@link #sync()} returns. Not thread-safe: the caller serializes writes. After an
 * I/O error the writer refuses further records (the file's tail is then undefined; a
 * {@link LogReader} cuts it).
 */
public final class LogWriter implements Closeable {
    private static final byte[] ZEROES = new byte[HEADER_SIZE];

    private final WritableFile file;
    private final byte[] header = new byte[HEADER_SIZE];
    private final CRC32C crc = new CRC32C();
    private int blockOffset;
    private IOException failure;
    private boolean closed;
    /** Set by {@link #discardUnflushed}. */
    private boolean discardUnflushed;

    /** Writes records at the end of {@code file} (normally a new, empty file). */
    public LogWriter(WritableFile file) {
        this.file = Objects.requireNonNull(file, "file");
        this.blockOffset = (int) (file.size() % BLOCK_SIZE);
    }

    public void addRecord(byte[] payload) throws IOException {
        addRecord(payload, 0, payload.length);
    }

    /** Appends one record holding {@code b[off..off+len)} (which may be empty). */
    public void addRecord(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        ensureUsable();
        try {
            int left = len;
            int pos = off;
            boolean begin = true;
            do {
                int leftover = BLOCK_SIZE - blockOffset;
                if (leftover < HEADER_SIZE) {
                    if (leftover > 0) {
                        file.append(ZEROES, 0, leftover);
                    }
                    blockOffset = 0;
                }
                int avail = BLOCK_SIZE - blockOffset - HEADER_SIZE;
                int fragment = Math.min(left, avail);
                boolean end = fragment == left;
                int type = begin && end ? FULL : begin ? FIRST : end ? LAST : MIDDLE;
                emit(type, b, pos, fragment);
                pos += fragment;
                left -= fragment;
                begin = false;
            } while (left > 0);
        } catch (IOException e) {
            failure = e;
            throw e;
        } catch (RuntimeException | Error e) {
            // Whatever stopped the record part-way (a binding that throws unchecked, a bug), the log may now end in a
            // record's first fragments: later records must not follow them, so the writer is failed as for an I/O
            // error.
            failure = new IOException("log append failed: " + file.path(), e);
            throw e;
        }
    }

    private void emit(int type, byte[] b, int off, int len) throws IOException {
        crc.reset();
        crc.update(type);
        crc.update(b, off, len);
        int masked = Crc32c.mask((int) crc.getValue());
        header[0] = (byte) masked;
        header[1] = (byte) (masked >>> 8);
        header[2] = (byte) (masked >>> 16);
        header[3] = (byte) (masked >>> 24);
        header[4] = (byte) len;
        header[5] = (byte) (len >>> 8);
        header[6] = (byte) type;
        file.append(header, 0, HEADER_SIZE);
        file.append(b, off, len);
        blockOffset += HEADER_SIZE + len;
    }

    /** Hands written records to the operating system (they survive a process crash, not a power loss). */
    public void flush() throws IOException {
        ensureUsable();
        try {
            file.flush();
        } catch (IOException e) {
            failure = e;
            throw e;
        }
    }

    /** Makes every record added so far durable. */
    public void sync() throws IOException {
        ensureUsable();
        try {
            file.sync();
        } catch (IOException e) {
            failure = e;
            throw e;
        }
    }

    /** Whether an append, flush or sync failed: the writer refuses every later call. */
    public boolean failed() {
        return failure != null;
    }

    /** Bytes written to the file so far. */
    public long size() {
        return file.size();
    }

    public WritableFile file() {
        return file;
    }

    /**
     * Marks what the file still buffers (not yet handed to the operating system) as part of an operation the caller
     * reports as failed: a write-ahead log group whose flush or sync failed. {@link #close} then drops it
     * ({@link WritableFile#closeWithoutFlush}) instead of writing it out for a later open to replay, as RocksDB's
     * {@code WritableFileWriter::Close} does after an error. Every record buffered before it that the caller reported
     * as written must have been flushed already.
     */
    public void discardUnflushed() {
        discardUnflushed = true;
    }

    /**
     * Flushes and closes the file; does not sync. Idempotent. After {@link #discardUnflushed} it closes without
     * flushing.
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (discardUnflushed) {
            file.closeWithoutFlush();
        } else {
            file.close();
        }
    }

    /** The log's file. */
    public java.nio.file.Path path() {
        return file.path();
    }

    private void ensureUsable() throws IOException {
        if (closed) {
            throw new IOException("log writer is closed: " + file.path());
        }
        if (failure != null) {
            throw new IOException("log writer failed earlier: " + file.path(), failure);
        }
    }
}
