package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/**
 * Every formula against values computed by hand (a calculator / Python's math module, digits given in the
 * comments), not by this class.
 */
class FilterMathTest {
    private static final Offset<Double> TIGHT = within(1e-12);

    @Test
    void exactRate() {
        // m=1000, k=7, n=100: (1 - (1 - 1/1000)^700)^7 = 0.008213554634050255
        assertThat(FilterMath.exactFpp(1000, 7, 100)).isCloseTo(0.008213554634050255, TIGHT);
        // m=2,000,000, k=7, n=200,000 (10 bits/key): 0.008193731963753866 (Python's pow loses ~1e-11 here)
        assertThat(FilterMath.exactFpp(2_000_000, 7, 200_000)).isCloseTo(0.008193731963753866, within(1e-11));
        // one bit, one key, one probe: the bit is set, every query is positive
        assertThat(FilterMath.exactFpp(1, 1, 1)).isCloseTo(1.0, TIGHT);
        assertThat(FilterMath.exactFpp(1000, 7, 0)).isZero();
    }

    @Test
    void approximateRate() {
        // (1 - e^-0.7)^7 = 0.008193722065862417
        assertThat(FilterMath.approxFpp(1000, 7, 100)).isCloseTo(0.008193722065862417, TIGHT);
        // the approximation is below the exact rate for small m
        assertThat(FilterMath.approxFpp(1000, 7, 100)).isLessThan(FilterMath.exactFpp(1000, 7, 100));
    }

    @Test
    void partitionedRate() {
        // (1 - (1 - 5/1000)^100)^5 = 0.009522389590350072
        assertThat(FilterMath.partitionedFpp(1000, 5, 100)).isCloseTo(0.009522389590350072, TIGHT);
        // k = 1: one row of m bits, same as the standard filter
        assertThat(FilterMath.partitionedFpp(1000, 1, 100)).isCloseTo(FilterMath.exactFpp(1000, 1, 100), TIGHT);
        assertThat(FilterMath.partitionedFpp(1000, 5, 100)).isGreaterThan(FilterMath.exactFpp(1000, 5, 100));
    }

    @Test
    void classicBlockedRateAgainstClosedForms() {
        // k=1: a Poisson(λ) load thinned by 1/b: 1 - e^(-λ/b). 4-bit blocks, λ = 1: 1 - e^-0.25 = 0.22119921692859512
        assertThat(FilterMath.blockedFppForLoadClassic(1.0, 1, 4)).isCloseTo(0.22119921692859512, TIGHT);
        // General k by the binomial theorem: Σ_i C(k,i)(-1)^i e^(-λ(1 - q^(ik))), q = 1 - 1/512.
        // λ = 51.2 (10 bits/key): k=2 -> 0.033323660175410885, k=6 -> 0.009575669482800524, k=7 -> 0.009571213459950918
        assertThat(FilterMath.blockedFppForLoadClassic(51.2, 2, 512)).isCloseTo(0.033323660175410885, within(1e-12));
        assertThat(FilterMath.blockedFppForLoadClassic(51.2, 6, 512)).isCloseTo(0.009575669482800524, within(1e-12));
        assertThat(FilterMath.blockedFppForLoadClassic(51.2, 7, 512)).isCloseTo(0.009571213459950918, within(1e-12));
    }

    @Test
    void exactBlockRates() {
        // b=2 bits, k=2, one key: after 2 probes X=1 or X=2 with probability 1/2 each:
        // f(1) = 1/2 * (1/2)^2 + 1/2 * 1 = 0.625 (the classic (1 - (1/2)^2)^2 = 0.5625 is lower);
        // two keys, 4 probes: X=1 with probability 2/16, else X=2: f(2) = 1/8 * 1/4 + 7/8 = 0.90625
        assertThat(FilterMath.blockRates(2, 2, 2)).containsExactly(new double[] {0.0, 0.625, 0.90625}, within(1e-15));
        // k = 1: f(j) = E[X]/b = 1 - (1-1/b)^j exactly, so exact and classic agree
        assertThat(FilterMath.blockedFppForLoad(1.0, 1, 4)).isCloseTo(0.22119921692859512, TIGHT);
    }

    @Test
    void blockedRate() {
        // Poisson average of the exact block rates, checked against an independent Python implementation of the
        // same sums: b=2, k=2, λ=1 -> 0.4753898914741992;
        // b=512, λ=51.2 (10 bits/key): k=6 -> 0.009664748360480271, k=7 -> 0.009686048583528409
        assertThat(FilterMath.blockedFppForLoad(1.0, 2, 2)).isCloseTo(0.4753898914741992, within(1e-13));
        assertThat(FilterMath.blockedFppForLoad(51.2, 6, 512)).isCloseTo(0.009664748360480271, within(1e-13));
        assertThat(FilterMath.blockedFppForLoad(51.2, 7, 512)).isCloseTo(0.009686048583528409, within(1e-13));
        assertThat(FilterMath.blockedFpp(512 * 1000, 6, 51_200)).isCloseTo(0.009664748360480271, within(1e-13));
        // the exact block rate is above the classic one, and uneven loads put both above the standard filter
        assertThat(FilterMath.blockedFppForLoad(51.2, 6, 512))
                .isGreaterThan(FilterMath.blockedFppForLoadClassic(51.2, 6, 512));
        assertThat(FilterMath.blockedFpp(512 * 1000, 6, 51_200))
                .isGreaterThan(FilterMath.exactFpp(512 * 1000, 6, 51_200));
    }

    @Test
    void optimalProbeCounts() {
        // k = b ln 2: 4 -> 2.77 -> 3; 10 -> 6.93 -> 7; 16 -> 11.09 -> 11; 20 -> 13.86 -> 14; 0.5 -> 0.35 -> 1
        assertThat(FilterMath.optimalK(4)).isEqualTo(3);
        assertThat(FilterMath.optimalK(10)).isEqualTo(7);
        assertThat(FilterMath.optimalK(16)).isEqualTo(11);
        assertThat(FilterMath.optimalK(20)).isEqualTo(14);
        assertThat(FilterMath.optimalK(0.5)).isEqualTo(1);
        // blocked: k = 6 beats 7 at λ = 51.2 (see blockedRate; RocksDB also picks 6); at 20 bits/key crowding
        // keeps k well below 14
        assertThat(FilterMath.optimalBlockedK(10)).isEqualTo(6);
        assertThat(FilterMath.optimalBlockedK(20)).isLessThan(14);
    }

    @Test
    void bitsPerKeyForTargetRate() {
        // -ln 0.01 / (ln 2)^2 = 9.585058377367439
        assertThat(FilterMath.bitsPerKeyForFpp(0.01)).isCloseTo(9.585058377367439, TIGHT);
        assertThat(FilterMath.fppForBitsPerKey(9.585058377367439)).isCloseTo(0.01, TIGHT);
        double blocked = FilterMath.blockedBitsPerKeyForFpp(0.01);
        assertThat(blocked).isGreaterThan(9.585058377367439);
        int k = FilterMath.optimalBlockedK(blocked);
        assertThat(FilterMath.blockedFppForLoad(512 / blocked, k, 512)).isLessThanOrEqualTo(0.01);
        assertThat(FilterMath.blockedFppForLoad(
                        512 / (blocked - 0.01), FilterMath.optimalBlockedK(blocked - 0.01), 512))
                .isGreaterThan(0.01);
    }

    @Test
    void expectedFppDispatchesByKind() {
        assertThat(FilterMath.expectedFpp(FilterKind.STANDARD, 1000, 7, 100))
                .isEqualTo(FilterMath.exactFpp(1000, 7, 100));
        assertThat(FilterMath.expectedFpp(FilterKind.COUNTING, 1000, 7, 100))
                .isEqualTo(FilterMath.exactFpp(1000, 7, 100));
        assertThat(FilterMath.expectedFpp(FilterKind.PARTITIONED, 1000, 5, 100))
                .isEqualTo(FilterMath.partitionedFpp(1000, 5, 100));
        assertThat(FilterMath.expectedFpp(FilterKind.BLOCKED, 5120, 7, 512))
                .isEqualTo(FilterMath.blockedFpp(5120, 7, 512));
    }

    @Test
    void counterSaturation() {
        // λ = kn/m = 1: P(Poisson(1) >= 15) = 1 - Σ_{j<15} e^-1/j! = 3.0e-13
        // (e^-1/15! * (1 + 1/16 + ...) = 2.8131e-13 * 1.0667)
        assertThat(FilterMath.counterSaturationProbability(1000, 10, 100)).isCloseTo(3.0e-13, within(0.1e-13));
        assertThat(FilterMath.counterSaturationProbability(1000, 10, 0)).isZero();
    }

    @Test
    void rejectsBadArguments() {
        assertThatThrownBy(() -> FilterMath.exactFpp(0, 1, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterMath.exactFpp(10, 0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterMath.exactFpp(10, 1, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterMath.bitsPerKeyForFpp(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterMath.bitsPerKeyForFpp(1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterMath.optimalK(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterMath.blockedFpp(100, 1, 1, 512)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void binomialUpperTailIsExact() {
        // Binomial(10, 1/2): P(X >= 8) = (45 + 10 + 1) / 1024; P(X >= 3) = 1 - (1 + 10 + 45) / 1024.
        assertThat(FilterMath.binomialUpperTail(10, 0.5, 8)).isCloseTo(56.0 / 1024, within(1e-15));
        assertThat(FilterMath.binomialUpperTail(10, 0.5, 3)).isCloseTo(1 - 56.0 / 1024, within(1e-15));
        // P(X >= 1) = 1 - (1 - p)^n, and far tails without cancellation: P(X >= n) = p^n.
        assertThat(FilterMath.binomialUpperTail(20_000, 1e-4, 1))
                .isCloseTo(-Math.expm1(20_000 * Math.log1p(-1e-4)), within(1e-12));
        assertThat(FilterMath.binomialUpperTail(40, 0.01, 40)).isCloseTo(1e-80, Offset.offset(1e-92));
        // Against a direct sum of the probability mass function for a point of the range-filter test.
        long n = 20_000;
        double p = 0.0009765625;
        double direct = 0;
        double pmf = Math.exp(n * Math.log1p(-p));
        for (int i = 0; i < 60; i++) {
            if (i >= 30) {
                direct += pmf;
            }
            pmf *= (double) (n - i) / (i + 1) * p / (1 - p);
        }
        assertThat(FilterMath.binomialUpperTail(n, p, 30)).isCloseTo(direct, within(1e-9));
        assertThat(FilterMath.binomialUpperTail(n, p, 0)).isEqualTo(1);
        assertThat(FilterMath.binomialUpperTail(n, 0, 1)).isEqualTo(0);
        assertThat(FilterMath.binomialUpperTail(10, 0.5, 11)).isEqualTo(0);
        assertThatThrownBy(() -> FilterMath.binomialUpperTail(10, 1.5, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * The shared block rates give bit-for-bit the values of a fresh computation, whatever order the loads come in
     * (a large load first, then smaller ones answered from its array; small first, then arrays extended).
     */
    @Test
    void sharedBlockRatesEqualAFreshComputationInAnyOrder() {
        double[] loads = {120.5, 3.0, 51.2, 0.7, 250.0, 51.2, 9.9, 400.1};
        for (int k : new int[] {3, 6, 9}) {
            for (double lambda : loads) {
                int jMax = FilterMath.poissonUpperLoad(lambda);
                double[] fresh = FilterMath.blockRates(k, jMax, 256 + k);
                double[] shared = FilterMath.sharedBlockRates(k, jMax, 256 + k);
                assertThat(shared.length).isGreaterThan(jMax);
                for (int j = 0; j <= jMax; j++) {
                    assertThat(shared[j])
                            .as("k=%d lambda=%s j=%d", k, lambda, j)
                            .isEqualTo(fresh[j]);
                }
            }
        }
    }
}
