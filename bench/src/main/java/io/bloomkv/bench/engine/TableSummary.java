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
 */
public record TableSummary(long tableCount, long entries, long filterBytes, long sstBytes, double theoreticalFpr) {

    /** Filter bits per key actually spent (NaN without entries). */
    public double filterBitsPerKey() {
        return entries == 0 ? Double.NaN : filterBytes * 8.0 / entries;
    }
}
