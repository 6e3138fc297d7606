package io.bloomkv.engine.internal.compaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class MonkeyAllocationTest {
    @Test
    void sameMemoryLowerSumOfFalsePositiveRates() {
        // Four level-0 tables and levels 1..3 growing 10x, as a leveled LSM holds them.
        long[] entries = {10_000, 10_000, 10_000, 10_000, 100_000, 1_000_000, 10_000_000};
        double avg = 10;
        double[] bits = MonkeyAllocation.allocate(entries, avg);
        double memory = 0;
        double total = 0;
        for (int i = 0; i < entries.length; i++) {
            memory += entries[i] * bits[i];
            total += entries[i];
        }
        assertThat(memory).isCloseTo(avg * total, within(total * 1e-6));
        double[] uniform = new double[entries.length];
        java.util.Arrays.fill(uniform, avg);
        double monkey = MonkeyAllocation.sumOfFalsePositiveRates(entries, bits);
        double flat = MonkeyAllocation.sumOfFalsePositiveRates(entries, uniform);
        assertThat(monkey).isLessThan(flat * 0.8);
        // Smaller runs get more bits per key; the false-positive rate is proportional to the run size.
        for (int i = 1; i < entries.length; i++) {
            assertThat(bits[i]).isLessThanOrEqualTo(bits[i - 1] + 1e-9);
        }
        double p4 = Math.exp(-bits[4] * Math.log(2) * Math.log(2));
        double p5 = Math.exp(-bits[5] * Math.log(2) * Math.log(2));
        assertThat(p5 / p4).isCloseTo(10, within(0.01));
    }

    @Test
    void equalRunsGetTheUniformAllocation() {
        double[] bits = MonkeyAllocation.allocate(new long[] {500, 500, 500}, 8);
        for (double b : bits) {
            assertThat(b).isCloseTo(8.0, within(1e-6));
        }
        assertThat(MonkeyAllocation.allocate(new long[] {0, 100}, 8)[0]).isEqualTo(8);
    }

    @Test
    void tinyBudgetGivesTheLargestRunNoBits() {
        double[] bits = MonkeyAllocation.allocate(new long[] {100, 1_000_000}, 0.01);
        assertThat(bits[1]).isLessThan(0.01);
        assertThat(bits[0]).isGreaterThan(bits[1]);
    }
}
