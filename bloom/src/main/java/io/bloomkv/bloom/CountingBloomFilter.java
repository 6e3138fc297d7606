package io.bloomkv.bloom;

/**
 * m 4-bit counters, 16 per little-endian 64-bit word (counter c is bits 4*(c%16)..+3 of word c/16); probes as
 * {@link StandardFilter}. Saturating: see {@link CountingFilter}.
 */
final class CountingBloomFilter extends OffHeapFilter implements CountingFilter {
    static final int MAX_COUNT = 15;
    private static final long LOW_BIT_OF_EACH_NIBBLE = 0x1111_1111_1111_1111L;

    CountingBloomFilter(OffHeapRegion body, int k, long counters, long expectedKeys, long keyCount) {
        super(body, k, counters, expectedKeys, keyCount);
    }

    @Override
    public FilterKind kind() {
        return FilterKind.COUNTING;
    }

    @Override
    void addHash(long hash) {
        long step = Probes.step(hash);
        long g = hash;
        for (int i = 0; i < k; i++) {
            long c = Probes.reduce(g, bits);
            long off = (c >>> 4) << 3;
            int shift = (int) (c & 15) << 2;
            long w = body.readLong(off);
            if (((w >>> shift) & 0xF) < MAX_COUNT) {
                body.writeLong(off, w + (1L << shift));
            }
            g += step;
        }
    }

    @Override
    boolean probe(long hash) {
        long step = Probes.step(hash);
        long g = hash;
        for (int i = 0; i < k; i++) {
            long c = Probes.reduce(g, bits);
            int shift = (int) (c & 15) << 2;
            if (((body.readLong((c >>> 4) << 3) >>> shift) & 0xF) == 0) {
                return false;
            }
            g += step;
        }
        return true;
    }

    @Override
    public void remove(byte[] key) {
        remove(Hashing.hash64(key));
    }

    @Override
    public void remove(long hash) {
        checkWritable();
        if (!probe(hash)) {
            throw new IllegalArgumentException("remove of a key that was never added (one of its counters is zero)");
        }
        long step = Probes.step(hash);
        long g = hash;
        for (int i = 0; i < k; i++) {
            long c = Probes.reduce(g, bits);
            long off = (c >>> 4) << 3;
            int shift = (int) (c & 15) << 2;
            long w = body.readLong(off);
            long count = (w >>> shift) & 0xF;
            // A saturated counter has lost its true count and stays; zero can only be reached here by removing
            // a key that was never added, and must not wrap to 15.
            if (count != MAX_COUNT && count != 0) {
                body.writeLong(off, w - (1L << shift));
            }
            g += step;
        }
        decrementKeyCount();
    }

    @Override
    public double fractionOfBitsSet() {
        checkOpen();
        long nonZero = 0;
        for (long off = 0; off < body.length(); off += 8) {
            long w = body.readLong(off);
            nonZero += Long.bitCount((w | (w >>> 1) | (w >>> 2) | (w >>> 3)) & LOW_BIT_OF_EACH_NIBBLE);
        }
        return (double) nonZero / bits;
    }

    /** Number of counters stuck at 15. */
    public long saturatedCounters() {
        checkOpen();
        long saturated = 0;
        for (long off = 0; off < body.length(); off += 8) {
            long w = body.readLong(off);
            saturated += Long.bitCount(w & (w >>> 1) & (w >>> 2) & (w >>> 3) & LOW_BIT_OF_EACH_NIBBLE);
        }
        return saturated;
    }
}
