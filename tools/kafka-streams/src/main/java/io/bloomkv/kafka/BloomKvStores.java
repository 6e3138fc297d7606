package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import java.time.Duration;
import java.util.Objects;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.internals.ApiUtils;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;

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

    /** Memtable bytes of a store by default: Kafka's RocksDB store uses 16 MiB write buffers. */
    public static final long DEFAULT_WRITE_BUFFER_BYTES = 16L << 20;

    /**
     * The options of the stores made without options: the engine's defaults with a {@link #DEFAULT_WRITE_BUFFER_BYTES}
     * memtable and {@code manualWalFlush} (the store syncs its WAL at every commit, as Kafka expects; Kafka's RocksDB
     * store runs without a WAL and flushes its memtable instead).
     */
    public static Options defaultOptions() {
        return Options.defaults().writeBufferSize(DEFAULT_WRITE_BUFFER_BYTES).manualWalFlush(true);
    }

    /** A persistent store with {@link #defaultOptions()}. */
    public static KeyValueBytesStoreSupplier persistentKeyValueStore(String name) {
        return persistentKeyValueStore(name, defaultOptions());
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
        return persistentTimestampedKeyValueStore(name, defaultOptions());
    }

    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStore(String name, Options options) {
        return new BloomKvKeyValueBytesStoreSupplier(name, options, DslStoreFormat.TIMESTAMPED);
    }

    /** A persistent store in Kafka's timestamp-and-headers value format (as {@code Stores.persistentTimestampedKeyValueStoreWithHeaders}). */
    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStoreWithHeaders(String name) {
        return persistentTimestampedKeyValueStoreWithHeaders(name, defaultOptions());
    }

    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStoreWithHeaders(String name, Options options) {
        return new BloomKvKeyValueBytesStoreSupplier.Headers(name, options);
    }

    /**
     * A persistent versioned store ({@code VersionedKeyValueStore}) keeping old versions for {@code historyRetention}
     * (also the grace period of out-of-order writes), with Kafka's default segment interval for it; the counterpart
     * of {@code Stores.persistentVersionedKeyValueStore(name, historyRetention)}, with the same argument checks.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code historyRetention} is null, negative or not representable in milliseconds
     */
    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(String name, Duration historyRetention) {
        return persistentVersionedKeyValueStore(name, historyRetention, defaultOptions());
    }

    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(String name, Duration historyRetention, Options options) {
        Objects.requireNonNull(name, "name cannot be null");
        long historyRetentionMs = historyRetentionMs(historyRetention);
        return new BloomKvVersionedBytesStoreSupplier(name, historyRetentionMs,
                BloomKvVersionedBytesStoreSupplier.defaultSegmentInterval(historyRetentionMs), options);
    }

    /**
     * As {@link #persistentVersionedKeyValueStore(String, Duration)} with old versions kept in segments of
     * {@code segmentInterval} (each segment one database, dropped whole when it expires); the counterpart of
     * {@code Stores.persistentVersionedKeyValueStore(name, historyRetention, segmentInterval)}.
     *
     * @throws IllegalArgumentException also if {@code segmentInterval} is null, zero, negative or not representable in milliseconds
     */
    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(String name, Duration historyRetention,
            Duration segmentInterval) {
        return persistentVersionedKeyValueStore(name, historyRetention, segmentInterval, defaultOptions());
    }

    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(String name, Duration historyRetention,
            Duration segmentInterval, Options options) {
        Objects.requireNonNull(name, "name cannot be null");
        long historyRetentionMs = historyRetentionMs(historyRetention);
        String siMsgPrefix = ApiUtils.prepareMillisCheckFailMsgPrefix(segmentInterval, "segmentInterval");
        long segmentIntervalMs = ApiUtils.validateMillisecondDuration(segmentInterval, siMsgPrefix);
        if (segmentIntervalMs < 1L) {
            throw new IllegalArgumentException("segmentInterval cannot be zero or negative");
        }
        return new BloomKvVersionedBytesStoreSupplier(name, historyRetentionMs, segmentIntervalMs, options);
    }

    private static long historyRetentionMs(Duration historyRetention) {
        String hrMsgPrefix = ApiUtils.prepareMillisCheckFailMsgPrefix(historyRetention, "historyRetention");
        long ms = ApiUtils.validateMillisecondDuration(historyRetention, hrMsgPrefix);
        if (ms < 0L) {
            throw new IllegalArgumentException("historyRetention cannot be negative");
        }
        return ms;
    }
}
