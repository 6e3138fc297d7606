package io.bloomkv.bench.jmh;

import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.ValueSource;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.inspect.TableProbe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
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

/**
 * One bloomkv table alone: {@link TableProbe#get} (filter, then index, then data block through an
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
    private TableProbe table;
    private KeyPool pool;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("bloomkv-jmh-tableget");
        KeySpace ks = new KeySpace(keys, 16);
        ValueSource values = new ValueSource(100, 1);
        Path file = dir.resolve("000001.sst");
        try (TableProbe.Writer w =
                TableProbe.Writer.create(file, FilterKind.valueOf(filterKind), bitsPerKey, 4096, keys)) {
            for (long j = 0; j < keys; j++) {
                long id = ks.loadedId(j);
                w.add(ks.key(id), values.value(id, 0));
            }
            w.finish();
        }
        table = TableProbe.open(file, 8L << 20);
        pool = new KeyPool(ks, keys);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        table.close();
        Files.deleteIfExists(dir.resolve("000001.sst"));
        Files.deleteIfExists(dir);
    }

    @Benchmark
    public byte[] tableGetPresent(KeyPool.Cursor c) {
        return table.get(pool.present[c.next()]);
    }

    @Benchmark
    public byte[] tableGetAbsent(KeyPool.Cursor c) {
        return table.get(pool.absent[c.next()]);
    }
}
