package io.bloomkv.bloom;

import net.openhft.chronicle.core.UnsafeMemory;

/**
 * A standard Ribbon filter (Dillinger &amp; Walzer, "Ribbon filter: practically smaller than Bloom and Xor", 2021),
 * the static filter RocksDB uses below {@code bloom_before_level}. Built by {@link RibbonBuilder} from the whole key
 * set; immutable.
 *
 * <p>Each key's hash h gives, through one seeded remix ({@link #remix}), a start slot s in [0, m - 127], a 128-bit
 * coefficient row c (bit 0 set) and result bits. The filter stores a solution S: m slots of r or r + 1 bits such
 * that for every key and every stored column j, the parity of c AND S_j[s, s + 128) equals result bit j. A key
 * never added matches all its columns with probability 2^-columns.
 *
 * <p>Storage is interleaved column-major, as RocksDB's InterleavedSolutionStorage: the m slots form m / 128 blocks;
 * a block stores each of its columns as one 16-byte segment (two little-endian words, slot 128b + t is bit t, the
 * low word first). The first B - U blocks store r columns, the last U blocks r + 1, so a filter spends any
 * (fractional) number of bits per key. A query reads the columns of its start block and of the next block;
 * a key starting in a lower block checks r columns, one in an upper block r + 1 (its next block is upper too).
 * Layout and derivation: bloom/FORMAT.md.
 *
 * <p>A filter built from no keys answers {@code false} to every query.
 */
final class RibbonFilter extends OffHeapFilter {
    /** Coefficient width w in bits: slots per block, bits per segment. */
    static final int BLOCK_SLOTS = 128;

    static final int SEGMENT_BYTES = 16;
    /** Largest number of result columns of a block (the result bits come from 32 bits of the remix). */
    static final int MAX_RESULT_BITS = 32;

    /** Columns whose parities {@link #probeTouched} compares at once before it decides to go on. */
    private static final int COLUMN_GROUP = 4;

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    private static final long COEFF_LO_SALT = 0x2545F4914F6CDD1DL;
    private static final long COEFF_HI_SALT = 0x6A09E667F3BCC909L;

    private final int seed;
    private final long upperBlocks;
    private final boolean empty;

    RibbonFilter(OffHeapRegion body, int r, long slots, long expectedKeys, long keyCount, int seed, long upperBlocks) {
        super(
                body,
                r,
                slots,
                expectedKeys,
                keyCount,
                FilterHeader.bodyLength(FilterKind.RIBBON, r, slots, upperBlocks));
        this.seed = seed;
        this.upperBlocks = upperBlocks;
        this.empty = keyCount == 0;
    }

    @Override
    public FilterKind kind() {
        return FilterKind.RIBBON;
    }

    /** The seeded remix of a key hash; start, coefficients and result bits are all derived from it. */
    static long remix(long hash, int seed) {
        return Probes.step(hash + (Integer.toUnsignedLong(seed) + 1) * GOLDEN);
    }

    /** Start slot in [0, starts): multiply-shift of the remix's high bits. */
    static long start(long remix, long starts) {
        return Probes.reduce(remix, starts);
    }

    /** Coefficient bits 0..63 (slot s .. s+63); bit 0 is always set so a row is never zero. */
    static long coeffLo(long remix) {
        return Probes.step(remix ^ COEFF_LO_SALT) | 1L;
    }

    /** Coefficient bits 64..127 (slot s+64 .. s+127). */
    static long coeffHi(long remix) {
        return Probes.step(remix ^ COEFF_HI_SALT);
    }

    /** Result bits: bit j is the expected parity of column j. */
    static int result(long remix) {
        return (int) remix;
    }

    /** Index of the first segment of block {@code b}: lower blocks hold r segments, upper ones r + 1. */
    static long firstSegment(long b, int r, long upperStart) {
        return b * r + Math.max(0, b - upperStart);
    }

    @Override
    int headerSeed() {
        return seed;
    }

    @Override
    long headerUpperBlocks() {
        return upperBlocks;
    }

    @Override
    void addHash(long hash) {
        throw new IllegalStateException("RIBBON filters are static: build them from all the keys with Filters.build");
    }

    /** Touches the first segment of the key's start block and of the next one (when it has one). */
    @Override
    long touchLines(long hash) {
        return empty ? 0 : touchAt(body.address(), body.length(), bits, k, seed, upperBlocks, hash);
    }

    @Override
    boolean probe(long hash) {
        return !empty && probeAt(body.address(), body.length(), bits, k, seed, upperBlocks, hash);
    }

    @Override
    boolean probeTouched(long hash) {
        return !empty && probeTouchedAt(body.address(), body.length(), bits, k, seed, upperBlocks, hash);
    }

    /*
     * The queries of a Ribbon body of {@code slots} slots, r = {@code r} result columns in the lower blocks and
     * {@code upperBlocks} upper blocks, built with {@code seed}, lying in native memory [address, address + limit),
     * whoever owns it: this filter's region, or a serialized filter probed where it lies ({@link InPlaceFilters}).
     * Each checks that the segments it reads lie below {@code limit} (Chronicle's native stores check nothing), then
     * reads them with plain loads. The caller answers an empty filter (no keys) itself: its body is all zero, which
     * these would read as "might contain" for a key whose result bits are zero.
     */

    /** The first word of the key's start block and of the next one (when it has one), summed. */
    static long touchAt(long address, long limit, long slots, int r, int seed, long upperBlocks, long hash) {
        long upperStart = slots / BLOCK_SLOTS - upperBlocks;
        long s = start(remix(hash, seed), slots - BLOCK_SLOTS + 1);
        long b = s >>> 7;
        long off0 = firstSegment(b, r, upperStart) * SEGMENT_BYTES;
        OffHeapRegion.checkRange(off0, 8, limit);
        long w = UnsafeMemory.MEMORY.readLong(address + off0);
        if ((s & (BLOCK_SLOTS - 1)) != 0) {
            long off1 = off0 + (long) (b < upperStart ? r : r + 1) * SEGMENT_BYTES;
            OffHeapRegion.checkRange(off1, 8, limit);
            w += UnsafeMemory.MEMORY.readLong(address + off1);
        }
        return w;
    }

    /** True when every stored column's parity matches the key's result bit; leaves at the first that does not. */
    static boolean probeAt(long address, long limit, long slots, int r, int seed, long upperBlocks, long hash) {
        long upperStart = slots / BLOCK_SLOTS - upperBlocks;
        long a = remix(hash, seed);
        long s = start(a, slots - BLOCK_SLOTS + 1);
        long lo = coeffLo(a);
        long hi = coeffHi(a);
        int expected = result(a);
        long b = s >>> 7;
        int o = (int) (s & (BLOCK_SLOTS - 1));
        int columns = b < upperStart ? r : r + 1;
        // The coefficient shifted up by o as a 256-bit value w0..w3: w0, w1 meet block b, w2, w3 block b + 1.
        long w0;
        long w1;
        long w2;
        long w3;
        if (o < 64) {
            w0 = lo << o;
            w1 = (hi << o) | (lo >>> 1 >>> (63 - o));
            w2 = hi >>> 1 >>> (63 - o);
            w3 = 0;
        } else {
            int q = o - 64;
            w0 = 0;
            w1 = lo << q;
            w2 = (hi << q) | (lo >>> 1 >>> (63 - q));
            w3 = hi >>> 1 >>> (63 - q);
        }
        long off0 = firstSegment(b, r, upperStart) * SEGMENT_BYTES;
        long span = (long) columns * SEGMENT_BYTES;
        OffHeapRegion.checkRange(off0, span, limit);
        long at = address + off0;
        if (o == 0) {
            // The window is block b alone (the last start may have no next block).
            for (int j = 0; j < columns; j++) {
                long p = (UnsafeMemory.MEMORY.readLong(at + j * SEGMENT_BYTES) & w0)
                        ^ (UnsafeMemory.MEMORY.readLong(at + j * SEGMENT_BYTES + 8) & w1);
                if (((Long.bitCount(p) ^ (expected >>> j)) & 1) != 0) {
                    return false;
                }
            }
            return true;
        }
        OffHeapRegion.checkRange(off0 + span, span, limit);
        long next = at + span;
        for (int j = 0; j < columns; j++) {
            long at0 = at + (long) j * SEGMENT_BYTES;
            long at1 = next + (long) j * SEGMENT_BYTES;
            long p = (UnsafeMemory.MEMORY.readLong(at0) & w0)
                    ^ (UnsafeMemory.MEMORY.readLong(at0 + 8) & w1)
                    ^ (UnsafeMemory.MEMORY.readLong(at1) & w2)
                    ^ (UnsafeMemory.MEMORY.readLong(at1 + 8) & w3);
            if (((Long.bitCount(p) ^ (expected >>> j)) & 1) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@link #probeAt}'s answer computing the columns' parities four at a time and comparing each group with its result
     * bits: an absent key leaves after the first group 15 times in 16, a branch the CPU predicts, where an exit at the
     * first wrong column (each column fails with probability 1/2) would be mispredicted about once per absent key. No
     * branch depends on the start offset. {@link #probeAt} keeps its own branchy shape rather than sharing this one
     * with a group of 1: out of the cache a lone probe gains more from its early exit (fewer instructions before the
     * next probe's miss can start) than it loses to mispredictions, and the shared version measured slower there
     * (bench/RESULTS.md). For lines already touched ({@link #touchAt}).
     */
    static boolean probeTouchedAt(long address, long limit, long slots, int r, int seed, long upperBlocks, long hash) {
        long upperStart = slots / BLOCK_SLOTS - upperBlocks;
        long a = remix(hash, seed);
        long s = start(a, slots - BLOCK_SLOTS + 1);
        long lo = coeffLo(a);
        long hi = coeffHi(a);
        long b = s >>> 7;
        int o = (int) (s & (BLOCK_SLOTS - 1));
        int columns = r + (b < upperStart ? 0 : 1);
        // The coefficient shifted up by o as a 256-bit value w0..w3: w0, w1 meet block b, w2, w3 block b + 1.
        // Shifted by q = o mod 64 into x0..x2, then moved up a word when o >= 64 (masks, not a branch).
        int q = o & 63;
        long x0 = lo << q;
        long x1 = (hi << q) | (lo >>> 1 >>> (63 - q));
        long x2 = hi >>> 1 >>> (63 - q);
        long up = -(long) (o >>> 6);
        long w0 = x0 & ~up;
        long w1 = (x1 & ~up) | (x0 & up);
        long w2 = (x2 & ~up) | (x1 & up);
        long w3 = x2 & up;
        long off0 = firstSegment(b, r, upperStart) * SEGMENT_BYTES;
        long span = (long) columns * SEGMENT_BYTES;
        // At o == 0 the window is block b alone (w2 = w3 = 0) and the last start has no next block: read b twice.
        long off1 = o == 0 ? off0 : off0 + span;
        OffHeapRegion.checkRange(off0, span, limit);
        OffHeapRegion.checkRange(off1, span, limit);
        int expected = result(a);
        int parities = 0;
        for (int j = 0; j < columns; j++) {
            long at0 = address + off0 + (long) j * SEGMENT_BYTES;
            long at1 = address + off1 + (long) j * SEGMENT_BYTES;
            long p = (UnsafeMemory.MEMORY.readLong(at0) & w0)
                    ^ (UnsafeMemory.MEMORY.readLong(at0 + 8) & w1)
                    ^ (UnsafeMemory.MEMORY.readLong(at1) & w2)
                    ^ (UnsafeMemory.MEMORY.readLong(at1 + 8) & w3);
            parities |= (Long.bitCount(p) & 1) << j;
            if ((j & (COLUMN_GROUP - 1)) == COLUMN_GROUP - 1 && ((parities ^ expected) & (int) ((2L << j) - 1)) != 0) {
                return false;
            }
        }
        return ((parities ^ expected) & (int) ((1L << columns) - 1)) == 0;
    }

    /** Bits of the stored solution (the body): what the filter spends, for bits per key. */
    @Override
    public long bitSize() {
        checkOpen();
        return body.length() * 8;
    }

    /** Slots m of the banding (the header's m field). */
    long slots() {
        return bits;
    }

    long upperBlocks() {
        return upperBlocks;
    }

    int seed() {
        return seed;
    }

    @Override
    public double expectedFpp() {
        checkOpen();
        return empty ? 0.0 : FilterMath.ribbonFpp(bits, k, upperBlocks);
    }

    @Override
    public double fractionOfBitsSet() {
        checkOpen();
        long set = 0;
        for (long off = 0; off < body.length(); off += 8) {
            set += Long.bitCount(body.readLong(off));
        }
        return (double) set / (body.length() * 8);
    }

    @Override
    public String toString() {
        if (isClosed()) {
            return "RIBBON filter (closed)";
        }
        return "RIBBON filter slots=" + bits + " r=" + k + " upperBlocks=" + upperBlocks + " seed=" + seed + " keys="
                + keyCount();
    }
}
