package io.bloomkv.bench.workload;

import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
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
 */
public record PhaseCosts(
        long wallNanos,
        long ops,
        long workerCpuNanos,
        long processCpuNanos,
        long jitMillis,
        long gcCount,
        long gcMillis) {

    /** The prefix of the line a {@code --reopen} child prints and its parent repeats. */
    public static final String LINE_PREFIX = "phase-costs:";

    /** One line: the per-operation CPU of the workers and of the process, the JIT's and the GC's time. */
    public String line(String phase, String engine) {
        return String.format(
                Locale.ROOT,
                "%s %s %s wall %.3f s, worker CPU %d ns/op, process CPU %d ns/op (%.3f s), JIT %d ms, GC %d (%d ms)",
                LINE_PREFIX,
                phase,
                engine,
                wallNanos / 1e9,
                workerCpuNanos < 0 ? -1 : workerCpuNanos / Math.max(1, ops),
                processCpuNanos < 0 ? -1 : processCpuNanos / Math.max(1, ops),
                processCpuNanos / 1e9,
                jitMillis,
                gcCount,
                gcMillis);
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
        return new Snapshot(currentProcessCpuNanos(), jitMillis, gcCount, gcMillis);
    }

    private static long currentProcessCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /** The counters at the start of a pass. */
    record Snapshot(long processCpuNanos, long jitMillis, long gcCount, long gcMillis) {
        /** The costs from this snapshot to now of a pass of {@code ops} operations whose workers used {@code cpu}. */
        PhaseCosts since(long wallNanos, long ops, long[] workerCpu) {
            Snapshot now = snapshot();
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
                    processCpuNanos < 0 ? -1 : now.processCpuNanos - processCpuNanos,
                    jitMillis < 0 ? -1 : now.jitMillis - jitMillis,
                    now.gcCount - gcCount,
                    now.gcMillis - gcMillis);
        }
    }
}
