package io.bloomkv.engine.internal.table;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Decides, for one table, whether a bounded positioning should ask the table's range filter at all. A probe costs a
 * few cache misses whatever it answers, and saves the table's seek (index search, data block) only when it answers
 * "no key in the range": over a table whose ranges mostly hold keys (short scans of live data) every probe is pure
 * cost. The gate keeps a running estimate of the share of this table's probes that said "no" (an exponentially
 * weighted average, weight 1/16 per probe) and lets a probe through while that share is at least 1/8; below it, one
 * positioning in 16, drawn at random, still probes, so the estimate follows a workload that turns to empty ranges
 * (three "no" answers in a row bring the share back over the bar). Not probing is always safe: the table is then
 * read as it is without a range filter.
 *
 * <p>Counterpart: RocksDB's {@code optimize_filters_for_hits} drops the last level's point filters for workloads
 * whose keys are known to exist, a static choice; this one is per table and follows the answers it gets.
 *
 * <p>Shared by every reader of the table without synchronization: the estimate is a plain int, written only when
 * it changes (never in the steady states "every probe says no" and "every probe says maybe"), so readers of a table
 * do not contend on it; a lost update between racing readers only delays the estimate, never a wrong answer.
 */
final class RangeProbeGate {
    /** The fixed-point 1.0 of {@link #noShare}. */
    static final int ONE = 1 << 16;
    /** The weight of one probe's answer in the average: 1 / 2^WEIGHT_SHIFT. */
    static final int WEIGHT_SHIFT = 4;
    /** Probes go through while the share of "no" answers is at least this (1/8). */
    static final int PROBE_AT_LEAST = ONE >> 3;
    /** Below the bar, one positioning in this many (a power of two) probes anyway. */
    static final int SAMPLE_ONE_IN = 16;

    /** Share of recent probes that said "no", in units of 1/{@link #ONE}; starts at 1 (a new table is probed). */
    private int noShare = ONE;

    /** True when the next positioning should ask the filter. */
    boolean shouldProbe() {
        return noShare >= PROBE_AT_LEAST || (ThreadLocalRandom.current().nextInt() & (SAMPLE_ONE_IN - 1)) == 0;
    }

    /** Folds one probe's answer into the estimate ({@code ruledOut}: the filter said no key is in the range). */
    void record(boolean ruledOut) {
        int s = noShare;
        int next = s + (((ruledOut ? ONE : 0) - s) >> WEIGHT_SHIFT);
        if (next != s) {
            noShare = next;
        }
    }

    /** The current estimate, for tests: the share of "no" answers in units of 1/{@link #ONE}. */
    int noShare() {
        return noShare;
    }
}
