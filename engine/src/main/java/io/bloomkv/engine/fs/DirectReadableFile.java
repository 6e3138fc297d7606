package io.bloomkv.engine.fs;

import com.sun.nio.file.ExtendedOpenOption;
import io.bloomkv.bloom.JvmEnvironment;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import net.openhft.chronicle.core.UnsafeMemory;

/**
 * A {@link ReadableFile} opened with O_DIRECT ({@link ExtendedOpenOption#DIRECT}): every read goes to
 * the device, bypassing the OS page cache. O_DIRECT requires the file position, the length and the
 * memory address of each read to be multiples of the file system's block size, so a read of
 * {@code [pos, pos + len)} reads the aligned window {@code [floor(pos), ceil(pos + len))} into an
 * aligned direct buffer ({@link ByteBuffer#alignedSlice}) and copies the requested bytes out. The
 * window of a read near the end of the file may extend past it; the device returns what exists.
 *
 * <p>Each thread reuses one aligned buffer of up to {@link #MAX_REUSED_BUFFER} bytes (a larger read
 * uses a buffer of its own, freed when the read returns; a thread's buffer outgrown by a larger window is freed when
 * it is replaced; a thread's last buffer is freed by the collector with the thread). Concurrent reads from several
 * threads are safe.
 */
final class DirectReadableFile implements ReadableFile {
    static {
        // Before Chronicle's Unsafe is first used here (a file system used without Db.open: a bulk-load file, an
        // inspected table): see JvmEnvironment.
        JvmEnvironment.ensureInitialized();
    }

    /** Largest buffer a thread keeps between reads (bigger windows allocate and drop their own). */
    static final int MAX_REUSED_BUFFER = 1 << 20;

    /** A thread's read buffer: the direct allocation (what is freed) and its aligned slice (what reads use). */
    private record Buffer(ByteBuffer allocated, ByteBuffer aligned) {}

    private static final ThreadLocal<Buffer> BUFFERS = new ThreadLocal<>();

    private final Path path;
    private final FileChannel channel;
    private final int alignment;

    private DirectReadableFile(Path path, FileChannel channel, int alignment) {
        this.path = path;
        this.channel = channel;
        this.alignment = alignment;
    }

    /**
     * Opens {@code p} for direct reads.
     *
     * @throws IOException naming the path when the file system refuses O_DIRECT (EINVAL) or the file cannot be opened
     */
    static DirectReadableFile open(Path p) throws IOException {
        long blockSize = Files.getFileStore(p).getBlockSize();
        if (blockSize <= 0 || blockSize > (1 << 16) || Long.bitCount(blockSize) != 1) {
            throw new IOException(
                    "direct reads need a power-of-two block size, the file system of " + p + " reports " + blockSize);
        }
        FileChannel ch;
        try {
            ch = FileChannel.open(p, StandardOpenOption.READ, ExtendedOpenOption.DIRECT);
        } catch (IOException | UnsupportedOperationException e) {
            // FileChannel.open throws UnsupportedOperationException where the platform lacks O_DIRECT and an
            // IOException (EINVAL) where the file system refuses it: both mean "no direct reads here".
            throw new IOException("the file system of " + p + " does not support direct reads (O_DIRECT): " + e, e);
        }
        DiskFileSystem.makeUninterruptible(ch);
        return new DirectReadableFile(p, ch, (int) blockSize);
    }

    /** The alignment of positions, lengths and buffers (the file system's block size). */
    int alignment() {
        return alignment;
    }

    @Override
    public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
        FileArgs.checkRead(pos, dst, off, len);
        if (len == 0) {
            return;
        }
        long mask = alignment - 1L;
        long start = pos & ~mask;
        long end = (pos + len + mask) & ~mask;
        long windowLong = end - start;
        if (windowLong > Integer.MAX_VALUE - alignment) {
            throw new IllegalArgumentException("read of " + len + " bytes is too large for one direct read");
        }
        int window = (int) windowLong;
        if (window > MAX_REUSED_BUFFER) {
            ByteBuffer allocated = ByteBuffer.allocateDirect(window + alignment);
            try {
                readWindow(allocated.alignedSlice(alignment), pos, dst, off, len, start, window);
            } finally {
                UnsafeMemory.UNSAFE.invokeCleaner(allocated); // this read's own: nothing holds it after the copy
            }
            return;
        }
        readWindow(threadBuffer(window), pos, dst, off, len, start, window);
    }

    /** Reads the aligned window {@code [start, start + window)} into {@code buf} and copies the request out of it. */
    private void readWindow(ByteBuffer buf, long pos, byte[] dst, int off, int len, long start, int window)
            throws IOException {
        long mask = alignment - 1L;
        buf.clear().limit(window);
        int need = (int) (pos + len - start); // bytes of the window up to the end of the request
        long p = start;
        while (buf.position() < need) {
            int n = channel.read(buf, p);
            if (n <= 0) {
                break; // end of file
            }
            p += n;
            if ((buf.position() & mask) != 0) {
                break; // a partial block: the file ends inside this window (the next read would be unaligned)
            }
        }
        if (buf.position() < need) {
            throw new EOFException("read of " + len + " bytes at " + pos + " past the end of " + path + " (size "
                    + channel.size() + ")");
        }
        buf.position((int) (pos - start));
        buf.get(dst, off, len);
    }

    /** This thread's buffer for a window of at most {@link #MAX_REUSED_BUFFER} bytes, grown (the old one freed). */
    private ByteBuffer threadBuffer(int window) {
        Buffer b = BUFFERS.get();
        if (b == null || b.aligned().capacity() < window || (b.aligned().alignmentOffset(0, alignment) != 0)) {
            int cap = Math.max(window, 64 << 10);
            ByteBuffer allocated = ByteBuffer.allocateDirect(cap + alignment);
            BUFFERS.set(new Buffer(allocated, allocated.alignedSlice(alignment)));
            if (b != null) {
                UnsafeMemory.UNSAFE.invokeCleaner(b.allocated()); // replaced: this thread's, and no read is using it
            }
            return BUFFERS.get().aligned();
        }
        return b.aligned();
    }

    @Override
    public long size() throws IOException {
        return channel.size();
    }

    @Override
    public Path path() {
        return path;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
