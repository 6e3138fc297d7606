package io.bloomkv.engine.inspect;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.BlockCache;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.table.TableBuilderOptions;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.table.TableWriter;
import java.io.IOException;
import java.nio.file.Path;

/**
 * One table file read the way a {@code Db.get} reads each table (filter, then index, then data block through a
 * block cache of its own), without the rest of the database: for micro-benchmarks of the table alone
 * ({@code TableGetBenchmark}) and for tools. RocksDB's {@code SstFileReader} plays the same part. {@link Writer}
 * writes such a file from sorted keys. Close a probe to release its off-heap filter.
 */
public final class TableProbe implements AutoCloseable {
    private final TableReader table;

    private TableProbe(TableReader table) {
        this.table = table;
    }

    /**
     * Opens {@code file} with a block cache of {@code blockCacheBytes} (0: none).
     *
     * @throws io.bloomkv.engine.CorruptionException when its footer, index or properties block is damaged
     * @throws IOException when it cannot be read
     */
    public static TableProbe open(Path file, long blockCacheBytes) throws IOException {
        BlockCache cache = blockCacheBytes > 0 ? new BlockCache(blockCacheBytes) : null;
        return new TableProbe(TableReader.open(FileSystem.disk(), file, 1, cache, new ReadCounters()));
    }

    /**
     * The value of {@code userKey} in this table, or null when the table holds no entry for it or its newest entry
     * is a deletion. The key's hash is computed once, as a {@code Db.get} does for all the tables it asks.
     */
    public byte[] get(byte[] userKey) {
        TableReader.Entry e = table.get(userKey, Hashing.hash64(userKey), InternalKey.MAX_SEQUENCE);
        return e == null || e.type() != ValueType.PUT ? null : e.value();
    }

    @Override
    public void close() {
        table.close();
    }

    /**
     * Writes one table file: keys are added in strictly ascending unsigned order and get sequence numbers 1, 2, ...
     * (engine/FORMAT.md, "Table"). {@link #finish()} completes the file; closing without it leaves an unfinished file.
     */
    public static final class Writer implements AutoCloseable {
        private final TableWriter writer;
        private long sequence;

        private Writer(TableWriter writer) {
            this.writer = writer;
        }

        /**
         * Creates {@code file} for {@code expectedKeys} keys, with data blocks of {@code blockSize} bytes and a filter
         * of {@code kind} at {@code bitsPerKey} (0: no filter).
         *
         * @throws IOException when the file cannot be created
         */
        public static Writer create(Path file, FilterKind kind, double bitsPerKey, int blockSize, long expectedKeys)
                throws IOException {
            TableBuilderOptions opts = TableBuilderOptions.defaults()
                    .blockSize(blockSize)
                    .filterKind(kind)
                    .bitsPerKey(bitsPerKey);
            return new Writer(new TableWriter(FileSystem.disk().newWritableFile(file), opts, expectedKeys));
        }

        /**
         * Adds {@code userKey} with {@code value}; keys must come in strictly ascending order.
         *
         * @throws IOException when the file cannot be written
         */
        public void add(byte[] userKey, byte[] value) throws IOException {
            writer.add(InternalKey.encode(userKey, ++sequence, ValueType.PUT), value);
        }

        /**
         * Writes the filter, index, properties and footer.
         *
         * @throws IOException when the file cannot be written
         */
        public void finish() throws IOException {
            writer.finish();
        }

        @Override
        public void close() throws IOException {
            writer.close();
        }
    }
}
