package io.bloomkv.bench.workload;

import java.util.SplittableRandom;

/**
 * Zipfian ranks in {@code [0, items)}: rank 0 is the most popular, the probability of rank {@code r}
 * is proportional to {@code 1 / (r+1)^theta}. The algorithm of YCSB's {@code ZipfianGenerator}
 * (Gray et al., "Quickly Generating Billion-Record Synthetic Databases", SIGMOD 1994), with a
 * seeded {@link SplittableRandom} instead of YCSB's thread-local one so runs replay. The item count
 * is fixed: {@code zetan} is computed once ({@link #zeta}) and may be shared by the generators of
 * several threads.
 */
public final class ZipfianGenerator {
    /** YCSB's default Zipfian constant. */
    public static final double ZIPFIAN_CONSTANT = 0.99;

    private final long items;
    private final double theta;
    private final double alpha;
    private final double zetan;
    private final double eta;
    private final double halfPowTheta;
    private final SplittableRandom random;

    /** @param zetan {@link #zeta}(items, theta), passed in so that threads share one computation */
    public ZipfianGenerator(long items, double theta, double zetan, SplittableRandom random) {
        if (items < 1) {
            throw new IllegalArgumentException("items must be positive, got " + items);
        }
        if (!(theta > 0 && theta < 1)) {
            throw new IllegalArgumentException("theta must be in (0, 1), got " + theta);
        }
        this.items = items;
        this.theta = theta;
        this.alpha = 1.0 / (1.0 - theta);
        this.zetan = zetan;
        double zeta2theta = zeta(2, theta);
        this.eta = (1 - Math.pow(2.0 / items, 1 - theta)) / (1 - zeta2theta / zetan);
        this.halfPowTheta = 1.0 + Math.pow(0.5, theta);
        this.random = random;
    }

    public ZipfianGenerator(long items, double theta, SplittableRandom random) {
        this(items, theta, zeta(items, theta), random);
    }

    /** The generalized harmonic number {@code sum_{i=1..n} 1/i^theta} (O(n): compute once per item count). */
    public static double zeta(long n, double theta) {
        double sum = 0;
        for (long i = 0; i < n; i++) {
            sum += 1 / Math.pow(i + 1, theta);
        }
        return sum;
    }

    /** The next rank in {@code [0, items)}. */
    public long nextRank() {
        double u = random.nextDouble();
        double uz = u * zetan;
        if (uz < 1.0) {
            return 0;
        }
        if (uz < halfPowTheta) {
            return Math.min(1, items - 1);
        }
        long r = (long) (items * Math.pow(eta * u - eta + 1, alpha));
        return Math.min(r, items - 1);
    }

    public long items() {
        return items;
    }

    public double theta() {
        return theta;
    }
}
