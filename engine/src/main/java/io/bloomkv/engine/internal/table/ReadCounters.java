package io.bloomkv.engine.internal.table;

import java.util.concurrent.atomic.LongAdder;

/**
 * Live counters of the read path, shared by every table of one database. The names mirror
 * RocksDB's tickers (BLOOM_FILTER_USEFUL, BLOOM_FILTER_FULL_POSITIVE,
 * BLOOM_FILTER_FULL_TRUE_POSITIVE, BLOCK_CACHE_*). Thread-safe.
 *
 * <p>Each update of a {@link LongAdder} is an atomic read-modify-write (a locked instruction, and a fence that keeps
 * the loads around it from overlapping), so the get path adds its filter counts once per get
 * ({@link #recordProbes}), not once per table, and the positives are derived: checks - useful.
 */
public final class ReadCounters {
    /** Filter probes made by point reads. */
    public final LongAdder filterChecks = new LongAdder();
    /** Probes that answered "definitely not": a table read avoided. */
    public final LongAdder filterUseful = new LongAdder();
    /** Positive probes where the table really held an entry for the key. */
    public final LongAdder filterTruePositive = new LongAdder();
    /** Point reads of tables that have no filter (read directly). */
    public final LongAdder tablesReadWithoutFilter = new LongAdder();
    /** Blocks (data or index) read from the file, i.e. not served by the block cache. */
    public final LongAdder blockReads = new LongAdder();
    /** Bytes of the blocks counted in {@link #blockReads}. */
    public final LongAdder blockReadBytes = new LongAdder();
    /** Data blocks read by point reads (from cache or file). */
    public final LongAdder dataBlockAccesses = new LongAdder();

    public final LongAdder blockCacheHits = new LongAdder();
    public final LongAdder blockCacheMisses = new LongAdder();
    /** Range-filter probes made by bounded seeks (one per table asked). */
    public final LongAdder rangeFilterChecks = new LongAdder();
    /** Range-filter probes that answered "no key in the range": the table's index and blocks were not touched. */
    public final LongAdder rangeFilterUseful = new LongAdder();
    /** Range-filter probes that answered "might contain" where the table then had no key in the range. */
    public final LongAdder rangeFilterFalsePositives = new LongAdder();
    /**
     * Tables a point read passed without asking their filter or reading a block because a newer range tombstone
     * covers the key (RocksDB's range-deletion short-circuit in {@code Version::Get}).
     */
    public final LongAdder rangeTombstoneSkips = new LongAdder();
    /**
     * Compaction inputs not read at all because newer range tombstones every snapshot sees cover their whole key range
     * (RocksDB's "delete range drops whole files").
     */
    public final LongAdder tablesDroppedByRangeDeletion = new LongAdder();
    /** Point reads that met a merge operand and read on past it ({@code PointLookup}). */
    public final LongAdder mergeLookups = new LongAdder();

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
