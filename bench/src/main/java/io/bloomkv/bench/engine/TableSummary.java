package io.bloomkv.bench.engine;

/**
 * The live tables of one engine at one moment.
 *
 * @param tableCount     live SSTables
 * @param entries        entries in them (filter keys)
 * @param filterBytes    memory held by their filters (bytes)
 * @param sstBytes       their size on disk (bytes)
 * @param theoreticalFpr expected false-positive rate of one filter check, averaged over the tables
 *                       weighted by entries, from each table's real filter size, probe count and key
 *                       count and the filter's own formula; NaN when there is no filter
 * @param ranges         each live table's key range and expected FPR
 */
public record TableSummary(
        long tableCount,
        long entries,
        long filterBytes,
        long sstBytes,
        double theoreticalFpr,
        java.util.List<TableRange> ranges)
        implements java.io.Serializable {

    public TableSummary {
        ranges = java.util.List.copyOf(ranges);
    }

    /**
     * The theory of a batch of absent-key gets, from the tables' key ranges alone: each get asks the
     * filter of every table whose range covers its key, and each such check is useful with probability
     * 1 - that filter's expected FPR. Returns {expected checks, expected useful}.
     */
    public double[] predictAbsent(byte[][] keys) {
        double checks = 0;
        double useful = 0;
        for (byte[] k : keys) {
            for (TableRange r : ranges) {
                if (r.covers(k)) {
                    checks++;
                    useful += Double.isNaN(r.expectedFpr()) ? 0 : 1 - r.expectedFpr();
                }
            }
        }
        return new double[] {checks, useful};
    }

    /** Filter bits per key actually spent (NaN without entries). */
    public double filterBitsPerKey() {
        return entries == 0 ? Double.NaN : filterBytes * 8.0 / entries;
    }
}
