package io.bloomkv.bench.report;

import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.workload.PhaseResult;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The report's PNG charts (XChart, rendered headless). */
public final class Charts {
    public static final String FPR = "fpr-vs-bits-per-key.png";
    public static final String LOOKUPS = "disk-lookups-avoided.png";
    public static final String THROUGHPUT = "throughput-p99.png";
    public static final String READ_AMP = "read-amplification.png";
    public static final String RATIO_VS_VALUE_SIZE = "ratio-vs-value-size.png";
    public static final String RATIOS = "ratio-per-workload.png";

    private static final Color[] PALETTE = {
        new Color(0x1f77b4), new Color(0x2ca02c), new Color(0xd62728), new Color(0x9467bd), new Color(0xff7f0e)
    };
    private static final org.knowm.xchart.style.markers.Marker[] MARKERS = {
        SeriesMarkers.CIRCLE,
        SeriesMarkers.DIAMOND,
        SeriesMarkers.SQUARE,
        SeriesMarkers.TRIANGLE_UP,
        SeriesMarkers.CROSS
    };
    private static final int W = 1000;
    private static final int H = 520;

    private Charts() {}

    /** Writes every chart that has data; returns the file names written. */
    public static List<String> writeAll(BenchReport report, List<EngineSpec> columns, Path dir) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> written = new ArrayList<>();
        if (!report.fprSweep().isEmpty()) {
            save(fpr(report.fprSweep()), dir.resolve(FPR));
            written.add(FPR);
        }
        CategoryChart ratios = ratios(report.phases());
        if (ratios != null) {
            save(ratios, dir.resolve(RATIOS));
            written.add(RATIOS);
        }
        List<PhaseResult> phases = Summary.medians(report.phases());
        CategoryChart lookups = lookups(phases);
        if (lookups != null) {
            save(lookups, dir.resolve(LOOKUPS));
            written.add(LOOKUPS);
        }
        if (!phases.isEmpty()) {
            CategoryChart ops =
                    perPhase(phases, columns, "Throughput per workload", "ops/s", PhaseResult::opsPerSec, p -> true);
            CategoryChart p99 = perPhase(
                    phases,
                    columns,
                    "p99 latency per workload",
                    "p99 (microseconds)",
                    PhaseResult::p99Micros,
                    p -> true);
            stack(dir.resolve(THROUGHPUT), ops, p99);
            written.add(THROUGHPUT);
            List<PhaseResult> reads =
                    phases.stream().filter(p -> !p.kind().equals("write")).toList();
            if (!reads.isEmpty()) {
                CategoryChart blocks = perPhase(
                        reads,
                        columns,
                        "Read amplification: blocks read from the file per operation",
                        "block reads / op",
                        PhaseResult::blockReadsPerOp,
                        p -> true);
                CategoryChart bytes = perPhase(
                        reads,
                        columns,
                        "Read amplification: bytes read from the file per operation",
                        "KiB read / op",
                        p -> p.bytesReadPerOp() / 1024.0,
                        p -> true);
                stack(dir.resolve(READ_AMP), blocks, bytes);
                written.add(READ_AMP);
            }
        }
        return written;
    }

    /** Measured (markers) and theoretical (dashed) FPR against bits per key, one colour per filter kind, log scale. */
    static XYChart fpr(List<FprPoint> points) {
        XYChart chart = new XYChartBuilder()
                .width(W)
                .height(H + 80)
                .title("False-positive rate vs bits per key: measured (points) and theory (dashed)")
                .xAxisTitle("bits per key")
                .yAxisTitle("false-positive rate (log scale)")
                .build();
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setYAxisDecimalPattern("0.#####");
        Map<String, List<FprPoint>> byKind = new TreeMap<>();
        for (FprPoint p : points) {
            byKind.computeIfAbsent(p.kind(), k -> new ArrayList<>()).add(p);
        }
        int i = 0;
        for (Map.Entry<String, List<FprPoint>> e : byKind.entrySet()) {
            Color color = PALETTE[i % PALETTE.length];
            i++;
            List<Double> x = new ArrayList<>();
            List<Double> measured = new ArrayList<>();
            List<Double> theory = new ArrayList<>();
            for (FprPoint p : e.getValue()) {
                x.add(p.bitsPerKey());
                // a zero measured rate cannot be drawn on a log axis: plot half of one false positive
                measured.add(p.measuredFpr() > 0 ? p.measuredFpr() : 0.5 / Math.max(1, p.probes()));
                theory.add(p.theoreticalFpr());
            }
            XYSeries m = chart.addSeries(e.getKey() + " measured", x, measured);
            m.setMarker(MARKERS[(i - 1) % MARKERS.length]);
            m.setMarkerColor(color);
            m.setLineStyle(SeriesLines.NONE);
            XYSeries t = chart.addSeries(e.getKey() + " theory", x, theory);
            t.setMarker(SeriesMarkers.NONE);
            t.setLineStyle(SeriesLines.DASH_DASH);
            t.setLineColor(color);
        }
        return chart;
    }

    /**
     * bloomkv / RocksDB ops/s per workload (the median of the per-run ratios over --repeat), with filters on and, where
     * both engines also ran without filters, off; a dashed line across the plot marks parity (1.0). Null when no phase
     * ran on both engines.
     */
    static CategoryChart ratios(List<PhaseResult> results) {
        Set<String> phases = new LinkedHashSet<>();
        for (PhaseResult p : results) {
            phases.add(p.phase());
        }
        List<String> cats = new ArrayList<>();
        List<Double> on = new ArrayList<>();
        List<Double> off = new ArrayList<>();
        boolean anyOff = false;
        for (String phase : phases) {
            // NaN without runs; a ratio over a run that did no operation (RocksDB's ops/s 0: infinite) has no bar, as
            // a chart cannot draw it
            double withFilters = finiteOrNaN(Summary.median(Goal.runRatios(results, phase, true)));
            double without = finiteOrNaN(Summary.median(Goal.runRatios(results, phase, false)));
            if (Double.isNaN(withFilters) && Double.isNaN(without)) {
                continue;
            }
            cats.add(phase);
            on.add(Double.isNaN(withFilters) ? null : withFilters);
            off.add(Double.isNaN(without) ? null : without);
            anyOff |= !Double.isNaN(without);
        }
        if (cats.isEmpty()) {
            return null;
        }
        CategoryChart chart = base(
                "bloomkv / RocksDB ops/s per workload (median of the runs; dashed: parity, above it bloomkv is faster)",
                "ops/s ratio bloomkv / RocksDB");
        chart.getStyler().setYAxisDecimalPattern("0.00");
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setLabelsPosition(0.98);
        chart.getStyler().setYAxisMin(0.0);
        chart.addSeries("filters on", cats, on);
        if (anyOff) {
            chart.addSeries("filters off", cats, off);
        }
        // parity as an annotation, which spans the plot's full width: a line series over the categories would run only
        // from the first category's centre to the last's, short of the outer bars
        chart.getStyler().setAnnotationLineColor(Color.GRAY);
        chart.getStyler().setAnnotationLineStroke(SeriesLines.DASH_DASH);
        chart.addAnnotation(new AnnotationLine(1.0, false, false));
        return chart;
    }

    private static double finiteOrNaN(double v) {
        return Double.isFinite(v) ? v : Double.NaN;
    }

    /**
     * Disk lookups avoided (filter useful) per read phase: measured and predicted, both engines (filters on). Only
     * phases that asked a filter about a key its table does not hold (absent keys): where every check was a true
     * positive there is nothing to avoid and no prediction. Null when no phase did, rather than a chart of empty bars.
     */
    static CategoryChart lookups(List<PhaseResult> phases) {
        List<PhaseResult> withFilter = phases.stream()
                .filter(p ->
                        p.filters() && !p.kind().equals("write") && p.counters().absentChecks() > 0)
                .toList();
        if (withFilter.isEmpty()) {
            return null;
        }
        Set<String> cats = new LinkedHashSet<>();
        Set<String> engines = new LinkedHashSet<>();
        for (PhaseResult p : withFilter) {
            cats.add(p.phase());
            engines.add(p.engine());
        }
        CategoryChart chart = base("Disk lookups avoided by the filters per workload (filters on)", "lookups avoided");
        for (String e : engines) {
            List<Number> measured = new ArrayList<>();
            List<Number> theory = new ArrayList<>();
            for (String c : cats) {
                PhaseResult p = withFilter.stream()
                        .filter(r -> r.phase().equals(c) && r.engine().equals(e))
                        .findFirst()
                        .orElse(null);
                // no bar (not a bar at 0) where the engine did not run the phase or the theory predicts nothing
                measured.add(p == null ? null : p.filterUseful());
                theory.add(p == null || !Double.isFinite(p.expectedUseful()) ? null : p.expectedUseful());
            }
            chart.addSeries(e + " measured", new ArrayList<>(cats), measured);
            chart.addSeries(e + " theory", new ArrayList<>(cats), theory);
        }
        return chart;
    }

    static CategoryChart perPhase(
            List<PhaseResult> phases,
            List<EngineSpec> columns,
            String title,
            String yTitle,
            ToDoubleFunction<PhaseResult> f,
            java.util.function.Predicate<PhaseResult> keep) {
        Map<String, Map<String, PhaseResult>> byPhase = new LinkedHashMap<>();
        for (PhaseResult p : phases) {
            if (keep.test(p)) {
                byPhase.computeIfAbsent(p.phase(), k -> new LinkedHashMap<>()).put(p.label(), p);
            }
        }
        List<String> cats = new ArrayList<>(byPhase.keySet());
        CategoryChart chart = base(title, yTitle);
        for (EngineSpec c : columns) {
            List<Number> ys = new ArrayList<>();
            boolean any = false;
            for (String cat : cats) {
                PhaseResult p = byPhase.get(cat).get(c.label());
                double v = p == null ? Double.NaN : f.applyAsDouble(p);
                any |= Double.isFinite(v);
                // no bar where the column lacks the phase or the figure is undefined (a bar at 0 would read as
                // measured)
                ys.add(Double.isFinite(v) ? v : null);
            }
            if (any) {
                chart.addSeries(c.label(), cats, ys);
            }
        }
        return chart;
    }

    /**
     * The --value-size list mode's chart: per phase, bloomkv / RocksDB ops/s (median ratio) against the
     * value size (log axis), with the parity line at 1.
     */
    static void saveRatioVsValueSize(List<ValueSizeSweep.Point> points, Path file) throws IOException {
        XYChart chart = new XYChartBuilder()
                .width(W)
                .height(H + 80)
                .title("bloomkv / RocksDB ops/s against value size (filters on; above 1 = bloomkv faster)")
                .xAxisTitle("value size (bytes, log scale)")
                .yAxisTitle("ops/s ratio bloomkv / RocksDB")
                .build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setYAxisDecimalPattern("0.00");
        Map<String, List<ValueSizeSweep.Point>> byPhase = new LinkedHashMap<>();
        double minX = Double.MAX_VALUE;
        double maxX = 0;
        for (ValueSizeSweep.Point p : points) {
            byPhase.computeIfAbsent(p.phase(), k -> new ArrayList<>()).add(p);
            minX = Math.min(minX, p.valueSize());
            maxX = Math.max(maxX, p.valueSize());
        }
        XYSeries parity = chart.addSeries("parity (1.0)", List.of(minX, Math.max(maxX, minX + 1)), List.of(1.0, 1.0));
        parity.setMarker(SeriesMarkers.NONE);
        parity.setLineStyle(SeriesLines.DASH_DASH);
        parity.setLineColor(Color.GRAY);
        int i = 0;
        for (Map.Entry<String, List<ValueSizeSweep.Point>> e : byPhase.entrySet()) {
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (ValueSizeSweep.Point p : e.getValue()) {
                if (!Double.isFinite(p.median())) {
                    continue; // no point for a ratio a chart cannot draw (see ratios)
                }
                x.add((double) p.valueSize());
                y.add(p.median());
            }
            XYSeries s = chart.addSeries(e.getKey(), x, y);
            s.setMarker(MARKERS[(i + i / PALETTE.length) % MARKERS.length]); // colour and marker pairs stay distinct
            s.setMarkerColor(PALETTE[i % PALETTE.length]);
            s.setLineColor(PALETTE[i % PALETTE.length]);
            i++;
        }
        save(chart, file);
    }

    private static CategoryChart base(String title, String yTitle) {
        CategoryChart chart = new CategoryChartBuilder()
                .width(W)
                .height(H)
                .title(title)
                .yAxisTitle(yTitle)
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setXAxisLabelRotation(20);
        chart.getStyler().setAvailableSpaceFill(0.8);
        chart.getStyler().setYAxisDecimalPattern("#,##0.###");
        chart.getStyler().setSeriesColors(PALETTE);
        chart.getStyler().setOverlapped(false);
        return chart;
    }

    private static void save(Chart<?, ?> chart, Path file) throws IOException {
        BitmapEncoder.saveBitmap(chart, stripPng(file), BitmapEncoder.BitmapFormat.PNG);
    }

    /** Renders charts one above the other into one PNG. */
    private static void stack(Path file, Chart<?, ?>... charts) throws IOException {
        List<BufferedImage> images = new ArrayList<>();
        int width = 0;
        int height = 0;
        for (Chart<?, ?> c : charts) {
            BufferedImage img = BitmapEncoder.getBufferedImage(c);
            images.add(img);
            width = Math.max(width, img.getWidth());
            height += img.getHeight();
        }
        BufferedImage out = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = out.createGraphics();
        try {
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            int y = 0;
            for (BufferedImage img : images) {
                g.drawImage(img, 0, y, null);
                y += img.getHeight();
            }
        } finally {
            g.dispose();
        }
        if (!ImageIO.write(out, "png", file.toFile())) {
            throw new IOException("no PNG writer available for " + file);
        }
    }

    private static String stripPng(Path file) {
        String s = file.toString();
        return s.endsWith(".png") ? s.substring(0, s.length() - 4) : s;
    }
}
