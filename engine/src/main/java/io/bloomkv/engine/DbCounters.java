package io.bloomkv.engine;

import java.util.concurrent.atomic.LongAdder;

/**
 * The database's own counters (gets, writes, WAL, flushes, compactions, stalls); the table read
 * counters live beside them in {@link io.bloomkv.engine.internal.table.ReadCounters}. Thread-safe.
 */
final class DbCounters {
    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder memtableHits = new LongAdder();
    final LongAdder puts = new LongAdder();
    final LongAdder deletes = new LongAdder();
    final LongAdder writeBatches = new LongAdder();
    final LongAdder userBytes = new LongAdder();
    final LongAdder walRecords = new LongAdder();
    final LongAdder walSyncs = new LongAdder();
    final LongAdder walTailsDropped = new LongAdder();
    final LongAdder writeStalls = new LongAdder();
    final LongAdder writeStallNanos = new LongAdder();
    final LongAdder writeSlowdowns = new LongAdder();
    final LongAdder flushes = new LongAdder();
    final LongAdder flushBytes = new LongAdder();
    final LongAdder compactions = new LongAdder();
    final LongAdder compactionBytesRead = new LongAdder();
    final LongAdder compactionBytesWritten = new LongAdder();

    /** Counts an applied write batch of {@code count} operations, {@code putCount} of them puts. */
    void batchWritten(int count, int putCount, long bytes) {
        puts.add(putCount);
        deletes.add(count - putCount);
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
        s.writeBatches = writeBatches.sum();
        s.userBytesWritten = userBytes.sum();
        s.walRecords = walRecords.sum();
        s.walSyncs = walSyncs.sum();
        s.walTailsDropped = walTailsDropped.sum();
        s.flushes = flushes.sum();
        s.flushBytesWritten = flushBytes.sum();
        s.compactions = compactions.sum();
        s.compactionBytesRead = compactionBytesRead.sum();
        s.compactionBytesWritten = compactionBytesWritten.sum();
        s.writeStalls = writeStalls.sum();
        s.writeStallMicros = writeStallNanos.sum() / 1000;
        s.writeSlowdowns = writeSlowdowns.sum();
    }
}
