package io.bloomkv.bench.jmh;

import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.ValueSource;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.table.BlockCache;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.table.TableBuilderOptions;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.table.TableWriter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * One bloomkv table alone: {@link TableReader#get} (filter, then index, then data block through an
 * 8 MiB block cache) for present keys and for absent keys inside the table's key range, with the
 * key's hash computed once per get as the Db does. {@code bitsPerKey=0} measures the table without
 * a filter.
 *
 * <pre>java -jar bloomkv-bench.jar jmh TableGetBenchmark</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class TableGetBenchmark {
    @Param({"1000000"})
    public int keys;

    @Param({"10", "0"})
    public double bitsPerKey;

    @Param({"BLOCKED"})
    public String filterKind;

    private Path dir;
    private TableReader table;
    private KeyPool pool;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("bloomkv-jmh-tableget");
        KeySpace ks = new KeySpace(keys, 16);
        ValueSource values = new ValueSource(100, 1);
        Path file = dir.resolve("000001.sst");
        TableBuilderOptions opts = TableBuilderOptions.defaults().blockSize(4096)
                .filterKind(FilterKind.valueOf(filterKind)).bitsPerKey(bitsPerKey);
        FileSystem fs = FileSystem.disk();
        try (TableWriter w = new TableWriter(fs.newWritableFile(file), opts, keys)) {
            for (long j = 0; j < keys; j++) {
                long id = ks.loadedId(j);
                w.add(InternalKey.encode(ks.key(id), j + 1, ValueType.PUT), values.value(id, 0));
            }
            w.finish();
        }
        table = TableReader.open(fs, file, 1, new BlockCache(8L << 20), new ReadCounters());
        pool = new KeyPool(ks, keys);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        table.close();
        Files.deleteIfExists(dir.resolve("000001.sst"));
        Files.deleteIfExists(dir);
    }

    @Benchmark
    public TableReader.Entry tableGetPresent(KeyPool.Cursor c) {
        byte[] k = pool.present[c.next()];
        return table.get(k, Hashing.hash64(k), InternalKey.MAX_SEQUENCE);
    }

    @Benchmark
    public TableReader.Entry tableGetAbsent(KeyPool.Cursor c) {
        byte[] k = pool.absent[c.next()];
        return table.get(k, Hashing.hash64(k), InternalKey.MAX_SEQUENCE);
    }
}
