package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.HeadersBytesStore;

/**
 * The session store of applications that keep record headers in their stores ({@code DslStoreFormat.HEADERS},
 * {@code Stores.sessionStoreWithHeadersBuilder}): aggregates are in Kafka's aggregation-with-headers format, which
 * Kafka Streams writes and reads as is (as Kafka's built-in session store with headers). As Kafka's, it answers no IQv2
 * query at this layer (unknown query type, with the position).
 */
public class BloomKvSessionStoreWithHeaders extends BloomKvSessionStore implements HeadersBytesStore {
    BloomKvSessionStoreWithHeaders(String name, long retentionPeriod, long segmentInterval, Options options) {
        super(name, retentionPeriod, segmentInterval, options);
    }

    @Override
    public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
        return UnknownQueries.answer(this, query, config, getPosition());
    }
}
