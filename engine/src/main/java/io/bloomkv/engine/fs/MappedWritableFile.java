package io.bloomkv.engine.fs;

import io.bloomkv.bloom.JvmEnvironment;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.core.UnsafeMemory;
import net.openhft.posix.PosixAPI;

/**
 * A {@link WritableFile} written through a shared memory mapping of the file, a region at a time (RocksDB's
 * {@code allow_mmap_writes}, LevelDB's former {@code PosixMmapFile}): an append is a memory copy into the OS page
 * cache, with no system call, where a {@code write(2)} per record costs a kernel entry and a copy. The bytes are in
 * the page cache as soon as {@link #append} returns, so a process crash (kill -9) loses none of them, which is the
 * guarantee a {@code write(2)} gives: {@link #flush()} has nothing to hand over and does nothing. {@link #sync()} is
 * {@code fdatasync(2)} of the file, which on Linux writes back every dirty page of the file whoever dirtied it,
 * through the mapping or a {@code write(2)}, and the file size.
 *
 * <p>Space comes before the mapping: each region (64 KiB doubling to a megabyte) is allocated on the device ({@code fallocate(2)}, or, where the file
 * system has no {@code fallocate}, by writing zeros) before it is mapped, so a full disk fails the append that needed
 * the region with an {@link IOException}, and a store into the mapping never needs a block the device does not have
 * (which the kernel would report as {@code SIGBUS}). The file therefore grows a region at a time; {@link #close()}
 * truncates it to the bytes appended. A file left by a crash ends in the zeros of its last one or two regions (the
 * next region is prepared ahead, below): the WAL reader
 * stops at the first zero fragment header followed by nothing but zeros, a torn tail of zero padding
 * (engine/FORMAT.md, "Write-ahead log").
 *
 * <p>The next region is prepared ahead, on one daemon thread shared by every mapped file of the process: allocated,
 * mapped, and its pages made present ({@code madvise(MADV_POPULATE_WRITE)}) while the writer fills the current one, so
 * the writer's stores find the pages present and writable. Done by the writer, the first store into each 4 KiB page
 * was a page fault (a page of the page cache found or zeroed, the file system told of the write) and most of the
 * append's time. A file that has been synced is prepared with {@code MADV_POPULATE_READ} instead (pages present, still
 * clean): pages dirtied ahead would be written to the device as zeros by the next {@link #sync()}, then again with
 * their records. The writer takes the prepared region when it needs it (waiting for a preparation already under way,
 * mapping the region itself when none was started, or when it failed: a full disk is then reported by the writer's
 * own allocation, as without preparation). So at most two regions of a file are mapped and allocated ahead at a time.
 *
 * <p>Mappings are made and removed with {@code mmap(2)}/{@code munmap(2)} through Chronicle's {@code net.openhft:posix},
 * as {@link MappedReadableFile}'s; each is unmapped exactly once (at the next region, or at close). Linux only, with
 * native access ({@link #supported()}); elsewhere the engine writes its logs with {@code write(2)}. Not thread-safe,
 * as every {@link WritableFile}.
 */
final class MappedWritableFile implements WritableFile {
    static {
        // Before Chronicle's Unsafe is first used here (a file system used without Db.open: a bulk-load file, an
        // inspected table): see JvmEnvironment.
        JvmEnvironment.ensureInitialized();
    }

    /**
     * Bytes mapped, and allocated on the device, at a time, at most: regions start at {@link #FIRST_REGION} bytes and
     * double up to this (LevelDB's mapped writer grew its regions the same way), so a small log takes little space.
     * Every region starts at a multiple of {@link #FIRST_REGION}, hence of every page size.
     */
    static final int REGION = 1 << 20;

    static final int FIRST_REGION = 64 << 10;

    private static final int O_RDWR = 2;
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_SHARED = 0x01;
    private static final int ENOSPC = 28;
    private static final int EINVAL = 22;
    /** {@code madvise(2)} advice (Linux 5.14): make the pages present, as a read or a write of each would. */
    private static final int MADV_POPULATE_READ = 22;

    private static final int MADV_POPULATE_WRITE = 23;
    private static final int PAGE = 4096;
    private static final long BYTE_ARRAY_BASE = UnsafeMemory.UNSAFE.arrayBaseOffset(byte[].class);

    private static final AtomicLong LIVE_MAPPINGS = new AtomicLong();
    private static final AtomicLong LIVE_MAPPED_BYTES = new AtomicLong();

    private final Path path;
    /** Allocation by zeros, the truncation at close and fdatasync. */
    private final FileChannel channel;

    private final PosixAPI posix;
    /** The descriptor the regions are mapped from (the channel's own is not reachable). */
    private final int fd;
    /** Bytes appended. */
    private long size;
    /** File offset of the current mapping ({@link #address}), a multiple of {@link #regionSize}. */
    private long regionStart;
    /** Bytes of the current region (of the next one, before the first append). */
    private int regionSize = FIRST_REGION;
    /**
     * End of the current mapping: {@link #regionStart} + {@link #regionSize} once a region is mapped, 0 before the first
     * append (the empty region [0, 0)). An append maps the next region when {@link #size} reaches it, so one test covers
     * the first append, a full region and a retry after a failed {@link #nextRegion} (which leaves it where the
     * unmapped region ended, at {@code size}). One test rather than two: the first append of every new log would
     * otherwise take a branch the JIT had seen only in the first log's first append (before it profiled), and
     * throw away the compiled write path at each memtable switch.
     */
    private long regionEnd;
    /** The current region's mapping, or 0 before the first append, after a failed {@link #nextRegion} and after close. */
    private long address;

    private boolean closed;
    /** Whether {@link #sync()} has been called: regions are then prepared without dirtying their pages. */
    private boolean synced;
    /**
     * The preparation of the region after the current one ({@link #prepareAhead}), or null: started when a region is
     * mapped, taken by the {@link #nextRegion} after it or by {@link #close()}. Only the writer reads and writes it.
     */
    private Preparation ahead;

    /**
     * The thread that prepares regions ahead, one for the process (a daemon: it holds nothing a process exit loses,
     * and every mapping it makes is handed to a file, which unmaps it).
     */
    private static final class Ahead {
        static final ExecutorService EXECUTOR = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "bloomkv-log-prepare");
            t.setDaemon(true);
            return t;
        });
    }

    private MappedWritableFile(Path path, FileChannel channel, PosixAPI posix, int fd) {
        this.path = path;
        this.channel = channel;
        this.posix = posix;
        this.fd = fd;
    }

    /** Whether files can be written through mappings here: Linux, with native access and Chronicle's posix binding. */
    static boolean supported() {
        return Support.SUPPORTED;
    }

    private static final class Support {
        static final boolean SUPPORTED = probe();

        private static boolean probe() {
            if (!System.getProperty("os.name", "")
                            .toLowerCase(java.util.Locale.ROOT)
                            .startsWith("linux")
                    || !JvmEnvironment.nativeAccessEnabled()) {
                return false;
            }
            try {
                return usable(PosixAPI.posix());
            } catch (RuntimeException | LinkageError e) {
                return false;
            }
        }
    }

    /**
     * Whether {@code posix} is a working binding. Where jnr-ffi cannot load its native stub, Chronicle substitutes a
     * binding whose every call throws; the logs are then written with {@code write(2)}, not refused at open.
     */
    static boolean usable(PosixAPI posix) {
        try {
            return posix.getpid() > 0;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Creates (or truncates) {@code p} for appends through mappings.
     *
     * @throws IOException naming the path when it cannot be created or opened, or mappings are not {@link #supported}
     */
    static MappedWritableFile open(Path p) throws IOException {
        if (!supported()) {
            throw new IOException("memory-mapped writes are not available here (Linux with native access): " + p);
        }
        FileChannel ch = FileChannel.open(
                p,
                StandardOpenOption.CREATE,
                StandardOpenOption.READ,
                StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        try {
            PosixAPI posix = PosixAPI.posix();
            int fd = posix.open(p.toString(), O_RDWR, 0);
            if (fd < 0) {
                throw new IOException("cannot open " + p + " for a mapping: " + posix.lastErrorStr());
            }
            return new MappedWritableFile(p, ch, posix, fd);
        } catch (IOException | RuntimeException e) {
            try {
                ch.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    @Override
    public void append(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        java.util.Objects.checkFromIndexSize(off, len, b.length);
        while (len > 0) {
            if (size == regionEnd) {
                nextRegion();
            }
            int n = (int) Math.min(len, regionEnd - size);
            try {
                UnsafeMemory.UNSAFE.copyMemory(b, BYTE_ARRAY_BASE + off, null, address + (size - regionStart), n);
            } catch (InternalError e) {
                // SIGBUS on a store into the mapping: the page could not be provided (the file shrank under it)
                throw new IOException("fault writing " + n + " bytes at " + size + " of the mapping of " + path, e);
            }
            size += n;
            off += n;
            len -= n;
        }
    }

    /**
     * Unmaps the current region (if any), then allocates and maps the one starting at {@link #size}, which is at a
     * region boundary: 0, the end of a full region, or where an earlier attempt failed. Regions double in size up to
     * {@link #REGION} as the file grows.
     */
    private void nextRegion() throws IOException {
        long start = size;
        unmap();
        int next = regionSizeAt(start, regionSize);
        Preparation p = takeAhead();
        long a;
        if (p != null && p.start == start && p.size == next) {
            a = p.mapped;
        } else {
            if (p != null) {
                unmap(p.mapped, p.size); // not the region needed (not expected: sizes follow one rule)
            }
            a = map(start, next);
        }
        address = a;
        regionStart = start;
        regionSize = next;
        regionEnd = start + next;
        prepareAhead();
    }

    /** The size of the region that starts at {@code start} when the one before it has {@code previous} bytes. */
    private static int regionSizeAt(long start, int previous) {
        int next = previous;
        while (next < REGION && start >= next) {
            next <<= 1; // the file already holds a region of this size: the next one may be twice as large
        }
        return next;
    }

    /** Starts the preparation of the region after the current one on the shared thread. */
    private void prepareAhead() {
        Preparation p = new Preparation(regionEnd, regionSizeAt(regionEnd, regionSize), synced);
        try {
            Ahead.EXECUTOR.execute(p);
            ahead = p;
        } catch (RejectedExecutionException e) {
            ahead = null; // not expected (the executor is never shut down): the writer maps the region itself
        }
    }

    /**
     * One region's preparation, run by the shared thread unless the writer takes it back first. {@link #state} makes
     * the two exclusive: the thread moves it from queued to running, the writer from queued to cancelled, so a
     * cancelled preparation never maps anything (a {@code FutureTask} cancelled while it runs still runs to its end,
     * and the mapping it made would be lost), and a running one is waited for.
     */
    private final class Preparation implements Runnable {
        private static final int QUEUED = 0;
        private static final int RUNNING = 1;
        private static final int CANCELLED = 2;

        private final long start;
        private final int size;
        private final boolean clean;
        private final AtomicInteger state = new AtomicInteger(QUEUED);
        private final CountDownLatch done = new CountDownLatch(1);
        /** The region's mapping once it is mapped (set before {@link #done} counts down), else 0. */
        private long mapped;

        Preparation(long start, int size, boolean clean) {
            this.start = start;
            this.size = size;
            this.clean = clean;
        }

        @Override
        public void run() {
            if (!state.compareAndSet(QUEUED, RUNNING)) {
                return;
            }
            try {
                long a = map(start, size);
                mapped = a; // the writer takes it, or close unmaps it
                int advice = clean ? MADV_POPULATE_READ : MADV_POPULATE_WRITE;
                if (posix.madvise(a, size, advice) != 0 && !clean && posix.lastError() == EINVAL) {
                    // A kernel before 5.14: a store into each page makes it present and writable the same way (the
                    // region is the writer's only once it has taken it, after this). Other failures leave the pages
                    // to the writer's own faults, as without preparation.
                    for (long off = 0; off < size; off += PAGE) {
                        UnsafeMemory.UNSAFE.putByte(a + off, (byte) 0);
                    }
                }
            } catch (IOException | RuntimeException e) {
                // Not mapped: the writer maps the region itself, and reports a failure then (a full disk, say).
            } catch (InternalError e) {
                // A store whose page could not be provided (SIGBUS): the writer's own store into it reports it.
            } finally {
                done.countDown();
            }
        }

        /** Whether the region is mapped, once this preparation ended; false when it was not started (now cancelled). */
        boolean take() {
            if (state.compareAndSet(QUEUED, CANCELLED)) {
                return false; // behind other files' preparations: the writer maps the region sooner itself
            }
            boolean interrupted = false;
            while (true) {
                try {
                    done.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // the mapping it makes must not be lost: wait, and keep the interrupt
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return mapped != 0;
        }
    }

    /** The preparation of the region ahead, if one was started and mapped it (see {@link Preparation#take}); else null. */
    private Preparation takeAhead() {
        Preparation p = ahead;
        if (p == null) {
            return null;
        }
        ahead = null;
        return p.take() ? p : null;
    }

    /** Allocates, then maps [start, start + size) of the file; counts the mapping. */
    private long map(long start, int size) throws IOException {
        allocate(start, size);
        long a;
        try {
            a = posix.mmap(0, size, PROT_READ_WRITE, MAP_SHARED, fd, start);
        } catch (RuntimeException e) {
            // Chronicle's binding throws (PosixRuntimeException) where mmap(2) returns MAP_FAILED: an IOException, so
            // the log writer stops at it (an unchecked one would leave a record's first fragment behind and go on).
            throw new IOException(
                    "mmap of " + size + " bytes at " + start + " of " + path + " failed: " + e.getMessage(), e);
        }
        if (a == -1 || a == 0) {
            throw new IOException(
                    "mmap of " + size + " bytes at " + start + " of " + path + " failed: " + posix.lastErrorStr());
        }
        LIVE_MAPPINGS.incrementAndGet();
        LIVE_MAPPED_BYTES.addAndGet(size);
        return a;
    }

    /** Makes the device hold [start, start + length) of the file, which then is at least that long. */
    private void allocate(long start, int length) throws IOException {
        if (posix.fallocate(fd, 0, start, length) == 0) {
            return;
        }
        int errno = posix.lastError();
        if (errno == ENOSPC) {
            throw new IOException(
                    "No space left on device: cannot allocate " + length + " bytes at " + start + " of " + path);
        }
        // No fallocate on this file system: zeros written allocate the blocks (and report a full disk) the same way.
        ByteBuffer zeros = Zeros.REGION.duplicate().limit(length);
        long at = start;
        while (zeros.hasRemaining()) {
            at += channel.write(zeros, at);
        }
    }

    private static final class Zeros {
        static final ByteBuffer REGION =
                ByteBuffer.allocateDirect(MappedWritableFile.REGION).asReadOnlyBuffer();
    }

    private void unmap() throws IOException {
        if (address == 0) {
            return;
        }
        long a = address;
        address = 0;
        unmap(a, regionSize);
    }

    private void unmap(long a, int size) throws IOException {
        LIVE_MAPPINGS.decrementAndGet();
        LIVE_MAPPED_BYTES.addAndGet(-size);
        if (posix.munmap(a, size) != 0) {
            throw new IOException("munmap of " + path + " failed: " + posix.lastErrorStr());
        }
    }

    /** Nothing to do: appended bytes are in the page cache already. */
    @Override
    public void flush() throws IOException {
        ensureOpen();
    }

    @Override
    public void sync() throws IOException {
        ensureOpen();
        synced = true;
        channel.force(false);
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public Path path() {
        return path;
    }

    /** Unmaps, cuts the file to the bytes appended, and closes it (no sync). Idempotent. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        IOException first = null;
        try {
            unmap();
        } catch (IOException e) {
            first = e;
        }
        Preparation p = takeAhead();
        if (p != null) {
            try {
                unmap(p.mapped, p.size);
            } catch (IOException e) {
                first = add(first, e);
            }
        }
        // ftruncate(2), not channel.truncate: a FileChannel call on a thread whose interrupt is set (a close after an
        // interrupted wait for a preparation keeps the flag) closes the channel and leaves the allocated zeros.
        try {
            if (posix.ftruncate(fd, size) != 0) {
                first = add(
                        first,
                        new IOException("truncate of " + path + " to " + size + " failed: " + posix.lastErrorStr()));
            }
        } catch (RuntimeException e) { // the binding may throw, as its mmap does: the descriptor is still closed below
            first = add(first, new IOException("truncate of " + path + " to " + size + " failed", e));
        }
        try {
            channel.close();
        } catch (IOException e) {
            first = add(first, e);
        }
        if (posix.close(fd) != 0) {
            first = add(first, new IOException("close of " + path + " failed: " + posix.lastErrorStr()));
        }
        if (first != null) {
            throw first;
        }
    }

    private static IOException add(IOException first, IOException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("file is closed: " + path);
        }
    }

    /** Regions of files written by this class mapped now (current ones and those prepared ahead), in this process. */
    static long liveMappings() {
        return LIVE_MAPPINGS.get();
    }

    /** Bytes of those mappings. */
    static long liveMappedBytes() {
        return LIVE_MAPPED_BYTES.get();
    }
}
