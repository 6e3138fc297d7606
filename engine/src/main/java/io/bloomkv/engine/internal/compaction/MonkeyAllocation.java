package io.bloomkv.engine.internal.compaction;

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
     * Bits per key for a new table of {@code level} holding about {@code expectedEntries}. The
     * allocation is computed for the tree's steady shape, so that every table written for a level
     * gets the same bits whatever the momentary fill of the levels: level 0 as
     * {@link Options#l0CompactionTrigger()} runs of one flush each ({@code expectedEntries} for a
     * flush, else the average level-0 table), every level from the base level to above the deepest one at its capacity
     * ({@link Version#levelTargets()}, converted to entries at the tree's average entry size), and
     * the deepest level at its current size. Rounded to {@link #BITS_GRANULARITY}, at most
     * {@link #MAX_BITS_PER_KEY}.
     */
    public static double bitsPerKeyForLevel(Version version, int level, Options options, long expectedEntries) {
        long bytes = 0;
        long entries = 0;
        int deepest = level;
        for (int l = 0; l < version.numLevels(); l++) {
            bytes += version.levelBytes(l);
            entries += version.levelEntries(l);
            if (l > 0 && version.numFiles(l) > 0) {
                deepest = Math.max(deepest, l);
            }
        }
        double bytesPerEntry = entries == 0 ? 128 : Math.max(1, bytes / (double) entries);
        long flushEntries;
        if (level == 0) {
            flushEntries = Math.max(1, expectedEntries);
        } else if (version.numFiles(0) > 0) {
            flushEntries = Math.max(1, version.levelEntries(0) / version.numFiles(0));
        } else {
            flushEntries = Math.max(1, (long) (options.writeBufferSize() / bytesPerEntry));
        }
        List<Long> runs = new ArrayList<>();
        for (int i = 0; i < options.l0CompactionTrigger(); i++) {
            runs.add(flushEntries);
        }
        int target = level == 0 ? 0 : -1;
        int first = level == 0 ? version.baseLevel() : Math.min(level, version.baseLevel());
        for (int l = first; l <= deepest; l++) {
            long n;
            if (l < deepest) {
                long capacity = version.levelTargets().target(l);
                n = (long) ((capacity == Long.MAX_VALUE ? options.maxBytesForLevelBase() : capacity) / bytesPerEntry);
            } else {
                n = version.levelEntries(l) + (l == level ? expectedEntries : 0);
            }
            if (l == level) {
                target = runs.size();
            }
            runs.add(Math.max(1, n));
        }
        long[] counts = runs.stream().mapToLong(Long::longValue).toArray();
        double bits = Math.min(MAX_BITS_PER_KEY, allocate(counts, options.bitsPerKey())[target]);
        return Math.round(bits / BITS_GRANULARITY) * BITS_GRANULARITY;
    }
}
