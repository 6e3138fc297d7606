package io.bloomkv.engine.internal.table;

import java.util.concurrent.atomic.LongAdder;

/**
 * Live counters of the read path, shared by every table of one database. The names mirror
 * RocksDB's tickers (BLOOM_FILTER_USEFUL, BLOOM_FILTER_FULL_POSITIVE,
 * BLOOM_FILTER_FULL_TRUE_POSITIVE, BLOCK_CACHE_*). Thread-safe.
 */
public final class ReadCounters {
    /** Filter probes made by point reads. */
    public final LongAdder filterChecks = new LongAdder();
    /** Probes that answered "definitely not": a table read avoided. */
    public final LongAdder filterUseful = new LongAdder();
    /** Probes that answered "might contain". */
    public final LongAdder filterPositive = new LongAdder();
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
}
