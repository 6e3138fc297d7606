package io.bloomkv.engine;

import java.util.Locale;

/**
 * Counters of a {@link Db}, read at one moment by {@link Db#stats()} (each counter is exact; the set
 * is not an atomic snapshot while other threads work). Counts are since the database was opened.
 *
 * <p>The filter counters mirror RocksDB's tickers: {@link #filterUseful()} is BLOOM_FILTER_USEFUL
 * (a table read avoided), {@link #filterPositive()} is BLOOM_FILTER_FULL_POSITIVE and
 * {@link #filterTruePositive()} BLOOM_FILTER_FULL_TRUE_POSITIVE. Measured false-positive rate =
 * (positive - truePositive) / (useful + positive - truePositive). A prefix seek's probes of the tables' prefix
 * filters ({@link ReadOptions#prefixSameAsStart}) count as checks, useful or positive too (RocksDB's
 * BLOOM_FILTER_PREFIX_CHECKED / _USEFUL), never as true positives.
 */
public final class Stats {
    // Read path (from the shared ReadCounters).
    long filterChecks;
    long filterUseful;
    long filterPositive;
    long filterTruePositive;
    long tablesReadWithoutFilter;
    long blockReads;
    long blockReadBytes;
    long dataBlockAccesses;
    long blockCacheHits;
    long blockCacheMisses;
    long rangeFilterChecks;
    long rangeFilterUseful;
    long rangeFilterFalsePositives;
    long rangeTombstoneSkips;
    long tablesDroppedByRangeDeletion;
    long mergeLookups;
    // Requests.
    long gets;
    long hits;
    long misses;
    long memtableHits;
    long puts;
    long deletes;
    long merges;
    long writeBatches;
    long userBytesWritten;
    long walRecords;
    long walBytesWritten;
    long walSyncs;
    long walTailsDropped;
    long walsNotReplayed;
    // Background work.
    long flushes;
    long flushBytesWritten;
    long memtableRewrites;
    long memtableRewriteBytesFreed;
    long compactions;
    long compactionBytesRead;
    long compactionBytesWritten;
    long writeStalls;
    long writeStallMicros;
    long writeSlowdowns;
    // State.
    long filterMemoryBytes;
    int tablesWithoutFilter;
    long memtableEntries;
    /** Of {@link #memtableEntries}: those of the active (mutable) memtable. */
    long activeMemtableEntries;

    /** Point tombstones among {@link #memtableEntries} (for {@code bloomkv.estimate-num-keys}). */
    long memtableDeletes;
    /** Of {@link #memtableDeletes}: those of the active memtable. */
    long activeMemtableDeletes;

    long memtableBytes;
    /** Of {@link #memtableBytes}: those of the active memtable. */
    long activeMemtableBytes;

    boolean compactionPending;
    long backgroundErrors;
    int immutableMemtables;
    long lastSequence;
    int liveVersions;
    int openIterators;
    int openSnapshots;
    long tablesOpened;
    long tablesClosed;
    int[] levelTables = new int[0];
    long[] levelBytes = new long[0];
    long[] levelEntries = new long[0];
    /** Point tombstones among {@link #levelEntries} (for {@code bloomkv.estimate-num-keys}). */
    long[] levelDeletions = new long[0];

    long[] levelFilterMemory = new long[0];

    Stats() {}

    /**
     * Range-filter probes ({@link Options#rangeFilterBitsPerKey}): one per table a bounded seek asked whether its range
     * may hold a key. The range counterpart of {@link #filterChecks()}.
     */
    public long rangeFilterChecks() {
        return rangeFilterChecks;
    }

    /** Range-filter probes that answered "no key in the range": a table's index and data blocks not touched. */
    public long rangeFilterUseful() {
        return rangeFilterUseful;
    }

    /**
     * Range-filter probes that answered "might contain" where the table then held no key in the range (the seek read
     * its index and a block for nothing). Measured range false-positive rate =
     * falsePositives / (useful + falsePositives).
     */
    public long rangeFilterFalsePositives() {
        return rangeFilterFalsePositives;
    }

    /** Filter probes made by point reads. */
    public long filterChecks() {
        return filterChecks;
    }

    /** Probes that answered "definitely not": disk lookups avoided. */
    public long filterUseful() {
        return filterUseful;
    }

    /** Probes that answered "might contain". */
    public long filterPositive() {
        return filterPositive;
    }

    /** Positive probes where the table really held an entry for the key. */
    public long filterTruePositive() {
        return filterTruePositive;
    }

    /** Positive probes where the table held nothing for the key. */
    public long filterFalsePositive() {
        return filterPositive - filterTruePositive;
    }

    /** (positive - truePositive) / (useful + positive - truePositive); NaN before any negative probe. */
    public double measuredFalsePositiveRate() {
        long negatives = filterUseful + filterPositive - filterTruePositive;
        return negatives == 0 ? Double.NaN : (filterPositive - filterTruePositive) / (double) negatives;
    }

    /** filterUseful / filterChecks; NaN before any check. */
    public double filterUsefulRatio() {
        return filterChecks == 0 ? Double.NaN : filterUseful / (double) filterChecks;
    }

    /** Point reads of tables that have no filter (read directly). */
    public long tablesReadWithoutFilter() {
        return tablesReadWithoutFilter;
    }

    /** Blocks (data or index) read from files, i.e. not served by the block cache. */
    public long blockReads() {
        return blockReads;
    }

    /** Bytes of the blocks counted by {@link #blockReads()}. */
    public long blockReadBytes() {
        return blockReadBytes;
    }

    /** Data blocks searched by point reads, from the cache or the file. */
    public long dataBlockAccesses() {
        return dataBlockAccesses;
    }

    /**
     * Tables point reads passed without a filter probe or a block read because a newer range tombstone covers the key
     * ({@link Db#deleteRange}).
     */
    public long rangeTombstoneSkips() {
        return rangeTombstoneSkips;
    }

    /** Compaction inputs dropped unread because range tombstones every snapshot sees cover them whole. */
    public long tablesDroppedByRangeDeletion() {
        return tablesDroppedByRangeDeletion;
    }

    /** Point reads whose newest entry was a merge operand, so they read on (each table's filter still first). */
    public long mergeLookups() {
        return mergeLookups;
    }

    public long blockCacheHits() {
        return blockCacheHits;
    }

    public long blockCacheMisses() {
        return blockCacheMisses;
    }

    /** Keys looked up by get and multiGet that returned: {@link #hits} + {@link #misses}. */
    public long gets() {
        return gets;
    }

    /** Gets that found a value. */
    public long hits() {
        return hits;
    }

    /** Gets that found nothing (or a tombstone). */
    public long misses() {
        return misses;
    }

    /** Gets answered by a memtable (value or tombstone) without asking any table. */
    public long memtableHits() {
        return memtableHits;
    }

    public long puts() {
        return puts;
    }

    /** Point deletes and range deletions written (merges are {@link #merges}). */
    public long deletes() {
        return deletes;
    }

    /** Merge operands written ({@link Db#merge}, and merges in write batches). */
    public long merges() {
        return merges;
    }

    /** Write batches applied (a put or delete is a batch of one). */
    public long writeBatches() {
        return writeBatches;
    }

    /** Bytes of keys and values written by callers. */
    public long userBytesWritten() {
        return userBytesWritten;
    }

    /** WAL records appended (one per write group). */
    public long walRecords() {
        return walRecords;
    }

    /**
     * Bytes appended to write-ahead logs: the records of write groups and the record that starts each new log, with
     * their framing (RocksDB's {@code rocksdb.wal.bytes}); 0 with the WAL disabled.
     */
    public long walBytesWritten() {
        return walBytesWritten;
    }

    /** WAL fsyncs. Under GROUP_COMMIT with concurrent writers this is below {@link #writeBatches()}. */
    public long walSyncs() {
        return walSyncs;
    }

    /** Torn WAL tails cut during recovery at open. */
    public long walTailsDropped() {
        return walTailsDropped;
    }

    /**
     * WALs not replayed during recovery at open because an older WAL came back shorter than it was written (a power
     * loss under {@link SyncMode#NONE} took its unsynced end): their writes came after lost ones, and what survives is a
     * prefix of the writes (docs/operations.md, "Write-ahead log"). 0 after a process crash.
     */
    public long walsNotReplayed() {
        return walsNotReplayed;
    }

    /** Memtables written to level-0 tables. */
    public long flushes() {
        return flushes;
    }

    public long flushBytesWritten() {
        return flushBytesWritten;
    }

    /**
     * Memtables replaced in memory by a copy without the entries their range tombstones hide from every reader (once
     * those pass half of the memtable: a store dropping whole key ranges, such as Kafka Streams' expired segments).
     */
    public long memtableRewrites() {
        return memtableRewrites;
    }

    /** Memtable bytes those rewrites freed. */
    public long memtableRewriteBytesFreed() {
        return memtableRewriteBytesFreed;
    }

    public long compactions() {
        return compactions;
    }

    /** Table bytes read by compactions. */
    public long compactionBytesRead() {
        return compactionBytesRead;
    }

    /** Table bytes written by compactions. */
    public long compactionBytesWritten() {
        return compactionBytesWritten;
    }

    /**
     * Table bytes written per table byte flushed: (flushBytesWritten + compactionBytesWritten) /
     * flushBytesWritten (RocksDB's "W-Amp" of the Sum row; the WAL is not counted). NaN before a flush.
     */
    public double writeAmplification() {
        return flushBytesWritten == 0
                ? Double.NaN
                : (flushBytesWritten + compactionBytesWritten) / (double) flushBytesWritten;
    }

    /** Times a writer waited for a flush or a compaction. */
    public long writeStalls() {
        return writeStalls;
    }

    public long writeStallMicros() {
        return writeStallMicros;
    }

    /** Writes delayed by 1 ms because level 0 reached its slowdown threshold. */
    public long writeSlowdowns() {
        return writeSlowdowns;
    }

    /** Off-heap bytes held by the filters of all live tables. */
    public long filterMemoryBytes() {
        return filterMemoryBytes;
    }

    /**
     * Live tables that point reads read without a filter now: written without one, a filter that failed its checks, or
     * one a filter memory budget has no room to load ({@link TableInfo} shows which). Each such table costs a block
     * read (block cache, else the file) for every key in its range that reaches it ({@link #tablesReadWithoutFilter()}).
     */
    public int tablesWithoutFilter() {
        return tablesWithoutFilter;
    }

    /** Entries (puts and tombstones, every version) in the active memtable and those waiting for flush. */
    public long memtableEntries() {
        return memtableEntries;
    }

    /** Bytes of the mutable and immutable memtables. */
    public long memtableBytes() {
        return memtableBytes;
    }

    /**
     * Of {@link #memtableEntries()}: those of the active (mutable) memtable (RocksDB's num-entries-active-mem-table).
     */
    public long activeMemtableEntries() {
        return activeMemtableEntries;
    }

    /** Point tombstones among {@link #memtableEntries()} (range deletions are not counted, as in RocksDB). */
    public long memtableDeletes() {
        return memtableDeletes;
    }

    /** Of {@link #memtableDeletes()}: those of the active memtable (RocksDB's num-deletes-active-mem-table). */
    public long activeMemtableDeletes() {
        return activeMemtableDeletes;
    }

    /** Of {@link #memtableBytes()}: those of the active memtable (RocksDB's cur-size-active-mem-table). */
    public long activeMemtableBytes() {
        return activeMemtableBytes;
    }

    /**
     * RocksDB's {@code rocksdb.estimate-num-keys}, as {@code bloomkv.estimate-num-keys} answers it: the memtables'
     * entries and the tables' puts, less the deletes (overwritten versions not yet compacted away still count).
     */
    public long estimateNumKeys() {
        return DbProperties.estimateNumKeys(this);
    }

    /** Whether a compaction is due now (automatic compactions on and a level over its target; RocksDB's kind). */
    public boolean compactionPending() {
        return compactionPending;
    }

    /**
     * Background errors (failed flushes and compactions, and the failures of a {@link Db#resume}) recorded since open,
     * as RocksDB's {@code rocksdb.background-errors} counts them: a resume does not lower it.
     */
    public long backgroundErrors() {
        return backgroundErrors;
    }

    public int immutableMemtables() {
        return immutableMemtables;
    }

    public long lastSequence() {
        return lastSequence;
    }

    public int liveVersions() {
        return liveVersions;
    }

    public int openIterators() {
        return openIterators;
    }

    public int openSnapshots() {
        return openSnapshots;
    }

    /** Table readers opened since open (each loads a filter). */
    public long tablesOpened() {
        return tablesOpened;
    }

    /** Table readers closed since open. */
    public long tablesClosed() {
        return tablesClosed;
    }

    public int numLevels() {
        return levelTables.length;
    }

    /** Live tables in all levels. */
    public int tableCount() {
        int n = 0;
        for (int t : levelTables) {
            n += t;
        }
        return n;
    }

    /** Bytes of all live tables. */
    public long tableBytes() {
        long n = 0;
        for (long b : levelBytes) {
            n += b;
        }
        return n;
    }

    public int levelTables(int level) {
        return levelTables[level];
    }

    public long levelBytes(int level) {
        return levelBytes[level];
    }

    public long levelEntries(int level) {
        return levelEntries[level];
    }

    public long levelFilterMemory(int level) {
        return levelFilterMemory[level];
    }

    /** Filter bits per entry of {@code level} as stored (0 when the level is empty or has no filters). */
    public double levelBitsPerKey(int level) {
        return levelEntries[level] == 0 ? 0 : levelFilterMemory[level] * 8.0 / levelEntries[level];
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "gets %d (hits %d, misses %d, memtable %d); puts %d, deletes %d, merges %d, batches %d%n",
                gets,
                hits,
                misses,
                memtableHits,
                puts,
                deletes,
                merges,
                writeBatches));
        sb.append(String.format(
                Locale.ROOT,
                "filter: checks %d, useful %d, positive %d, true positive %d, measured FPR %.5f, memory %d bytes%n",
                filterChecks,
                filterUseful,
                filterPositive,
                filterTruePositive,
                measuredFalsePositiveRate(),
                filterMemoryBytes));
        if (rangeFilterChecks > 0) {
            sb.append(String.format(
                    Locale.ROOT,
                    "range filter: checks %d, useful %d, false positives %d%n",
                    rangeFilterChecks,
                    rangeFilterUseful,
                    rangeFilterFalsePositives));
        }
        sb.append(String.format(
                Locale.ROOT,
                "blocks: read %d (%d bytes), data-block accesses %d, cache hits %d, misses %d%n",
                blockReads,
                blockReadBytes,
                dataBlockAccesses,
                blockCacheHits,
                blockCacheMisses));
        sb.append(String.format(
                Locale.ROOT, "wal: records %d (%d bytes), syncs %d%n", walRecords, walBytesWritten, walSyncs));
        sb.append(String.format(
                Locale.ROOT,
                "flushes %d (%d bytes), compactions %d (read %d, written %d), write amp %.2f, stalls %d (%d us), slowdowns %d%n",
                flushes,
                flushBytesWritten,
                compactions,
                compactionBytesRead,
                compactionBytesWritten,
                writeAmplification(),
                writeStalls,
                writeStallMicros,
                writeSlowdowns));
        if (rangeTombstoneSkips + tablesDroppedByRangeDeletion + mergeLookups + memtableRewrites > 0) {
            sb.append(String.format(
                    Locale.ROOT,
                    "range tombstones: tables skipped by gets %d, dropped by compactions %d, memtable rewrites %d (%d"
                            + " bytes freed); merge lookups %d%n",
                    rangeTombstoneSkips,
                    tablesDroppedByRangeDeletion,
                    memtableRewrites,
                    memtableRewriteBytesFreed,
                    mergeLookups));
        }
        for (int level = 0; level < levelTables.length; level++) {
            if (levelTables[level] > 0) {
                sb.append(String.format(
                        Locale.ROOT,
                        "L%d: %d tables, %d bytes, %d entries, filter %d bytes (%.2f bits/key)%n",
                        level,
                        levelTables[level],
                        levelBytes[level],
                        levelEntries[level],
                        levelFilterMemory[level],
                        levelBitsPerKey(level)));
            }
        }
        return sb.toString();
    }
}
