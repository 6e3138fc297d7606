package io.bloomkv.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.engine.EngineCounters;
import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.engine.TableSummary;
import io.bloomkv.bench.workload.PhaseResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.CategoryChart;
import picocli.CommandLine;

/**
 * The per-workload charts draw no bar where there is nothing to draw (an engine that did not run the phase, a figure
 * that is undefined, a theory that predicts nothing), rather than a bar at 0 that reads as measured; the tables'
 * ratio columns both say which way they divide.
 */
class ChartBarsTest {
    private static PhaseResult phase(
            String name, String engine, long ops, double opsPerSec, long useful, double predicted) {
        return phase(
                name,
                engine,
                ops,
                opsPerSec,
                new EngineCounters(useful + 10, useful, 10, 0, ops / 10, ops * 400, 0, 0),
                predicted);
    }

    private static PhaseResult phase(
            String name, String engine, long ops, double opsPerSec, EngineCounters c, double predicted) {
        return new PhaseResult(
                name,
                name,
                engine,
                true,
                new EngineSpec(engine, true).label(),
                "read",
                ops,
                ops == 0 ? 0 : ops / opsPerSec,
                opsPerSec,
                0.5,
                2.0,
                5.0,
                9.0,
                ops,
                0,
                0,
                0,
                c,
                new TableSummary(3, 1_000, 1_250, 120_000L, Double.NaN, List.of()),
                0,
                "off",
                0,
                predicted,
                predicted,
                0);
    }

    private static final List<EngineSpec> COLUMNS =
            List.of(new EngineSpec("bloomkv", true), new EngineSpec("rocksdb", true));

    @Test
    void anUndefinedFigureOrAMissingColumnHasNoBar() {
        List<PhaseResult> phases = List.of(
                phase("readrandom", "bloomkv", 1000, 50_000, 5, Double.NaN),
                phase("readrandom", "rocksdb", 1000, 40_000, 5, Double.NaN),
                // no reads ran: ops/s and block reads per op undefined
                phase("readwhilewriting-bg", "bloomkv", 0, Double.NaN, 0, Double.NaN),
                phase("readwhilewriting-bg", "rocksdb", 1000, 30_000, 0, Double.NaN),
                // bloomkv only
                phase("readmissing", "bloomkv", 1000, 90_000, 900, 950));
        CategoryChart ops = Charts.perPhase(phases, COLUMNS, "t", "ops/s", PhaseResult::opsPerSec, p -> true);
        List<Number> bloomkv = new ArrayList<>(ops.getSeriesMap().get("bloomkv").getYData());
        List<Number> rocksdb = new ArrayList<>(ops.getSeriesMap().get("rocksdb").getYData());
        assertThat(bloomkv.get(0).doubleValue()).isEqualTo(50_000);
        assertThat(bloomkv.get(1)).as("ops/s undefined").isNull();
        assertThat(rocksdb.get(1).doubleValue()).isEqualTo(30_000);
        assertThat(rocksdb.get(2)).as("RocksDB did not run readmissing").isNull();

        CategoryChart lookups = Charts.lookups(phases);
        List<Number> rocksdbMeasured =
                new ArrayList<>(lookups.getSeriesMap().get("rocksdb measured").getYData());
        List<Number> bloomkvTheory =
                new ArrayList<>(lookups.getSeriesMap().get("bloomkv theory").getYData());
        List<Object> cats =
                new ArrayList<>(lookups.getSeriesMap().get("bloomkv theory").getXData());
        int readmissing = cats.indexOf("readmissing");
        int readrandom = cats.indexOf("readrandom");
        assertThat(rocksdbMeasured.get(readmissing))
                .as("RocksDB did not run readmissing")
                .isNull();
        assertThat(bloomkvTheory.get(readmissing).doubleValue()).isEqualTo(950);
        assertThat(bloomkvTheory.get(readrandom))
                .as("no theory: the tables' rates are unknown")
                .isNull();
    }

    @Test
    void chartsWithMissingBarsAreStillDrawn(@TempDir Path dir) throws Exception {
        List<PhaseResult> phases = List.of(
                phase("readrandom", "bloomkv", 1000, 50_000, 5, Double.NaN),
                phase("readwhilewriting-bg", "bloomkv", 0, Double.NaN, 0, Double.NaN),
                phase("readwhilewriting-bg", "rocksdb", 1000, 30_000, 0, Double.NaN),
                phase("readmissing", "bloomkv", 1000, 90_000, 900, 950));
        BenchReport report = new BenchReport(
                Instant.now(), 1.0, Machine.current(), null, Map.of(), "off", phases, List.of(), List.of());
        List<String> written = Charts.writeAll(report, COLUMNS, dir);
        assertThat(written).contains(Charts.THROUGHPUT, Charts.LOOKUPS, Charts.READ_AMP);
        for (String f : written) {
            assertThat(ImageIO.read(dir.resolve(f).toFile())).as(f).isNotNull();
        }
    }

    @Test
    void bothRatioColumnsSayWhichWayTheyDivide() {
        List<EngineSpec> columns = List.of(
                new EngineSpec("bloomkv", true),
                new EngineSpec("rocksdb", true),
                new EngineSpec("bloomkv", false),
                new EngineSpec("rocksdb", false));
        String header = MetricTable.build(List.of(phase("readrandom", "bloomkv", 1000, 50_000, 5, Double.NaN)), columns)
                .get(0)
                .toMarkdown()
                .lines()
                .findFirst()
                .orElseThrow();
        assertThat(header).contains("| bloomkv/rocksdb |", "| bloomkv/rocksdb (nofilter) |");
    }

    /**
     * A run whose reads asked the filters only about keys their tables hold (no absent keys: nothing to avoid, nothing
     * predicted) writes no disk-lookups-avoided chart, rather than one of empty bars, and report.md does not link it.
     */
    @Test
    void withoutAbsentKeysThereIsNoLookupsChartNorALinkToIt(@TempDir Path dir) throws Exception {
        // every check a true positive: 1,000 gets, one table each, the key always there
        EngineCounters presentOnly = new EngineCounters(1000, 0, 1000, 1000, 1000, 400_000, 0, 0);
        List<PhaseResult> phases = List.of(
                phase("readrandom", "bloomkv", 1000, 50_000, presentOnly, Double.NaN),
                phase("readrandom", "rocksdb", 1000, 40_000, presentOnly, Double.NaN));
        assertThat(Charts.lookups(phases)).isNull();

        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd).parseArgs("--workloads", "readrandom");
        BenchReport report = new BenchReport(
                Instant.EPOCH,
                1,
                Machine.current(),
                cmd.config(Path.of("unused")),
                Map.of(),
                "off",
                phases,
                List.of(),
                List.of());
        ReportWriter.write(report, COLUMNS, dir);
        assertThat(dir.resolve(Charts.LOOKUPS)).doesNotExist();
        assertThat(dir.resolve(Charts.THROUGHPUT)).exists();
        assertThat(Files.readString(dir.resolve(ReportWriter.MARKDOWN)))
                .contains(Charts.THROUGHPUT)
                .doesNotContain(Charts.LOOKUPS);
    }
}
