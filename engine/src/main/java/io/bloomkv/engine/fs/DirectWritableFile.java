package io.bloomkv.engine.fs;

import com.sun.nio.file.ExtendedOpenOption;
import io.bloomkv.bloom.JvmEnvironment;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import net.openhft.chronicle.core.UnsafeMemory;

/**
 * A {@link WritableFile} opened with O_DIRECT ({@link ExtendedOpenOption#DIRECT}): appended bytes go from an aligned
 * buffer to the device, bypassing the OS page cache, so writing a large file neither fills the page cache nor leaves
 * a backlog of dirty pages for the final sync to write (RocksDB's {@code use_direct_io_for_flush_and_compaction}; its
 * {@code SstFileWriter} drops the pages it wrote for the same reason). The device may still cache the writes: only
 * {@link #sync()} makes them durable, as for any {@link WritableFile}.
 *
 * <p>O_DIRECT requires every write's file position, length and memory address to be multiples of the file system's
 * block size. Appends fill an aligned buffer of {@code bufferSize} bytes (a multiple of the block size), written at
 * an aligned position whenever it is full. The bytes after the last whole block (the tail, shorter than a block) stay
 * in the buffer: {@link #flush()} writes them as one zero-padded block and then truncates the file to its logical
 * size, and the next appends rewrite that block with the tail and what follows it. So the file on disk always ends
 * exactly at the bytes handed to the operating system, and {@link #size()} is the logical size. Not thread-safe:
 * callers serialize appends, as for every {@link WritableFile}.
 */
final class DirectWritableFile implements WritableFile {
    static {
        // Before Chronicle's Unsafe is first used here (a file system used without Db.open: a bulk-load file, an
        // inspected table): see JvmEnvironment.
        JvmEnvironment.ensureInitialized();
    }

    private final Path path;
    private final FileChannel channel;
    private final int alignment;
    /** The direct memory {@link #buffer} is an aligned slice of; freed at {@link #close()}. */
    private final ByteBuffer allocated;
    /** Aligned direct buffer: its bytes [0, position) go to the file at {@link #bufferStart}. */
    private final ByteBuffer buffer;
    /** File position of the buffer's first byte (a multiple of the alignment). */
    private long bufferStart;

    private boolean closed;

    private DirectWritableFile(Path path, FileChannel channel, int alignment, int bufferSize) {
        this.path = path;
        this.channel = channel;
        this.alignment = alignment;
        this.allocated = ByteBuffer.allocateDirect(bufferSize + alignment);
        this.buffer = allocated.alignedSlice(alignment);
    }

    /**
     * Creates {@code p} (or truncates it) for direct appends through a buffer of about {@code bufferSize} bytes
     * (rounded up to a multiple of the file system's block size).
     *
     * @throws IOException naming the path when the file system refuses O_DIRECT (EINVAL, or no O_DIRECT on this
     *     platform) or the file cannot be created; nothing is left behind then
     */
    static DirectWritableFile open(Path p, int bufferSize) throws IOException {
        if (bufferSize <= 0) {
            throw new IllegalArgumentException("bufferSize must be positive: " + bufferSize);
        }
        Path dir = p.toAbsolutePath().getParent();
        long blockSize = Files.getFileStore(dir).getBlockSize();
        if (blockSize <= 0 || blockSize > (1 << 16) || Long.bitCount(blockSize) != 1) {
            throw new IOException(
                    "direct writes need a power-of-two block size, the file system of " + p + " reports " + blockSize);
        }
        int alignment = (int) blockSize;
        long rounded = ((long) bufferSize + alignment - 1) / alignment * alignment;
        if (rounded > Integer.MAX_VALUE - alignment) {
            throw new IllegalArgumentException("bufferSize too large: " + bufferSize);
        }
        boolean existed = Files.exists(p);
        FileChannel ch;
        try {
            ch = FileChannel.open(
                    p,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING,
                    ExtendedOpenOption.DIRECT);
        } catch (IOException | UnsupportedOperationException e) {
            // UnsupportedOperationException where the platform lacks O_DIRECT, an IOException (EINVAL) where the file
            // system refuses it: both mean "no direct writes here". A file the refused open created is removed.
            IOException refused =
                    new IOException("the file system of " + p + " does not support direct writes (O_DIRECT): " + e, e);
            if (!existed) {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException suppressed) {
                    refused.addSuppressed(suppressed);
                }
            }
            throw refused;
        }
        DiskFileSystem.makeUninterruptible(ch);
        return new DirectWritableFile(p, ch, alignment, (int) rounded);
    }

    /** The alignment of positions, lengths and buffers (the file system's block size). */
    int alignment() {
        return alignment;
    }

    @Override
    public void append(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        Objects.checkFromIndexSize(off, len, b.length);
        int o = off;
        int remaining = len;
        while (remaining > 0) {
            int n = Math.min(remaining, buffer.remaining());
            buffer.put(b, o, n);
            o += n;
            remaining -= n;
            if (!buffer.hasRemaining()) {
                writeWholeBlocks();
            }
        }
    }

    /** Writes the buffer's whole blocks at {@link #bufferStart} and keeps the tail (less than a block) at its start. */
    private void writeWholeBlocks() throws IOException {
        int filled = buffer.position();
        int whole = filled & -alignment;
        if (whole == 0) {
            return;
        }
        ByteBuffer out = buffer.duplicate();
        out.position(0).limit(whole);
        writeAll(out, bufferStart);
        int tail = filled - whole;
        if (tail > 0) {
            // The tail moves to the front of the buffer (less than one block: a small copy).
            ByteBuffer t = buffer.duplicate();
            t.position(whole).limit(filled);
            buffer.position(0);
            buffer.put(t);
        } else {
            buffer.position(0);
        }
        bufferStart += whole;
    }

    /**
     * Writes every buffered byte: the whole blocks, then the tail as one zero-padded block, and truncates the file to
     * its logical size. The tail stays buffered, so appends go on where they stopped.
     */
    @Override
    public void flush() throws IOException {
        ensureOpen();
        writeOut();
    }

    private void writeOut() throws IOException {
        writeWholeBlocks();
        int tail = buffer.position();
        if (tail > 0) {
            ByteBuffer out = buffer.duplicate();
            out.position(0).limit(alignment);
            // Zero the padding: the bytes past the tail are garbage left from earlier blocks.
            for (int i = tail; i < alignment; i++) {
                out.put(i, (byte) 0);
            }
            writeAll(out, bufferStart);
        }
        long logical = size();
        if (channel.size() != logical) {
            channel.truncate(logical);
        }
    }

    @Override
    public void sync() throws IOException {
        ensureOpen();
        writeOut();
        channel.force(false);
    }

    @Override
    public long size() {
        return bufferStart + buffer.position();
    }

    @Override
    public Path path() {
        return path;
    }

    /**
     * Writes what is buffered (without syncing it), closes the file and frees the buffer's direct memory at once (not
     * when the collector finds the buffer), even when the write fails. Idempotent.
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            writeOut();
        } finally {
            try {
                channel.close();
            } finally {
                UnsafeMemory.UNSAFE.invokeCleaner(allocated); // nothing reads the buffer after this
            }
        }
    }

    private void writeAll(ByteBuffer src, long position) throws IOException {
        long p = position;
        while (src.hasRemaining()) {
            p += channel.write(src, p);
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("file is closed: " + path);
        }
    }
}
