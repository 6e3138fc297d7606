package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Supplies bloomkv window stores of one name, retention, segment interval, window size and value format
 * (made by {@link BloomKvStores}, as Kafka's persistent window store supplier); each {@link #get()} is a
 * new store (one per task). Metrics scope {@code bloomkv-window}.
 */
public class BloomKvWindowBytesStoreSupplier implements WindowBytesStoreSupplier {
    private final String name;
    private final long retentionPeriod;
    private final long segmentInterval;
    private final long windowSize;
    private final boolean retainDuplicates;
    private final DslStoreFormat format;
    private final Options options;
    private final BloomKvWindowStore.Kind kind;

    BloomKvWindowBytesStoreSupplier(
            String name,
            long retentionPeriod,
            long segmentInterval,
            long windowSize,
            boolean retainDuplicates,
            DslStoreFormat format,
            Options options) {
        this(
                name,
                retentionPeriod,
                segmentInterval,
                windowSize,
                retainDuplicates,
                format,
                BloomKvWindowStore.Kind.KEY_ORDERED,
                options);
    }

    /** {@code kind}: see {@link BloomKvWindowStore.Kind} (the stores of emit-on-window-close aggregations). */
    BloomKvWindowBytesStoreSupplier(
            String name,
            long retentionPeriod,
            long segmentInterval,
            long windowSize,
            boolean retainDuplicates,
            DslStoreFormat format,
            BloomKvWindowStore.Kind kind,
            Options options) {
        this.kind = kind;
        this.name = name;
        this.retentionPeriod = retentionPeriod;
        this.segmentInterval = segmentInterval;
        this.windowSize = windowSize;
        this.retainDuplicates = retainDuplicates;
        this.format = format;
        this.options = options == null ? BloomKvStores.defaultSegmentedOptions() : options.copy();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public WindowStore<Bytes, byte[]> get() {
        return switch (format) {
            case PLAIN ->
                new BloomKvWindowStore(
                        name, retentionPeriod, segmentInterval, windowSize, retainDuplicates, kind, options);
            case TIMESTAMPED ->
                new BloomKvTimestampedWindowStore(
                        name, retentionPeriod, segmentInterval, windowSize, retainDuplicates, kind, options);
            case HEADERS ->
                new BloomKvTimestampedWindowStoreWithHeaders(
                        name, retentionPeriod, segmentInterval, windowSize, retainDuplicates, kind, options);
        };
    }

    @Override
    public String metricsScope() {
        return BloomKvWindowStore.METRICS_SCOPE;
    }

    @Override
    public long segmentIntervalMs() {
        return segmentInterval;
    }

    @Override
    public long windowSize() {
        return windowSize;
    }

    @Override
    public boolean retainDuplicates() {
        return retainDuplicates;
    }

    @Override
    public long retentionPeriod() {
        return retentionPeriod;
    }

    /** The value format of the stores it makes. */
    public DslStoreFormat format() {
        return format;
    }

    @Override
    public String toString() {
        return "BloomKvWindowBytesStoreSupplier{name='" + name + "', retentionPeriod=" + retentionPeriod
                + ", segmentInterval=" + segmentInterval + ", windowSize=" + windowSize + ", retainDuplicates="
                + retainDuplicates + ", format=" + format + "}";
    }

    /** The headers variant carries Kafka's supplier marker too (as Kafka's built-in headers window supplier). */
    static final class Headers extends BloomKvWindowBytesStoreSupplier
            implements org.apache.kafka.streams.state.HeadersBytesStoreSupplier {
        Headers(
                String name,
                long retentionPeriod,
                long segmentInterval,
                long windowSize,
                boolean retainDuplicates,
                BloomKvWindowStore.Kind kind,
                Options options) {
            super(
                    name,
                    retentionPeriod,
                    segmentInterval,
                    windowSize,
                    retainDuplicates,
                    DslStoreFormat.HEADERS,
                    kind,
                    options);
        }
    }
}
