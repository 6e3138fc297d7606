package io.bloomkv.kafka;

import java.util.Map;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.kstream.EmitStrategy;
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
 * (Kafka's built-in suppliers give it time-ordered stores): the session store answers the end-time range
 * {@code findSessions} those aggregations call in Kafka's time order; a sliding-window store scans closed windows in
 * time order; tumbling and hopping ones keep the key-ordered scans Kafka's caching layer expects; every one of these
 * window stores returns windows from the retention edge on, as Kafka's time-ordered window store
 * ({@link BloomKvWindowStore.Kind}). No store of Kafka's built-in persistent engine is created.
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
        // Windows emitting on close get stores answering as Kafka's time-ordered window store (which its DSL gives
        // them, uncached); sliding ones also scan closed windows by time. Every other window store is key-ordered, as
        // Kafka's caching layer expects.
        BloomKvWindowStore.Kind kind = params.emitStrategy().type() != EmitStrategy.StrategyType.ON_WINDOW_CLOSE
                ? BloomKvWindowStore.Kind.KEY_ORDERED
                : params.isSlidingWindow()
                        ? BloomKvWindowStore.Kind.EMIT_ON_CLOSE_SLIDING
                        : BloomKvWindowStore.Kind.EMIT_ON_CLOSE;
        return BloomKvStores.windowStore(
                params.name(),
                params.retentionPeriod(),
                params.windowSize(),
                params.retainDuplicates(),
                format,
                kind,
                BloomKvStores.defaultSegmentedOptions());
    }

    @Override
    public SessionBytesStoreSupplier sessionStore(DslSessionParams params) {
        if (params.storeFormat() == DslStoreFormat.HEADERS) {
            return BloomKvStores.persistentSessionStoreWithHeaders(params.name(), params.retentionPeriod());
        }
        return BloomKvStores.persistentSessionStore(params.name(), params.retentionPeriod());
    }
}
