package io.bloomkv.engine.internal.filter;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;
import io.bloomkv.engine.FilterAllocation;
import io.bloomkv.engine.FilterBudget;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.internal.compaction.Compaction;
import io.bloomkv.engine.internal.version.Version;
import io.bloomkv.engine.internal.version.VersionSet;

/**
 * The filter policy of a database, in one place (RocksDB's {@code FilterPolicy} with its {@code bloom_before_level}
 * and Bloom-equivalent bits, plus the Monkey allocation): which filter kind and how many bits per key a new table
 * gets, given its level and the shape of the tree it joins. {@link Options} holds only the user's settings
 * ({@code filterKind}, {@code ribbonFromLevel}, {@code bitsPerKey}, {@code filterAllocation}, {@code filterBudget});
 * the table writers ({@code TableOutputs} for flushes and compactions, {@code TableFileWriter} for ingested tables)
 * ask this class.
 *
 * <p>Two steps. The level's Bloom budget: {@code bitsPerKey} under {@link FilterAllocation#UNIFORM}, the level's share
 * of it under {@link FilterAllocation#MONKEY} ({@link MonkeyAllocation}, from the tree the table joins). Then the
 * kind's bits for that budget ({@link #bitsPerKey(FilterKind, FilterBudget, double, long)}): Bloom kinds spend it as
 * is; RIBBON gets the bits per key at which it reaches the rate BLOCKED reaches with the budget (RocksDB's
 * "Bloom-equivalent bits per key"), the same false-positive rate for about 30% less memory, fractional as the budget
 * may be; under {@link FilterBudget#MEMORY} every kind spends the budget as is, RIBBON included (the same memory for a
 * lower rate).
 *
 * <p>Immutable: the settings are read once, when the database opens.
 */
public final class FilterPolicy {
    /** The filter of one new table: its kind, and its bits per key (0: no filter). */
    public record TableFilter(FilterKind kind, double bitsPerKey) {}

    /** Keys a table of unknown size is sized for when its RIBBON equivalence is computed (a large table). */
    static final long LARGE_TABLE_KEYS = 1 << 20;

    private final FilterKind filterKind;
    private final int ribbonFromLevel;
    private final double bitsPerKey;
    private final FilterAllocation allocation;
    private final FilterBudget budget;
    /** MONKEY's inputs beyond the settings above (its bits per key). */
    private final Options options;

    /** The policy of the filter settings of {@code options} (the database's, fixed when it opened). */
    public FilterPolicy(Options options) {
        this.options = options;
        this.filterKind = options.filterKind();
        this.ribbonFromLevel = options.ribbonFromLevel();
        this.bitsPerKey = options.bitsPerKey();
        this.allocation = options.filterAllocation();
        this.budget = options.filterBudget();
    }

    /** The filter kind of a new table of {@code level}: RIBBON from {@code ribbonFromLevel} down, else {@code filterKind}. */
    public FilterKind kindForLevel(int level) {
        return ribbonFromLevel >= 0 && level >= ribbonFromLevel ? FilterKind.RIBBON : filterKind;
    }

    /**
     * The filter of a new table of {@code level} written by a flush ({@code job} null) or by compaction {@code job},
     * sized for about {@code expectedEntries} keys within [smallestUserKey, largestUserKey] (null when not known). With
     * {@link FilterAllocation#MONKEY} the bits follow the tree of {@code versions}' current Version as it will be once
     * the job is installed ({@link MonkeyAllocation#bitsPerKeyForLevel}).
     */
    public TableFilter forTable(
            VersionSet versions,
            int level,
            long expectedEntries,
            Compaction job,
            byte[] smallestUserKey,
            byte[] largestUserKey) {
        FilterKind kind = kindForLevel(level);
        double bloomBits = bloomBitsPerKey(versions, level, expectedEntries, job, smallestUserKey, largestUserKey);
        return new TableFilter(kind, bitsPerKey(kind, budget, bloomBits, expectedEntries));
    }

    /**
     * The filter of a table written outside the tree ({@code TableFileWriter}, for ingestion): the last level's kind at
     * the uniform budget (an ingested table usually lands in the last level), its RIBBON equivalence computed for a
     * large table (the writer does not know its size in advance).
     */
    public TableFilter forIngestedTable(int lastLevel) {
        FilterKind kind = kindForLevel(lastLevel);
        return new TableFilter(kind, bitsPerKey(kind, budget, bitsPerKey, LARGE_TABLE_KEYS));
    }

    /** The Bloom budget of a new table of {@code level}, per the allocation (see {@link #forTable}). */
    private double bloomBitsPerKey(
            VersionSet versions,
            int level,
            long expectedEntries,
            Compaction job,
            byte[] smallestUserKey,
            byte[] largestUserKey) {
        if (allocation == FilterAllocation.UNIFORM || bitsPerKey == 0) {
            return bitsPerKey;
        }
        Version v = versions.retainCurrent();
        try {
            return MonkeyAllocation.bitsPerKeyForLevel(
                    v, level, options, expectedEntries, job, smallestUserKey, largestUserKey);
        } finally {
            v.release();
        }
    }

    /**
     * Bits per key of a filter of {@code kind} for a table of about {@code expectedKeys} keys given its Bloom budget
     * {@code bloomBitsPerKey} (see the class comment).
     */
    public static double bitsPerKey(FilterKind kind, FilterBudget budget, double bloomBitsPerKey, long expectedKeys) {
        if (kind != FilterKind.RIBBON || budget == FilterBudget.MEMORY || bloomBitsPerKey <= 0) {
            return bloomBitsPerKey;
        }
        return ribbonBitsForBloomBudget(bloomBitsPerKey, Math.max(1, expectedKeys));
    }

    /** Bits per key of a RIBBON of {@code keys} keys at the rate of BLOCKED at {@code bloomBitsPerKey}. */
    static double ribbonBitsForBloomBudget(double bloomBitsPerKey, long keys) {
        int k = FilterMath.optimalBlockedK(bloomBitsPerKey);
        double rate = FilterMath.blockedFppForLoad(FilterMath.BLOCK_BITS / bloomBitsPerKey, k, FilterMath.BLOCK_BITS);
        if (!(rate > 0 && rate < 1)) {
            return bloomBitsPerKey;
        }
        // a table of fewer than ~128 keys still spends a whole 128-slot block: more bits per key than Bloom, same rate
        return FilterMath.ribbonBitsPerKeyForFpp(keys, rate);
    }
}
