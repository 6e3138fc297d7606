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
 * pages are the operating system's page cache, not memory this library allocated. Or in memory this object allocated
 * ({@link #allocate}) and the caller filled ({@link #write}): several filters in one allocation, probed the same way.
 *
 * <p>Two ways to probe. {@link #describe} parses and checks a filter's header once and writes what a probe needs into
 * {@link #DESCRIPTOR_LONGS} longs of the caller's (kind, probe count, size; Ribbon's seed and upper blocks): then
 * {@link #mightContain(long, long, long, long)}, {@link #touch} and {@link #mightContainTouched} probe it with no
 * header parse and no allocation, the caller keeping its descriptors as compactly as it likes (16 bytes a filter).
 * {@link #view} parses the header each time and returns a read-only {@link Filter} whose body is a window of this
 * memory (closing a view frees nothing). {@link #verify} checks a filter's header and CRC32C; a caller whose container
 * already checksums the same bytes (a table block) describes without it.
 *
 * <p>Contract (not checked: the memory is native): the caller keeps wrapped memory {@code [address, address + length)}
 * mapped and unchanged until it has called {@link #close()}, and neither probes after that nor closes this object
 * while a probe runs. {@link #close()} releases the one Chronicle handle that tracks this object (a leak is reported
 * as a leaked filter is), and allocated memory, exactly once. Thread-safe: probes and views are read-only; writes
 * happen before the written filters are published to probing threads.
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

    /**
     * Fresh zeroed native memory of {@code length} bytes that this object owns (64-byte aligned, from the process's
     * huge-page arena where it has one, as filter bodies are), freed by {@link #close()}: the caller copies serialized
     * filters in with {@link #write} (at 64-byte aligned offsets, a BLOCKED body's blocks are then cache lines), then
     * describes and probes them as wrapped memory. Rounded up to a multiple of 8 bytes.
     *
     * @throws IllegalArgumentException if {@code length <= 0}
     */
    public static InPlaceFilters allocate(long length) {
        if (length <= 0) {
            throw new IllegalArgumentException("length must be > 0: " + length);
        }
        return new InPlaceFilters(OffHeapRegion.allocate((length + 7) & ~7L));
    }

    /**
     * Copies {@code src[srcOff, srcOff + len)} to {@code [offset, offset + len)} of memory this object allocated
     * ({@link #allocate}); not while that range is being probed.
     *
     * @throws IllegalStateException if the memory is wrapped (the caller's, read-only) or this object is closed
     * @throws IndexOutOfBoundsException if either range is out of bounds
     */
    public void write(long offset, byte[] src, int srcOff, int len) {
        if (closed.get()) {
            throw new IllegalStateException("in-place filters are closed");
        }
        if (region.readOnly()) {
            throw new IllegalStateException("wrapped memory is the caller's and read-only");
        }
        region.write(offset, src, srcOff, len);
    }

    /** Off-heap bytes this object holds: what it allocated (padding included), 0 for wrapped memory. */
    public long allocatedBytes() {
        return region.readOnly() ? 0 : region.storeBytes();
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

    /** Longs of one filter's descriptor ({@link #describe}). */
    public static final int DESCRIPTOR_LONGS = 2;

    /*
     * Descriptor layout (in memory only, never stored): word 0 = kind code (bits 0-7) | probe count k or Ribbon's r
     * (bits 8-15) | 1 when the filter holds no key (bit 16) | m, the header's bits or slots (bits 24-63, m <= 2^40);
     * word 1 = Ribbon's seed (bits 0-31) | its upper block count (bits 32-63), 0 for the other kinds. Word 0 is never
     * 0 (k >= 1), so a caller may keep 0 for "not described yet".
     */
    private static final int KIND_BITS = 8;
    private static final int K_SHIFT = 8;
    private static final long EMPTY_BIT = 1L << 16;
    private static final int M_SHIFT = 24;
    /** The kind codes the descriptor's word 0 starts with ({@link FilterKind#code()}, fixed by bloom/FORMAT.md). */
    private static final int STANDARD = 1;

    private static final int PARTITIONED = 2;
    private static final int BLOCKED = 3;
    private static final int RIBBON = 5;

    static {
        if (FilterKind.STANDARD.code() != STANDARD
                || FilterKind.PARTITIONED.code() != PARTITIONED
                || FilterKind.BLOCKED.code() != BLOCKED
                || FilterKind.RIBBON.code() != RIBBON) {
            throw new ExceptionInInitializerError("filter kind codes changed");
        }
    }

    /**
     * Parses and checks the header of the serialized filter at {@code [offset, offset + length)} (as {@link #view}
     * does, without its CRC32C) and writes its descriptor to {@code into[at, at + DESCRIPTOR_LONGS)}; word 0 is never
     * 0. The descriptor is valid for that offset of this object only. A caller that publishes descriptors to other
     * threads writes word 1 before word 0 and reads word 0 first (release and acquire).
     *
     * @throws FilterFormatException if the header is not a valid header of {@code length} bytes, or names a COUNTING
     *     filter (counters, not bits: probe it through {@link #view})
     * @throws IndexOutOfBoundsException if the range lies outside the wrapped memory, or {@code into} is too short
     * @throws IllegalStateException if this object is closed
     */
    public void describe(long offset, long length, long[] into, int at) {
        FilterHeader h = header(offset, length);
        if (h.kind == FilterKind.COUNTING) {
            throw new FilterFormatException("a COUNTING filter is not probed through a descriptor");
        }
        if (at < 0 || at > into.length - DESCRIPTOR_LONGS) {
            throw new IndexOutOfBoundsException("descriptor at " + at + " of " + into.length + " longs");
        }
        into[at + 1] = h.kind == FilterKind.RIBBON ? Integer.toUnsignedLong(h.seed) | (h.upperBlocks << 32) : 0;
        into[at] = h.kind.code()
                | ((long) h.hashCount << K_SHIFT)
                | (h.keyCount == 0 ? EMPTY_BIT : 0)
                | (h.bits << M_SHIFT);
    }

    /**
     * Whether the filter at {@code offset}, described by {@code word0} and {@code word1} ({@link #describe} of that
     * offset), might contain {@code hash}; leaves at the first probe that rules it out. No allocation, no header parse.
     *
     * @throws IndexOutOfBoundsException if the described filter does not lie inside the wrapped memory
     * @throws IllegalStateException if this object is closed
     */
    public boolean mightContain(long offset, long word0, long word1, long hash) {
        return probeBody(body(offset, word0, word1), word0, word1, hash);
    }

    /**
     * Loads a word of each cache line a probe of {@code hash} reads first and returns it (fold it into a value kept,
     * so the load is not optimized away): callers probing several filters touch them all first, so the cache misses
     * overlap, then probe with {@link #mightContainTouched}. The Bloom kinds but BLOCKED touch nothing (0).
     */
    public long touch(long offset, long word0, long word1, long hash) {
        return touchBody(body(offset, word0, word1), word0, word1, hash);
    }

    /**
     * {@link #mightContain(long, long, long, long)}'s answer for a hash whose lines {@link #touch} requested: BLOCKED
     * and RIBBON test every probe (or column group) without a branch on each bit read, which costs less than a
     * mispredicted early exit once the lines are in the cache.
     */
    public boolean mightContainTouched(long offset, long word0, long word1, long hash) {
        return probeTouchedBody(body(offset, word0, word1), word0, word1, hash);
    }

    /*
     * The probes of a described filter whose body starts at native address {@code body} (bounds already checked: by
     * body(offset, ...) for one filter, by run(...) for a run), shared by the offset probes above and Run's.
     */

    private static boolean probeBody(long body, long word0, long word1, long hash) {
        long limit = bodyLength(word0, word1);
        int k = (int) (word0 >>> K_SHIFT) & 0xFF;
        long m = word0 >>> M_SHIFT;
        switch ((int) word0 & ((1 << KIND_BITS) - 1)) {
            case BLOCKED:
                return BlockedFilter.probeAt(body, limit, m / FilterMath.BLOCK_BITS, k, hash);
            case RIBBON:
                return (word0 & EMPTY_BIT) == 0
                        && RibbonFilter.probeAt(body, limit, m, k, (int) word1, word1 >>> 32, hash);
            case STANDARD:
                return StandardFilter.probeAt(body, limit, m, k, hash);
            case PARTITIONED:
                return PartitionedFilter.probeAt(body, limit, m, k, hash);
            default:
                throw new IllegalArgumentException("not a filter descriptor: " + Long.toHexString(word0));
        }
    }

    private static long touchBody(long body, long word0, long word1, long hash) {
        long limit = bodyLength(word0, word1);
        long m = word0 >>> M_SHIFT;
        switch ((int) word0 & ((1 << KIND_BITS) - 1)) {
            case BLOCKED:
                return BlockedFilter.touchAt(body, limit, m / FilterMath.BLOCK_BITS, hash);
            case RIBBON:
                return (word0 & EMPTY_BIT) != 0
                        ? 0
                        : RibbonFilter.touchAt(
                                body, limit, m, (int) (word0 >>> K_SHIFT) & 0xFF, (int) word1, word1 >>> 32, hash);
            default:
                return 0;
        }
    }

    private static boolean probeTouchedBody(long body, long word0, long word1, long hash) {
        long limit = bodyLength(word0, word1);
        int k = (int) (word0 >>> K_SHIFT) & 0xFF;
        long m = word0 >>> M_SHIFT;
        switch ((int) word0 & ((1 << KIND_BITS) - 1)) {
            case BLOCKED:
                return BlockedFilter.probeTouchedAt(body, limit, m / FilterMath.BLOCK_BITS, k, hash);
            case RIBBON:
                return (word0 & EMPTY_BIT) == 0
                        && RibbonFilter.probeTouchedAt(body, limit, m, k, (int) word1, word1 >>> 32, hash);
            default:
                return probeBody(body, word0, word1, hash);
        }
    }

    /**
     * A probe view of {@code count} serialized filters of one geometry lying at a fixed stride: filter i at
     * {@code offset + i * stride}, each described by the same {@code word0} and {@code word1} ({@link #describe}).
     * Its probes read the i-th filter's body with no descriptor load, no offset table and no header parse: the address
     * is computed from i. For a partitioned filter whose partitions were built to one geometry (one key count, one
     * bits-per-key): the same loads per probe as one whole filter.
     *
     * <p>Checked here, once: that all {@code count} filters of that geometry lie inside this object's memory. Not checked
     * (the caller's contract): that each filter the caller probes through the run was described with these words (a
     * reader probes through the run only the filters whose own descriptor it found equal), and that no probe runs after
     * {@link #close()} (as for every probe of this class; the run keeps no reference that would keep the memory).
     *
     * @throws IllegalArgumentException if {@code count < 1}, {@code stride} is shorter than one such filter, or the
     *     words name a COUNTING filter or no filter
     * @throws IndexOutOfBoundsException if the filters do not all lie inside the memory
     * @throws IllegalStateException if this object is closed
     */
    public Run run(long offset, long stride, int count, long word0, long word1) {
        if (closed.get()) {
            throw new IllegalStateException("in-place filters are closed");
        }
        int kind = (int) word0 & ((1 << KIND_BITS) - 1);
        if (kind != BLOCKED && kind != RIBBON && kind != STANDARD && kind != PARTITIONED) {
            throw new IllegalArgumentException("not a filter descriptor: " + Long.toHexString(word0));
        }
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1: " + count);
        }
        long length = FilterHeader.HEADER_SIZE + bodyLength(word0, word1);
        if (stride < length) {
            throw new IllegalArgumentException(
                    "stride " + stride + " is shorter than one filter of " + length + " bytes");
        }
        long last = Math.addExact(offset, Math.multiplyExact(stride, (long) (count - 1)));
        if (offset < 0 || last > region.length() - length) {
            throw new IndexOutOfBoundsException(count + " filters of " + length + " bytes from " + offset
                    + " at stride " + stride + " outside " + region.length() + " bytes");
        }
        return new Run(region.address() + offset + FilterHeader.HEADER_SIZE, stride, count, word0, word1);
    }

    /**
     * Filters of one geometry at a fixed stride ({@link InPlaceFilters#run}). Immutable; valid while the memory it was
     * made from is open.
     */
    public static final class Run {
        private final long firstBody;
        private final long stride;
        private final int count;
        private final long word0;
        private final long word1;

        private Run(long firstBody, long stride, int count, long word0, long word1) {
            this.firstBody = firstBody;
            this.stride = stride;
            this.count = count;
            this.word0 = word0;
            this.word1 = word1;
        }

        /** Word 0 of the descriptor every filter of the run shares. */
        public long word0() {
            return word0;
        }

        /** Word 1 of the descriptor every filter of the run shares. */
        public long word1() {
            return word1;
        }

        /** Filters in the run. */
        public int count() {
            return count;
        }

        private long body(int i) {
            return firstBody + stride * java.util.Objects.checkIndex(i, count);
        }

        /**
         * Whether filter {@code i} might contain {@code hash}: {@link InPlaceFilters#mightContain} of its offset.
         *
         * @throws IndexOutOfBoundsException if {@code i} is not in [0, count)
         */
        public boolean mightContain(int i, long hash) {
            return probeBody(body(i), word0, word1, hash);
        }

        /** {@link InPlaceFilters#touch} of filter {@code i}. */
        public long touch(int i, long hash) {
            return touchBody(body(i), word0, word1, hash);
        }

        /** {@link InPlaceFilters#mightContainTouched} of filter {@code i}. */
        public boolean mightContainTouched(int i, long hash) {
            return probeTouchedBody(body(i), word0, word1, hash);
        }
    }

    /** Body bytes of the described filter (its geometry was checked by {@link #describe}). */
    private static long bodyLength(long word0, long word1) {
        long m = word0 >>> M_SHIFT;
        if (((int) word0 & ((1 << KIND_BITS) - 1)) == RIBBON) {
            int r = (int) (word0 >>> K_SHIFT) & 0xFF;
            return (m / RibbonFilter.BLOCK_SLOTS * r + (word1 >>> 32)) * RibbonFilter.SEGMENT_BYTES;
        }
        return m / 8;
    }

    /** Native address of the described filter's body, after checking that the filter lies in the wrapped memory. */
    private long body(long offset, long word0, long word1) {
        if (closed.get()) {
            throw new IllegalStateException("in-place filters are closed");
        }
        long length = FilterHeader.HEADER_SIZE + bodyLength(word0, word1);
        if (offset < 0 || offset > region.length() - length) {
            throw new IndexOutOfBoundsException(
                    "filter [" + offset + ", " + (offset + length) + ") outside " + region.length() + " bytes");
        }
        return region.address() + offset + FilterHeader.HEADER_SIZE;
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

    /** Releases the tracking handle, once; wrapped memory stays the caller's, allocated memory is freed. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            LIVE.decrementAndGet();
            region.release();
        }
    }
}
