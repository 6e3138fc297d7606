package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.internal.util.StripedCounter;

/**
 * Live counters of the read path, shared by every table of one database. The names mirror
 * RocksDB's tickers (BLOOM_FILTER_USEFUL, BLOOM_FILTER_FULL_POSITIVE,
 * BLOOM_FILTER_FULL_TRUE_POSITIVE, BLOCK_CACHE_*). Thread-safe.
 *
 * <p>Each update of a counter ({@link StripedCounter}) is an atomic read-modify-write (a locked instruction, and a fence that keeps
 * the loads around it from overlapping), so the get path adds its filter counts once per get
 * ({@link #recordProbes}), not once per table, and the positives are derived: checks - useful.
 */
public final class ReadCounters {
    /** Filter probes made by point reads. */
    public final StripedCounter filterChecks = new StripedCounter();
    /** Probes that answered "definitely not": a table read avoided. */
    public final StripedCounter filterUseful = new StripedCounter();
    /** Positive probes where the table really held an entry for the key. */
    public final StripedCounter filterTruePositive = new StripedCounter();
    /** Point reads of tables that have no filter (read directly). */
    public final StripedCounter tablesReadWithoutFilter = new StripedCounter();
    /** Blocks (data or index) read from the file, i.e. not served by the block cache. */
    public final StripedCounter blockReads = new StripedCounter();
    /** Bytes of the blocks counted in {@link #blockReads}. */
    public final StripedCounter blockReadBytes = new StripedCounter();
    /** Data blocks read by point reads (from cache or file). */
    public final StripedCounter dataBlockAccesses = new StripedCounter();

    public final StripedCounter blockCacheHits = new StripedCounter();
    public final StripedCounter blockCacheMisses = new StripedCounter();
    /** Range-filter probes made by bounded seeks (one per table asked). */
    public final StripedCounter rangeFilterChecks = new StripedCounter();
    /** Range-filter probes that answered "no key in the range": the table's index and blocks were not touched. */
    public final StripedCounter rangeFilterUseful = new StripedCounter();
    /** Range-filter probes that answered "might contain" where the table then had no key in the range. */
    public final StripedCounter rangeFilterFalsePositives = new StripedCounter();
    /**
     * Tables a point read passed without asking their filter or reading a block because a newer range tombstone
     * covers the key (RocksDB's range-deletion short-circuit in {@code Version::Get}).
     */
    public final StripedCounter rangeTombstoneSkips = new StripedCounter();
    /**
     * Compaction inputs not read at all because newer range tombstones every snapshot sees cover their whole key range
     * (RocksDB's "delete range drops whole files").
     */
    public final StripedCounter tablesDroppedByRangeDeletion = new StripedCounter();
    /** Point reads that met a merge operand and read on past it ({@code PointLookup}). */
    public final StripedCounter mergeLookups = new StripedCounter();

    /** Adds {@code checks} filter probes, {@code useful} of which answered "definitely not". */
    public void recordProbes(long checks, long useful) {
        if (checks != 0) {
            filterChecks.add(
                    checks); // before useful: a reader of useful, then checks, never sees more useful than checks
        }
        if (useful != 0) {
            filterUseful.add(useful);
        }
    }

    /** Probes that answered "might contain": checks - useful, read in the order that keeps it >= 0. */
    public long filterPositive() {
        long useful = filterUseful.sum();
        return filterChecks.sum() - useful;
    }
}
