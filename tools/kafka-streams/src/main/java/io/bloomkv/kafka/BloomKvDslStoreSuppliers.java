package io.bloomkv.kafka;

import java.util.Map;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.DslSessionParams;
import org.apache.kafka.streams.state.DslStoreSuppliers;
import org.apache.kafka.streams.state.DslWindowParams;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * Moves a DSL application's key-value stores (KTables, aggregations, joins' tables) onto bloomkv with
 * one config line:
 *
 * <pre>{@code
 * props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, BloomKvDslStoreSuppliers.class);
 * }</pre>
 *
 * Key-value stores get the bloomkv store of the requested value format (plain, timestamped, or
 * timestamped with headers). Window and session stores are segmented stores bloomkv does not
 * provide: they stay on Kafka's built-in RocksDB suppliers.
 */
public class BloomKvDslStoreSuppliers implements DslStoreSuppliers {
    private final DslStoreSuppliers rocksDb = new BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers();

    @Override
    public void configure(Map<String, ?> configs) {
        rocksDb.configure(configs);
    }

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
        return rocksDb.windowStore(params);
    }

    @Override
    public SessionBytesStoreSupplier sessionStore(DslSessionParams params) {
        return rocksDb.sessionStore(params);
    }
}
