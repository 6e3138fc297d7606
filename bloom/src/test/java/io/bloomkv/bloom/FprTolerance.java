package io.bloomkv.bloom;

/**
 * The standard deviation of a measured false-positive rate around {@link FilterMath#expectedFpp}.
 * Two independent sources add up:
 * <ul>
 *   <li>the queries: N absent keys, each positive with probability p, give Binomial(N, p)/N, variance p(1-p)/N;</li>
 *   <li>the filter: its own rate given the keys added varies around p. For bit-array kinds the rate is
 *       about ρ^k for the fraction ρ of bits set, and Var(ρ) is at most ρ(1-ρ)/m (set bits are negatively
 *       correlated), so by the delta method Var ≈ (k p / ρ)^2 ρ(1-ρ)/m (for PARTITIONED, k independent
 *       rows of r bits: p^2 k (1-ρ)/(ρ r)). For BLOCKED the rate is the mean of f(L)
 *       over B blocks with Poisson(λ) loads (f from {@link FilterMath#blockRates}), variance Var(f(L))/B; the
 *       spread of set bits within a block of given load is not included.</li>
 * </ul>
 */
final class FprTolerance {
    private FprTolerance() {}

    /**
     * RIBBON: given its layout a filter's rate is exactly {@link FilterMath#ribbonFpp} for random query hashes (each
     * checked column matches with probability 1/2 whatever the solution, unless a column's 128 solution bits are all
     * zero: probability 2^-128), so only the queries' binomial spread remains.
     */
    static double ribbonSigma(double p, long queries) {
        return Math.sqrt(p * (1 - p) / queries);
    }

    static double sigma(FilterKind kind, long m, int k, long n, long queries) {
        double p = FilterMath.expectedFpp(kind, m, k, n);
        double binomial = p * (1 - p) / queries;
        return Math.sqrt(binomial + filterVariance(kind, m, k, n, p));
    }

    private static double filterVariance(FilterKind kind, long m, int k, long n, double p) {
        switch (kind) {
            case STANDARD:
            case COUNTING: {
                double rho = -Math.expm1((double) k * n * Math.log1p(-1.0 / m));
                return Math.pow(k * p / rho, 2) * rho * (1 - rho) / m;
            }
            case PARTITIONED: {
                double r = (double) m / k;
                double rho = -Math.expm1(n * Math.log1p(-1.0 / r));
                return p * p * k * (1 - rho) / (rho * r);
            }
            case BLOCKED: {
                double blocks = (double) m / FilterMath.BLOCK_BITS;
                double lambda = n / blocks;
                int jMax = FilterMath.poissonUpperLoad(lambda);
                double[] f = FilterMath.blockRates(k, jMax, FilterMath.BLOCK_BITS);
                double logPmf = -lambda;
                double mean = 0;
                double meanSquare = 0;
                for (int j = 0; j <= jMax; j++) {
                    if (j > 0) {
                        logPmf += Math.log(lambda) - Math.log(j);
                    }
                    mean += Math.exp(logPmf) * f[j];
                    meanSquare += Math.exp(logPmf) * f[j] * f[j];
                }
                return (meanSquare - mean * mean) / blocks;
            }
            default:
                throw new IllegalArgumentException(String.valueOf(kind));
        }
    }
}
