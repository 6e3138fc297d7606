package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import org.apache.kafka.streams.state.TimestampedBytesStore;

/**
 * The window store of DSL windowed aggregations and {@code Stores.timestampedWindowStoreBuilder}: values carry
 * the record timestamp as an 8-byte big-endian prefix ({@link TimestampedBytesStore}), so Kafka Streams neither
 * wraps it in an adapter nor converts what it reads (as for Kafka's built-in timestamped window store). A new store
 * only: it does not upgrade a store written without timestamps.
 */
public class BloomKvTimestampedWindowStore extends BloomKvWindowStore implements TimestampedBytesStore {
    BloomKvTimestampedWindowStore(
            String name,
            long retentionPeriod,
            long segmentInterval,
            long windowSize,
            boolean retainDuplicates,
            BloomKvWindowStore.Kind kind,
            Options options) {
        super(name, retentionPeriod, segmentInterval, windowSize, retainDuplicates, kind, options);
    }
}
