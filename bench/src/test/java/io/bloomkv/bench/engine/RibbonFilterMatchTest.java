package io.bloomkv.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.ValueSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code --filter-kind RIBBON+ROCKSDB-RIBBON} and {@code RIBBON+MEMORY+ROCKSDB-RIBBON}: both engines build Ribbon
 * filters, at the Bloom-equivalent bits (~7 bits per key for Bloom's ~1%) or at the Bloom filter's memory (~10 bits per
 * key for ~0.15%), and the measured rates follow. Replay with -Dbench.seed=N.
 */
class RibbonFilterMatchTest {
    private static final long SEED = Long.getLong("bench.seed", System.nanoTime());
    private static final int N = 40_000;

    static {
        System.out.println("RibbonFilterMatchTest seed = " + SEED + " (replay with -Dbench.seed=" + SEED + ")");
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("bloomkv", "RIBBON+ROCKSDB-RIBBON", 6.5, 7.7, 0.005, 0.016),
                Arguments.of("rocksdb", "RIBBON+ROCKSDB-RIBBON", 6.5, 7.7, 0.005, 0.016),
                Arguments.of("bloomkv", "RIBBON+MEMORY+ROCKSDB-RIBBON", 9.6, 10.6, 0, 0.003),
                Arguments.of("rocksdb", "RIBBON+MEMORY+ROCKSDB-RIBBON", 9.6, 10.6, 0, 0.003),
                // without +ROCKSDB-RIBBON RocksDB keeps its Bloom filter at the bits per key, whatever bloomkv builds
                Arguments.of("rocksdb", "RIBBON+MEMORY", 9.6, 10.6, 0.005, 0.016));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void filterMemoryAndRatesFollowTheSpec(
            String engine,
            String spec,
            double minBits,
            double maxBits,
            double minRate,
            double maxRate,
            @TempDir Path dir)
            throws Exception {
        KeySpace ks = new KeySpace(N, 16);
        EngineSettings s = new EngineSettings(true, 10, spec, 4096, 64 * 1024, 64L << 20, false);
        try (BenchEngine e = EngineFactory.open(engine, dir, s)) {
            ValueSource values = new ValueSource(20, SEED);
            List<byte[]> keys = new ArrayList<>();
            List<byte[]> vals = new ArrayList<>();
            for (int i = 0; i < N; i++) {
                long id = ks.loadedId(i);
                keys.add(ks.key(id));
                vals.add(values.value(id, 0));
            }
            e.putAll(keys, vals);
            e.flushAndSettle();
            TableSummary t = e.tables();
            String msg = engine + " " + spec + " seed " + SEED + ": " + e.describe();
            assertThat(t.filterBitsPerKey()).as(msg).isBetween(minBits, maxBits);
            assertThat(t.theoreticalFpr()).as(msg).isBetween(minRate * 0.5, maxRate);
            SplittableRandom rnd = new SplittableRandom(SEED);
            int gets = 100_000;
            EngineCounters before = e.counters();
            for (int i = 0; i < gets; i++) {
                assertThat(e.get(ks.key(ks.missingId(rnd.nextLong(ks.missingCount())))))
                        .as(msg)
                        .isNull();
            }
            EngineCounters d = e.counters().minus(before);
            assertThat(d.filterChecks()).as(msg).isGreaterThan(gets * 9L / 10);
            assertThat(d.measuredFpr()).as(msg + " " + d).isBetween(minRate, maxRate);
            // one present key still answers through the Ribbon filter
            assertThat(e.get(keys.get(rnd.nextInt(N)))).as(msg).isNotNull();
        }
    }
}
