package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.Sensor.RecordingLevel;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's RocksDB store metrics (KIP-471 statistics, KIP-607 properties) on bloomkv stores, checked against Kafka's
 * own RocksDB stores in the same topology: the names bloomkv supports exist on both, in the same group, with the same
 * tags but the store-type key, at the same recording level; the ones it leaves out (docs/kafka-streams.md, "Metrics")
 * do not exist on bloomkv's; and the values move with the store.
 */
class KafkaRocksDbMetricsTest {
    @RegisterExtension
    final OpenStores openStores = new OpenStores();

    @TempDir
    Path stateDir;

    /** Kafka's property-based gauges bloomkv reports (INFO). */
    static final List<String> GAUGES = List.of(
            "num-immutable-mem-table",
            "cur-size-active-mem-table",
            "cur-size-all-mem-tables",
            "size-all-mem-tables",
            "num-entries-active-mem-table",
            "num-entries-imm-mem-tables",
            "num-deletes-active-mem-table",
            "num-deletes-imm-mem-tables",
            "mem-table-flush-pending",
            "compaction-pending",
            "total-sst-files-size",
            "live-sst-files-size",
            "num-live-versions",
            "estimate-num-keys",
            "background-errors",
            "block-cache-capacity",
            "block-cache-usage");

    /** Kafka's statistics-based metrics bloomkv records (DEBUG sensors). */
    static final List<String> STATISTICS = List.of(
            "bytes-written-rate",
            "bytes-written-total",
            "memtable-bytes-flushed-rate",
            "memtable-bytes-flushed-total",
            "memtable-hit-ratio",
            "write-stall-duration-avg",
            "write-stall-duration-total",
            "block-cache-data-hit-ratio",
            "bytes-read-compaction-rate",
            "bytes-written-compaction-rate",
            "number-open-files");

    /** Kafka's metrics with no honest bloomkv counterpart: never registered on a bloomkv store. */
    static final List<String> ABSENT = List.of(
            "num-running-flushes",
            "num-running-compactions",
            "estimate-pending-compaction-bytes",
            "block-cache-pinned-usage",
            "estimate-table-readers-mem",
            "bytes-read-rate",
            "bytes-read-total",
            "memtable-flush-time-avg",
            "memtable-flush-time-min",
            "memtable-flush-time-max",
            "block-cache-index-hit-ratio",
            "block-cache-filter-hit-ratio",
            "compaction-time-avg",
            "compaction-time-min",
            "compaction-time-max",
            "number-file-errors-total");

    static final List<String> STORES = List.of("kv", "win", "ses", "ver");

    /** The suppliers of one kind of store: bloomkv's or Kafka's RocksDB ones. */
    private record Suppliers(
            Function<String, KeyValueBytesStoreSupplier> kv,
            Function<String, WindowBytesStoreSupplier> window,
            Function<String, SessionBytesStoreSupplier> session,
            Function<String, VersionedBytesStoreSupplier> versioned) {}

    private static final Duration RETENTION = Duration.ofHours(1);

    private static final Suppliers BLOOMKV = new Suppliers(
            BloomKvStores::persistentKeyValueStore,
            n -> BloomKvStores.persistentWindowStore(n, RETENTION, Duration.ofMinutes(1), false),
            n -> BloomKvStores.persistentSessionStore(n, RETENTION),
            n -> BloomKvStores.persistentVersionedKeyValueStore(n, RETENTION));

    private static final Suppliers ROCKSDB = new Suppliers(
            Stores::persistentKeyValueStore,
            n -> Stores.persistentWindowStore(n, RETENTION, Duration.ofMinutes(1), false),
            n -> Stores.persistentSessionStore(n, RETENTION),
            n -> Stores.persistentVersionedKeyValueStore(n, RETENTION));

    /** The StreamsMetricsImpl of the running driver, caught by the processor (to run the recording trigger). */
    private StreamsMetricsImpl streamsMetrics;

    /** Every record is written to each of the four stores (its value as a string), and read back from the first. */
    private Topology topology(Suppliers s) {
        Topology t = new Topology();
        t.addSource("in", Serdes.String().deserializer(), Serdes.String().deserializer(), "in");
        t.addProcessor(
                "write",
                () -> new Processor<String, String, Void, Void>() {
                    private KeyValueStore<String, String> kv;
                    private WindowStore<String, String> win;
                    private SessionStore<String, String> ses;
                    private VersionedKeyValueStore<String, String> ver;

                    @Override
                    public void init(ProcessorContext<Void, Void> context) {
                        streamsMetrics = (StreamsMetricsImpl) context.metrics();
                        kv = context.getStateStore("kv");
                        win = context.getStateStore("win");
                        ses = context.getStateStore("ses");
                        ver = context.getStateStore("ver");
                    }

                    @Override
                    public void process(Record<String, String> r) {
                        if (r.value() == null) {
                            kv.delete(r.key());
                            return;
                        }
                        kv.put(r.key(), r.value());
                        kv.get(r.key());
                        win.put(r.key(), r.value(), r.timestamp());
                        ses.put(new Windowed<>(r.key(), new SessionWindow(r.timestamp(), r.timestamp())), r.value());
                        ver.put(r.key(), r.value(), r.timestamp());
                    }
                },
                "in");
        t.addStateStore(Stores.keyValueStoreBuilder(s.kv().apply("kv"), Serdes.String(), Serdes.String()), "write");
        t.addStateStore(Stores.windowStoreBuilder(s.window().apply("win"), Serdes.String(), Serdes.String()), "write");
        t.addStateStore(
                Stores.sessionStoreBuilder(s.session().apply("ses"), Serdes.String(), Serdes.String()), "write");
        t.addStateStore(
                Stores.versionedKeyValueStoreBuilder(s.versioned().apply("ver"), Serdes.String(), Serdes.String()),
                "write");
        return t;
    }

    private Properties props(String app, RecordingLevel level) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:1234");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve(app).toString());
        p.put(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, level.name());
        return p;
    }

    /** What a dashboard sees of one store's metrics: name -> tags with the state-id key written as "*-state-id". */
    private record Seen(Map<String, Map<String, String>> tags, Map<String, RecordingLevel> levels) {}

    private static Seen seen(TopologyTestDriver driver, String store) {
        Map<String, Map<String, String>> tags = new TreeMap<>();
        Map<String, RecordingLevel> levels = new TreeMap<>();
        for (Map.Entry<MetricName, ? extends org.apache.kafka.common.Metric> e :
                driver.metrics().entrySet()) {
            MetricName n = e.getKey();
            String id = stateIdKey(n);
            if (!n.group().equals("stream-state-metrics")
                    || id == null
                    || !store.equals(n.tags().get(id))) {
                continue;
            }
            Map<String, String> t = new TreeMap<>(n.tags());
            t.put("*-state-id", t.remove(id));
            tags.put(n.name(), t);
            levels.put(n.name(), ((KafkaMetric) e.getValue()).config().recordLevel());
        }
        return new Seen(tags, levels);
    }

    private static String stateIdKey(MetricName n) {
        return n.tags().keySet().stream()
                .filter(k -> k.endsWith("-state-id"))
                .findFirst()
                .orElse(null);
    }

    private void pipe(TopologyTestDriver driver, int from, int to) {
        TestInputTopic<String, String> in = driver.createInputTopic(
                "in", Serdes.String().serializer(), Serdes.String().serializer());
        for (int i = from; i < to; i++) {
            in.pipeInput("key-" + i, "value-" + i, 1_000L * i);
        }
    }

    @Test
    void bloomkvStoresReportKafkasNamesInKafkasGroupWithKafkasTagsAndLevels() {
        for (RecordingLevel level : new RecordingLevel[] {RecordingLevel.INFO, RecordingLevel.DEBUG}) {
            Map<String, Seen> rocks = new HashMap<>();
            Map<String, Seen> bloom = new HashMap<>();
            try (TopologyTestDriver d = new TopologyTestDriver(topology(ROCKSDB), props("r" + level, level))) {
                pipe(d, 0, 100);
                STORES.forEach(s -> rocks.put(s, seen(d, s)));
            }
            try (TopologyTestDriver d = new TopologyTestDriver(topology(BLOOMKV), props("b" + level, level))) {
                pipe(d, 0, 100);
                STORES.forEach(s -> bloom.put(s, seen(d, s)));
            }
            for (String store : STORES) {
                String ctx = level + " " + store;
                Seen r = rocks.get(store);
                Seen b = bloom.get(store);
                Set<String> supported = new TreeSet<>(GAUGES);
                supported.addAll(STATISTICS);
                Set<String> kafkaHas = new TreeSet<>(r.tags().keySet());
                kafkaHas.retainAll(supported);
                // Kafka's versioned store reports its RocksDB metrics like the key-value one (checked here, not
                // assumed): every name bloomkv supports is one Kafka's store reports at this level.
                assertThat(b.tags().keySet()).as(ctx).containsAll(kafkaHas);
                assertThat(r.tags().keySet()).as(ctx + ": Kafka's store").containsAll(GAUGES);
                for (String name : kafkaHas) {
                    assertThat(b.tags().get(name))
                            .as(ctx + " " + name)
                            .isEqualTo(r.tags().get(name));
                    assertThat(b.levels().get(name))
                            .as(ctx + " " + name)
                            .isEqualTo(r.levels().get(name));
                }
                for (String name : GAUGES) {
                    assertThat(b.levels().get(name)).as(ctx + " " + name).isEqualTo(RecordingLevel.INFO);
                }
                assertThat(b.tags().keySet()).as(ctx).doesNotContainAnyElementsOf(ABSENT);
                // Each left-out name is a real Kafka metric (no typo makes the check above pass vacuously).
                assertThat(r.tags().keySet())
                        .as(ctx + ": Kafka's store")
                        .containsAll(supported)
                        .containsAll(ABSENT);
                assertThat(b.tags()).as(ctx).containsKey("bloomkv-tables-without-filter");
            }
        }
    }

    /**
     * The same records, then deletes, into Kafka's RocksDB store and bloomkv's: what the memtable counts and the key
     * estimate moved agrees (no flush happens: both write buffers hold everything). Where they start differs: at open
     * Kafka's store holds more metadata records in its offsets column family than bloomkv's store in its database.
     */
    @Test
    void memtableCountsAndTheKeyEstimateEqualKafkasRocksDbStore() {
        List<String> names = List.of(
                "estimate-num-keys",
                "num-entries-active-mem-table",
                "num-deletes-active-mem-table",
                "num-immutable-mem-table",
                "background-errors");
        Map<String, Double> rocks = new TreeMap<>();
        Map<String, Double> bloom = new TreeMap<>();
        for (boolean bloomkv : new boolean[] {false, true}) {
            Map<String, Double> out = bloomkv ? bloom : rocks;
            try (TopologyTestDriver d = new TopologyTestDriver(
                    topology(bloomkv ? BLOOMKV : ROCKSDB), props("v" + bloomkv, RecordingLevel.INFO))) {
                names.forEach(n -> out.put("start " + n, value(d, "kv", n)));
                pipe(d, 0, 300);
                TestInputTopic<String, String> in = d.createInputTopic(
                        "in", Serdes.String().serializer(), Serdes.String().serializer());
                for (int i = 0; i < 300; i += 7) {
                    in.pipeInput("key-" + i, null, 400_000L);
                }
                names.forEach(n -> out.put(n, value(d, "kv", n) - out.remove("start " + n)));
            }
        }
        assertThat(bloom).isEqualTo(rocks);
    }

    private static double value(TopologyTestDriver driver, String store, String name) {
        for (Map.Entry<MetricName, ? extends org.apache.kafka.common.Metric> e :
                driver.metrics().entrySet()) {
            MetricName n = e.getKey();
            String id = stateIdKey(n);
            if (n.name().equals(name) && id != null && store.equals(n.tags().get(id))) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("no metric " + name + " of store " + store);
    }

    @Test
    void metricsMoveWithTheStoreAndAreGoneWhenItCloses() {
        try (TopologyTestDriver d = new TopologyTestDriver(topology(BLOOMKV), props("moves", RecordingLevel.DEBUG))) {
            // The store's offsets and position records are keys of its database (Kafka's RocksDB store counts those
            // of its offsets column family too: the property is aggregated over column families).
            assertThat(value(d, "kv", "size-all-mem-tables")).isPositive();
            double metadata = value(d, "kv", "estimate-num-keys");
            assertThat(metadata).isLessThan(5);
            pipe(d, 0, 500);
            for (String store : STORES) {
                assertThat(value(d, store, "size-all-mem-tables")).as(store).isPositive();
                assertThat(value(d, store, "cur-size-active-mem-table"))
                        .as(store)
                        .isPositive()
                        .isLessThanOrEqualTo(value(d, store, "cur-size-all-mem-tables"));
                assertThat(value(d, store, "background-errors")).as(store).isZero();
                assertThat(value(d, store, "num-live-versions")).as(store).isPositive();
                assertThat(value(d, store, "block-cache-capacity")).as(store).isNotNegative();
                assertThat(value(d, store, "bloomkv-tables-without-filter"))
                        .as(store)
                        .isZero();
            }
            // Each commit rewrites the offsets and position records: versions the estimate counts, as Kafka's does.
            assertThat(value(d, "kv", "estimate-num-keys")).isGreaterThanOrEqualTo(metadata + 500);
            assertThat(value(d, "kv", "num-entries-active-mem-table")).isGreaterThanOrEqualTo(500);
            assertThat(value(d, "kv", "num-deletes-active-mem-table")).isZero();
            TestInputTopic<String, String> in = d.createInputTopic(
                    "in", Serdes.String().serializer(), Serdes.String().serializer());
            for (int i = 0; i < 10; i++) {
                in.pipeInput("key-" + i, null, 600_000L);
            }
            assertThat(value(d, "kv", "num-deletes-active-mem-table")).isEqualTo(10);

            // The statistics: nothing until the trigger runs, then what the counters moved.
            assertThat(value(d, "kv", "bytes-written-total")).isZero();
            streamsMetrics.rocksDBMetricsRecordingTrigger().run();
            double written = value(d, "kv", "bytes-written-total");
            assertThat(written).isPositive();
            assertThat(value(d, "kv", "memtable-hit-ratio"))
                    .as("every get finds its key in the memtable")
                    .isEqualTo(1.0);
            pipe(d, 500, 600);
            streamsMetrics.rocksDBMetricsRecordingTrigger().run();
            assertThat(value(d, "kv", "bytes-written-total")).isGreaterThan(written);
            for (String store : STORES) {
                assertThat(value(d, store, "bytes-written-total")).as(store).isPositive();
            }

            Map<String, StateStore> stores = d.getAllStateStores();
            assertThat(recorders()).contains("0_0-kv", "0_0-win", "0_0-ses", "0_0-ver");
            stores.get("kv").close();
            assertThat(recorders()).as("kv's recorder is off the trigger").doesNotContain("0_0-kv");
            assertThat(seen(d, "kv").tags()).as("kv's metrics after close").isEmpty();
            assertThat(seen(d, "win").tags()).as("the other stores keep theirs").containsKey("estimate-num-keys");
            streamsMetrics.rocksDBMetricsRecordingTrigger().run(); // the closed store's recorder is gone
            for (String store : List.of("win", "ses", "ver")) {
                stores.get(store).close();
                assertThat(seen(d, store).tags())
                        .as(store + "'s metrics after close")
                        .isEmpty();
            }
            assertThat(recorders()).isEmpty();
        }
    }

    /** The recorders Kafka's trigger runs, by task and store (its private map: no API lists them). */
    @SuppressWarnings("unchecked")
    private Set<String> recorders() {
        try {
            Object trigger = streamsMetrics.rocksDBMetricsRecordingTrigger();
            java.lang.reflect.Field f = trigger.getClass().getDeclaredField("metricsRecordersToTrigger");
            f.setAccessible(true);
            return new TreeSet<>(((Map<String, ?>) f.get(trigger)).keySet());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /** A reporter reading every gauge takes one Stats; a gauge read again takes a new one (never a stale answer). */
    @Test
    void aRoundOfGaugeReadsTakesOneStats() {
        int[] taken = {0};
        BloomKvMetrics.Rounds rounds = new BloomKvMetrics.Rounds(() -> {
            taken[0]++;
            return null;
        });
        int a = rounds.newGauge();
        int b = rounds.newGauge();
        int c = rounds.newGauge();
        rounds.stats(a);
        rounds.stats(b);
        rounds.stats(c);
        assertThat(taken[0]).isEqualTo(1);
        rounds.stats(b);
        assertThat(taken[0]).as("b read again: a new round").isEqualTo(2);
        rounds.stats(a);
        rounds.stats(c);
        assertThat(taken[0]).isEqualTo(2);
    }
}
