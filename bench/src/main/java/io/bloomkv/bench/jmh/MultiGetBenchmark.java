package io.bloomkv.bench.jmh;

import io.bloomkv.bench.engine.BloomKvEngine;
import io.bloomkv.bench.engine.EngineSettings;
import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.ValueSource;
import io.bloomkv.engine.Db;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
 * {@code Db.multiGet} of 32 absent keys (inside the loaded key range, so only the filters reject them) against 32
 * single {@code Db.get}s of the same keys, on a bloomkv database loaded in random order and settled. With
 * {@code cold=true} every invocation first streams a 64 MiB buffer (untimed), so the filters (and everything else)
 * are out of the 32 MiB L3 when the batch starts: the case the batch's overlapped filter loads are for.
 * The score is per batch of 32 keys.
 *
 * <pre>java -jar bloomkv-bench.jar jmh MultiGetBenchmark -p keys=1000000</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class MultiGetBenchmark {
    static final int BATCH = 32;
    private static final int BATCHES = 1 << 12;

    @Param({"1000000"})
    public int keys;

    @Param({"BLOCKED", "RIBBON@0"})
    public String filterKind;

    @Param({"true", "false"})
    public boolean cold;

    private Path dir;
    private BloomKvEngine engine;
    private Db db;
    private List<List<byte[]>> batches;
    private int next;
    private long[] thrash;
    private long sink;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("bloomkv-jmh-multiget");
        KeySpace ks = new KeySpace(keys, 16);
        ValueSource values = new ValueSource(100, 1);
        engine = BloomKvEngine.open(
                dir.resolve("db"), new EngineSettings(true, 10, filterKind, 4096, 8L << 20, 64L << 20, false));
        List<byte[]> kb = new ArrayList<>();
        List<byte[]> vb = new ArrayList<>();
        for (int j : ks.shuffledLoadOrder(1)) {
            long id = ks.loadedId(j);
            kb.add(ks.key(id));
            vb.add(values.value(id, 0));
            if (kb.size() == 1000) {
                engine.putAll(kb, vb);
                kb.clear();
                vb.clear();
            }
        }
        if (!kb.isEmpty()) {
            engine.putAll(kb, vb);
        }
        engine.flushAndSettle();
        db = engine.db();
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(11);
        batches = new ArrayList<>(BATCHES);
        for (int b = 0; b < BATCHES; b++) {
            List<byte[]> batch = new ArrayList<>(BATCH);
            for (int i = 0; i < BATCH; i++) {
                batch.add(ks.key(ks.missingId(rnd.nextLong(ks.missingCount()))));
            }
            batches.add(batch);
        }
        thrash = new long[8 << 20];
        Arrays.fill(thrash, 1);
    }

    /** Untimed: evicts the caches by streaming 64 MiB (cold mode only). */
    @Setup(Level.Invocation)
    public void evict() {
        if (cold) {
            long s = 0;
            for (int i = 0; i < thrash.length; i += 8) {
                s += thrash[i];
            }
            sink += s;
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        engine.close();
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private List<byte[]> nextBatch() {
        next = (next + 1) & (BATCHES - 1);
        return batches.get(next);
    }

    @Benchmark
    public int multiGet32Absent() {
        int found = 0;
        for (byte[] v : db.multiGet(nextBatch())) {
            found += v == null ? 0 : 1;
        }
        return found;
    }

    @Benchmark
    public int get32Absent() {
        int found = 0;
        for (byte[] k : nextBatch()) {
            found += db.get(k) == null ? 0 : 1;
        }
        return found;
    }
}
