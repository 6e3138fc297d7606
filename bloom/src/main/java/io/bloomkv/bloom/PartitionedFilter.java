package io.bloomkv.bloom;

import net.openhft.chronicle.core.UnsafeMemory;

/**
 * k rows t_1..t_k of m/k bits each (a multiple of 64, so every row starts on a word); probe i of a key sets
 * bit reduce(h + i * step(h), m/k) of row i.
 */
final class PartitionedFilter extends OffHeapFilter {
    private final long rowBits;

    PartitionedFilter(OffHeapRegion body, int k, long bits, long expectedKeys, long keyCount) {
        super(body, k, bits, expectedKeys, keyCount);
        this.rowBits = bits / k;
    }

    @Override
    public FilterKind kind() {
        return FilterKind.PARTITIONED;
    }

    @Override
    void addHash(long hash) {
        long step = Probes.step(hash);
        long g = hash;
        long rowStart = 0;
        for (int i = 0; i < k; i++) {
            long bit = rowStart + Probes.reduce(g, rowBits);
            long off = (bit >>> 6) << 3;
            body.writeLong(off, body.readLong(off) | (1L << bit));
            g += step;
            rowStart += rowBits;
        }
    }

    @Override
    boolean probe(long hash) {
        return probeAt(body.address(), body.length(), bits, k, hash);
    }

    /**
     * The probe of a PARTITIONED body of {@code bits} bits in {@code k} rows lying in native memory
     * [address, address + limit), whoever owns it: this filter's region, or a serialized filter probed where it lies
     * ({@link InPlaceFilters}). Each word read is checked to lie below {@code limit}.
     */
    static boolean probeAt(long address, long limit, long bits, int k, long hash) {
        long rowBits = bits / k;
        long step = Probes.step(hash);
        long g = hash;
        long rowStart = 0;
        for (int i = 0; i < k; i++) {
            long bit = rowStart + Probes.reduce(g, rowBits);
            long off = (bit >>> 6) << 3;
            OffHeapRegion.checkRange(off, 8, limit);
            if ((UnsafeMemory.MEMORY.readLong(address + off) & (1L << bit)) == 0) {
                return false;
            }
            g += step;
            rowStart += rowBits;
        }
        return true;
    }
}
