package io.bloomkv.kafka;

import java.io.File;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsMetrics;
import org.apache.kafka.streams.processor.CommitCallback;
import org.apache.kafka.streams.processor.StateRestoreCallback;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;

/** A {@link StateStoreContext} for unit tests: a real metrics registry, the restore callback kept, settable record metadata. */
final class TestStoreContext implements StateStoreContext {
    final Metrics metrics = new Metrics();
    final StreamsMetricsImpl streamsMetrics = new StreamsMetricsImpl(metrics, "test-client", Time.SYSTEM);
    final Map<String, Object> configs = new HashMap<>();
    final File stateDir;
    StateRestoreCallback restoreCallback;
    /** The commit callback a store registered (Kafka's segmented stores write their position with it), or null. */
    CommitCallback commitCallback;

    StateStore registered;
    RecordMetadata recordMetadata;

    TestStoreContext(File stateDir) {
        this.stateDir = stateDir;
        configs.put("application.id", "test-app");
    }

    void setRecord(String topic, int partition, long offset) {
        recordMetadata = new RecordMetadata() {
            @Override
            public String topic() {
                return topic;
            }

            @Override
            public int partition() {
                return partition;
            }

            @Override
            public long offset() {
                return offset;
            }
        };
    }

    @Override
    public String applicationId() {
        return "test-app";
    }

    @Override
    public TaskId taskId() {
        return new TaskId(0, 0);
    }

    @Override
    public Optional<RecordMetadata> recordMetadata() {
        return Optional.ofNullable(recordMetadata);
    }

    @Override
    public Serde<?> keySerde() {
        return Serdes.ByteArray();
    }

    @Override
    public Serde<?> valueSerde() {
        return Serdes.ByteArray();
    }

    @Override
    public File stateDir() {
        return stateDir;
    }

    @Override
    public StreamsMetrics metrics() {
        return streamsMetrics;
    }

    @Override
    public void register(StateStore store, StateRestoreCallback stateRestoreCallback) {
        registered = store;
        restoreCallback = stateRestoreCallback;
    }

    @Override
    public void register(StateStore store, StateRestoreCallback stateRestoreCallback, CommitCallback checkpoint) {
        register(store, stateRestoreCallback);
        commitCallback = checkpoint;
    }

    @Override
    public Map<String, Object> appConfigs() {
        return configs;
    }

    @Override
    public Map<String, Object> appConfigsWithPrefix(String prefix) {
        Map<String, Object> out = new HashMap<>();
        configs.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                out.put(k.substring(prefix.length()), v);
            }
        });
        return out;
    }
}
