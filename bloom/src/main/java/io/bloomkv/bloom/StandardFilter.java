package io.bloomkv.bloom;

import net.openhft.chronicle.core.UnsafeMemory;

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
        return probeAt(body.address(), body.length(), bits, k, hash);
    }

    /**
     * The probe of a STANDARD body of {@code bits} bits lying in native memory [address, address + limit), whoever owns
     * it: this filter's region, or a serialized filter probed where it lies ({@link InPlaceFilters}). Each word read is
     * checked to lie below {@code limit} (Chronicle's native stores check nothing).
     */
    static boolean probeAt(long address, long limit, long bits, int k, long hash) {
        long step = Probes.step(hash);
        long g = hash;
        for (int i = 0; i < k; i++) {
            long bit = Probes.reduce(g, bits);
            long off = (bit >>> 6) << 3;
            OffHeapRegion.checkRange(off, 8, limit);
            if ((UnsafeMemory.MEMORY.readLong(address + off) & (1L << bit)) == 0) {
                return false;
            }
            g += step;
        }
        return true;
    }
}
