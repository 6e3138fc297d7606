package io.bloomkv.bench.kafka;

import java.io.File;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.StreamsMetrics;
import org.apache.kafka.streams.processor.CommitCallback;
import org.apache.kafka.streams.processor.StateRestoreCallback;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;

/**
 * The context a task gives its stores, reduced to what a store uses: a state directory, a real
 * metrics registry (the stores' gauges land in it), the registered restore callback (the bench feeds
 * it changelog batches as Kafka's restore does).
 */
final class BenchStoreContext implements StateStoreContext {
    final Metrics metrics = new Metrics();
    final StreamsMetricsImpl streamsMetrics = new StreamsMetricsImpl(metrics, "bench", Time.SYSTEM);
    private final Map<String, Object> configs = new HashMap<>();
    private final File stateDir;
    StateRestoreCallback restoreCallback;

    private final int partition;

    BenchStoreContext(File stateDir) {
        this(stateDir, 0);
    }

    /** The context of task {@code 0_partition}. */
    BenchStoreContext(File stateDir, int partition) {
        this.stateDir = stateDir;
        this.partition = partition;
        // As a task's context: the originals overlaid with every config's value (defaults included).
        Map<String, Object> props = new HashMap<>();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "bench-kafka-streams");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.getPath());
        StreamsConfig config = new StreamsConfig(props);
        configs.putAll(config.originals());
        configs.putAll(config.values());
    }

    @Override
    public String applicationId() {
        return "bench-kafka-streams";
    }

    @Override
    public TaskId taskId() {
        return new TaskId(0, partition);
    }

    @Override
    public Optional<RecordMetadata> recordMetadata() {
        return Optional.empty();
    }

    @Override
    public Serde<?> keySerde() {
        return Serdes.String();
    }

    @Override
    public Serde<?> valueSerde() {
        return Serdes.Long();
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
    public void register(StateStore store, StateRestoreCallback callback) {
        restoreCallback = callback;
    }

    @Override
    public void register(StateStore store, StateRestoreCallback callback, CommitCallback checkpoint) {
        restoreCallback = callback;
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

    /**
     * This context seen as Kafka's {@code InternalProcessorContext}, which Kafka's segmented RocksDB stores (window,
     * session, versioned) require at init: the methods of this context are delegated to it and
     * {@code currentSystemTimeMs} reads the clock; any other internal call is an error of the bench. The stores call
     * {@code recordMetadata} on every put (their IQv2 position): it is answered without reflection, and the other
     * methods' targets are looked up once, so the proxy allocates nothing per record that a task's own context would
     * not (its figures are the stores' allocation, not the bench's).
     */
    StateStoreContext asInternal() {
        Map<java.lang.reflect.Method, java.lang.reflect.Method> targets =
                new java.util.concurrent.ConcurrentHashMap<>();
        return (StateStoreContext) java.lang.reflect.Proxy.newProxyInstance(
                BenchStoreContext.class.getClassLoader(),
                new Class<?>[] {org.apache.kafka.streams.processor.internals.InternalProcessorContext.class},
                (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "recordMetadata":
                            return recordMetadata();
                        case "currentSystemTimeMs":
                            return System.currentTimeMillis();
                        case "hashCode":
                            return System.identityHashCode(proxy);
                        case "equals":
                            return proxy == args[0];
                        case "toString":
                            return "BenchStoreContext[" + stateDir + "]";
                        default:
                            break;
                    }
                    java.lang.reflect.Method target = targets.get(method);
                    if (target == null) {
                        try {
                            target = StateStoreContext.class.getMethod(method.getName(), method.getParameterTypes());
                        } catch (NoSuchMethodException e) {
                            throw new IllegalStateException(
                                    "the store called InternalProcessorContext." + method.getName());
                        }
                        targets.put(method, target);
                    }
                    try {
                        return target.invoke(this, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
