package io.bloomkv.bloom;

/**
 * One array of m bits; probe i of a key with hash h is bit reduce(h + i * step(h), m) (double hashing,
 * {@link Probes}).
 */
final class StandardFilter extends OffHeapFilter {

    StandardFilter(OffHeapRegion body, int k, long bits, long expectedKeys, long keyCount) {
        super(body, k, bits, expectedKeys, keyCount);
    }

    @Override
    public FilterKind kind() {
        return FilterKind.STANDARD;
    }

    @Override
    void addHash(long hash) {
        long step = Probes.step(hash);
        long g = hash;
        for (int i = 0; i < k; i++) {
            long bit = Probes.reduce(g, bits);
            long off = (bit >>> 6) << 3;
            body.writeLong(off, body.readLong(off) | (1L << bit));
            g += step;
        }
    }

    @Override
    boolean probe(long hash) {
        long step = Probes.step(hash);
        long g = hash;
        for (int i = 0; i < k; i++) {
            long bit = Probes.reduce(g, bits);
            if ((body.readLong((bit >>> 6) << 3) & (1L << bit)) == 0) {
                return false;
            }
            g += step;
        }
        return true;
    }
}
