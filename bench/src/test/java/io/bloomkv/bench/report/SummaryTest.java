package io.bloomkv.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.engine.EngineCounters;
import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.engine.TableSummary;
import io.bloomkv.bench.workload.PhaseResult;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Medians over --repeat runs: an even count of runs has the mean of the two middle ones as its median. */
class SummaryTest {
    private static final TableSummary TABLES = new TableSummary(3, 1_000, 1_250, 120_000L, 0.01, List.of());

    private static PhaseResult phase(String engine, double opsPerSec, double p99, int run) {
        long ops = 1_000;
        return new PhaseResult(
                "readrandom",
                "readrandom",
                engine,
                true,
                new EngineSpec(engine, true).label(),
                "read",
                ops,
                ops / opsPerSec,
                opsPerSec,
                0.5,
                p99,
                5.0,
                9.0,
                ops,
                0,
                0,
                0,
                EngineCounters.ZERO,
                TABLES,
                0,
                "off",
                run,
                Double.NaN,
                Double.NaN,
                0);
    }

    @Test
    void anEvenCountOfRunsHasTheMeanOfTheTwoMiddleOnesAsItsMedian() {
        List<PhaseResult> runs = List.of(
                phase("bloomkv", 100, 4, 0),
                phase("bloomkv", 400, 1, 1),
                phase("bloomkv", 200, 3, 2),
                phase("bloomkv", 300, 2, 3));
        Summary s = Summary.of(runs).get(0);
        assertThat(s.runs()).isEqualTo(4);
        assertThat(s.medianOpsPerSec()).isEqualTo(250.0);
        assertThat(s.minOpsPerSec()).isEqualTo(100.0);
        assertThat(s.maxOpsPerSec()).isEqualTo(400.0);
        // the other figures are the lower middle run's (ops/s 200: run 2)
        assertThat(s.median().run()).isEqualTo(2);
        PhaseResult shown = Summary.medians(runs).get(0);
        assertThat(shown.opsPerSec()).isEqualTo(250.0);
        assertThat(shown.p99Micros()).isEqualTo(3.0);
        assertThat(shown.run()).isEqualTo(2);
        // an odd count: the middle run itself
        assertThat(Summary.of(runs.subList(0, 3)).get(0).medianOpsPerSec()).isEqualTo(200.0);
    }

    /** Two runs each: the table's ops/s row and its ratio, and results.json's summary, use the medians. */
    @Test
    void theTablesAndResultsJsonShowTheMedianOfTwoRuns() throws Exception {
        List<PhaseResult> runs = new ArrayList<>(List.of(
                phase("bloomkv", 100_000, 1, 0),
                phase("rocksdb", 100_000, 1, 0),
                phase("bloomkv", 300_000, 1, 1),
                phase("rocksdb", 100_000, 1, 1)));
        List<EngineSpec> columns = List.of(new EngineSpec("bloomkv", true), new EngineSpec("rocksdb", true));
        String text = MetricTable.build(runs, columns).get(0).toText();
        String opsRow =
                text.lines().filter(l -> l.startsWith("ops/s ")).findFirst().orElseThrow();
        assertThat(opsRow.split("\\s+")).containsExactly("ops/s", "200,000", "100,000", "2.00x");
        assertThat(text).contains("100,000-300,000");

        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd).parseArgs("--repeat", "2", "--workloads", "readrandom");
        BenchReport report = new BenchReport(
                Instant.EPOCH,
                1,
                Machine.current(),
                cmd.config(Path.of("unused")),
                Map.of(),
                null,
                runs,
                List.of(),
                List.of());
        var summary =
                new ObjectMapper().valueToTree(ReportWriter.toJson(report)).path("summary");
        assertThat(summary.get(0).path("label").asText()).isEqualTo("bloomkv");
        assertThat(summary.get(0).path("medianOpsPerSec").asDouble()).isEqualTo(200_000.0);
        assertThat(summary.get(0).path("minOpsPerSec").asDouble()).isEqualTo(100_000.0);
        assertThat(summary.get(0).path("maxOpsPerSec").asDouble()).isEqualTo(300_000.0);
    }
}
