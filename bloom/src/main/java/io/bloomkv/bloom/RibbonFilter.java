package io.bloomkv.bloom;

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
    private final long blocks;
    private final long upperBlocks;
    private final long upperStart;
    private final long starts;
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
        this.blocks = slots / BLOCK_SLOTS;
        this.upperBlocks = upperBlocks;
        this.upperStart = blocks - upperBlocks;
        this.starts = slots - BLOCK_SLOTS + 1;
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
        if (empty) {
            return 0;
        }
        long s = start(remix(hash, seed), starts);
        long b = s >>> 7;
        long off0 = firstSegment(b, k, upperStart) * SEGMENT_BYTES;
        long w = body.readLong(off0);
        if ((s & (BLOCK_SLOTS - 1)) != 0) {
            w += body.readLong(off0 + (long) (b < upperStart ? k : k + 1) * SEGMENT_BYTES);
        }
        return w;
    }

    @Override
    boolean probe(long hash) {
        if (empty) {
            return false;
        }
        long a = remix(hash, seed);
        long s = start(a, starts);
        long lo = coeffLo(a);
        long hi = coeffHi(a);
        int expected = result(a);
        long b = s >>> 7;
        int o = (int) (s & (BLOCK_SLOTS - 1));
        int columns = b < upperStart ? k : k + 1;
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
        long off0 = firstSegment(b, k, upperStart) * SEGMENT_BYTES;
        long span = (long) columns * SEGMENT_BYTES;
        body.checkRange(off0, span);
        if (o == 0) {
            // The window is block b alone (the last start may have no next block).
            for (int j = 0; j < columns; j++) {
                long p = (body.readLongInRange(off0 + j * SEGMENT_BYTES) & w0)
                        ^ (body.readLongInRange(off0 + j * SEGMENT_BYTES + 8) & w1);
                if (((Long.bitCount(p) ^ (expected >>> j)) & 1) != 0) {
                    return false;
                }
            }
            return true;
        }
        long off1 = off0 + span;
        body.checkRange(off1, span);
        for (int j = 0; j < columns; j++) {
            long at0 = off0 + (long) j * SEGMENT_BYTES;
            long at1 = off1 + (long) j * SEGMENT_BYTES;
            long p = (body.readLongInRange(at0) & w0)
                    ^ (body.readLongInRange(at0 + 8) & w1)
                    ^ (body.readLongInRange(at1) & w2)
                    ^ (body.readLongInRange(at1 + 8) & w3);
            if (((Long.bitCount(p) ^ (expected >>> j)) & 1) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Computes the columns' parities four at a time and compares each group with its result bits: an absent key
     * leaves after the first group 15 times in 16, a branch the CPU predicts, where an exit at the first wrong column
     * (each column fails with probability 1/2) would be mispredicted about once per absent key. No branch depends
     * on the start offset. {@link #probe} keeps its own branchy shape rather than sharing this one with a group of 1:
     * out of the cache a lone probe gains more from its early exit (fewer instructions before the next probe's miss
     * can start) than it loses to mispredictions, and the shared version measured slower there (bench/RESULTS.md).
     */
    @Override
    boolean probeTouched(long hash) {
        if (empty) {
            return false;
        }
        long a = remix(hash, seed);
        long s = start(a, starts);
        long lo = coeffLo(a);
        long hi = coeffHi(a);
        long b = s >>> 7;
        int o = (int) (s & (BLOCK_SLOTS - 1));
        int columns = k + (b < upperStart ? 0 : 1);
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
        long off0 = firstSegment(b, k, upperStart) * SEGMENT_BYTES;
        long span = (long) columns * SEGMENT_BYTES;
        // At o == 0 the window is block b alone (w2 = w3 = 0) and the last start has no next block: read b twice.
        long off1 = o == 0 ? off0 : off0 + span;
        body.checkRange(off0, span);
        body.checkRange(off1, span);
        int expected = result(a);
        int parities = 0;
        for (int j = 0; j < columns; j++) {
            long at0 = off0 + (long) j * SEGMENT_BYTES;
            long at1 = off1 + (long) j * SEGMENT_BYTES;
            long p = (body.readLongInRange(at0) & w0)
                    ^ (body.readLongInRange(at0 + 8) & w1)
                    ^ (body.readLongInRange(at1) & w2)
                    ^ (body.readLongInRange(at1 + 8) & w3);
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
