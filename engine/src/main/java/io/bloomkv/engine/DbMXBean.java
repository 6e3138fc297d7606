package io.bloomkv.engine;

/**
 * What JMX shows of an open {@link Db}: one MXBean per database, named {@code io.bloomkv:type=Db,name=} followed by
 * {@link javax.management.ObjectName#quote} of the directory as passed to {@link Db#open}, registered in the platform
 * MBean server when the database opens and removed when it closes (RocksDB exposes the same through its
 * {@code Statistics} and {@code GetProperty}; Kafka Streams through its metrics). Every attribute is read from one
 * {@link Stats} taken for the call (see that class for each counter's meaning); reading one after close answers
 * the last values seen. A database opened while that name is taken by another open one (the same path opened
 * read-only beside a writer, or one path on two {@link io.bloomkv.engine.fs.InMemoryFileSystem}s) gets the name with
 * {@code ,instance=2} added (3, ... for more): every open database has its own MBean.
 */
public interface DbMXBean {
    /** The database directory (absolute). */
    String getDirectory();

    long getFilterChecks();

    /** Disk lookups avoided: tables whose filter said "absent". */
    long getFilterUseful();

    long getFilterPositive();

    long getFilterTruePositive();

    /** (positive - true positive) / (useful + positive - true positive). */
    double getFilterFalsePositiveRate();

    long getBlockReads();

    long getBlockReadBytes();

    long getBlockCacheHits();

    long getBlockCacheMisses();

    long getGets();

    long getPuts();

    long getDeletes();

    long getMerges();

    long getWriteStalls();

    long getWriteStallMicros();

    long getWriteSlowdowns();

    long getFlushes();

    long getCompactions();

    long getCompactionBytesRead();

    long getCompactionBytesWritten();

    double getWriteAmplification();

    /** Memory by kind: the memtables (mutable and immutable), bytes. */
    long getMemtableBytes();

    /** Memory by kind: the block cache's used bytes (0 without a cache; a shared cache's total use). */
    long getBlockCacheBytes();

    /** Memory by kind: the tables' filters, off-heap bytes. */
    long getFilterMemoryBytes();

    /** Live tables read without a filter now ("bloomkv.num-tables-without-filter", {@link Stats#tablesWithoutFilter}). */
    int getTablesWithoutFilter();

    /** The table readers open (each holds its index and properties on the heap, its filter off-heap). */
    long getOpenTables();

    long getLastSequence();

    /** Live tables per level, level 0 first (the level shape). */
    int[] getLevelFiles();

    /** Bytes of live tables per level. */
    long[] getLevelBytes();

    /** {@link Db#property} "bloomkv.levelstats". */
    String getLevelStats();

    /** 1 once a background error stopped writes, else 0 ("bloomkv.background-errors"). */
    int getBackgroundErrors();

    /** The background error's message, or an empty string. */
    String getBackgroundError();

    /**
     * Whether {@link Db#pauseBackgroundWork} is in effect: from the start of the first pause (compactions are held from
     * there) until the continue matching the last one ("bloomkv.background-work-paused").
     */
    boolean isBackgroundWorkPaused();
}
