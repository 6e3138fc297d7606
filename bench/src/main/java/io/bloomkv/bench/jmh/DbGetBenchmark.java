package io.bloomkv.bench.jmh;

import io.bloomkv.bench.engine.BenchEngine;
import io.bloomkv.bench.engine.EngineFactory;
import io.bloomkv.bench.engine.EngineSettings;
import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.ValueSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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
 * {@code Db.get} against {@code RocksDB.get}, present and absent keys (absent keys inside the
 * loaded range), through the bench's engine adapters, on a database loaded in random order, flushed
 * and settled. Same keys, 10 bits/key, 4 KiB blocks, 8 MiB block cache on both engines.
 * {@link TableGetBenchmark} measures one bloomkv table alone.
 *
 * <pre>java -jar bloomkv-bench.jar jmh DbGetBenchmark -p keys=1000000</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class DbGetBenchmark {
    @Param({"bloomkv", "rocksdb"})
    public String engine;

    @Param({"1000000"})
    public int keys;

    @Param({"10"})
    public double bitsPerKey;

    private Path dir;
    private BenchEngine db;
    private KeyPool pool;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("bloomkv-jmh-dbget");
        KeySpace ks = new KeySpace(keys, 16);
        ValueSource values = new ValueSource(100, 1);
        db = EngineFactory.open(
                engine,
                dir.resolve("db"),
                new EngineSettings(bitsPerKey > 0, bitsPerKey, "BLOCKED", 4096, 8L << 20, 64L << 20, false));
        int[] order = ks.shuffledLoadOrder(1);
        List<byte[]> kb = new ArrayList<>();
        List<byte[]> vb = new ArrayList<>();
        for (int j : order) {
            long id = ks.loadedId(j);
            kb.add(ks.key(id));
            vb.add(values.value(id, 0));
            if (kb.size() == 1000) {
                db.putAll(kb, vb);
                kb.clear();
                vb.clear();
            }
        }
        if (!kb.isEmpty()) {
            db.putAll(kb, vb);
        }
        db.flushAndSettle();

        pool = new KeyPool(ks, keys);
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
    public byte[] dbGetPresent(KeyPool.Cursor c) throws IOException {
        return db.get(pool.present[c.next()]);
    }

    @Benchmark
    public byte[] dbGetAbsent(KeyPool.Cursor c) throws IOException {
        return db.get(pool.absent[c.next()]);
    }
}
