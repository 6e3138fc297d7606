package io.bloomkv.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.filter.FilterPolicy;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.table.TableBuilderOptions;
import io.bloomkv.engine.internal.table.TableWriter;
import io.bloomkv.engine.internal.table.WriteBehindFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Writes sorted puts, merge operands and deletes, and range deletions, into a table file outside any database, for
 * {@link Db#ingest} (RocksDB's {@code SstFileWriter}). The file is the engine's own table format (engine/FORMAT.md, "Table files"), written by the
 * engine's table builder with the filter, block size, restart interval, prefix length and bottommost compression of
 * the given {@link Options} (a table that overlaps nothing is ingested into the last level as written).
 *
 * <p>Every entry is written with sequence number 0, as RocksDB's writer does: {@link Db#ingest} either places the file
 * where nothing older exists for its keys, or rewrites it with a fresh sequence number.
 *
 * <p>Keys of {@link #put}, {@link #merge} and {@link #delete} must be added in strictly increasing unsigned
 * lexicographic order, one entry per key (as RocksDB's writer requires); an unsorted or repeated key is refused with an
 * {@link InvalidArgumentException} and nothing is added (the writer stays usable). {@link #deleteRange} may come in any
 * order. Closing a writer before
 * {@link #finish()} deletes the partial file. Not thread-safe.
 *
 * <p>The finished blocks are written to the file by a second thread, one per open writer (ended by {@link #finish()}
 * or {@link #close()}), while the caller builds the next ones: through the page cache by default, when that thread
 * syncs the data blocks while {@code finish()} builds the filter, and every {@link Options#bytesPerSync} bytes when
 * that is set; or with O_DIRECT where the file system offers it and {@link Options#useDirectWritesForBulkLoad} asks for
 * it (the blocks reach the device during the load and the file does not fill the page cache). An I/O error of that
 * thread is thrown by the next {@code put}, {@code merge} or {@code delete}, or by {@code finish()}.
 *
 * <pre>{@code
 * try (TableFileWriter w = TableFileWriter.create(Path.of("/tmp/batch-1.sst"), Options.defaults())) {
 *     w.put(key1, value1);
 *     w.put(key2, value2);
 *     w.finish();
 * }
 * }</pre>
 */
public final class TableFileWriter implements AutoCloseable {
    /** Bytes handed to the write-behind thread at a time (large writes), at most bytesPerSync when that is set. */
    private static final int MAX_CHUNK = 1 << 20;

    private static final int MIN_CHUNK = 4096;
    /** Full chunks that may wait for the write-behind thread before put() blocks. */
    private static final int WRITE_BEHIND_CHUNKS = 4;

    private final FileSystem fs;
    private final Path path;
    private final TableWriter writer;
    /**
     * The internal key of the last entry (owned by the table writer, never modified); before the first put, an internal
     * key with an empty user key, which every key sorts after (keys are never empty). So the order check has no branch
     * that only a writer's first put takes: a JIT that compiled put without ever seeing that branch taken would return
     * to the interpreter at the first put of every new writer.
     */
    private byte[] lastKey = NO_KEY;

    private static final byte[] NO_KEY = new byte[InternalKey.TRAILER_SIZE];

    private static final byte[] NO_VALUE = new byte[0];

    /** Range tombstones as added (any order, may overlap), all at sequence 0; joined by {@link #finish()}. */
    private final List<RangeTombstone> rangeTombstones = new ArrayList<>();

    /** Range deletions added that hold a key ({@link #rangeDeletions()}). */
    private int rangeDeletions;

    /**
     * Whether a range deletion runs through {@link LongKeys#LARGEST} (its end was longer than {@link Db#MAX_KEY_SIZE}
     * and all 0xFF in its first {@code MAX} bytes): {@link #finish()} then adds a delete of that key, unless the file's
     * last entry is of it.
     */
    private boolean throughLargest;

    private boolean finished;
    private boolean closed;

    private TableFileWriter(FileSystem fs, Path path, TableWriter writer) {
        this.fs = fs;
        this.path = path;
        this.writer = writer;
    }

    /**
     * Creates (or truncates) the table file {@code path} through {@code options.fileSystem()}.
     *
     * @throws InvalidArgumentException if {@code path} or {@code options} is null
     * @throws BloomKvIOException if the file cannot be created
     */
    public static TableFileWriter create(Path path, Options options) {
        if (path == null) {
            throw new InvalidArgumentException("TableFileWriter: path is null");
        }
        if (options == null) {
            throw new InvalidArgumentException("TableFileWriter: options is null");
        }
        FileSystem fs = options.fileSystem();
        int lastLevel = options.numLevels() - 1;
        // Sized per key when finished; the RIBBON equivalence is computed for a large table.
        FilterPolicy.TableFilter filter = new FilterPolicy(options).forIngestedTable(lastLevel);
        TableBuilderOptions tableOptions = TableBuilderOptions.defaults()
                .blockSize(options.blockSize())
                .restartInterval(options.blockRestartInterval())
                .filterKind(filter.kind())
                .bitsPerKey(filter.bitsPerKey())
                .compression(options.bottommostCompression())
                .prefixLength(options.prefixLength())
                .filterPartitionBytes(TableOutputs.filterPartitionBytes(options));
        WritableFile file = open(fs, path, options.useDirectWritesForBulkLoad());
        // The finished blocks are written by a second thread while this one builds the next (WriteBehindFile), in
        // chunks of 1 MiB, or of bytesPerSync when that is smaller (Options.bytesPerSync).
        long bytesPerSync = options.bytesPerSync();
        int chunk = (int) Math.max(MIN_CHUNK, Math.min(bytesPerSync > 0 ? bytesPerSync : MAX_CHUNK, MAX_CHUNK));
        try {
            file = new WriteBehindFile(file, chunk, WRITE_BEHIND_CHUNKS, bytesPerSync);
        } catch (RuntimeException | Error e) {
            try {
                file.close();
                fs.delete(path);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return new TableFileWriter(fs, path, new TableWriter(file, tableOptions, 1 << 16));
    }

    /**
     * Creates the file with O_DIRECT when {@code direct} (Options.useDirectWritesForBulkLoad) and the file system
     * supports it, else through the page cache. Any failure of the direct open falls back to the plain one: a file
     * system without O_DIRECT refuses it (EINVAL), and a real I/O error fails the plain open too (the direct attempt's
     * error is then attached to it).
     */
    private static WritableFile open(FileSystem fs, Path path, boolean direct) {
        IOException directFailure = null;
        if (direct) {
            try {
                return fs.newDirectWritableFile(path);
            } catch (IOException e) {
                directFailure = e;
            }
        }
        try {
            return fs.newWritableFile(path);
        } catch (IOException e) {
            if (directFailure != null) {
                e.addSuppressed(directFailure);
            }
            throw new BloomKvIOException("cannot create table file " + path, e);
        }
    }

    /**
     * Adds {@code key} with {@code value}.
     *
     * @throws InvalidArgumentException if the key is null, empty, longer than {@link Db#MAX_KEY_SIZE}, not strictly
     *     greater than the previous key (of a put, merge or delete), or the value is null or longer than
     *     {@link Db#MAX_VALUE_SIZE}
     * @throws IllegalStateException after {@link #finish()} or {@link #close()}
     * @throws BloomKvIOException on an I/O error
     */
    public void put(byte[] key, byte[] value) {
        ensureOpen();
        WriteBatch.checkKey(key);
        WriteBatch.checkValue(value);
        add(key, value, ValueType.PUT);
    }

    /**
     * Adds a merge operand for {@code key} (RocksDB's {@code SstFileWriter::Merge}): once ingested, the key reads as
     * the database's {@link Options#mergeOperator} applied to the key's value before the ingestion (if any) and this
     * operand. A database without a merge operator refuses the file ({@link Db#ingest}).
     *
     * @throws InvalidArgumentException if the key is null, empty, longer than {@link Db#MAX_KEY_SIZE}, not strictly
     *     greater than the previous key (of a put, merge or delete), the operand is null or longer than
     *     {@link Db#MAX_VALUE_SIZE}, or the key is the greatest ({@code MAX_KEY_SIZE} bytes of 0xFF) and a range
     *     deletion of the file runs through it ({@link #deleteRange})
     * @throws IllegalStateException after {@link #finish()} or {@link #close()}
     * @throws BloomKvIOException on an I/O error
     */
    public void merge(byte[] key, byte[] operand) {
        ensureOpen();
        WriteBatch.checkKey(key);
        WriteBatch.checkValue(operand);
        if (throughLargest && Arrays.equals(key, LongKeys.LARGEST)) {
            throw new InvalidArgumentException("TableFileWriter: merge of the greatest key (" + Db.MAX_KEY_SIZE
                    + " bytes of 0xFF) in a file whose range deletion runs through it (" + path + ")");
        }
        add(key, operand, ValueType.MERGE);
    }

    /**
     * Adds a tombstone for {@code key} (RocksDB's {@code SstFileWriter::Delete}): once ingested, the key reads as
     * absent, whatever the database held for it before the ingestion.
     *
     * @throws InvalidArgumentException if the key is null, empty, longer than {@link Db#MAX_KEY_SIZE}, or not strictly
     *     greater than the previous key (of a put, merge or delete)
     * @throws IllegalStateException after {@link #finish()} or {@link #close()}
     * @throws BloomKvIOException on an I/O error
     */
    public void delete(byte[] key) {
        ensureOpen();
        WriteBatch.checkKey(key);
        add(key, NO_VALUE, ValueType.DELETE);
    }

    /**
     * Adds a range tombstone over [{@code beginInclusive}, {@code endExclusive}) (RocksDB's
     * {@code SstFileWriter::DeleteRange}): once ingested, every key of the range that the database held before the
     * ingestion reads as absent. It does not delete the file's own puts, merges and deletes (as in RocksDB). Range
     * tombstones may be added in any order, among themselves and relative to the keys, and may overlap; they are kept
     * in memory until {@link #finish()} writes their union to the table's range-deletion block. An empty range
     * ({@code begin == end}) adds nothing.
     *
     * <p>The bounds may be longer than {@link Db#MAX_KEY_SIZE}, as in RocksDB: each long bound is reduced to the key
     * of at most {@code MAX} bytes that bounds the same stored keys ({@link LongKeys}; the file holds only the reduced
     * bounds), and a range that then holds no such key adds nothing. An end whose first {@code MAX} bytes are all 0xFF
     * is past every storable key, so the range runs through the greatest one, {@code MAX} bytes of 0xFF, which a
     * tombstone's end cannot reach without being longer than {@code MAX}: the file gets the tombstone up to that key
     * and, from {@link #finish()}, a delete of it as its last entry (unless the file's own last entry is that key: a
     * put or delete of it hides the database's older value anyway). Such a range and a merge of that key in one file
     * are refused, whichever comes second: the merge would have to apply to no older value, which the file cannot say.
     *
     * @throws InvalidArgumentException if a bound is null or empty, {@code beginInclusive} sorts after
     *     {@code endExclusive}, or the range runs through the greatest key and the file holds a merge of it
     * @throws IllegalStateException after {@link #finish()} or {@link #close()}
     */
    public void deleteRange(byte[] beginInclusive, byte[] endExclusive) {
        ensureOpen();
        LongKeys.checkBound(beginInclusive);
        LongKeys.checkBound(endExclusive);
        if (Arrays.compareUnsigned(beginInclusive, endExclusive) > 0) {
            throw new InvalidArgumentException("TableFileWriter: deleteRange: begin sorts after end (" + path + ")");
        }
        LongKeys.Range r = LongKeys.halfOpen(beginInclusive, endExclusive);
        if (r == null) {
            return; // begin == end, or no key of at most MAX bytes in the range
        }
        byte[] begin = r.begin() == beginInclusive ? beginInclusive.clone() : r.begin();
        if (r.end() == null) {
            // Open above: through LARGEST, the greatest key there is.
            if (lastKeyIs(LongKeys.LARGEST, ValueType.MERGE)) {
                throw new InvalidArgumentException("TableFileWriter: deleteRange: a range through the greatest key ("
                        + Db.MAX_KEY_SIZE + " bytes of 0xFF) in a file that merges into that key (" + path + ")");
            }
            throughLargest = true;
            if (Arrays.compareUnsigned(begin, LongKeys.LARGEST) < 0) {
                rangeTombstones.add(new RangeTombstone(begin, LongKeys.LARGEST, 0));
            }
        } else {
            byte[] end = r.end() == endExclusive ? endExclusive.clone() : r.end();
            rangeTombstones.add(new RangeTombstone(begin, end, 0));
        }
        rangeDeletions++;
    }

    /** Whether the last put, merge or delete added was of {@code key}, and of {@code type} unless that is null. */
    private boolean lastKeyIs(byte[] key, ValueType type) {
        int lastLength = lastKey.length - InternalKey.TRAILER_SIZE;
        return Arrays.equals(lastKey, 0, lastLength, key, 0, key.length)
                && (type == null || InternalKey.type(lastKey) == type);
    }

    /** Adds an entry whose key and value were checked: the order check, then the table writer. */
    private void add(byte[] key, byte[] value, ValueType type) {
        // Compared in place with the user-key part of the previous internal key: no copy of the caller's key is
        // kept besides the one internal key per entry, which the table writer takes over (TableWriter.addOwned).
        // One pass over the two user keys finds where they differ: that decides the order, and is the prefix the
        // block shares with the previous key (TableWriter.addOwnedInOrder compares nothing again).
        int lastLength = lastKey.length - InternalKey.TRAILER_SIZE;
        int m = Arrays.mismatch(lastKey, 0, lastLength, key, 0, key.length);
        boolean greater = m >= 0 && (m == lastLength || (m < key.length && (lastKey[m] & 0xff) < (key[m] & 0xff)));
        if (!greater) {
            throw new InvalidArgumentException("TableFileWriter: keys must be added in strictly increasing order ("
                    + (m < 0 ? "duplicate key" : "key sorts before the previous one") + ", " + path + ")");
        }
        byte[] internalKey = InternalKey.encode(key, 0, type);
        try {
            // Both user keys extend past m where they differ there; where the previous one ends at m (a prefix of this
            // key), the internal keys' common prefix may run into its trailer: the block then compares them itself.
            writer.addOwnedInOrder(internalKey, value, m < lastLength ? m : -1);
        } catch (IOException e) {
            throw new BloomKvIOException("cannot write table file " + path, e);
        }
        lastKey = internalKey;
    }

    /**
     * Entries (puts, merges and deletes) added so far, and after {@link #finish()} the delete it may add (see
     * {@link #deleteRange}); range tombstones are counted by {@link #rangeDeletions()}.
     */
    public long entries() {
        return writer.entries();
    }

    /**
     * Range deletions added so far (as added, before fragmenting), but for those that hold no key (an empty range,
     * {@code begin == end}, or one whose long bounds hold no key of at most {@link Db#MAX_KEY_SIZE} bytes).
     */
    public int rangeDeletions() {
        return rangeDeletions;
    }

    /**
     * Writes the filter, index, properties and footer, fsyncs and closes the file. The writer is then closed.
     *
     * @throws InvalidArgumentException if no entry and no range tombstone was added (a table needs at least one;
     *     nothing is left on disk)
     * @throws IllegalStateException when called twice or after {@link #close()}
     * @throws BloomKvIOException on an I/O error (the partial file is deleted)
     */
    public void finish() {
        ensureOpen();
        if (writer.entries() == 0 && rangeDeletions == 0) {
            close();
            throw new InvalidArgumentException("TableFileWriter: a table file needs at least one entry: " + path);
        }
        try {
            if (throughLargest && !lastKeyIs(LongKeys.LARGEST, null)) {
                // A range deletion runs through the greatest key, which its tombstone's end (LARGEST, exclusive)
                // leaves out: a delete of it, in order as the last entry (no key sorts after it). The file's own put
                // or delete of it hides the older value as well; its merge was refused.
                add(LongKeys.LARGEST, NO_VALUE, ValueType.DELETE);
            }
            for (RangeTombstone t : union(rangeTombstones)) {
                writer.addRangeTombstone(t);
            }
            rangeTombstones.clear();
            writer.finish();
            writer.close();
        } catch (IOException e) {
            BloomKvIOException err = new BloomKvIOException("cannot finish table file " + path, e);
            close(err);
            throw err;
        } catch (RuntimeException e) {
            close(e);
            throw e;
        }
        finished = true;
        closed = true;
    }

    /**
     * The union of tombstones of one sequence as disjoint ranges, sorted: overlapping or touching ranges joined. Reads
     * alike (all carry sequence 0), and a table's tombstones must differ in (begin, sequence).
     */
    private static List<RangeTombstone> union(List<RangeTombstone> tombstones) {
        List<RangeTombstone> sorted = new ArrayList<>(tombstones);
        sorted.sort((a, b) -> Arrays.compareUnsigned(a.begin(), b.begin()));
        List<RangeTombstone> out = new ArrayList<>();
        byte[] begin = null;
        byte[] end = null;
        for (RangeTombstone t : sorted) {
            if (end != null && Arrays.compareUnsigned(t.begin(), end) <= 0) {
                if (Arrays.compareUnsigned(t.end(), end) > 0) {
                    end = t.end();
                }
                continue;
            }
            if (begin != null) {
                out.add(new RangeTombstone(begin, end, 0));
            }
            begin = t.begin();
            end = t.end();
        }
        if (begin != null) {
            out.add(new RangeTombstone(begin, end, 0));
        }
        return out;
    }

    /** The file being written. */
    public Path path() {
        return path;
    }

    /** Closes the writer; a file not {@link #finish() finished} is deleted. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        BloomKvIOException error = new BloomKvIOException("cannot close table file " + path, null);
        close(error);
        if (error.getSuppressed().length > 0) {
            throw error;
        }
    }

    private void close(Exception cause) {
        if (closed) {
            return;
        }
        closed = true;
        try {
            writer.close();
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
        if (!finished) {
            try {
                if (fs.exists(path)) {
                    fs.delete(path);
                }
            } catch (IOException e) {
                cause.addSuppressed(e);
            }
        }
    }

    private void ensureOpen() {
        if (closed || finished) {
            throw new IllegalStateException("TableFileWriter is " + (finished ? "finished" : "closed") + ": " + path);
        }
    }
}
