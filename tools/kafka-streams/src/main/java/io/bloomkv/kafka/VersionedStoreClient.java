package io.bloomkv.kafka;

import org.apache.kafka.common.utils.Bytes;

/**
 * What the put procedure of {@link BloomKvVersionedStore} reads and writes, so that the same procedure runs on
 * the store itself (its writes gathered into one write batch per put) and, during restore, on a
 * {@link VersionedRestoreBuffer} that batches a whole changelog batch (Kafka's
 * {@code RocksDBVersionedStore.VersionedStoreClient}). The segments themselves are the store's live segments
 * ({@link VersionedSegments}); a client decides where their rows are read from and written to. A row written by a
 * client is read back by it from then on (read-your-writes), before it reaches the database.
 */
interface VersionedStoreClient {
    /** The latest-value row of {@code key} (timestamp + value), or null. */
    byte[] latestValue(Bytes key);

    void putLatestValue(Bytes key, byte[] value);

    void deleteLatestValue(Bytes key);

    /** The segment with this id, or null when it is older than the history retention at {@code streamTime}. */
    VersionedSegment getOrCreateSegmentIfLive(long segmentId, long streamTime);

    /** The row of {@code key} in {@code segment}, or null. */
    byte[] get(VersionedSegment segment, Bytes key);

    /** Sets the row of {@code key} in {@code segment}. */
    void put(VersionedSegment segment, Bytes key, byte[] row);
}
