package io.bloomkv.bench.report;

import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.workload.PhaseResult;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Everything one run produced, as written to results.json and report.md.
 *
 * @param engines    engine label -> its configuration as run
 * @param coldMethod how page-cache eviction was done, or why it could not be (null when --cold is off)
 */
public record BenchReport(
        Instant started,
        double seconds,
        Machine machine,
        BenchConfig config,
        Map<String, String> engines,
        String coldMethod,
        List<PhaseResult> phases,
        List<Goal> goals,
        List<FprPoint> fprSweep) {}
