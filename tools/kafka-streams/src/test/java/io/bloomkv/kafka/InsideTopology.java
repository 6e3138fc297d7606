package io.bloomkv.kafka;

import java.nio.file.Path;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.StoreBuilder;

/**
 * Runs a piece of test code inside a processor of a TopologyTestDriver, with the given stores attached and
 * initialized by Kafka Streams itself (Kafka's segmented stores need its internal processor context), so a
 * differential test can drive Kafka's store and bloomkv's side by side through the same wrapping layers.
 */
final class InsideTopology {
    private InsideTopology() {}

    static void run(Path stateDir, Consumer<ProcessorContext<Void, Void>> body, StoreBuilder<?>... stores) {
        Topology t = new Topology();
        t.addSource("src", Serdes.String().deserializer(), Serdes.String().deserializer(), "go");
        t.addProcessor(
                "p",
                () -> new Processor<String, String, Void, Void>() {
                    private ProcessorContext<Void, Void> context;

                    @Override
                    public void init(ProcessorContext<Void, Void> context) {
                        this.context = context;
                    }

                    @Override
                    public void process(Record<String, String> record) {
                        body.accept(context);
                    }
                },
                "src");
        for (StoreBuilder<?> b : stores) {
            t.addStateStore(b, "p");
        }
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "differential");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:1234");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        try (TopologyTestDriver driver = new TopologyTestDriver(t, p)) {
            TestInputTopic<String, String> in = driver.createInputTopic(
                    "go", Serdes.String().serializer(), Serdes.String().serializer());
            in.pipeInput("k", "v");
        }
    }
}
