package io.bloomkv.bench.workload;

import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * What one timed pass of a phase cost the process besides its wall time, from the JVM's own accounting: the CPU time
 * of the threads doing the operations, the whole process's CPU time (readers, background threads, JIT compiler, GC),
 * the JIT's compilation time and the garbage collectors' time in the pass. On a loaded 2-core machine these move much
 * less than ops/s, and in a fresh JVM ({@code --reopen}) they show what competes with the readers: the JIT above all.
 *
 * @param wallNanos       wall time of the pass
 * @param ops             operations of the pass
 * @param workerCpuNanos  CPU time of the pass's worker threads, summed (-1 where the JVM does not measure it)
 * @param processCpuNanos CPU time of the whole process over the pass (-1 where unavailable)
 * @param jitMillis       milliseconds the JIT compiler threads spent compiling during the pass (-1 where unavailable)
 * @param gcCount         collections during the pass
 * @param gcMillis        milliseconds of collections during the pass
 * @param c1CpuNanos      CPU time of the C1 compiler threads during the pass (-1 where unavailable: not Linux)
 * @param c2CpuNanos      CPU time of the C2 compiler threads during the pass (-1 where unavailable); unlike
 *                        {@code jitMillis} (elapsed time, which grows with the machine's load) this is the JIT's own
 *                        work, read from {@code /proc/self/task/<tid>/schedstat}
 */
public record PhaseCosts(
        long wallNanos,
        long ops,
        long workerCpuNanos,
        long processCpuNanos,
        long jitMillis,
        long gcCount,
        long gcMillis,
        long c1CpuNanos,
        long c2CpuNanos) {

    /** The prefix of the line a {@code --reopen} child prints and its parent repeats. */
    public static final String LINE_PREFIX = "phase-costs:";

    /** One line: the per-operation CPU of the workers and of the process, the JIT's and the GC's time. */
    public String line(String phase, String engine) {
        return String.format(
                Locale.ROOT,
                "%s %s %s wall %.3f s, worker CPU %d ns/op, process CPU %d ns/op (%.3f s), JIT %d ms, GC %d (%d ms),"
                        + " JIT CPU C1 %d ms C2 %d ms",
                LINE_PREFIX,
                phase,
                engine,
                wallNanos / 1e9,
                workerCpuNanos < 0 ? -1 : workerCpuNanos / Math.max(1, ops),
                processCpuNanos < 0 ? -1 : processCpuNanos / Math.max(1, ops),
                processCpuNanos / 1e9,
                jitMillis,
                gcCount,
                gcMillis,
                c1CpuNanos < 0 ? -1 : c1CpuNanos / 1_000_000,
                c2CpuNanos < 0 ? -1 : c2CpuNanos / 1_000_000);
    }

    /** The current thread's CPU time in nanoseconds, or a negative value where the JVM does not measure it. */
    static long threadCpuNanos() {
        ThreadMXBean t = ManagementFactory.getThreadMXBean();
        return t.isCurrentThreadCpuTimeSupported() ? t.getCurrentThreadCpuTime() : -1;
    }

    /** The process's counters now, to subtract from at the end of the pass. */
    static Snapshot snapshot() {
        long gcCount = 0;
        long gcMillis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            gcCount += Math.max(0, gc.getCollectionCount());
            gcMillis += Math.max(0, gc.getCollectionTime());
        }
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long jitMillis = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
        long[] jitCpu = compilerThreadsCpuNanos();
        return new Snapshot(currentProcessCpuNanos(), jitMillis, gcCount, gcMillis, jitCpu[0], jitCpu[1]);
    }

    /**
     * The CPU time so far of the live C1 and C2 compiler threads ({@code {c1, c2}}, nanoseconds), from Linux's per-thread
     * scheduler statistics; {@code {-1, -1}} where {@code /proc/self/task} is not readable. A compiler thread that
     * exited during the pass (HotSpot starts and stops them with the queue's length) takes its time with it.
     */
    static long[] compilerThreadsCpuNanos() {
        long c1 = 0;
        long c2 = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                try {
                    String comm = Files.readString(task.resolve("comm")).trim();
                    boolean isC1 = comm.startsWith("C1 CompilerThre");
                    if (!isC1 && !comm.startsWith("C2 CompilerThre")) {
                        continue;
                    }
                    String stat = Files.readString(task.resolve("schedstat")).trim();
                    long ns = Long.parseLong(stat.substring(0, stat.indexOf(' ')));
                    if (isC1) {
                        c1 += ns;
                    } else {
                        c2 += ns;
                    }
                } catch (java.io.IOException | RuntimeException e) {
                    // the thread exited between the listing and the read: its time is gone either way
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
        return new long[] {c1, c2};
    }

    private static long currentProcessCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /** The counters at the start of a pass. */
    record Snapshot(
            long processCpuNanos, long jitMillis, long gcCount, long gcMillis, long c1CpuNanos, long c2CpuNanos) {
        /** The costs from this snapshot to now of a pass of {@code ops} operations whose workers used {@code cpu}. */
        PhaseCosts since(long wallNanos, long ops, long[] workerCpu) {
            return until(snapshot(), wallNanos, ops, workerCpu);
        }

        /**
         * The costs from this snapshot to {@code now}: each counter's difference, -1 where either end lacks it (or
         * where a worker's CPU time is unknown), a compiler class's CPU time never below 0 (its threads may exit).
         */
        PhaseCosts until(Snapshot now, long wallNanos, long ops, long[] workerCpu) {
            long workers = 0;
            for (long c : workerCpu) {
                if (c < 0) {
                    workers = -1;
                    break;
                }
                workers += c;
            }
            return new PhaseCosts(
                    wallNanos,
                    ops,
                    workers,
                    processCpuNanos < 0 || now.processCpuNanos < 0 ? -1 : now.processCpuNanos - processCpuNanos,
                    jitMillis < 0 || now.jitMillis < 0 ? -1 : now.jitMillis - jitMillis,
                    now.gcCount - gcCount,
                    now.gcMillis - gcMillis,
                    c1CpuNanos < 0 || now.c1CpuNanos < 0 ? -1 : Math.max(0, now.c1CpuNanos - c1CpuNanos),
                    c2CpuNanos < 0 || now.c2CpuNanos < 0 ? -1 : Math.max(0, now.c2CpuNanos - c2CpuNanos));
        }
    }
}
