package io.bloomkv.engine.internal.filter;

import io.bloomkv.engine.FilterAllocation;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.internal.compaction.Compaction;
import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.Version;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

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

    /** Share of a filter memory budget pinned filters may take (the engine's FilterMemory.PIN_SHARE). */
    static final double PIN_SHARE = 0.5;
    /** Scales of the unbudgeted memory {@link #allocateWithinBudget} tries (k / STEPS for k = 1..STEPS). */
    private static final int STEPS = 64;

    /**
     * {@link #allocate} planned within a filter memory budget of {@code budgetBytes} ({@code Options.filterMemoryBudget}):
     * the Monkey allocation at the memory, at most {@code avgBitsPerKey} times the entries, that minimizes
     * {@link #expectedReadsWithinBudget}: false positives (a data-block read each) plus the partition reads of filters
     * neither pinned nor cached. Without a budget (or when every filter fits it) that is {@link #allocate}; with a
     * small one, fewer bits per key in the deepest runs let their filters stay in the cache, which saves more reads than
     * their higher false-positive rate costs (at a quarter of the memory, a last level whose filter is twice the cache
     * misses one probe in two at 10 bits; at 5 bits it fits, and its false positives go from 1% to 9%). Never plans
     * more memory than {@link #allocate}. Self-contained: the caller passes the budget, nothing else changes.
     */
    public static double[] allocateWithinBudget(long[] entries, double avgBitsPerKey, long budgetBytes) {
        double[] best = allocate(entries, avgBitsPerKey);
        if (budgetBytes <= 0 || avgBitsPerKey <= 0) {
            return best;
        }
        double bestReads = expectedReadsWithinBudget(entries, best, budgetBytes);
        for (int k = STEPS - 1; k >= 1; k--) {
            double[] bits = allocate(entries, avgBitsPerKey * k / STEPS);
            double reads = expectedReadsWithinBudget(entries, bits, budgetBytes);
            if (reads < bestReads - 1e-12) {
                best = bits;
                bestReads = reads;
            }
        }
        return best;
    }

    /**
     * Expected block reads an absent-key get spends on the filters and their false positives when the runs have
     * {@code bits} per key under a budget of {@code budgetBytes}: Σ p_i (each false positive reads a data block) plus,
     * for every run whose filter is not pinned, the chance that the partition the key falls in is not cached (a
     * partition read). Runs are pinned smallest first (level 0 and the upper levels are the small runs) while their
     * bytes fit {@link #PIN_SHARE} of the budget, as the engine's residency pass pins them; the cache holds the rest of
     * the budget, and a get over uniformly chosen keys finds its partition cached with probability min(1, cache / bytes
     * of the unpinned filters).
     */
    public static double expectedReadsWithinBudget(long[] entries, double[] bits, long budgetBytes) {
        Integer[] order = new Integer[entries.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, (a, b) -> Long.compare(entries[a], entries[b]));
        double pinAllowance = budgetBytes * PIN_SHARE;
        double pinned = 0;
        double unpinned = 0;
        int unpinnedRuns = 0;
        boolean full = false;
        for (int i : order) {
            if (entries[i] <= 0) {
                continue;
            }
            double bytes = entries[i] * bits[i] / 8;
            if (!full && pinned + bytes <= pinAllowance) {
                pinned += bytes;
            } else {
                full = true;
                unpinned += bytes;
                unpinnedRuns++;
            }
        }
        double cache = budgetBytes - pinned;
        double miss = unpinned <= 0 ? 0 : Math.max(0, 1 - cache / unpinned);
        return sumOfFalsePositiveRates(entries, bits) + unpinnedRuns * miss;
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
     * tree as a get will see it once the job writing the table is installed: every level-0 table is a run (a flush
     * adds its new table as one more), every non-empty deeper level is one run of its entries, and the budget is
     * {@link Options#bitsPerKey()} times the entries of all those runs, so the filters of the tree together spend what
     * {@link FilterAllocation#UNIFORM} would. For a compaction ({@code job} not null) that tree is the one after it:
     * its input tables are no runs, and its output level holds what the level keeps plus all the inputs' entries
     * (the job's outputs). Counted in the tree before the job instead, a compaction of four level-0 tables into the
     * last level gave their 1.8M entries, about to disappear, level-0 runs' generous bits, and left the last level
     * 8.25-8.5 bits per key for the rest of its life (10M random keys, RIBBON at 10 bits of memory: 9.35 bits per key
     * spent at rest, and more false positives per absent get than {@code UNIFORM}). Rounded to
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
     * @param job             the compaction writing the table, or null for a flush
     * @param smallestUserKey the table's smallest user key, or null when not known
     * @param largestUserKey  the table's largest user key (or a bound above it), or null
     */
    public static double bitsPerKeyForLevel(
            Version version,
            int level,
            Options options,
            long expectedEntries,
            Compaction job,
            byte[] smallestUserKey,
            byte[] largestUserKey) {
        if (smallestUserKey != null
                && largestUserKey != null
                && hasTableBelow(version, level)
                && overlapsNothingFrom(version, level == 0 ? 0 : level + 1, smallestUserKey, largestUserKey)) {
            return options.bitsPerKey();
        }
        List<List<FileMetaData>> levels = new ArrayList<>();
        for (int l = 0; l < version.numLevels(); l++) {
            levels.add(version.files(l));
        }
        long[] runs = runsAfter(levels, level, expectedEntries, job);
        double bits = Math.min(
                MAX_BITS_PER_KEY,
                allocateWithinBudget(runs, options.bitsPerKey(), planningBudget(options))[runs.length - 1]);
        return Math.round(bits / BITS_GRANULARITY) * BITS_GRANULARITY;
    }

    /**
     * The filter memory budget the plan must fit ({@link #allocateWithinBudget}), or 0 for the unbudgeted plan: under a
     * budget, filters neither pinned nor cached cost a partition read per probe, so the plan trades bits for cache hits;
     * a table read through its mapping ({@code useMmapReads}, not {@code useDirectReads}) probes those partitions where
     * they lie, with no read and no budget memory, so fewer bits would only add false positives. The shared budget's
     * whole capacity stands for this database's share.
     */
    static long planningBudget(Options options) {
        if (options.useMmapReads() && !options.useDirectReads()) {
            return 0;
        }
        return options.sharedFilterBudget() != null
                ? options.sharedFilterBudget().capacityBytes()
                : options.filterMemoryBudget();
    }

    /**
     * The entries of each run a get will ask once the job writing a table of {@code level} is installed (see
     * {@link #bitsPerKeyForLevel}), the run of that table last: each level-0 table in {@code levels.get(0)} that is
     * not an input of {@code job}, then each non-empty deeper level less the job's inputs in it, and the level written
     * to plus the job's input entries (for a flush, {@code job} null: a new level-0 run of {@code expectedEntries}).
     */
    static long[] runsAfter(List<List<FileMetaData>> levels, int level, long expectedEntries, Compaction job) {
        Set<Long> leaving = new HashSet<>();
        long[] leavingEntries = new long[levels.size()];
        long jobEntries = 0;
        if (job != null) {
            for (FileMetaData f : job.base()) {
                leaving.add(f.number());
                leavingEntries[job.level()] += f.entries();
                jobEntries += f.entries();
            }
            for (FileMetaData f : job.below()) {
                leaving.add(f.number());
                leavingEntries[job.outputLevel()] += f.entries();
                jobEntries += f.entries();
            }
        }
        List<Long> runs = new ArrayList<>();
        for (FileMetaData f : levels.get(0)) {
            if (!leaving.contains(f.number())) {
                runs.add(Math.max(1, f.entries()));
            }
        }
        long written = Math.max(1, job != null ? jobEntries : expectedEntries);
        for (int l = 1; l < levels.size(); l++) {
            long n = -leavingEntries[l];
            for (FileMetaData f : levels.get(l)) {
                n += f.entries();
            }
            if (l != level && n > 0) {
                runs.add(n);
            } else if (l == level) {
                written += n;
            }
        }
        runs.add(written);
        return runs.stream().mapToLong(Long::longValue).toArray();
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

    private static boolean overlapsNothingFrom(
            Version version, int fromLevel, byte[] smallestUserKey, byte[] largestUserKey) {
        for (int l = fromLevel; l < version.numLevels(); l++) {
            if (!version.overlapping(l, smallestUserKey, largestUserKey).isEmpty()) {
                return false;
            }
        }
        return true;
    }
}
