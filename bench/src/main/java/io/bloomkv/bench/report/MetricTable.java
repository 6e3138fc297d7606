package io.bloomkv.bench.report;

import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.workload.PhaseResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The per-phase comparison table: one row per metric, one column per engine column, then the
 * ratio bloomkv / rocksdb for each filter mode (headed "bloomkv/rocksdb" and "bloomkv/rocksdb (nofilter)").
 * Rendered as aligned text (console) or Markdown.
 */
public final class MetricTable {
    private final String phase;
    private final List<String> header;
    private final List<List<String>> rows;

    private MetricTable(String phase, List<String> header, List<List<String>> rows) {
        this.phase = phase;
        this.header = header;
        this.rows = rows;
    }

    private record Metric(String name, ToDoubleFunction<PhaseResult> f, String fmt) {}

    private static final List<Metric> METRICS = List.of(
            new Metric("ops/s", PhaseResult::opsPerSec, "%,.0f"),
            new Metric("p50 us", PhaseResult::p50Micros, "%.2f"),
            new Metric("p99 us", PhaseResult::p99Micros, "%.2f"),
            new Metric("p99.9 us", PhaseResult::p999Micros, "%.2f"),
            new Metric("filter checks", p -> p.filterChecks(), "%,.0f"),
            new Metric("useful (lookups avoided)", p -> p.filterUseful(), "%,.0f"),
            new Metric("positives", p -> p.counters().filterPositive(), "%,.0f"),
            new Metric("true positives", p -> p.counters().filterTruePositive(), "%,.0f"),
            new Metric("FPR measured", PhaseResult::measuredFpr, "%.5f"),
            new Metric("FPR theory", PhaseResult::theoreticalFpr, "%.5f"),
            new Metric("checks predicted (key ranges)", PhaseResult::predictedChecks, "%,.0f"),
            new Metric("useful predicted", PhaseResult::expectedUseful, "%,.0f"),
            new Metric("useful / predicted", PhaseResult::usefulVsTheory, "%.4f"),
            new Metric("block reads / op", PhaseResult::blockReadsPerOp, "%.3f"),
            new Metric("bytes read / op", PhaseResult::bytesReadPerOp, "%,.0f"),
            new Metric("filter memory KiB", p -> p.filterMemoryBytes() / 1024.0, "%,.1f"),
            new Metric("filter bits/key", PhaseResult::filterBitsPerKey, "%.2f"),
            new Metric("write amplification", PhaseResult::writeAmplification, "%.3f"),
            new Metric("SST MiB on disk", p -> p.sstBytes() / 1048576.0, "%,.1f"),
            new Metric("tables", p -> p.tables().tableCount(), "%.0f"),
            new Metric("heap after GC MiB", p -> p.heapAfterGcBytes() / 1048576.0, "%,.1f"),
            new Metric("wrong answers", p -> p.wrongAnswers(), "%.0f"));

    /**
     * One table per phase, in the order the phases first appear. With several runs (--repeat) the ops/s row is the
     * median ops/s (for an even count the mean of the two middle runs), every other cell the figure of the run that
     * stands for the phase ({@link Summary#median}), and a last row gives the ops/s range.
     */
    public static List<MetricTable> build(List<PhaseResult> results, List<EngineSpec> columns) {
        Map<String, Map<String, PhaseResult>> byPhase = new LinkedHashMap<>();
        Map<String, Summary> spread = new LinkedHashMap<>();
        int maxRuns = 1;
        for (Summary s : Summary.of(results)) {
            PhaseResult r = s.median().withOpsPerSec(s.medianOpsPerSec());
            byPhase.computeIfAbsent(r.phase(), k -> new LinkedHashMap<>()).put(r.label(), r);
            spread.put(r.phase() + "\u0000" + r.label(), s);
            maxRuns = Math.max(maxRuns, s.runs());
        }
        List<MetricTable> out = new ArrayList<>();
        for (Map.Entry<String, Map<String, PhaseResult>> e : byPhase.entrySet()) {
            List<String> header = new ArrayList<>();
            header.add(e.getKey());
            for (EngineSpec c : columns) {
                header.add(c.label());
            }
            List<Boolean> ratioModes = new ArrayList<>();
            for (EngineSpec c : columns) {
                if (c.engine().equals("bloomkv")
                        && !ratioModes.contains(c.filters())
                        && columns.contains(new EngineSpec("rocksdb", c.filters()))) {
                    ratioModes.add(c.filters());
                    header.add(c.filters() ? "bloomkv/rocksdb" : "bloomkv/rocksdb (nofilter)");
                }
            }
            List<List<String>> rows = new ArrayList<>();
            for (Metric m : METRICS) {
                List<String> row = new ArrayList<>();
                row.add(m.name);
                for (EngineSpec c : columns) {
                    PhaseResult r = e.getValue().get(c.label());
                    row.add(r == null ? "-" : fmt(m.fmt, m.f.applyAsDouble(r)));
                }
                for (boolean f : ratioModes) {
                    PhaseResult b = e.getValue().get(new EngineSpec("bloomkv", f).label());
                    PhaseResult r = e.getValue().get(new EngineSpec("rocksdb", f).label());
                    row.add(b == null || r == null ? "-" : ratio(m.f.applyAsDouble(b), m.f.applyAsDouble(r)));
                }
                rows.add(row);
            }
            if (maxRuns > 1) {
                List<String> row = new ArrayList<>();
                row.add("ops/s min-max (" + maxRuns + " runs)");
                for (EngineSpec c : columns) {
                    Summary s = spread.get(e.getKey() + "\u0000" + c.label());
                    row.add(
                            s == null
                                    ? "-"
                                    : String.format(Locale.ROOT, "%,.0f-%,.0f", s.minOpsPerSec(), s.maxOpsPerSec()));
                }
                for (int i = 0; i < ratioModes.size(); i++) {
                    row.add("-");
                }
                rows.add(row);
            }
            out.add(new MetricTable(e.getKey(), header, rows));
        }
        return out;
    }

    public String phase() {
        return phase;
    }

    static String fmt(String fmt, double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "-" : String.format(Locale.ROOT, fmt, v);
    }

    static String ratio(double a, double b) {
        if (Double.isNaN(a) || Double.isNaN(b) || b == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.2fx", a / b);
    }

    /** Aligned plain text for the console. */
    public String toText() {
        int[] w = new int[header.size()];
        for (int i = 0; i < header.size(); i++) {
            w[i] = header.get(i).length();
            for (List<String> r : rows) {
                w[i] = Math.max(w[i], r.get(i).length());
            }
        }
        StringBuilder sb = new StringBuilder();
        appendLine(sb, header, w);
        int total = 0;
        for (int x : w) {
            total += x + 2;
        }
        sb.append("-".repeat(total)).append('\n');
        for (List<String> r : rows) {
            appendLine(sb, r, w);
        }
        return sb.toString();
    }

    private static void appendLine(StringBuilder sb, List<String> cells, int[] w) {
        for (int i = 0; i < cells.size(); i++) {
            String c = cells.get(i);
            if (i == 0) {
                sb.append(c).append(" ".repeat(w[i] - c.length() + 2));
            } else {
                sb.append(" ".repeat(w[i] - c.length())).append(c).append("  ");
            }
        }
        sb.setLength(sb.length() - 2);
        sb.append('\n');
    }

    /** A GitHub Markdown table. */
    public String toMarkdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("| ").append(String.join(" | ", header)).append(" |\n");
        sb.append("| --- ");
        for (int i = 1; i < header.size(); i++) {
            sb.append("| ---: ");
        }
        sb.append("|\n");
        for (List<String> r : rows) {
            sb.append("| ").append(String.join(" | ", r)).append(" |\n");
        }
        return sb.toString();
    }
}
