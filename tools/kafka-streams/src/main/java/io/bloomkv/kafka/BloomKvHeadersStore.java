package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import org.apache.kafka.streams.state.HeadersBytesStore;

/**
 * The store of DSL KTables when the application keeps record headers in its stores
 * ({@code DslStoreFormat.HEADERS}): values are in Kafka's timestamp-and-headers format
 * ({@link HeadersBytesStore}), which Kafka Streams writes and reads as is; on restore Kafka converts
 * changelog records to that format before they reach the store. A new store only (no upgrade of a
 * store written in another format).
 */
public class BloomKvHeadersStore extends BloomKvStore implements HeadersBytesStore {
    BloomKvHeadersStore(String name, Options options) {
        super(name, options);
    }
}
