package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Whole topologies on bloomkv stores through Kafka's TopologyTestDriver. */
class TopologyTestDriverTest {
    /** After each test, its drivers and stores closed: no table and no off-heap filter byte left open. */
    @RegisterExtension
    final OpenStores openStores = new OpenStores();

    @TempDir
    Path stateDir;

    private Properties props(String app) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:1234");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        return p;
    }

    /** The Processor API word count: one line changes from Stores.persistentKeyValueStore to BloomKvStores. */
    static Topology wordCount(String storeName) {
        Topology t = new Topology();
        t.addSource("lines", Serdes.String().deserializer(), Serdes.String().deserializer(), "lines");
        t.addProcessor(
                "count",
                () -> new Processor<String, String, String, Long>() {
                    private KeyValueStore<String, Long> counts;
                    private ProcessorContext<String, Long> context;

                    @Override
                    public void init(ProcessorContext<String, Long> context) {
                        this.context = context;
                        this.counts = context.getStateStore(storeName);
                    }

                    @Override
                    public void process(Record<String, String> line) {
                        for (String word : line.value().toLowerCase(Locale.ROOT).split("\\W+")) {
                            Long old = counts.get(word);
                            long n = old == null ? 1 : old + 1;
                            counts.put(word, n);
                            context.forward(line.withKey(word).withValue(n));
                        }
                    }
                },
                "lines");
        t.addStateStore(
                Stores.keyValueStoreBuilder(
                        BloomKvStores.persistentKeyValueStore(storeName), Serdes.String(), Serdes.Long()),
                "count");
        t.addSink(
                "counts", "counts", Serdes.String().serializer(), Serdes.Long().serializer(), "count");
        return t;
    }

    @Test
    void processorApiWordCount() throws Exception {
        Map<String, Long> expected = new HashMap<>();
        try (TopologyTestDriver driver = new TopologyTestDriver(wordCount("word-counts"), props("wordcount"))) {
            TestInputTopic<String, String> in = driver.createInputTopic(
                    "lines", Serdes.String().serializer(), Serdes.String().serializer());
            TestOutputTopic<String, Long> out = driver.createOutputTopic(
                    "counts", Serdes.String().deserializer(), Serdes.Long().deserializer());
            String[] lines = {
                "the quick brown fox", "jumps over the lazy dog", "The dog barks", "", "fox and dog and the end"
            };
            for (int round = 0; round < 10; round++) {
                for (String line : lines) {
                    in.pipeInput(null, line);
                    for (String w : line.toLowerCase(Locale.ROOT).split("\\W+")) {
                        expected.merge(w, 1L, Long::sum);
                    }
                }
            }
            Map<String, Long> latest = out.readKeyValuesToMap();
            assertThat(latest).isEqualTo(expected);
            KeyValueStore<String, Long> store = driver.getKeyValueStore("word-counts");
            Map<String, Long> inStore = new HashMap<>();
            try (KeyValueIterator<String, Long> it = store.all()) {
                it.forEachRemaining(kv -> inStore.put(kv.key, kv.value));
            }
            assertThat(inStore).isEqualTo(expected);
            assertThat(store.get("dog")).isEqualTo(30L);
            assertThat(store.get("")).as("the empty word of the empty line").isEqualTo(10L);
            assertThat(Files.exists(stateDir.resolve("wordcount/0_0/word-counts/CURRENT")))
                    .as("a bloomkv database under stateDir/<task>/<store name>")
                    .isTrue();
        }
    }

    @Test
    void dslAggregationThroughTheDslStoreSuppliersConfig() throws Exception {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream("purchases", Consumed.with(Serdes.String(), Serdes.Long()))
                .groupByKey(Grouped.with(Serdes.String(), Serdes.Long()))
                .aggregate(
                        () -> 0L,
                        (customer, amount, total) -> total + amount,
                        Materialized.<String, Long, KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as(
                                        "totals")
                                .withKeySerde(Serdes.String())
                                .withValueSerde(Serdes.Long()))
                .toStream()
                .to("totals", Produced.with(Serdes.String(), Serdes.Long()));
        Properties p = props("dsl-totals");
        p.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, BloomKvDslStoreSuppliers.class); // the one line
        Map<String, Long> expected = new HashMap<>();
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(p), p)) {
            TestInputTopic<String, Long> in = driver.createInputTopic(
                    "purchases", Serdes.String().serializer(), Serdes.Long().serializer());
            TestOutputTopic<String, Long> out = driver.createOutputTopic(
                    "totals", Serdes.String().deserializer(), Serdes.Long().deserializer());
            for (int i = 0; i < 200; i++) {
                String customer = "customer-" + (i % 37);
                long amount = i % 11 + 1;
                in.pipeInput(customer, amount, 1_000_000L + i);
                expected.merge(customer, amount, Long::sum);
            }
            assertThat(out.readKeyValuesToMap()).isEqualTo(expected);
            KeyValueStore<String, ValueAndTimestamp<Long>> totals = driver.getTimestampedKeyValueStore("totals");
            assertThat(totals.get("customer-5").value()).isEqualTo(expected.get("customer-5"));
            assertThat(totals.get("customer-5").timestamp())
                    .as("the KTable keeps timestamps")
                    .isEqualTo(1_000_000L + 190);
            int n = 0;
            try (KeyValueIterator<String, ValueAndTimestamp<Long>> it = totals.all()) {
                while (it.hasNext()) {
                    KeyValue<String, ValueAndTimestamp<Long>> kv = it.next();
                    assertThat(kv.value.value()).isEqualTo(expected.get(kv.key));
                    n++;
                }
            }
            assertThat(n).isEqualTo(37);
            assertThat(Files.exists(stateDir.resolve("dsl-totals/0_0/totals/CURRENT")))
                    .as("the KTable's store is bloomkv")
                    .isTrue();
            assertThat(Files.exists(stateDir.resolve("dsl-totals/0_0/rocksdb")))
                    .as("no RocksDB store")
                    .isFalse();
        }
    }
}
