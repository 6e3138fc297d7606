package io.bloomkv.bench.report;

import io.bloomkv.bench.workload.PhaseResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One phase on one engine column over all repetitions (--repeat): its median ops/s (for an even count of runs the
 * mean of the two middle runs' ops/s), the spread (the min and max ops/s), and the run that stands for the phase in
 * the tables: the run with the median ops/s, for an even count the lower of the two middle runs. Counts of the
 * filters are the same in every run (seeded data), so that run's counts are the counts.
 *
 * @param median          the run whose figures stand for the phase (the lower of the two middle runs for an even count)
 * @param runs            how many runs were measured
 * @param medianOpsPerSec the median of the runs' ops/s (the mean of the two middle ones for an even count)
 */
public record Summary(PhaseResult median, int runs, double medianOpsPerSec, double minOpsPerSec, double maxOpsPerSec) {

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
                    median(sorted.stream().map(PhaseResult::opsPerSec).toList()),
                    sorted.get(0).opsPerSec(),
                    sorted.get(sorted.size() - 1).opsPerSec()));
        }
        return out;
    }

    /**
     * The rows the tables and charts show, one per (phase, label): the run that stands for the phase ({@link #median})
     * with its ops/s replaced by the median ops/s of all runs, so that an even number of runs shows the mean of the
     * two middle ones and not the lower.
     */
    public static List<PhaseResult> medians(List<PhaseResult> results) {
        return of(results).stream()
                .map(s -> s.median().withOpsPerSec(s.medianOpsPerSec()))
                .toList();
    }

    /** Median of the values (the mean of the middle two for an even count). */
    public static double median(List<Double> values) {
        List<Double> v = new ArrayList<>(values);
        v.sort(Double::compare);
        int n = v.size();
        return n == 0 ? Double.NaN : n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }
}
