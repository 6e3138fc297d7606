package io.bloomkv.bloom;

import net.openhft.chronicle.core.UnsafeMemory;

/**
 * The cache-local layout of RocksDB's FastLocalBloom: m/512 blocks of 512 bits (one 64-byte cache line).
 * The low 32 bits of the hash choose the block by multiply-shift, as in RocksDB. The probes inside the block
 * are consecutive 9-bit slices (from the top) of x = fmix64(h), seven per word, x = fmix64(x) for the next
 * seven. Slices of a well-mixed word are independent, so the measured rate matches
 * {@link FilterMath#blockedFpp}; RocksDB's cheaper 32-bit golden-ratio multiply sequence measured 1-3% above
 * that formula here. A query touches exactly one cache line (allocated bodies are 64-byte aligned).
 */
final class BlockedFilter extends OffHeapFilter {
    /** Seven 9-bit probe positions fit in one 64-bit word. */
    private static final int PROBES_PER_WORD = 7;

    /**
     * Hashes whose cache lines {@link #addHashes} requests together before setting their bits: enough loads in flight
     * to overlap the misses of a body larger than the caches, few enough that the lines are still cached when set.
     */
    static final int BUILD_BATCH = 64;

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
        long word = Probes.step(hash);
        long x = word;
        for (int i = 0; i < k; i++) {
            if (i > 0 && i % PROBES_PER_WORD == 0) {
                word = Probes.step(word);
                x = word;
            }
            int bitInBlock = (int) (x >>> 55);
            long off = blockOff + ((bitInBlock >>> 6) << 3);
            body.writeLong(off, body.readLong(off) | (1L << bitInBlock));
            x <<= 9;
        }
    }

    /**
     * Sets the same bits as {@link #addHash} of each hash in turn, a batch at a time: first one load of every line of
     * the batch (independent loads, whose misses overlap), then the probes of each hash, which find their line
     * cached. Each line is bounds-checked once.
     */
    @Override
    void addHashes(long[] hashes, int count) {
        long[] lines = new long[BUILD_BATCH];
        long sink = 0;
        for (int start = 0; start < count; start += BUILD_BATCH) {
            int n = Math.min(BUILD_BATCH, count - start);
            for (int i = 0; i < n; i++) {
                long blockOff = Probes.reduce32(hashes[start + i], blocks) << 6;
                body.checkRange(blockOff, 64);
                lines[i] = blockOff;
                sink += body.readLongInRange(blockOff);
            }
            for (int i = 0; i < n; i++) {
                setProbes(lines[i], hashes[start + i]);
            }
        }
        buildSink = sink;
    }

    /** Keeps the batch's loads observable. */
    @SuppressWarnings("unused")
    private long buildSink;

    /** Sets the k probes of {@code hash} in the block at {@code blockOff}, which the caller has bounds-checked. */
    private void setProbes(long blockOff, long hash) {
        long word = Probes.step(hash);
        long x = word;
        for (int i = 0; i < k; i++) {
            if (i > 0 && i % PROBES_PER_WORD == 0) {
                word = Probes.step(word);
                x = word;
            }
            int bitInBlock = (int) (x >>> 55);
            long off = blockOff + ((bitInBlock >>> 6) << 3);
            body.writeLongInRange(off, body.readLongInRange(off) | (1L << bitInBlock));
            x <<= 9;
        }
    }

    @Override
    long touchLines(long hash) {
        return touchAt(body.address(), body.length(), blocks, hash);
    }

    @Override
    boolean probe(long hash) {
        return probeAt(body.address(), body.length(), blocks, k, hash);
    }

    @Override
    boolean probeTouched(long hash) {
        return probeTouchedAt(body.address(), body.length(), blocks, k, hash);
    }

    /*
     * The probes of a blocked body of {@code blocks} blocks lying in native memory [address, address + limit), whoever
     * owns it: this filter's region, or a serialized filter probed where it lies ({@link InPlaceFilters}). Each checks
     * that the block it reads lies below {@code limit} (Chronicle's native stores check nothing), then reads its words
     * with plain loads.
     */

    /** The first word of {@code hash}'s block (the caller keeps it, so the load is not optimized away). */
    static long touchAt(long address, long limit, long blocks, long hash) {
        long blockOff = Probes.reduce32(hash, blocks) << 6;
        OffHeapRegion.checkRange(blockOff, 64, limit);
        return UnsafeMemory.MEMORY.readLong(address + blockOff);
    }

    /** True when all {@code k} probe bits of {@code hash} are set; leaves at the first clear one. */
    static boolean probeAt(long address, long limit, long blocks, int k, long hash) {
        long blockOff = Probes.reduce32(hash, blocks) << 6;
        OffHeapRegion.checkRange(blockOff, 64, limit);
        long line = address + blockOff;
        long word = Probes.step(hash);
        long x = word;
        for (int i = 0; i < k; i++) {
            if (i > 0 && i % PROBES_PER_WORD == 0) {
                word = Probes.step(word);
                x = word;
            }
            int bitInBlock = (int) (x >>> 55);
            if ((UnsafeMemory.MEMORY.readLong(line + ((bitInBlock >>> 6) << 3)) & (1L << bitInBlock)) == 0) {
                return false;
            }
            x <<= 9;
        }
        return true;
    }

    /**
     * {@link #probeAt}'s answer testing all k bits and folding the misses into one word, with no branch on the bits
     * read: the loop runs k times whatever the line holds, so an absent key does not cost a mispredicted exit (about
     * half of them would leave at an unpredictable probe). For a line already touched ({@link #touchAt}).
     */
    static boolean probeTouchedAt(long address, long limit, long blocks, int k, long hash) {
        long blockOff = Probes.reduce32(hash, blocks) << 6;
        OffHeapRegion.checkRange(blockOff, 64, limit);
        long line = address + blockOff;
        long word = Probes.step(hash);
        long missing = 0;
        for (int i = 0; i < k; i += PROBES_PER_WORD) {
            if (i > 0) {
                word = Probes.step(word);
            }
            long x = word;
            int end = Math.min(k, i + PROBES_PER_WORD);
            for (int j = i; j < end; j++) {
                int bitInBlock = (int) (x >>> 55);
                missing |= ~UnsafeMemory.MEMORY.readLong(line + ((bitInBlock >>> 6) << 3)) & (1L << bitInBlock);
                x <<= 9;
            }
        }
        return missing == 0;
    }
}
