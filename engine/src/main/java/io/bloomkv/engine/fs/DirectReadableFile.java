package io.bloomkv.engine.fs;

import com.sun.nio.file.ExtendedOpenOption;
import io.bloomkv.bloom.JvmEnvironment;
import java.io.EOFException;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
 * <p>Each thread reuses one aligned buffer of up to {@link #MAX_REUSED_BUFFER} bytes while direct files are open. Every
 * buffer is freed explicitly, exactly once, never by the collector: a larger read uses a buffer of its own, freed when
 * the read returns; a thread's buffer outgrown by a larger window is freed when it is replaced; a thread's buffer is
 * freed when the last open direct file is closed (a database's close: no thread keeps native memory for files that are
 * gone), or, after its thread has ended, when any thread next allocates a buffer. Concurrent reads from several threads
 * are safe.
 *
 * <p>Freeing another thread's buffer is safe through each buffer's state: a read takes its thread's buffer from idle to
 * in use and back; a release frees an idle buffer at once and marks one in use, which its reader frees when its read
 * returns. Each transition is a compare-and-set on the buffer's own state, so exactly one party frees it.
 */
final class DirectReadableFile implements ReadableFile {
    static {
        // Before Chronicle's Unsafe is first used here (a file system used without Db.open: a bulk-load file, an
        // inspected table): see JvmEnvironment.
        JvmEnvironment.ensureInitialized();
    }

    /** Largest buffer a thread keeps between reads (bigger windows allocate and drop their own). */
    static final int MAX_REUSED_BUFFER = 1 << 20;

    /**
     * A thread's read buffer: the direct allocation (what is freed), its aligned slice (what reads use), the thread it
     * belongs to (weakly: a buffer does not keep its thread) and its state (idle, in use, to be freed by its reader,
     * freed).
     */
    private static final class Buffer {
        static final int IDLE = 0;
        static final int IN_USE = 1;
        static final int RELEASE_WHEN_DONE = 2;
        static final int FREED = 3;

        final ByteBuffer allocated;
        final ByteBuffer aligned;
        final WeakReference<Thread> owner;
        final AtomicInteger state = new AtomicInteger(IN_USE);

        Buffer(int capacity, int alignment) {
            this.allocated = ByteBuffer.allocateDirect(capacity + alignment);
            this.aligned = allocated.alignedSlice(alignment);
            this.owner = new WeakReference<>(Thread.currentThread());
        }

        /** Frees the allocation; called exactly once, by whoever moved the state to {@link #FREED}. */
        void free() {
            UnsafeMemory.UNSAFE.invokeCleaner(allocated);
        }

        boolean ownerEnded() {
            Thread t = owner.get();
            return t == null || !t.isAlive();
        }
    }

    private static final ThreadLocal<Buffer> BUFFERS = new ThreadLocal<>();

    /** Every thread's buffer not yet freed or handed to its reader to free. */
    private static final Set<Buffer> LIVE = ConcurrentHashMap.newKeySet();

    /** Direct files open in this JVM: when the count returns to zero, every idle thread buffer is freed. */
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

    /** Thread buffers allocated and not yet freed, in this JVM (for tests of the buffers' release). */
    static int liveThreadBuffers() {
        return LIVE.size();
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
            done(b);
        }
    }

    /**
     * Ends a read's use of its thread's buffer: idle again, or freed where a release found it in use (the release left
     * the freeing to this read) or where no direct file is open any more (this read raced the last close, and its
     * buffer may have been allocated after that close's release had passed: nothing else would free it).
     */
    private static void done(Buffer b) {
        if (OPEN_FILES.get() == 0 && b.state.compareAndSet(Buffer.IN_USE, Buffer.FREED)) {
            LIVE.remove(b);
            b.free();
        } else if (!b.state.compareAndSet(Buffer.IN_USE, Buffer.IDLE)) {
            b.state.set(Buffer.FREED); // it was RELEASE_WHEN_DONE: the release already took it out of LIVE
            b.free();
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
     * This thread's buffer, in use, for a window of at most {@link #MAX_REUSED_BUFFER} bytes: the one it keeps, or a
     * new one where it has none, its own was freed by a release, or the window outgrew it or its alignment differs (the
     * old one freed).
     */
    private Buffer acquire(int window) {
        Buffer b = BUFFERS.get();
        if (b != null) {
            if (b.aligned.capacity() >= window
                    && b.aligned.alignmentOffset(0, alignment) == 0
                    && b.state.compareAndSet(Buffer.IDLE, Buffer.IN_USE)) {
                return b;
            }
            if (b.state.compareAndSet(Buffer.IDLE, Buffer.FREED)) { // outgrown or misaligned: this thread's, and idle
                LIVE.remove(b);
                b.free();
            }
        }
        freeBuffersOfEndedThreads();
        Buffer n = new Buffer(Math.max(window, 64 << 10), alignment);
        LIVE.add(n);
        BUFFERS.set(n);
        return n;
    }

    /** Frees the idle buffers of threads that have ended (an ended thread's buffer is idle: its reads returned). */
    private static void freeBuffersOfEndedThreads() {
        for (Buffer b : LIVE) {
            if (b.ownerEnded() && b.state.compareAndSet(Buffer.IDLE, Buffer.FREED)) {
                LIVE.remove(b);
                b.free();
            }
        }
    }

    /**
     * Frees every thread's buffer (no direct file is open): an idle one now, one in use by its reader when its read
     * returns. A buffer allocated meanwhile by a read of a file opened meanwhile is freed the same way or at the next
     * release; none is freed twice.
     */
    private static void releaseAll() {
        for (Buffer b : LIVE) {
            while (true) {
                int s = b.state.get();
                if (s == Buffer.IDLE && b.state.compareAndSet(Buffer.IDLE, Buffer.FREED)) {
                    LIVE.remove(b);
                    b.free();
                    break;
                }
                if (s == Buffer.IN_USE && b.state.compareAndSet(Buffer.IN_USE, Buffer.RELEASE_WHEN_DONE)) {
                    LIVE.remove(b);
                    break;
                }
                if (s == Buffer.RELEASE_WHEN_DONE || s == Buffer.FREED) {
                    break;
                }
            }
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
