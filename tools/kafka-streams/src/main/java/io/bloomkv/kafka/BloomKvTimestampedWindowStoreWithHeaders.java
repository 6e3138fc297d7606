package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.HeadersBytesStore;
import org.apache.kafka.streams.state.TimestampedBytesStore;

/**
 * The window store of applications that keep record headers in their stores ({@code DslStoreFormat.HEADERS},
 * {@code Stores.timestampedWindowStoreWithHeadersBuilder}): values are in Kafka's timestamp-and-headers format,
 * which Kafka Streams writes and reads as is (as Kafka's built-in timestamped window store with headers). As Kafka's,
 * it answers no IQv2 query at this layer (every query gets an unknown-query-type result with the position).
 */
public class BloomKvTimestampedWindowStoreWithHeaders extends BloomKvWindowStore
        implements TimestampedBytesStore, HeadersBytesStore {
    BloomKvTimestampedWindowStoreWithHeaders(
            String name,
            long retentionPeriod,
            long segmentInterval,
            long windowSize,
            boolean retainDuplicates,
            BloomKvWindowStore.Kind kind,
            Options options) {
        super(name, retentionPeriod, segmentInterval, windowSize, retainDuplicates, kind, options);
    }

    @Override
    public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
        return UnknownQueries.answer(this, query, config, getPosition());
    }
}
