package io.bloomkv.bloom;

/**
 * {@link Filter#approximateKeyCount()} per kind (the formulas are on that method). Each estimate reads the body once;
 * the unit the formula is applied to (the whole array, a row, a block) is the one within which a key's probes are
 * uniform and independent, so the Swamidass–Baldi inversion holds there.
 */
final class KeyCountEstimator {
    private KeyCountEstimator() {}

    static long estimate(OffHeapFilter f) {
        switch (f.kind()) {
            case STANDARD:
                return Math.round(FilterMath.estimateKeys(f.bits, f.k, countBits(f.body, 0, f.bits)));
            case PARTITIONED: {
                long row = f.bits / f.k;
                double sum = 0;
                for (int i = 0; i < f.k; i++) {
                    sum += FilterMath.estimateKeys(row, 1, countBits(f.body, i * row, row));
                }
                return Math.round(sum / f.k);
            }
            case BLOCKED: {
                double sum = 0;
                int words = FilterMath.BLOCK_BITS / 64;
                for (long off = 0; off < f.body.length(); off += words * 8L) {
                    long set = 0;
                    for (int w = 0; w < words; w++) {
                        set += Long.bitCount(f.body.readLong(off + 8L * w));
                    }
                    if (set > 0) {
                        sum += FilterMath.estimateKeys(FilterMath.BLOCK_BITS, f.k, set);
                    }
                }
                return Math.round(sum);
            }
            case COUNTING: {
                long total = 0;
                for (long off = 0; off < f.body.length(); off += 8) {
                    long w = f.body.readLong(off);
                    for (int s = 0; s < 64; s += 4) {
                        total += (w >>> s) & 0xF;
                    }
                }
                return Math.round((double) total / f.k);
            }
            case RIBBON:
                return f.keyCount();
            default:
                throw new IllegalStateException("unknown kind " + f.kind());
        }
    }

    /** Set bits among bits [from, from + count) of the body; both multiples of 64 (rows are whole words). */
    private static long countBits(OffHeapRegion body, long from, long count) {
        long set = 0;
        for (long bit = from; bit < from + count; bit += 64) {
            set += Long.bitCount(body.readLong(bit >>> 3));
        }
        return set;
    }
}
