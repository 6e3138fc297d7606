package io.bloomkv.bench.jmh;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.ReadOptions;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.WriteBatch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
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
 * Prefix seeks on a bloomkv database with {@code Options.prefixLength(7)}: keys "gNNNNNN:" + 8 digits, 20 keys per
 * group, only even groups loaded (random order, settled), so odd groups are absent prefixes inside every table's
 * key range. {@code absentPrefixFiltered}: seek with {@code ReadOptions.prefixSameAsStart(true)} (tables whose
 * filter lacks the prefix are skipped unread); {@code absentPrefixUnfiltered}: the same seek without it, then a
 * check that the key found has the prefix (what a caller without prefix filters does). {@code presentPrefix...}: seek
 * a loaded group and read its 20 keys. Block reads per seek are printed at the end of each trial.
 *
 * <pre>java -jar bloomkv-bench.jar jmh PrefixSeekBenchmark</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class PrefixSeekBenchmark {
    static final int PREFIX = 7;
    static final int PER_GROUP = 20;

    @Param({"50000"})
    public int groups;

    private Path dir;
    private Db db;
    private byte[][] absent;
    private byte[][] present;
    private int next;
    private long seeks;
    private Stats before;
    private final ReadOptions prefixOnly = ReadOptions.defaults().prefixSameAsStart(true);

    private static byte[] prefix(int group) {
        return String.format("g%06d", group).getBytes(StandardCharsets.US_ASCII);
    }

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("bloomkv-jmh-prefix");
        db = Db.open(dir.resolve("db"), Options.defaults().prefixLength(PREFIX).writeBufferSize(8L << 20));
        SplittableRandom rnd = new SplittableRandom(5);
        int[] order = new int[groups];
        for (int i = 0; i < groups; i++) {
            order[i] = i;
        }
        for (int i = groups - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        byte[] value = new byte[100];
        for (int g : order) {
            WriteBatch b = new WriteBatch();
            for (int k = 0; k < PER_GROUP; k++) {
                b.put(
                        (new String(prefix(2 * g), StandardCharsets.US_ASCII) + ":"
                                        + String.format("%08d", rnd.nextInt(100_000_000)))
                                .getBytes(StandardCharsets.US_ASCII),
                        value);
            }
            db.write(b);
        }
        db.flush();
        db.waitForBackgroundWork();
        absent = new byte[1 << 14][];
        present = new byte[1 << 14][];
        for (int i = 0; i < absent.length; i++) {
            absent[i] = prefix(2 * rnd.nextInt(groups - 1) + 1);
            present[i] = prefix(2 * rnd.nextInt(groups));
        }
    }

    @Setup(Level.Iteration)
    public void count() {
        seeks = 0;
        before = db.stats();
    }

    @TearDown(Level.Iteration)
    public void report() {
        Stats s = db.stats();
        System.out.printf(
                "  [%d seeks, %.4f block reads per seek, %d tables]%n",
                seeks,
                (s.blockReads() - before.blockReads()) / (double) Math.max(1, seeks),
                db.tables().size());
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

    private byte[] pick(byte[][] pool) {
        next = (next + 1) & (pool.length - 1);
        seeks++;
        return pool[next];
    }

    @Benchmark
    public boolean absentPrefixFiltered() {
        try (DbIterator it = db.iterator(prefixOnly)) {
            it.seek(pick(absent));
            return it.valid();
        }
    }

    @Benchmark
    public boolean absentPrefixUnfiltered() {
        byte[] p = pick(absent);
        try (DbIterator it = db.iterator()) {
            it.seek(p);
            return it.valid() && Arrays.equals(it.key(), 0, PREFIX, p, 0, PREFIX);
        }
    }

    @Benchmark
    public int presentPrefixFiltered() {
        int n = 0;
        try (DbIterator it = db.iterator(prefixOnly)) {
            for (it.seek(pick(present)); it.valid(); it.next()) {
                n++;
            }
        }
        return n;
    }

    @Benchmark
    public int presentPrefixUnfiltered() {
        int n = 0;
        byte[] p = pick(present);
        try (DbIterator it = db.iterator()) {
            for (it.seek(p); it.valid() && Arrays.equals(it.key(), 0, PREFIX, p, 0, PREFIX); it.next()) {
                n++;
            }
        }
        return n;
    }
}
