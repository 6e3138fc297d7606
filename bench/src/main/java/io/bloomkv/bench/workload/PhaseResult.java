package io.bloomkv.bench.workload;

import io.bloomkv.bench.engine.EngineCounters;
import io.bloomkv.bench.engine.TableSummary;

/**
 * What one measured phase of one workload on one engine produced (one row of results.json).
 *
 * @param workload          db_bench workload name
 * @param phase             phase name (the workload name, or e.g. seekrandom-10, deleterandom-read)
 * @param engine            "bloomkv" / "rocksdb"
 * @param filters           filters on or off
 * @param label             engine label (engine, or engine-nofilter)
 * @param kind              "read" (gets), "scan" (seeks), or "write" (puts/deletes)
 * @param ops               operations measured
 * @param seconds           wall time of the measured operations
 * @param opsPerSec         ops / seconds
 * @param p50Micros         latency percentiles of one operation, microseconds (HdrHistogram)
 * @param found             gets that returned a value (reads), or entries seen (scans)
 * @param notFound          gets that returned null
 * @param wrongAnswers      answers that contradicted the model (must be 0): gets, seeks and scans, and for
 *                          recordslatest also its inserted records read back wrong after the phase
 * @param backgroundWrites  writes done by the concurrent writer (readwhilewriting)
 * @param counters          engine counters accumulated over the phase (writes: including the final flush)
 * @param tables            the live tables the phase ran against (reads) or left behind (writes)
 * @param userBytesWritten  key + value bytes the phase wrote
 * @param cold              what the page-cache eviction before the phase did (or "off")
 * @param run               which repetition of the sequence (0-based, see --repeat)
 * @param predictedChecks   absent-key phases: filter checks the tables' key ranges predict (NaN otherwise)
 * @param predictedUseful   absent-key phases: useful checks predicted from key ranges and each filter's expected FPR
 * @param heapAfterGcBytes  Java heap in use right after a full GC at the end of the phase (the engine still open)
 */
public record PhaseResult(
        String workload,
        String phase,
        String engine,
        boolean filters,
        String label,
        String kind,
        long ops,
        double seconds,
        double opsPerSec,
        double p50Micros,
        double p99Micros,
        double p999Micros,
        double maxMicros,
        long found,
        long notFound,
        long wrongAnswers,
        long backgroundWrites,
        EngineCounters counters,
        TableSummary tables,
        long userBytesWritten,
        String cold,
        int run,
        double predictedChecks,
        double predictedUseful,
        long heapAfterGcBytes)
        implements java.io.Serializable {

    /** This row with {@code opsPerSec} in place of its own ops/s (a median over runs, see report.Summary). */
    public PhaseResult withOpsPerSec(double opsPerSec) {
        return new PhaseResult(
                workload,
                phase,
                engine,
                filters,
                label,
                kind,
                ops,
                seconds,
                opsPerSec,
                p50Micros,
                p99Micros,
                p999Micros,
                maxMicros,
                found,
                notFound,
                wrongAnswers,
                backgroundWrites,
                counters,
                tables,
                userBytesWritten,
                cold,
                run,
                predictedChecks,
                predictedUseful,
                heapAfterGcBytes);
    }

    public long filterChecks() {
        return counters.filterChecks();
    }

    /** Disk lookups avoided: checks where the filter said "absent". */
    public long filterUseful() {
        return counters.filterUseful();
    }

    public double measuredFpr() {
        return counters.measuredFpr();
    }

    /**
     * The expected false-positive rate of one filter check. For absent-key phases, from the key-range prediction:
     * the predicted false positives over the predicted checks, so each table counts as often as gets ask it (with
     * per-level bits per key, FilterAllocation.MONKEY, the small level-0 tables are asked as often as the largest
     * level, and an entries-weighted average would be the largest level's rate). Otherwise the tables' average
     * weighted by entries.
     */
    public double theoreticalFpr() {
        if (!Double.isNaN(predictedChecks) && !Double.isNaN(predictedUseful) && predictedChecks > 0) {
            return (predictedChecks - predictedUseful) / predictedChecks;
        }
        return tables.theoreticalFpr();
    }

    /**
     * Useful checks the theory predicts. For absent-key phases: from the tables' key ranges alone
     * (every table whose range covers a key is checked) and each filter's expected FPR
     * ({@link #predictedUseful}); otherwise {@link #expectedUsefulFromChecks()}.
     */
    public double expectedUseful() {
        return Double.isNaN(predictedUseful) ? expectedUsefulFromChecks() : predictedUseful;
    }

    /** Measured checks of tables not holding the key x (1 - theoretical FPR). */
    public double expectedUsefulFromChecks() {
        double fpr = tables.theoreticalFpr();
        return Double.isNaN(fpr) || counters.absentChecks() == 0 ? Double.NaN : counters.absentChecks() * (1 - fpr);
    }

    /** Measured useful / expected useful (1.0 = exactly as predicted; NaN without absent checks). */
    public double usefulVsTheory() {
        double e = expectedUseful();
        return Double.isNaN(e) || e == 0 ? Double.NaN : counters.filterUseful() / e;
    }

    /** Measured FPR / theoretical FPR (the sharper test of the same prediction). */
    public double fprVsTheory() {
        double t = theoreticalFpr();
        double m = measuredFpr();
        return Double.isNaN(t) || Double.isNaN(m) || t == 0 ? Double.NaN : m / t;
    }

    /** Blocks read from the file (block-cache misses) per operation. */
    public double blockReadsPerOp() {
        return ops == 0 ? Double.NaN : (double) counters.blockReads() / ops;
    }

    public double bytesReadPerOp() {
        return ops == 0 ? Double.NaN : (double) counters.blockReadBytes() / ops;
    }

    public long filterMemoryBytes() {
        return tables.filterBytes();
    }

    public double filterBitsPerKey() {
        return tables.filterBitsPerKey();
    }

    /** SST bytes written by flushes and compactions / user bytes written (NaN for read phases). */
    public double writeAmplification() {
        return userBytesWritten == 0 ? Double.NaN : (double) counters.tableBytesWritten() / userBytesWritten;
    }

    public long sstBytes() {
        return tables.sstBytes();
    }
}
