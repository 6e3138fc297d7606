package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import java.util.Objects;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Supplies bloomkv key-value stores of one name and value format (made by {@link BloomKvStores}); each
 * {@link #get()} is a new store (one per task). Metrics scope {@code bloomkv}.
 */
public class BloomKvKeyValueBytesStoreSupplier implements KeyValueBytesStoreSupplier {
    private final String name;
    private final Options options;
    private final DslStoreFormat format;

    BloomKvKeyValueBytesStoreSupplier(String name, Options options, DslStoreFormat format) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        this.options = options == null ? BloomKvStores.defaultKeyValueOptions() : options.copy();
        this.format = Objects.requireNonNull(format, "format cannot be null");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public KeyValueStore<Bytes, byte[]> get() {
        return switch (format) {
            case PLAIN -> new BloomKvStore(name, options);
            case TIMESTAMPED -> new BloomKvTimestampedStore(name, options);
            case HEADERS -> new BloomKvHeadersStore(name, options);
        };
    }

    @Override
    public String metricsScope() {
        return BloomKvStore.METRICS_SCOPE;
    }

    /** The value format of the stores it makes. */
    public DslStoreFormat format() {
        return format;
    }

    /** The headers variant carries Kafka's supplier marker too (as Kafka's built-in headers key-value supplier). */
    static final class Headers extends BloomKvKeyValueBytesStoreSupplier
            implements org.apache.kafka.streams.state.HeadersBytesStoreSupplier {
        Headers(String name, Options options) {
            super(name, options, DslStoreFormat.HEADERS);
        }
    }
}
