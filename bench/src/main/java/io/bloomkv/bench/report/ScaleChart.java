package io.bloomkv.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * How cost grows with the work: ops/s of fillrandom, readrandom and readmissing, and fillrandom's
 * write amplification, against the number of keys, for both engines, matched options and each on its
 * own defaults. Reads several bench runs' results.json (one per key count and mode, any --repeat:
 * medians are taken) and writes one PNG of four panels:
 * {@code java -jar bloomkv-bench.jar scale-chart OUT.png r1m/results.json r10m/results.json ...}.
 * A run is "own defaults" when it was made with {@code --defaults}, else "matched"; a run made with {@code --direct},
 * {@code --reopen} or {@code --no-settle} is a series of its own (e.g. "matched, O_DIRECT").
 */
public final class ScaleChart {
    static final List<String> PHASES = List.of("fillrandom", "readrandom", "readmissing");
    private static final int W = 560;
    private static final int H = 380;

    /** One figure: (mode, engine, phase) at a key count. */
    record Point(String mode, String engine, String phase, long num, double opsPerSec, double writeAmp) {}

    private ScaleChart() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: scale-chart OUT.png results.json [results.json ...]");
            System.exit(2);
        }
        List<Point> points = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            points.addAll(read(Path.of(args[i])));
        }
        Path out = Path.of(args[0]);
        write(points, out);
        System.out.println("wrote " + out.toAbsolutePath() + " from " + (args.length - 1) + " result files");
        for (String line : table(points)) {
            System.out.println(line);
        }
    }

    /** The filters-on phases of one results.json. */
    static List<Point> read(Path json) throws IOException {
        JsonNode root = new ObjectMapper().readTree(json.toFile());
        long num = root.path("config").path("num").asLong();
        boolean ownDefaults = root.path("config").path("ownDefaults").asBoolean(false);
        // Runs made before the flag was recorded: the engine descriptions say "defaults".
        for (JsonNode d : root.path("engines")) {
            ownDefaults |= d.asText().contains("defaults");
        }
        // runs measured another way are series of their own, not points in the medians of the matched or own-defaults
        // runs (fields absent from older results.json files read as false)
        JsonNode c = root.path("config");
        String mode = (ownDefaults ? "own defaults" : "matched")
                + (c.path("directReads").asBoolean(false) ? ", O_DIRECT" : "")
                + (c.path("reopen").asBoolean(false) ? ", fresh process per phase" : "")
                + (c.path("noSettle").asBoolean(false) ? ", load not settled" : "");
        List<Point> out = new ArrayList<>();
        for (JsonNode p : root.path("phases")) {
            if (!p.path("filters").asBoolean()
                    || !PHASES.contains(p.path("phase").asText())) {
                continue;
            }
            out.add(new Point(
                    mode,
                    p.path("engine").asText(),
                    p.path("phase").asText(),
                    num,
                    p.path("opsPerSec").asDouble(Double.NaN),
                    p.path("writeAmplification").asDouble(Double.NaN)));
        }
        return out;
    }

    /** Median of (mode, engine, phase, num) over the runs, as series name -> num -> value. */
    static Map<String, TreeMap<Long, Double>> medians(List<Point> points, String phase, boolean writeAmp) {
        Map<String, TreeMap<Long, List<Double>>> raw = new TreeMap<>();
        for (Point p : points) {
            if (!p.phase().equals(phase)) {
                continue;
            }
            double v = writeAmp ? p.writeAmp() : p.opsPerSec();
            if (Double.isNaN(v)) {
                continue;
            }
            raw.computeIfAbsent(p.engine() + ", " + p.mode(), k -> new TreeMap<>())
                    .computeIfAbsent(p.num(), k -> new ArrayList<>())
                    .add(v);
        }
        Map<String, TreeMap<Long, Double>> out = new TreeMap<>();
        raw.forEach((series, byNum) -> {
            TreeMap<Long, Double> m = new TreeMap<>();
            byNum.forEach((num, vs) -> m.put(num, median(vs)));
            out.put(series, m);
        });
        return out;
    }

    static double median(List<Double> vs) {
        List<Double> s = new ArrayList<>(vs);
        s.sort(null);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    static void write(List<Point> points, Path out) throws IOException {
        List<XYChart> charts = new ArrayList<>();
        for (String phase : PHASES) {
            charts.add(chart(phase + " ops/s (median)", "ops/s", medians(points, phase, false)));
        }
        charts.add(chart(
                "fillrandom write amplification",
                "SST bytes written / user bytes",
                medians(points, "fillrandom", true)));
        Path parent = out.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        String name = out.toString();
        BitmapEncoder.saveBitmap(
                new ArrayList<>(charts),
                2,
                2,
                name.endsWith(".png") ? name.substring(0, name.length() - 4) : name,
                BitmapEncoder.BitmapFormat.PNG);
    }

    private static XYChart chart(String title, String yTitle, Map<String, TreeMap<Long, Double>> series) {
        XYChart c = new XYChartBuilder()
                .width(W)
                .height(H)
                .title(title)
                .xAxisTitle("keys (log scale)")
                .yAxisTitle(yTitle)
                .build();
        c.getStyler().setXAxisLogarithmic(true);
        c.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        c.getStyler().setChartBackgroundColor(Color.WHITE);
        c.getStyler().setYAxisDecimalPattern("#,##0.#");
        c.getStyler().setXAxisDecimalPattern("0.#E0");
        series.forEach((name, byNum) -> {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            byNum.forEach((num, v) -> {
                xs.add((double) num);
                ys.add(v);
            });
            XYSeries s = c.addSeries(name, xs, ys);
            s.setMarker(SeriesMarkers.CIRCLE);
            if (name.contains("defaults")) {
                s.setLineStyle(new java.awt.BasicStroke(
                        2f,
                        java.awt.BasicStroke.CAP_BUTT,
                        java.awt.BasicStroke.JOIN_MITER,
                        10f,
                        new float[] {6f, 4f},
                        0f));
            }
            s.setLineColor(name.startsWith("bloomkv") ? new Color(0x1f77b4) : new Color(0xd62728));
            s.setMarkerColor(name.startsWith("bloomkv") ? new Color(0x1f77b4) : new Color(0xd62728));
        });
        return c;
    }

    /** The medians as text lines: mode, engine, phase, keys, ops/s, write amplification. */
    static List<String> table(List<Point> points) {
        List<String> lines = new ArrayList<>();
        for (String phase : PHASES) {
            Map<String, TreeMap<Long, Double>> ops = medians(points, phase, false);
            Map<String, TreeMap<Long, Double>> wa = medians(points, phase, true);
            ops.forEach((series, byNum) -> byNum.forEach((num, v) -> {
                Double w = wa.getOrDefault(series, new TreeMap<>()).get(num);
                lines.add(String.format(
                        Locale.ROOT,
                        "%-12s %-24s %,12d keys %,12.0f ops/s%s",
                        phase,
                        series,
                        num,
                        v,
                        w == null ? "" : String.format(Locale.ROOT, "  write amp %.2f", w)));
            }));
        }
        return lines;
    }
}
