package io.bloomkv.bloom;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Creates filters, and reads them back from their serialized form (bloom/FORMAT.md).
 *
 * <p>Sizing from bits per key b and expected keys n (at least 1 is assumed):
 * <ul>
 *   <li>STANDARD: m = ceil(n b) rounded up to 64 bits, k = round(b ln 2);</li>
 *   <li>PARTITIONED: k = round(b ln 2) rows of ceil(n b / k) bits rounded up to 64;</li>
 *   <li>BLOCKED: ceil(n b / 512) blocks of 512 bits, k minimizing {@link FilterMath#blockedFpp} at the
 *       REQUESTED b ({@link FilterMath#optimalBlockedK}(b)), as RocksDB's FastLocalBloom chooses k from
 *       millibits_per_key. Rounding up to whole blocks only adds bits; choosing k from the rounded-up
 *       bits per key would give a 4-key filter (one block, 128 bits per key) 25 probes per query.
 *       {@link Filter#expectedFpp()} still uses the actual geometry (m, k, n);</li>
 *   <li>COUNTING: b counts counters per key (each 4 bits, so memory is 4 b bits per key):
 *       m = ceil(n b) counters rounded up to 16, k = round(b ln 2).</li>
 * </ul>
 */
public final class Filters {

    private Filters() {}

    /**
     * A new, empty filter of {@code kind} for about {@code expectedKeys} keys at {@code bitsPerKey}.
     *
     * @throws IllegalArgumentException for {@link FilterKind#RIBBON}, a static filter: use {@link #build}
     */
    public static Filter create(FilterKind kind, long expectedKeys, double bitsPerKey) {
        if (kind == null) {
            throw new NullPointerException("kind");
        }
        if (kind.isStatic()) {
            throw new IllegalArgumentException(
                    kind
                            + " is a static filter built from all its keys at once: use Filters.build(kind, keyHashes, bitsPerKey)");
        }
        if (expectedKeys < 0) {
            throw new IllegalArgumentException("expectedKeys must not be negative: " + expectedKeys);
        }
        FilterMath.checkBitsPerKey(bitsPerKey);
        long n = Math.max(1, expectedKeys);
        double wanted = Math.ceil(n * bitsPerKey);
        if (wanted > FilterHeader.MAX_BITS) {
            throw new IllegalArgumentException(
                    n + " keys at " + bitsPerKey + " bits per key exceed the 2^40-bit limit");
        }
        long m = (long) wanted;
        switch (kind) {
            case STANDARD: {
                long bits = roundUp(m, 64);
                int k = FilterMath.optimalK(bitsPerKey);
                return new StandardFilter(OffHeapRegion.allocate(bits / 8), k, bits, expectedKeys, 0);
            }
            case PARTITIONED: {
                int k = FilterMath.optimalK(bitsPerKey);
                long bits = partitionedBits(m, k, n, bitsPerKey);
                return new PartitionedFilter(OffHeapRegion.allocate(bits / 8), k, bits, expectedKeys, 0);
            }
            case BLOCKED: {
                long bits = roundUp(m, FilterMath.BLOCK_BITS);
                int k = FilterMath.optimalBlockedK(bitsPerKey);
                return new BlockedFilter(OffHeapRegion.allocate(bits / 8), k, bits, expectedKeys, 0);
            }
            case COUNTING: {
                long counters = roundUp(m, 16);
                int k = FilterMath.optimalK(bitsPerKey);
                return new CountingBloomFilter(OffHeapRegion.allocate(counters / 2), k, counters, expectedKeys, 0);
            }
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    /**
     * An immutable filter holding exactly {@code keyHashes} (each a {@link Hashing#hash64} value; duplicates are
     * fine) at {@code bitsPerKey}: the only way to make a {@link FilterKind#RIBBON}. For the Bloom kinds it is
     * {@link #create} for {@code keyHashes.length} keys plus an {@code add} of each hash; for RIBBON,
     * {@code bitsPerKey} may be fractional (the solution holds ceil(b n / 128) 128-bit segments; see
     * {@link FilterMath#ribbonFppForBitsPerKey}). {@code add} on the result throws {@link IllegalStateException};
     * an empty key set gives a filter that contains nothing. The array is not modified or retained.
     */
    public static Filter build(FilterKind kind, long[] keyHashes, double bitsPerKey) {
        if (keyHashes == null) {
            throw new NullPointerException("keyHashes");
        }
        return build(kind, keyHashes, keyHashes.length, bitsPerKey);
    }

    /**
     * {@link #build(FilterKind, long[], double)} of the first {@code count} hashes of {@code keyHashes} (a buffer
     * filled up to {@code count}, as a table writer collects them), without copying them out first.
     *
     * @throws IndexOutOfBoundsException if {@code count} is negative or exceeds {@code keyHashes.length}
     */
    public static Filter build(FilterKind kind, long[] keyHashes, int count, double bitsPerKey) {
        if (kind == null) {
            throw new NullPointerException("kind");
        }
        if (keyHashes == null) {
            throw new NullPointerException("keyHashes");
        }
        java.util.Objects.checkFromIndexSize(0, count, keyHashes.length);
        FilterMath.checkBitsPerKey(bitsPerKey);
        if (kind == FilterKind.RIBBON) {
            RibbonFilter f = RibbonBuilder.build(
                    count == keyHashes.length ? keyHashes : java.util.Arrays.copyOf(keyHashes, count), bitsPerKey);
            f.makeImmutable();
            return f;
        }
        OffHeapFilter f = (OffHeapFilter) create(kind, count, bitsPerKey);
        try {
            f.addAll(keyHashes, count);
            f.makeImmutable();
            return f;
        } catch (RuntimeException | Error e) {
            f.close();
            throw e;
        }
    }

    /**
     * A new filter sized so that {@code expectedKeys} keys give about {@code targetFpp}: bits per key
     * {@link FilterMath#bitsPerKeyForFpp} (-ln p / (ln 2)^2), or {@link FilterMath#blockedBitsPerKeyForFpp}
     * for BLOCKED, which needs a little more for the same rate.
     */
    public static Filter createForFpp(FilterKind kind, long expectedKeys, double targetFpp) {
        Objects.requireNonNull(kind, "kind");
        FilterMath.checkFpp(targetFpp);
        if (kind.isStatic()) {
            throw new IllegalArgumentException(
                    kind + " is a static filter built from all its keys at once: use Filters.build "
                            + "with FilterMath.ribbonBitsPerKeyForFpp");
        }
        double bitsPerKey = kind == FilterKind.BLOCKED
                ? FilterMath.blockedBitsPerKeyForFpp(targetFpp)
                : FilterMath.bitsPerKeyForFpp(targetFpp);
        return create(kind, expectedKeys, bitsPerKey);
    }

    /** A new counting filter; {@code countersPerKey} counters of 4 bits each per expected key. */
    public static CountingFilter createCounting(long expectedKeys, double countersPerKey) {
        return (CountingFilter) create(FilterKind.COUNTING, expectedKeys, countersPerKey);
    }

    /**
     * Reads a serialized filter of exactly {@code len} bytes, copying its body into fresh off-heap memory.
     *
     * @throws FilterFormatException if the header is corrupt or unknown, the length is wrong or the CRC fails
     */
    public static Filter read(byte[] bytes, int off, int len) {
        return read(bytes, off, len, true);
    }

    /**
     * {@link #read(byte[], int, int)} without computing the filter's CRC32C: for bytes whose container has just
     * verified its own checksum over them (a table block's CRC32C), so they are read once, not twice. The header is
     * parsed and checked as by {@link #read(byte[], int, int)}.
     *
     * @throws FilterFormatException if the header is not a valid filter header of {@code len} bytes
     */
    public static Filter readWithoutCrc(byte[] bytes, int off, int len) {
        return read(bytes, off, len, false);
    }

    private static Filter read(byte[] bytes, int off, int len, boolean checkCrc) {
        if (off < 0 || len < 0 || off > bytes.length - len) {
            throw new IndexOutOfBoundsException(
                    "[" + off + ", " + ((long) off + len) + ") outside array of " + bytes.length);
        }
        FilterHeader header = FilterHeader.parse(ByteBuffer.wrap(bytes, off, len), len);
        if (checkCrc) {
            CRC32C crc = new CRC32C();
            crc.update(bytes, off, FilterHeader.OFF_CRC);
            crc.update(bytes, off + FilterHeader.HEADER_SIZE, (int) header.bodyLength);
            FilterHeader.checkCrc(header.crc, (int) crc.getValue());
        }
        OffHeapRegion body = OffHeapRegion.allocate(header.bodyLength);
        try {
            body.write(0, bytes, off + FilterHeader.HEADER_SIZE, (int) header.bodyLength);
            return newFilter(header, body);
        } catch (RuntimeException | Error e) {
            body.release();
            throw e;
        }
    }

    /**
     * Reads the serialized filter that fills {@code buf}'s remaining bytes, copying its body into fresh off-heap
     * memory. The buffer's position is not changed.
     */
    public static Filter read(ByteBuffer buf) {
        ByteBuffer src = buf.duplicate();
        int len = src.remaining();
        FilterHeader header = FilterHeader.parse(src, len);
        CRC32C crc = new CRC32C();
        crc.update(src.duplicate().limit(src.position() + FilterHeader.OFF_CRC));
        crc.update(src.duplicate().position(src.position() + FilterHeader.HEADER_SIZE));
        FilterHeader.checkCrc(header.crc, (int) crc.getValue());
        OffHeapRegion body = OffHeapRegion.allocate(header.bodyLength);
        try {
            byte[] chunk = new byte[(int) Math.min(64 * 1024, header.bodyLength)];
            src.position(src.position() + FilterHeader.HEADER_SIZE);
            for (long done = 0; done < header.bodyLength; ) {
                int n = (int) Math.min(chunk.length, header.bodyLength - done);
                src.get(chunk, 0, n);
                body.write(done, chunk, 0, n);
                done += n;
            }
            return newFilter(header, body);
        } catch (RuntimeException | Error e) {
            body.release();
            throw e;
        }
    }

    /**
     * Maps the serialized filter stored in {@code file[offset, offset+length)} read-only and uses it in place,
     * without copying. The CRC is verified (which reads every page once). The filter is read-only
     * ({@code add} throws {@link IllegalStateException}); {@link Filter#close()} unmaps the region, after which
     * the file may be deleted. Regions larger than 2 GiB are not supported by this method.
     *
     * @throws FilterFormatException if the region does not hold a valid filter
     */
    public static Filter map(Path file, long offset, long length) throws IOException {
        if (offset < 0 || length < 0 || length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("bad region offset=" + offset + " length=" + length);
        }
        if (length < FilterHeader.HEADER_SIZE) {
            throw new FilterFormatException(
                    "filter truncated: " + length + " bytes, the header alone needs " + FilterHeader.HEADER_SIZE);
        }
        MappedByteBuffer mapped;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (offset > size - length) {
                throw new FilterFormatException("filter region [" + offset + ", " + (offset + length)
                        + ") lies beyond the end of " + file + " (" + size + " bytes)");
            }
            mapped = ch.map(FileChannel.MapMode.READ_ONLY, offset, length);
        }
        // From here the mapping is owned by the region, or released on failure exactly once.
        OffHeapRegion region =
                OffHeapRegion.wrapMapped(mapped, FilterHeader.HEADER_SIZE, length - FilterHeader.HEADER_SIZE);
        try {
            FilterHeader header = FilterHeader.parse(mapped, length);
            CRC32C crc = new CRC32C();
            crc.update(mapped.duplicate().limit(FilterHeader.OFF_CRC));
            crc.update(mapped.duplicate().position(FilterHeader.HEADER_SIZE));
            FilterHeader.checkCrc(header.crc, (int) crc.getValue());
            return newFilter(header, region);
        } catch (RuntimeException | Error e) {
            region.release();
            throw e;
        }
    }

    static Filter newFilter(FilterHeader h, OffHeapRegion body) {
        switch (h.kind) {
            case STANDARD:
                return new StandardFilter(body, h.hashCount, h.bits, h.expectedKeys, h.keyCount);
            case PARTITIONED:
                return new PartitionedFilter(body, h.hashCount, h.bits, h.expectedKeys, h.keyCount);
            case BLOCKED:
                return new BlockedFilter(body, h.hashCount, h.bits, h.expectedKeys, h.keyCount);
            case COUNTING:
                return new CountingBloomFilter(body, h.hashCount, h.bits, h.expectedKeys, h.keyCount);
            case RIBBON: {
                RibbonFilter f =
                        new RibbonFilter(body, h.hashCount, h.bits, h.expectedKeys, h.keyCount, h.seed, h.upperBlocks);
                f.makeImmutable();
                return f;
            }
            default:
                throw new FilterFormatException("unknown kind " + h.kind);
        }
    }

    /**
     * A new filter holding every key of {@code a} and of {@code b}: the bitwise OR of two Bloom bodies, which is bit for
     * bit the filter built from the union of their key sets; for COUNTING the counters' saturating sum (Guava's
     * {@code putAll}). Its {@link Filter#keyCount()} is the sum of the operands' (adds, not distinct keys: see
     * {@link Filter#approximateKeyCount()}). The operands are unchanged and stay open.
     *
     * @throws IncompatibleFiltersException if the kinds, sizes or probe counts differ, or for RIBBON (no sound union)
     */
    public static Filter union(Filter a, Filter b) {
        return FilterAlgebra.combine(a, b, FilterAlgebra.Op.UNION);
    }

    /**
     * A new filter that answers "might contain" for every key held by both {@code a} and {@code b}: the bitwise AND of
     * two Bloom bodies (COUNTING: the counters' minimum). It is NOT the filter built from the intersection: it also
     * keeps the bits a key of A \ B shares with a key of B \ A, so its false-positive rate lies between that filter's
     * and the rate of a filter holding all of A ∪ B's fill that survives the AND; it never exceeds either operand's.
     * {@link Filter#keyCount()} is the smaller operand's, so {@link Filter#expectedFpp()} is an upper bound. The size
     * of the intersection is better estimated as a.approximateKeyCount() + b.approximateKeyCount() -
     * union(a, b).approximateKeyCount() (Swamidass–Baldi).
     *
     * @throws IncompatibleFiltersException if the kinds, sizes or probe counts differ, or for RIBBON
     */
    public static Filter intersection(Filter a, Filter b) {
        return FilterAlgebra.combine(a, b, FilterAlgebra.Op.INTERSECTION);
    }

    /**
     * Reads one filter in the compressed wire form ({@link Filter#writeCompressed}, bloom/FORMAT.md "Compressed form")
     * from {@code in}, consuming exactly its bytes, into fresh off-heap memory.
     *
     * @throws FilterFormatException if the record is malformed, truncated or fails either CRC32C
     */
    public static Filter readCompressed(InputStream in) throws IOException {
        return readCompressed(in, Long.MAX_VALUE);
    }

    /**
     * As {@link #readCompressed(InputStream)}, refusing ({@link FilterFormatException}) a filter whose body would take
     * more than {@code maxBodyBytes}: a few bytes of compressed record can describe a large, nearly empty filter, so a
     * reader of untrusted input bounds what it allocates.
     */
    public static Filter readCompressed(InputStream in, long maxBodyBytes) throws IOException {
        if (in == null) {
            throw new NullPointerException("in");
        }
        return CompressedFilterCodec.read(in, maxBodyBytes);
    }

    /**
     * As {@link #create} with the probe count fixed at {@code hashCount} instead of the optimum: a larger, sparser
     * filter for {@link Filter#writeCompressed} (size it with {@link FilterMath#bitsPerKeyForFpp(double, int)}).
     */
    public static Filter create(FilterKind kind, long expectedKeys, double bitsPerKey, int hashCount) {
        if (hashCount < 1 || hashCount > FilterMath.MAX_HASH_COUNT) {
            throw new IllegalArgumentException(
                    "hashCount outside [1, " + FilterMath.MAX_HASH_COUNT + "]: " + hashCount);
        }
        if (kind == null) {
            throw new NullPointerException("kind");
        }
        if (kind.isStatic()) {
            throw new IllegalArgumentException(kind + " is a static filter: use Filters.build");
        }
        if (expectedKeys < 0) {
            throw new IllegalArgumentException("expectedKeys must not be negative: " + expectedKeys);
        }
        FilterMath.checkBitsPerKey(bitsPerKey);
        double wanted = Math.ceil(Math.max(1, expectedKeys) * bitsPerKey);
        if (wanted > FilterHeader.MAX_BITS) {
            throw new IllegalArgumentException(
                    expectedKeys + " keys at " + bitsPerKey + " bits per key exceed the 2^40-bit limit");
        }
        long m = (long) wanted;
        switch (kind) {
            case STANDARD: {
                long bits = roundUp(m, 64);
                return new StandardFilter(OffHeapRegion.allocate(bits / 8), hashCount, bits, expectedKeys, 0);
            }
            case PARTITIONED: {
                long bits = partitionedBits(m, hashCount, expectedKeys, bitsPerKey);
                return new PartitionedFilter(OffHeapRegion.allocate(bits / 8), hashCount, bits, expectedKeys, 0);
            }
            case BLOCKED: {
                long bits = roundUp(m, FilterMath.BLOCK_BITS);
                return new BlockedFilter(OffHeapRegion.allocate(bits / 8), hashCount, bits, expectedKeys, 0);
            }
            case COUNTING: {
                long counters = roundUp(m, 16);
                return new CountingBloomFilter(
                        OffHeapRegion.allocate(counters / 2), hashCount, counters, expectedKeys, 0);
            }
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    /**
     * k rows of ceil(m / k) bits rounded up to 64: m plus the rounding, which can pass the 2^40-bit limit when m is near
     * it (refused here, before anything is allocated).
     */
    private static long partitionedBits(long m, int k, long expectedKeys, double bitsPerKey) {
        long bits = roundUp((m + k - 1) / k, 64) * k;
        if (bits > FilterHeader.MAX_BITS) {
            throw new IllegalArgumentException(expectedKeys + " keys at " + bitsPerKey + " bits per key in " + k
                    + " rows of a multiple of 64 bits exceed the 2^40-bit limit");
        }
        return bits;
    }

    private static long roundUp(long x, long multiple) {
        return ((Math.max(1, x) + multiple - 1) / multiple) * multiple;
    }

    /**
     * Bytes of filter bodies now allocated from the process's huge-page arena (0 when it is off: off Linux, or with
     * {@code -Dbloomkv.filters.hugePages=false}; bodies are then {@code malloc}'d through Chronicle).
     */
    public static long hugePageArenaLiveBytes() {
        HugePageArena a = HugePageArena.shared();
        return a == null ? 0 : a.liveBytes();
    }

    /** Bytes the huge-page arena has mapped: live bodies, the free ranges of its slabs, one spare slab (0 when off). */
    public static long hugePageArenaMappedBytes() {
        HugePageArena a = HugePageArena.shared();
        return a == null ? 0 : a.mappedBytes();
    }
}
