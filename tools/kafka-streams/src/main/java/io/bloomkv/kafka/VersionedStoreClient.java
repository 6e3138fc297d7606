package io.bloomkv.kafka;

import java.util.List;
import org.apache.kafka.common.utils.Bytes;

/**
 * What the put procedure of {@link BloomKvVersionedStore} reads and writes, so that the same procedure runs on
 * the store itself and, during restore, on a {@link VersionedRestoreBuffer} that batches the writes (Kafka's
 * {@code RocksDBVersionedStore.VersionedStoreClient}).
 */
interface VersionedStoreClient {
    /** One segment as the put procedure sees it. */
    interface Segment {
        long id();

        byte[] get(Bytes key);

        void put(Bytes key, byte[] value);
    }

    /** The latest-value row of {@code key} (timestamp + value), or null. */
    byte[] latestValue(Bytes key);

    void putLatestValue(Bytes key, byte[] value);

    void deleteLatestValue(Bytes key);

    /** The segment with this id, or null when it is older than the history retention at {@code streamTime}. */
    Segment getOrCreateSegmentIfLive(long segmentId, long streamTime);

    /**
     * The segments holding timestamps in {@code [timestampFrom, timestampTo]} (their ids from
     * {@code segmentIdForTimestamp(timestampFrom)} to {@code segmentIdForTimestamp(timestampTo)}), newest first.
     */
    List<? extends Segment> reversedSegments(long timestampFrom, long timestampTo);

    long segmentIdForTimestamp(long timestamp);
}
