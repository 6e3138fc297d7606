package io.bloomkv.kafka;

import java.util.Map;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.DslSessionParams;
import org.apache.kafka.streams.state.DslStoreSuppliers;
import org.apache.kafka.streams.state.DslWindowParams;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * Moves every store of a DSL application (KTables, aggregations, joins' tables, windowed aggregations and
 * joins, sliding windows, session windows, emit-on-window-close) onto bloomkv with one config line:
 *
 * <pre>{@code
 * props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, BloomKvDslStoreSuppliers.class);
 * }</pre>
 *
 * Key-value stores get the bloomkv store of the requested value format (plain, timestamped, or timestamped with
 * headers); window stores the bloomkv window store of the requested format (Kafka's default is timestamped);
 * session stores the bloomkv session store (with headers when asked). Emit-on-window-close gets the same stores
 * (Kafka's built-in suppliers give it time-ordered RocksDB stores; bloomkv's session store answers the time-range
 * {@code findSessions} those aggregations call, and its window store serves them through the key-ordered
 * scans its caching layer expects, as Kafka's in-memory suppliers do). No RocksDB store is created.
 */
public class BloomKvDslStoreSuppliers implements DslStoreSuppliers {
    @Override
    public void configure(Map<String, ?> configs) {}

    @Override
    public KeyValueBytesStoreSupplier keyValueStore(DslKeyValueParams params) {
        return switch (params.dslStoreFormat()) {
            case PLAIN -> BloomKvStores.persistentKeyValueStore(params.name());
            case TIMESTAMPED -> BloomKvStores.persistentTimestampedKeyValueStore(params.name());
            case HEADERS -> BloomKvStores.persistentTimestampedKeyValueStoreWithHeaders(params.name());
        };
    }

    @Override
    public WindowBytesStoreSupplier windowStore(DslWindowParams params) {
        DslStoreFormat format = params.dslStoreFormat() == null ? DslStoreFormat.TIMESTAMPED : params.dslStoreFormat();
        return switch (format) {
            case HEADERS -> BloomKvStores.persistentTimestampedWindowStoreWithHeaders(params.name(), params.retentionPeriod(),
                    params.windowSize(), params.retainDuplicates());
            case TIMESTAMPED -> BloomKvStores.persistentTimestampedWindowStore(params.name(), params.retentionPeriod(),
                    params.windowSize(), params.retainDuplicates());
            case PLAIN -> BloomKvStores.persistentWindowStore(params.name(), params.retentionPeriod(), params.windowSize(),
                    params.retainDuplicates());
        };
    }

    @Override
    public SessionBytesStoreSupplier sessionStore(DslSessionParams params) {
        if (params.storeFormat() == DslStoreFormat.HEADERS) {
            return BloomKvStores.persistentSessionStoreWithHeaders(params.name(), params.retentionPeriod());
        }
        return BloomKvStores.persistentSessionStore(params.name(), params.retentionPeriod());
    }
}
