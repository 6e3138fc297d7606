package io.bloomkv.kafka;

import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;

/**
 * What the window and session stores share: the {@link StateStore} life cycle over one {@link SegmentedStore}
 * (init, flush, commit, close, position, IQv2 dispatch through Kafka's {@code StoreQueryUtils}), as Kafka's
 * window and session stores share its {@code AbstractRocksDBSegmentedBytesStore}. A commit syncs the
 * write-ahead log and checkpoints the position, as {@code flush} does: these stores leave their changelog offsets to
 * Kafka's checkpoint file ({@code managesOffsets() == false}, as Kafka's segmented stores).
 */
abstract class SegmentedBytesStoreBase implements StateStore {
    final SegmentedStore bytes;
    private StateStoreContext context;

    SegmentedBytesStoreBase(SegmentedStore bytes) {
        this.bytes = bytes;
    }

    @Override
    public String name() {
        return bytes.name();
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        bytes.init(context, root);
        this.context = context;
    }

    @Override
    public void flush() {
        bytes.flush();
    }

    @Override
    public void commit(Map<TopicPartition, Long> changelogOffsets) {
        bytes.flush();
    }

    @Override
    public void close() {
        bytes.close();
    }

    @Override
    public boolean persistent() {
        return true;
    }

    @Override
    public boolean isOpen() {
        return bytes.isOpen();
    }

    /** IQv2: the window queries Kafka's {@code StoreQueryUtils} handles for this store kind, checked against the bound. */
    @Override
    public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
        return StoreQueryUtils.handleBasicQueries(query, positionBound, config, this, getPosition(), context);
    }

    @Override
    public Position getPosition() {
        return bytes.position();
    }

    /** The store's one database (tests); null when closed. */
    io.bloomkv.engine.Db db() {
        return bytes.db();
    }

    /** Waits for the table deletions expiry submitted (tests). */
    void awaitExpiryDeletions() {
        bytes.awaitExpiryDeletions();
    }

    /** Range tombstones expiry wrote since open (tests). */
    long expiryRangeDeletes() {
        return bytes.expiryRangeDeletes();
    }

    /** Tables expiry removed since open (tests). */
    long expiryTablesDeleted() {
        return bytes.expiryTablesDeleted();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + name() + (isOpen() ? ", open" : ", closed") + "]";
    }
}
