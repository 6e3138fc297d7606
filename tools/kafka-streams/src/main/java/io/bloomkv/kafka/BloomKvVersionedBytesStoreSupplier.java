package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import java.util.Objects;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.VersionedKeyValueToBytesStoreAdapter;

/**
 * Supplies bloomkv versioned stores of one name (made by {@link BloomKvStores#persistentVersionedKeyValueStore});
 * each {@link #get()} is a new {@link BloomKvVersionedStore} (one per task) in Kafka's bytes adapter, as
 * {@code RocksDbVersionedKeyValueBytesStoreSupplier} hands its store out, so that
 * {@code Stores.versionedKeyValueStoreBuilder} and {@code Materialized.as(supplier)} take it as they take Kafka's.
 */
public class BloomKvVersionedBytesStoreSupplier implements VersionedBytesStoreSupplier {
    private final String name;
    private final long historyRetentionMs;
    private final long segmentIntervalMs;
    private final Options options;

    BloomKvVersionedBytesStoreSupplier(String name, long historyRetentionMs, long segmentIntervalMs, Options options) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        this.historyRetentionMs = historyRetentionMs;
        this.segmentIntervalMs = segmentIntervalMs;
        this.options = options == null ? BloomKvStores.defaultKeyValueOptions() : options.copy();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long historyRetentionMs() {
        return historyRetentionMs;
    }

    public long segmentIntervalMs() {
        return segmentIntervalMs;
    }

    @Override
    public KeyValueStore<Bytes, byte[]> get() {
        return new VersionedKeyValueToBytesStoreAdapter(
                new BloomKvVersionedStore(name, historyRetentionMs, segmentIntervalMs, options));
    }

    @Override
    public String metricsScope() {
        return BloomKvStore.METRICS_SCOPE;
    }

    /**
     * Kafka's default segment interval for a history retention (RocksDbVersionedKeyValueBytesStoreSupplier): a
     * third of it up to one minute (at least 2 s), a fifth up to five minutes (at least 20 s), a twelfth up to an
     * hour (at least 1 min), else a twenty-fourth (at least 5 min).
     */
    static long defaultSegmentInterval(long historyRetentionMs) {
        if (historyRetentionMs <= 60_000L) {
            return Math.max(historyRetentionMs / 3, 2_000L);
        } else if (historyRetentionMs <= 300_000L) {
            return Math.max(historyRetentionMs / 5, 20_000L);
        } else if (historyRetentionMs <= 3600_000L) {
            return Math.max(historyRetentionMs / 12, 60_000L);
        } else {
            return Math.max(historyRetentionMs / 24, 300_000L);
        }
    }
}
