package io.bloomkv.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.bloomkv.bench.engine.EngineCounters;
import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.engine.TableSummary;
import io.bloomkv.bench.workload.PhaseResult;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategorySeries;

/** The report's ratio chart: bloomkv / RocksDB ops/s per workload, medians of the per-run ratios, filters on and off. */
class RatioChartTest {
    private static final TableSummary TABLES = new TableSummary(3, 1_000_000, 1_250_000, 120_000_000L, 0.01, List.of());

    private static PhaseResult phase(String name, String engine, boolean filters, double opsPerSec, int run) {
        long ops = 100_000;
        EngineCounters c = new EngineCounters(0, 0, 0, 0, 0, 0, 0, 0);
        return new PhaseResult(
                name,
                name,
                engine,
                filters,
                new EngineSpec(engine, filters).label(),
                "read",
                ops,
                ops / opsPerSec,
                opsPerSec,
                0.5,
                2.0,
                5.0,
                9.0,
                0,
                ops,
                0,
                0,
                c,
                TABLES,
                0,
                "off",
                run,
                Double.NaN,
                Double.NaN,
                0);
    }

    /** readrandom: per-run ratios 1.5, 2.0, 4.0 with filters on (median 2.0), 1.1, 1.2, 0.9 without (median 1.1). */
    private static List<PhaseResult> results() {
        double[] on = {1.5, 2.0, 4.0};
        double[] off = {1.1, 1.2, 0.9};
        List<PhaseResult> out = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            out.add(phase("readrandom", "bloomkv", true, 100_000 * on[run], run));
            out.add(phase("readrandom", "rocksdb", true, 100_000, run));
            out.add(phase("readrandom", "bloomkv", false, 50_000 * off[run], run));
            out.add(phase("readrandom", "rocksdb", false, 50_000, run));
            // measured on bloomkv only: no ratio, so no bar
            out.add(phase("readmissing", "bloomkv", true, 1_000_000, run));
            // filters on only
            out.add(phase("fillrandom", "bloomkv", true, 120_000, run));
            out.add(phase("fillrandom", "rocksdb", true, 100_000, run));
        }
        return out;
    }

    @Test
    void barsAreTheMediansOfThePerRunRatios() {
        CategoryChart chart = Charts.ratios(results());

        assertThat(chart.getSeriesMap())
                .as("parity is an annotation (see theParityLineSpansEveryBar), not a series")
                .containsOnlyKeys("filters on", "filters off");
        CategorySeries on = chart.getSeriesMap().get("filters on");
        assertThat(new ArrayList<Object>(on.getXData())).containsExactly("readrandom", "fillrandom");
        List<Number> onY = new ArrayList<>(on.getYData());
        assertThat(onY.get(0).doubleValue()).isCloseTo(2.0, within(1e-9));
        assertThat(onY.get(1).doubleValue()).isCloseTo(1.2, within(1e-9));
        List<Number> offY =
                new ArrayList<>(chart.getSeriesMap().get("filters off").getYData());
        assertThat(offY.get(0).doubleValue()).isCloseTo(1.1, within(1e-9));
        assertThat(offY.get(1)).as("fillrandom ran with filters on only").isNull();
    }

    /**
     * A phase whose RocksDB run did no operation in its timed pass (ops/s 0, so an infinite ratio, as a short
     * readwhilewriting's reads during background work can be) gets no bar (nor a category), and the report's charts are still drawn:
     * the chart library refuses an infinite value, which had failed the whole report.
     */
    @Test
    void anInfiniteRatioHasNoBarAndTheChartsAreStillWritten(@TempDir Path dir) throws Exception {
        List<PhaseResult> results = new ArrayList<>(results());
        for (int run = 0; run < 3; run++) {
            results.add(phase("readwhilewriting", "bloomkv", true, 80_000, run));
            results.add(phase("readwhilewriting", "rocksdb", true, 0, run));
        }
        CategoryChart chart = Charts.ratios(results);
        CategorySeries on = chart.getSeriesMap().get("filters on");
        List<Object> cats = new ArrayList<>(on.getXData());
        assertThat(cats).as("a phase with only an infinite ratio").doesNotContain("readwhilewriting");
        assertThat(cats).containsExactly("readrandom", "fillrandom");

        BenchReport report = new BenchReport(
                Instant.now(), 1.0, Machine.current(), null, Map.of(), "off", results, List.of(), List.of());
        List<String> written =
                Charts.writeAll(report, List.of(new EngineSpec("bloomkv", true), new EngineSpec("rocksdb", true)), dir);
        assertThat(written).contains(Charts.RATIOS);
        assertThat(Files.size(dir.resolve(Charts.RATIOS))).isPositive();
    }

    @Test
    void noPhaseOnBothEnginesMeansNoChart() {
        List<PhaseResult> bloomkvOnly =
                results().stream().filter(p -> p.engine().equals("bloomkv")).toList();
        assertThat(Charts.ratios(bloomkvOnly)).isNull();
    }

    @Test
    void withoutNoFilterRunsThereIsNoFiltersOffSeries() {
        List<PhaseResult> on = results().stream().filter(PhaseResult::filters).toList();
        assertThat(Charts.ratios(on).getSeriesMap()).containsOnlyKeys("filters on");
    }

    @Test
    void writtenIntoTheReportFolderAsAPng(@TempDir Path dir) throws Exception {
        BenchReport report = new BenchReport(
                Instant.now(), 1.0, Machine.current(), null, Map.of(), "off", results(), List.of(), List.of());
        List<EngineSpec> columns = List.of(
                new EngineSpec("bloomkv", true),
                new EngineSpec("rocksdb", true),
                new EngineSpec("bloomkv", false),
                new EngineSpec("rocksdb", false));
        List<String> written = Charts.writeAll(report, columns, dir);

        assertThat(written).contains(Charts.RATIOS);
        Path png = dir.resolve(Charts.RATIOS);
        assertThat(Files.size(png)).isPositive();
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getWidth()).isGreaterThan(500);
        assertThat(img.getHeight()).isGreaterThan(300);
    }

    /**
     * The parity line spans the plot's full width: rendered (legend hidden, so only bars are coloured), the dashed grey
     * line at 1.0 shows in the gap left of the first bar and right of the last, not only between the first and last
     * categories' centres, where a line series over the categories ends.
     */
    @Test
    void theParityLineSpansEveryBar() {
        CategoryChart chart = Charts.ratios(results());
        chart.getStyler().setLegendVisible(false);
        BufferedImage img = BitmapEncoder.getBufferedImage(chart);
        int barsMin = Integer.MAX_VALUE;
        int barsMax = -1;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                int rgb = img.getRGB(x, y);
                int r = (rgb >> 16) & 0xff;
                int g = (rgb >> 8) & 0xff;
                int b = rgb & 0xff;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) { // a bar's colour
                    barsMin = Math.min(barsMin, x);
                    barsMax = Math.max(barsMax, x);
                }
            }
        }
        assertThat(barsMax).as("bars drawn").isGreaterThan(barsMin);
        // the line's row: the one with the most grey pixels between the bars' outer edges
        int lineRow = -1;
        int most = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            int n = 0;
            for (int x = barsMin; x <= barsMax; x++) {
                n += isParityGrey(img.getRGB(x, y)) ? 1 : 0;
            }
            if (n > most) {
                most = n;
                lineRow = y;
            }
        }
        assertThat(lineRow).as("a grey line among the bars").isNotNegative();
        int margin = 15; // narrower than the gap before the first bar and after the last (a tenth of a category)
        assertThat(greyBetween(img, lineRow, barsMin - margin, barsMin))
                .as("parity line left of the first bar (row %d)", lineRow)
                .isTrue();
        assertThat(greyBetween(img, lineRow, barsMax + 1, barsMax + 1 + margin))
                .as("parity line right of the last bar (row %d)", lineRow)
                .isTrue();
    }

    private static boolean isParityGrey(int rgb) {
        return rgb == Color.GRAY.getRGB();
    }

    private static boolean greyBetween(BufferedImage img, int y, int fromX, int toX) {
        for (int x = Math.max(0, fromX); x < Math.min(img.getWidth(), toX); x++) {
            if (isParityGrey(img.getRGB(x, y))) {
                return true;
            }
        }
        return false;
    }
}
