package io.bloomkv.engine.internal.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.bloomkv.engine.internal.compaction.Compaction;
import io.bloomkv.engine.internal.version.FileMetaData;
import java.util.ArrayList;
import java.util.List;
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

    private static FileMetaData table(long number, long entries) {
        byte[] key = new byte[16];
        return new FileMetaData(number, entries * 130, key, key, entries, 1, 1);
    }

    private static List<List<FileMetaData>> tree(List<FileMetaData> l0, List<FileMetaData> l5, List<FileMetaData> l6) {
        return List.of(l0, List.of(), List.of(), List.of(), List.of(), l5, l6);
    }

    @Test
    void aCompactionAllocatesOverTheTreeItLeaves() {
        // A 10M-key random load: four level-0 tables merged into the last level, while a flush wrote a fifth.
        List<FileMetaData> inputs =
                List.of(table(11, 457_536), table(12, 457_536), table(13, 457_536), table(14, 457_536));
        List<FileMetaData> l0 = new ArrayList<>(List.of(table(20, 457_536)));
        l0.addAll(inputs);
        List<FileMetaData> lastBefore = List.of(table(3, 1_800_000), table(4, 1_900_000));
        Compaction job = new Compaction(0, 6, inputs, lastBefore);
        long[] runs = MonkeyAllocation.runsAfter(tree(l0, List.of(), lastBefore), 6, 548_563, job);
        // The inputs are no runs; the last level holds its old entries and the inputs' (all of the job's output).
        assertThat(runs).containsExactly(457_536, 4 * 457_536 + 3_700_000);
        double lastLevelBits = MonkeyAllocation.allocate(runs, 10)[runs.length - 1];
        assertThat(lastLevelBits).isBetween(9.5, 10.0);
        // Counted in the tree before the job (the inputs as level-0 runs, the last level as its old tables plus one
        // output table), the last level got about 1.5 bits per key less, for the rest of its life.
        long[] before = {457_536, 457_536, 457_536, 457_536, 457_536, 3_700_000 + 548_563};
        assertThat(MonkeyAllocation.allocate(before, 10)[before.length - 1]).isLessThan(lastLevelBits - 1);

        // A compaction into a level that keeps some tables: those stay in its run, the job's inputs join it.
        List<FileMetaData> l5 = List.of(table(30, 300_000), table(31, 300_000));
        List<FileMetaData> l6 = List.of(table(40, 2_000_000), table(41, 2_000_000));
        Compaction down = new Compaction(5, 6, List.of(table(30, 300_000)), List.of(table(40, 2_000_000)));
        assertThat(MonkeyAllocation.runsAfter(tree(List.of(), l5, l6), 6, 500_000, down))
                .containsExactly(300_000, 2_000_000 + 2_300_000);
    }

    @Test
    void aFlushAddsItsTableAsANewLevelZeroRun() {
        List<FileMetaData> l0 = List.of(table(21, 400_000));
        List<FileMetaData> l6 = List.of(table(40, 2_000_000));
        assertThat(MonkeyAllocation.runsAfter(tree(l0, List.of(), l6), 0, 450_000, null))
                .containsExactly(400_000, 2_000_000, 450_000);
    }
}
