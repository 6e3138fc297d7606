package io.bloomkv.bench.jmh;

import io.bloomkv.bench.range.RangeSeekBench;
import io.bloomkv.bloom.RangeFilter;
import java.util.SplittableRandom;
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
 * Latency of one {@link RangeFilter#mightContainRange} probe over {@code rangeseek}'s keys (12 bytes: a 4-byte tenant
 * tag and a big-endian id; blocks of 256 ids hold 64 keys, ids 128..255 of each block are never written), at
 * {@code bits} bits per key: {@code empty} asks about ranges 2..64 ids wide inside the empty half of a block (what
 * {@code seekempty} asks every table), {@code holding} about ranges of the same widths starting at a key (what
 * {@code seekshort} asks the table that holds it). Ranges are drawn at random over the whole key set, so at 10M keys a
 * probe's reads miss the caches as they do in the engine.
 *
 * <p>The forks need Chronicle's JVM flags: {@code java -jar bloomkv-bench.jar jmh RangeProbeBenchmark} adds them.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class RangeProbeBenchmark {
    private static final int QUERIES = 1 << 16;
    private static final int MASK = QUERIES - 1;

    @Param({"1000000", "10000000"})
    public long keys;

    @Param({"16"})
    public double bits;

    private RangeFilter filter;
    private byte[][] emptyLo;
    private byte[][] emptyHi;
    private byte[][] holdingLo;
    private byte[][] holdingHi;
    private int next;

    /** The rangeseek bench's key layout (a tenant tag, then the id big-endian). */
    static byte[] key(long id) {
        return RangeSeekBench.key(id);
    }

    @Setup(Level.Trial)
    public void build() {
        RangeFilter.Builder b = RangeFilter.builder(bits);
        for (long j = 0; j < keys; j++) {
            b.add(key(((j / 64) << 8) + 2 * (j % 64)));
        }
        filter = b.build();
        SplittableRandom rnd = new SplittableRandom(1);
        emptyLo = new byte[QUERIES][];
        emptyHi = new byte[QUERIES][];
        holdingLo = new byte[QUERIES][];
        holdingHi = new byte[QUERIES][];
        long blocks = keys / 64;
        for (int i = 0; i < QUERIES; i++) {
            int w = 2 + rnd.nextInt(63);
            long start = (rnd.nextLong(blocks) << 8) + 128 + rnd.nextInt(128 - w + 1);
            emptyLo[i] = key(start);
            emptyHi[i] = key(start + w);
            w = 2 + rnd.nextInt(63);
            start = (rnd.nextLong(blocks) << 8) + 2L * rnd.nextInt(64 - w / 2);
            holdingLo[i] = key(start);
            holdingHi[i] = key(start + w);
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        filter.close();
    }

    @Benchmark
    public boolean empty() {
        int i = next++ & MASK;
        return filter.mightContainRange(emptyLo[i], emptyHi[i]);
    }

    @Benchmark
    public boolean holding() {
        int i = next++ & MASK;
        return filter.mightContainRange(holdingLo[i], holdingHi[i]);
    }
}
