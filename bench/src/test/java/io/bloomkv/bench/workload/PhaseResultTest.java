package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.bloomkv.bench.engine.EngineCounters;
import io.bloomkv.bench.engine.TableRange;
import io.bloomkv.bench.engine.TableSummary;
import java.util.List;
import org.junit.jupiter.api.Test;

class PhaseResultTest {
    private static PhaseResult absentPhase(
            TableSummary tables, EngineCounters counters, double predictedChecks, double predictedUseful) {
        return new PhaseResult(
                "readmissing",
                "readmissing",
                "bloomkv",
                true,
                "",
                "read",
                1000,
                1,
                1000,
                1,
                1,
                1,
                1,
                0,
                1000,
                0,
                0,
                counters,
                tables,
                0,
                "off",
                0,
                predictedChecks,
                predictedUseful,
                0);
    }

    @Test
    void absentPhaseTheoryWeightsTablesAsGetsAskThem() {
        // Per-level bits (MONKEY): a small table at rate 0.001 and a large one at 0.02. Entries-weighted, the tables'
        // average is near the large table's rate; every get asks both, so one check's rate is their mean.
        byte[] lo = {0};
        byte[] hi = {(byte) 0xff};
        TableSummary tables = new TableSummary(
                2,
                1_100_000,
                0,
                0,
                (100_000 * 0.001 + 1_000_000 * 0.02) / 1_100_000,
                List.of(new TableRange(lo, hi, 0.001, true), new TableRange(lo, hi, 0.02, true)));
        double[] predicted = tables.predictAbsent(new byte[][] {{1}, {2}, {3}, {4}});
        // 2000 checks, 21 false positives: the per-check rate 0.0105.
        EngineCounters counters = new EngineCounters(2000, 1979, 21, 0, 21, 21 * 4096, 0, 0);
        PhaseResult p = absentPhase(tables, counters, predicted[0] * 250, predicted[1] * 250);
        assertThat(p.theoreticalFpr()).isCloseTo(0.0105, within(1e-9));
        assertThat(p.measuredFpr()).isCloseTo(0.0105, within(1e-9));
        assertThat(p.fprVsTheory()).isCloseTo(1.0, within(1e-9));
        assertThat(tables.theoreticalFpr()).isGreaterThan(0.018);
    }

    @Test
    void withoutAPredictionTheTablesAverageIsTheTheory() {
        TableSummary tables = new TableSummary(1, 1000, 0, 0, 0.01, List.of());
        PhaseResult p = absentPhase(tables, EngineCounters.ZERO, Double.NaN, Double.NaN);
        assertThat(p.theoreticalFpr()).isEqualTo(0.01);
    }
}
