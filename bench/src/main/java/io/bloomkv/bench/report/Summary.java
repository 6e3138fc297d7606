package io.bloomkv.bench.report;

import io.bloomkv.bench.workload.PhaseResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One phase on one engine column over all repetitions (--repeat): the run with the median ops/s
 * stands for the phase, and the spread is the min and max ops/s. Counts of the filters are the same
 * in every run (seeded data), so the median run's counts are the counts.
 *
 * @param median the run whose ops/s is the median (the lower median for an even count)
 * @param runs   how many runs were measured
 */
public record Summary(PhaseResult median, int runs, double minOpsPerSec, double maxOpsPerSec) {

    /** Per (phase, label), in the order the phases first appear. */
    public static List<Summary> of(List<PhaseResult> results) {
        Map<String, List<PhaseResult>> groups = new LinkedHashMap<>();
        for (PhaseResult r : results) {
            groups.computeIfAbsent(r.phase() + "\u0000" + r.label(), k -> new ArrayList<>())
                    .add(r);
        }
        List<Summary> out = new ArrayList<>();
        for (List<PhaseResult> g : groups.values()) {
            List<PhaseResult> sorted = new ArrayList<>(g);
            sorted.sort(Comparator.comparingDouble(PhaseResult::opsPerSec));
            PhaseResult median = sorted.get((sorted.size() - 1) / 2);
            out.add(new Summary(
                    median,
                    sorted.size(),
                    sorted.get(0).opsPerSec(),
                    sorted.get(sorted.size() - 1).opsPerSec()));
        }
        return out;
    }

    /** The median rows only (what the tables and charts show). */
    public static List<PhaseResult> medians(List<PhaseResult> results) {
        return of(results).stream().map(Summary::median).toList();
    }

    /** Median of the values (the mean of the middle two for an even count). */
    public static double median(List<Double> values) {
        List<Double> v = new ArrayList<>(values);
        v.sort(Double::compare);
        int n = v.size();
        return n == 0 ? Double.NaN : n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }
}
