package io.bloomkv.bench.jmh;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Filters;
import io.bloomkv.bloom.Hashing;
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
 * Probe latency of each filter kind (RIBBON built from the keys' hashes by {@code Filters.build}) against Guava's {@link BloomFilter} at the same 10 bits per key, with
 * 1M keys (the filter fits in cache) and 50M keys (62.5 MB of bits: every probe misses the caches).
 * Keys are 16 bytes (the harness default). {@code positive} asks about added keys, {@code negative} about
 * keys never added; both include hashing the key (XXH3 here, Murmur3-128 in Guava), as a caller with only
 * a key would. {@code negativeHashed} passes the precomputed 64-bit hash, as the engine does.
 *
 * <p>Guava is sized with {@code fpp = e^(-10 (ln 2)^2)}, for which its own formula allocates
 * {@code -n ln fpp / (ln 2)^2 = 10 n} bits and 7 probes: the memory of the STANDARD filter.
 *
 * <p>The forks need Chronicle's JVM flags (parent pom property {@code chronicle.jvm.flags}), e.g.
 * {@code java -jar bench.jar FilterProbeBenchmark -jvmArgsAppend "<flags>"}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms6g", "-Xmx6g"})
public class FilterProbeBenchmark {
    private static final double BITS_PER_KEY = 10;
    private static final int PROBE_KEYS = 1 << 20;
    private static final int MASK = PROBE_KEYS - 1;

    /** A {@link FilterKind} name, or GUAVA. */
    @Param({"STANDARD", "PARTITIONED", "BLOCKED", "COUNTING", "RIBBON", "GUAVA"})
    public String impl;

    @Param({"1000000", "50000000"})
    public long keys;

    private Filter filter;
    private BloomFilter<byte[]> guava;
    private byte[][] present;
    private byte[][] absent;
    private long[] absentHashes;
    private int next;

    /** Key i: 16 bytes, a scrambled id then the id, little-endian. */
    static byte[] key(long id, byte[] into) {
        long scrambled = id * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < 8; i++) {
            into[i] = (byte) (scrambled >>> (8 * i));
            into[8 + i] = (byte) (id >>> (8 * i));
        }
        return into;
    }

    @Setup(Level.Trial)
    public void build() {
        byte[] buf = new byte[16];
        if (impl.equals("GUAVA")) {
            guava = BloomFilter.create(
                    Funnels.byteArrayFunnel(), keys, Math.exp(-BITS_PER_KEY * Math.log(2) * Math.log(2)));
            for (long i = 0; i < keys; i++) {
                guava.put(key(i, buf));
            }
        } else if (FilterKind.valueOf(impl).isStatic()) {
            long[] hashes = new long[Math.toIntExact(keys)];
            for (int i = 0; i < hashes.length; i++) {
                hashes[i] = Hashing.hash64(key(i, buf));
            }
            filter = Filters.build(FilterKind.valueOf(impl), hashes, BITS_PER_KEY);
        } else {
            filter = Filters.create(FilterKind.valueOf(impl), keys, BITS_PER_KEY);
            for (long i = 0; i < keys; i++) {
                filter.add(key(i, buf));
            }
        }
        SplittableRandom random = new SplittableRandom(42);
        present = new byte[PROBE_KEYS][];
        absent = new byte[PROBE_KEYS][];
        absentHashes = new long[PROBE_KEYS];
        for (int i = 0; i < PROBE_KEYS; i++) {
            present[i] = key(random.nextLong(keys), new byte[16]);
            absent[i] = key(keys + random.nextLong(keys), new byte[16]);
            absentHashes[i] = Hashing.hash64(absent[i]);
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        if (filter != null) {
            filter.close();
        }
    }

    @Benchmark
    public boolean positive() {
        byte[] key = present[next++ & MASK];
        return filter != null ? filter.mightContain(key) : guava.mightContain(key);
    }

    @Benchmark
    public boolean negative() {
        byte[] key = absent[next++ & MASK];
        return filter != null ? filter.mightContain(key) : guava.mightContain(key);
    }

    /** 32 absent hashes asked at once ({@code Filter.mightContainAll}: touch pass, then probes); the score is per batch. */
    @Benchmark
    public int negativeBatch32() {
        if (filter == null) {
            return 0; // Guava has no batch probe
        }
        int from = (next += 32) & MASK & ~31;
        System.arraycopy(absentHashes, from, batch, 0, 32);
        return filter.mightContainAll(batch, 32, batchResults);
    }

    /** The same 32 absent hashes asked one by one; the score is per batch. */
    @Benchmark
    public int negativeSingle32() {
        if (filter == null) {
            return 0;
        }
        int from = (next += 32) & MASK & ~31;
        int positives = 0;
        for (int i = 0; i < 32; i++) {
            positives += filter.mightContain(absentHashes[from + i]) ? 1 : 0;
        }
        return positives;
    }

    private final long[] batch = new long[32];
    private final boolean[] batchResults = new boolean[32];

    @Benchmark
    public boolean negativeHashed() {
        long hash = absentHashes[next++ & MASK];
        // Guava offers no probe by precomputed hash; its row repeats negative() for reference
        return filter != null ? filter.mightContain(hash) : guava.mightContain(absent[(next - 1) & MASK]);
    }
}
