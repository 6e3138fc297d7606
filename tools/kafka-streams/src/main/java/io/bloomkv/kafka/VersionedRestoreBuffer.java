package io.bloomkv.kafka;

import io.bloomkv.engine.WriteBatch;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.common.utils.Bytes;

/**
 * Buffers the writes of one restored changelog batch of a {@link BloomKvVersionedStore} in memory (reads fall
 * through to the database), then writes them as one WriteBatch: segments oldest first, the latest values last, the
 * order a put writes in (Kafka's {@code RocksDBVersionedStoreRestoreWriteBuffer}). A batch that rewrites a hot key's
 * row many times writes it once. Not thread-safe: used under the store's lock.
 */
final class VersionedRestoreBuffer {
    /** A deleted latest value in {@link #latest} (rows and latest values are never empty arrays). */
    private static final byte[] DELETED = new byte[0];

    private final VersionedSegments segments;
    private final Consumer<WriteBatch> writer;
    /** Latest-value writes in the order made; {@link #DELETED} is a delete. */
    private final Map<Bytes, byte[]> latest = new LinkedHashMap<>();
    /** Segment rows by segment id. */
    private final TreeMap<Long, Rows> rows = new TreeMap<>();

    private final Client client = new Client();

    /** {@code writer} writes a batch to the store's database (every segment and the latest values are key ranges of it). */
    VersionedRestoreBuffer(VersionedSegments segments, Consumer<WriteBatch> writer) {
        this.segments = segments;
        this.writer = writer;
    }

    VersionedStoreClient client() {
        return client;
    }

    /**
     * Writes the buffered rows (older segments first, then the latest values) as one WriteBatch, atomically, and
     * empties the buffer.
     */
    void flush() {
        WriteBatch batch = new WriteBatch();
        byte[] scratch = null;
        for (Rows r : rows.values()) {
            if (!r.segment.isOpen()) {
                continue; // expired and dropped during the batch: its rows are past the retention
            }
            for (Map.Entry<Bytes, byte[]> e : r.rows.entrySet()) {
                scratch = r.segment.addTo(batch, e.getKey(), e.getValue(), scratch);
            }
        }
        rows.clear();
        VersionedSegment l = segments.latest();
        for (Map.Entry<Bytes, byte[]> e : latest.entrySet()) {
            byte[] v = e.getValue();
            scratch = l.addTo(batch, e.getKey(), v == DELETED ? null : v, scratch);
        }
        latest.clear();
        writer.accept(batch);
    }

    /** The buffered rows of one segment. */
    private static final class Rows {
        final VersionedSegment segment;
        final Map<Bytes, byte[]> rows = new HashMap<>();

        Rows(VersionedSegment segment) {
            this.segment = segment;
        }
    }

    private final class Client implements VersionedStoreClient {
        @Override
        public byte[] latestValue(Bytes key) {
            byte[] v = latest.get(key);
            if (v != null) {
                return v == DELETED ? null : v;
            }
            return segments.latest().get(key);
        }

        @Override
        public void putLatestValue(Bytes key, byte[] value) {
            latest.put(key, value);
        }

        @Override
        public void deleteLatestValue(Bytes key) {
            latest.put(key, DELETED);
        }

        @Override
        public VersionedSegment getOrCreateSegmentIfLive(long segmentId, long streamTime) {
            return segments.getOrCreateSegmentIfLive(segmentId, streamTime);
        }

        @Override
        public byte[] get(VersionedSegment segment, Bytes key) {
            Rows r = rows.get(segment.id());
            byte[] v = r == null || r.segment != segment ? null : r.rows.get(key);
            return v != null ? v : segment.get(key);
        }

        @Override
        public void put(VersionedSegment segment, Bytes key, byte[] row) {
            Rows r = rows.get(segment.id());
            if (r == null || r.segment != segment) {
                r = new Rows(segment);
                rows.put(segment.id(), r);
            }
            r.rows.put(key, row);
        }
    }
}
