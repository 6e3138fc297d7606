package io.bloomkv.engine.internal.compaction;

import io.bloomkv.engine.FilterAllocation;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.internal.version.Version;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-run filter bits per key minimizing the sum of false-positive rates at a fixed total of filter
 * memory (Dayan, Athanassoulis, Idreos, "Monkey: Optimal Navigable Key-Value Store", SIGMOD 2017).
 *
 * <p>With a Bloom filter's rate p(b) = exp(-b ln²2) at b bits per key, minimizing Σ p_i subject to
 * Σ n_i b_i = M gives p_i proportional to n_i (the run's entry count): p_i = min(1, c n_i), with the
 * constant c found by bisection so the memory is exactly M. A run whose p would reach 1 gets no
 * filter bits. Every level-0 table is its own run (a get probes each); each deeper level is one run
 * (a get probes one table of it). A table moved down a level without rewriting keeps its filter.
 */
public final class MonkeyAllocation {
    private static final double LN2_SQUARED = Math.log(2) * Math.log(2);

    /**
     * Bits per key handed to a table are rounded to this step, so tables of similar runs share
     * filter parameters (and the filter library's per-bits-per-key setup is reused).
     */
    public static final double BITS_GRANULARITY = 0.25;

    /** Upper bound of the bits per key given to one table. */
    public static final double MAX_BITS_PER_KEY = 64;

    private MonkeyAllocation() {}

    /** Bits per key of a Bloom filter with false-positive rate {@code p} (0 when p >= 1). */
    static double bitsFor(double p) {
        return p >= 1 ? 0 : -Math.log(p) / LN2_SQUARED;
    }

    /**
     * Bits per key for each run of {@code entries} such that Σ entries[i]·bits[i] = avgBitsPerKey·Σ entries[i]
     * and Σ p(bits[i]) is minimal. Runs with 0 entries get {@code avgBitsPerKey}.
     */
    public static double[] allocate(long[] entries, double avgBitsPerKey) {
        double[] bits = new double[entries.length];
        double total = 0;
        for (long n : entries) {
            total += n;
        }
        if (total == 0 || avgBitsPerKey <= 0) {
            java.util.Arrays.fill(bits, avgBitsPerKey);
            return bits;
        }
        double memory = avgBitsPerKey * total;
        // log c in [lo, hi]: memory(c) decreases as c grows.
        double lo = -200;
        double hi = 0;
        for (int iter = 0; iter < 200; iter++) {
            double mid = (lo + hi) / 2;
            if (memoryAt(entries, mid) > memory) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        double logC = (lo + hi) / 2;
        for (int i = 0; i < entries.length; i++) {
            bits[i] = entries[i] == 0 ? avgBitsPerKey : bitsFor(Math.exp(logC + Math.log(entries[i])));
        }
        return bits;
    }

    private static double memoryAt(long[] entries, double logC) {
        double m = 0;
        for (long n : entries) {
            if (n > 0) {
                m += n * bitsFor(Math.exp(logC + Math.log(n)));
            }
        }
        return m;
    }

    /** Σ p_i over the runs at the given bits per key (the expected number of false probes of an absent-key get). */
    public static double sumOfFalsePositiveRates(long[] entries, double[] bits) {
        double sum = 0;
        for (int i = 0; i < entries.length; i++) {
            if (entries[i] > 0) {
                sum += Math.min(1, Math.exp(-bits[i] * LN2_SQUARED));
            }
        }
        return sum;
    }

    /**
     * Bits per key for a new table of {@code level} holding about {@code expectedEntries}, allocated over the
     * tree as a get sees it now: every level-0 table is a run (a flush adds its new table as one more), every
     * non-empty deeper level is one run of its actual entries (the level the table is written to counts the
     * table too), and the budget is {@link Options#bitsPerKey()} times the entries of all those runs, so the
     * filters of the tree together spend what {@link FilterAllocation#UNIFORM} would. Rounded to
     * {@link #BITS_GRANULARITY}, at most {@link #MAX_BITS_PER_KEY}.
     *
     * <p>Why the actual shape, not the tree's steady one (level 0 at its trigger, each level at its target): a
     * leveled tree is rarely in its steady shape. After a 10M-key random load with the default 512 MiB base level,
     * the base level held 3.7M entries and the last 5.5M, with two level-0 tables; the steady shape assumed four
     * level-0 runs and a last level ten times the one above, so it spent 6% less memory than the budget and cut
     * false positives by 13% instead of the 35% this shape allows. The tables a random load writes to a level are
     * rewritten as the level grows (each merge into it rewrites the tables it overlaps), so their bits follow its
     * size.
     *
     * <p>A table whose keys [smallestUserKey, largestUserKey] overlap no table below it (for a flush: no table at
     * all), as in a sequential load, is moved down to a deeper level later without being rewritten, and keeps its filter;
     * the tree such a load builds is one sorted run (a get asks one of its tables), for which the uniform
     * {@link Options#bitsPerKey()} is the optimum. It gets that. Allocated as the small run it starts as, every
     * table of a sequential load would keep a small run's bits per key (1.09x the budget in {@code CompactionTest});
     * allocated as part of the deepest level, each would leave budget to level-0 runs that never spend it (0.87x).
     *
     * @param smallestUserKey the table's smallest user key, or null when not known
     * @param largestUserKey  the table's largest user key (or a bound above it), or null
     */
    public static double bitsPerKeyForLevel(Version version, int level, Options options, long expectedEntries,
                                            byte[] smallestUserKey, byte[] largestUserKey) {
        if (smallestUserKey != null && largestUserKey != null && hasTableBelow(version, level)
                && overlapsNothingFrom(version, level == 0 ? 0 : level + 1, smallestUserKey, largestUserKey)) {
            return options.bitsPerKey();
        }
        List<Long> runs = new ArrayList<>();
        int target = -1;
        for (long n : version.levelZeroEntries()) {
            runs.add(Math.max(1, n));
        }
        if (level == 0) {
            target = runs.size();
            runs.add(Math.max(1, expectedEntries));
        }
        for (int l = 1; l < version.numLevels(); l++) {
            long n = version.levelEntries(l) + (l == level ? Math.max(1, expectedEntries) : 0);
            if (n == 0) {
                continue;
            }
            if (l == level) {
                target = runs.size();
            }
            runs.add(n);
        }
        long[] counts = runs.stream().mapToLong(Long::longValue).toArray();
        double bits = Math.min(MAX_BITS_PER_KEY, allocate(counts, options.bitsPerKey())[target]);
        return Math.round(bits / BITS_GRANULARITY) * BITS_GRANULARITY;
    }

    /** Whether a level deeper than {@code level} holds a table (one a table of {@code level} could be moved down to). */
    private static boolean hasTableBelow(Version version, int level) {
        for (int l = level + 1; l < version.numLevels(); l++) {
            if (version.numFiles(l) > 0) {
                return true;
            }
        }
        return false;
    }

    private static boolean overlapsNothingFrom(Version version, int fromLevel, byte[] smallestUserKey, byte[] largestUserKey) {
        for (int l = fromLevel; l < version.numLevels(); l++) {
            if (!version.overlapping(l, smallestUserKey, largestUserKey).isEmpty()) {
                return false;
            }
        }
        return true;
    }
}
