package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import org.apache.kafka.streams.state.TimestampedBytesStore;

/**
 * The store of DSL KTables and {@code Stores.timestampedKeyValueStoreBuilder}: its values carry the
 * record timestamp as an 8-byte big-endian prefix ({@link TimestampedBytesStore}), so Kafka Streams
 * neither wraps it in an adapter nor converts what it reads; on restore Kafka adds the changelog
 * record's timestamp to each value before it reaches the store (as for Kafka's built-in timestamped store). A new
 * store only: it does not upgrade a store written without timestamps.
 */
public class BloomKvTimestampedStore extends BloomKvStore implements TimestampedBytesStore {
    BloomKvTimestampedStore(String name, Options options) {
        super(name, options);
    }
}
