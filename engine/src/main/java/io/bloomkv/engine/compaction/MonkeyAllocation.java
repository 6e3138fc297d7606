package io.bloomkv.engine.compaction;

import io.bloomkv.engine.Options;
import io.bloomkv.engine.version.FileMetaData;
import io.bloomkv.engine.version.Version;
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
 * (a get probes one table of it).
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
     * Bits per key for a new table of {@code level} holding about {@code expectedEntries}, given the
     * runs of {@code version}: the new table's run is counted with its level (level 0: its own run).
     * Rounded to {@link #BITS_GRANULARITY}, at most {@link #MAX_BITS_PER_KEY}.
     */
    public static double bitsPerKeyForLevel(Version version, int level, Options options, long expectedEntries) {
        List<Long> runs = new ArrayList<>();
        int target = -1;
        for (FileMetaData f : version.files(0)) {
            runs.add(f.entries());
        }
        if (level == 0) {
            target = runs.size();
            runs.add(Math.max(1, expectedEntries));
        }
        for (int l = 1; l < version.numLevels(); l++) {
            long n = version.levelEntries(l);
            if (l == level) {
                target = runs.size();
                runs.add(Math.max(1, n + expectedEntries));
            } else if (n > 0) {
                runs.add(n);
            }
        }
        long[] entries = runs.stream().mapToLong(Long::longValue).toArray();
        double bits = Math.min(MAX_BITS_PER_KEY, allocate(entries, options.bitsPerKey())[target]);
        return Math.round(bits / BITS_GRANULARITY) * BITS_GRANULARITY;
    }
}
