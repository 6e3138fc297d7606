package io.bloomkv.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.workload.PhaseResult;
import io.bloomkv.bench.workload.RecordSource;
import io.bloomkv.bench.workload.Workload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Writes the report folder: results.json (Jackson), report.md and the PNG charts. */
public final class ReportWriter {
    public static final String JSON = "results.json";
    public static final String MARKDOWN = "report.md";

    private ReportWriter() {}

    /** Writes everything into {@code dir} (created); returns the files written. */
    public static List<Path> write(BenchReport report, List<EngineSpec> columns, Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Path> files = new ArrayList<>();
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        mapper.writeValue(dir.resolve(JSON).toFile(), toJson(report));
        files.add(dir.resolve(JSON));
        List<String> charts = Charts.writeAll(report, columns, dir);
        for (String c : charts) {
            files.add(dir.resolve(c));
        }
        Files.writeString(dir.resolve(MARKDOWN), markdown(report, columns, charts));
        files.add(dir.resolve(MARKDOWN));
        return files;
    }

    /** The JSON tree: plain maps so that derived figures are included and NaN becomes null. */
    public static Map<String, Object> toJson(BenchReport r) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("started", r.started().toString());
        root.put("seconds", num(r.seconds()));
        root.put("machine", r.machine());
        BenchConfig c = r.config();
        Map<String, Object> cfg = new LinkedHashMap<>();
        cfg.put("num", c.num());
        cfg.put("reads", c.reads());
        cfg.put("seeks", c.seeks());
        cfg.put("keySize", c.keySize());
        cfg.put("valueSize", c.valueSize());
        cfg.put("bitsPerKey", c.bitsPerKey());
        cfg.put("blockSize", c.blockSize());
        cfg.put("cacheSize", c.cacheSize());
        cfg.put("writeBufferSize", c.writeBufferSize());
        cfg.put("compression", c.compression());
        cfg.put("valueCompressibility", c.valueCompressibility());
        cfg.put("directReads", c.direct());
        cfg.put("mmapReads", c.mmapReads().flagName());
        Map<String, String> readModes = new LinkedHashMap<>();
        for (String e : c.engines()) {
            readModes.put(e, c.readMode(e));
        }
        cfg.put("readModes", readModes);
        cfg.put("sync", c.sync());
        cfg.put("threads", c.threads());
        cfg.put("distribution", c.distribution().flagName());
        cfg.put("engines", c.engines());
        cfg.put(
                "filterModes",
                c.filterModes().stream().map(f -> f ? "on" : "off").toList());
        cfg.put("filterKind", c.filterKind());
        cfg.put("workloads", c.workloads().stream().map(Object::toString).toList());
        cfg.put("seed", c.seed());
        cfg.put("cold", c.cold());
        cfg.put("compact", c.compact());
        // the warm-ups the measured phases had: none in --reopen's fresh processes
        cfg.put("warmup", c.reopen() ? 0 : c.warmup());
        cfg.put("phaseWarmup", c.reopen() ? 0 : c.phaseWarmup());
        cfg.put("repeat", c.repeat());
        cfg.put("ownDefaults", c.ownDefaults());
        cfg.put("pairedReads", c.pairedReads());
        cfg.put("noSettle", c.noSettle());
        cfg.put("reopen", c.reopen());
        cfg.put("rateLimit", c.rateLimit());
        cfg.put("filterBudget", c.filterBudget());
        root.put("config", cfg);
        root.put("engines", r.engines());
        root.put("coldMethod", r.coldMethod());
        List<Map<String, Object>> phases = new ArrayList<>();
        for (PhaseResult p : r.phases()) {
            phases.add(phase(p));
        }
        root.put("phases", phases);
        List<Map<String, Object>> summary = new ArrayList<>();
        for (Summary s : Summary.of(r.phases())) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("phase", s.median().phase());
            m.put("label", s.median().label());
            m.put("runs", s.runs());
            m.put("medianRun", s.median().run());
            m.put("medianOpsPerSec", num(s.medianOpsPerSec()));
            m.put("minOpsPerSec", num(s.minOpsPerSec()));
            m.put("maxOpsPerSec", num(s.maxOpsPerSec()));
            summary.add(m);
        }
        root.put("summary", summary);
        List<Map<String, Object>> goals = new ArrayList<>();
        for (Goal g : r.goals()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", g.name());
            m.put("target", num(g.target()));
            m.put("measured", num(g.measured()));
            m.put("met", g.met());
            m.put("detail", g.detail());
            goals.add(m);
        }
        root.put("goals", goals);
        List<Map<String, Object>> sweep = new ArrayList<>();
        for (FprPoint p : r.fprSweep()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("kind", p.kind());
            m.put("bitsPerKey", num(p.bitsPerKey()));
            m.put("k", p.k());
            m.put("keys", p.keys());
            m.put("probes", p.probes());
            m.put("measuredFpr", num(p.measuredFpr()));
            m.put("theoreticalFpr", num(p.theoreticalFpr()));
            sweep.add(m);
        }
        root.put("fprSweep", sweep);
        return root;
    }

    static Map<String, Object> phase(PhaseResult p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", p.workload());
        m.put("phase", p.phase());
        m.put("engine", p.engine());
        m.put("filters", p.filters());
        m.put("label", p.label());
        m.put("kind", p.kind());
        m.put("ops", p.ops());
        m.put("seconds", num(p.seconds()));
        m.put("opsPerSec", num(p.opsPerSec()));
        m.put("p50Micros", num(p.p50Micros()));
        m.put("p99Micros", num(p.p99Micros()));
        m.put("p999Micros", num(p.p999Micros()));
        m.put("maxMicros", num(p.maxMicros()));
        m.put("found", p.found());
        m.put("notFound", p.notFound());
        m.put("wrongAnswers", p.wrongAnswers());
        m.put("backgroundWrites", p.backgroundWrites());
        m.put("filterChecks", p.counters().filterChecks());
        m.put("filterUseful", p.counters().filterUseful());
        m.put("filterPositive", p.counters().filterPositive());
        m.put("filterTruePositive", p.counters().filterTruePositive());
        m.put("absentChecks", p.counters().absentChecks());
        m.put("measuredFpr", num(p.measuredFpr()));
        m.put("theoreticalFpr", num(p.theoreticalFpr()));
        m.put("predictedChecks", num(p.predictedChecks()));
        m.put("predictedUseful", num(p.predictedUseful()));
        m.put("expectedUsefulFromChecks", num(p.expectedUsefulFromChecks()));
        m.put("expectedUseful", num(p.expectedUseful()));
        m.put("usefulVsTheory", num(p.usefulVsTheory()));
        m.put("fprVsTheory", num(p.fprVsTheory()));
        m.put("blockReads", p.counters().blockReads());
        m.put("blockReadBytes", p.counters().blockReadBytes());
        m.put("blockReadsPerOp", num(p.blockReadsPerOp()));
        m.put("bytesReadPerOp", num(p.bytesReadPerOp()));
        m.put("filterMemoryBytes", p.filterMemoryBytes());
        m.put("filterBitsPerKey", num(p.filterBitsPerKey()));
        m.put("tableBytesWritten", p.counters().tableBytesWritten());
        m.put("walBytesWritten", p.counters().walBytesWritten());
        m.put("userBytesWritten", p.userBytesWritten());
        m.put("writeAmplification", num(p.writeAmplification()));
        m.put("sstBytes", p.sstBytes());
        m.put("tables", p.tables().tableCount());
        m.put("tableEntries", p.tables().entries());
        m.put("cold", p.cold());
        m.put("run", p.run());
        m.put("heapAfterGcBytes", p.heapAfterGcBytes());
        return m;
    }

    private static Object num(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : v;
    }

    static String markdown(BenchReport r, List<EngineSpec> columns, List<String> charts) {
        BenchConfig c = r.config();
        StringBuilder sb = new StringBuilder();
        sb.append("# bloomkv bench: bloomkv vs RocksDB\n\n");
        sb.append("Run ")
                .append(r.started())
                .append(String.format(Locale.ROOT, ", %.0f s", r.seconds()))
                .append(", on ")
                .append(r.machine().summary())
                .append(".\n\n");
        sb.append(String.format(
                Locale.ROOT,
                "%,d keys of %d bytes, %d-byte values, %s bits per key, %d-byte blocks, "
                        + "%,d-byte block cache, %,d-byte write buffer, compression %s (values compress to ~%s), %s, WAL on, sync %s, "
                        + "%d thread(s) per phase, %s key distribution, seed %d.%n",
                c.num(),
                c.keySize(),
                c.valueSize(),
                trim(c.bitsPerKey()),
                c.blockSize(),
                c.cacheSize(),
                c.writeBufferSize(),
                c.compression(),
                trim(c.valueCompressibility()),
                c.ownDefaults()
                        ? "reads through the page cache, each engine its own way (bloomkv mapped, RocksDB pread)"
                        : c.direct()
                                ? "direct reads (O_DIRECT) on both engines"
                                : "reads through the page cache (" + c.readModes() + ")",
                c.sync(),
                c.threads(),
                c.distribution(),
                c.seed()));
        sb.append(String.format(
                Locale.ROOT,
                "Reads per read phase: %,d; seeks per seek phase: %,d. Engines ran alternately (A B A B) in fresh "
                        + "directories; %s%s %s%s%s%s%n%n",
                c.reads(),
                c.seeks(),
                settling(c),
                c.compact()
                        ? "; then both engines compacted every table down the levels (--compact), so both read the same LSM shape."
                        : "; each engine keeps the LSM shape its own flush and compaction policy gave (see the tables row).",
                warmUps(c),
                records(c),
                c.rateLimit() > 0
                        ? String.format(
                                Locale.ROOT,
                                " Both engines' flushes and compactions were limited to %,d bytes per second (--rate-limit).",
                                c.rateLimit())
                        : "",
                c.pairedReads()
                        ? String.format(
                                Locale.ROOT,
                                " Paired reads (--paired-reads): both engines' databases stayed open through a "
                                        + "session, and each readrandom and readmissing phase ran on them in %d interleaved slices (A B, B A, ...), "
                                        + "so both engines' gets sampled the same minutes of the machine; an engine's ops/s is its gets over the sum "
                                        + "of its slices' times.",
                                BenchConfig.PAIRED_SLICES)
                        : ""));
        if (!c.filterBudget().isEmpty()) {
            sb.append("Filter memory budget (--filter-budget): ")
                    .append(c.filterBudget())
                    .append(
                            c.ownDefaults()
                                    ? " for bloomkv only: on its own defaults (--defaults) RocksDB runs without one.\n\n"
                                    : " (each engine's set-up below says how it spends it).\n\n");
        }
        sb.append("Engines:\n\n");
        for (Map.Entry<String, String> e : r.engines().entrySet()) {
            sb.append("- **")
                    .append(e.getKey())
                    .append("**: ")
                    .append(e.getValue())
                    .append('\n');
        }
        sb.append('\n');
        sb.append("Cold reads: ");
        if (!c.cold()) {
            sb.append("off (the tables may sit in the OS page cache; a block read is then a read from memory).\n\n");
        } else {
            sb.append(r.coldMethod()).append(".\n\n").append(COLD_LIMITS).append("\n\n");
        }
        if (c.repeat() > 1) {
            sb.append(String.format(
                    Locale.ROOT,
                    "The whole sequence ran %d times. In the tables below ops/s is the median over the runs (for an "
                            + "even number of runs the mean of the two middle ones) and each table's last row gives its range "
                            + "(min-max); every other figure is that of the run with the median ops/s (for an even number of "
                            + "runs the lower of the two middle ones), and the ratio columns divide those figures. The goals "
                            + "and the ratio chart quote the median of the per-run ratios bloomkv / RocksDB.%n%n",
                    c.repeat()));
        }
        sb.append("## ")
                .append(Goal.title(c))
                .append(", ratios bloomkv / RocksDB from this run, same bits per key\n\n");
        sb.append("| goal | measured | met | figures |\n| --- | ---: | :---: | --- |\n");
        for (Goal g : r.goals()) {
            sb.append("| ")
                    .append(g.name())
                    .append(" | ")
                    .append(Double.isNaN(g.measured()) ? "-" : String.format(Locale.ROOT, "%.3f", g.measured()))
                    .append(" | ")
                    .append(Double.isNaN(g.measured()) ? "n/a" : g.met() ? "yes" : "**no**")
                    .append(" | ")
                    .append(g.detail())
                    .append(" |\n");
        }
        sb.append(
                "\nFor the theory checks the measured figure is useful / predicted useful. The prediction uses only the "
                        + "tables' key ranges and their filters' formulas: every absent key asks the filter of each table whose "
                        + "[smallest, largest] range covers it, and each such check avoids the read with probability 1 - that filter's "
                        + "expected FPR. (The weaker figure, measured checks of tables not holding the key x (1 - theoretical FPR), "
                        + "is in results.json as expectedUsefulFromChecks.)\n\n");
        sb.append("## Results per workload\n\n");
        sb.append(
                "Counts follow RocksDB's tickers: useful = BLOOM_FILTER_USEFUL (disk lookups avoided), positives = "
                        + "BLOOM_FILTER_FULL_POSITIVE, true positives = BLOOM_FILTER_FULL_TRUE_POSITIVE, checks = useful + positives; "
                        + "measured FPR = (positives - true positives) / (checks - true positives). Block reads are blocks read from the "
                        + "file (block-cache misses). Write amplification = SST bytes written by flushes and compactions / user bytes written.\n\n");
        for (MetricTable t : MetricTable.build(r.phases(), columns)) {
            sb.append("### ")
                    .append(t.phase())
                    .append("\n\n")
                    .append(t.toMarkdown())
                    .append('\n');
        }
        if (!charts.isEmpty()) {
            sb.append("## Charts\n\n");
            for (String ch : charts) {
                sb.append("![").append(ch).append("](").append(ch).append(")\n\n");
            }
        }
        if (!r.fprSweep().isEmpty()) {
            sb.append("## False-positive rate sweep (bloom module's filters alone, FprSweep, random 8-byte keys)\n\n");
            sb.append("| kind | bits/key | k | keys | probes | measured FPR | theoretical FPR | measured/theory |\n");
            sb.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
            for (FprPoint p : r.fprSweep()) {
                sb.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %d | %,d | %,d | %.6f | %.6f | %s |%n",
                        p.kind(),
                        trim(p.bitsPerKey()),
                        p.k(),
                        p.keys(),
                        p.probes(),
                        p.measuredFpr(),
                        p.theoreticalFpr(),
                        p.theoreticalFpr() > 0
                                ? String.format(Locale.ROOT, "%.3f", p.measuredFpr() / p.theoreticalFpr())
                                : "-"));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /** What the report says about when the measured phases started: after the load settled, or not (--no-settle). */
    static String settling(BenchConfig c) {
        if (!c.noSettle()) {
            return "each preloading workload loads the keys in random order, flushes and waits for compactions before it "
                    + "measures, so reads go to SSTables";
        }
        return "each preloading workload loads the keys in random order; with --no-settle the read-only workloads first ran "
                + "right after the load (or the fillrandom), with no flush, no wait for compactions and no phase warm-up "
                + "(the phases named <phase>-unsettled: unsettled figures), then the engine flushed and waited for its "
                + "compactions and they ran again under their own names (settled figures), and the records family ran "
                + "without settling after its load";
    }

    /** What the report says about the warm-ups the measured phases had: none in --reopen's fresh processes. */
    static String warmUps(BenchConfig c) {
        if (c.reopen()) {
            return "Every workload ran in a fresh JVM (--reopen) on the database the previous phase left (the untimed "
                    + "preload ran in the parent process): empty block caches, a cold JIT and no warm-up of any kind, so "
                    + "every figure is unsettled (a fresh process on an existing database).";
        }
        return String.format(
                Locale.ROOT,
                "Each engine first ran %,d untimed operations (JIT warm-up), and every read phase is preceded by %,d "
                        + "untimed operations of its own kind%s.",
                c.warmup(),
                c.phaseWarmup(),
                c.workloads().stream().anyMatch(Workload::records) ? " (the records family's phases by none)" : "");
    }

    /** The records family's values and key choice, which --value-size and --distribution do not set. */
    static String records(BenchConfig c) {
        if (c.workloads().stream().noneMatch(Workload::records)) {
            return "";
        }
        return String.format(
                Locale.ROOT,
                " The records family writes records of %,d bytes (%d fields of %d bytes with their names, whatever "
                        + "--value-size says) and chooses keys by YCSB's scrambled Zipfian (recordslatest: skewed-latest), "
                        + "whatever --distribution says.",
                RecordSource.RECORD_BYTES,
                RecordSource.FIELDS,
                RecordSource.FIELD_BYTES);
    }

    static final String COLD_LIMITS =
            "Where cold mode falls short: before each read phase both engines are closed and reopened "
                    + "(their block caches start empty) and each table file gets posix_fadvise(POSIX_FADV_DONTNEED); that drops only "
                    + "clean, unmapped pages, so it is checked with fincore. It is not O_DIRECT: a block read once is cached again "
                    + "for the rest of the phase, the kernel's readahead may fetch neighbouring pages, and on a virtual machine the "
                    + "host may still cache the disk image. Filters and index blocks are loaded into memory when a table is opened, "
                    + "by both engines, as in normal operation.";

    static String trim(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }
}
