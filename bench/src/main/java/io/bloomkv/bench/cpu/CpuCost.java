package io.bloomkv.bench.cpu;

import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.engine.BenchEngine;
import io.bloomkv.bench.engine.EngineCounters;
import io.bloomkv.bench.engine.EngineFactory;
import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.workload.KeyDistribution;
import io.bloomkv.bench.workload.KeyGenerator;
import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.RecordSource;
import io.bloomkv.bench.workload.ValueSource;
import io.bloomkv.bench.workload.Workload;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Costs that do not depend on how loaded the machine is: CPU time and heap allocation per operation, and the CPU
 * time of the engines' background threads per byte they wrote to tables ({@code bench cpu-cost [bench flags]}).
 * A wall-clock figure on a shared machine measures the other tenants too; CPU time of the threads doing the work
 * (and bytes allocated, written, stored) much less so.
 *
 * <p>Per engine of {@code --engines}, alternating, {@code --repeat} times: {@code --num} puts (of the records
 * family's ~1 KB records when {@code --workloads} names one, else {@code --value-size} values) from
 * {@code --threads} threads, in key order, or in the fillrandom order when {@code --workloads} names fillrandom and
 * not fillseq (random keys make flushes overlap, so level 0 compacts as a fillrandom's does); a flush and wait until
 * background work is idle; then {@code --reads} gets of loaded keys (chosen by {@code --distribution}: uniform by
 * default, zipfian or latest as the records family reads) from {@code --threads} threads. Beside the
 * per-operation figures: the milliseconds writers spent in the engine's write stalls and slowdowns, and the whole
 * process's CPU time (writers, background threads, garbage collection, the JIT) from the first put until background
 * work was idle, per put. After the gets of loaded keys, {@code --reads} gets of absent keys inside the
 * tables' key ranges (the readmissing keys, which the filters must reject), with the filter memory held while they
 * ran ({@code --filter-budget} applies, as in the bench). With {@code --distribution latest} the gets run before the flush, so the keys
 * loaded last are read from the memtable as recordslatest reads them. The writers' and readers' CPU and allocation come from the JVM's per-thread
 * accounting ({@code com.sun.management.ThreadMXBean}); the background threads' CPU from {@code /proc/self/task}
 * (utime + stime, by thread name), which sees RocksDB's native threads ({@code rocksdb:low}, {@code rocksdb:high})
 * as well as bloomkv's ({@code bloomkv-compact-*}, {@code bloomkv-flush-*}). Linux only for the background figure.
 */
public final class CpuCost {
    private CpuCost() {}

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final double TICK_NANOS = 1e9 / 100; // USER_HZ: /proc reports clock ticks of 10 ms

    /** Runs the measurement of {@code cfg} and prints one line per engine and repetition. */
    public static void run(BenchConfig cfg, PrintWriter out) throws IOException {
        boolean records = cfg.workloads().stream().anyMatch(Workload::records);
        boolean randomOrder = cfg.workloads().contains(Workload.FILLRANDOM)
                && !cfg.workloads().contains(Workload.FILLSEQ);
        KeySpace keys = new KeySpace(cfg.num(), cfg.keySize());
        ValueSource values = new ValueSource(cfg.valueSize(), cfg.seed(), cfg.valueCompressibility());
        RecordSource recs = new RecordSource(cfg.seed(), cfg.valueCompressibility());
        int[] order = randomOrder ? keys.shuffledLoadOrder(cfg.seed()) : null;
        Files.createDirectories(cfg.workDir());
        out.printf(Locale.ROOT, "puts in %s order%n", randomOrder ? "fillrandom" : "key");
        out.printf(
                Locale.ROOT,
                "%-8s %3s %12s %12s %14s %12s %12s %12s %12s %12s %12s %10s %10s %14s%n",
                "engine",
                "run",
                "put cpu ns",
                "put alloc B",
                "bg cpu ns/KiB",
                "table MiB",
                "sst MiB",
                "get cpu ns",
                "get alloc B",
                "miss cpu ns",
                "miss alloc B",
                "filter KiB",
                "stall ms",
                "proc cpu ns/put");
        for (int r = 0; r < cfg.repeat(); r++) {
            for (String engine : cfg.engines()) {
                Path dir = cfg.workDir().resolve("cpu-" + engine + "-" + r);
                deleteTree(dir);
                try (BenchEngine e = EngineFactory.open(
                        new EngineSpec(engine, cfg.filterModes().get(0)), dir, cfg)) {
                    Map<String, Long> bg0 = backgroundTicks();
                    EngineCounters c0 = e.counters();
                    long stall0 = e.writeStallMicros();
                    long proc0 = processCpuNanos();
                    long[] put = parallel(cfg.threads(), cfg.num(), (t, i) -> {
                        long id = keys.loadedId(order == null ? i : order[(int) i]);
                        e.put(keys.key(id), records ? recs.value(id, 0) : values.value(id, 0));
                    });
                    long stall = e.writeStallMicros() - stall0;
                    // --distribution latest reads before the flush: the keys loaded last are still in the memtable,
                    // as recordslatest finds them; the other distributions read the settled tables.
                    boolean readFirst = cfg.distribution() == KeyDistribution.LATEST;
                    long[] get = readFirst ? reads(cfg, keys, e, order) : null;
                    e.flushAndSettle();
                    long proc = processCpuNanos() - proc0;
                    EngineCounters written = e.counters().minus(c0);
                    long bgTicks = 0;
                    for (Map.Entry<String, Long> x : backgroundTicks().entrySet()) {
                        bgTicks += x.getValue() - bg0.getOrDefault(x.getKey(), 0L);
                    }
                    long sst = e.tables().sstBytes();
                    if (!readFirst) {
                        get = reads(cfg, keys, e, order);
                    }
                    java.util.SplittableRandom rnd = new java.util.SplittableRandom(cfg.seed());
                    long[] absent = new long[Math.toIntExact(cfg.reads())];
                    for (int i = 0; i < absent.length; i++) {
                        absent[i] = keys.missingId(rnd.nextLong(keys.missingCount()));
                    }
                    long[] miss = parallel(cfg.threads(), absent.length, (t, i) -> {
                        if (e.get(keys.key(absent[(int) i])) != null) {
                            throw new IOException("absent key " + absent[(int) i] + " found");
                        }
                    });
                    double filterKiB = e.tables().filterBytes() / 1024.0;
                    double tableKiB = written.tableBytesWritten() / 1024.0;
                    out.printf(
                            Locale.ROOT,
                            "%-8s %3d %12.0f %12.0f %14.0f %12.1f %12.1f %12.0f %12.0f %12.0f %12.0f %10.1f %10.0f %14.0f%n",
                            engine,
                            r,
                            (double) put[0] / cfg.num(),
                            (double) put[1] / cfg.num(),
                            tableKiB == 0 ? Double.NaN : bgTicks * TICK_NANOS / tableKiB,
                            written.tableBytesWritten() / 1048576.0,
                            sst / 1048576.0,
                            (double) get[0] / cfg.reads(),
                            (double) get[1] / cfg.reads(),
                            (double) miss[0] / absent.length,
                            (double) miss[1] / absent.length,
                            filterKiB,
                            stall < 0 ? Double.NaN : stall / 1000.0,
                            proc < 0 ? Double.NaN : (double) proc / cfg.num());
                    out.flush();
                } finally {
                    deleteTree(dir);
                }
            }
        }
    }

    /**
     * The ids of the {@code --reads} gets, chosen by {@code --distribution} from one seeded generator (the same ids
     * for every engine and repetition): uniform, YCSB's scrambled Zipfian, or skewed-latest over the load order
     * ({@code putOrder}, the indices in the order the puts wrote them; null = index order, so the last indices are the
     * latest).
     */
    static long[] readIds(BenchConfig cfg, KeySpace keys, int[] putOrder) {
        KeyDistribution d = cfg.distribution();
        int[] order = null;
        if (d == KeyDistribution.LATEST) {
            order = putOrder;
            if (order == null) {
                order = new int[Math.toIntExact(keys.num())];
                for (int i = 0; i < order.length; i++) {
                    order[i] = i;
                }
            }
        }
        KeyGenerator gen = d.prepare(keys.num(), order).generator(cfg.seed());
        long[] ids = new long[Math.toIntExact(cfg.reads())];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = keys.loadedId(gen.nextIndex());
        }
        return ids;
    }

    /** CPU time of the whole process (every thread, the JVM's own included), or -1 where the JVM does not say. */
    private static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /**
     * The {@link #readIds} gets from {@code cfg.threads()} threads, each of which must be found. Returns {CPU ns, bytes
     * allocated} of the reading threads.
     */
    private static long[] reads(BenchConfig cfg, KeySpace keys, BenchEngine e, int[] putOrder) throws IOException {
        long[] ids = readIds(cfg, keys, putOrder);
        return parallel(cfg.threads(), ids.length, (t, i) -> {
            if (e.get(keys.key(ids[(int) i])) == null) {
                throw new IOException("key " + ids[(int) i] + " not found");
            }
        });
    }

    @FunctionalInterface
    private interface Op {
        void run(int thread, long index) throws IOException;
    }

    /** Runs operations 0..n-1 split over {@code threads} threads; returns {CPU ns, bytes allocated} of those threads. */
    private static long[] parallel(int threads, long n, Op op) throws IOException {
        long[] cpu = new long[threads];
        long[] alloc = new long[threads];
        Throwable[] errors = new Throwable[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(
                    () -> {
                        long tid = Thread.currentThread().getId();
                        long c0 = THREADS.getCurrentThreadCpuTime();
                        long a0 = THREADS.getThreadAllocatedBytes(tid);
                        try {
                            for (long i = id; i < n; i += threads) {
                                op.run(id, i);
                            }
                        } catch (Throwable e) {
                            errors[id] = e;
                        }
                        cpu[id] = THREADS.getCurrentThreadCpuTime() - c0;
                        alloc[id] = THREADS.getThreadAllocatedBytes(tid) - a0;
                    },
                    "cpu-cost-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        for (Throwable e : errors) {
            if (e != null) {
                throw new IOException("an operation failed: " + e, e);
            }
        }
        long[] sum = new long[2];
        for (int t = 0; t < threads; t++) {
            sum[0] += cpu[t];
            sum[1] += alloc[t];
        }
        return sum;
    }

    /**
     * utime + stime (clock ticks) of this process's background threads by thread id and name: bloomkv's flush and
     * compaction threads and RocksDB's pool threads (names "bloomkv-*", "rocksdb:*"). Empty where /proc is missing.
     */
    static Map<String, Long> backgroundTicks() {
        Map<String, Long> out = new TreeMap<>();
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) {
            return out;
        }
        try (Stream<Path> s = Files.list(tasks)) {
            for (Path task : s.toList()) {
                try {
                    String comm = Files.readString(task.resolve("comm")).trim();
                    if (!comm.startsWith("bloomkv-") && !comm.startsWith("rocksdb:")) {
                        continue;
                    }
                    String stat = Files.readString(task.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    // fields after "(comm) ": state(3) ... utime(14) stime(15) -> indices 11 and 12 here
                    out.put(task.getFileName() + ":" + comm, Long.parseLong(f[11]) + Long.parseLong(f[12]));
                } catch (IOException | RuntimeException gone) {
                    // the thread ended between the listing and the read
                }
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            List<Path> all = new ArrayList<>(s.sorted(Comparator.reverseOrder()).toList());
            for (Path p : all) {
                Files.deleteIfExists(p);
            }
        }
    }
}
