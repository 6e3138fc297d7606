package io.bloomkv.engine.fs;

import io.bloomkv.bloom.JvmEnvironment;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.core.UnsafeMemory;
import net.openhft.posix.PosixAPI;

/**
 * A {@link ReadableFile} over a read-only shared memory mapping of the whole file (LevelDB's table reads, RocksDB's
 * {@code allow_mmap_reads}, Lucene's {@code MMapDirectory}): a read copies the bytes out of the mapping, with no
 * system call. Where the pages are in the OS page cache that is a memory copy, against a {@code pread} that enters
 * the kernel for every block, so a random 4 KiB read from the page cache costs less from a mapping (bench/RESULTS.md
 * has the figures). A page not yet in memory is read by the page fault that touches it.
 *
 * <p>The mapping is made with {@code mmap(2)} through Chronicle's {@code net.openhft:posix} (the calls the filters'
 * huge-page arena uses) and advised {@code MADV_RANDOM}, as RocksDB advises table files, so a page fault reads the
 * page it needs and not a readahead window. A large read (a compaction's readahead window, at least
 * {@link #WILLNEED_BYTES}) first advises its range {@code MADV_WILLNEED}, so the kernel reads it ahead in one pass
 * instead of one page per fault. The file descriptor is closed once the file is mapped.
 *
 * <p>Closing unmaps, exactly once. A read racing with {@link #close} must not touch unmapped memory (that would crash
 * the JVM, not throw), so every read registers itself: {@link #close} marks the file closed, waits for the reads in
 * flight, then unmaps; a read that starts after the mark throws {@link IOException}.
 *
 * <p>A page that cannot be read in (the file shrank under the mapping, or the device failed: {@code SIGBUS}) does not
 * crash the JVM either, but it is reported the JVM's way for memory-mapped data: an {@link InternalError} ("a fault
 * occurred in an unsafe memory access operation"). The faulting copy stops short, leaving the rest of {@code dst} as it
 * was, and the JVM throws the error at the thread's next safepoint poll: if that is still inside this method, it is
 * turned into an {@link IOException}; usually (always, once the JIT compiled the copy, in {@code MappedReadableFileTest})
 * it is shortly after this method returned. The engine's tables are never truncated, and a
 * block copied short fails its checksum ({@code CorruptionException}), so a fault is never read as a value; a caller
 * that must see every device error as an {@link IOException} reads with {@code pread}
 * ({@code Options.useMmapReads(false)}). Thread-safe.
 */
final class MappedReadableFile implements ReadableFile {
    private static final int O_RDONLY = 0;
    private static final int PROT_READ = 0x1;
    private static final int MAP_SHARED = 0x01;
    private static final int MADV_RANDOM = 1;
    private static final int MADV_WILLNEED = 3;
    /** Reads of at least this many bytes first ask the kernel to read their range ahead (compaction's windows). */
    static final int WILLNEED_BYTES = 64 << 10;

    private static final long PAGE_MASK = 4095;
    private static final int SEEK_END = 2;
    private static final int CLOSED = 1 << 30;
    private static final long BYTE_ARRAY_BASE = UnsafeMemory.UNSAFE.arrayBaseOffset(byte[].class);

    private static final AtomicLong LIVE_MAPPINGS = new AtomicLong();
    private static final AtomicLong LIVE_MAPPED_BYTES = new AtomicLong();

    private final Path path;
    private final PosixAPI posix;
    /** Start of the mapping (0 for an empty file, which is not mapped). */
    private final long address;

    private final long size;
    /** Reads in flight, plus {@link #CLOSED} once close began. */
    private final AtomicInteger state = new AtomicInteger();

    private MappedReadableFile(Path path, PosixAPI posix, long address, long size) {
        this.path = path;
        this.posix = posix;
        this.address = address;
        this.size = size;
    }

    /**
     * Maps {@code p} read-only.
     *
     * @throws IOException naming the path when it cannot be opened or mapped (no such file, the process's mapping
     *                     limit, no native access on this platform)
     */
    static MappedReadableFile open(Path p) throws IOException {
        if (!JvmEnvironment.nativeAccessEnabled()) {
            throw new IOException("memory-mapped reads need native access on Java "
                    + Runtime.version().feature() + " (run with --enable-native-access=ALL-UNNAMED): " + p);
        }
        PosixAPI posix;
        try {
            posix = PosixAPI.posix();
        } catch (RuntimeException | LinkageError e) {
            throw new IOException("memory-mapped reads are not available here (" + e + "): " + p, e);
        }
        int fd = posix.open(p.toString(), O_RDONLY, 0);
        if (fd < 0) {
            throw new IOException("cannot open " + p + " for a mapping: " + posix.lastErrorStr());
        }
        try {
            long size = posix.lseek(fd, 0, SEEK_END);
            if (size < 0) {
                throw new IOException("cannot size " + p + ": " + posix.lastErrorStr());
            }
            long address = 0;
            if (size > 0) {
                try {
                    address = posix.mmap(0, size, PROT_READ, MAP_SHARED, fd, 0);
                } catch (RuntimeException e) { // Chronicle's binding throws where mmap(2) returns MAP_FAILED
                    throw new IOException("mmap of " + size + " bytes of " + p + " failed: " + e.getMessage(), e);
                }
                if (address == -1 || address == 0) {
                    throw new IOException("mmap of " + size + " bytes of " + p + " failed: " + posix.lastErrorStr());
                }
                posix.madvise(address, size, MADV_RANDOM); // advice only: a refusal changes nothing we rely on
                LIVE_MAPPINGS.incrementAndGet();
                LIVE_MAPPED_BYTES.addAndGet(size);
            }
            return new MappedReadableFile(p, posix, address, size);
        } finally {
            posix.close(fd); // the mapping keeps the file
        }
    }

    @Override
    public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
        FileArgs.checkRead(pos, dst, off, len);
        if (pos > size - len) {
            throw new EOFException(
                    "read of " + len + " bytes at " + pos + " past the end of " + path + " (size " + size + ")");
        }
        if (state.getAndIncrement() >= CLOSED) {
            state.getAndDecrement();
            throw new IOException("file is closed: " + path);
        }
        try {
            if (len >= WILLNEED_BYTES) {
                long start = (address + pos) & ~PAGE_MASK;
                posix.madvise(start, address + pos + len - start, MADV_WILLNEED); // advice: a refusal only costs speed
            }
            UnsafeMemory.UNSAFE.copyMemory(null, address + pos, dst, BYTE_ARRAY_BASE + off, len);
        } catch (InternalError e) {
            // SIGBUS while copying, reported before the copy returned: the page could not be read in
            throw new IOException(
                    "fault reading " + len + " bytes at " + pos + " of the mapping of " + path + ": " + e.getMessage(),
                    e);
        } finally {
            state.getAndDecrement();
        }
    }

    @Override
    public long size() {
        return size;
    }

    /** The mapping's address (0 for an empty file, which is not mapped). */
    @Override
    public long mappedAddress() {
        return address;
    }

    @Override
    public Path path() {
        return path;
    }

    /** Unmaps, after the reads in flight; idempotent. */
    @Override
    public void close() throws IOException {
        int s;
        do {
            s = state.get();
            if (s >= CLOSED) {
                return; // closed already (or closing in another thread)
            }
        } while (!state.compareAndSet(s, s + CLOSED));
        while (state.get() != CLOSED) { // a read still copying
            Thread.onSpinWait();
        }
        if (size > 0) {
            LIVE_MAPPINGS.decrementAndGet();
            LIVE_MAPPED_BYTES.addAndGet(-size);
            if (posix.munmap(address, size) != 0) {
                throw new IOException("munmap of " + path + " failed: " + posix.lastErrorStr());
            }
        }
    }

    /** Files mapped by this class and not yet closed, in this process. */
    static long liveMappings() {
        return LIVE_MAPPINGS.get();
    }

    /** Bytes of those mappings. */
    static long liveMappedBytes() {
        return LIVE_MAPPED_BYTES.get();
    }
}
