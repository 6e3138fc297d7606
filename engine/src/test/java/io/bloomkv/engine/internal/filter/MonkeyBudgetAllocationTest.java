package io.bloomkv.engine.internal.filter;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link MonkeyAllocation#allocateWithinBudget}: without a binding budget it is Monkey's plan; under a small one it
 * never plans more memory than Monkey's, never expects more reads per absent get than Monkey's plan does under that
 * budget, and gives the deepest run fewer bits so its filter fits the cache.
 */
class MonkeyBudgetAllocationTest {
    /** Two level-0 tables, then levels of 1M and 10M entries. */
    private static final long[] RUNS = {100_000, 100_000, 1_000_000, 10_000_000};

    private static double memoryBytes(long[] entries, double[] bits) {
        double m = 0;
        for (int i = 0; i < entries.length; i++) {
            m += entries[i] * bits[i] / 8;
        }
        return m;
    }

    @Test
    void aBudgetHoldingEveryFilterChangesNothing() {
        double[] plain = MonkeyAllocation.allocate(RUNS, 10);
        long full = (long) memoryBytes(RUNS, plain);
        assertThat(MonkeyAllocation.allocateWithinBudget(RUNS, 10, 2 * full)).containsExactly(plain);
        assertThat(MonkeyAllocation.allocateWithinBudget(RUNS, 10, 0)).containsExactly(plain);
        assertThat(MonkeyAllocation.expectedReadsWithinBudget(RUNS, plain, 2 * full))
                .isEqualTo(MonkeyAllocation.sumOfFalsePositiveRates(RUNS, plain));
    }

    @Test
    void aQuarterBudgetShrinksTheDeepestRunToFitTheCache() {
        double[] plain = MonkeyAllocation.allocate(RUNS, 10);
        long full = (long) memoryBytes(RUNS, plain);
        for (long budget : new long[] {full / 4, full / 10, full / 2}) {
            double[] planned = MonkeyAllocation.allocateWithinBudget(RUNS, 10, budget);
            assertThat(memoryBytes(RUNS, planned))
                    .as("budget " + budget)
                    .isLessThanOrEqualTo(memoryBytes(RUNS, plain) * 1.000001);
            double plannedReads = MonkeyAllocation.expectedReadsWithinBudget(RUNS, planned, budget);
            double plainReads = MonkeyAllocation.expectedReadsWithinBudget(RUNS, plain, budget);
            assertThat(plannedReads).as("budget " + budget).isLessThan(plainReads);
            assertThat(planned[3])
                    .as("the deepest run's bits at budget " + budget)
                    .isLessThan(plain[3]);
        }
        // at a quarter: the plain plan's deepest filter is far beyond the cache (most of its probes miss it), the
        // planned one's misses are fewer, and an absent get expects well under one read
        double[] quarter = MonkeyAllocation.allocateWithinBudget(RUNS, 10, full / 4);
        assertThat(MonkeyAllocation.expectedReadsWithinBudget(RUNS, quarter, full / 4))
                .isLessThan(0.5);
        assertThat(MonkeyAllocation.expectedReadsWithinBudget(RUNS, plain, full / 4))
                .isGreaterThan(0.5);
    }

    /**
     * The plan fits the budget only where unpinned filters are loaded through the cache (pread, O_DIRECT); tables read
     * through their mappings probe those partitions in place, so their plan is the unbudgeted one.
     */
    @Test
    void mappedTablesPlanWithoutTheBudget() {
        io.bloomkv.engine.Options o = io.bloomkv.engine.Options.defaults().filterMemoryBudget(1 << 20);
        assertThat(MonkeyAllocation.planningBudget(o.copy().useMmapReads(true))).isZero();
        assertThat(MonkeyAllocation.planningBudget(o.copy().useMmapReads(false)))
                .isEqualTo(1 << 20);
        assertThat(MonkeyAllocation.planningBudget(o.copy().useMmapReads(true).useDirectReads(true)))
                .isEqualTo(1 << 20);
        io.bloomkv.engine.SharedFilterBudget shared = new io.bloomkv.engine.SharedFilterBudget(3 << 20);
        assertThat(MonkeyAllocation.planningBudget(io.bloomkv.engine.Options.defaults()
                        .filterMemoryBudget(shared)
                        .useMmapReads(false)))
                .isEqualTo(3 << 20);
    }
}
