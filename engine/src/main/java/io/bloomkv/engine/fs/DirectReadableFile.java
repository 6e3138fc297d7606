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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import net.openhft.chronicle.core.UnsafeMemory;

/**
 * A {@link ReadableFile} opened with O_DIRECT ({@link ExtendedOpenOption#DIRECT}): every read goes to
 * the device, bypassing the OS page cache. O_DIRECT requires the file position, the length and the
 * memory address of each read to be multiples of the file system's block size, so a read of
 * {@code [pos, pos + len)} reads the aligned window {@code [floor(pos), ceil(pos + len))} into an
 * aligned direct buffer ({@link ByteBuffer#alignedSlice}) and copies the requested bytes out. The
 * window of a read near the end of the file may extend past it; the device returns what exists.
 *
 * <p>Reads take an aligned buffer of up to {@link #MAX_REUSED_BUFFER} bytes from a pool shared by every thread of the
 * JVM and give it back when they return, so the buffers in use are bounded by the reads in flight, not by the threads
 * that ever read (a pool's threads, short-lived threads, virtual threads alike). The pool keeps at most
 * {@link #MAX_IDLE_BYTES} of idle buffers, the most recently used first. Every buffer is freed explicitly, exactly
 * once, never by the collector: a larger read uses a buffer of its own, freed when the read returns; a buffer given
 * back to a full pool is freed at once (a read that finds no idle buffer large enough allocates one); every idle
 * buffer is freed when the JVM's last open direct file is closed (a database's close: no native memory stays for
 * files that are gone), and a buffer given back after that close is freed by its reader. A buffer is owned by the pool
 * or by the one read that took it, and only its owner frees it. Concurrent reads from several threads are safe.
 */
final class DirectReadableFile implements ReadableFile {
    static {
        // Before Chronicle's Unsafe is first used here (a file system used without Db.open: a bulk-load file, an
        // inspected table): see JvmEnvironment.
        JvmEnvironment.ensureInitialized();
    }

    /** Largest window a pooled buffer serves (a bigger read allocates a buffer of its own and frees it). */
    static final int MAX_REUSED_BUFFER = 1 << 20;

    /** Most bytes of idle buffers the pool keeps; a buffer given back beyond it is freed. */
    static final long MAX_IDLE_BYTES = 8L << 20;

    /** Capacity of a pooled buffer at least (a larger window gets a buffer of its own size). */
    private static final int MIN_BUFFER = 64 << 10;

    /** A read buffer: the direct allocation (what is freed) and its aligned slice (what reads use). */
    static final class Buffer {
        final ByteBuffer allocated;
        final ByteBuffer aligned;

        Buffer(int capacity, int alignment) {
            this.allocated = ByteBuffer.allocateDirect(capacity + alignment);
            this.aligned = allocated.alignedSlice(alignment);
        }
    }

    /** Idle buffers, the most recently given back first; guarded by itself, as is {@link #idleBytes}. */
    private static final ArrayDeque<Buffer> IDLE = new ArrayDeque<>();

    /** Capacity of the allocations in {@link #IDLE}. */
    private static long idleBytes;

    /** Pooled buffers allocated and not yet freed, idle or in use (for tests of their release). */
    private static final AtomicInteger LIVE = new AtomicInteger();

    /** Direct files open in this JVM: when the count returns to zero, every idle buffer is freed. */
    private static final AtomicInteger OPEN_FILES = new AtomicInteger();

    private final Path path;
    private final FileChannel channel;
    private final int alignment;
    private final AtomicBoolean closed = new AtomicBoolean();

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
        OPEN_FILES.incrementAndGet();
        return new DirectReadableFile(p, ch, (int) blockSize);
    }

    /** Direct files open in this JVM (for tests of the buffers' release). */
    static int openFiles() {
        return OPEN_FILES.get();
    }

    /** Pooled buffers allocated and not yet freed, idle or in use, in this JVM (for tests of the buffers' release). */
    static int liveBuffers() {
        return LIVE.get();
    }

    /** Pooled buffers idle, in this JVM (for tests of the pool's bound). */
    static int idleBuffers() {
        synchronized (IDLE) {
            return IDLE.size();
        }
    }

    /** Capacity of the pool's idle buffers, in this JVM (for tests of the pool's bound). */
    static long idleBufferBytes() {
        synchronized (IDLE) {
            return idleBytes;
        }
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
        Buffer b = acquire(window);
        try {
            readWindow(b.aligned, pos, dst, off, len, start, window);
        } finally {
            giveBack(b);
        }
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

    /**
     * A buffer for a window of at most {@link #MAX_REUSED_BUFFER} bytes, owned by the caller until {@link #giveBack}:
     * the smallest idle one that holds the window and fits this file's alignment (the most recently used of those),
     * else a new one. Best fit keeps the buffers of large windows (a compaction's readahead) for them while point reads
     * take the small ones; the pool is a few buffers, one per read in flight, so the scan is short.
     */
    Buffer acquire(int window) {
        synchronized (IDLE) {
            Buffer best = null;
            for (Buffer b : IDLE) {
                int capacity = b.aligned.capacity();
                if (capacity >= window
                        && b.aligned.alignmentOffset(0, alignment) == 0
                        && (best == null || capacity < best.aligned.capacity())) {
                    best = b;
                    if (capacity == Math.max(window, MIN_BUFFER)) {
                        break; // no idle buffer fits more tightly
                    }
                }
            }
            if (best != null) {
                IDLE.removeFirstOccurrence(best);
                idleBytes -= best.allocated.capacity();
                return best;
            }
        }
        Buffer b = new Buffer(Math.max(window, MIN_BUFFER), alignment);
        LIVE.incrementAndGet();
        return b;
    }

    /**
     * Ends a read's ownership of {@code b}: the pool keeps it while a direct file is open and its idle bytes stay
     * within {@link #MAX_IDLE_BYTES}; else it is freed here. The open-file count is read under the pool's lock, which
     * the last close's {@link #releaseAll} takes after its decrement: a buffer pooled before that release is freed by
     * it, and one given back after it sees no file open.
     */
    static void giveBack(Buffer b) {
        long capacity = b.allocated.capacity();
        synchronized (IDLE) {
            if (OPEN_FILES.get() > 0 && idleBytes + capacity <= MAX_IDLE_BYTES) {
                IDLE.addFirst(b);
                idleBytes += capacity;
                return;
            }
        }
        free(b);
    }

    /** Frees {@code b}'s allocation; called exactly once per buffer, by its owner. */
    private static void free(Buffer b) {
        LIVE.decrementAndGet();
        UnsafeMemory.UNSAFE.invokeCleaner(b.allocated);
    }

    /**
     * Frees every idle buffer (no direct file is open); a buffer in use is freed by its read when it is given back.
     * Where a file was opened meanwhile, the pool stays for it (its last close releases it).
     */
    private static void releaseAll() {
        List<Buffer> drained;
        synchronized (IDLE) {
            if (OPEN_FILES.get() > 0) {
                return;
            }
            drained = new ArrayList<>(IDLE);
            IDLE.clear();
            idleBytes = 0;
        }
        for (Buffer b : drained) {
            free(b);
        }
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
        try {
            channel.close();
        } finally {
            if (closed.compareAndSet(false, true) && OPEN_FILES.decrementAndGet() == 0) {
                releaseAll();
            }
        }
    }
}
