package io.bloomkv.bench.kafka;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.bloomkv.bench.report.Machine;
import io.bloomkv.kafka.BloomKvConfig;
import io.bloomkv.kafka.BloomKvStore;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bench kafka-streams}: a Kafka Streams store workload ({@code --topology kv|window|session|versioned}, see
 * {@link BenchTopology}) on Kafka's RocksDB stores and on the bloomkv stores, the stores obtained as the DSL obtains
 * them ({@code dsl.store.suppliers.class}: {@code BloomKvDslStoreSuppliers} against
 * {@code BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers}), driven as stream threads drive their innermost stores, with
 * the input spread over {@code --partitions} tasks (one store each; each count of partitions is measured).
 * Processing: every record applied to its task's store, a commit (with the changelog offset) every
 * {@code --commit-every} records per task. Restore: the changelog of that run fed to fresh stores' registered restore
 * callbacks in batches of {@code --restore-batch} records, then the commit. Memory after processing, stores open: heap
 * growth (after GC), direct and mapped buffers (BufferPool MXBeans), the stores' own off-heap report, and the process's
 * resident set (VmRSS, peak VmHWM from /proc/self/status). Each run is a fresh child JVM ({@code --fork}, default), so
 * the resident set is that engine's alone; the engines alternate (A B A B) and each round's ratio is reported, with
 * medians and min-max spreads.
 */
@Command(
        name = "kafka-streams",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Kafka Streams store bench: a topology's stores on RocksDB and on bloomkv, records/s processed and restored, "
                    + "heap, off-heap and RSS at each partition count; writes kafka-streams-<topology>.md/.json/.png."
        })
public final class KafkaStreamsBench implements Callable<Integer> {
    @Option(
            names = "--topology",
            defaultValue = "kv",
            description = "kv | window | session | versioned (default ${DEFAULT-VALUE}).")
    String topology;

    @Option(
            names = "--records",
            defaultValue = "1000000",
            description = "Records processed per run (default ${DEFAULT-VALUE}).")
    int records;

    @Option(
            names = "--words",
            defaultValue = "200000",
            description = "Distinct keys of the kv topology (default ${DEFAULT-VALUE}).")
    int words;

    @Option(
            names = "--keys",
            defaultValue = "100000",
            description = "Distinct keys of the window, session and versioned topologies (default ${DEFAULT-VALUE}).")
    int keys;

    @Option(
            names = "--event-hours",
            defaultValue = "2",
            description = "Event time the records span (default ${DEFAULT-VALUE} hours).")
    double eventHours;

    @Option(
            names = "--window-minutes",
            defaultValue = "1",
            description = "Tumbling window size of the window topology (default ${DEFAULT-VALUE}).")
    double windowMinutes;

    @Option(
            names = "--retention-minutes",
            defaultValue = "60",
            description =
                    "Retention of window and session stores, history retention of the versioned store (default ${DEFAULT-VALUE}).")
    double retentionMinutes;

    @Option(
            names = "--session-gap-minutes",
            defaultValue = "5",
            description = "Inactivity gap of the session topology (default ${DEFAULT-VALUE}).")
    double sessionGapMinutes;

    @Option(
            names = "--partitions",
            defaultValue = "1,16",
            split = ",",
            description = "Task counts to measure, one store per task (default ${DEFAULT-VALUE}).")
    List<Integer> partitions;

    @Option(
            names = "--commit-every",
            defaultValue = "10000",
            description =
                    "Records between commits of a task (default ${DEFAULT-VALUE}: ~100 ms at 100k records/s, the EOS commit interval).")
    int commitEvery;

    @Option(
            names = "--gc-before",
            description =
                    "Collect (System.gc(), three full collections) before the stores open, as earlier versions of this "
                            + "bench did: G1 then starts the run with a heap shrunk to a few MiB and those pauses in its "
                            + "history, which an application that never calls System.gc() does not (default: no collection).")
    boolean gcBefore;

    @Option(
            names = "--rate",
            defaultValue = "0",
            description = "Records per second the processing phase is held to, all tasks together (default "
                    + "${DEFAULT-VALUE}: as fast as the stores go). With a rate both engines see the same traffic, so "
                    + "their resident sets compare at equal load (G1 sizes the heap to the collection time per second, "
                    + "which grows with the records per second); records/s then show the rate, not the stores.")
    double rate;

    @Option(
            names = "--restore-batch",
            defaultValue = "1000",
            description = "Changelog records per restore batch (default ${DEFAULT-VALUE}, max.poll.records).")
    int restoreBatch;

    @Option(
            names = "--rounds",
            defaultValue = "5",
            description = "Runs per engine and partition count, engines alternating (default ${DEFAULT-VALUE}).")
    int rounds;

    @Option(
            names = "--engines",
            defaultValue = "rocksdb,bloomkv",
            split = ",",
            description = "Stores, run alternately (default ${DEFAULT-VALUE}).")
    List<String> engines;

    @Option(
            names = "--bloomkv-cache-bytes",
            defaultValue = "52428800",
            description =
                    "One block cache shared by the bloomkv stores (bloomkv.block.cache.bytes; default ${DEFAULT-VALUE}: "
                            + "the 50 MiB Kafka gives each RocksDB store).")
    long bloomkvCacheBytes;

    @Option(
            names = "--bloomkv-write-buffer-bytes",
            defaultValue = "0",
            description = "One memtable budget shared by the bloomkv stores (bloomkv.write.buffer.bytes; default "
                    + "${DEFAULT-VALUE}: unset, each store's memtable bounded by its own write buffer).")
    long bloomkvWriteBufferBytes;

    @Option(
            names = "--fork",
            defaultValue = "true",
            arity = "1",
            description =
                    "Run each measurement in a fresh child JVM, so RSS is one engine's (default ${DEFAULT-VALUE}).")
    boolean fork;

    @Option(
            names = "--warmup",
            defaultValue = "true",
            arity = "1",
            description =
                    "Without --fork: an untimed run of each engine first, so the JIT has compiled both (default ${DEFAULT-VALUE}).")
    boolean warmup;

    @Option(
            names = "--heap-histogram",
            defaultValue = "0",
            description =
                    "Print the first N lines of the live-heap class histogram after processing, stores open (default ${DEFAULT-VALUE}: none).")
    int heapHistogram;

    @Option(
            names = "--period-memory",
            description =
                    "After each retention period, print where the resident set is (RSS, RssAnon, heap used by the "
                            + "old generation after the last collection, heap committed, NMT categories with "
                            + "-XX:NativeMemoryTracking=summary); no collection is forced, so G1's sizing is not disturbed.")
    boolean periodMemory;

    @Option(
            names = "--child-run",
            hidden = true,
            description = "Internal: run one measurement (engine,round,partitions) and print it.")
    String childRun;

    @Option(names = "--seed", defaultValue = "301", description = "Seed of the input (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(
            names = "--report-dir",
            defaultValue = "bench-report",
            description = "Report folder (default ./${DEFAULT-VALUE}).")
    Path reportDir;

    @Option(
            names = "--db-dir",
            description = "Parent of the state directories (default: a new temp directory, deleted afterwards).")
    Path dbDir;

    @Spec
    CommandSpec spec;

    private static final long BASE_TIME = 1_700_000_000_000L;
    private static final String RESULT = "RESULT ";

    /** One run of one engine at one partition count. */
    public record Run(
            String topology,
            String engine,
            int partitions,
            int round,
            double processRecordsPerSec,
            double restoreRecordsPerSec,
            long processMillis,
            long restoreMillis,
            long heapBytes,
            long directBytes,
            long storeOffHeapBytes,
            String storeOffHeapWhat,
            long rssBytes,
            long rssPeakBytes,
            long changelogRecords,
            long verifiedReads,
            MemoryBreakdown memory,
            List<PeriodSample> periods,
            double processCpuNanosPerRecord,
            double processAllocBytesPerRecord,
            double restoreCpuNanosPerRecord,
            double restoreAllocBytesPerRecord,
            double processThreadCpuNanosPerRecord,
            double restoreThreadCpuNanosPerRecord,
            double processWrittenBytesPerRecord) {}

    /**
     * The process after each retention period of event time (processing clock stopped while sampled): resident set,
     * heap committed and the bytes of the tasks' state directories. Flat from the second period on is the goal.
     */
    /**
     * After a retention period: the process's RSS, the committed heap, the stores' own memory ({@link #storeMemory}:
     * bloomkv's memtables and filters, RocksDB's memtables, table readers and block caches) and their disk.
     */
    public record PeriodSample(int period, long rssBytes, long heapCommittedBytes, long diskBytes, long storeBytes) {}

    @Override
    public Integer call() throws Exception {
        for (String e : engines) {
            if (!e.equals("rocksdb") && !e.equals("bloomkv")) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "unknown engine " + e + " (rocksdb, bloomkv)");
            }
        }
        if (!BenchTopology.NAMES.contains(topology)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "unknown topology " + topology + " " + BenchTopology.NAMES);
        }
        if (partitions.stream().anyMatch(p -> p < 1) || records < 1 || keys < 1 || words < 1 || rounds < 1) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--partitions, --records, --keys, --words and --rounds must be >= 1");
        }
        Path parent = dbDir != null ? Files.createDirectories(dbDir) : Files.createTempDirectory("bloomkv-kafka-bench");
        try {
            if (childRun != null) {
                String[] f = childRun.split(",");
                Run r = runOnce(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), parent);
                System.out.println(RESULT + new ObjectMapper().writeValueAsString(r));
                return 0;
            }
            System.out.printf(
                    Locale.ROOT,
                    "kafka-streams bench, topology %s: %,d records, %,d keys, partitions %s, commit every %,d, "
                            + "restore batches of %,d, %d rounds, %s%s%n",
                    topology,
                    records,
                    topologyKeys(),
                    partitions,
                    commitEvery,
                    restoreBatch,
                    rounds,
                    fork ? "a child JVM per run" : "in this JVM",
                    rateNote());
            System.out.println("machine: " + Machine.current().summary());
            List<Run> runs = new ArrayList<>();
            for (int p : partitions) {
                // Warm-up (untimed, in this JVM only when not forking): the JIT compiles both stores' paths first.
                if (!fork && warmup) {
                    for (String e : engines) {
                        runOnce(e, -1, p, parent);
                    }
                }
                for (int round = 0; round < rounds; round++) {
                    for (String e : engines) {
                        Run r = fork ? runInChild(e, round, p) : runOnce(e, round, p, parent);
                        runs.add(r);
                        System.out.printf(
                                Locale.ROOT,
                                "  %-8s p=%-3d round %d: process %,10.0f rec/s  restore %,10.0f rec/s  heap %7.1f MiB  "
                                        + "direct %7.1f MiB  RSS %7.1f MiB (peak %7.1f)%n",
                                r.engine(),
                                p,
                                round,
                                r.processRecordsPerSec(),
                                r.restoreRecordsPerSec(),
                                mib(r.heapBytes()),
                                mib(r.directBytes()),
                                mib(r.rssBytes()),
                                mib(r.rssPeakBytes()));
                        System.out.printf(
                                Locale.ROOT,
                                "           per record: process CPU %,.0f ns (stream thread %,.0f), stream-thread alloc %,.0f"
                                        + " B, written %,.0f B; restore CPU %,.0f ns (stream thread %,.0f), alloc %,.0f B%n",
                                r.processCpuNanosPerRecord(),
                                r.processThreadCpuNanosPerRecord(),
                                r.processAllocBytesPerRecord(),
                                r.processWrittenBytesPerRecord(),
                                r.restoreCpuNanosPerRecord(),
                                r.restoreThreadCpuNanosPerRecord(),
                                r.restoreAllocBytesPerRecord());
                        System.out.println("           memory: " + describe(r.memory()) + periodsLine(r.periods()));
                    }
                }
            }
            report(runs);
            return 0;
        } finally {
            if (dbDir == null) {
                deleteRecursively(parent);
            }
        }
    }

    /** The processing rate, when held to one (records/s then show it, not the stores). */
    private String rateNote() {
        return rate > 0
                ? String.format(Locale.ROOT, ", processing held to %,.0f records/s (records/s show the rate)", rate)
                : "";
    }

    private int topologyKeys() {
        return topology.equals("kv") ? words : keys;
    }

    private static double mib(long bytes) {
        return bytes / 1048576.0;
    }

    /** Runs one measurement in a fresh JVM (this JVM's flags and class path) and reads its result line. */
    private Run runInChild(String engine, int round, int p) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-agentlib") && !a.startsWith("-javaagent")) {
                cmd.add(a);
            }
        }
        String classPath = System.getProperty("java.class.path");
        if (isBenchJar(classPath)) {
            // The runnable jar: -jar, so its manifest's Add-Opens (the flags Chronicle needs) apply to the child too.
            cmd.add("-jar");
            cmd.add(classPath);
        } else {
            cmd.add("-cp");
            cmd.add(classPath);
            cmd.add("io.bloomkv.bench.BenchMain");
        }
        cmd.add("kafka-streams");
        List<String> original = spec.commandLine().getParseResult().originalArgs();
        for (int i = 0; i < original.size(); i++) {
            String a = original.get(i);
            if (a.equals("--child-run") || a.equals("--report-dir")) {
                i++;
            } else if (!a.startsWith("--child-run=") && !a.startsWith("--report-dir=")) {
                cmd.add(a);
            }
        }
        cmd.add("--child-run");
        cmd.add(engine + "," + round + "," + p);
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        Run result = null;
        StringBuilder out = new StringBuilder();
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith(RESULT)) {
                    result = new ObjectMapper().readValue(line.substring(RESULT.length()), Run.class);
                } else {
                    out.append(line).append('\n');
                    if (heapHistogram > 0 || periodMemory) {
                        System.out.println(line); // the child's --heap-histogram or --period-memory lines
                    }
                }
            }
        }
        int exit = child.waitFor();
        if (exit != 0 || result == null) {
            throw new IllegalStateException(
                    "the child run " + engine + " p=" + p + " round " + round + " failed (exit " + exit + "):\n" + out);
        }
        return result;
    }

    /** Whether {@code classPath} is the bench's runnable jar alone (its manifest's Main-Class is BenchMain). */
    private static boolean isBenchJar(String classPath) {
        if (!classPath.endsWith(".jar") || classPath.contains(File.pathSeparator)) {
            return false;
        }
        try (java.util.jar.JarFile jar = new java.util.jar.JarFile(classPath)) {
            java.util.jar.Manifest m = jar.getManifest();
            return m != null
                    && "io.bloomkv.bench.BenchMain".equals(m.getMainAttributes().getValue("Main-Class"));
        } catch (IOException e) {
            return false;
        }
    }

    /** The key of every record: skewed (a few hot keys, a long tail), seeded. */
    private int[] sequence(int n) {
        Random rnd = new Random(seed);
        int[] seq = new int[records];
        for (int i = 0; i < records; i++) {
            double u = rnd.nextDouble();
            seq[i] = (int) (n * u * u * u);
        }
        return seq;
    }

    private BenchTopology topology() {
        return BenchTopology.of(
                topology,
                Duration.ofMillis((long) (windowMinutes * 60_000)),
                Duration.ofMillis((long) (retentionMinutes * 60_000)),
                Duration.ofMillis((long) (sessionGapMinutes * 60_000)));
    }

    private BenchStoreContext context(Path dir, int partition) throws IOException {
        Files.createDirectories(dir);
        BenchStoreContext ctx = new BenchStoreContext(dir.toFile(), partition);
        ctx.appConfigs().put(BloomKvConfig.BLOCK_CACHE_BYTES_CONFIG, bloomkvCacheBytes);
        if (bloomkvWriteBufferBytes > 0) {
            ctx.appConfigs().put(BloomKvConfig.WRITE_BUFFER_BYTES_CONFIG, bloomkvWriteBufferBytes);
        }
        return ctx;
    }

    private StateStore open(BenchTopology t, String engine, BenchStoreContext ctx) {
        StateStore s = t.newStore(engine);
        s.init(t.needsInternalContext() ? ctx.asInternal() : ctx, s);
        return s;
    }

    private Run runOnce(String engine, int round, int p, Path parent) throws IOException {
        BenchTopology t = topology();
        int n = topologyKeys();
        int[] seq = round < 0 ? Arrays.copyOf(sequence(n), Math.min(records, 200_000)) : sequence(n);
        byte[][] keyBytes = new byte[n][];
        for (int i = 0; i < n; i++) {
            keyBytes[i] = String.format(Locale.ROOT, "key-%08d", i).getBytes(StandardCharsets.UTF_8);
        }
        long spanMs = (long) (eventHours * 3_600_000);
        Path dir = parent.resolve(topology + "-" + engine + "-p" + p + "-r" + round);
        deleteRecursively(dir);
        Files.createDirectories(dir);
        try {
            BenchStoreContext[] ctx = new BenchStoreContext[p];
            StateStore[] stores = new StateStore[p];
            List<Changelog> changelogs = new ArrayList<>();
            // No collection before the stores open (unless --gc-before): System.gc() is a full collection that
            // shrinks the heap to a few MiB and enters G1's pause history, so the first second of processing (stores
            // opening, a heap far below the initial size) would look like a heap under pressure and be widened, which
            // an application that never calls System.gc() does not see. The heap the stores hold is measured against
            // the heap after they and the changelogs are gone (end of the run) instead.
            if (gcBefore) {
                gc();
            }
            for (int i = 0; i < p; i++) {
                ctx[i] = context(dir.resolve("process").resolve("0_" + i), i);
                stores[i] = open(t, engine, ctx[i]);
                changelogs.add(new Changelog(BenchTopology.CHANGELOG, i));
            }
            int[] sinceCommit = new int[p];
            Random rnd = new Random(seed + 1);
            long retentionMs = (long) (retentionMinutes * 60_000);
            List<PeriodSample> periods = new ArrayList<>();
            long sampleNanos = 0;
            long sampleThreadCpu = 0;
            long cpu0 = processCpuNanos();
            long threadCpu0 = threadCpuNanos();
            long alloc0 = allocatedBytes();
            long written0 = bytesWritten();
            long t0 = System.nanoTime();
            for (int i = 0; i < seq.length; i++) {
                int k = seq[i];
                int part = k % p;
                long ts = BASE_TIME + (long) ((double) i * spanMs / seq.length);
                if (retentionMs > 0 && ts - BASE_TIME >= (periods.size() + 1) * retentionMs) {
                    long s0 = System.nanoTime();
                    long sc0 = threadCpuNanos();
                    periods.add(sample(periods.size() + 1, dir.resolve("process"), stores, ctx));
                    if (periodMemory) {
                        System.out.println(engine + " period " + periods.size() + ": " + MemoryBreakdown.periodLine());
                    }
                    sampleNanos += System.nanoTime() - s0;
                    sampleThreadCpu += threadCpuNanos() - sc0;
                }
                if (rate > 0 && i % 100 == 0) {
                    // Held to the rate: wait until record i is due (the sampling pauses do not count).
                    long due = t0 + sampleNanos + (long) (i * 1e9 / rate);
                    long ahead = due - System.nanoTime();
                    if (ahead > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(ahead);
                    }
                }
                t.process(stores[part], i, keyBytes[k], ts, rnd, part, changelogs.get(part));
                if (++sinceCommit[part] == commitEvery) {
                    sinceCommit[part] = 0;
                    commit(stores[part], part, changelogs.get(part).size());
                }
            }
            for (int i = 0; i < p; i++) {
                commit(stores[i], i, changelogs.get(i).size());
            }
            long processNanos = System.nanoTime() - t0 - sampleNanos;
            long processCpu = processCpuNanos() - cpu0;
            long processThreadCpu = threadCpuNanos() - threadCpu0 - sampleThreadCpu;
            long processAlloc = allocatedBytes() - alloc0;
            long processWritten = bytesWritten() - written0;
            Map<Integer, String> versionedAnswers = versionedAnswers(t, stores, keyBytes, p, spanMs);
            if (retentionMs > 0 && spanMs >= (periods.size() + 1) * retentionMs) {
                periods.add(sample(periods.size() + 1, dir.resolve("process"), stores, ctx));
                if (periodMemory) {
                    System.out.println(engine + " period " + periods.size() + ": " + MemoryBreakdown.periodLine());
                }
            }
            gc();
            long heapOpen = heapUsed();
            MemoryBreakdown memory = MemoryBreakdown.now();
            if (heapHistogram > 0) {
                System.out.println("heap histogram, " + engine + " p=" + p + ", stores open:\n"
                        + MemoryBreakdown.heapHistogram(heapHistogram));
            }
            long direct = directAndMapped();
            long[] storeOffHeap = {0};
            String what = storeOffHeap(stores, ctx, storeOffHeap);
            long[] rss = rss();
            for (StateStore s : stores) {
                s.close();
            }

            // Restore: each task's changelog into a fresh store.
            long restoreNanos = 0;
            long restoreCpu = 0;
            long restoreThreadCpu = 0;
            long restoreAlloc = 0;
            long changelogRecords = 0;
            StateStore[] restored = new StateStore[p];
            for (int i = 0; i < p; i++) {
                BenchStoreContext rctx = context(dir.resolve("restore").resolve("0_" + i), i);
                restored[i] = open(t, engine, rctx);
                // Read back before the restore is timed: the restore consumer hands a store records already made.
                List<ConsumerRecord<byte[], byte[]>> log = changelogs.get(i).records();
                changelogs.set(i, null);
                changelogRecords += log.size();
                long rc0 = processCpuNanos();
                long rtc0 = threadCpuNanos();
                long ra0 = allocatedBytes();
                long r0 = System.nanoTime();
                for (int from = 0; from < log.size(); from += restoreBatch) {
                    restoreBatch(rctx.restoreCallback, log.subList(from, Math.min(log.size(), from + restoreBatch)));
                }
                commit(restored[i], i, log.size());
                restoreNanos += System.nanoTime() - r0;
                restoreCpu += processCpuNanos() - rc0;
                restoreThreadCpu += threadCpuNanos() - rtc0;
                restoreAlloc += allocatedBytes() - ra0;
            }
            long verified = verify(t, restored, seq, keyBytes, p, spanMs);
            if (versionedAnswers != null) {
                Map<Integer, String> after = versionedAnswers(t, restored, keyBytes, p, spanMs);
                if (!after.equals(versionedAnswers)) {
                    throw new IllegalStateException("the restored versioned stores answer " + after
                            + ", the processed ones " + versionedAnswers);
                }
                verified += after.size();
            }
            for (StateStore s : restored) {
                s.close();
            }
            changelogs.clear();
            gc();
            long heap = heapOpen - heapUsed(); // what the open stores (and the changelogs) held after processing
            return new Run(
                    topology,
                    engine,
                    p,
                    round,
                    seq.length / (processNanos / 1e9),
                    changelogRecords / (restoreNanos / 1e9),
                    processNanos / 1_000_000,
                    restoreNanos / 1_000_000,
                    heap,
                    direct,
                    storeOffHeap[0],
                    what,
                    rss[0],
                    rss[1],
                    changelogRecords,
                    verified,
                    memory,
                    periods,
                    (double) processCpu / seq.length,
                    (double) processAlloc / seq.length,
                    changelogRecords == 0 ? 0 : (double) restoreCpu / changelogRecords,
                    changelogRecords == 0 ? 0 : (double) restoreAlloc / changelogRecords,
                    (double) processThreadCpu / seq.length,
                    changelogRecords == 0 ? 0 : (double) restoreThreadCpu / changelogRecords,
                    written0 < 0 ? -1 : (double) processWritten / seq.length);
        } finally {
            deleteRecursively(dir);
        }
    }

    /**
     * Versioned topology: for a sample of keys, the latest version and the version as of half the history retention
     * before the end, as text (compared between the processed and the restored stores); null for other topologies.
     */
    @SuppressWarnings("unchecked")
    private Map<Integer, String> versionedAnswers(
            BenchTopology t, StateStore[] stores, byte[][] keyBytes, int p, long spanMs) {
        if (!t.name.equals("versioned")) {
            return null;
        }
        long asOf = BASE_TIME + spanMs - (long) (retentionMinutes * 60_000 / 2);
        Map<Integer, String> out = new java.util.TreeMap<>();
        int n = keyBytes.length;
        for (int k = 0; k < n; k += Math.max(1, n / 500)) {
            org.apache.kafka.streams.state.VersionedBytesStore vs =
                    (org.apache.kafka.streams.state.VersionedBytesStore) stores[k % p];
            Bytes key = Bytes.wrap(keyBytes[k]);
            out.put(k, Arrays.toString(vs.get(key)) + " " + Arrays.toString(vs.get(key, asOf)));
        }
        return out;
    }

    /** Hands a batch to the store's callback as Kafka's restore does (record batches, else key-value batches, else one by one). */
    private static void restoreBatch(
            org.apache.kafka.streams.processor.StateRestoreCallback cb, List<ConsumerRecord<byte[], byte[]>> batch) {
        if (cb instanceof RecordBatchingStateRestoreCallback records) {
            records.restoreBatch(batch);
        } else if (cb instanceof org.apache.kafka.streams.processor.BatchingStateRestoreCallback kvs) {
            List<org.apache.kafka.streams.KeyValue<byte[], byte[]>> kv = new ArrayList<>(batch.size());
            for (ConsumerRecord<byte[], byte[]> r : batch) {
                kv.add(org.apache.kafka.streams.KeyValue.pair(r.key(), r.value()));
            }
            kvs.restoreAll(kv);
        } else {
            for (ConsumerRecord<byte[], byte[]> r : batch) {
                cb.restore(r.key(), r.value());
            }
        }
    }

    private static void commit(StateStore store, int partition, long offset) {
        store.commit(Map.of(new TopicPartition(BenchTopology.CHANGELOG, partition), offset));
    }

    /**
     * Reads back from the restored stores what the input implies, for a sample of keys, and fails on a difference:
     * kv: each key's count; window: each key's count in the last window. Returns the reads checked (0 for the other
     * topologies, whose restore the store tests check).
     */
    @SuppressWarnings("unchecked")
    private long verify(BenchTopology t, StateStore[] restored, int[] seq, byte[][] keyBytes, int p, long spanMs) {
        int n = keyBytes.length;
        long checked = 0;
        if (t.name.equals("kv")) {
            long[] expected = new long[n];
            for (int s : seq) {
                expected[s]++;
            }
            for (int k = 0; k < n; k += Math.max(1, n / 1000)) {
                long got = BenchTopology.longOf(
                        ((KeyValueStore<Bytes, byte[]>) restored[k % p]).get(Bytes.wrap(keyBytes[k])));
                if (got != expected[k]) {
                    throw new IllegalStateException(
                            "restored count of key " + k + " is " + got + ", expected " + expected[k]);
                }
                checked++;
            }
        } else if (t.name.equals("window")) {
            long window = (long) (windowMinutes * 60_000);
            long lastTs = BASE_TIME + (long) ((double) (seq.length - 1) * spanMs / seq.length);
            long lastStart = lastTs - lastTs % window;
            long[] expected = new long[n];
            for (int i = 0; i < seq.length; i++) {
                long ts = BASE_TIME + (long) ((double) i * spanMs / seq.length);
                if (ts - ts % window == lastStart) {
                    expected[seq[i]]++;
                }
            }
            for (int k = 0; k < n; k += Math.max(1, n / 1000)) {
                long got = BenchTopology.longOf(
                        ((WindowStore<Bytes, byte[]>) restored[k % p]).fetch(Bytes.wrap(keyBytes[k]), lastStart));
                if (got != expected[k]) {
                    throw new IllegalStateException("restored count of key " + k + " in the last window is " + got
                            + ", expected " + expected[k]);
                }
                checked++;
            }
        }
        return checked;
    }

    /**
     * Off-heap bytes the stores report: bloomkv stores their filters (the key-value store's database, the others'
     * {@code bloomkv-filter-memory-bytes} gauge; bloomkv memtables are on the heap); RocksDB its memtables, table
     * readers and block cache.
     */
    private static String storeOffHeap(StateStore[] stores, BenchStoreContext[] ctx, long[] out) {
        long sum = 0;
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < stores.length; i++) {
            if (stores[i] instanceof BloomKvStore b) {
                sum += b.database().stats().filterMemoryBytes();
                if (!parts.contains("filters")) {
                    parts.add("filters");
                }
                continue;
            }
            for (Map.Entry<MetricName, ? extends Metric> e :
                    ctx[i].metrics.metrics().entrySet()) {
                String n = e.getKey().name();
                if (n.equals("size-all-mem-tables")
                        || n.equals("estimate-table-readers-mem")
                        || n.equals("block-cache-usage")
                        || n.equals("bloomkv-filter-memory-bytes")) {
                    if (e.getValue().metricValue() instanceof Number num) {
                        sum += num.longValue();
                        if (!parts.contains(n)) {
                            parts.add(n);
                        }
                    }
                }
            }
        }
        out[0] = sum;
        return parts.isEmpty() ? "not reported" : String.join("+", parts);
    }

    /**
     * CPU time of the whole process (every thread: the stream thread, the stores' background threads, GC, JIT), which
     * a loaded machine does not inflate the way it inflates wall-clock time; -1 where the JVM does not report it.
     */
    static long processCpuNanos() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime()
                : -1;
    }

    /**
     * CPU time of the calling (stream) thread: the stores' own work on it, without the JIT's, GC's and background
     * threads' share that {@link #processCpuNanos} includes; -1 where the JVM does not report it.
     */
    static long threadCpuNanos() {
        java.lang.management.ThreadMXBean t = ManagementFactory.getThreadMXBean();
        return t.isCurrentThreadCpuTimeSupported() ? t.getCurrentThreadCpuTime() : -1;
    }

    /** Bytes the calling (stream) thread has allocated on the heap so far; -1 where the JVM does not report it. */
    static long allocatedBytes() {
        return ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                ? t.getCurrentThreadAllocatedBytes()
                : -1;
    }

    private static PeriodSample sample(int period, Path stateDirs, StateStore[] stores, BenchStoreContext[] ctx) {
        return new PeriodSample(
                period,
                rss()[0],
                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted(),
                bytesUnder(stateDirs),
                storeMemory(stores, ctx));
    }

    /**
     * The memory the stores say they hold: bloomkv's memtables (heap) and filters (off-heap), RocksDB's memtables,
     * table readers and block caches (native), from the stores' metrics (a bloomkv key-value store from its database's
     * stats). What the store keeps, apart from what the JVM or the allocator do with the rest of the process.
     */
    static long storeMemory(StateStore[] stores, BenchStoreContext[] ctx) {
        long sum = 0;
        for (int i = 0; i < stores.length; i++) {
            if (stores[i] instanceof BloomKvStore b) {
                io.bloomkv.engine.Stats st = b.database().stats();
                sum += st.memtableBytes() + st.filterMemoryBytes();
                continue;
            }
            for (Map.Entry<MetricName, ? extends Metric> e :
                    ctx[i].metrics.metrics().entrySet()) {
                String n = e.getKey().name();
                if ((n.equals("size-all-mem-tables")
                                || n.equals("estimate-table-readers-mem")
                                || n.equals("block-cache-usage")
                                || n.equals("bloomkv-memtable-bytes")
                                || n.equals("bloomkv-filter-memory-bytes"))
                        && e.getValue().metricValue() instanceof Number num) {
                    sum += num.longValue();
                }
            }
        }
        return sum;
    }

    /** Bytes of the regular files under {@code dir}; files deleted during the walk (old logs, compacted tables) skipped. */
    static long bytesUnder(Path dir) {
        long[] sum = {0};
        try {
            Files.walkFileTree(dir, new java.nio.file.SimpleFileVisitor<>() {
                @Override
                public java.nio.file.FileVisitResult visitFile(Path f, java.nio.file.attribute.BasicFileAttributes a) {
                    sum[0] += a.isRegularFile() ? a.size() : 0;
                    return java.nio.file.FileVisitResult.CONTINUE;
                }

                @Override
                public java.nio.file.FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                    if (e instanceof java.nio.file.NoSuchFileException) {
                        return java.nio.file.FileVisitResult.CONTINUE;
                    }
                    throw e;
                }
            });
        } catch (IOException e) {
            return -1;
        }
        return sum[0];
    }

    private static long directAndMapped() {
        long sum = 0;
        for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (b.getName().equals("direct") || b.getName().equals("mapped")) {
                sum += b.getMemoryUsed();
            }
        }
        return sum;
    }

    /**
     * Bytes this process has passed to write(2) and its relatives so far ({@code wchar} of /proc/self/io): the stores'
     * logs, flushes, compactions and manifests of both engines (the harness writes nothing else while it processes),
     * including what expiry writes; -1 where the kernel does not report it.
     */
    static long bytesWritten() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
                if (line.startsWith("wchar:")) {
                    return Long.parseLong(line.substring("wchar:".length()).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** VmRSS and VmHWM of this process in bytes (0 where /proc is absent). */
    static long[] rss() {
        long[] out = new long[2];
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    out[0] = kib(line);
                } else if (line.startsWith("VmHWM:")) {
                    out[1] = kib(line);
                }
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }

    private static long kib(String line) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
    }

    private static void gc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
    }

    private static long heapUsed() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static double min(List<Double> xs) {
        return xs.stream().mapToDouble(d -> d).min().orElse(Double.NaN);
    }

    private static double max(List<Double> xs) {
        return xs.stream().mapToDouble(d -> d).max().orElse(Double.NaN);
    }

    static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(Comparator.naturalOrder());
        int n = s.size();
        return n == 0 ? Double.NaN : n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    private void report(List<Run> runs) throws IOException {
        Files.createDirectories(reportDir);
        String base = "kafka-streams-" + topology;
        Map<String, Object> summary = new LinkedHashMap<>();
        StringBuilder md = new StringBuilder();
        md.append("# bench kafka-streams --topology ").append(topology).append("\n\n");
        md.append(String.format(
                Locale.ROOT,
                "%,d records over %,d keys (skewed), event time %.2f h, window %.2f min, retention %.1f min, "
                        + "session gap %.2f min; commit every %,d records per task, restore batches of %,d; bloomkv shared block cache %,d bytes%s; "
                        + "%d runs per engine and partition count, engines alternating, %s%s; machine: %s.%n%n",
                records,
                topologyKeys(),
                eventHours,
                windowMinutes,
                retentionMinutes,
                sessionGapMinutes,
                commitEvery,
                restoreBatch,
                bloomkvCacheBytes,
                bloomkvWriteBufferBytes > 0
                        ? String.format(Locale.ROOT, ", shared write buffer %,d bytes", bloomkvWriteBufferBytes)
                        : "",
                rounds,
                fork ? "each run a fresh JVM" : "one JVM",
                rateNote(),
                Machine.current().summary()));
        List<String> categories = new ArrayList<>();
        List<Double> ratioValues = new ArrayList<>();
        for (int p : partitions) {
            md.append("## ")
                    .append(p)
                    .append(p == 1 ? " partition" : " partitions")
                    .append("\n\n");
            md.append(
                    "| store | process rec/s (median, min-max) | restore rec/s (median, min-max) | heap MiB | direct+mapped MiB | "
                            + "store off-heap MiB | RSS MiB (peak) |\n|---|---:|---:|---:|---:|---:|---:|\n");
            Map<String, Object> atP = new LinkedHashMap<>();
            for (String e : engines) {
                List<Run> mine = runs.stream()
                        .filter(r -> r.engine().equals(e) && r.partitions() == p)
                        .toList();
                List<Double> pr = mine.stream().map(Run::processRecordsPerSec).toList();
                List<Double> rr = mine.stream().map(Run::restoreRecordsPerSec).toList();
                Map<String, Object> s = new LinkedHashMap<>();
                s.put("processMedian", median(pr));
                s.put("processMin", min(pr));
                s.put("processMax", max(pr));
                s.put("restoreMedian", median(rr));
                s.put("restoreMin", min(rr));
                s.put("restoreMax", max(rr));
                s.put(
                        "heapMiBMedian",
                        median(mine.stream().map(r -> mib(r.heapBytes())).toList()));
                s.put(
                        "directMiBMedian",
                        median(mine.stream().map(r -> mib(r.directBytes())).toList()));
                s.put(
                        "storeOffHeapMiBMedian",
                        median(mine.stream()
                                .map(r -> mib(r.storeOffHeapBytes()))
                                .toList()));
                s.put("storeOffHeapWhat", mine.isEmpty() ? "" : mine.get(0).storeOffHeapWhat());
                s.put(
                        "rssMiBMedian",
                        median(mine.stream().map(r -> mib(r.rssBytes())).toList()));
                s.put(
                        "rssPeakMiBMedian",
                        median(mine.stream().map(r -> mib(r.rssPeakBytes())).toList()));
                atP.put(e, s);
                md.append(String.format(
                        Locale.ROOT,
                        "| %s | %,.0f (%,.0f-%,.0f) | %,.0f (%,.0f-%,.0f) | %.1f | %.1f | %.1f (%s) | %.1f (%.1f) |%n",
                        e,
                        s.get("processMedian"),
                        s.get("processMin"),
                        s.get("processMax"),
                        s.get("restoreMedian"),
                        s.get("restoreMin"),
                        s.get("restoreMax"),
                        s.get("heapMiBMedian"),
                        s.get("directMiBMedian"),
                        s.get("storeOffHeapMiBMedian"),
                        s.get("storeOffHeapWhat"),
                        s.get("rssMiBMedian"),
                        s.get("rssPeakMiBMedian")));
            }
            md.append(costTable(runs, p));
            md.append(memoryTable(runs, p));
            if (engines.contains("rocksdb") && engines.contains("bloomkv")) {
                // Each round runs both engines back to back: the ratio per round, then the median of those ratios.
                List<Double> pr = new ArrayList<>();
                List<Double> rr = new ArrayList<>();
                for (Run b : runs) {
                    for (Run x : runs) {
                        if (b.engine().equals("bloomkv")
                                && x.engine().equals("rocksdb")
                                && x.round() == b.round()
                                && b.partitions() == p
                                && x.partitions() == p) {
                            pr.add(b.processRecordsPerSec() / x.processRecordsPerSec());
                            rr.add(b.restoreRecordsPerSec() / x.restoreRecordsPerSec());
                        }
                    }
                }
                md.append(String.format(
                        Locale.ROOT,
                        "%nRatios bloomkv / rocksdb per round: processing %s, median %.2fx (%.2f-%.2f); "
                                + "restore %s, median %.2fx (%.2f-%.2f).%n%n",
                        fmt(pr),
                        median(pr),
                        min(pr),
                        max(pr),
                        fmt(rr),
                        median(rr),
                        min(rr),
                        max(rr)));
                atP.put(
                        "ratios",
                        Map.of(
                                "process",
                                median(pr),
                                "restore",
                                median(rr),
                                "processPerRound",
                                pr,
                                "restorePerRound",
                                rr));
                categories.add("process p=" + p);
                ratioValues.add(median(pr));
                categories.add("restore p=" + p);
                ratioValues.add(median(rr));
            }
            summary.put("p" + p, atP);
        }
        md.append("![").append(base).append("](").append(base).append(".png)\n");
        Files.writeString(reportDir.resolve(base + ".md"), md.toString(), StandardCharsets.UTF_8);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("topology", topology);
        json.put("records", records);
        json.put("keys", topologyKeys());
        json.put("partitions", partitions);
        json.put("commitEvery", commitEvery);
        json.put("restoreBatch", restoreBatch);
        json.put("bloomkvCacheBytes", bloomkvCacheBytes);
        json.put("bloomkvWriteBufferBytes", bloomkvWriteBufferBytes);
        json.put("fork", fork);
        json.put("machine", Machine.current());
        json.put("runs", runs);
        json.put("summary", summary);
        new ObjectMapper()
                .enable(SerializationFeature.INDENT_OUTPUT)
                .writeValue(reportDir.resolve(base + ".json").toFile(), json);
        CategoryChart chart = new CategoryChartBuilder()
                .width(900)
                .height(480)
                .title("Kafka Streams " + topology + ": bloomkv / RocksDB records/s (median of " + rounds + " rounds)")
                .yAxisTitle("ratio (1.0 = same speed)")
                .build();
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setYAxisDecimalPattern("0.00");
        if (!categories.isEmpty()) {
            chart.addSeries("bloomkv / rocksdb", categories, ratioValues);
        } else {
            chart.addSeries("no pair of engines", List.of("-"), List.of(0.0));
        }
        BitmapEncoder.saveBitmap(chart, reportDir.resolve(base).toString(), BitmapEncoder.BitmapFormat.PNG);
        System.out.println();
        System.out.print(md);
        System.out.println("report: " + reportDir.resolve(base + ".md").toAbsolutePath());
    }

    /**
     * CPU time (whole process, and the stream thread alone: the stores' own work without the JIT, GC and background
     * threads) and stream-thread allocation per record, medians: figures load does not inflate.
     */
    private String costTable(List<Run> runs, int p) {
        StringBuilder md = new StringBuilder("\nPer record (medians): process CPU ns (every thread, GC and JIT "
                + "included), stream-thread CPU ns, stream-thread heap allocation B, bytes written to files while processing (logs, "
                + "flushes, compactions, expiry):\n\n| store | process CPU ns | "
                + "stream-thread CPU ns | process alloc B | written B | restore CPU ns | restore stream-thread CPU ns | "
                + "restore alloc B |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String e : engines) {
            List<Run> mine = runs.stream()
                    .filter(r -> r.engine().equals(e) && r.partitions() == p)
                    .toList();
            md.append(String.format(
                    Locale.ROOT,
                    "| %s | %,.0f | %,.0f | %,.0f | %,.0f | %,.0f | %,.0f | %,.0f |%n",
                    e,
                    median(mine.stream().map(Run::processCpuNanosPerRecord).toList()),
                    median(mine.stream()
                            .map(Run::processThreadCpuNanosPerRecord)
                            .toList()),
                    median(mine.stream().map(Run::processAllocBytesPerRecord).toList()),
                    median(mine.stream().map(Run::processWrittenBytesPerRecord).toList()),
                    median(mine.stream().map(Run::restoreCpuNanosPerRecord).toList()),
                    median(mine.stream()
                            .map(Run::restoreThreadCpuNanosPerRecord)
                            .toList()),
                    median(mine.stream().map(Run::restoreAllocBytesPerRecord).toList())));
        }
        return md.toString();
    }

    private static final List<String> NMT_COLUMNS = List.of("Java Heap", "Thread", "Other", "GC", "Class", "Code");

    /**
     * The memory breakdown at {@code p} partitions (medians over the rounds, MiB) and, when the input spans retention
     * periods, the resident set and disk after each period.
     */
    private String memoryTable(List<Run> runs, int p) {
        StringBuilder md = new StringBuilder();
        md.append("\nMemory after processing, stores open (medians, MiB; NMT columns need "
                + "`-XX:NativeMemoryTracking=summary`; RocksDB's native memory is in RssAnon - NMT total):\n\n"
                + "| store | heap used | heap committed | RssAnon | RssFile |");
        for (String c : NMT_COLUMNS) {
            md.append(" NMT ").append(c).append(" |");
        }
        md.append(" RssAnon - NMT total |\n|---|");
        md.append("---:|".repeat(5 + NMT_COLUMNS.size()));
        md.append('\n');
        int maxPeriods = 0;
        for (String e : engines) {
            List<MemoryBreakdown> ms = runs.stream()
                    .filter(r -> r.engine().equals(e) && r.partitions() == p && r.memory() != null)
                    .map(Run::memory)
                    .toList();
            md.append("| ").append(e).append(" |");
            for (java.util.function.ToLongFunction<MemoryBreakdown> f :
                    List.<java.util.function.ToLongFunction<MemoryBreakdown>>of(
                            MemoryBreakdown::heapUsedBytes,
                            MemoryBreakdown::heapCommittedBytes,
                            MemoryBreakdown::rssAnonBytes,
                            MemoryBreakdown::rssFileBytes)) {
                md.append(String.format(Locale.ROOT, " %.1f |", medianMib(ms, f)));
            }
            for (String c : NMT_COLUMNS) {
                md.append(String.format(
                        Locale.ROOT,
                        " %.1f |",
                        medianMib(ms, m -> m.nmtCommittedBytes().getOrDefault(c, 0L))));
            }
            boolean nmt = ms.stream().anyMatch(m -> m.nmtCommittedBytes().containsKey("Total"));
            md.append(
                    nmt
                            ? String.format(
                                    Locale.ROOT,
                                    " %.1f |",
                                    medianMib(
                                            ms,
                                            m -> m.rssAnonBytes()
                                                    - m.nmtCommittedBytes().getOrDefault("Total", 0L)))
                            : " - |");
            md.append('\n');
            for (Run r : runs) {
                if (r.engine().equals(e) && r.partitions() == p && r.periods() != null) {
                    maxPeriods = Math.max(maxPeriods, r.periods().size());
                }
            }
        }
        if (maxPeriods > 0) {
            md.append(
                    "\nAfter each retention period of event time (medians, MiB: RSS / the stores' own memory / disk of the state"
                            + " directories):\n\n| store |");
            for (int i = 1; i <= maxPeriods; i++) {
                md.append(' ').append(i).append(" |");
            }
            md.append("\n|---|").append("---:|".repeat(maxPeriods)).append('\n');
            for (String e : engines) {
                md.append("| ").append(e).append(" |");
                for (int i = 1; i <= maxPeriods; i++) {
                    final int period = i;
                    List<PeriodSample> at = runs.stream()
                            .filter(r -> r.engine().equals(e) && r.partitions() == p && r.periods() != null)
                            .flatMap(r -> r.periods().stream())
                            .filter(s -> s.period() == period)
                            .toList();
                    md.append(String.format(
                            Locale.ROOT,
                            " %.0f / %.1f / %.1f |",
                            median(at.stream().map(s -> mib(s.rssBytes())).toList()),
                            median(at.stream().map(s -> mib(s.storeBytes())).toList()),
                            median(at.stream().map(s -> mib(s.diskBytes())).toList())));
                }
                md.append('\n');
            }
        }
        return md.toString();
    }

    private static double medianMib(List<MemoryBreakdown> ms, java.util.function.ToLongFunction<MemoryBreakdown> f) {
        return median(ms.stream().map(m -> mib(f.applyAsLong(m))).toList());
    }

    /** One line of a run's memory breakdown, MiB. */
    static String describe(MemoryBreakdown m) {
        if (m == null) {
            return "not measured";
        }
        StringBuilder b = new StringBuilder(String.format(
                Locale.ROOT,
                "heap used %.1f / committed %.1f, RssAnon %.1f, RssFile %.1f, RssShmem %.1f",
                mib(m.heapUsedBytes()),
                mib(m.heapCommittedBytes()),
                mib(m.rssAnonBytes()),
                mib(m.rssFileBytes()),
                mib(m.rssShmemBytes())));
        if (!m.nmtCommittedBytes().isEmpty()) {
            b.append("; NMT committed:");
            m.nmtCommittedBytes().forEach((k, v) -> b.append(String.format(Locale.ROOT, " %s %.1f", k, mib(v))));
            long total = m.nmtCommittedBytes().getOrDefault("Total", 0L);
            // Memory malloc'd outside the JVM's accounting (RocksDB's memtables, block cache, table readers) shows
            // as RssAnon above the NMT total; committed JVM memory not yet touched makes the difference smaller.
            b.append(String.format(Locale.ROOT, "; RssAnon - NMT total %.1f", mib(m.rssAnonBytes() - total)));
        }
        return b.toString();
    }

    private static String periodsLine(List<PeriodSample> periods) {
        if (periods == null || periods.isEmpty()) {
            return "";
        }
        StringBuilder b =
                new StringBuilder("\n           per retention period (RSS / heap committed / store / disk MiB):");
        for (PeriodSample s : periods) {
            b.append(String.format(
                    Locale.ROOT,
                    " %d: %.0f/%.0f/%.1f/%.1f",
                    s.period(),
                    mib(s.rssBytes()),
                    mib(s.heapCommittedBytes()),
                    mib(s.storeBytes()),
                    mib(s.diskBytes())));
        }
        return b.toString();
    }

    private static String fmt(List<Double> xs) {
        StringBuilder b = new StringBuilder("[");
        for (double x : xs) {
            b.append(b.length() > 1 ? " " : "").append(String.format(Locale.ROOT, "%.2f", x));
        }
        return b.append("]").toString();
    }

    private static void deleteRecursively(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var all = Files.walk(p)) {
            for (Path f : all.sorted(Comparator.reverseOrder()).toList()) {
                File file = f.toFile();
                if (!file.delete() && file.exists()) {
                    throw new IOException("cannot delete " + f);
                }
            }
        }
    }
}
