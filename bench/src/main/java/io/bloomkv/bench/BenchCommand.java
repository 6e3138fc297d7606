package io.bloomkv.bench;

import io.bloomkv.bench.cold.PageCacheEvictor;
import io.bloomkv.bench.engine.BenchEngine;
import io.bloomkv.bench.engine.EngineFactory;
import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.engine.FilterPolicySpec;
import io.bloomkv.bench.engine.MmapReads;
import io.bloomkv.bench.report.BenchReport;
import io.bloomkv.bench.report.FilterLibrarySweep;
import io.bloomkv.bench.report.FprPoint;
import io.bloomkv.bench.report.Goal;
import io.bloomkv.bench.report.Machine;
import io.bloomkv.bench.report.MetricTable;
import io.bloomkv.bench.report.ReportWriter;
import io.bloomkv.bench.report.ValueSizeSweep;
import io.bloomkv.bench.workload.BenchRunner;
import io.bloomkv.bench.workload.ConsoleProgress;
import io.bloomkv.bench.workload.KeyDistribution;
import io.bloomkv.bench.workload.PhaseResult;
import io.bloomkv.bench.workload.ProgressSink;
import io.bloomkv.bench.workload.Workload;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The db_bench-style runner as a picocli command: {@code java -jar bloomkv-bench.jar [flags]}, or
 * mounted as {@code bloomkv bench}. With no flags it runs the embedded default (BENCHMARKS.md).
 */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Run bloomkv and RocksDB side by side through db_bench-style workloads.",
            "Prints a table per workload and writes results.json, report.md and PNG charts",
            "to the report folder."
        },
        // BenchMain dispatches these by hand before this command parses anything: keep the two lists in step.
        footerHeading = "%nOther benches: java -jar bloomkv-bench.jar NAME [ARGS] (see docs/bench.md):%n",
        footer = {
            "  cpu-cost       CPU time and allocation per put and get; takes the flags above.",
            "  jmh            The JMH suite (JMH's arguments); forks get Chronicle's flags.",
            "  kafka-streams  The Kafka Streams store bench (kafka-streams --help).",
            "  range-fpr      Range filters' false-positive rate on empty ranges.",
            "  rangeseek      Seeks into empty and short ranges, range filters on and off.",
            "  scale-chart    Chart ops/s and write amplification vs key count over runs."
        })
public final class BenchCommand implements Callable<Integer> {
    static final List<String> DEFAULT_WORKLOADS = List.of(
            "fillseq",
            "fillrandom",
            "overwrite",
            "readrandom",
            "readmissing",
            "seekrandom",
            "readwhilewriting",
            "deleterandom");

    @Spec
    CommandSpec spec;

    @Option(names = "--num", defaultValue = "1000000", description = "Keys loaded (default ${DEFAULT-VALUE}).")
    long num;

    @Option(names = "--reads", defaultValue = "-1", description = "Gets per read phase (default: --num).")
    long reads;

    @Option(names = "--seeks", defaultValue = "-1", description = "Seeks per seekrandom phase (default: --num / 10).")
    long seeks;

    @Option(
            names = "--key-size",
            defaultValue = "16",
            description = "Key bytes, at least 8 (default ${DEFAULT-VALUE}).")
    int keySize;

    @Option(
            names = "--value-size",
            defaultValue = "100",
            split = ",",
            description =
                    "Value bytes (default ${DEFAULT-VALUE}). A list (e.g. 100,1024,4096) runs everything once per size, "
                            + "each into <report-dir>/value-size-N, and writes the bloomkv/RocksDB ratio against value size "
                            + "(value-size.md, value-size.json, ratio-vs-value-size.png) into the report folder.")
    List<Integer> valueSizes;

    @Option(
            names = "--bits-per-key",
            defaultValue = "10",
            description = "Filter bits per key, both engines (default ${DEFAULT-VALUE}).")
    double bitsPerKey;

    @Option(
            names = "--block-size",
            defaultValue = "4096",
            description = "Data block bytes, both engines (default ${DEFAULT-VALUE}).")
    int blockSize;

    @Option(
            names = "--cache-size",
            defaultValue = "8388608",
            description = "Block cache bytes, both engines (default ${DEFAULT-VALUE}).")
    long cacheSize;

    @Option(
            names = "--write-buffer-size",
            defaultValue = "67108864",
            description = "Memtable bytes before a flush, both engines (default ${DEFAULT-VALUE}, RocksDB's default).")
    long writeBufferSize;

    @Option(
            names = "--compression",
            defaultValue = "none",
            description =
                    "Block compression of both engines, bottommost level included: none, lz4 or zstd (default ${DEFAULT-VALUE}).")
    String compression;

    @Option(
            names = "--value-compressibility",
            defaultValue = "1.0",
            description = "Values compress to about this fraction (db_bench's compression_ratio: random bytes of "
                    + "len*ratio repeated); 1.0 = incompressible (default ${DEFAULT-VALUE}).")
    double valueCompressibility;

    @Option(
            names = "--direct",
            description = "Both engines read tables with O_DIRECT (bloomkv useDirectReads, RocksDB "
                    + "use_direct_reads): block reads are device reads, not page-cache copies.")
    boolean direct;

    @Option(
            names = "--mmap-reads",
            arity = "0..1",
            defaultValue = "none",
            fallbackValue = "both",
            paramLabel = "ENGINES",
            description =
                    "Which engines read tables through memory mappings (bloomkv useMmapReads, RocksDB allow_mmap_reads; "
                            + "RocksDB then reports no bytes read), the others with pread: bloomkv, rocksdb, both or none. "
                            + "Plain --mmap-reads = both; --mmap-reads=bloomkv runs each engine in its own default read mode "
                            + "(bloomkv mapped, RocksDB pread). Default: pread on both, RocksDB's default. None under --direct; "
                            + "with --defaults each engine reads its own way (bloomkv mapped, RocksDB pread) (default ${DEFAULT-VALUE}).")
    String mmapReads;

    @Option(names = "--no-mmap-reads", hidden = true, description = "The same as --mmap-reads=none.")
    boolean noMmapReads;

    @Option(
            names = "--rate-limit",
            defaultValue = "0",
            description =
                    "Bytes per second both engines' flushes and compactions may write (bloomkv Options.rateLimiter, "
                            + "RocksDB RateLimiter); 0 = unlimited (default ${DEFAULT-VALUE}).")
    long rateLimit;

    @Option(
            names = "--filter-budget",
            defaultValue = "",
            description =
                    "Filter memory budget: bloomkv's Options.filterMemoryBudget (partitioned filters); RocksDB gets "
                            + "partition_filters, kTwoLevelIndexSearch and cache_index_and_filter_blocks with the budget added to its "
                            + "block cache as the high-priority pool. Bytes (e.g. 2m) or a percentage of each engine's unbounded "
                            + "filters' size (e.g. 25%%), measured after each load; empty = none (default).")
    String filterBudget;

    @Option(
            names = "--sync",
            description = "fsync the WAL on every measured write (default: WAL on, no fsync per write).")
    boolean sync;

    @Option(
            names = "--threads",
            defaultValue = "1",
            description =
                    "Threads of the read phases: readers, and in readupdate/readheavy threads that read and write; "
                            + "operations are split between them (default ${DEFAULT-VALUE}).")
    int threads;

    @Option(
            names = "--distribution",
            defaultValue = "uniform",
            description = "How existing keys are chosen (readrandom, seekrandom, overwrite, readwhilewriting's reads, "
                    + "readupdate, readheavy): uniform, zipfian (YCSB scrambled Zipfian, constant 0.99) or latest "
                    + "(YCSB skewed-latest: the last keys loaded are hot) (default ${DEFAULT-VALUE}).")
    String distribution;

    @Option(
            names = "--engines",
            defaultValue = "bloomkv,rocksdb",
            split = ",",
            description = "Engines, run alternately (default ${DEFAULT-VALUE}).")
    List<String> engines;

    @Option(
            names = "--filters",
            defaultValue = "on,off",
            split = ",",
            description = "Filter modes: on, off or on,off (default ${DEFAULT-VALUE}).")
    List<String> filters;

    @Option(
            names = "--filter-kind",
            defaultValue = "BLOCKED",
            description =
                    "bloomkv's filter kind: STANDARD, PARTITIONED, BLOCKED, RIBBON, or RIBBON@N = RIBBON from level N down, BLOCKED above, at Bloom-equivalent bits per key; then any of the suffixes +MONKEY (the same filter memory spread over the levels by Monkey's allocation, e.g. BLOCKED+MONKEY), +MEMORY (RIBBON spends the bits per key as memory, for a lower false-positive rate than Bloom's) and +ROCKSDB-RIBBON (RocksDB gets its Ribbon filter too, else it keeps FastLocalBloom at the bits per key); default ${DEFAULT-VALUE}.")
    String filterKind;

    @Option(
            names = "--workloads",
            split = ",",
            description = "Workloads in order (default: fillseq,fillrandom,overwrite,readrandom,"
                    + "readmissing,seekrandom,readwhilewriting,deleterandom; also readupdate (50%% get / 50%% read-modify-write) and "
                    + "readheavy (95%% get / 5%% update), multigetrandom and multigetmissing (multiGet batches of 32 present / absent "
                    + "keys; RocksDB multiGetAsList), seekprefix (keys under 7-byte prefixes, both engines with a prefix extractor: "
                    + "prefix seeks to present prefixes (seekprefix-hit) and absent ones (seekprefix-miss)), bulkload (the keys in key order "
                    + "through one table file + ingest: TableFileWriter + Db.ingest vs SstFileWriter + ingestExternalFile; then "
                    + "bulkload-read; compare with fillseq); and the records "
                    + "family (~1 KB values of 10 fields, YCSB's record; 'records' names them all): recordsload (--num records "
                    + "inserted by --threads threads), recordsread (100%% reads), recordslatest (95%% reads of the latest "
                    + "records, 5%% inserts), recordsrmw (50%% reads, 50%% read-modify-writes), recordsupdate (50%% reads, "
                    + "50%% updates), recordsreadheavy (95%% reads, 5%% updates), recordsscan (95%% scans of 1-100 records, "
                    + "5%% inserts); zipfian key choice but in recordslatest, --reads operations each, every one on the "
                    + "database the previous left).")
    List<String> workloads;

    @Option(names = "--seed", defaultValue = "301", description = "Seed of every generator (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(
            names = "--report-dir",
            defaultValue = "bench-report",
            description = "Report folder (default ./${DEFAULT-VALUE}).")
    Path reportDir;

    @Option(
            names = "--db-dir",
            description =
                    "Parent of the fresh database directories (default: a new temp directory, deleted afterwards).")
    Path dbDir;

    @Option(
            names = "--cold",
            description = "Evict the tables from the page cache (and empty the block caches) before each read phase.")
    boolean cold;

    @Option(
            names = "--compact",
            description =
                    "After each preload, compact all tables down the levels on both engines "
                            + "(a full manual compaction), so both read the same LSM shape. Default: each engine's own shape after flush.")
    boolean compact;

    @Option(
            names = "--warmup",
            defaultValue = "200000",
            description =
                    "Untimed operations per engine before the first measurement, to warm up the JIT (default ${DEFAULT-VALUE}).")
    long warmup;

    @Option(
            names = "--phase-warmup",
            defaultValue = "100000",
            description =
                    "Untimed operations of the same kind, through the phase's own timed loop, right before each read "
                            + "phase, so every engine column is measured in the same steady state; at most 10000000 "
                            + "(default ${DEFAULT-VALUE}).")
    long phaseWarmup;

    @Option(
            names = "--repeat",
            defaultValue = "1",
            description =
                    "Run the whole sequence this many times; tables and goals then show medians and min-max spreads (default ${DEFAULT-VALUE}).")
    int repeat;

    @Option(
            names = "--progress",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "Show a progress bar (default ${DEFAULT-VALUE}).")
    boolean progress;

    @Option(
            names = "--fpr-sweep",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "Run the filter-library FPR sweep for the FPR chart (default ${DEFAULT-VALUE}).")
    boolean fprSweep;

    @Option(
            names = "--fpr-sweep-keys",
            defaultValue = "100000",
            description = "Keys per filter in the FPR sweep (default ${DEFAULT-VALUE}).")
    long fprSweepKeys;

    @Option(
            names = "--fpr-sweep-probes",
            defaultValue = "1000000",
            description = "Absent-key probes per filter in the FPR sweep (default ${DEFAULT-VALUE}).")
    long fprSweepProbes;

    @Option(
            names = "--defaults",
            description =
                    "Run each engine on its own defaults (bloomkv Options.defaults(); RocksDB default Options with "
                            + "a BlockBasedTableConfig holding only BloomFilter(--bits-per-key)) instead of matched options; "
                            + "--block-size, --cache-size, --write-buffer-size and --filter-kind then do not apply.")
    boolean ownDefaults;

    @Option(
            names = "--paired-reads",
            description =
                    "Keep both engines' databases open through a session and run each readrandom/readmissing phase "
                            + "on them in " + BenchConfig.PAIRED_SLICES
                            + " interleaved slices (A B, B A, ...), so that both "
                            + "engines' reads see the same minutes of a noisy machine. Loads still run one engine at a time.")
    boolean pairedReads;

    @Option(
            names = "--no-settle",
            description =
                    "Also measure the read-only workloads unsettled: right after the load (or fillrandom) with no "
                            + "flush, no wait for compactions and no phase warm-up, as phases named <phase>-unsettled; then the "
                            + "engine settles and they run again as usual, so the report shows both side by side. The records "
                            + "family then runs without settling after its load.")
    boolean noSettle;

    @Option(
            names = "--reopen",
            description =
                    "Run every workload of a session in a fresh JVM (this JVM's flags and classpath) on the database "
                            + "the previous phase left: WAL replay, empty caches and page-cache state as left, cold JIT (no "
                            + "warm-up of any kind in the child). The untimed preload runs in this process.")
    boolean reopen;

    @Option(
            names = "--child-jvm-option",
            paramLabel = "ENGINE:OPTION",
            description =
                    "With --reopen: a JVM option for the child processes of one engine only (bloomkv or rocksdb), after "
                            + "the flags they inherit from this JVM; repeatable. For a comparison where the engines want "
                            + "different JVM settings, e.g. bloomkv:-XX:AOTCache=bloomkv.aot (a Java 25 AOT cache "
                            + "trained on bloomkv alone; RocksDB's children are faster without one).")
    List<String> childJvmOptions = new ArrayList<>();

    @Option(
            names = "--child-timeout",
            paramLabel = "SECONDS",
            defaultValue = "" + ChildProcess.DEFAULT_TIMEOUT_SECONDS,
            description = "With --reopen: a child process still running after SECONDS is killed with its descendant "
                    + "processes, and the run stops with exit code 1 naming the phase (0: no limit; default: "
                    + "${DEFAULT-VALUE}, 4 hours).")
    long childTimeout;

    // The child side of --reopen (hidden): the parent passes its own arguments plus these.
    @Option(names = "--child-db", hidden = true)
    Path childDb;

    @Option(names = "--child-workload", hidden = true)
    String childWorkload;

    @Option(names = "--child-engine", hidden = true)
    String childEngine;

    @Option(names = "--child-filters", hidden = true)
    boolean childFilters;

    @Option(names = "--child-run", hidden = true, defaultValue = "0")
    int childRun;

    @Option(names = "--child-value-size", hidden = true, defaultValue = "-1")
    int childValueSize;

    @Option(names = "--child-out", hidden = true)
    Path childOut;

    /** The run's configuration from the flags (the first --value-size). @throws CommandLine.ParameterException for bad flags */
    public BenchConfig config(Path workDir) {
        return config(workDir, valueSizes.get(0), reportDir, fprSweep);
    }

    /** The configuration of one --value-size of the list, reporting into {@code report}. */
    BenchConfig config(Path workDir, int valueSize, Path report, boolean sweep) {
        try {
            List<Workload> ws = new ArrayList<>();
            for (String w : workloads == null || workloads.isEmpty() ? DEFAULT_WORKLOADS : workloads) {
                ws.addAll(Workload.parseAll(w));
            }
            List<Boolean> modes = new ArrayList<>();
            for (String f : filters) {
                switch (f.trim().toLowerCase(Locale.ROOT)) {
                    case "on" -> modes.add(true);
                    case "off" -> modes.add(false);
                    default -> throw new IllegalArgumentException("--filters: expected on or off, got '" + f + "'");
                }
            }
            String kind = filterKind.trim().toUpperCase(Locale.ROOT);
            io.bloomkv.bench.engine.FilterPolicySpec.parse(kind);
            if (sweep && (fprSweepKeys < 1 || fprSweepProbes < 1)) {
                throw new IllegalArgumentException("--fpr-sweep-keys and --fpr-sweep-probes must be positive");
            }
            List<String> es =
                    engines.stream().map(e -> e.trim().toLowerCase(Locale.ROOT)).toList();
            return new BenchConfig(
                            num,
                            reads < 0 ? num : reads,
                            seeks < 0 ? Math.max(1, num / 10) : seeks,
                            keySize,
                            valueSize,
                            bitsPerKey,
                            blockSize,
                            cacheSize,
                            writeBufferSize,
                            compression.trim().toLowerCase(Locale.ROOT),
                            sync,
                            threads,
                            es,
                            modes,
                            kind,
                            ws,
                            seed,
                            report,
                            workDir,
                            cold,
                            compact,
                            warmup,
                            phaseWarmup,
                            repeat,
                            progress,
                            sweep,
                            KeyDistribution.parse(distribution),
                            valueCompressibility,
                            direct,
                            direct ? MmapReads.NONE : mmapReads(),
                            ownDefaults,
                            pairedReads,
                            rateLimit,
                            noSettle,
                            reopen,
                            io.bloomkv.bench.engine.FilterBudgetSpec.parse(filterBudget)
                                    .toString())
                    .validate();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    /** --mmap-reads parsed; --no-mmap-reads (the negation the option had as a boolean) is none. */
    private MmapReads mmapReads() {
        MmapReads m = MmapReads.parse(mmapReads);
        if (noMmapReads && m != MmapReads.NONE) {
            throw new IllegalArgumentException("--no-mmap-reads contradicts --mmap-reads=" + m.flagName());
        }
        return noMmapReads ? MmapReads.NONE : m;
    }

    @Override
    public Integer call() throws IOException {
        if (childDb != null) {
            return runChild();
        }
        Map<String, List<String>> perEngineJvm;
        try {
            perEngineJvm = ChildProcess.parseEngineJvmOptions(childJvmOptions);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        if (!perEngineJvm.isEmpty() && !reopen) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--child-jvm-option applies to the child processes of --reopen only");
        }
        if (childTimeout < 0) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--child-timeout must not be negative (0: no limit): " + childTimeout);
        }
        if (!reopen && spec.commandLine().getParseResult().hasMatchedOption("--child-timeout")) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--child-timeout applies to the child processes of --reopen only");
        }
        for (int v : valueSizes) { // rejects bad flags before anything is created
            config(dbDir == null ? Path.of(".") : dbDir, v, reportDir, fprSweep);
        }
        if (valueSizes.size() != new java.util.HashSet<>(valueSizes).size()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--value-size lists a size twice: " + valueSizes);
        }
        boolean tempWork = dbDir == null;
        Path workDir = tempWork ? Files.createTempDirectory("bloomkv-bench") : dbDir;
        PrintWriter out = spec.commandLine().getOut();
        perEngineJvm.forEach((engine, options) -> out.println("child JVM options, " + engine + ": " + options));
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        String advice = heapAdvice(heap.getInit(), heap.getMax());
        if (advice != null) {
            out.println(advice);
            out.flush();
        }
        // --defaults: --filter-kind does not apply
        String filterAdvice = directFilterAdvice(
                direct && !ownDefaults, filters.stream().anyMatch(f -> f.trim().equalsIgnoreCase("on")), filterKind);
        if (filterAdvice != null) {
            out.println(filterAdvice);
            out.flush();
        }
        try {
            boolean list = valueSizes.size() > 1;
            Map<Integer, BenchReport> bySize = new LinkedHashMap<>();
            long wrong = 0;
            for (int v : valueSizes) {
                // list mode: one report folder per size; the FPR sweep (independent of values) runs with the first only
                BenchConfig cfg = config(
                        workDir,
                        v,
                        list ? ValueSizeSweep.subDir(reportDir, v) : reportDir,
                        fprSweep && bySize.isEmpty());
                if (list) {
                    out.println("value size " + v + " B:");
                    out.flush();
                }
                BenchReport report;
                try {
                    report = run(
                            cfg,
                            fprSweepKeys,
                            fprSweepProbes,
                            out,
                            spec.commandLine().getParseResult().originalArgs(),
                            perEngineJvm,
                            childTimeout);
                } catch (ChildProcess.ChildTimeoutException e) {
                    // The child and its descendants are gone (ChildProcess.kill), its database deleted: the run stops.
                    out.flush();
                    spec.commandLine().getErr().println("ERROR: " + e.getMessage());
                    spec.commandLine().getErr().flush();
                    return 1;
                }
                List<Path> files = ReportWriter.write(report, BenchRunner.columns(cfg), cfg.reportDir());
                print(report, BenchRunner.columns(cfg), out);
                out.println("report: " + cfg.reportDir().toAbsolutePath() + " (" + files.size() + " files: "
                        + String.join(
                                ", ",
                                files.stream()
                                        .map(p -> p.getFileName().toString())
                                        .toList()) + ")");
                out.flush();
                bySize.put(v, report);
                wrong += report.phases().stream()
                        .mapToLong(PhaseResult::wrongAnswers)
                        .sum();
            }
            if (list) {
                List<Path> files = ValueSizeSweep.write(bySize, reportDir);
                out.println();
                out.println("bloomkv / rocksdb ops/s against value size (filters on):");
                out.print(ValueSizeSweep.table(bySize, ValueSizeSweep.points(bySize)));
                out.println("value-size summary: " + reportDir.toAbsolutePath() + " ("
                        + String.join(
                                ", ",
                                files.stream()
                                        .map(p -> p.getFileName().toString())
                                        .toList()) + ")");
                out.flush();
            }
            if (wrong > 0) {
                spec.commandLine().getErr().println("ERROR: " + wrong + " wrong answers (see the tables)");
                return 1;
            }
            return 0;
        } finally {
            if (tempWork) {
                deleteTree(workDir);
            }
        }
    }

    /** The child side of {@code --reopen}: one workload on the existing database, its phases serialized to --child-out. */
    private int runChild() throws IOException {
        if (childOut == null || childWorkload == null || childEngine == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--child-db needs --child-out, --child-workload and --child-engine");
        }
        int v = childValueSize > 0 ? childValueSize : valueSizes.get(0);
        BenchConfig cfg = config(childDb.getParent(), v, reportDir, false).coldChild();
        BenchRunner runner =
                new BenchRunner(cfg, ProgressSink.NONE, cfg.cold() ? PageCacheEvictor.detect(childDb) : null);
        List<PhaseResult> phases = runner.runChildPhase(
                Workload.parse(childWorkload), new EngineSpec(childEngine, childFilters), childDb, childRun);
        if (runner.lastCosts() != null) {
            // the parent repeats this line (ChildProcess): the readers' and the process's CPU of the timed pass
            System.out.println(runner.lastCosts().line(childWorkload, childEngine));
        }
        ChildProcess.writeResults(childOut, phases);
        return 0;
    }

    /** Runs the workloads (and the FPR sweep) and assembles the report. */
    public static BenchReport run(BenchConfig cfg, long sweepKeys, long sweepProbes, PrintWriter out)
            throws IOException {
        return run(cfg, sweepKeys, sweepProbes, out, null, Map.of(), ChildProcess.DEFAULT_TIMEOUT_SECONDS);
    }

    /**
     * {@link #run(BenchConfig, long, long, PrintWriter)} with the launcher of {@code --reopen}'s child processes
     * (their arguments are {@code childArgs} plus the child options; null: --reopen is refused), each engine's children
     * started with its {@code perEngineJvm} options after the inherited flags and killed after
     * {@code childTimeoutSeconds} (0: no limit; {@link ChildProcess.ChildTimeoutException}).
     */
    public static BenchReport run(
            BenchConfig cfg,
            long sweepKeys,
            long sweepProbes,
            PrintWriter out,
            List<String> childArgs,
            Map<String, List<String>> perEngineJvm,
            long childTimeoutSeconds)
            throws IOException {
        Instant started = Instant.now();
        long t0 = System.nanoTime();
        Files.createDirectories(cfg.workDir());
        PageCacheEvictor evictor = null;
        String coldMethod = null;
        if (cfg.cold()) {
            evictor = PageCacheEvictor.detect(cfg.workDir());
            coldMethod = evictor.available() ? evictor.method() : "NOT AVAILABLE here: " + evictor.unavailableReason();
            out.println("cold mode: " + coldMethod);
            out.flush();
        }
        Map<String, String> engines = new LinkedHashMap<>();
        for (EngineSpec s : BenchRunner.columns(cfg)) {
            Path probeDir = Files.createTempDirectory(cfg.workDir(), "describe");
            try (BenchEngine e = EngineFactory.open(s, probeDir, cfg)) {
                List<String> jvm = perEngineJvm.getOrDefault(s.engine(), List.of());
                // the report records how the engine's --reopen children were started when that differs by engine
                engines.put(s.label(), jvm.isEmpty() ? e.describe() : e.describe() + "; child JVM options " + jvm);
            } finally {
                deleteTree(probeDir);
            }
        }
        List<PhaseResult> phases;
        try (ProgressSink progress =
                cfg.progress() ? new ConsoleProgress(BenchRunner.plannedOps(cfg)) : ProgressSink.NONE) {
            BenchRunner.PhaseLauncher launcher = childArgs == null
                    ? null
                    : (w, s, dir, run) -> ChildProcess.run(
                            childArgs,
                            perEngineJvm.getOrDefault(s.engine(), List.of()),
                            cfg.valueSize(),
                            w,
                            s,
                            dir,
                            run,
                            childTimeoutSeconds,
                            out);
            phases = new BenchRunner(cfg, progress, evictor, launcher).run();
        }
        List<FprPoint> sweep = cfg.fprSweep()
                ? FilterLibrarySweep.sweep(sweepKeys, sweepProbes, FilterLibrarySweep.DEFAULT_BITS, cfg.seed())
                : List.of();
        double secs = (System.nanoTime() - t0) / 1e9;
        return new BenchReport(
                started, secs, Machine.current(), cfg, engines, coldMethod, phases, Goal.evaluate(phases, cfg), sweep);
    }

    /**
     * A note when the heap may shrink between phases ({@code -Xms} below {@code -Xmx}), else null. After the full
     * collection behind each phase's "heap after GC" the JVM may give heap back to the OS; the next phase then faults
     * fresh pages in as it allocates, and bloomkv's reads allocate each block they read on the heap, so its readrandom
     * pays page faults the fixed, pre-touched heap does not (bench/RESULTS.md, "Heap"). RocksDB's blocks are off the
     * Java heap, so the difference would count against bloomkv alone. Cassandra and Kafka are run with {@code -Xms} =
     * {@code -Xmx} for the same reason.
     */
    static String heapAdvice(long initBytes, long maxBytes) {
        if (initBytes <= 0 || maxBytes <= 0 || initBytes >= maxBytes) {
            return null;
        }
        return String.format(
                Locale.ROOT,
                "note: the heap starts at %d MiB of %d MiB and may shrink after each phase's "
                        + "full GC, so some runs pay page faults as it grows back; for steady figures run with -Xms equal to "
                        + "-Xmx and -XX:+AlwaysPreTouch (e.g. java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -jar ...)",
                initBytes >> 20,
                maxBytes >> 20);
    }

    /**
     * A note for {@code --direct} runs whose bloomkv tables keep Bloom-type filters (null otherwise): under O_DIRECT
     * each false positive is a device read, and a Ribbon filter that spends the same memory lets ~8x fewer through.
     */
    static String directFilterAdvice(boolean direct, boolean filtersOn, String filterKind) {
        if (!direct || !filtersOn || FilterPolicySpec.parse(filterKind).usesRibbon()) {
            return null;
        }
        return "note: under --direct each false positive is a device read; bloomkv's " + filterKind + " filters let "
                + "about as many absent keys through to one as RocksDB's Bloom filter at the same bits per key (~1% at "
                + "10). --filter-kind RIBBON+MEMORY spends the same filter memory for ~8x fewer (docs/operations.md, \"Direct "
                + "reads\"); add +ROCKSDB-RIBBON to give RocksDB its Ribbon filter too";
    }

    /** The console output: one table per phase, then the goals. */
    public static void print(BenchReport report, List<EngineSpec> columns, PrintWriter out) {
        out.println();
        out.println("machine: " + report.machine().summary());
        out.println("table reads: " + report.config().readModes());
        for (MetricTable t : MetricTable.build(report.phases(), columns)) {
            out.println();
            out.print(t.toText());
        }
        out.println();
        out.println(
                "g" + Goal.title(report.config()).substring(1) + " (bloomkv / rocksdb, filters on):"); // "goals ..."
        for (Goal g : report.goals()) {
            out.printf(
                    Locale.ROOT,
                    "  %-75s %8s  %s  (%s)%n",
                    g.name(),
                    Double.isNaN(g.measured()) ? "-" : String.format(Locale.ROOT, "%.3f", g.measured()),
                    Double.isNaN(g.measured()) ? "n/a" : g.met() ? "MET" : "NOT MET",
                    g.detail());
        }
        out.flush();
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
