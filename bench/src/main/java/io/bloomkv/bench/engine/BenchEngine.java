package io.bloomkv.bench.engine;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The one small interface the harness drives both engines through. Implementations are safe for
 * concurrent get/scan from several threads while one thread writes.
 */
public interface BenchEngine extends AutoCloseable {

    /** "bloomkv" or "rocksdb". */
    String name();

    boolean filtersEnabled();

    void put(byte[] key, byte[] value) throws IOException;

    /**
     * A bulk load: sorted pairs written into one table file outside the database ({@link #put}), then added to it
     * ({@link #ingest}): bloomkv's TableFileWriter + Db.ingest, RocksDB's SstFileWriter + ingestExternalFile, both
     * moving the file in.
     */
    interface BulkLoad extends AutoCloseable {
        /** Adds a pair; keys in strictly increasing order. */
        void put(byte[] key, byte[] value) throws IOException;

        /** Finishes the file and ingests it. */
        void ingest() throws IOException;

        @Override
        void close() throws IOException;
    }

    /** Starts a bulk load through the table file {@code file} (outside the database directory). */
    BulkLoad bulkLoad(Path file) throws IOException;

    /** Writes all pairs atomically (one write batch). */
    void putAll(List<byte[]> keys, List<byte[]> values) throws IOException;

    /** The value, or null when absent. */
    byte[] get(byte[] key) throws IOException;

    void delete(byte[] key) throws IOException;

    /**
     * Adds a merge operand: both engines are opened with an unsigned 64-bit add operator (bloomkv's
     * {@code MergeOperators.uint64Add()}, RocksDB's {@code UInt64AddOperator}), so {@code operand} is an 8-byte
     * little-endian increment.
     */
    void merge(byte[] key, byte[] operand) throws IOException;

    /** Deletes every key in [begin, end) with one range tombstone. */
    void deleteRange(byte[] begin, byte[] end) throws IOException;

    /** The values of {@code keys} (null where absent), read as one batch when the engine has a batched read. */
    default List<byte[]> multiGet(List<byte[]> keys) throws IOException {
        List<byte[]> out = new java.util.ArrayList<>(keys.size());
        for (byte[] k : keys) {
            out.add(get(k));
        }
        return out;
    }

    /** Seeks to the first key >= start and steps over up to {@code count} entries; returns how many it saw. */
    default int scan(byte[] start, int count) throws IOException {
        return scan(start, count, null, null);
    }

    /**
     * {@link #scan(byte[], int)} that also hands out the entries it saw: entry {@code i}'s key and value, the arrays
     * the engine's iterator returned (copies the caller owns), go to {@code keysOut[i]} and {@code valuesOut[i]} for
     * {@code i} below the count returned; the slots after it are left as they were. Both arrays null (nothing handed
     * out) or at least {@code count} long. Per entry this does the work of {@link #scan(byte[], int)} plus two array
     * stores, so the entries can be checked after the scan is timed, as a get's value is.
     */
    int scan(byte[] start, int count, byte[][] keysOut, byte[][] valuesOut) throws IOException;

    /**
     * A prefix seek: seeks to the first key >= {@code start} with prefix-same-as-start semantics (the engine may skip
     * every table whose prefix filter rules out {@code start}'s first {@code prefixLength} bytes, when it was opened
     * with that prefix length) and steps over up to {@code count} entries that share that prefix; returns how many.
     */
    default int scanPrefix(byte[] start, int prefixLength, int count) throws IOException {
        return scanPrefix(start, prefixLength, count, null, null);
    }

    /**
     * {@link #scanPrefix(byte[], int, int)} that also hands out the entries it saw, as
     * {@link #scan(byte[], int, byte[][], byte[][])} does.
     */
    int scanPrefix(byte[] start, int prefixLength, int count, byte[][] keysOut, byte[][] valuesOut) throws IOException;

    /** Flushes every memtable to SSTables and waits until background flushes and compactions are idle. */
    void flushAndSettle() throws IOException;

    /** Compacts every table down the levels (a full manual compaction) and waits for it: the same LSM shape on every engine. */
    void compactAll() throws IOException;

    /** Closes and reopens the database on the same directory: caches (block cache) start empty. */
    void reopen() throws IOException;

    /** A cumulative snapshot of the counters (see {@link EngineCounters}). */
    EngineCounters counters() throws IOException;

    /**
     * Flushes plus compactions running now (RocksDB's {@code rocksdb.num-running-flushes} +
     * {@code rocksdb.num-running-compactions}; bloomkv counts them from its {@code EventListener}'s begin/completed
     * calls). Cheap enough to poll every millisecond while other threads read.
     */
    int backgroundJobsRunning() throws IOException;

    /**
     * Cumulative microseconds writers spent stopped or slowed by the engine's write stalls (bloomkv
     * {@code Stats.writeStallMicros}: level-0 slowdowns and stops, a full set of immutable memtables; RocksDB's
     * {@code STALL_MICROS} ticker), or -1 where the engine does not say.
     */
    default long writeStallMicros() throws IOException {
        return -1;
    }

    /** The live tables now. */
    TableSummary tables() throws IOException;

    /** The live SSTable files now (for page-cache eviction). */
    List<Path> tableFiles() throws IOException;

    /** Short description of the configuration, for the report. */
    String describe();

    @Override
    void close() throws IOException;
}
