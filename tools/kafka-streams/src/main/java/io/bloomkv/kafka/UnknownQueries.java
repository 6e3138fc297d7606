package io.bloomkv.kafka;

import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;

/** The IQv2 answer of Kafka's header-format stores: unknown query type, with the store's position. */
final class UnknownQueries {
    private UnknownQueries() {}

    static <R> QueryResult<R> answer(StateStore store, Query<R> query, QueryConfig config, Position position) {
        long start = config.isCollectExecutionInfo() ? System.nanoTime() : -1L;
        synchronized (position) {
            QueryResult<R> result = QueryResult.forUnknownQueryType(query, store);
            if (config.isCollectExecutionInfo()) {
                result.addExecutionInfo("Handled in " + store.getClass() + " in " + (System.nanoTime() - start) + "ns");
            }
            result.setPosition(position.copy());
            return result;
        }
    }
}
