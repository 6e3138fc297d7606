package io.bloomkv.bench.report;

import io.bloomkv.bench.fpr.FprSweep;
import io.bloomkv.bloom.FilterKind;
import java.util.ArrayList;
import java.util.List;

/**
 * The FPR chart's data: the bloom module's filters measured against their formulas by
 * {@link FprSweep} (every kind, each bits-per-key setting, random keys), as {@link FprPoint}s.
 */
public final class FilterLibrarySweep {
    public static final double[] DEFAULT_BITS = {4, 6, 8, 10, 12, 14, 16};

    private FilterLibrarySweep() {}

    public static List<FprPoint> sweep(long keys, long probes, double[] bitsPerKey, long seed) {
        List<FprSweep.Row> rows;
        try {
            rows = FprSweep.run(
                    new FprSweep.Config(List.of(FilterKind.values()), bitsPerKey, keys, probes, seed, false),
                    Math.max(1, Runtime.getRuntime().availableProcessors()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("FPR sweep interrupted", e);
        }
        List<FprPoint> out = new ArrayList<>();
        for (FprSweep.Row r : rows) {
            String kind = r.kind() == FilterKind.COUNTING
                    ? "COUNTING (x = counters per key)"
                    : r.kind().name();
            out.add(new FprPoint(kind, r.bitsPerKey(), r.k(), keys, r.queries(), r.measured(), r.theoretical()));
        }
        return out;
    }
}
