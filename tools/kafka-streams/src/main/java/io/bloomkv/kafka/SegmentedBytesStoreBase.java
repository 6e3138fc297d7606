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
 * window and session stores share its {@code AbstractRocksDBSegmentedBytesStore}. These stores manage their changelog
 * offsets ({@code managesOffsets() == true}, as Kafka 4.3's segmented stores): a commit writes them and the position
 * as records of the store's database, no fsync ({@link SegmentedStore}); {@code flush} writes the memtable to a table.
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
        bytes.commit(changelogOffsets);
    }

    /** The store keeps its changelog offsets itself (in its database), as Kafka 4.3's segmented stores do. */
    @Deprecated
    @Override
    public boolean managesOffsets() {
        return true;
    }

    @Override
    public Long committedOffset(TopicPartition partition) {
        return bytes.committedOffset(partition);
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

    /** Expired ranges whose table removal waits for the engine's next flush (tests). */
    int pendingRemovals() {
        return bytes.pendingRemovals();
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
