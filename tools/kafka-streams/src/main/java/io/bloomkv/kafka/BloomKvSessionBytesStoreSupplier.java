package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionStore;

/**
 * Supplies bloomkv session stores of one name and retention (made by {@link BloomKvStores}, as Kafka's
 * persistent session store supplier, with its segment interval {@code max(retention / 2, 60 s)}); each
 * {@link #get()} is a new store (one per task). Metrics scope {@code bloomkv-session}.
 */
public class BloomKvSessionBytesStoreSupplier implements SessionBytesStoreSupplier {
    private final String name;
    private final long retentionPeriod;
    private final boolean withHeaders;
    private final Options options;

    BloomKvSessionBytesStoreSupplier(String name, long retentionPeriod, boolean withHeaders, Options options) {
        this.name = name;
        this.retentionPeriod = retentionPeriod;
        this.withHeaders = withHeaders;
        this.options = options == null ? BloomKvStores.defaultSegmentedOptions() : options.copy();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public SessionStore<Bytes, byte[]> get() {
        return withHeaders
                ? new BloomKvSessionStoreWithHeaders(name, retentionPeriod, segmentIntervalMs(), options)
                : new BloomKvSessionStore(name, retentionPeriod, segmentIntervalMs(), options);
    }

    @Override
    public String metricsScope() {
        return BloomKvSessionStore.METRICS_SCOPE;
    }

    /** Kafka's choice for session stores: {@code max(retention / 2, 60 000 ms)}. */
    @Override
    public long segmentIntervalMs() {
        return Math.max(retentionPeriod / 2, 60_000L);
    }

    @Override
    public long retentionPeriod() {
        return retentionPeriod;
    }

    /** The headers variant carries Kafka's supplier marker too (as Kafka's built-in headers session supplier). */
    static final class Headers extends BloomKvSessionBytesStoreSupplier
            implements org.apache.kafka.streams.state.HeadersBytesStoreSupplier {
        Headers(String name, long retentionPeriod, Options options) {
            super(name, retentionPeriod, true, options);
        }
    }
}
