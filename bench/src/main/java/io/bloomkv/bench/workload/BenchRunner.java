package io.bloomkv.bench.workload;

import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.cold.PageCacheEvictor;
import io.bloomkv.bench.engine.BenchEngine;
import io.bloomkv.bench.engine.EngineCounters;
import io.bloomkv.bench.engine.EngineFactory;
import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.engine.TableSummary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * Runs the configured workloads on every engine column, alternating engines (A B A B) in fresh
 * directories. Workloads that preload load the N keys in a seeded random order (batches of 1000),
 * flush and wait until the engine is idle, so every measured read goes to SSTables. Consecutive
 * read-only workloads (readrandom, readmissing, seekrandom) share one loaded database; right after
 * fillrandom they share its database (it loaded the same keys and values in the same order, and
 * was flushed and settled), which halves the loading time of a scale run.
 */
public final class BenchRunner {
    static final int PRELOAD_BATCH = 1000;
    /** The value version readupdate and readheavy write (the load writes version 0). */
    static final long UPDATE_VERSION = 3;
    /** The value version readwhilewriting's writer writes. */
    static final long WRITER_VERSION = 2;

    private static final int PROGRESS_EVERY = 1024;
    private static final long HIST_MAX_NANOS = 60_000_000_000L;

    private final BenchConfig cfg;
    private final KeySpace keys;
    /** The seekprefix layout, or null when --num is too small for it (validated when the workload is asked for). */
    private final PrefixLayout prefixes;

    private final ValueSource values;
    /** Checks each seekrandom and seekprefix answer, entry by entry. */
    private final SeekCheck seekCheck;

    private final ProgressSink progress;
    private final PageCacheEvictor evictor;
    /** The records family's values (~1 KB, 10 fields), same seed and compressibility as {@link #values}. */
    private final RecordSource records;
    /** Runs one workload of a {@code --reopen} session in a fresh process (null: not given, --reopen refused). */
    private final PhaseLauncher launcher;

    /**
     * Test seam: runs on the engine after the threads of a mix that inserts end, before its inserts are read back
     * ({@link #readBackInserts}); a test drops or changes inserted records through it. Does nothing otherwise.
     */
    @FunctionalInterface
    interface EngineHook {
        void run(BenchEngine engine) throws IOException;
    }

    EngineHook beforeInsertsReadBack = engine -> {};

    private int sessions;
    private int run;
    /** The phases run now are the unsettled pass of {@code --no-settle}: no phase warm-up, names end in -unsettled. */
    private boolean unsettled;
    /** A write phase does not flush and settle after its timed part ({@code --no-settle} before an unsettled pass). */
    private boolean skipSettle;

    /**
     * Runs one workload of a {@code --reopen} session in a fresh JVM on the database directory the previous phase
     * left (BenchCommand launches the child with the parent's JVM flags and arguments).
     */
    @FunctionalInterface
    public interface PhaseLauncher {
        /** The phases the child measured for {@code w} on {@code spec}'s database at {@code dir} in repetition {@code run}. */
        List<PhaseResult> run(Workload w, EngineSpec spec, Path dir, int run) throws IOException;
    }

    /** @param evictor required when {@code cfg.cold()}; ignored otherwise */
    public BenchRunner(BenchConfig cfg, ProgressSink progress, PageCacheEvictor evictor) {
        this(cfg, progress, evictor, null);
    }

    /** @param launcher runs the phases of a {@code --reopen} run in fresh processes (required when {@code cfg.reopen()}) */
    public BenchRunner(BenchConfig cfg, ProgressSink progress, PageCacheEvictor evictor, PhaseLauncher launcher) {
        this.cfg = cfg;
        this.launcher = launcher;
        this.records = new RecordSource(cfg.seed(), cfg.valueCompressibility());
        if (cfg.reopen() && launcher == null) {
            throw new IllegalArgumentException("--reopen needs a launcher of child processes");
        }
        this.keys = new KeySpace(cfg.num(), cfg.keySize());
        this.prefixes = cfg.workloads().contains(Workload.SEEKPREFIX) ? new PrefixLayout(cfg.num()) : null;
        this.values = new ValueSource(cfg.valueSize(), cfg.seed(), cfg.valueCompressibility());
        this.seekCheck = new SeekCheck(keys, prefixes, values);
        this.progress = progress;
        this.evictor = evictor;
        if (cfg.cold() && evictor == null) {
            throw new IllegalArgumentException("cold mode needs a PageCacheEvictor");
        }
    }

    /** Engine columns in run order: for each filter mode, each engine (A B A B). */
    public static List<EngineSpec> columns(BenchConfig cfg) {
        List<EngineSpec> out = new ArrayList<>();
        for (boolean f : cfg.filterModes()) {
            for (String e : cfg.engines()) {
                out.add(new EngineSpec(e, f));
            }
        }
        return out;
    }

    /** Workloads grouped into database sessions: runs of read-only workloads share one. */
    public static List<List<Workload>> sessions(List<Workload> workloads) {
        List<List<Workload>> out = new ArrayList<>();
        List<Workload> current = null;
        for (Workload w : workloads) {
            // A fillrandom leaves exactly the preloaded state (same keys, values, order), so reads after it reuse its
            // database.
            // seekprefix loads its own key layout on engines with a prefix extractor: it shares with nothing.
            // The records family: each workload runs on the database the previous one left.
            boolean records = w.records()
                    && w != Workload.RECORDSLOAD
                    && current != null
                    && current.get(0).records();
            if (records
                    || !w.records()
                            && w.readOnly()
                            && !w.ownLayout()
                            && current != null
                            && !current.get(0).ownLayout()
                            && !current.get(0).records()
                            && (current.get(0).readOnly() || current.get(0) == Workload.FILLRANDOM)) {
                current.add(w);
            } else {
                current = new ArrayList<>();
                current.add(w);
                out.add(current);
            }
        }
        return out;
    }

    /** Operations the whole run will do (for the progress bar). */
    public static long plannedOps(BenchConfig cfg) {
        long perColumn = 0;
        for (List<Workload> s : sessions(cfg.workloads())) {
            if (s.get(0).preloads()) {
                perColumn += cfg.num();
            }
            boolean unsettledPass =
                    !cfg.reopen() && cfg.noSettle() && s.stream().anyMatch(Workload::readOnly);
            for (Workload w : s) {
                perColumn += plannedOps(cfg, w) * (unsettledPass && w.readOnly() ? 2 : 1);
            }
        }
        return perColumn * columns(cfg).size() * cfg.repeat();
    }

    /** Operations one run of {@code w} does on one engine (preload excluded). */
    static long plannedOps(BenchConfig cfg, Workload w) {
        return switch (w) {
            case FILLSEQ, FILLRANDOM, OVERWRITE, RECORDSLOAD -> cfg.num();
            case READRANDOM, READMISSING, READWHILEWRITING -> cfg.reads();
            case SEEKRANDOM -> 2 * cfg.seeks();
            case DELETERANDOM -> cfg.num() / 2 + Math.min(cfg.reads(), cfg.num() / 2);
            case READUPDATE, READHEAVY -> cfg.reads();
            case MULTIGETRANDOM, MULTIGETMISSING -> cfg.reads() / MULTIGET_BATCH * MULTIGET_BATCH;
            case SEEKPREFIX -> 2 * cfg.seeks();
            case MERGERANDOM -> 2 * cfg.num() + cfg.reads();
            case BULKLOAD -> cfg.num() + cfg.reads();
            case DELETERANGE -> cfg.num() / 100 / DELETE_RANGE_KEYS + 2 * cfg.reads();
            case RECORDSREAD, RECORDSLATEST, RECORDSRMW, RECORDSUPDATE, RECORDSREADHEAVY, RECORDSSCAN -> cfg.reads();
        };
    }

    public List<PhaseResult> run() throws IOException {
        List<PhaseResult> results = new ArrayList<>();
        Files.createDirectories(cfg.workDir());
        warmUp();
        for (run = 0; run < cfg.repeat(); run++) {
            runOnce(results);
        }
        return results;
    }

    private void runOnce(List<PhaseResult> results) throws IOException {
        for (List<Workload> session : sessions(cfg.workloads())) {
            if (cfg.reopen()) {
                for (EngineSpec spec : columns(cfg)) {
                    reopenSession(session, spec, results);
                }
                continue;
            }
            if (cfg.pairedReads() && session.stream().anyMatch(BenchRunner::pairable)) {
                for (boolean filters : cfg.filterModes()) {
                    pairedSession(
                            session,
                            columns(cfg).stream()
                                    .filter(c -> c.filters() == filters)
                                    .toList(),
                            results);
                }
                continue;
            }
            for (EngineSpec spec : columns(cfg)) {
                Path dir = sessionDir(session, spec);
                deleteRecursively(dir);
                try (BenchEngine engine = openFor(session.get(0), spec, dir)) {
                    runSession(session, spec, engine, results);
                } finally {
                    deleteRecursively(dir);
                }
            }
        }
    }

    /** Opens {@code spec}'s engine on {@code dir} for a session starting with {@code first} (seekprefix: its prefix extractor). */
    private BenchEngine openFor(Workload first, EngineSpec spec, Path dir) throws IOException {
        return first.ownLayout()
                ? EngineFactory.open(
                        spec.engine(),
                        dir,
                        EngineFactory.settings(spec, cfg).withPrefixLength(PrefixLayout.PREFIX_LENGTH))
                : EngineFactory.open(spec, dir, cfg);
    }

    /**
     * One session on one open engine: its preload (if it preloads), then its workloads in order. Under
     * {@code --no-settle} a session with read-only workloads first runs them unsettled (right after the load or the
     * fill, without flush, settle or phase warm-up; phases named {@code -unsettled}), then settles and runs them again.
     */
    private void runSession(List<Workload> session, EngineSpec spec, BenchEngine engine, List<PhaseResult> results)
            throws IOException {
        boolean unsettledPass = cfg.noSettle() && session.stream().anyMatch(Workload::readOnly);
        if (session.get(0).preloads()) {
            preloadSession(
                    session.get(0),
                    spec,
                    engine,
                    !unsettledPass && !(cfg.noSettle() && session.get(0).records()));
        }
        List<Workload> rest = session;
        if (unsettledPass) {
            int k = 0;
            if (!session.get(0).readOnly()) { // a fillrandom whose database the reads share
                skipSettle = true;
                try {
                    results.addAll(runWorkload(session.get(0), spec, engine));
                } finally {
                    skipSettle = false;
                }
                k = 1;
            }
            rest = session.subList(k, session.size());
            unsettled = true;
            try {
                for (Workload w : rest) {
                    if (w.readOnly()) {
                        results.addAll(runWorkload(w, spec, engine));
                    }
                }
            } finally {
                unsettled = false;
            }
            engine.flushAndSettle();
            if (session.get(0).preloads() && cfg.compact()) {
                engine.compactAll();
            }
        }
        for (Workload w : rest) {
            results.addAll(runWorkload(w, spec, engine));
        }
    }

    /** A session's untimed preload: the records family's records, else the keys (seekprefix: its layout). */
    private void preloadSession(Workload first, EngineSpec spec, BenchEngine engine, boolean settle)
            throws IOException {
        if (first.records()) {
            progress.task(spec.label() + " preload");
            preload(engine, keys::loadedId, id -> records.value(id, 0));
            if (settle) {
                engine.flushAndSettle();
            }
        } else if (settle) {
            preloadAndSettle(spec, engine, first.ownLayout() ? prefixes::loadedId : keys::loadedId);
        } else {
            progress.task(spec.label() + " preload");
            preload(engine, first.ownLayout() ? prefixes::loadedId : keys::loadedId);
        }
    }

    /**
     * A session under {@code --reopen}: the untimed preload (if any) in this process, then each workload in a fresh
     * process ({@link #launcher}) on the database the previous one left. Nothing is flushed between phases beyond
     * what each engine does on close, so a child meets the WAL its parent left.
     */
    private void reopenSession(List<Workload> session, EngineSpec spec, List<PhaseResult> results) throws IOException {
        Path dir = sessionDir(session, spec);
        deleteRecursively(dir);
        try {
            if (session.get(0).preloads()) {
                try (BenchEngine engine = openFor(session.get(0), spec, dir)) {
                    preloadSession(session.get(0), spec, engine, !cfg.noSettle());
                }
            }
            for (Workload w : session) {
                progress.task(spec.label() + " " + w + " (fresh process)");
                results.addAll(launcher.run(w, spec, dir, run));
                progress.step(plannedOps(cfg, w));
            }
        } finally {
            deleteRecursively(dir);
        }
    }

    /**
     * The child side of {@code --reopen}: opens {@code spec}'s engine on the existing database {@code dir}, runs
     * {@code w} once (repetition {@code run}) and closes it. The configuration should be {@link BenchConfig#coldChild}.
     */
    public List<PhaseResult> runChildPhase(Workload w, EngineSpec spec, Path dir, int run) throws IOException {
        this.run = run;
        try (BenchEngine engine = openFor(w, spec, dir)) {
            return runWorkload(w, spec, engine);
        }
    }

    /** A fresh directory name for {@code spec}'s database in {@code session} (numbered in run order). */
    private Path sessionDir(List<Workload> session, EngineSpec spec) {
        return cfg.workDir().resolve(String.format("%02d-%s-%s", sessions++, session.get(0), spec.label()));
    }

    /** A session's preload on one engine: the keys, a flush, idle compactions, and with {@code --compact} a full compaction. */
    private void preloadAndSettle(
            EngineSpec spec, BenchEngine engine, java.util.function.LongUnaryOperator idOfLoadIndex)
            throws IOException {
        progress.task(spec.label() + " preload");
        preload(engine, idOfLoadIndex);
        engine.flushAndSettle();
        if (cfg.compact()) {
            engine.compactAll();
        }
    }

    /** Workloads that {@code --paired-reads} interleaves between the engines: point gets of a loaded database. */
    static boolean pairable(Workload w) {
        return w == Workload.READRANDOM || w == Workload.READMISSING;
    }

    /**
     * One session under {@code --paired-reads}: every engine of {@code specs} (one filter mode) opens its fresh
     * database and keeps it open to the end of the session. A preload, and every workload that is not
     * {@link #pairable}, runs on one engine after the other as without pairing; each pairable read phase runs on
     * all of them at once ({@link #pairedReads}).
     */
    private void pairedSession(List<Workload> session, List<EngineSpec> specs, List<PhaseResult> results)
            throws IOException {
        List<BenchEngine> engines = new ArrayList<>();
        List<Path> dirs = new ArrayList<>();
        Throwable failure = null;
        try {
            for (EngineSpec spec : specs) {
                Path dir = sessionDir(session, spec);
                deleteRecursively(dir);
                dirs.add(dir);
                engines.add(EngineFactory.open(spec, dir, cfg));
            }
            if (session.get(0).preloads()) {
                for (int e = 0; e < engines.size(); e++) {
                    preloadAndSettle(specs.get(e), engines.get(e), keys::loadedId);
                }
            }
            for (Workload w : session) {
                if (pairable(w)) {
                    results.addAll(pairedReads(w, specs, engines));
                } else {
                    for (int e = 0; e < engines.size(); e++) {
                        results.addAll(runWorkload(w, specs.get(e), engines.get(e)));
                    }
                }
            }
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            IOException closeFailure = closeAll(engines, failure);
            for (Path dir : dirs) {
                deleteRecursively(dir);
            }
            if (closeFailure != null) {
                throw closeFailure;
            }
        }
    }

    /**
     * Closes every engine. A close that fails is added to {@code failure} as suppressed when there is one; otherwise
     * the first is returned (with the later ones suppressed) for the caller to throw.
     */
    private static IOException closeAll(List<BenchEngine> engines, Throwable failure) {
        IOException first = null;
        for (BenchEngine engine : engines) {
            try {
                engine.close();
            } catch (IOException | RuntimeException e) {
                if (failure != null) {
                    failure.addSuppressed(e);
                } else if (first == null) {
                    first = e instanceof IOException io
                            ? io
                            : new IOException("closing " + engine.name() + " failed", e);
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        return first;
    }

    /** A readrandom or readmissing phase on several open engines at once, in {@link BenchConfig#PAIRED_SLICES} slices. */
    private List<PhaseResult> pairedReads(Workload w, List<EngineSpec> specs, List<BenchEngine> engines)
            throws IOException {
        return readPhase(w, w.dbBenchName(), specs, engines, w == Workload.READRANDOM, null, BenchConfig.PAIRED_SLICES);
    }

    /**
     * A read phase ({@link #reads}) on one engine or on several open at once: each engine first runs its phase warm-up,
     * then the phase's gets (the same keys on every engine) run in {@code slices} slices, slice s on the engines in
     * column order when s is even and in reverse order when it is odd (A B, B A, ...). An engine's latencies, counts
     * and counters are its slices' together, and its elapsed time is the sum of its slices' times, so a paired run's
     * ops/s is comparable with an unpaired one's while slow minutes of the machine fall on both engines.
     */
    private List<PhaseResult> readPhase(
            Workload w,
            String phase,
            List<EngineSpec> specs,
            List<BenchEngine> engines,
            boolean present,
            int[] fromLoadIndices,
            int slices)
            throws IOException {
        int n = engines.size();
        long total = fromLoadIndices == null ? cfg.reads() : Math.min(cfg.reads(), fromLoadIndices.length);
        long[] warmIds = phaseWarmUpIds(present ? 0 : 1);
        byte[][] warmKeys = keysOf(warmIds);
        for (int e = 0; e < n; e++) {
            if (n > 1) {
                progress.task(specs.get(e).label() + " " + phase + " warm-up");
            }
            warmUpLoop(getLoop(engines.get(e), warmKeys, warmIds, present, -1), warmIds.length, WARM_UP_CHUNK);
        }
        if (n > 1) {
            progress.task("paired " + phase);
        }
        String[] cold = new String[n];
        TableSummary[] tables = new TableSummary[n];
        EngineCounters[] before = new EngineCounters[n];
        for (int e = 0; e < n; e++) {
            cold[e] = coldStart(engines.get(e));
            tables[e] = engines.get(e).tables();
            before[e] = engines.get(e).counters();
        }
        long[] ids = readIds(phase, present, total, fromLoadIndices);
        byte[][] ks = keysOf(ids);
        Worker[] loops = new Worker[n];
        Histogram[] hist = new Histogram[n];
        long[] elapsed = new long[n];
        long[][] counts = new long[n][4];
        for (int e = 0; e < n; e++) {
            loops[e] = getLoop(engines.get(e), ks, ids, present, -1);
            hist[e] = histogram();
        }
        int parts = (int) Math.max(1, Math.min(slices, total));
        for (int s = 0; s < parts; s++) {
            long from = total * s / parts;
            long length = total * (s + 1) / parts - from;
            for (int e : pairedOrder(s, n)) {
                Parallel p = parallel(from, length, 1, loops[e]);
                hist[e].add(p.hist);
                elapsed[e] += p.elapsed;
                for (int i = 0; i < 4; i++) {
                    counts[e][i] += p.counts[i];
                }
            }
        }
        List<PhaseResult> out = new ArrayList<>();
        for (int e = 0; e < n; e++) {
            EngineCounters delta = engines.get(e).counters().minus(before[e]);
            double[] predicted = !present && fromLoadIndices == null
                    ? tables[e].predictAbsent(ks)
                    : new double[] {Double.NaN, Double.NaN};
            out.add(result(
                    w,
                    phase,
                    specs.get(e),
                    "read",
                    hist[e],
                    total,
                    elapsed[e],
                    counts[e][0],
                    counts[e][1],
                    counts[e][2],
                    0,
                    delta,
                    tables[e],
                    0,
                    cold[e],
                    predicted));
        }
        return out;
    }

    /** The engines' order in slice {@code slice} of a paired read phase: column order, reversed in odd slices. */
    static int[] pairedOrder(int slice, int engines) {
        int[] order = new int[engines];
        for (int k = 0; k < engines; k++) {
            order[k] = slice % 2 == 0 ? k : engines - 1 - k;
        }
        return order;
    }

    /**
     * Untimed: on each engine, write, flush, read (present and absent) and scan {@code cfg.warmup()}
     * operations in a scratch directory, so the first measured phase does not pay for JIT compilation. Not under
     * {@code --reopen}: every phase is measured in a fresh process of its own, which this one's JIT does not reach.
     */
    private void warmUp() throws IOException {
        if (cfg.warmup() == 0 || cfg.reopen()) {
            return;
        }
        int n = (int) Math.min(cfg.warmup(), keys.num());
        for (EngineSpec spec : columns(cfg)) {
            Path dir = cfg.workDir().resolve("warmup-" + spec.label());
            deleteRecursively(dir);
            progress.task(spec.label() + " warm-up");
            try (BenchEngine engine = EngineFactory.open(spec, dir, cfg)) {
                SplittableRandom rnd = new SplittableRandom(cfg.seed() ^ 0x0_3A2B_1C00L);
                for (int i = 0; i < n; i++) {
                    long id = keys.loadedId(rnd.nextLong(keys.num()));
                    engine.put(keys.key(id), values.value(id, 0));
                }
                engine.flushAndSettle();
                for (int i = 0; i < n; i++) {
                    engine.get(keys.key(keys.loadedId(rnd.nextLong(keys.num()))));
                    engine.get(keys.key(keys.missingId(rnd.nextLong(keys.missingCount()))));
                    if ((i & 63) == 0) {
                        engine.scan(keys.key(keys.loadedId(rnd.nextLong(keys.num()))), 20);
                    }
                }
            } finally {
                deleteRecursively(dir);
            }
            if (cfg.workloads().contains(Workload.BULKLOAD)) {
                warmUpBulkLoad(spec, n);
            }
        }
    }

    /**
     * Untimed: {@code n} sorted keys through the engine's bulk-load path (table file writer, finish, ingest) into a
     * fresh scratch database, twice, through the measured phase's own loop ({@link #bulkPuts}), so the first measured
     * bulkload, like every later one, runs compiled code: the global warm-up above exercises puts, flushes and reads
     * only, and the bulk-load path of a JVM engine would otherwise be compiled during the first measured run (RocksDB's
     * is native code from the start). The loop of a method entered once per phase is compiled on stack replacement;
     * that compiled loop is reused by later calls only if it is the same method. The second load runs the code once
     * more from a fresh writer, so its first put (a branch the first load took only while interpreted) is in the
     * profile the compiler uses, and does not send the first measured load back to the interpreter.
     */
    private void warmUpBulkLoad(EngineSpec spec, int n) throws IOException {
        for (int round = 0; round < 2; round++) {
            Path dir = cfg.workDir().resolve("warmup-bulkload-" + spec.label());
            Path file = cfg.workDir().resolve("warmup-bulkload-" + spec.label() + ".sst");
            deleteRecursively(dir);
            Files.deleteIfExists(file);
            try (BenchEngine engine = EngineFactory.open(spec, dir, cfg);
                    BenchEngine.BulkLoad load = engine.bulkLoad(file)) {
                bulkPuts(load, n, histogram());
                load.ingest();
            } finally {
                Files.deleteIfExists(file);
                deleteRecursively(dir);
            }
        }
    }

    /**
     * The bulkload phase's loop: the first {@code count} keys in key order into {@code load}, each put's latency into
     * {@code h}. The same code for the warm-up and the measured phase (progress is reported by the caller, after the
     * loop: a branch the warm-up never took would send the first measured run back to the interpreter).
     */
    private void bulkPuts(BenchEngine.BulkLoad load, int count, Histogram h) throws IOException {
        for (int i = 0; i < count; i++) {
            long id = keys.loadedId(i);
            byte[] k = keys.key(id);
            byte[] v = values.value(id, 0);
            long t0 = System.nanoTime();
            load.put(k, v);
            h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
        }
    }

    /** Loads the N keys in the fillrandom order, load index j as id {@code idOfLoadIndex(j)}, in batches. */
    private void preload(BenchEngine engine, java.util.function.LongUnaryOperator idOfLoadIndex) throws IOException {
        preload(engine, idOfLoadIndex, id -> values.value(id, 0));
    }

    /** {@link #preload(BenchEngine, java.util.function.LongUnaryOperator)} with the value of each id from {@code valueOf}. */
    private void preload(
            BenchEngine engine,
            java.util.function.LongUnaryOperator idOfLoadIndex,
            java.util.function.LongFunction<byte[]> valueOf)
            throws IOException {
        int[] order = keys.shuffledLoadOrder(cfg.seed());
        List<byte[]> ks = new ArrayList<>(PRELOAD_BATCH);
        List<byte[]> vs = new ArrayList<>(PRELOAD_BATCH);
        for (int j : order) {
            long id = idOfLoadIndex.applyAsLong(j);
            ks.add(keys.key(id));
            vs.add(valueOf.apply(id));
            if (ks.size() == PRELOAD_BATCH) {
                engine.putAll(ks, vs);
                progress.step(ks.size());
                ks.clear();
                vs.clear();
            }
        }
        if (!ks.isEmpty()) {
            engine.putAll(ks, vs);
            progress.step(ks.size());
        }
    }

    private List<PhaseResult> runWorkload(Workload w, EngineSpec spec, BenchEngine engine) throws IOException {
        String name = w.dbBenchName();
        progress.task(spec.label() + " " + name);
        return switch (w) {
            case FILLSEQ -> List.of(fill(w, spec, engine, null));
            case FILLRANDOM -> List.of(fill(w, spec, engine, keys.shuffledLoadOrder(cfg.seed())));
            case OVERWRITE -> List.of(overwrite(spec, engine));
            case READRANDOM -> List.of(reads(w, name, spec, engine, true, null));
            case READMISSING -> List.of(reads(w, name, spec, engine, false, null));
            case READWHILEWRITING -> readWhileWriting(spec, engine);
            case SEEKRANDOM -> List.of(seeks(spec, engine, 10), seeks(spec, engine, 100));
            case DELETERANDOM -> deletes(spec, engine);
            case READUPDATE -> List.of(mixed(w, spec, engine, 50, true));
            case READHEAVY -> List.of(mixed(w, spec, engine, 5, false));
            case MULTIGETRANDOM -> List.of(multiGets(w, name, spec, engine, true));
            case MULTIGETMISSING -> List.of(multiGets(w, name, spec, engine, false));
            case SEEKPREFIX -> List.of(prefixSeeks(spec, engine, true), prefixSeeks(spec, engine, false));
            case MERGERANDOM -> merges(spec, engine);
            case DELETERANGE -> rangeDeletes(spec, engine);
            case RECORDSLOAD -> List.of(recordsLoad(spec, engine));
            case RECORDSREAD, RECORDSLATEST, RECORDSRMW, RECORDSUPDATE, RECORDSREADHEAVY, RECORDSSCAN ->
                List.of(recordsMix(w, spec, engine));
            case BULKLOAD -> List.of(bulkLoad(spec, engine), reads(w, "bulkload-read", spec, engine, true, null));
        };
    }

    /**
     * The keys in key order into one table file outside the database, then ingested: each put's latency recorded,
     * the elapsed time from the first put to the end of the ingestion (and the settling after it, as for fillseq).
     */
    private PhaseResult bulkLoad(EngineSpec spec, BenchEngine engine) throws IOException {
        EngineCounters before = engine.counters();
        Path file = cfg.workDir().resolve("bulkload-" + spec.label() + "-" + run + ".sst");
        Files.deleteIfExists(file);
        Histogram h = histogram();
        long start = System.nanoTime();
        try (BenchEngine.BulkLoad load = engine.bulkLoad(file)) {
            bulkPuts(load, Math.toIntExact(keys.num()), h);
            load.ingest();
        } finally {
            Files.deleteIfExists(file);
        }
        long elapsed = System.nanoTime() - start;
        progress.step(keys.num());
        return afterWrite(
                Workload.BULKLOAD,
                "bulkload",
                spec,
                engine,
                before,
                h,
                keys.num(),
                elapsed,
                keys.num() * rowBytes(),
                0);
    }

    private PhaseResult fill(Workload w, EngineSpec spec, BenchEngine engine, int[] order) throws IOException {
        EngineCounters before = engine.counters();
        Histogram h = histogram();
        long start = System.nanoTime();
        for (int i = 0; i < keys.num(); i++) {
            long id = keys.loadedId(order == null ? i : order[i]);
            byte[] k = keys.key(id);
            byte[] v = values.value(id, 0);
            long t0 = System.nanoTime();
            engine.put(k, v);
            h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
            tick(i);
        }
        long elapsed = System.nanoTime() - start;
        progress.step(keys.num() % PROGRESS_EVERY);
        return afterWrite(w, w.dbBenchName(), spec, engine, before, h, keys.num(), elapsed, keys.num() * rowBytes(), 0);
    }

    private PhaseResult overwrite(EngineSpec spec, BenchEngine engine) throws IOException {
        EngineCounters before = engine.counters();
        KeyGenerator rnd = distribution().generator(cfg.seed() ^ 0x0_5EED_0001L);
        Histogram h = histogram();
        long start = System.nanoTime();
        for (int i = 0; i < keys.num(); i++) {
            long id = keys.loadedId(rnd.nextIndex());
            byte[] k = keys.key(id);
            byte[] v = values.value(id, 1);
            long t0 = System.nanoTime();
            engine.put(k, v);
            h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
            tick(i);
        }
        long elapsed = System.nanoTime() - start;
        progress.step(keys.num() % PROGRESS_EVERY);
        return afterWrite(
                Workload.OVERWRITE,
                "overwrite",
                spec,
                engine,
                before,
                h,
                keys.num(),
                elapsed,
                keys.num() * rowBytes(),
                0);
    }

    private List<PhaseResult> deletes(EngineSpec spec, BenchEngine engine) throws IOException {
        int[] order = keys.shuffledLoadOrder(cfg.seed() ^ 0x0_DE1E_7E00L);
        int count = (int) (keys.num() / 2);
        EngineCounters before = engine.counters();
        Histogram h = histogram();
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            byte[] k = keys.key(keys.loadedId(order[i]));
            long t0 = System.nanoTime();
            engine.delete(k);
            h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
            tick(i);
        }
        long elapsed = System.nanoTime() - start;
        progress.step(count % PROGRESS_EVERY);
        PhaseResult del = afterWrite(
                Workload.DELETERANDOM,
                "deleterandom",
                spec,
                engine,
                before,
                h,
                count,
                elapsed,
                (long) count * cfg.keySize(),
                0);
        int[] deleted = Arrays.copyOf(order, count);
        PhaseResult read = reads(Workload.DELETERANDOM, "deleterandom-read", spec, engine, false, deleted);
        return List.of(del, read);
    }

    /** One counter increment: 1 as 8 little-endian bytes (the add operators' operand). */
    private static final byte[] ONE = {1, 0, 0, 0, 0, 0, 0, 0};

    /**
     * mergerandom: N increments by merge, N by read-modify-write (get, add, put: what an engine without merge operators
     * makes a counter cost), then gets of random existing keys that read the counters back (merging operands left).
     * Each get is checked against the increments its key got ({@link #mergeIncrements}).
     */
    private List<PhaseResult> merges(EngineSpec spec, BenchEngine engine) throws IOException {
        List<PhaseResult> out = new ArrayList<>();
        for (boolean rmw : new boolean[] {false, true}) {
            KeyGenerator rnd = distribution().generator(mergeSeed(rmw));
            EngineCounters before = engine.counters();
            Histogram h = histogram();
            long start = System.nanoTime();
            for (int i = 0; i < keys.num(); i++) {
                byte[] k = keys.key(keys.loadedId(rnd.nextIndex()));
                long t0 = System.nanoTime();
                if (rmw) {
                    byte[] v = engine.get(k);
                    engine.put(k, addOne(v));
                } else {
                    engine.merge(k, ONE);
                }
                h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
                tick(i);
            }
            long elapsed = System.nanoTime() - start;
            progress.step(keys.num() % PROGRESS_EVERY);
            out.add(afterWrite(
                    Workload.MERGERANDOM,
                    rmw ? "mergerandom-rmw" : "mergerandom",
                    spec,
                    engine,
                    before,
                    h,
                    keys.num(),
                    elapsed,
                    keys.num() * (cfg.keySize() + 8L),
                    0));
        }
        // Gets of random existing keys: each must find its counter (or, never incremented, its loaded value).
        long total = cfg.reads();
        long[] ids = existingIds("mergerandom-read", total);
        byte[][] ks = keysOf(ids);
        // Untimed: the count each read key must hold, the two write phases' key choices replayed.
        int[] increments = mergeIncrements();
        int[] expected = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            expected[i] = increments[Math.toIntExact(keys.loadedIndex(ids[i]))];
        }
        Worker loop = (from, n, h, counts) -> {
            for (int i = (int) from; i < from + n; i++) {
                long t0 = System.nanoTime();
                byte[] v = engine.get(ks[i]);
                h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
                if (v == null) {
                    counts[1]++;
                    counts[2]++;
                } else {
                    counts[0]++;
                    if (!mergedCountMatches(v, ids[i], expected[i])) {
                        counts[2]++;
                    }
                }
                tick(i - from);
            }
        };
        warmUpLoop(loop, Math.min(total, cfg.phaseWarmup()), WARM_UP_CHUNK);
        String cold = coldStart(engine);
        TableSummary tables = engine.tables();
        EngineCounters before = engine.counters();
        Parallel p = parallel(total, loop);
        out.add(result(
                Workload.MERGERANDOM,
                "mergerandom-read",
                spec,
                "read",
                p.hist(),
                total,
                p.elapsed(),
                p.counts()[0],
                p.counts()[1],
                p.counts()[2],
                0,
                engine.counters().minus(before),
                tables,
                0,
                cold,
                new double[] {Double.NaN, Double.NaN}));
        return out;
    }

    /** The seed of mergerandom's key choices: its merges', or its read-modify-writes' ({@code rmw}). */
    private long mergeSeed(boolean rmw) {
        return cfg.seed() ^ (rmw ? 0x0_3E26_0002L : 0x0_3E26_0001L);
    }

    /**
     * The increments mergerandom's two write phases gave each key, by load index: their key choices replayed (both
     * phases are single-threaded, so each draws its keys in one known order). A merge and a read-modify-write add 1 alike.
     */
    private int[] mergeIncrements() {
        int[] counts = new int[Math.toIntExact(keys.num())];
        for (boolean rmw : new boolean[] {false, true}) {
            KeyGenerator rnd = distribution().generator(mergeSeed(rmw));
            for (int i = 0; i < keys.num(); i++) {
                counts[Math.toIntExact(rnd.nextIndex())]++;
            }
        }
        return counts;
    }

    /**
     * Whether a mergerandom-read answer is right for {@code id}, incremented {@code increments} times: never
     * incremented, its loaded value; else an 8-byte counter of the increments, on top of the loaded value where that is
     * itself a counter (an 8-byte --value-size; the add operators and {@link #addOne} count any other value as 0).
     */
    private boolean mergedCountMatches(byte[] v, long id, int increments) {
        if (increments == 0) {
            return values.matches(v, id, 0);
        }
        long base = cfg.valueSize() == 8 ? counter(values.value(id, 0)) : 0;
        return v.length == 8 && counter(v) == base + increments;
    }

    /** {@code v} as an unsigned 64-bit little-endian counter (0 unless it is 8 bytes, as the add operators read it). */
    static long counter(byte[] v) {
        long c = 0;
        if (v != null && v.length == 8) {
            for (int i = 7; i >= 0; i--) {
                c = (c << 8) | (v[i] & 0xFFL);
            }
        }
        return c;
    }

    /** {@code v} as an unsigned 64-bit little-endian counter plus one (a missing or non-counter value counts as 0). */
    static byte[] addOne(byte[] v) {
        long c = counter(v) + 1;
        byte[] out = new byte[8];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) (c >>> (8 * i));
        }
        return out;
    }

    /** Consecutive loaded keys one range deletion of the deleterange workload removes. */
    static final int DELETE_RANGE_KEYS = 100;

    /**
     * deleterange: 1% of the loaded keys removed as ranges of {@link #DELETE_RANGE_KEYS} consecutive keys (seeded
     * starts, non-overlapping), then gets inside the ranges (must be absent) and outside them (must be present).
     */
    private List<PhaseResult> rangeDeletes(EngineSpec spec, BenchEngine engine) throws IOException {
        int ranges = (int) Math.max(1, keys.num() / 100 / DELETE_RANGE_KEYS);
        int slots = (int) (keys.num() / DELETE_RANGE_KEYS);
        int[] slotOrder = new KeySpace(Math.max(2, slots), 8).shuffledLoadOrder(cfg.seed() ^ 0x0_DE1A_0000L);
        boolean[] deleted = new boolean[Math.toIntExact(keys.num())];
        EngineCounters before = engine.counters();
        Histogram h = histogram();
        long start = System.nanoTime();
        for (int r = 0; r < ranges && r < slots; r++) {
            long first = (long) slotOrder[r] * DELETE_RANGE_KEYS; // load index: ids 2*first .. 2*(first+len)-2
            long end = Math.min(keys.num(), first + DELETE_RANGE_KEYS);
            long t0 = System.nanoTime();
            engine.deleteRange(
                    keys.key(keys.loadedId(first)),
                    end < keys.num() ? keys.key(keys.loadedId(end)) : keys.key(keys.loadedId(keys.num() - 1) + 1));
            h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
            for (long j = first; j < end; j++) {
                deleted[(int) j] = true;
            }
        }
        long elapsed = System.nanoTime() - start;
        int n = Math.min(ranges, slots);
        PhaseResult del = afterWrite(
                Workload.DELETERANGE,
                "deleterange",
                spec,
                engine,
                before,
                h,
                n,
                elapsed,
                (long) n * 2 * cfg.keySize(),
                0);
        int inCount = 0;
        for (boolean d : deleted) {
            inCount += d ? 1 : 0;
        }
        int[] inside = new int[inCount];
        int[] outside = new int[deleted.length - inCount];
        for (int j = 0, a = 0, b = 0; j < deleted.length; j++) {
            if (deleted[j]) {
                inside[a++] = j;
            } else {
                outside[b++] = j;
            }
        }
        PhaseResult in = reads(Workload.DELETERANGE, "deleterange-inside", spec, engine, false, inside);
        PhaseResult outPhase = reads(Workload.DELETERANGE, "deleterange-outside", spec, engine, true, outside);
        return List.of(del, in, outPhase);
    }

    private PhaseResult afterWrite(
            Workload w,
            String phase,
            EngineSpec spec,
            BenchEngine engine,
            EngineCounters before,
            Histogram h,
            long ops,
            long elapsedNanos,
            long userBytes,
            long background)
            throws IOException {
        if (!skipSettle) {
            engine.flushAndSettle();
        }
        EngineCounters delta = engine.counters().minus(before);
        TableSummary tables = engine.tables();
        return result(
                w, phase, spec, "write", h, ops, elapsedNanos, 0, 0, 0, background, delta, tables, userBytes, "off");
    }

    /**
     * Point reads over {@code cfg.threads()} threads. {@code present}: random loaded ids, each must
     * return its value; otherwise random absent ids (odd ids, or {@code fromLoadIndices} when given:
     * load indices known deleted), each must return null.
     */
    private PhaseResult reads(
            Workload w, String phase, EngineSpec spec, BenchEngine engine, boolean present, int[] fromLoadIndices)
            throws IOException {
        return readPhase(w, phase, List.of(spec), List.of(engine), present, fromLoadIndices, 1)
                .get(0);
    }

    /** The ids a read phase gets: the same on every engine (seeded by the phase). See {@link #reads}. */
    private long[] readIds(String phase, boolean present, long total, int[] fromLoadIndices) {
        if (present && fromLoadIndices == null) {
            return existingIds(phase, total);
        }
        SplittableRandom rnd = new SplittableRandom(cfg.seed() ^ phase.hashCode());
        long[] ids = new long[Math.toIntExact(total)];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = fromLoadIndices != null
                    ? keys.loadedId(fromLoadIndices[rnd.nextInt(fromLoadIndices.length)])
                    : keys.missingId(rnd.nextLong(keys.missingCount()));
        }
        return ids;
    }

    /**
     * The timed loop of {@link #reads} and of {@link #readWhileWriting}'s readers: gets of {@code ks}, each expected to
     * return the value of {@code ids[i]} ({@code present}; also its version {@code otherVersion} when that is >= 0, a
     * concurrent writer's) or null. The phase's warm-up runs this same loop ({@link #warmUpLoop}), so the JIT has seen
     * the phase's outcome before the measurement starts; a warm-up through another loop left this one compiled for
     * the previous phase's outcome, and the first engine measured paid for its recompilation.
     */
    private Worker getLoop(BenchEngine engine, byte[][] ks, long[] ids, boolean present, long otherVersion) {
        return (from, n, h, counts) -> {
            for (int i = (int) from; i < from + n; i++) {
                long t0 = System.nanoTime();
                byte[] v = engine.get(ks[i]);
                h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
                if (v == null) {
                    counts[1]++;
                    if (present) {
                        counts[2]++;
                    }
                } else {
                    counts[0]++;
                    if (!present
                            || !values.matches(v, ids[i], 0)
                                    && (otherVersion < 0 || !values.matches(v, ids[i], otherVersion))) {
                        counts[2]++;
                    }
                }
                tick(i - from);
            }
        };
    }

    /** Operations per call of a phase's loop during its warm-up: below {@link #PROGRESS_EVERY}, so it never ticks. */
    private static final int WARM_UP_CHUNK = 512;

    /**
     * Untimed: {@code n} units (gets or batches) of a phase's own timed loop, called {@code chunk} units at a time
     * (many calls, so the JIT compiles the loop as a method and not only for one long call; at most
     * {@link #WARM_UP_CHUNK} operations per call) on the calling thread. Its latencies and counts are dropped.
     */
    private static void warmUpLoop(Worker loop, long n, int chunk) throws IOException {
        Histogram h = histogram();
        long[] counts = new long[4];
        for (long from = 0; from < n; from += chunk) {
            loop.run(from, Math.min(chunk, n - from), h, counts);
        }
    }

    /** Keys per multiGet call of the multiget workloads. */
    static final int MULTIGET_BATCH = 32;

    /** Seeds the warm-up streams of the phases ({@link #phaseWarmUpIds}), apart from every phase's own. */
    private static final long PHASE_WARM_UP_SEED = 0x0_7A4E_0000L;

    /**
     * Untimed, before each read phase: the ids of its {@code cfg.phaseWarmup()} warm-up operations, from other random
     * streams than the phase's, so that every engine column starts its measurement with the JIT (the phase's own loop
     * included, see {@link #warmUpLoop}) and the block cache in the same steady state, whatever ran before it in this
     * JVM. {@code kind}: 0 existing keys by {@code --distribution} (gets), 1 absent keys, 2 existing keys (scans),
     * 3 and 4 indices of present and absent prefixes (prefix seeks).
     */
    private long[] phaseWarmUpIds(int kind) {
        long[] ids = new long[unsettled ? 0 : Math.toIntExact(cfg.phaseWarmup())];
        long seed = cfg.seed() ^ PHASE_WARM_UP_SEED ^ kind;
        if (kind == 0 || kind == 2) {
            KeyGenerator existing = distribution().generator(seed);
            for (int i = 0; i < ids.length; i++) {
                ids[i] = keys.loadedId(existing.nextIndex());
            }
        } else {
            SplittableRandom rnd = new SplittableRandom(seed);
            long bound = kind == 1
                    ? keys.missingCount()
                    : kind == 3 ? prefixes.presentPrefixes() : prefixes.absentPrefixes();
            for (int i = 0; i < ids.length; i++) {
                ids[i] = kind == 1 ? keys.missingId(rnd.nextLong(bound)) : rnd.nextLong(bound);
            }
        }
        return ids;
    }

    /**
     * {@link #reads} in batches of {@link #MULTIGET_BATCH} keys through {@link BenchEngine#multiGet}: ops count keys;
     * the latency recorded per key is the batch's time divided by its size.
     */
    private PhaseResult multiGets(Workload w, String phase, EngineSpec spec, BenchEngine engine, boolean present)
            throws IOException {
        long total = cfg.reads() / MULTIGET_BATCH * MULTIGET_BATCH;
        long[] warmIds = phaseWarmUpIds(present ? 0 : 1);
        warmUpLoop(
                multiGetLoop(engine, keysOf(warmIds), warmIds, present),
                warmIds.length / MULTIGET_BATCH,
                WARM_UP_CHUNK / MULTIGET_BATCH);
        String cold = coldStart(engine);
        TableSummary tables = engine.tables();
        EngineCounters before = engine.counters();
        long[] ids;
        if (present) {
            ids = existingIds(phase, total);
        } else {
            SplittableRandom rnd = new SplittableRandom(cfg.seed() ^ phase.hashCode());
            ids = new long[Math.toIntExact(total)];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = keys.missingId(rnd.nextLong(keys.missingCount()));
            }
        }
        byte[][] ks = keysOf(ids);
        double[] predicted = present ? new double[] {Double.NaN, Double.NaN} : tables.predictAbsent(ks);
        Parallel par = parallel(total / MULTIGET_BATCH, MULTIGET_BATCH, multiGetLoop(engine, ks, ids, present));
        EngineCounters delta = engine.counters().minus(before);
        return result(
                w,
                phase,
                spec,
                "read",
                par.hist,
                total,
                par.elapsed,
                par.counts[0],
                par.counts[1],
                par.counts[2],
                0,
                delta,
                tables,
                0,
                cold,
                predicted);
    }

    /** The timed loop of {@link #multiGets} (batches {@code from..from+n-1}), also its warm-up's (see {@link #getLoop}). */
    private Worker multiGetLoop(BenchEngine engine, byte[][] ks, long[] ids, boolean present) {
        return (from, n, h, counts) -> {
            for (long b = from; b < from + n; b++) {
                int first = (int) (b * MULTIGET_BATCH);
                List<byte[]> batch = Arrays.asList(ks).subList(first, first + MULTIGET_BATCH);
                long t0 = System.nanoTime();
                List<byte[]> vs = engine.multiGet(batch);
                long perKey = (System.nanoTime() - t0) / MULTIGET_BATCH;
                for (int j = 0; j < MULTIGET_BATCH; j++) {
                    h.recordValue(Math.min(perKey, HIST_MAX_NANOS));
                    byte[] v = vs.get(j);
                    if (v == null) {
                        counts[1]++;
                        if (present) {
                            counts[2]++;
                        }
                    } else {
                        counts[0]++;
                        if (!present || !values.matches(v, ids[first + j], 0)) {
                            counts[2]++;
                        }
                    }
                    tick((b - from) * MULTIGET_BATCH + j);
                }
            }
        };
    }

    /**
     * Seeks to {@code cfg.seeks()} random loaded keys (chosen as {@code --distribution} says), each stepping over
     * {@code length} entries (phase seekrandom-{@code length}): each must see the loaded keys from its target on, in
     * order, with their values ({@link #seekLoop}). Found = entries seen.
     */
    private PhaseResult seeks(EngineSpec spec, BenchEngine engine, int length) throws IOException {
        String phase = "seekrandom-" + length;
        long[] warmIds = phaseWarmUpIds(2);
        warmUpLoop(seekLoop(engine, keysOf(warmIds), warmIds, length), warmIds.length, WARM_UP_CHUNK);
        String cold = coldStart(engine);
        TableSummary tables = engine.tables();
        EngineCounters before = engine.counters();
        long[] ids = existingIds(phase, cfg.seeks());
        byte[][] ks = keysOf(ids);
        Parallel par = parallel(cfg.seeks(), seekLoop(engine, ks, ids, length));
        EngineCounters delta = engine.counters().minus(before);
        return result(
                Workload.SEEKRANDOM,
                phase,
                spec,
                "scan",
                par.hist,
                cfg.seeks(),
                par.elapsed,
                par.counts[0],
                0,
                par.counts[2],
                0,
                delta,
                tables,
                0,
                cold);
    }

    /**
     * The timed loop of {@link #seeks}, also its warm-up's (see {@link #getLoop}). Each seek hands out the entries it
     * saw; they are checked ({@link SeekCheck#seekRandom}) after its latency is recorded, as a get's value is, and a
     * seek whose entries are not exactly the right keys with their values is one wrong answer.
     */
    private Worker seekLoop(BenchEngine engine, byte[][] ks, long[] ids, int length) {
        return (from, n, h, counts) -> {
            byte[][] seenKeys = new byte[length][];
            byte[][] seenValues = new byte[length][];
            for (int i = (int) from; i < from + n; i++) {
                long t0 = System.nanoTime();
                int seen = engine.scan(ks[i], length, seenKeys, seenValues);
                h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
                counts[0] += seen;
                if (!seekCheck.seekRandom(seenKeys, seenValues, seen, ids[i], length)) {
                    counts[2]++;
                }
                tick(i - from);
            }
        };
    }

    /**
     * Prefix seeks ({@link BenchEngine#scanPrefix}) to {@code cfg.seeks()} random prefixes of the {@link PrefixLayout}:
     * {@code present}: the first key of a present prefix, iterating every key under it (phase seekprefix-hit, each
     * must see exactly the prefix's keys, in order, with their values); otherwise a target under an absent prefix
     * (phase seekprefix-miss, each must see nothing). Found = entries seen.
     */
    private PhaseResult prefixSeeks(EngineSpec spec, BenchEngine engine, boolean present) throws IOException {
        String phase = present ? "seekprefix-hit" : "seekprefix-miss";
        long[] warmPrefixes = phaseWarmUpIds(present ? 3 : 4);
        warmUpLoop(
                prefixSeekLoop(engine, prefixSeekKeys(warmPrefixes, present), warmPrefixes, present),
                warmPrefixes.length,
                WARM_UP_CHUNK);
        String cold = coldStart(engine);
        TableSummary tables = engine.tables();
        EngineCounters before = engine.counters();
        SplittableRandom rnd = new SplittableRandom(cfg.seed() ^ phase.hashCode());
        long[] prefix = new long[Math.toIntExact(cfg.seeks())];
        for (int i = 0; i < prefix.length; i++) {
            prefix[i] = rnd.nextLong(present ? prefixes.presentPrefixes() : prefixes.absentPrefixes());
        }
        Parallel par = parallel(cfg.seeks(), prefixSeekLoop(engine, prefixSeekKeys(prefix, present), prefix, present));
        EngineCounters delta = engine.counters().minus(before);
        return result(
                Workload.SEEKPREFIX,
                phase,
                spec,
                "scan",
                par.hist,
                cfg.seeks(),
                par.elapsed,
                par.counts[0],
                par.counts[1],
                par.counts[2],
                0,
                delta,
                tables,
                0,
                cold);
    }

    /** The seek targets of prefix indices: a present prefix's first key, or a key under an absent prefix. */
    private byte[][] prefixSeekKeys(long[] prefix, boolean present) {
        byte[][] ks = new byte[prefix.length][];
        for (int i = 0; i < prefix.length; i++) {
            ks[i] = keys.key(present ? prefixes.presentSeekId(prefix[i]) : prefixes.absentSeekId(prefix[i]));
        }
        return ks;
    }

    /**
     * The timed loop of {@link #prefixSeeks}, also its warm-up's (see {@link #getLoop}). Each seek's entries are
     * checked after its latency is recorded ({@link SeekCheck#prefixHit}, {@link SeekCheck#prefixMiss}), as in
     * {@link #seekLoop}.
     */
    private Worker prefixSeekLoop(BenchEngine engine, byte[][] ks, long[] prefix, boolean present) {
        return (from, n, h, counts) -> {
            byte[][] seenKeys = new byte[PrefixLayout.KEYS_PER_PREFIX][];
            byte[][] seenValues = new byte[PrefixLayout.KEYS_PER_PREFIX][];
            for (int i = (int) from; i < from + n; i++) {
                long t0 = System.nanoTime();
                int seen = engine.scanPrefix(
                        ks[i], PrefixLayout.PREFIX_LENGTH, PrefixLayout.KEYS_PER_PREFIX, seenKeys, seenValues);
                h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
                counts[0] += seen;
                if (seen == 0) {
                    counts[1]++;
                }
                if (present
                        ? !seekCheck.prefixHit(seenKeys, seenValues, seen, prefix[i])
                        : !seekCheck.prefixMiss(seen)) {
                    counts[2]++;
                }
                tick(i - from);
            }
        };
    }

    /**
     * Gets of loaded keys by {@code cfg.threads()} readers while one writer overwrites random keys. Two results: the
     * phase ({@code readwhilewriting}, every read) and {@code readwhilewriting-bg}: the reads that started while a
     * flush or compaction was running (a sampler polls {@link BenchEngine#backgroundJobsRunning} every millisecond),
     * their percentiles, and as its elapsed time the time background work ran. That is the figure a rate limiter
     * ({@code --rate-limit}) exists to improve: with {@code --direct}, reads that miss the block cache go to the
     * device the compaction writes to.
     */
    private List<PhaseResult> readWhileWriting(EngineSpec spec, BenchEngine engine) throws IOException {
        AtomicBoolean busy = new AtomicBoolean();
        List<Histogram> duringBusy = java.util.Collections.synchronizedList(new ArrayList<>());
        ThreadLocal<Histogram> mine = ThreadLocal.withInitial(() -> {
            Histogram h = histogram();
            duringBusy.add(h);
            return h;
        });
        // The readers' loop: getLoop's, plus each latency also into the thread's histogram of reads that started
        // while background work ran.
        java.util.function.BiFunction<byte[][], long[], Worker> loopOf = (ks, ids) -> (from, n, h, counts) -> {
            Histogram bg = mine.get();
            for (int i = (int) from; i < from + n; i++) {
                boolean inBackground = busy.get();
                long t0 = System.nanoTime();
                byte[] v = engine.get(ks[i]);
                long took = Math.min(System.nanoTime() - t0, HIST_MAX_NANOS);
                h.recordValue(took);
                if (inBackground) {
                    bg.recordValue(took);
                }
                if (v == null) {
                    counts[1]++;
                    counts[2]++;
                } else {
                    counts[0]++;
                    if (!values.matches(v, ids[i], 0) && !values.matches(v, ids[i], WRITER_VERSION)) {
                        counts[2]++;
                    }
                }
                tick(i - from);
            }
        };
        long[] warmIds = phaseWarmUpIds(0);
        warmUpLoop(loopOf.apply(keysOf(warmIds), warmIds), warmIds.length, WARM_UP_CHUNK); // no writer yet
        long[] ids = existingIds("readwhilewriting", cfg.reads());
        byte[][] ks = keysOf(ids);
        String cold = coldStart(engine);
        TableSummary tables = engine.tables();
        EngineCounters before = engine.counters();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong written = new AtomicLong();
        AtomicReference<Exception> failure = new AtomicReference<>();
        Thread writer = new Thread(
                () -> {
                    SplittableRandom writes = new SplittableRandom(cfg.seed() ^ 0x0_3417_E000L);
                    try {
                        while (!stop.get()) {
                            long id = keys.loadedId(writes.nextLong(keys.num()));
                            engine.put(keys.key(id), values.value(id, WRITER_VERSION));
                            written.incrementAndGet();
                        }
                    } catch (IOException | RuntimeException e) {
                        failure.set(e);
                    }
                },
                "bench-writer");
        writer.setDaemon(true);
        writer.start();
        AtomicLong busyNanos = new AtomicLong();
        Thread sampler = new Thread(
                () -> {
                    long since = 0;
                    try {
                        while (!stop.get()) {
                            boolean now = engine.backgroundJobsRunning() > 0;
                            long t = System.nanoTime();
                            if (now && !busy.get()) {
                                since = t;
                            } else if (!now && busy.get()) {
                                busyNanos.addAndGet(t - since);
                            }
                            busy.set(now);
                            Thread.sleep(1);
                        }
                        if (busy.get()) {
                            busyNanos.addAndGet(System.nanoTime() - since);
                        }
                    } catch (IOException | RuntimeException e) {
                        failure.compareAndSet(null, e);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "bench-background-sampler");
        sampler.setDaemon(true);
        sampler.start();
        Parallel par;
        try {
            par = parallel(cfg.reads(), loopOf.apply(ks, ids));
        } finally {
            stop.set(true);
            try {
                writer.join();
                sampler.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while stopping the writer", e);
            }
        }
        if (failure.get() != null) {
            throw new IOException("readwhilewriting writer failed: " + failure.get(), failure.get());
        }
        EngineCounters delta = engine.counters().minus(before);
        Histogram bg = histogram();
        for (Histogram h : duringBusy) {
            bg.add(h);
        }
        PhaseResult all = result(
                Workload.READWHILEWRITING,
                "readwhilewriting",
                spec,
                "read",
                par.hist,
                cfg.reads(),
                par.elapsed,
                par.counts[0],
                par.counts[1],
                par.counts[2],
                written.get(),
                delta,
                tables,
                written.get() * rowBytes(),
                cold);
        // Counts of the reads during background work are not split by outcome: wrong answers are the phase's.
        PhaseResult during = result(
                Workload.READWHILEWRITING,
                "readwhilewriting-bg",
                spec,
                "read",
                bg,
                bg.getTotalCount(),
                busyNanos.get(),
                bg.getTotalCount(),
                0,
                0,
                written.get(),
                delta,
                tables,
                written.get() * rowBytes(),
                cold);
        return List.of(all, during);
    }

    /**
     * A YCSB-style mix over {@code cfg.threads()} threads, each doing its share of {@code cfg.reads()}
     * operations on existing keys chosen by {@code --distribution}: {@code updatePercent}% are
     * updates (a put of the key's next value, {@link #UPDATE_VERSION}); with {@code readBeforeWrite}
     * an update is a read-modify-write (get, then put, timed as one operation), otherwise a blind
     * put. Every get must return the loaded or the updated value. Found + not found = gets done;
     * the updates are reported as background writes.
     */
    private PhaseResult mixed(
            Workload w, EngineSpec spec, BenchEngine engine, int updatePercent, boolean readBeforeWrite)
            throws IOException {
        String phase = w.dbBenchName();
        long[] warmIds = phaseWarmUpIds(0);
        boolean[] warmUpdates = new boolean[warmIds.length];
        SplittableRandom warmMix = new SplittableRandom(cfg.seed() ^ PHASE_WARM_UP_SEED ^ 5);
        for (int i = 0; i < warmUpdates.length; i++) {
            warmUpdates[i] = warmMix.nextInt(100) < updatePercent;
        }
        // the warm-up's updates write the same versions the phase's do, so every get still checks
        warmUpLoop(
                mixedLoop(engine, keysOf(warmIds), warmIds, warmUpdates, readBeforeWrite),
                warmIds.length,
                WARM_UP_CHUNK);
        long total = cfg.reads();
        long[] ids = existingIds(phase, total);
        byte[][] ks = keysOf(ids);
        boolean[] update = new boolean[ids.length];
        long from = 0;
        for (int t = 0; t < cfg.threads(); t++) {
            long n = sliceLength(total, t);
            SplittableRandom mix = new SplittableRandom(threadSeed(cfg.seed() ^ 0x0_0F5_A11EL ^ phase.hashCode(), t));
            for (long i = from; i < from + n; i++) {
                update[(int) i] = mix.nextInt(100) < updatePercent;
            }
            from += n;
        }
        String cold = coldStart(engine);
        TableSummary tables = engine.tables();
        EngineCounters before = engine.counters();
        Parallel par = parallel(total, mixedLoop(engine, ks, ids, update, readBeforeWrite));
        EngineCounters delta = engine.counters().minus(before);
        long writes = par.counts[3];
        return result(
                w,
                phase,
                spec,
                "mixed",
                par.hist,
                total,
                par.elapsed,
                par.counts[0],
                par.counts[1],
                par.counts[2],
                writes,
                delta,
                tables,
                writes * rowBytes(),
                cold);
    }

    /** The timed loop of {@link #mixed}, also its warm-up's (see {@link #getLoop}). */
    private Worker mixedLoop(BenchEngine engine, byte[][] ks, long[] ids, boolean[] update, boolean readBeforeWrite) {
        return (first, n, h, counts) -> {
            for (int i = (int) first; i < first + n; i++) {
                long t0 = System.nanoTime();
                if (!update[i] || readBeforeWrite) {
                    byte[] v = engine.get(ks[i]);
                    if (v == null) {
                        counts[1]++;
                        counts[2]++;
                    } else {
                        counts[0]++;
                        if (!values.matches(v, ids[i], 0) && !values.matches(v, ids[i], UPDATE_VERSION)) {
                            counts[2]++;
                        }
                    }
                }
                if (update[i]) {
                    engine.put(ks[i], values.value(ids[i], UPDATE_VERSION));
                    counts[3]++;
                }
                h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
                tick(i - first);
            }
        };
    }

    /**
     * The ids of {@code total} existing keys for a phase, chosen by {@code --distribution}: the slice
     * of thread {@code t} (see {@link #parallel}) comes from a generator of its own, seeded with
     * {@link #threadSeed}({@code seed ^ phase.hashCode()}, t). Generated before the timed loop.
     */
    private long[] existingIds(String phase, long total) {
        KeyDistribution.Shared dist = distribution();
        long[] ids = new long[Math.toIntExact(total)];
        long from = 0;
        for (int t = 0; t < cfg.threads(); t++) {
            long n = sliceLength(total, t);
            KeyGenerator g = dist.generator(threadSeed(cfg.seed() ^ phase.hashCode(), t));
            for (long i = from; i < from + n; i++) {
                ids[(int) i] = keys.loadedId(g.nextIndex());
            }
            from += n;
        }
        return ids;
    }

    /** The seed of thread {@code t}'s generator (thread 0 uses {@code base} itself). */
    static long threadSeed(long base, int t) {
        return base ^ (t * 0x9E37_79B9_7F4A_7C15L);
    }

    /** Operations of thread {@code t} when {@code total} are split over {@code cfg.threads()} threads. */
    private long sliceLength(long total, int t) {
        int threads = cfg.threads();
        return total / threads + (t < total % threads ? 1 : 0);
    }

    /** The phase's key distribution, prepared once per call (skewed-latest needs the load order). */
    private KeyDistribution.Shared distribution() {
        KeyDistribution d = cfg.distribution();
        int[] order = d == KeyDistribution.LATEST ? keys.shuffledLoadOrder(cfg.seed()) : null;
        return d.prepare(keys.num(), order);
    }

    /** Before a read phase in cold mode: reopen (empty block cache), then drop the table files from the page cache. */
    private String coldStart(BenchEngine engine) throws IOException {
        if (!cfg.cold()) {
            return "off";
        }
        engine.reopen();
        return evictor.evict(engine.tableFiles()).summary();
    }

    /** The keys of the ids, generated before the timed loop so that it measures the engine, not the generator. */
    private byte[][] keysOf(long[] ids) {
        byte[][] out = new byte[ids.length][];
        for (int i = 0; i < ids.length; i++) {
            out[i] = keys.key(ids[i]);
        }
        return out;
    }

    @FunctionalInterface
    private interface Worker {
        /** Does operations {@code from .. from+n-1} of the phase; counts[0..3] = found, notFound, wrong, writes. */
        void run(long from, long n, Histogram h, long[] counts) throws IOException;
    }

    private record Parallel(Histogram hist, long elapsed, long[] counts) {}

    /** What the last timed multi-threaded pass ({@link #parallel}) cost the process (null before the first). */
    private PhaseCosts lastCosts;

    /** The costs of the last timed pass of the phase {@link #runChildPhase} ran (null when it ran none). */
    public PhaseCosts lastCosts() {
        return lastCosts;
    }

    private Parallel parallel(long total, Worker worker) throws IOException {
        return parallel(0, total, 1, worker);
    }

    private Parallel parallel(long total, int opsPerUnit, Worker worker) throws IOException {
        return parallel(0, total, opsPerUnit, worker);
    }

    /**
     * Runs {@code total} units of a phase split over {@code cfg.threads()} threads ({@link #sliceLength}); a unit is
     * {@code opsPerUnit} operations (a multiGet batch, or one get), which the worker ticks by its slice's operation
     * index. The progress bar gets the operations the threads' ticks left out once they are done, so a phase steps it
     * by exactly {@code total * opsPerUnit}. The units are {@code base .. base+total-1} of the phase.
     */
    private Parallel parallel(long base, long total, int opsPerUnit, Worker worker) throws IOException {
        int threads = cfg.threads();
        Histogram[] hs = new Histogram[threads];
        long[][] counts = new long[threads][4];
        Throwable[] errors = new Throwable[threads];
        Thread[] ts = new Thread[threads];
        long[] threadCpu = new long[threads];
        long from = base;
        for (int t = 0; t < threads; t++) {
            hs[t] = histogram();
            final int id = t;
            long n = sliceLength(total, t);
            final long first = from;
            from += n;
            ts[t] = new Thread(
                    () -> {
                        long cpu0 = PhaseCosts.threadCpuNanos();
                        try {
                            worker.run(first, n, hs[id], counts[id]);
                        } catch (Throwable e) {
                            errors[id] = e;
                        } finally {
                            threadCpu[id] = PhaseCosts.threadCpuNanos() - cpu0;
                        }
                    },
                    "bench-thread-" + t);
        }
        PhaseCosts.Snapshot costs = PhaseCosts.snapshot();
        long start = System.nanoTime();
        if (threads == 1) {
            ts[0].run();
        } else {
            for (Thread t : ts) {
                t.start();
            }
            for (Thread t : ts) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }
        }
        long elapsed = System.nanoTime() - start;
        lastCosts = costs.since(elapsed, total * opsPerUnit, threadCpu);
        long ticked = 0;
        for (int t = 0; t < threads; t++) {
            ticked += sliceLength(total, t) * opsPerUnit / PROGRESS_EVERY * PROGRESS_EVERY;
        }
        progress.step(total * opsPerUnit - ticked);
        Histogram all = histogram();
        long[] sum = new long[4];
        for (int t = 0; t < threads; t++) {
            if (errors[t] != null) {
                if (errors[t] instanceof IOException io) {
                    throw io;
                }
                if (errors[t] instanceof RuntimeException re) {
                    throw re;
                }
                throw new IOException(errors[t]);
            }
            all.add(hs[t]);
            for (int i = 0; i < sum.length; i++) {
                sum[i] += counts[t][i];
            }
        }
        return new Parallel(all, elapsed, sum);
    }

    private PhaseResult result(
            Workload w,
            String phase,
            EngineSpec spec,
            String kind,
            Histogram h,
            long ops,
            long elapsedNanos,
            long found,
            long notFound,
            long wrong,
            long background,
            EngineCounters delta,
            TableSummary tables,
            long userBytes,
            String cold) {
        return result(
                w,
                phase,
                spec,
                kind,
                h,
                ops,
                elapsedNanos,
                found,
                notFound,
                wrong,
                background,
                delta,
                tables,
                userBytes,
                cold,
                new double[] {Double.NaN, Double.NaN});
    }

    private PhaseResult result(
            Workload w,
            String phase,
            EngineSpec spec,
            String kind,
            Histogram h,
            long ops,
            long elapsedNanos,
            long found,
            long notFound,
            long wrong,
            long background,
            EngineCounters delta,
            TableSummary tables,
            long userBytes,
            String cold,
            double[] predicted) {
        double secs = elapsedNanos / 1e9;
        if (unsettled) {
            phase = phase + UNSETTLED_SUFFIX;
        }
        return new PhaseResult(
                w.dbBenchName(),
                phase,
                spec.engine(),
                spec.filters(),
                spec.label(),
                kind,
                ops,
                secs,
                secs == 0 ? Double.NaN : ops / secs,
                h.getValueAtPercentile(50) / 1e3,
                h.getValueAtPercentile(99) / 1e3,
                h.getValueAtPercentile(99.9) / 1e3,
                h.getMaxValue() / 1e3,
                found,
                notFound,
                wrong,
                background,
                delta,
                tables,
                userBytes,
                cold,
                run,
                predicted[0],
                predicted[1],
                heapAfterGc());
    }

    /** Heap bytes in use after a full GC: what the open engine and the harness keep on the heap. */
    private static long heapAfterGc() {
        System.gc();
        return java.lang.management.ManagementFactory.getMemoryMXBean()
                .getHeapMemoryUsage()
                .getUsed();
    }

    private long rowBytes() {
        return (long) cfg.keySize() + cfg.valueSize();
    }

    private void tick(long i) {
        if ((i & (PROGRESS_EVERY - 1)) == PROGRESS_EVERY - 1) {
            progress.step(PROGRESS_EVERY);
        }
    }

    private static Histogram histogram() {
        return new Histogram(HIST_MAX_NANOS, 3);
    }

    /** The suffix of a phase's name in the unsettled pass of {@code --no-settle}. */
    public static final String UNSETTLED_SUFFIX = "-unsettled";

    /** The first id the inserts of records workload {@code w} write (beyond every loaded and absent id). */
    static long insertBase(Workload w) {
        return (1L + w.ordinal()) << 40;
    }

    /**
     * recordsload: the N records ({@link RecordSource}) inserted by {@code cfg.threads()} threads, one put each,
     * timed. Thread t inserts every T-th record of the fillrandom order (t, t+T, ...), so the load order overall stays
     * that order and recordslatest's hot keys are the last ones inserted.
     */
    private PhaseResult recordsLoad(EngineSpec spec, BenchEngine engine) throws IOException {
        int[] order = keys.shuffledLoadOrder(cfg.seed());
        int threads = cfg.threads();
        int[] byThread = new int[order.length];
        int at = 0;
        for (int t = 0; t < threads; t++) {
            for (int i = t; i < order.length; i += threads) {
                byThread[at++] = order[i];
            }
        }
        EngineCounters before = engine.counters();
        Parallel par = parallel(order.length, (from, n, h, counts) -> {
            for (int i = (int) from; i < from + n; i++) {
                long id = keys.loadedId(byThread[i]);
                byte[] k = keys.key(id);
                byte[] v = records.value(id, 0);
                long t0 = System.nanoTime();
                engine.put(k, v);
                h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
                counts[3]++;
                tick(i - from);
            }
        });
        boolean was = skipSettle;
        skipSettle = was || cfg.noSettle();
        try {
            return afterWrite(
                    Workload.RECORDSLOAD,
                    "recordsload",
                    spec,
                    engine,
                    before,
                    par.hist,
                    order.length,
                    par.elapsed,
                    order.length * ((long) cfg.keySize() + RecordSource.RECORD_BYTES),
                    0);
        } finally {
            skipSettle = was;
        }
    }

    /** What one operation of a records mix does. */
    private static final byte OP_READ = 0;

    private static final byte OP_UPDATE = 1;
    private static final byte OP_RMW = 2;
    private static final byte OP_INSERT = 3;
    private static final byte OP_SCAN = 4;
    /** The longest scan of recordsscan (YCSB E's maxscanlength); each scan's length is uniform in [1, this]. */
    static final int MAX_SCAN = 100;

    /** Percent of a records mix's operations that are its main one (a read, or recordsscan's scan). */
    private static int readPercent(Workload w) {
        return switch (w) {
            case RECORDSREAD -> 100;
            case RECORDSLATEST, RECORDSREADHEAVY, RECORDSSCAN -> 95;
            case RECORDSRMW, RECORDSUPDATE -> 50;
            default -> throw new IllegalArgumentException("not a records mix: " + w);
        };
    }

    /** A records mix's other operation. */
    private static byte otherOp(Workload w) {
        return switch (w) {
            case RECORDSREAD -> OP_READ;
            case RECORDSLATEST, RECORDSSCAN -> OP_INSERT;
            case RECORDSRMW -> OP_RMW;
            case RECORDSUPDATE, RECORDSREADHEAVY -> OP_UPDATE;
            default -> throw new IllegalArgumentException("not a records mix: " + w);
        };
    }

    /**
     * The plan of records mix {@code w}, {@code cfg.reads()} operations: each one's kind into {@code ops}, its scan
     * length into {@code scanLength}, and its record id into {@code ids} (an insert's: {@link #insertBase} plus its
     * operation index). With {@code dist} and {@code ids} null only the kinds and lengths, which do not depend on the
     * key choice: how a later phase learns which records an earlier one inserted. Deterministic in the seed, the
     * phase, {@code cfg.reads()} and {@code cfg.threads()}.
     */
    private void mixPlan(Workload w, KeyDistribution.Shared dist, long[] ids, byte[] ops, byte[] scanLength) {
        String phase = w.dbBenchName();
        int total = ops.length;
        int readPct = readPercent(w);
        byte other = otherOp(w);
        byte main = w == Workload.RECORDSSCAN ? OP_SCAN : OP_READ;
        long base = insertBase(w);
        long from = 0;
        for (int t = 0; t < cfg.threads(); t++) {
            long n = sliceLength(total, t);
            long seed = threadSeed(cfg.seed() ^ phase.hashCode(), t);
            KeyGenerator g = dist == null ? null : dist.generator(seed);
            SplittableRandom mix = new SplittableRandom(seed ^ 0x0_0F5_A11EL);
            for (long i = from; i < from + n; i++) {
                int k = (int) i;
                ops[k] = mix.nextInt(100) < readPct ? main : other;
                if (ids != null) {
                    ids[k] = ops[k] == OP_INSERT ? base + k : keys.loadedId(g.nextIndex());
                }
                scanLength[k] = (byte) (1 + mix.nextInt(MAX_SCAN));
            }
            from += n;
        }
    }

    /** The operation indices of {@code ops} that are inserts, ascending. */
    private static int[] insertIndices(byte[] ops) {
        int n = 0;
        for (byte op : ops) {
            n += op == OP_INSERT ? 1 : 0;
        }
        int[] out = new int[n];
        n = 0;
        for (int k = 0; k < ops.length; k++) {
            if (ops[k] == OP_INSERT) {
                out[n++] = k;
            }
        }
        return out;
    }

    /**
     * The workloads that ran on the database before {@code w} in its session of {@code workloads} ({@link #sessions}:
     * the records family's workloads each run on the database the previous one left). A workload is named at most once
     * in a run, so this is exact, in this process and in a {@code --reopen} child alike.
     */
    static java.util.Set<Workload> ranBefore(List<Workload> workloads, Workload w) {
        java.util.EnumSet<Workload> out = java.util.EnumSet.noneOf(Workload.class);
        for (List<Workload> session : sessions(workloads)) {
            int at = session.indexOf(w);
            if (at >= 0) {
                out.addAll(session.subList(0, at));
            }
        }
        return out;
    }

    /**
     * The check of recordsscan's answers ({@link RecordsScanCheck}): its own inserts ({@code ops}), the records the
     * inserting workloads that ran before it on the database wrote (their plans recomputed), and whether a workload
     * that updates records ran before it.
     */
    private RecordsScanCheck recordsScanCheck(Workload w, byte[] ops) {
        java.util.Set<Workload> before = ranBefore(cfg.workloads(), w);
        List<RecordsScanCheck.InsertRange> ranges = new ArrayList<>();
        ranges.add(new RecordsScanCheck.InsertRange(insertBase(w), ops.length, insertIndices(ops), false, true));
        for (Workload e : before) {
            if (e.records() && e != Workload.RECORDSLOAD && otherOp(e) == OP_INSERT) {
                byte[] earlierOps = new byte[ops.length];
                mixPlan(e, null, null, earlierOps, new byte[ops.length]);
                ranges.add(new RecordsScanCheck.InsertRange(
                        insertBase(e), earlierOps.length, insertIndices(earlierOps), true, false));
            }
        }
        boolean updated = before.contains(Workload.RECORDSRMW)
                || before.contains(Workload.RECORDSUPDATE)
                || before.contains(Workload.RECORDSREADHEAVY);
        long[] sliceStart = new long[cfg.threads() + 1];
        for (int t = 0; t < cfg.threads(); t++) {
            sliceStart[t + 1] = sliceStart[t] + sliceLength(ops.length, t);
        }
        return new RecordsScanCheck(keys, records, updated, sliceStart, ranges);
    }

    /**
     * One records mix (YCSB A-F on {@link RecordSource} records) of {@code cfg.reads()} operations over
     * {@code cfg.threads()} threads, each choosing existing records by YCSB's scrambled Zipfian (recordslatest: its
     * skewed-latest). A read must return the record's loaded or updated version; an update or a read-modify-write
     * writes version {@link #UPDATE_VERSION}; an insert writes a new record beyond every loaded id; a scan of length
     * L hands out the records it saw, checked after its latency is recorded ({@link RecordsScanCheck}: the records
     * that exist at that point, in key order, from its start on, L of them unless the records end, each with a
     * version its record may hold). After the threads of a mix that inserts (recordslatest, recordsscan) end, and after
     * its timed figures, counters and table summary are taken, every record it inserted is read back
     * ({@link #readBackInserts}); each one missing or different is one more wrong answer of the phase. No phase
     * warm-up (the family measures what a user meets), and no settling after it: the next workload runs on what this
     * one left.
     */
    private PhaseResult recordsMix(Workload w, EngineSpec spec, BenchEngine engine) throws IOException {
        String phase = w.dbBenchName();
        int total = Math.toIntExact(cfg.reads());
        KeyDistribution d = w == Workload.RECORDSLATEST ? KeyDistribution.LATEST : KeyDistribution.ZIPFIAN;
        KeyDistribution.Shared dist =
                d.prepare(keys.num(), d == KeyDistribution.LATEST ? keys.shuffledLoadOrder(cfg.seed()) : null);
        long[] ids = new long[total];
        byte[] ops = new byte[total];
        byte[] scanLength = new byte[total];
        mixPlan(w, dist, ids, ops, scanLength);
        RecordsScanCheck scanCheck = w == Workload.RECORDSSCAN ? recordsScanCheck(w, ops) : null;
        byte[][] ks = keysOf(ids);
        String cold = coldStart(engine);
        EngineCounters before = engine.counters();
        Parallel par = parallel(total, (first, n, h, counts) -> {
            byte[][] seenKeys = scanCheck == null ? null : new byte[MAX_SCAN][];
            byte[][] seenValues = scanCheck == null ? null : new byte[MAX_SCAN][];
            long[] doneBefore = scanCheck == null ? null : new long[scanCheck.threads()];
            for (int i = (int) first; i < first + n; i++) {
                byte op = ops[i];
                byte[] v = op == OP_READ || op == OP_SCAN
                        ? null
                        : records.value(ids[i], op == OP_INSERT ? 0 : UPDATE_VERSION);
                if (scanCheck != null) {
                    if (op == OP_SCAN) {
                        scanCheck.readDone(doneBefore);
                    } else if (op == OP_INSERT) {
                        scanCheck.starting(i);
                    }
                }
                int seen = -1;
                long t0 = System.nanoTime();
                switch (op) {
                    case OP_READ, OP_RMW -> {
                        byte[] got = engine.get(ks[i]);
                        if (got == null) {
                            counts[1]++;
                            counts[2]++;
                        } else {
                            counts[0]++;
                            if (!records.matches(got, ids[i], 0) && !records.matches(got, ids[i], UPDATE_VERSION)) {
                                counts[2]++;
                            }
                        }
                        if (op == OP_RMW) {
                            engine.put(ks[i], v);
                            counts[3]++;
                        }
                    }
                    case OP_UPDATE, OP_INSERT -> {
                        engine.put(ks[i], v);
                        counts[3]++;
                    }
                    default -> seen = engine.scan(ks[i], scanLength[i], seenKeys, seenValues);
                }
                h.recordValue(Math.min(System.nanoTime() - t0, HIST_MAX_NANOS));
                if (op == OP_SCAN) {
                    counts[0] += seen;
                    if (!scanCheck.check(seenKeys, seenValues, seen, ids[i], scanLength[i], doneBefore)) {
                        counts[2]++;
                    }
                } else if (op == OP_INSERT && scanCheck != null) {
                    scanCheck.done(i);
                }
                tick(i - first);
            }
        });
        EngineCounters delta = engine.counters().minus(before);
        // The table summary is taken after the timed pass, not before it: for bloomkv it evaluates each filter's
        // false-positive formula, code a fresh --reopen child would otherwise still be compiling when the pass
        // starts (RocksDB's summary is a property read). It describes the tables the phase left.
        TableSummary tables = engine.tables();
        long writes = par.counts[3];
        long insertsWrong = 0;
        if (otherOp(w) == OP_INSERT) { // recordslatest and recordsscan
            beforeInsertsReadBack.run(engine);
            insertsWrong = readBackInserts(w, ops, engine);
        }
        boolean was = unsettled;
        unsettled = was || cfg.noSettle();
        try {
            return result(
                    w,
                    phase,
                    spec,
                    w == Workload.RECORDSSCAN ? "scan" : "mixed",
                    par.hist,
                    total,
                    par.elapsed,
                    par.counts[0],
                    par.counts[1],
                    par.counts[2] + insertsWrong,
                    writes,
                    delta,
                    tables,
                    writes * ((long) cfg.keySize() + RecordSource.RECORD_BYTES),
                    cold);
        } finally {
            unsettled = was;
        }
    }

    /**
     * The read-back of a records mix's inserts, after its threads have ended: every record its plan {@code ops} made
     * an insert ({@link #insertBase} plus the operation index, {@link #insertIndices}) must be found with the record
     * it was written with (version 0), every byte ({@link RecordSource#matches}). Returns how many are missing or
     * differ. One thread, untimed: the caller has taken the phase's elapsed time, latencies, engine counters and
     * table summary before it. A mix never writes an inserted record twice, and no other workload writes ids beyond
     * the loaded ones, so the one version is the only right answer.
     */
    private long readBackInserts(Workload w, byte[] ops, BenchEngine engine) throws IOException {
        long base = insertBase(w);
        long wrong = 0;
        for (int k : insertIndices(ops)) {
            long id = base + k;
            byte[] got = engine.get(keys.key(id));
            if (got == null || !records.matches(got, id, 0)) {
                wrong++;
            }
        }
        return wrong;
    }

    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
