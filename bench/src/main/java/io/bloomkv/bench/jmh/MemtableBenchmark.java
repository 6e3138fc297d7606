package io.bloomkv.bench.jmh;

import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.ValueSource;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
 * Point reads and updates of keys the memtable holds, with and without its point index
 * ({@code Options.memtablePointIndex}): {@code keys} 16-byte keys with 100-byte values loaded in random order into
 * a write buffer large enough to hold them all (nothing is flushed), no WAL. {@code getHeld} reads a held key,
 * {@code getAbsent} a key between held ones (the memtable filter rejects it; no table exists), {@code update} writes a
 * held key again with an 8-byte value (the memtable gains a version of it each call).
 *
 * <pre>java -jar bloomkv-bench.jar jmh MemtableBenchmark -p keys=500000</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class MemtableBenchmark {
    @Param({"500000"})
    public int keys;

    @Param({"true", "false"})
    public boolean pointIndex;

    private Path dir;
    private Db db;
    private KeyPool pool;
    private byte[] value;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("bloomkv-jmh-memtable");
        KeySpace ks = new KeySpace(keys, 16);
        ValueSource values = new ValueSource(100, 1);
        // room for the load and for the updates of the measured iterations, so no flush runs
        db = Db.open(
                dir.resolve("db"),
                Options.defaults()
                        .writeBufferSize(1536L << 20)
                        .disableWal(true)
                        .memtablePointIndex(pointIndex)
                        .createIfMissing(true));
        for (int j : ks.shuffledLoadOrder(1)) {
            long id = ks.loadedId(j);
            db.put(ks.key(id), values.value(id, 0));
        }
        pool = new KeyPool(ks, keys);
        value = new byte[8]; // a counter, as the Kafka Streams kv topology writes: the updates' versions stay small
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        db.close();
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    @Benchmark
    public byte[] getHeld(KeyPool.Cursor c) {
        return db.get(pool.present[c.next()]);
    }

    @Benchmark
    public byte[] getAbsent(KeyPool.Cursor c) {
        return db.get(pool.absent[c.next()]);
    }

    @Benchmark
    public void update(KeyPool.Cursor c) {
        db.put(pool.present[c.next()], value);
    }
}
