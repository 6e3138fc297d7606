package io.bloomkv.bloom;

/**
 * The sizing and false-positive formulas of Bloom filters, as the lectures derive them.
 *
 * <p>Notation: m = bits (counters for a counting filter), n = keys added, k = probes per key,
 * b = m / n bits per key, p = false-positive rate. Every rate assumes ideal, independent, uniform probes.
 */
public final class FilterMath {
    /** Bits in one block of the {@link FilterKind#BLOCKED} layout: one 64-byte cache line. */
    public static final int BLOCK_BITS = 512;
    /** Largest probe count any filter accepts. */
    public static final int MAX_HASH_COUNT = 64;

    private static final double LN2 = Math.log(2);
    private static final double LN2_SQUARED = LN2 * LN2;

    private FilterMath() {}

    /**
     * The exact false-positive rate of a standard filter: a given bit stays 0 after kn uniform probes with
     * probability (1 - 1/m)^(kn); a key never added is reported present when all its k bits are 1:
     * <pre>p = (1 - (1 - 1/m)^(kn))^k</pre>
     */
    public static double exactFpp(long m, int k, long n) {
        checkMkn(m, k, n);
        if (n == 0) {
            return 0.0;
        }
        // (1-1/m)^(kn) = exp(kn * log1p(-1/m)); 1 - that = -expm1(...), accurate for tiny kn/m.
        double setProbability = -Math.expm1((double) k * n * Math.log1p(-1.0 / m));
        return Math.pow(setProbability, k);
    }

    /**
     * The usual approximation of {@link #exactFpp}, from (1 - 1/m)^(kn) ≈ e^(-kn/m):
     * <pre>p ≈ (1 - e^(-kn/m))^k</pre>
     */
    public static double approxFpp(long m, int k, long n) {
        checkMkn(m, k, n);
        if (n == 0) {
            return 0.0;
        }
        return Math.pow(-Math.expm1(-(double) k * n / m), k);
    }

    /**
     * The rate of a partitioned filter: k rows t_1..t_k of m/k bits, probe i sets one bit of row i, so a bit of
     * a row stays 0 after n keys with probability (1 - k/m)^n:
     * <pre>p = (1 - (1 - k/m)^n)^k</pre>
     * slightly above {@link #exactFpp} for the same m, k, n.
     */
    public static double partitionedFpp(long m, int k, long n) {
        checkMkn(m, k, n);
        if (m < k) {
            throw new IllegalArgumentException("m must be at least k: m=" + m + " k=" + k);
        }
        if (n == 0) {
            return 0.0;
        }
        double setProbability = -Math.expm1(n * Math.log1p(-(double) k / m));
        return Math.pow(setProbability, k);
    }

    /**
     * The rate of the blocked (cache-local) layout with {@link #BLOCK_BITS}-bit blocks; see
     * {@link #blockedFpp(long, int, long, int)}.
     */
    public static double blockedFpp(long m, int k, long n) {
        return blockedFpp(m, k, n, BLOCK_BITS);
    }

    /**
     * The rate of a blocked filter: each key picks one of B = m / blockBits blocks uniformly and sets k bits
     * inside it. The number of keys in the block a query lands in is Binomial(n, 1/B), which is Poisson with
     * mean λ = n / B for many blocks; given j keys in its block, the query is a false positive with the
     * rate f(j) of a blockBits-bit filter holding j keys. Averaging over the load:
     * <pre>p = Σ_j e^(-λ) λ^j / j! · f(j)</pre>
     * with f(j) the exact finite-array rate E[(X/b)^k] ({@link #blockRates}); the classic
     * f(j) ≈ (1 - (1 - 1/b)^(kj))^k gives {@link #blockedFppForLoadClassic}.
     * Uneven loads make this higher than {@link #exactFpp} for the same m (RocksDB's
     * FastLocalBloomImpl::EstimatedFpRate approximates the same average by two points, the mean load ±1σ).
     */
    public static double blockedFpp(long m, int k, long n, int blockBits) {
        checkMkn(m, k, n);
        if (blockBits <= 0 || m < blockBits) {
            throw new IllegalArgumentException("need 0 < blockBits <= m: m=" + m + " blockBits=" + blockBits);
        }
        if (n == 0) {
            return 0.0;
        }
        double blocks = (double) m / blockBits;
        return blockedFppForLoad((double) n / blocks, k, blockBits);
    }

    /**
     * {@link #blockedFpp(long, int, long, int)} for a mean load of {@code lambda} keys per block: the Poisson
     * average of the per-block standard rate.
     */
    public static double blockedFppForLoad(double lambda, int k, int blockBits) {
        if (!(lambda >= 0) || Double.isInfinite(lambda) || k < 1 || blockBits <= 0) {
            throw new IllegalArgumentException("bad lambda=" + lambda + " k=" + k + " blockBits=" + blockBits);
        }
        if (lambda == 0) {
            return 0.0;
        }
        int saturated = saturatedLoad(k, blockBits);
        int jMax = Math.min(poissonUpperLoad(lambda), saturated);
        double[] perBlock = sharedBlockRates(k, jMax, blockBits);
        double logLambda = Math.log(lambda);
        double logPmf = -lambda; // log P(load = 0)
        double sum = 0.0;
        double mass = 0.0;
        for (int j = 0; j <= jMax; j++) {
            if (j > 0) {
                logPmf += logLambda - Math.log(j);
            }
            double pmf = Math.exp(logPmf);
            mass += pmf;
            sum += pmf * perBlock[j];
        }
        if (jMax == saturated) {
            // loads above it: f(j) is f(jMax) = 1 to double precision
            sum += Math.max(0.0, 1.0 - mass) * perBlock[jMax];
        }
        return Math.min(1.0, sum);
    }

    /**
     * A load past which a block's rate f(j) (exact or classic) is 1 to double precision: 1 - f(j) &lt;= k (1 - 1/b)^(kj)
     * &lt;= k e^(-kj/b) (a query fails only if one of its k bits is clear), which is below k / (b e^45) &lt; 1e-19 from
     * j = b (ln b + 45) / k on. {@link #blockedFppForLoad} sums the Poisson series only up to here and gives the rest of
     * the mass this rate: an overloaded filter (a load of millions of keys per block, or a key count read from a header)
     * then costs at most this many terms, not one per key of the load (whose array alone would not fit an int).
     */
    static int saturatedLoad(int k, int blockBits) {
        return (int) Math.min(Integer.MAX_VALUE - 1, Math.ceil(blockBits * (Math.log(blockBits) + 45) / k));
    }

    /**
     * {@link #blockRates} for (k, blockBits), computed once and extended when a larger load is asked for: f(j) does
     * not depend on jMax, so the longest array computed so far answers every smaller jMax with the same values. A
     * table's expected rate sums this series for each of its filter partitions, each with its own load; without the
     * cache every partition recomputed the occupancy walk (O(jMax k b)). The arrays are never written once published;
     * callers read indices 0..jMax only. Two threads extending at once both compute the same values.
     */
    static double[] sharedBlockRates(int k, int jMax, int blockBits) {
        long key = ((long) k << 32) | (blockBits & 0xFFFF_FFFFL);
        double[] known = BLOCK_RATES.get(key);
        if (known != null && known.length > jMax) {
            return known;
        }
        double[] rates = blockRates(k, Math.max(jMax, known == null ? 0 : 2 * known.length), blockBits);
        BLOCK_RATES.merge(key, rates, (a, b) -> a.length >= b.length ? a : b);
        return rates;
    }

    /** {@link #sharedBlockRates}' arrays by (k, blockBits): a few kilobytes each, for the few k and block sizes used. */
    private static final java.util.concurrent.ConcurrentHashMap<Long, double[]> BLOCK_RATES =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** A load beyond which the Poisson(λ) tail is negligible (below 1e-25). */
    static int poissonUpperLoad(double lambda) {
        // Saturates at Integer.MAX_VALUE - 1 (callers cap it at saturatedLoad, and size arrays of jMax + 1).
        return (int) Math.min(Integer.MAX_VALUE - 1, Math.ceil(lambda + 12 * Math.sqrt(lambda) + 30));
    }

    /**
     * The exact false-positive rate of one b-bit block holding j = 0..jMax keys, k probes each:
     * <pre>f(j) = E[(X/b)^k]</pre>
     * where X, the number of set bits after kj uniform probes, follows the occupancy distribution
     * P(X_{t+1} = x) = P(X_t = x) x/b + P(X_t = x-1) (b-x+1)/b. For b = 512 this is 1-4% above the classic
     * (1 - (1-1/b)^(kj))^k = (E[X]/b)^k (Jensen; Bose et al. 2008), a gap that vanishes for the megabit
     * arrays of the other kinds.
     */
    static double[] blockRates(int k, int jMax, int blockBits) {
        double[] rates = new double[jMax + 1];
        double[] occupancy = new double[blockBits + 1];
        double[] next = new double[blockBits + 1];
        double[] hitK = new double[blockBits + 1];
        for (int x = 0; x <= blockBits; x++) {
            hitK[x] = Math.pow((double) x / blockBits, k);
        }
        occupancy[0] = 1.0;
        int maxX = 0;
        for (int j = 0; j <= jMax; j++) {
            if (j > 0) {
                for (int probe = 0; probe < k; probe++) {
                    int newMax = Math.min(blockBits, maxX + 1);
                    for (int x = 0; x <= newMax; x++) {
                        double stay = x <= maxX ? occupancy[x] * x / blockBits : 0.0;
                        double grow = x > 0 ? occupancy[x - 1] * (blockBits - x + 1) / blockBits : 0.0;
                        next[x] = stay + grow;
                    }
                    double[] t = occupancy;
                    occupancy = next;
                    next = t;
                    maxX = newMax;
                }
            }
            double rate = 0;
            for (int x = 0; x <= maxX; x++) {
                rate += occupancy[x] * hitK[x];
            }
            rates[j] = rate;
        }
        return rates;
    }

    /**
     * The classic per-block form averaged over the Poisson load, Σ_j e^(-λ) λ^j / j! (1 - (1-1/b)^(kj))^k: what
     * {@link #blockedFppForLoad} computes with the block's rate approximated by (E[X]/b)^k; slightly lower.
     */
    public static double blockedFppForLoadClassic(double lambda, int k, int blockBits) {
        if (!(lambda >= 0) || Double.isInfinite(lambda) || k < 1 || blockBits <= 0) {
            throw new IllegalArgumentException("bad lambda=" + lambda + " k=" + k + " blockBits=" + blockBits);
        }
        if (lambda == 0) {
            return 0.0;
        }
        double logLambda = Math.log(lambda);
        double log1mInv = Math.log1p(-1.0 / blockBits);
        int saturated = saturatedLoad(k, blockBits);
        int jMax = Math.min(poissonUpperLoad(lambda), saturated);
        double logPmf = -lambda;
        double sum = 0.0;
        double mass = 0.0;
        double rate = 0.0;
        for (int j = 0; j <= jMax; j++) {
            if (j > 0) {
                logPmf += logLambda - Math.log(j);
            }
            double pmf = Math.exp(logPmf);
            rate = Math.pow(-Math.expm1((double) k * j * log1mInv), k);
            mass += pmf;
            sum += pmf * rate;
        }
        if (jMax == saturated) {
            sum += Math.max(0.0, 1.0 - mass) * rate; // as in blockedFppForLoad: f(j) = 1 past saturatedLoad
        }
        return Math.min(1.0, sum);
    }

    /** The k that minimizes the standard rate for b bits per key: k = b ln 2, rounded, at least 1. */
    public static int optimalK(double bitsPerKey) {
        checkBitsPerKey(bitsPerKey);
        long k = Math.round(bitsPerKey * LN2);
        return (int) Math.max(1, Math.min(MAX_HASH_COUNT, k));
    }

    /**
     * The k that minimizes {@link #blockedFppForLoad} at b bits per key (mean load 512 / b). Smaller than
     * {@link #optimalK(double)} at high b, because crowded blocks punish many probes.
     */
    public static int optimalBlockedK(double bitsPerKey) {
        checkBitsPerKey(bitsPerKey);
        // The search costs milliseconds (an occupancy DP per candidate k) and every table the engine
        // writes asks it; the optimum is flat in b, so answers are memoized per b rounded to 1/100.
        long key = Math.max(1, Math.round(bitsPerKey * 100));
        Integer cached = OPTIMAL_BLOCKED_K.get(key);
        if (cached != null) {
            return cached;
        }
        int k = searchOptimalBlockedK(key / 100.0);
        OPTIMAL_BLOCKED_K.putIfAbsent(key, k);
        return k;
    }

    private static final java.util.concurrent.ConcurrentHashMap<Long, Integer> OPTIMAL_BLOCKED_K =
            new java.util.concurrent.ConcurrentHashMap<>();

    private static int searchOptimalBlockedK(double bitsPerKey) {
        double lambda = BLOCK_BITS / bitsPerKey;
        int best = 1;
        double bestRate = Double.MAX_VALUE;
        int upper = Math.min(MAX_HASH_COUNT, optimalK(bitsPerKey) + 2);
        for (int k = 1; k <= upper; k++) {
            double rate = blockedFppForLoad(lambda, k, BLOCK_BITS);
            if (rate < bestRate) {
                bestRate = rate;
                best = k;
            }
        }
        return best;
    }

    /**
     * Bits per key a standard filter with optimal k needs for rate p: with k = b ln 2 the rate is
     * 2^-k = e^(-b (ln 2)^2), hence
     * <pre>b = -ln p / (ln 2)^2</pre>
     */
    public static double bitsPerKeyForFpp(double p) {
        checkFpp(p);
        return -Math.log(p) / LN2_SQUARED;
    }

    /** The rate a standard filter reaches at b bits per key with optimal k: e^(-b (ln 2)^2), the inverse of {@link #bitsPerKeyForFpp}. */
    public static double fppForBitsPerKey(double bitsPerKey) {
        checkBitsPerKey(bitsPerKey);
        return Math.exp(-bitsPerKey * LN2_SQUARED);
    }

    /**
     * The smallest bits per key (to 1/1000) at which a blocked filter with {@link #optimalBlockedK} reaches
     * rate p; at least {@link #bitsPerKeyForFpp}.
     */
    public static double blockedBitsPerKeyForFpp(double p) {
        double lo = bitsPerKeyForFpp(p);
        if (blockedRateAt(lo) <= p) {
            return lo;
        }
        double hi = lo;
        do {
            hi = hi * 1.5 + 1;
        } while (blockedRateAt(hi) > p && hi < 10_000);
        while (hi - lo > 1e-3) {
            double mid = (lo + hi) / 2;
            if (blockedRateAt(mid) <= p) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        return hi;
    }

    private static double blockedRateAt(double bitsPerKey) {
        return blockedFppForLoad(BLOCK_BITS / bitsPerKey, optimalBlockedK(bitsPerKey), BLOCK_BITS);
    }

    /** Slots per block (coefficient width) of {@link FilterKind#RIBBON}. */
    public static final int RIBBON_BLOCK_SLOTS = RibbonFilter.BLOCK_SLOTS;

    /**
     * The overhead factor of {@link FilterKind#RIBBON}: slots per key m / n that 128-bit standard Ribbon needs so that
     * banding succeeds with a single seed most of the time. The needed overhead grows with log n (Dillinger &amp;
     * Walzer; RocksDB's BandingConfigHelper interpolates measured factors the same way); the constants were measured
     * here: 1 + 0.02 + 0.002 · max(0, log2 n - 10), 1.04 at 1M keys, 1.047 at 10M.
     */
    public static double ribbonOverhead(long n) {
        if (n <= 0) {
            return 1.0;
        }
        double log2n = Math.log(n) / LN2;
        return 1.0 + RIBBON_OVERHEAD_BASE + RIBBON_OVERHEAD_PER_DOUBLING * Math.max(0, log2n - 10);
    }

    /** Measured: 1,000 keys band with the first seed 96% of the time at 2% overhead, 1M keys 83% at 4%. */
    private static final double RIBBON_OVERHEAD_BASE = 0.02;

    private static final double RIBBON_OVERHEAD_PER_DOUBLING = 0.002;

    /** Slots a RIBBON filter for n keys starts banding with: n · {@link #ribbonOverhead}, rounded up to whole 128-slot blocks. */
    public static long ribbonSlots(long n) {
        if (n < 0) {
            throw new IllegalArgumentException("negative key count " + n);
        }
        double slots = Math.ceil(n * ribbonOverhead(n));
        return RibbonBuilder.roundUpToBlock((long) slots);
    }

    /**
     * The false-positive rate of a RIBBON filter with m slots, r result columns in the lower blocks and r + 1 in the
     * last U (upper) blocks. A key never added matches each column it checks with probability 1/2, independently,
     * and checks the columns of its start block; starts are uniform over the m - 127 possible ones, so
     * <pre>p = (S_lower · 2^-r + S_upper · 2^-(r+1)) / (m - 127)</pre>
     * where S_upper = max(0, (m - 127) - 128 (B - U)) starts lie in upper blocks (B = m / 128 blocks).
     */
    public static double ribbonFpp(long slots, int r, long upperBlocks) {
        if (slots < RIBBON_BLOCK_SLOTS
                || slots % RIBBON_BLOCK_SLOTS != 0
                || r < 1
                || upperBlocks < 0
                || upperBlocks > slots / RIBBON_BLOCK_SLOTS) {
            throw new IllegalArgumentException(
                    "bad RIBBON geometry slots=" + slots + " r=" + r + " upperBlocks=" + upperBlocks);
        }
        long starts = slots - RIBBON_BLOCK_SLOTS + 1;
        long lowerStarts = Math.min(starts, (slots / RIBBON_BLOCK_SLOTS - upperBlocks) * RIBBON_BLOCK_SLOTS);
        long upperStarts = starts - lowerStarts;
        return (lowerStarts * Math.scalb(1.0, -r) + upperStarts * Math.scalb(1.0, -(r + 1))) / starts;
    }

    /**
     * The rate of the RIBBON filter {@code Filters.build(RIBBON, n keys, bitsPerKey)} makes (without the rare growth
     * after failed seeds): the body holds ceil(b n / 128) segments over m = {@link #ribbonSlots}(n) slots, that is
     * b / overhead result bits per slot on average, so a share of the blocks stores r = floor of it and the rest
     * r + 1; see {@link #ribbonFpp(long, int, long)}. Roughly 2^-(b / overhead).
     */
    public static double ribbonFppForBitsPerKey(long n, double bitsPerKey) {
        checkBitsPerKey(bitsPerKey);
        if (n <= 0) {
            return 0.0;
        }
        long slots = ribbonSlots(n);
        long[] g = ribbonGeometry(slots, n, bitsPerKey);
        return ribbonFpp(slots, (int) g[0], g[1]);
    }

    /** Result columns r of the lower blocks of {@code Filters.build(RIBBON, n keys, bitsPerKey)}. */
    public static int ribbonResultBits(long n, double bitsPerKey) {
        checkBitsPerKey(bitsPerKey);
        return (int) ribbonGeometry(ribbonSlots(n), n, bitsPerKey)[0];
    }

    /** Bits of the solution (the filter's memory) of {@code Filters.build(RIBBON, n keys, bitsPerKey)}. */
    public static long ribbonSolutionBits(long n, double bitsPerKey) {
        checkBitsPerKey(bitsPerKey);
        long slots = ribbonSlots(n);
        long[] g = ribbonGeometry(slots, n, bitsPerKey);
        return (slots / RIBBON_BLOCK_SLOTS * g[0] + g[1]) * RIBBON_BLOCK_SLOTS;
    }

    /** {r, upper blocks} for n keys at b bits per key over m slots, as the builder lays them out. */
    static long[] ribbonGeometry(long slots, long n, double bitsPerKey) {
        long blocks = slots / RIBBON_BLOCK_SLOTS;
        long segments = Math.max(1, (long) Math.ceil(Math.ceil(bitsPerKey * Math.max(1, n)) / RIBBON_BLOCK_SLOTS));
        long r = segments / blocks;
        long upper = segments % blocks;
        if (r < 1) {
            return new long[] {1, 0};
        }
        if (r >= RibbonFilter.MAX_RESULT_BITS) {
            return new long[] {RibbonFilter.MAX_RESULT_BITS, 0};
        }
        return new long[] {r, upper};
    }

    /** The bits per key (to 1/1000) at which a RIBBON filter for n keys reaches rate p. */
    public static double ribbonBitsPerKeyForFpp(long n, double p) {
        checkFpp(p);
        double lo = 0.01;
        double hi = 64;
        // small key sets spend at least one 128-slot block, so their bits per key can be far above 64
        while (ribbonFppForBitsPerKey(n, hi) > p) {
            if (hi > 1e9) {
                throw new IllegalArgumentException("a RIBBON filter (at most 32 result bits) cannot reach rate " + p);
            }
            lo = hi;
            hi *= 2;
        }
        while (hi - lo > 1e-3 * Math.max(1, lo / 64)) {
            double mid = (lo + hi) / 2;
            if (ribbonFppForBitsPerKey(n, mid) <= p) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        return hi;
    }

    /**
     * The expected rate of a filter of the given kind: {@link #exactFpp} for STANDARD and COUNTING
     * (m = counters), {@link #partitionedFpp} for PARTITIONED, {@link #blockedFpp} for BLOCKED.
     */
    public static double expectedFpp(FilterKind kind, long bits, int k, long n) {
        switch (kind) {
            case STANDARD:
            case COUNTING:
                return exactFpp(bits, k, n);
            case PARTITIONED:
                return partitionedFpp(bits, k, n);
            case BLOCKED:
                return blockedFpp(bits, k, n);
            case RIBBON:
                throw new IllegalArgumentException(
                        "a RIBBON filter's rate depends on its layout, not (m, k, n): use ribbonFpp");
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    /**
     * Probability that one given counter of a counting filter with m counters reaches 15 after n keys with k
     * probes: its count is Binomial(kn, 1/m) ≈ Poisson(kn/m), so
     * <pre>P = 1 - Σ_{j&lt;15} e^(-kn/m) (kn/m)^j / j!</pre>
     */
    public static double counterSaturationProbability(long m, int k, long n) {
        checkMkn(m, k, n);
        double lambda = (double) k * n / m;
        if (lambda == 0) {
            return 0.0;
        }
        // Sum the upper tail directly (1 - lower sum would cancel to 0 for small lambda).
        double logPmf = -lambda + 15 * Math.log(lambda) - logFactorial(15);
        double tail = 0;
        for (int j = 15; j < 15 + 200 + 10 * lambda; j++) {
            if (j > 15) {
                logPmf += Math.log(lambda) - Math.log(j);
            }
            tail += Math.exp(logPmf);
        }
        return Math.min(1.0, tail);
    }

    private static double logFactorial(int j) {
        double s = 0;
        for (int i = 2; i <= j; i++) {
            s += Math.log(i);
        }
        return s;
    }

    /**
     * Bits per key for a Bloom filter with a FIXED probe count {@code k} to reach rate {@code p}: from
     * p = (1 - e^(-k/b))^k, b = -k / ln(1 - p^(1/k)). With k below the optimum the filter is larger and sparser (fewer
     * bits set), which is what a compressed wire form ({@link Filter#writeCompressed}) turns into fewer bytes sent
     * (Mitzenmacher, "Compressed Bloom Filters", 2002).
     */
    public static double bitsPerKeyForFpp(double p, int k) {
        checkFpp(p);
        if (k < 1 || k > MAX_HASH_COUNT) {
            throw new IllegalArgumentException("k outside [1, " + MAX_HASH_COUNT + "]: " + k);
        }
        return -k / Math.log1p(-Math.pow(p, 1.0 / k));
    }

    /**
     * The Swamidass–Baldi estimate of the number of distinct keys in an array of {@code m} bits with {@code setBits}
     * set by {@code k} uniform probes per key: E[set] = m (1 - e^(-kn/m)), so
     * <pre>n ≈ -(m / k) ln(1 - X / m)</pre>
     * A full array (X = m) has no finite estimate: it is taken as X = m - 1/2, a lower bound.
     */
    public static double estimateKeys(long m, int k, long setBits) {
        if (m <= 0 || k < 1 || setBits < 0 || setBits > m) {
            throw new IllegalArgumentException("need m > 0, k >= 1, 0 <= X <= m: m=" + m + " k=" + k + " X=" + setBits);
        }
        double x = setBits == m ? m - 0.5 : setBits;
        return -((double) m / k) * Math.log1p(-x / m);
    }

    /** The entropy in bits of one Bernoulli(p) bit, H(p) = -p log2 p - (1-p) log2 (1-p); 0 at p = 0 or 1. */
    public static double binaryEntropy(double p) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException("p outside [0, 1]: " + p);
        }
        if (p == 0 || p == 1) {
            return 0;
        }
        return (-p * Math.log(p) - (1 - p) * Math.log1p(-p)) / LN2;
    }

    /**
     * The standard error of {@link Filter#approximateKeyCount()} for n distinct keys, by the delta method: the number
     * of clear bits of m after T = kn uniform probes has variance ≈ m e^(-λ)(1 - (1 + λ) e^(-λ)), λ = kn/m, and
     * dn/dX = 1 / (k e^(-λ)), so
     * <ul>
     *   <li>STANDARD, PARTITIONED (k rows of m/k bits, one probe per row, rows averaged): SE = sqrt(m (e^λ - 1 - λ)) / k;</li>
     *   <li>BLOCKED (estimated block by block and summed): each of the B = m/512 blocks holds N ~ Poisson(μ = n/B) keys,
     *       Var = 512 (e^(kN/512) - 1 - kN/512) / k² per block, whose mean over N is
     *       512 (exp(μ (e^(k/512) - 1)) - 1 - kμ/512) / k²; SE = sqrt(B times that);</li>
     *   <li>COUNTING and RIBBON: 0 (the counters sum to exactly kn while none saturates; a RIBBON knows its key count).</li>
     * </ul>
     */
    public static double approximateKeyCountStandardError(FilterKind kind, long m, int k, long n) {
        checkMkn(m, k, n);
        switch (kind) {
            case STANDARD:
            case PARTITIONED: {
                double lambda = (double) k * n / m;
                return Math.sqrt(m * (Math.expm1(lambda) - lambda)) / k;
            }
            case BLOCKED: {
                long blocks = m / BLOCK_BITS;
                double mu = (double) n / blocks;
                double perBlock = BLOCK_BITS
                        * (Math.expm1(mu * Math.expm1((double) k / BLOCK_BITS)) - k * mu / BLOCK_BITS)
                        / ((double) k * k);
                return Math.sqrt(blocks * perBlock);
            }
            case COUNTING:
            case RIBBON:
                return 0;
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    /**
     * P(X >= k) for X ~ Binomial(trials, p): the one-sided p-value of measuring {@code successes} false positives in
     * {@code trials} independent queries if the true rate were {@code p}. A measured rate is "within a bound p" at level
     * alpha when this is at least alpha (equivalently: the one-sided Clopper–Pearson lower confidence limit of the rate,
     * at confidence 1 - alpha, is at most p). Exact: the terms are summed upward from pmf(k) in log space (no
     * cancellation), so tails far below 1e-300 read as 0.
     */
    public static double binomialUpperTail(long trials, double p, long successes) {
        if (trials < 0 || successes < 0 || !(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException(
                    "need trials >= 0, successes >= 0, p in [0, 1]: " + trials + ", " + successes + ", " + p);
        }
        if (successes == 0) {
            return 1;
        }
        if (successes > trials || p == 0) {
            return 0;
        }
        if (p == 1) {
            return 1;
        }
        if (successes <= trials * p) {
            // At or below the mean the tail is at least 1/2 (the median is floor or ceil of np): 1 minus the lower
            // tail, summed downward from pmf(k - 1), loses nothing that matters.
            return Math.max(0, 1 - lowerTail(trials, p, successes - 1));
        }
        double ratio = p / (1 - p);
        double term = Math.exp(logBinomialPmf(trials, p, successes));
        double sum = 0;
        for (long i = successes; i <= trials && term > 0; i++) {
            sum += term;
            term *= (double) (trials - i) / (i + 1) * ratio; // decreasing: i is above the mode
            if (term < sum * 1e-17) {
                break;
            }
        }
        return Math.min(1, sum);
    }

    /** P(X <= k) for k below the mode, summed downward from pmf(k). */
    private static double lowerTail(long trials, double p, long k) {
        double inverse = (1 - p) / p;
        double term = Math.exp(logBinomialPmf(trials, p, k));
        double sum = 0;
        for (long i = k; i >= 0 && term > 0; i--) {
            sum += term;
            term *= (double) i / (trials - i + 1) * inverse;
            if (term < sum * 1e-17) {
                break;
            }
        }
        return sum;
    }

    /** log pmf(k) = log C(n, k) + k log p + (n - k) log(1 - p), C(n, k) as a sum of logs of its factors. */
    private static double logBinomialPmf(long trials, double p, long k) {
        double log = k * Math.log(p) + (trials - k) * Math.log1p(-p);
        for (long i = 0; i < k; i++) {
            log += Math.log((double) (trials - i) / (i + 1));
        }
        return log;
    }

    private static void checkMkn(long m, int k, long n) {
        if (m <= 0 || k < 1 || n < 0) {
            throw new IllegalArgumentException("need m > 0, k >= 1, n >= 0: m=" + m + " k=" + k + " n=" + n);
        }
    }

    static void checkBitsPerKey(double bitsPerKey) {
        if (!(bitsPerKey > 0) || Double.isInfinite(bitsPerKey)) {
            throw new IllegalArgumentException("bitsPerKey must be positive and finite: " + bitsPerKey);
        }
    }

    static void checkFpp(double p) {
        if (!(p > 0 && p < 1)) {
            throw new IllegalArgumentException("false-positive rate must be in (0, 1): " + p);
        }
    }
}
