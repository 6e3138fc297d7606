package io.bloomkv.bench.engine;

/**
 * Cumulative read/write counters of one engine, in RocksDB's ticker vocabulary so both engines map
 * the same way:
 * <ul>
 *   <li>{@code filterUseful} = BLOOM_FILTER_USEFUL: filter said "absent", the table was not read (a disk lookup avoided);
 *   <li>{@code filterPositive} = BLOOM_FILTER_FULL_POSITIVE: filter said "might contain";
 *   <li>{@code filterTruePositive} = BLOOM_FILTER_FULL_TRUE_POSITIVE: positive and the table held the key;
 *   <li>{@code filterChecks} = useful + positive (RocksDB has no separate ticker);
 *   <li>{@code blockReads}/{@code blockReadBytes}: blocks read from the file (block-cache misses) and their bytes;
 *   <li>{@code tableBytesWritten}: SST bytes written by flushes and compactions; {@code walBytesWritten}: WAL bytes.
 * </ul>
 */
public record EngineCounters(
        long filterChecks,
        long filterUseful,
        long filterPositive,
        long filterTruePositive,
        long blockReads,
        long blockReadBytes,
        long tableBytesWritten,
        long walBytesWritten)
        implements java.io.Serializable {

    public static final EngineCounters ZERO = new EngineCounters(0, 0, 0, 0, 0, 0, 0, 0);

    /** The counts accumulated between {@code earlier} and this snapshot. */
    public EngineCounters minus(EngineCounters earlier) {
        return new EngineCounters(
                filterChecks - earlier.filterChecks,
                filterUseful - earlier.filterUseful,
                filterPositive - earlier.filterPositive,
                filterTruePositive - earlier.filterTruePositive,
                blockReads - earlier.blockReads,
                blockReadBytes - earlier.blockReadBytes,
                tableBytesWritten - earlier.tableBytesWritten,
                walBytesWritten - earlier.walBytesWritten);
    }

    /** Checks of tables that did not hold the key: useful + false positives. */
    public long absentChecks() {
        return filterUseful + falsePositives();
    }

    public long falsePositives() {
        return filterPositive - filterTruePositive;
    }

    /** Measured false-positive rate = (positive - truePositive) / (useful + positive - truePositive); NaN without absent checks. */
    public double measuredFpr() {
        long absent = absentChecks();
        return absent == 0 ? Double.NaN : (double) falsePositives() / absent;
    }
}
