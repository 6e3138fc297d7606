package io.bloomkv.bench.jmh;

import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Filters;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Construction cost per key of a table's filter from its keys' hashes, as TableWriter does it:
 * {@code Filters.build(kind, hashes, bitsPerKey)} then serialization ({@code toByteArray}) and release. The score
 * is nanoseconds per key (one invocation builds a filter of {@code keys} keys). RIBBON at 7 bits per key has the
 * rate of BLOCKED at 10.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class FilterBuildBenchmark {
    static final int KEYS = 1_000_000;

    @Param({"BLOCKED:10", "RIBBON:7"})
    public String filter;

    private FilterKind kind;
    private double bitsPerKey;
    private long[] hashes;

    @Setup
    public void setup() {
        String[] kb = filter.split(":");
        kind = FilterKind.valueOf(kb[0]);
        bitsPerKey = Double.parseDouble(kb[1]);
        SplittableRandom random = new SplittableRandom(7);
        hashes = new long[KEYS];
        for (int i = 0; i < KEYS; i++) {
            hashes[i] = random.nextLong();
        }
    }

    @Benchmark
    @OperationsPerInvocation(KEYS)
    public int buildAndSerialize() {
        try (Filter f = Filters.build(kind, hashes, bitsPerKey)) {
            return f.toByteArray().length;
        }
    }
}
