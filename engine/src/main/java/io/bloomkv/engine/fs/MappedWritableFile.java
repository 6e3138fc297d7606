package io.bloomkv.engine.fs;

import io.bloomkv.bloom.JvmEnvironment;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 * truncates it to the bytes appended. A file left by a crash ends in the zeros of its last region: the WAL reader
 * stops at the first zero fragment header followed by nothing but zeros, a torn tail of zero padding
 * (engine/FORMAT.md, "Write-ahead log").
 *
 * <p>Mappings are made and removed with {@code mmap(2)}/{@code munmap(2)} through Chronicle's {@code net.openhft:posix},
 * as {@link MappedReadableFile}'s; each is unmapped exactly once (at the next region, or at close). Linux only, with
 * native access ({@link #supported()}); elsewhere the engine writes its logs with {@code write(2)}. Not thread-safe,
 * as every {@link WritableFile}.
 */
final class MappedWritableFile implements WritableFile {
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
                PosixAPI.posix();
                return true;
            } catch (RuntimeException | LinkageError e) {
                return false;
            }
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
        int next = regionSize;
        while (next < REGION && start >= next) {
            next <<= 1; // the file already holds a region of this size: the next one may be twice as large
        }
        allocate(start, next);
        long a = posix.mmap(0, next, PROT_READ_WRITE, MAP_SHARED, fd, start);
        if (a == -1 || a == 0) {
            throw new IOException(
                    "mmap of " + next + " bytes at " + start + " of " + path + " failed: " + posix.lastErrorStr());
        }
        address = a;
        regionStart = start;
        regionSize = next;
        regionEnd = start + next;
        LIVE_MAPPINGS.incrementAndGet();
        LIVE_MAPPED_BYTES.addAndGet(next);
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
        LIVE_MAPPINGS.decrementAndGet();
        LIVE_MAPPED_BYTES.addAndGet(-regionSize);
        if (posix.munmap(a, regionSize) != 0) {
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
        try {
            channel.truncate(size);
        } catch (IOException e) {
            first = add(first, e);
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

    /** Regions of files written by this class mapped now, in this process. */
    static long liveMappings() {
        return LIVE_MAPPINGS.get();
    }

    /** Bytes of those mappings. */
    static long liveMappedBytes() {
        return LIVE_MAPPED_BYTES.get();
    }
}
