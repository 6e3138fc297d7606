package io.bloomkv.bench.workload;

import java.util.SplittableRandom;

/**
 * The most recently written keys are the most popular: YCSB's {@code SkewedLatestGenerator}. A
 * Zipfian rank {@code r} (constant 0.99) over the {@code num} loaded keys selects the key written
 * {@code r} writes before the last one of the load, whose order is {@code loadOrder} (load indices in
 * the order they were written).
 */
public final class SkewedLatestGenerator implements KeyGenerator {
    private final ZipfianGenerator ranks;
    private final int[] loadOrder;

    /** @param zetan {@link ZipfianGenerator#zeta}(loadOrder.length, 0.99), shared by the threads' generators */
    public SkewedLatestGenerator(int[] loadOrder, double zetan, SplittableRandom random) {
        this.loadOrder = loadOrder;
        this.ranks = new ZipfianGenerator(loadOrder.length, ZipfianGenerator.ZIPFIAN_CONSTANT, zetan, random);
    }

    @Override
    public long nextIndex() {
        return loadOrder[loadOrder.length - 1 - (int) ranks.nextRank()];
    }
}
