package io.bloomkv.bloom;

/**
 * The cache-local layout of RocksDB's FastLocalBloom: m/512 blocks of 512 bits (one 64-byte cache line).
 * The low 32 bits of the hash choose the block by multiply-shift; the high 32 bits seed the probes, each
 * the top 9 bits of the 32-bit state, which is multiplied by the golden ratio 0x9e3779b9 between probes.
 * A query therefore touches exactly one cache line (allocated bodies are 64-byte aligned).
 */
final class BlockedFilter extends OffHeapFilter {
    private final long blocks;

    BlockedFilter(OffHeapRegion body, int k, long bits, long expectedKeys, long keyCount) {
        super(body, k, bits, expectedKeys, keyCount);
        this.blocks = bits / FilterMath.BLOCK_BITS;
    }

    @Override
    public FilterKind kind() {
        return FilterKind.BLOCKED;
    }

    @Override
    void addHash(long hash) {
        long blockOff = Probes.reduce32(hash, blocks) << 6;
        int h = (int) (hash >>> 32);
        for (int i = 0; i < k; i++) {
            int bitInBlock = h >>> 23;
            long off = blockOff + ((bitInBlock >>> 6) << 3);
            body.writeLong(off, body.readLong(off) | (1L << bitInBlock));
            h *= Probes.BLOCK_PROBE_MULTIPLIER;
        }
    }

    @Override
    boolean probe(long hash) {
        long blockOff = Probes.reduce32(hash, blocks) << 6;
        int h = (int) (hash >>> 32);
        for (int i = 0; i < k; i++) {
            int bitInBlock = h >>> 23;
            if ((body.readLong(blockOff + ((bitInBlock >>> 6) << 3)) & (1L << bitInBlock)) == 0) {
                return false;
            }
            h *= Probes.BLOCK_PROBE_MULTIPLIER;
        }
        return true;
    }
}
