package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;

/**
 * Factory of bloomkv state-store suppliers, mirroring {@code org.apache.kafka.streams.state.Stores}:
 * where an application writes {@code Stores.persistentKeyValueStore("counts")}, it writes
 * {@code BloomKvStores.persistentKeyValueStore("counts")}; the builders ({@code Stores.keyValueStoreBuilder},
 * {@code Materialized.as(supplier)}) are Kafka's.
 *
 * <pre>{@code
 * builder.addStateStore(Stores.keyValueStoreBuilder(
 *         BloomKvStores.persistentKeyValueStore("counts"), Serdes.String(), Serdes.Long()));
 * }</pre>
 *
 * <p>To move every key-value store of a DSL application at once, set
 * {@code dsl.store.suppliers.class} to {@link BloomKvDslStoreSuppliers}.
 */
public final class BloomKvStores {
    private BloomKvStores() {}

    /** A persistent store with the engine's default {@link Options}. */
    public static KeyValueBytesStoreSupplier persistentKeyValueStore(String name) {
        return persistentKeyValueStore(name, Options.defaults());
    }

    /** A persistent store with {@code options} (copied; e.g. a shared block cache, filter bits, write buffer). */
    public static KeyValueBytesStoreSupplier persistentKeyValueStore(String name, Options options) {
        return new BloomKvKeyValueBytesStoreSupplier(name, options, DslStoreFormat.PLAIN);
    }

    /**
     * A persistent store whose values carry their timestamps ({@code TimestampedBytesStore}), for
     * {@code Stores.timestampedKeyValueStoreBuilder} and DSL KTables (as
     * {@code Stores.persistentTimestampedKeyValueStore}).
     */
    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStore(String name) {
        return persistentTimestampedKeyValueStore(name, Options.defaults());
    }

    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStore(String name, Options options) {
        return new BloomKvKeyValueBytesStoreSupplier(name, options, DslStoreFormat.TIMESTAMPED);
    }

    /** A persistent store in Kafka's timestamp-and-headers value format (as {@code Stores.persistentTimestampedKeyValueStoreWithHeaders}). */
    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStoreWithHeaders(String name) {
        return persistentTimestampedKeyValueStoreWithHeaders(name, Options.defaults());
    }

    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStoreWithHeaders(String name, Options options) {
        return new BloomKvKeyValueBytesStoreSupplier.Headers(name, options);
    }
}
