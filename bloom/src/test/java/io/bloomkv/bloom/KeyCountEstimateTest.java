package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link Filter#approximateKeyCount()} against {@link FilterMath#approximateKeyCountStandardError} on unseen random keys:
 * over independent filters the errors, in units of the standard error, have an RMS near 1 and none is far out.
 *
 * <p>The keys are fresh on every build, so the bounds are set for a correct filter to fail them by chance less than
 * once in a million runs. STANDARD and PARTITIONED errors are unbiased with unit spread: their RMS over 100 trials
 * falls outside [0.65, 1.45] with probability under 1e-7 each. BLOCKED's per-block logarithm adds a bias of a fraction
 * of a standard error (docs/filters.md), which shows in the RMS: its upper bound is 1.8. No error may lie beyond 7
 * standard errors (bias included, one does with probability under 3e-8 per run). With 40 trials, an RMS bound of 1.6 and a worst error of 4.5 a correct build
 * failed now and then, mostly on BLOCKED.
 */
class KeyCountEstimateTest {
    private static final int TRIALS = 100;
    private static final int N = 20_000;
    private static final double MIN_RMS = 0.65;
    private static final double MAX_RMS_UNBIASED = 1.45;
    private static final double MAX_RMS_BLOCKED = 1.8;
    private static final double MAX_Z = 7;

    @Test
    void bloomEstimatesFallWithinTheirStandardError() {
        SplittableRandom rnd = new SplittableRandom(TestKeys.seed("bloomkv.test.keyCountSeed"));
        for (FilterKind kind : new FilterKind[] {FilterKind.STANDARD, FilterKind.PARTITIONED, FilterKind.BLOCKED}) {
            for (double bitsPerKey : new double[] {5, 10}) {
                double sumZ2 = 0;
                double maxZ = 0;
                double se = 0;
                for (int t = 0; t < TRIALS; t++) {
                    try (Filter f = Filters.create(kind, N, bitsPerKey)) {
                        for (int i = 0; i < N; i++) {
                            f.add(rnd.nextLong());
                        }
                        se = FilterMath.approximateKeyCountStandardError(kind, f.bitSize(), f.hashCount(), N);
                        double z = (f.approximateKeyCount() - N) / se;
                        sumZ2 += z * z;
                        maxZ = Math.max(maxZ, Math.abs(z));
                    }
                }
                double rms = Math.sqrt(sumZ2 / TRIALS);
                System.out.printf(
                        "%s at %.0f bits/key, n=%d: SE %.1f keys (%.3f%%), RMS error %.2f SE, worst %.2f SE%n",
                        kind, bitsPerKey, N, se, 100 * se / N, rms, maxZ);
                assertThat(rms)
                        .as("%s b=%s: RMS of (estimate - n) / SE", kind, bitsPerKey)
                        .isBetween(MIN_RMS, kind == FilterKind.BLOCKED ? MAX_RMS_BLOCKED : MAX_RMS_UNBIASED);
                assertThat(maxZ)
                        .as("%s b=%s: worst |estimate - n| / SE", kind, bitsPerKey)
                        .isLessThan(MAX_Z);
            }
        }
    }

    @Test
    void duplicatesCountOnceUnlikeKeyCount() {
        try (Filter f = Filters.create(FilterKind.STANDARD, 10_000, 10)) {
            for (int i = 0; i < 5_000; i++) {
                f.add(TestKeys.longKey(i));
                f.add(TestKeys.longKey(i));
            }
            double se =
                    FilterMath.approximateKeyCountStandardError(FilterKind.STANDARD, f.bitSize(), f.hashCount(), 5_000);
            assertThat(f.keyCount()).isEqualTo(10_000);
            assertThat((double) f.approximateKeyCount()).isBetween(5_000 - 4.5 * se, 5_000 + 4.5 * se);
        }
    }

    @Test
    void countingIsExactAndRibbonKnowsItsCount() {
        try (Filter c = Filters.createCounting(10_000, 10)) {
            for (int i = 0; i < 7_777; i++) {
                c.add(TestKeys.longKey(i));
            }
            assertThat(c.approximateKeyCount()).isEqualTo(7_777);
        }
        try (Filter r = TestKeys.filled(FilterKind.RIBBON, 3_000, 10)) {
            assertThat(r.approximateKeyCount()).isEqualTo(3_000);
        }
        try (Filter empty = Filters.create(FilterKind.BLOCKED, 1_000, 10)) {
            assertThat(empty.approximateKeyCount()).isZero();
        }
    }

    @Test
    void aFullArrayGivesAFiniteLowerBound() {
        try (Filter f = Filters.create(FilterKind.STANDARD, 10, 6.4)) { // 64 bits
            for (int i = 0; i < 10_000; i++) {
                f.add(TestKeys.longKey(i));
            }
            assertThat(f.fractionOfBitsSet()).isEqualTo(1.0);
            assertThat(f.approximateKeyCount())
                    .isEqualTo(Math.round(FilterMath.estimateKeys(64, f.hashCount(), 64)))
                    .isPositive();
        }
    }
}
