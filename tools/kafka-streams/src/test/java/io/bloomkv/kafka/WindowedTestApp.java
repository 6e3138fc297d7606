package io.bloomkv.kafka;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * The DSL application of the real-cluster tests, in its own class so that a child JVM can run it
 * ({@link #main}: bootstrap servers, state directory, processing guarantee): events ({@code user -> amount}, event
 * time = record timestamp) counted in 1-minute tumbling windows, summed in 2-minute windows hopping by 1 minute and
 * in sessions of 30 s inactivity, and joined with the versioned table of profiles (as of each event's timestamp),
 * the joined profiles counted in a key-value store. Every store comes from {@link BloomKvDslStoreSuppliers} except
 * the versioned table, materialized through {@link BloomKvStores#persistentVersionedKeyValueStore}.
 */
final class WindowedTestApp {
    static final String APP = "bloomkv-windowed-app";
    static final String EVENTS = "events";
    static final String PROFILES = "profiles";
    static final String TUMBLING = "tumbling-counts";
    static final String HOPPING = "hopping-sums";
    static final String SESSIONS = "session-sums";
    static final String PROFILE_STORE = "profiles-versioned";
    static final String JOIN_COUNTS = "join-counts";
    static final Duration HISTORY = Duration.ofMinutes(30);
    /** Windows and sessions are kept a day, longer than the input's event time, so every one stays queryable. */
    static final Duration RETENTION = Duration.ofDays(1);

    private WindowedTestApp() {}

    static Topology topology() {
        StreamsBuilder b = new StreamsBuilder();
        KStream<String, Long> events = b.stream(EVENTS, Consumed.with(Serdes.String(), Serdes.Long()));
        KTable<String, String> profiles = b.table(
                PROFILES,
                Consumed.with(Serdes.String(), Serdes.String()),
                Materialized.<String, String>as(BloomKvStores.persistentVersionedKeyValueStore(PROFILE_STORE, HISTORY))
                        .withKeySerde(Serdes.String())
                        .withValueSerde(Serdes.String()));
        events.groupByKey(Grouped.with(Serdes.String(), Serdes.Long()))
                .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMinutes(1)))
                .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as(TUMBLING)
                        .withRetention(RETENTION));
        events.groupByKey(Grouped.with(Serdes.String(), Serdes.Long()))
                .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMinutes(2)).advanceBy(Duration.ofMinutes(1)))
                .aggregate(
                        () -> 0L,
                        (k, v, sum) -> sum + v,
                        Materialized.<String, Long, WindowStore<Bytes, byte[]>>as(HOPPING)
                                .withValueSerde(Serdes.Long())
                                .withRetention(RETENTION));
        events.groupByKey(Grouped.with(Serdes.String(), Serdes.Long()))
                .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(Duration.ofSeconds(30)))
                .aggregate(
                        () -> 0L,
                        (k, v, sum) -> sum + v,
                        (k, a, c) -> a + c,
                        Materialized.<String, Long, SessionStore<Bytes, byte[]>>as(SESSIONS)
                                .withValueSerde(Serdes.Long())
                                .withRetention(RETENTION));
        events.join(profiles, (amount, profile) -> profile)
                .groupBy((user, profile) -> profile, Grouped.with("joined", Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as(JOIN_COUNTS));
        return b.build();
    }

    static Properties props(String bootstrap, String stateDir, String guarantee) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        p.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, BloomKvDslStoreSuppliers.class);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(BloomKvConfig.BLOCK_CACHE_BYTES_CONFIG, 4L << 20);
        return p;
    }

    /** Runs the application until the process is killed. */
    public static void main(String[] args) throws InterruptedException {
        System.out.println("child main " + String.join(" ", args));
        System.out.flush();
        KafkaStreams streams = new KafkaStreams(topology(), props(args[0], args[1], args[2]));
        streams.setStateListener((now, before) -> {
            System.out.println("child streams " + before + " -> " + now);
            System.out.flush();
        });
        streams.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            System.out.flush();
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .SHUTDOWN_CLIENT;
        });
        streams.start();
        System.out.println("child started");
        System.out.flush();
        new CountDownLatch(1).await();
    }
}
