package io.bloomkv.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.bloomkv.bench.workload.PhaseResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The list mode of {@code --value-size} (e.g. {@code 100,1024,4096}): one full run per value size,
 * each with its own report folder, and this summary over them: per phase, the ops/s ratio
 * bloomkv / RocksDB (filters on; median of the per-run ratios over --repeat, with min and max)
 * against the value size, as value-size.md, value-size.json and a chart.
 */
public final class ValueSizeSweep {
    public static final String MARKDOWN = "value-size.md";
    public static final String JSON = "value-size.json";

    /** One phase at one value size: median, min and max of the per-run ratios, and the runs measured. */
    public record Point(int valueSize, String phase, double median, double min, double max, int runs) {}

    private ValueSizeSweep() {}

    /** The report folder of one value size inside the sweep's folder. */
    public static Path subDir(Path sweepDir, int valueSize) {
        return sweepDir.resolve("value-size-" + valueSize);
    }

    /** Ratio points for every phase measured on both engines with filters on, in value-size then phase order. */
    public static List<Point> points(Map<Integer, BenchReport> bySize) {
        List<Point> out = new ArrayList<>();
        for (Map.Entry<Integer, BenchReport> e : bySize.entrySet()) {
            Set<String> phases = new LinkedHashSet<>();
            for (PhaseResult p : e.getValue().phases()) {
                phases.add(p.phase());
            }
            for (String phase : phases) {
                List<Double> ratios = Goal.runRatios(e.getValue().phases(), phase, true);
                if (!ratios.isEmpty()) {
                    out.add(new Point(
                            e.getKey(),
                            phase,
                            Summary.median(ratios),
                            ratios.stream()
                                    .mapToDouble(Double::doubleValue)
                                    .min()
                                    .orElseThrow(),
                            ratios.stream()
                                    .mapToDouble(Double::doubleValue)
                                    .max()
                                    .orElseThrow(),
                            ratios.size()));
                }
            }
        }
        return out;
    }

    /** Writes value-size.md, value-size.json and the chart into {@code dir}; returns the files written. */
    public static List<Path> write(Map<Integer, BenchReport> bySize, Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Point> points = points(bySize);
        List<Path> files = new ArrayList<>();
        List<Map<String, Object>> json = new ArrayList<>();
        for (Point p : points) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("valueSize", p.valueSize());
            m.put("phase", p.phase());
            m.put("ratioMedian", p.median());
            m.put("ratioMin", p.min());
            m.put("ratioMax", p.max());
            m.put("runs", p.runs());
            m.put("report", dir.relativize(subDir(dir, p.valueSize())).toString());
            json.add(m);
        }
        new ObjectMapper()
                .enable(SerializationFeature.INDENT_OUTPUT)
                .writeValue(dir.resolve(JSON).toFile(), json);
        files.add(dir.resolve(JSON));
        boolean chart = !points.isEmpty();
        if (chart) {
            Charts.saveRatioVsValueSize(points, dir.resolve(Charts.RATIO_VS_VALUE_SIZE));
            files.add(dir.resolve(Charts.RATIO_VS_VALUE_SIZE));
        }
        Files.writeString(dir.resolve(MARKDOWN), markdown(bySize, points, chart));
        files.add(dir.resolve(MARKDOWN));
        return files;
    }

    /** The table: one row per phase, one column per value size, cells "median (min-max)". */
    public static String table(Map<Integer, BenchReport> bySize, List<Point> points) {
        Set<String> phases = new LinkedHashSet<>();
        for (Point p : points) {
            phases.add(p.phase());
        }
        StringBuilder sb = new StringBuilder("| phase |");
        for (int v : bySize.keySet()) {
            sb.append(' ').append(v).append(" B |");
        }
        sb.append("\n| --- |");
        sb.append(" ---: |".repeat(bySize.size()));
        sb.append('\n');
        for (String phase : phases) {
            sb.append("| ").append(phase).append(" |");
            for (int v : bySize.keySet()) {
                Point p = points.stream()
                        .filter(x -> x.valueSize() == v && x.phase().equals(phase))
                        .findFirst()
                        .orElse(null);
                sb.append(' ')
                        .append(
                                p == null
                                        ? "-"
                                        : p.runs() == 1
                                                ? String.format(Locale.ROOT, "%.2fx", p.median())
                                                : String.format(
                                                        Locale.ROOT, "%.2fx (%.2f-%.2f)", p.median(), p.min(), p.max()))
                        .append(" |");
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    static String markdown(Map<Integer, BenchReport> bySize, List<Point> points, boolean chart) {
        StringBuilder sb = new StringBuilder("# bloomkv / RocksDB ops/s against value size\n\n");
        BenchReport any = bySize.values().iterator().next();
        sb.append("Machine: ").append(any.machine().summary()).append(". One full run per value size (its report: ");
        List<String> links = new ArrayList<>();
        for (int v : bySize.keySet()) {
            links.add("[" + v + " B](value-size-" + v + "/" + ReportWriter.MARKDOWN + ")");
        }
        sb.append(String.join(", ", links))
                .append("); otherwise the same flags. Cells: the median over runs of the "
                        + "per-run ratio bloomkv / RocksDB ops/s (filters on), with min-max when --repeat > 1.\n\n");
        sb.append(table(bySize, points)).append('\n');
        if (chart) {
            sb.append("![")
                    .append(Charts.RATIO_VS_VALUE_SIZE)
                    .append("](")
                    .append(Charts.RATIO_VS_VALUE_SIZE)
                    .append(")\n");
        }
        return sb.toString();
    }
}
