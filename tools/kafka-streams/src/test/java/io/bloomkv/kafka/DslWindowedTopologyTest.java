package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Windowed DSL topologies (tumbling, hopping, sliding, emit-on-window-close, session windows, a windowed join)
 * run through the TopologyTestDriver twice on the same input: with Kafka's default store suppliers and with
 * {@code dsl.store.suppliers.class = BloomKvDslStoreSuppliers}. Every output topic is the same, and the bloomkv
 * run creates no RocksDB store directory.
 */
class DslWindowedTopologyTest {
    private static final String[] OUTPUTS = {
        "tumbling", "hopping", "sliding", "final", "slidingFinal", "session", "sessionFinal", "join"
    };

    /** After each test, its drivers and stores closed: no table and no off-heap filter byte left open. */
    @RegisterExtension
    final OpenStores openStores = new OpenStores();

    @TempDir
    Path tmp;

    private static String window(Windowed<String> w) {
        return w.key() + "@" + w.window().start() + "-" + w.window().end();
    }

    private static void out(KTable<Windowed<String>, Long> counts, String topic) {
        counts.toStream()
                .map((w, c) -> KeyValue.pair(window(w), c == null ? "null" : c.toString()))
                .to(topic, Produced.with(Serdes.String(), Serdes.String()));
    }

    static StreamsBuilder topology() {
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> in = builder.stream("in", Consumed.with(Serdes.String(), Serdes.String()));
        var grouped = in.groupByKey();
        out(
                grouped.windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMinutes(1)))
                        .count(),
                "tumbling");
        out(
                grouped.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMinutes(5), Duration.ofMinutes(1))
                                .advanceBy(Duration.ofMinutes(1)))
                        .count(),
                "hopping");
        out(
                grouped.windowedBy(
                                SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofMinutes(1), Duration.ofSeconds(30)))
                        .count(),
                "sliding");
        out(
                grouped.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMinutes(1), Duration.ofSeconds(10)))
                        .emitStrategy(EmitStrategy.onWindowClose())
                        .count(),
                "final");
        out(
                grouped.windowedBy(
                                SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofMinutes(1), Duration.ofSeconds(10)))
                        .emitStrategy(EmitStrategy.onWindowClose())
                        .count(),
                "slidingFinal");
        out(
                grouped.windowedBy(
                                SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(30), Duration.ofSeconds(10)))
                        .count(),
                "session");
        out(
                grouped.windowedBy(
                                SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(30), Duration.ofSeconds(10)))
                        .emitStrategy(EmitStrategy.onWindowClose())
                        .count(),
                "sessionFinal");
        KStream<String, String> other = builder.stream("other", Consumed.with(Serdes.String(), Serdes.String()));
        in.join(
                        other,
                        (a, b) -> a + "+" + b,
                        JoinWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(20), Duration.ofSeconds(5)),
                        StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String()))
                .to("join", Produced.with(Serdes.String(), Serdes.String()));
        return builder;
    }

    /** Runs the topology on a seeded input; returns every output topic's records (key, value, timestamp) in order. */
    private Map<String, List<String>> run(Path stateDir, boolean bloomkv, boolean caching, long seed) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "windowed");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:1234");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, caching ? 1L << 20 : 0L);
        if (bloomkv) {
            p.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, BloomKvDslStoreSuppliers.class);
        }
        Map<String, List<String>> result = new LinkedHashMap<>();
        try (TopologyTestDriver driver = new TopologyTestDriver(topology().build(), p)) {
            TestInputTopic<String, String> in = driver.createInputTopic(
                    "in", Serdes.String().serializer(), Serdes.String().serializer());
            TestInputTopic<String, String> other = driver.createInputTopic(
                    "other", Serdes.String().serializer(), Serdes.String().serializer());
            Random rnd = new Random(seed);
            long time = 1_700_000_000_000L;
            for (int i = 0; i < 300; i++) {
                time += rnd.nextInt(1500);
                // Some records arrive late (within and beyond the grace periods).
                long ts = rnd.nextInt(10) == 0 ? time - rnd.nextInt(90_000) : time;
                String key = "k" + rnd.nextInt(12);
                if (rnd.nextInt(4) == 0) {
                    other.pipeInput(key, "o" + i, Instant.ofEpochMilli(ts));
                } else {
                    in.pipeInput(key, "v" + i, Instant.ofEpochMilli(ts));
                }
                if (rnd.nextInt(60) == 0) {
                    time += rnd.nextInt(300_000); // a jump: many windows close at once
                }
            }
            for (String topic : OUTPUTS) {
                TestOutputTopic<String, String> o = driver.createOutputTopic(
                        topic, Serdes.String().deserializer(), Serdes.String().deserializer());
                List<String> records = new ArrayList<>();
                for (TestRecord<String, String> r : o.readRecordsToList()) {
                    records.add(r.key() + "=" + r.value() + "@" + r.timestamp());
                }
                result.put(topic, records);
            }
            // Before the driver closes (it deletes its state directory).
            result.put(
                    "rocksdb files",
                    rocksDbFiles(stateDir).stream().map(Path::toString).toList());
            try (Stream<Path> files = Files.walk(stateDir)) {
                result.put(
                        "bloomkv databases",
                        files.filter(f -> f.getFileName().toString().startsWith("MANIFEST-"))
                                .map(Path::toString)
                                .toList());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return result;
    }

    /** Files only RocksDB writes into a database directory (its OPTIONS-n files), and its key-value stores' folder. */
    private static List<Path> rocksDbFiles(Path stateDir) {
        try (Stream<Path> all = Files.walk(stateDir)) {
            return all.filter(f -> f.getFileName().toString().startsWith("OPTIONS-")
                            || (Files.isDirectory(f)
                                    && f.getFileName().toString().equals("rocksdb")))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @ParameterizedTest(name = "caching={0}")
    @ValueSource(booleans = {false, true})
    void sameOutputAsKafkasDefaultStoresAndNoRocksDb(boolean caching) {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("DslWindowedTopologyTest seed " + seed + " caching=" + caching
                + " (replay with -Dbloomkv.seed=" + seed + ")");
        try (ShmDir kafkaDir = new ShmDir(tmp);
                ShmDir bloomDir = new ShmDir(tmp)) {
            long t0 = System.nanoTime();
            Map<String, List<String>> expected = run(kafkaDir.path, false, caching, seed);
            long t1 = System.nanoTime();
            Map<String, List<String>> actual = run(bloomDir.path, true, caching, seed);
            System.out.println("TIMING kafka " + (t1 - t0) / 1_000_000 + " ms, bloomkv "
                    + (System.nanoTime() - t1) / 1_000_000 + " ms");
            for (String topic : OUTPUTS) {
                assertThat(expected.get(topic)).as(topic + " produced output").isNotEmpty();
                assertThat(actual.get(topic))
                        .as("topic " + topic + ", seed " + seed)
                        .isEqualTo(expected.get(topic));
            }
            assertThat(expected.get("rocksdb files"))
                    .as("the default suppliers use RocksDB (the check can fail)")
                    .isNotEmpty();
            assertThat(actual.get("rocksdb files"))
                    .as("no RocksDB store with BloomKvDslStoreSuppliers")
                    .isEmpty();
            assertThat(actual.get("bloomkv databases"))
                    .as("bloomkv databases were written (one per store)")
                    .isNotEmpty();
        }
    }
}
