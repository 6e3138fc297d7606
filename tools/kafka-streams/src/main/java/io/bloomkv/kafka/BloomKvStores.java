package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import java.time.Duration;
import java.util.Objects;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.internals.ApiUtils;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

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

    /** Memtable bytes of a store by default: Kafka's built-in persistent store uses 16 MiB write buffers. */
    public static final long DEFAULT_WRITE_BUFFER_BYTES = 16L << 20;

    /**
     * The options the stores' defaults are built on, with a write-ahead log: the engine's defaults with a
     * {@link #DEFAULT_WRITE_BUFFER_BYTES} memtable and {@code manualWalFlush} (the log's buffer is written out when it
     * fills, at a memtable switch and at close; a commit syncs nothing: offsets and data share the log, so a crash
     * leaves them consistent and Kafka restores the rest from the changelog). The stores made without options run
     * without a WAL ({@link #defaultKeyValueOptions()}), as Kafka's RocksDB stores do.
     */
    public static Options defaultOptions() {
        return Options.defaults().writeBufferSize(DEFAULT_WRITE_BUFFER_BYTES).manualWalFlush(true);
    }

    /**
     * The options of the key-value and versioned stores made without options: {@link #defaultOptions()} with
     * {@code Options.disableWal}, as Kafka's RocksDB stores write with {@code WriteOptions.setDisableWAL(true)}: the
     * changelog topic is what a crash is restored from. These stores keep their committed offsets in their database
     * beside the data, so they reach disk together (a commit is a write of a few records, no fsync). A store given
     * options with a WAL works the same, and writes every record to its WAL as well.
     */
    public static Options defaultKeyValueOptions() {
        return defaultOptions().disableWal(true);
    }

    /**
     * The options of the window and session stores made without options (and of the DSL's, through
     * {@link BloomKvDslStoreSuppliers}): {@link #defaultKeyValueOptions()}, no write-ahead log. Like the key-value
     * stores, they keep their committed offsets and IQv2 position as records of their database, so data and offsets
     * reach disk together and a restore writes each changelog record once (to the memtable). A store given options
     * with a WAL works the same, and writes every record to its WAL as well. No memtable filter
     * ({@code Options.memtableFilterBitsPerKey(0)}): the memtable's point index already answers a get for a key it
     * does not hold with one hash probe, and the filter cost a probe per insert and a full-size bit array per
     * memtable (Kafka's RocksDB window and session stores have none either).
     */
    public static Options defaultSegmentedOptions() {
        return defaultKeyValueOptions().memtableFilterBitsPerKey(0);
    }

    /** A persistent store with {@link #defaultKeyValueOptions()}. */
    public static KeyValueBytesStoreSupplier persistentKeyValueStore(String name) {
        return persistentKeyValueStore(name, defaultKeyValueOptions());
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
        return persistentTimestampedKeyValueStore(name, defaultKeyValueOptions());
    }

    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStore(String name, Options options) {
        return new BloomKvKeyValueBytesStoreSupplier(name, options, DslStoreFormat.TIMESTAMPED);
    }

    /** A persistent store in Kafka's timestamp-and-headers value format (as {@code Stores.persistentTimestampedKeyValueStoreWithHeaders}). */
    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStoreWithHeaders(String name) {
        return persistentTimestampedKeyValueStoreWithHeaders(name, defaultKeyValueOptions());
    }

    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStoreWithHeaders(
            String name, Options options) {
        return new BloomKvKeyValueBytesStoreSupplier.Headers(name, options);
    }

    // ------------------------------------------------------------------ window stores

    /**
     * A persistent window store (as {@code Stores.persistentWindowStore}): windows of {@code windowSize}
     * kept for {@code retentionPeriod}, in segments of {@code max(retention / 2, 60 s)} (key ranges of the store's
     * one bloomkv database); with {@code retainDuplicates} every put is kept (windowed joins). The same checks and
     * exceptions as Kafka's:
     *
     * @throws NullPointerException if {@code name} is null ("name cannot be null")
     * @throws IllegalArgumentException if a duration is null or overflows milliseconds, either is negative, or
     *     {@code windowSize > retentionPeriod}
     */
    public static WindowBytesStoreSupplier persistentWindowStore(
            String name, Duration retentionPeriod, Duration windowSize, boolean retainDuplicates)
            throws IllegalArgumentException {
        return persistentWindowStore(name, retentionPeriod, windowSize, retainDuplicates, defaultSegmentedOptions());
    }

    /** {@link #persistentWindowStore(String, Duration, Duration, boolean)} with {@code options} (copied) for each segment. */
    public static WindowBytesStoreSupplier persistentWindowStore(
            String name, Duration retentionPeriod, Duration windowSize, boolean retainDuplicates, Options options)
            throws IllegalArgumentException {
        return windowStore(
                name,
                retentionPeriod,
                windowSize,
                retainDuplicates,
                DslStoreFormat.PLAIN,
                BloomKvWindowStore.Kind.KEY_ORDERED,
                options);
    }

    /**
     * A persistent window store whose values carry their timestamps ({@code TimestampedBytesStore}), for
     * {@code Stores.timestampedWindowStoreBuilder} and DSL windowed aggregations (as
     * {@code Stores.persistentTimestampedWindowStore}); checks as {@link #persistentWindowStore}.
     */
    public static WindowBytesStoreSupplier persistentTimestampedWindowStore(
            String name, Duration retentionPeriod, Duration windowSize, boolean retainDuplicates)
            throws IllegalArgumentException {
        return persistentTimestampedWindowStore(
                name, retentionPeriod, windowSize, retainDuplicates, defaultSegmentedOptions());
    }

    public static WindowBytesStoreSupplier persistentTimestampedWindowStore(
            String name, Duration retentionPeriod, Duration windowSize, boolean retainDuplicates, Options options)
            throws IllegalArgumentException {
        return windowStore(
                name,
                retentionPeriod,
                windowSize,
                retainDuplicates,
                DslStoreFormat.TIMESTAMPED,
                BloomKvWindowStore.Kind.KEY_ORDERED,
                options);
    }

    /**
     * A persistent window store in Kafka's timestamp-and-headers value format (as
     * {@code Stores.persistentTimestampedWindowStoreWithHeaders}); checks as {@link #persistentWindowStore}.
     */
    public static WindowBytesStoreSupplier persistentTimestampedWindowStoreWithHeaders(
            String name, Duration retentionPeriod, Duration windowSize, boolean retainDuplicates)
            throws IllegalArgumentException {
        return persistentTimestampedWindowStoreWithHeaders(
                name, retentionPeriod, windowSize, retainDuplicates, defaultSegmentedOptions());
    }

    public static WindowBytesStoreSupplier persistentTimestampedWindowStoreWithHeaders(
            String name, Duration retentionPeriod, Duration windowSize, boolean retainDuplicates, Options options)
            throws IllegalArgumentException {
        return windowStore(
                name,
                retentionPeriod,
                windowSize,
                retainDuplicates,
                DslStoreFormat.HEADERS,
                BloomKvWindowStore.Kind.KEY_ORDERED,
                options);
    }

    /**
     * Kafka's checks, in Kafka's order, with its messages ({@code Stores.persistentWindowStore}); {@code kind} for the
     * DSL's emit-on-window-close stores (see {@link BloomKvWindowStore.Kind}).
     */
    static WindowBytesStoreSupplier windowStore(
            String name,
            Duration retentionPeriod,
            Duration windowSize,
            boolean retainDuplicates,
            DslStoreFormat format,
            BloomKvWindowStore.Kind kind,
            Options options) {
        Objects.requireNonNull(name, "name cannot be null");
        String rpMsgPrefix = ApiUtils.prepareMillisCheckFailMsgPrefix(retentionPeriod, "retentionPeriod");
        long retentionMs = ApiUtils.validateMillisecondDuration(retentionPeriod, rpMsgPrefix);
        String wsMsgPrefix = ApiUtils.prepareMillisCheckFailMsgPrefix(windowSize, "windowSize");
        long windowSizeMs = ApiUtils.validateMillisecondDuration(windowSize, wsMsgPrefix);
        long defaultSegmentInterval = Math.max(retentionMs / 2, 60_000L);
        if (retentionMs < 0L) {
            throw new IllegalArgumentException("retentionPeriod cannot be negative");
        }
        if (windowSizeMs < 0L) {
            throw new IllegalArgumentException("windowSize cannot be negative");
        }
        if (windowSizeMs > retentionMs) {
            throw new IllegalArgumentException("The retention period of the window store " + name
                    + " must be no smaller than its window size. Got size=[" + windowSize + "], retention=["
                    + retentionPeriod + "]");
        }
        if (format == DslStoreFormat.HEADERS) {
            return new BloomKvWindowBytesStoreSupplier.Headers(
                    name, retentionMs, defaultSegmentInterval, windowSizeMs, retainDuplicates, kind, options);
        }
        return new BloomKvWindowBytesStoreSupplier(
                name, retentionMs, defaultSegmentInterval, windowSizeMs, retainDuplicates, format, kind, options);
    }

    // ------------------------------------------------------------------ session stores

    /**
     * A persistent session store (as {@code Stores.persistentSessionStore}): sessions kept for
     * {@code retentionPeriod} after their end, in segments of {@code max(retention / 2, 60 s)} (key ranges of the
     * store's one bloomkv database).
     *
     * @throws NullPointerException if {@code name} is null ("name cannot be null")
     * @throws IllegalArgumentException if {@code retentionPeriod} is null, overflows milliseconds or is negative
     */
    public static SessionBytesStoreSupplier persistentSessionStore(String name, Duration retentionPeriod) {
        return persistentSessionStore(name, retentionPeriod, defaultSegmentedOptions());
    }

    /** {@link #persistentSessionStore(String, Duration)} with {@code options} (copied) for each segment. */
    public static SessionBytesStoreSupplier persistentSessionStore(
            String name, Duration retentionPeriod, Options options) {
        return sessionStore(name, retentionPeriod, false, options);
    }

    /** A persistent session store in Kafka's aggregation-with-headers format (as {@code Stores.persistentSessionStoreWithHeaders}). */
    public static SessionBytesStoreSupplier persistentSessionStoreWithHeaders(String name, Duration retentionPeriod) {
        return persistentSessionStoreWithHeaders(name, retentionPeriod, defaultSegmentedOptions());
    }

    public static SessionBytesStoreSupplier persistentSessionStoreWithHeaders(
            String name, Duration retentionPeriod, Options options) {
        return sessionStore(name, retentionPeriod, true, options);
    }

    private static SessionBytesStoreSupplier sessionStore(
            String name, Duration retentionPeriod, boolean withHeaders, Options options) {
        Objects.requireNonNull(name, "name cannot be null");
        String msgPrefix = ApiUtils.prepareMillisCheckFailMsgPrefix(retentionPeriod, "retentionPeriod");
        long retentionPeriodMs = ApiUtils.validateMillisecondDuration(retentionPeriod, msgPrefix);
        if (retentionPeriodMs < 0) {
            throw new IllegalArgumentException("retentionPeriod cannot be negative");
        }
        return withHeaders
                ? new BloomKvSessionBytesStoreSupplier.Headers(name, retentionPeriodMs, options)
                : new BloomKvSessionBytesStoreSupplier(name, retentionPeriodMs, false, options);
    }

    /**
     * A persistent versioned store ({@code VersionedKeyValueStore}) keeping old versions for {@code historyRetention}
     * (also the grace period of out-of-order writes), with Kafka's default segment interval for it and
     * {@link #defaultKeyValueOptions()} (no WAL, as Kafka's store); the counterpart of
     * {@code Stores.persistentVersionedKeyValueStore(name, historyRetention)}, with the same argument checks.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code historyRetention} is null, negative or not representable in milliseconds
     */
    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(String name, Duration historyRetention) {
        return persistentVersionedKeyValueStore(name, historyRetention, defaultKeyValueOptions());
    }

    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(
            String name, Duration historyRetention, Options options) {
        Objects.requireNonNull(name, "name cannot be null");
        long historyRetentionMs = historyRetentionMs(historyRetention);
        return new BloomKvVersionedBytesStoreSupplier(
                name,
                historyRetentionMs,
                BloomKvVersionedBytesStoreSupplier.defaultSegmentInterval(historyRetentionMs),
                options);
    }

    /**
     * As {@link #persistentVersionedKeyValueStore(String, Duration)} with old versions kept in segments of
     * {@code segmentInterval} (each segment a key range of the store's database, dropped whole when it expires); the counterpart of
     * {@code Stores.persistentVersionedKeyValueStore(name, historyRetention, segmentInterval)}.
     *
     * @throws IllegalArgumentException also if {@code segmentInterval} is null, zero, negative or not representable in milliseconds
     */
    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(
            String name, Duration historyRetention, Duration segmentInterval) {
        return persistentVersionedKeyValueStore(name, historyRetention, segmentInterval, defaultKeyValueOptions());
    }

    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(
            String name, Duration historyRetention, Duration segmentInterval, Options options) {
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
