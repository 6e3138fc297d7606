package io.bloomkv.engine;

import io.bloomkv.engine.internal.util.StripedCounter;

/**
 * The database's own counters (gets, writes, WAL, flushes, compactions, stalls); the table read
 * counters live beside them in {@link io.bloomkv.engine.internal.table.ReadCounters}. Thread-safe.
 */
final class DbCounters {
    final StripedCounter hits = new StripedCounter();
    final StripedCounter misses = new StripedCounter();
    final StripedCounter memtableHits = new StripedCounter();
    final StripedCounter puts = new StripedCounter();
    final StripedCounter deletes = new StripedCounter();
    final StripedCounter merges = new StripedCounter();
    final StripedCounter writeBatches = new StripedCounter();
    final StripedCounter userBytes = new StripedCounter();
    final StripedCounter walRecords = new StripedCounter();
    /** Bytes appended to WAL files, record framing included (RocksDB's {@code rocksdb.wal.bytes}). */
    final StripedCounter walBytes = new StripedCounter();

    final StripedCounter walSyncs = new StripedCounter();
    final StripedCounter walTailsDropped = new StripedCounter();
    final StripedCounter walsNotReplayed = new StripedCounter();
    final StripedCounter writeStalls = new StripedCounter();
    final StripedCounter writeStallNanos = new StripedCounter();
    final StripedCounter writeSlowdowns = new StripedCounter();
    final StripedCounter flushes = new StripedCounter();
    final StripedCounter flushBytes = new StripedCounter();
    /** Memtables rewritten without the entries their range tombstones hide (CommitPipeline.rewriteMemTable). */
    final StripedCounter memtableRewrites = new StripedCounter();

    final StripedCounter memtableRewriteBytesFreed = new StripedCounter();
    final StripedCounter compactions = new StripedCounter();
    final StripedCounter compactionBytesRead = new StripedCounter();
    final StripedCounter compactionBytesWritten = new StripedCounter();

    /**
     * Counts an applied write batch of {@code count} operations, {@code putCount} of them puts and {@code mergeCount}
     * merges (the rest point and range deletions).
     */
    void batchWritten(int count, int putCount, int mergeCount, long bytes) {
        puts.add(putCount);
        merges.add(mergeCount);
        deletes.add(count - putCount - mergeCount);
        userBytes.add(bytes);
        writeBatches.increment();
    }

    /** Counts a finished (non-trivial) compaction. */
    void compactionFinished(long bytesRead, long bytesWritten) {
        compactions.increment();
        compactionBytesRead.add(bytesRead);
        compactionBytesWritten.add(bytesWritten);
    }

    /** Copies the counters into {@code s}. */
    void fill(Stats s) {
        s.hits = hits.sum();
        s.misses = misses.sum();
        s.gets = s.hits + s.misses; // every get (or multiGet key) that returned is one or the other
        s.memtableHits = memtableHits.sum();
        s.puts = puts.sum();
        s.deletes = deletes.sum();
        s.merges = merges.sum();
        s.writeBatches = writeBatches.sum();
        s.userBytesWritten = userBytes.sum();
        s.walRecords = walRecords.sum();
        s.walBytesWritten = walBytes.sum();
        s.walSyncs = walSyncs.sum();
        s.walTailsDropped = walTailsDropped.sum();
        s.walsNotReplayed = walsNotReplayed.sum();
        s.flushes = flushes.sum();
        s.flushBytesWritten = flushBytes.sum();
        s.memtableRewrites = memtableRewrites.sum();
        s.memtableRewriteBytesFreed = memtableRewriteBytesFreed.sum();
        s.compactions = compactions.sum();
        s.compactionBytesRead = compactionBytesRead.sum();
        s.compactionBytesWritten = compactionBytesWritten.sum();
        s.writeStalls = writeStalls.sum();
        s.writeStallMicros = writeStallNanos.sum() / 1000;
        s.writeSlowdowns = writeSlowdowns.sum();
    }
}
