package io.bloomkv.bench.range;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The range-filter bench commands at a toy size: {@code rangeseek}'s engines all answer every range exactly, entry by
 * entry (its passes throw otherwise; {@link RangeCheckTest}, {@link RangeCheckRunTest}) and range filters leave empty
 * ranges without block reads; {@code range-fpr}'s points are all within their bound. No timing is asserted.
 */
class RangeBenchTest {
    @TempDir
    Path dir;

    @Test
    void rangeSeekAnswersExactlyAndSkipsTablesOnEmptyRanges() throws Exception {
        List<RangeSeekBench.Result> rs = RangeSeekBench.run(dir.resolve("db"), 200_000, 2_000, 1, 16, 10, 1 << 20, 7);
        assertThat(rs).hasSize(6);
        RangeSeekBench.Result withRange = find(rs, "seekempty", "bloomkv+range16");
        RangeSeekBench.Result without = find(rs, "seekempty", "bloomkv");
        assertThat(withRange.rangeUsefulPerSeek()).isPositive();
        assertThat(withRange.blockReadsPerSeek())
                .as("block reads per empty range")
                .isLessThan(0.05);
        assertThat(without.blockReadsPerSeek()).isGreaterThan(withRange.blockReadsPerSeek());
        assertThat(withRange.rangeChecksPerSeek()).isGreaterThanOrEqualTo(withRange.rangeUsefulPerSeek());
        RangeSeekBench.Result shortRange = find(rs, "seekshort", "bloomkv+range16");
        assertThat(shortRange.medianOps()).isPositive();
        assertThat(shortRange.rangeChecksPerSeek())
                .as("ranges holding keys: the tables' filters are passed by once they keep saying 'may hold'")
                .isLessThan(0.5);
    }

    private static RangeSeekBench.Result find(List<RangeSeekBench.Result> rs, String workload, String engine) {
        return rs.stream()
                .filter(r -> r.workload().equals(workload) && r.engine().equals(engine))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void rangeFprPointsAreWithinTheirBound() {
        List<RangeFprSweep.Row> rows = RangeFprSweep.run(5_000, 3_000, 3, new double[] {10, 16}, new long[] {2, 64});
        assertThat(rows).hasSize(3 * 2 * 2);
        for (RangeFprSweep.Row r : rows) {
            assertThat(r.queries()).isEqualTo(3_000);
            assertThat(r.withinBound()).as(r.toString()).isTrue();
        }
    }

    /**
     * Ranges [c - ℓ, c) whose exclusive upper bound is the next key c: within the bound too (a filter that answered
     * them as closed ranges would say "may hold" for every one).
     */
    @Test
    void rangesEndingAtTheNextKeyAreWithinTheirBound() {
        List<RangeFprSweep.Row> rows =
                RangeFprSweep.run(5_000, 3_000, 3, new double[] {10, 16}, new long[] {2, 64}, true);
        assertThat(rows).hasSize(3 * 2 * 2);
        for (RangeFprSweep.Row r : rows) {
            assertThat(r.queries()).as(r.toString()).isGreaterThan(1_000);
            assertThat(r.withinBound()).as(r.toString()).isTrue();
        }
        assertThat(RangeFprSweep.minus(new byte[] {1, 0}, 1)).containsExactly(0, (byte) 0xFF);
        assertThat(RangeFprSweep.minus(new byte[] {0, 1}, 2)).isNull();
    }
}
