package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A word count (DSL, moved onto bloomkv by {@code dsl.store.suppliers.class}) on a real one-node
 * Kafka cluster (KafkaClusterTestKit, loopback): run it to the expected counts, stop it, wipe its
 * state directory, start it again and check that every count was restored from the changelog into
 * a new bloomkv store before any new input.
 */
class EmbeddedClusterRestoreTest {
    @TempDir
    Path dir;

    private static final String APP = "bloomkv-restore-test";
    private static final int LINES = 4000;

    @Test
    @Timeout(180)
    void countsAreRestoredFromTheChangelogAfterTheStateDirectoryIsWiped() throws Exception {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("EmbeddedClusterRestoreTest seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        try (KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                        .setCombined(true)
                        .setNumBrokerNodes(1)
                        .setNumControllerNodes(1)
                        .setBaseDirectory(dir.resolve("kafka"))
                        .build())
                .setConfigProp("group.initial.rebalance.delay.ms", "0")
                .setConfigProp("offsets.topic.replication.factor", "1")
                .setConfigProp("offsets.topic.num.partitions", "1")
                .setConfigProp("transaction.state.log.replication.factor", "1")
                .setConfigProp("transaction.state.log.min.isr", "1")
                .build()) {
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
            try (var admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic("lines", 2, (short) 1)))
                        .all()
                        .get();
            }
            Map<String, Long> expected = new HashMap<>();
            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            try (KafkaProducer<String, String> producer =
                    new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < LINES; i++) {
                    StringBuilder line = new StringBuilder();
                    int words = 1 + rnd.nextInt(6);
                    for (int w = 0; w < words; w++) {
                        String word = "w" + (int) Math.abs(rnd.nextGaussian() * 300);
                        line.append(word).append(' ');
                        expected.merge(word, 1L, Long::sum);
                    }
                    producer.send(new ProducerRecord<>("lines", "line-" + i, line.toString()));
                }
                producer.flush();
            }

            Path stateDir = dir.resolve("state");
            // First run: count everything.
            try (KafkaStreams streams = new KafkaStreams(topology(), props(cluster, stateDir))) {
                failOnError(streams);
                streams.start();
                waitUntil(
                        () -> countsIn(streams).equals(expected),
                        Duration.ofSeconds(90),
                        "the first run to count every line");
                assertThat(Files.exists(anyStoreDir(stateDir).resolve("CURRENT")))
                        .as("the counts live in a bloomkv database")
                        .isTrue();
                // Leave the group, so the second run is not kept waiting for this member's session to time out.
                streams.close(org.apache.kafka.streams.CloseOptions.groupMembershipOperation(
                                org.apache.kafka.streams.CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                        .withTimeout(Duration.ofSeconds(30)));
            }

            // Wipe the state directory: the second run has only the changelog.
            deleteRecursively(stateDir);
            assertThat(Files.exists(stateDir)).isFalse();
            AtomicLong restored = new AtomicLong();
            try (KafkaStreams streams = new KafkaStreams(topology(), props(cluster, stateDir))) {
                streams.setGlobalStateRestoreListener(new StateRestoreListener() {
                    @Override
                    public void onRestoreStart(TopicPartition tp, String store, long start, long end) {}

                    @Override
                    public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long n) {
                        restored.addAndGet(n);
                    }

                    @Override
                    public void onRestoreEnd(TopicPartition tp, String store, long total) {}
                });
                failOnError(streams);
                streams.start();
                waitUntil(
                        () -> streams.state() == KafkaStreams.State.RUNNING
                                && !countsIn(streams).isEmpty(),
                        Duration.ofSeconds(90),
                        "the second run to restore and run");
                Map<String, Long> after = countsIn(streams);
                assertThat(after)
                        .as("every count restored from the changelog (no input is left to process)")
                        .isEqualTo(expected);
                assertThat(restored.get())
                        .as("records restored into the new store")
                        .isGreaterThanOrEqualTo(expected.size());
                assertThat(Files.exists(anyStoreDir(stateDir).resolve("CURRENT")))
                        .as("restored into a new bloomkv database")
                        .isTrue();
            }
        }
    }

    private final java.util.concurrent.atomic.AtomicReference<Throwable> streamsError =
            new java.util.concurrent.atomic.AtomicReference<>();

    private void failOnError(KafkaStreams streams) {
        streams.setUncaughtExceptionHandler(e -> {
            streamsError.compareAndSet(null, e);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .SHUTDOWN_CLIENT;
        });
        streams.setStateListener((now, before) -> System.out.println("streams " + before + " -> " + now));
    }

    private static Topology topology() {
        StreamsBuilder b = new StreamsBuilder();
        b.stream("lines", Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line ->
                        Arrays.asList(line.toLowerCase(Locale.ROOT).trim().split("\\s+")))
                .groupBy((k, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts"));
        return b.build();
    }

    private static Properties props(KafkaClusterTestKit cluster, Path stateDir) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, BloomKvDslStoreSuppliers.class);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(BloomKvConfig.BLOCK_CACHE_BYTES_CONFIG, 4L << 20);
        return p;
    }

    /** The counts readable through interactive queries now (empty while not queryable). */
    private static Map<String, Long> countsIn(KafkaStreams streams) {
        Map<String, Long> out = new HashMap<>();
        try {
            ReadOnlyKeyValueStore<String, Long> store =
                    streams.store(StoreQueryParameters.fromNameAndType("counts", QueryableStoreTypes.keyValueStore()));
            try (KeyValueIterator<String, Long> it = store.all()) {
                while (it.hasNext()) {
                    KeyValue<String, Long> kv = it.next();
                    out.put(kv.key, kv.value);
                }
            }
        } catch (org.apache.kafka.streams.errors.InvalidStateStoreException notYet) {
            return Map.of();
        }
        return out;
    }

    private static Path anyStoreDir(Path stateDir) throws Exception {
        try (var tasks = Files.list(stateDir.resolve(APP))) {
            return tasks.map(t -> t.resolve("counts"))
                    .filter(Files::isDirectory)
                    .findFirst()
                    .orElseThrow();
        }
    }

    private void waitUntil(BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (streamsError.get() != null) {
                throw new AssertionError("the application failed while waiting for " + what, streamsError.get());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(200);
        }
    }

    private static void deleteRecursively(Path p) throws Exception {
        if (!Files.exists(p)) {
            return;
        }
        try (var all = Files.walk(p)) {
            all.sorted(java.util.Comparator.reverseOrder())
                    .forEach(f -> f.toFile().delete());
        }
    }
}
