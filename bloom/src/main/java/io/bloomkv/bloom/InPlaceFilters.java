package io.bloomkv.bloom;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import net.openhft.chronicle.core.UnsafeMemory;

/**
 * Serialized filters lying in native memory that the caller owns and keeps readable, such as a read-only mapping of a
 * file that holds them, probed where they lie: no copy and no off-heap allocation per filter. LevelDB reads the blocks
 * of a mapped table the same way, and RocksDB's mapped tables hand out block contents that point into the mapping; the
 * pages are the operating system's page cache, not memory this library allocated.
 *
 * <p>{@link #view} parses the header each time (the few checks of {@link Filters#read}) and returns a read-only
 * {@link Filter} whose body is a window of this memory; closing a view frees nothing. {@link #verify} checks a
 * filter's header and CRC32C once, so a caller probing the same filter often verifies it once and views it cheaply
 * afterwards.
 *
 * <p>Contract (not checked: the memory is native): the caller keeps {@code [address, address + length)} mapped and
 * unchanged until it has called {@link #close()}, and neither probes a view after that nor closes this object while a
 * view is being probed. {@link #close()} releases the one Chronicle handle that tracks this object (a leak is reported
 * as a leaked filter is), exactly once. Thread-safe: views are independent and read-only.
 */
public final class InPlaceFilters implements AutoCloseable {
    private static final AtomicLong LIVE = new AtomicLong();
    private static final long BYTE_ARRAY_BASE = UnsafeMemory.UNSAFE.arrayBaseOffset(byte[].class);

    private final OffHeapRegion region;
    private final AtomicBoolean closed = new AtomicBoolean();

    private InPlaceFilters(OffHeapRegion region) {
        this.region = region;
        LIVE.incrementAndGet();
    }

    /** Objects of this class wrapped and not yet closed in this JVM (for leak checks). */
    public static long live() {
        return LIVE.get();
    }

    /**
     * Wraps native memory {@code [address, address + length)} (for example a read-only mapping), which the caller owns.
     *
     * @throws IllegalArgumentException if {@code address} is 0 or {@code length <= 0}
     */
    public static InPlaceFilters wrap(long address, long length) {
        return new InPlaceFilters(OffHeapRegion.wrapPointer(address, length));
    }

    /** Bytes of native memory wrapped. */
    public long length() {
        return region.length();
    }

    /**
     * Checks the serialized filter at {@code [offset, offset + length)}: its header (as {@link Filters#read} does) and
     * its CRC32C, reading every byte once.
     *
     * @throws FilterFormatException if it is not a valid filter
     * @throws IndexOutOfBoundsException if the range lies outside the wrapped memory
     */
    public void verify(long offset, long length) {
        FilterHeader h = header(offset, length);
        CRC32C crc = new CRC32C();
        byte[] chunk = new byte[(int) Math.min(16 * 1024, Math.max(FilterHeader.HEADER_SIZE, h.bodyLength))];
        region.read(offset, chunk, 0, FilterHeader.OFF_CRC);
        crc.update(chunk, 0, FilterHeader.OFF_CRC);
        for (long done = 0; done < h.bodyLength; ) {
            int n = (int) Math.min(chunk.length, h.bodyLength - done);
            region.read(offset + FilterHeader.HEADER_SIZE + done, chunk, 0, n);
            crc.update(chunk, 0, n);
            done += n;
        }
        FilterHeader.checkCrc(h.crc, (int) crc.getValue());
    }

    /**
     * A read-only filter over the serialized filter at {@code [offset, offset + length)}, probed in place. Parses and
     * checks the header but not the CRC32C (call {@link #verify} once first). Closing the view frees nothing.
     *
     * @throws FilterFormatException if the header is not a valid filter header of {@code length} bytes
     * @throws IndexOutOfBoundsException if the range lies outside the wrapped memory
     * @throws IllegalStateException if this object is closed
     */
    public Filter view(long offset, long length) {
        FilterHeader h = header(offset, length);
        return Filters.newFilter(h, region.slice(offset + FilterHeader.HEADER_SIZE, h.bodyLength));
    }

    private FilterHeader header(long offset, long length) {
        if (closed.get()) {
            throw new IllegalStateException("in-place filters are closed");
        }
        if (offset < 0 || length < FilterHeader.HEADER_SIZE || offset > region.length() - length) {
            throw new IndexOutOfBoundsException("filter [" + offset + ", " + (offset + length) + ") outside "
                    + region.length() + " bytes, or shorter than a header");
        }
        byte[] hb = new byte[FilterHeader.HEADER_SIZE];
        UnsafeMemory.UNSAFE.copyMemory(null, region.address() + offset, hb, BYTE_ARRAY_BASE, hb.length);
        return FilterHeader.parse(ByteBuffer.wrap(hb), length);
    }

    /** Releases the tracking handle, once; the wrapped memory stays the caller's. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            LIVE.decrementAndGet();
            region.release();
        }
    }
}
