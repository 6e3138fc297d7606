package io.bloomkv.bloom;

import java.util.Arrays;

/**
 * Builds a {@link RibbonFilter} from a whole key set: banding by on-the-fly Gaussian elimination into a banded
 * matrix (each slot holds at most one row whose lowest coefficient is at that slot), then back-substitution from the
 * last slot to the first into the interleaved column-major solution. When the rows are linearly dependent with
 * contradicting results (banding fails) the keys are re-banded with the next seed; after {@link #SEEDS_PER_SIZE}
 * failed seeds the slot count grows by 1/64.
 *
 * <p>Equal hashes give equal rows and results: the second reduces to 0 = 0 and is dropped, so duplicates are fine.
 */
final class RibbonBuilder {
    static final int SEEDS_PER_SIZE = 16;
    private static final int W = RibbonFilter.BLOCK_SLOTS;

    private final long[] hashes;
    private final int n;
    /** Row of slot i: coefficient bits 0..63 at [2i], 64..127 at [2i + 1] (adjacent: one cache line per step). */
    private long[] rows;

    private int[] rowResult;
    /** Scratch of {@link #band}: the keys' remixes bucketed by start block, and the bucket bounds. */
    private long[] sorted;

    private int[] bucketEnd;

    private RibbonBuilder(long[] hashes) {
        this.hashes = hashes;
        this.n = hashes.length;
    }

    /** The filter for {@code hashes} at {@code bitsPerKey} bits of solution per key (rounded up to 128-bit segments). */
    static RibbonFilter build(long[] hashes, double bitsPerKey) {
        FilterMath.checkBitsPerKey(bitsPerKey);
        return new RibbonBuilder(hashes).build(bitsPerKey);
    }

    private RibbonFilter build(double bitsPerKey) {
        long slots = FilterMath.ribbonSlots(n);
        double wantedBits = Math.ceil(bitsPerKey * Math.max(1, n));
        if (wantedBits > FilterHeader.MAX_BITS) {
            throw new IllegalArgumentException(
                    n + " keys at " + bitsPerKey + " bits per key exceed the 2^40-bit limit");
        }
        long segments = Math.max(1, (long) Math.ceil(wantedBits / W));
        if (n == 0) {
            return solve(slots, segments, 0, false);
        }
        int attempt = 0;
        while (true) {
            if (slots > (Integer.MAX_VALUE - 16) / 2) {
                throw new IllegalArgumentException(
                        "a RIBBON filter holds at most about 2^30 slots; " + n + " keys need " + slots);
            }
            allocate((int) slots);
            long starts = slots - W + 1;
            for (int s = 0; s < SEEDS_PER_SIZE; s++, attempt++) {
                int seed = attempt;
                if (band(seed, starts)) {
                    return solve(slots, segments, seed, true);
                }
                Arrays.fill(rows, 0);
                Arrays.fill(rowResult, 0);
            }
            slots = roundUpToBlock(slots + Math.max(W, slots / 64));
        }
    }

    static long roundUpToBlock(long slots) {
        return (Math.max(W, slots) + W - 1) / W * W;
    }

    private void allocate(int slots) {
        rows = new long[2 * slots];
        rowResult = new int[slots];
    }

    /**
     * Adds every key's row with {@code seed}; false as soon as one contradicts the rows already there. Keys are
     * first bucketed by start block (a counting sort of their remixes), so the rows are touched in slot order and
     * stay in cache instead of costing a miss per key.
     */
    private boolean band(int seed, long starts) {
        int blocks = rows.length / 2 / W;
        if (sorted == null) {
            sorted = new long[n];
            bucketEnd = new int[blocks + 1];
        }
        if (bucketEnd.length != blocks + 1) {
            bucketEnd = new int[blocks + 1];
        } else {
            Arrays.fill(bucketEnd, 0);
        }
        int[] ends = bucketEnd;
        for (int key = 0; key < n; key++) {
            long a = RibbonFilter.remix(hashes[key], seed);
            ends[(int) (RibbonFilter.start(a, starts) >>> 7) + 1]++;
        }
        for (int b = 0; b < blocks; b++) {
            ends[b + 1] += ends[b];
        }
        // ends[b] is now where bucket b starts; scattering advances it to where bucket b ends.
        long[] order = sorted;
        for (int key = 0; key < n; key++) {
            long a = RibbonFilter.remix(hashes[key], seed);
            order[ends[(int) (RibbonFilter.start(a, starts) >>> 7)]++] = a;
        }
        long[] rs = rows;
        int[] res = rowResult;
        for (int key = 0; key < n; key++) {
            long a = order[key];
            int i = (int) RibbonFilter.start(a, starts);
            long cl = RibbonFilter.coeffLo(a);
            long ch = RibbonFilter.coeffHi(a);
            int r = RibbonFilter.result(a);
            while (true) {
                long sl = rs[2 * i];
                long sh = rs[2 * i + 1];
                if ((sl | sh) == 0) {
                    rs[2 * i] = cl;
                    rs[2 * i + 1] = ch;
                    res[i] = r;
                    break;
                }
                cl ^= sl;
                ch ^= sh;
                r ^= res[i];
                // Both rows have bit 0 set, so the lowest set bit moved up: shift it back to bit 0.
                if (cl != 0) {
                    int tz = Long.numberOfTrailingZeros(cl);
                    cl = (cl >>> tz) | (ch << 1 << (63 - tz));
                    ch >>>= tz;
                    i += tz;
                } else if (ch != 0) {
                    int tz = Long.numberOfTrailingZeros(ch);
                    cl = ch >>> tz;
                    ch = 0;
                    i += 64 + tz;
                } else {
                    if (r != 0) {
                        return false;
                    }
                    break; // a duplicate (or dependent) row with a consistent result
                }
            }
        }
        return true;
    }

    /**
     * Back-substitution into off-heap interleaved storage. {@code segments} 16-byte segments spread over the blocks:
     * r = segments / blocks columns each, the last segments % blocks blocks one more (r is clamped to [1, 32]).
     */
    private RibbonFilter solve(long slots, long segments, int seed, boolean banded) {
        long blocks = slots / W;
        long rLong = segments / blocks;
        long upper = segments % blocks;
        if (rLong < 1) {
            rLong = 1;
            upper = 0;
        } else if (rLong >= RibbonFilter.MAX_RESULT_BITS) {
            rLong = RibbonFilter.MAX_RESULT_BITS;
            upper = 0;
        }
        int r = (int) rLong;
        long upperStart = blocks - upper;
        long bodyBytes = FilterHeader.bodyLength(FilterKind.RIBBON, r, slots, upper);
        OffHeapRegion body = OffHeapRegion.allocate(bodyBytes);
        try {
            if (banded) {
                backSubstitute(body, (int) slots, r, upperStart, seed);
            }
            rows = null;
            rowResult = null;
            sorted = null;
            return new RibbonFilter(body, r, slots, n, n, seed, upper);
        } catch (RuntimeException | Error e) {
            body.release();
            throw e;
        }
    }

    /**
     * Solves block by block from the last to the first; inside a block, column by column from its last slot to its
     * first, so the block's rows stay in L1 and a column's state stays in registers. The state of column j holds
     * the solution bits of the 128 slots from the current one up (bit t = slot i + t).
     */
    private void backSubstitute(OffHeapRegion body, int slots, int r, long upperStart, int seed) {
        long[] rs = rows;
        int[] res = rowResult;
        long[] stateLo = new long[r + 1];
        long[] stateHi = new long[r + 1];
        for (int b = slots / W - 1; b >= 0; b--) {
            int first = b * W;
            int last = first + W - 1;
            for (int i = first; i <= last; i++) {
                if ((rs[2 * i] | rs[2 * i + 1]) == 0) {
                    // A free variable: any value solves the system; pseudo-random ones keep false positives at 2^-r.
                    res[i] = (int) Probes.step(i * 0x9E3779B97F4A7C15L + seed);
                }
            }
            int columns = b < upperStart ? r : r + 1;
            long off = RibbonFilter.firstSegment(b, r, upperStart) * RibbonFilter.SEGMENT_BYTES;
            for (int j = 0; j < columns; j++) {
                long sl = stateLo[j];
                long sh = stateHi[j];
                for (int i = last; i >= first; i--) {
                    sh = (sh << 1) | (sl >>> 63);
                    sl <<= 1;
                    sl |= (Long.bitCount((sl & rs[2 * i]) ^ (sh & rs[2 * i + 1])) ^ (res[i] >>> j)) & 1;
                }
                stateLo[j] = sl;
                stateHi[j] = sh;
                body.writeLong(off + (long) j * RibbonFilter.SEGMENT_BYTES, sl);
                body.writeLong(off + (long) j * RibbonFilter.SEGMENT_BYTES + 8, sh);
            }
        }
    }
}
