package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The statistical sweep: every Bloom kind at 4..20 bits per key, RIBBON at 5..16, n = 200,000 keys added, 2,000,000 keys never
 * added, sequential integer keys (0..n-1 added, n.. queried: weak hashing shows there first) and random
 * ones. The measured rate must lie within 6 standard deviations ({@link FprTolerance}) of the kind's own
 * formula. Replay with {@code -Dbloom.fpr.seed=N}.
 *
 * <p>Why 6 sigma: sigma is the binomial spread of the 2,000,000 queries, sqrt(p(1-p)/queries), plus the
 * spread of the filter's own rate around its expectation ({@link FprTolerance}), which at 200,000 keys is
 * of the same order. The sequential cases are the same every run (their keys and queries do not depend on the
 * seed); the 35 random ones are drawn afresh on every build, so the bound must hold for any seed. A correct filter
 * lands outside 6 sigma with probability about 2e-9 per case (the exact binomial tail is at most 4e-8 even for
 * RIBBON at 16 bits per key, where only ~48 false positives are expected), so a run fails by chance less than once in
 * a million. At 4 sigma (6.3e-5 per case, more in the skewed tail of the small counts) a correct build failed
 * roughly once in two thousand runs. From the query term alone, 6 sigma is about 1% of p at 4 bits per key, 4.5% at 10 and 50%
 * at 20 (where only ~130 false positives are expected among the queries): the low-bits cases pin the formulas tightly,
 * the high-bits cases catch gross errors only.
 */
class FalsePositiveSweepTest {
    static final int N = 200_000;
    /** The tolerance in standard deviations: see the class comment. */
    static final double SIGMAS = 6;

    static final int ABSENT = 2_000_000;
    static final double[] BITS_PER_KEY = {4, 6, 8, 10, 12, 16, 20};
    /** RIBBON at 5..16 bits per key, fractional ones included (its interleaved layout mixes r and r + 1 columns). */
    static final double[] RIBBON_BITS_PER_KEY = {5, 6, 7, 7.5, 10, 12.3, 16};

    record Case(FilterKind kind, double bitsPerKey, boolean sequential) {}

    record Outcome(Case c, long m, int k, double measured, double expected, double sigma) {
        double z() {
            return (measured - expected) / sigma;
        }
    }

    @Test
    void measuredRatesMatchEachKindsFormula() throws Exception {
        long seed = TestKeys.seed("bloom.fpr.seed");
        List<Case> cases = new ArrayList<>();
        for (FilterKind kind : FilterKind.values()) {
            for (double b : kind == FilterKind.RIBBON ? RIBBON_BITS_PER_KEY : BITS_PER_KEY) {
                cases.add(new Case(kind, b, true));
                cases.add(new Case(kind, b, false));
            }
        }
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<Future<Outcome>> futures = new ArrayList<>();
        try {
            SplittableRandom seeds = new SplittableRandom(seed);
            for (Case c : cases) {
                long caseSeed = seeds.nextLong();
                futures.add(pool.submit(() -> run(c, caseSeed)));
            }
            for (Future<Outcome> f : futures) {
                Outcome o = f.get();
                System.out.printf(
                        "%-11s b=%4.1f %-10s m=%9d k=%2d measured=%.6f expected=%.6f z=%+.2f%n",
                        o.c.kind,
                        o.c.bitsPerKey,
                        o.c.sequential ? "sequential" : "random",
                        o.m,
                        o.k,
                        o.measured,
                        o.expected,
                        o.z());
                assertThat(Math.abs(o.measured - o.expected))
                        .as(
                                "%s (seed %d): measured %.6f vs expected %.6f, sigma %.2e",
                                o.c, seed, o.measured, o.expected, o.sigma)
                        .isLessThanOrEqualTo(SIGMAS * o.sigma);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    static Outcome run(Case c, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long[] keys = new long[N];
        for (int i = 0; i < N; i++) {
            keys[i] = c.sequential ? i : random.nextLong();
        }
        try (Filter f = TestKeys.filled(c.kind, keys, c.bitsPerKey)) {
            long positives = 0;
            for (long i = 0; i < ABSENT; i++) {
                // random absent keys collide with an added one with probability ~ N / 2^64: negligible
                if (f.mightContain(TestKeys.longKey(c.sequential ? N + i : random.nextLong()))) {
                    positives++;
                }
            }
            double sigma = c.kind == FilterKind.RIBBON
                    ? FprTolerance.ribbonSigma(f.expectedFpp(), ABSENT)
                    : FprTolerance.sigma(c.kind, f.bitSize(), f.hashCount(), N, ABSENT);
            return new Outcome(c, f.bitSize(), f.hashCount(), (double) positives / ABSENT, f.expectedFpp(), sigma);
        }
    }
}
