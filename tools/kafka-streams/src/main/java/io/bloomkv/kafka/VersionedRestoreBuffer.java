package io.bloomkv.kafka;

import io.bloomkv.engine.WriteBatch;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;

/**
 * Buffers the writes of one restored changelog batch of a {@link BloomKvVersionedStore} in memory (reads fall
 * through to the database), then writes them as one WriteBatch: segments oldest first, the latest values last, the order a put writes in (Kafka's {@code RocksDBVersionedStoreRestoreWriteBuffer}). A batch that
 * rewrites a hot key's row many times writes it once.
 */
final class VersionedRestoreBuffer {
    private final VersionedStoreClient store;
    private final java.util.function.Supplier<VersionedSegment> latestAccess;
    private final java.util.function.Consumer<WriteBatch> writer;
    /** Latest-value writes; an empty Optional is a delete. */
    private final Map<Bytes, Optional<byte[]>> latest = new LinkedHashMap<>();
    /** Segment buffers by id, newest first. */
    private final TreeMap<Long, BufferedSegment> buffered = new TreeMap<>(Comparator.reverseOrder());

    private final Client client = new Client();

    /** {@code writer} writes a batch to the store's database (every segment and the latest values are key ranges of it). */
    VersionedRestoreBuffer(
            VersionedStoreClient store,
            java.util.function.Supplier<VersionedSegment> latestAccess,
            java.util.function.Consumer<WriteBatch> writer) {
        this.store = store;
        this.latestAccess = latestAccess;
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
        List<BufferedSegment> oldestFirst = new ArrayList<>(buffered.values());
        java.util.Collections.reverse(oldestFirst);
        WriteBatch batch = new WriteBatch();
        for (BufferedSegment b : oldestFirst) {
            if (!b.segment.isOpen()) {
                continue; // expired and dropped during the batch: its rows are past the retention
            }
            b.data.forEach((k, v) -> b.segment.addTo(batch, k, v));
        }
        buffered.clear();
        VersionedSegment l = latestAccess.get();
        latest.forEach((k, v) -> l.addTo(batch, k, v.orElse(null)));
        writer.accept(batch);
        latest.clear();
    }

    /** A segment's buffered rows over its database. */
    private static final class BufferedSegment implements VersionedStoreClient.Segment {
        final VersionedSegment segment;
        final Map<Bytes, byte[]> data = new HashMap<>();

        BufferedSegment(VersionedSegment segment) {
            this.segment = segment;
        }

        @Override
        public long id() {
            return segment.id();
        }

        @Override
        public byte[] get(Bytes key) {
            byte[] v = data.get(key);
            return v != null ? v : segment.get(key);
        }

        @Override
        public void put(Bytes key, byte[] value) {
            data.put(key, value);
        }
    }

    private final class Client implements VersionedStoreClient {
        @Override
        public byte[] latestValue(Bytes key) {
            Optional<byte[]> v = latest.get(key);
            return v != null ? v.orElse(null) : store.latestValue(key);
        }

        @Override
        public void putLatestValue(Bytes key, byte[] value) {
            latest.put(key, Optional.ofNullable(value));
        }

        @Override
        public void deleteLatestValue(Bytes key) {
            latest.put(key, Optional.empty());
        }

        @Override
        public Segment getOrCreateSegmentIfLive(long segmentId, long streamTime) {
            BufferedSegment b = buffered.get(segmentId);
            if (b != null) {
                return b;
            }
            Segment s = store.getOrCreateSegmentIfLive(segmentId, streamTime);
            if (s == null) {
                return null;
            }
            b = new BufferedSegment((VersionedSegment) s);
            buffered.put(segmentId, b);
            return b;
        }

        @Override
        public List<Segment> reversedSegments(long timestampFrom, long timestampTo) {
            // The databases' segments, each through its buffer, merged with buffered segments not yet in a database.
            TreeMap<Long, Segment> all = new TreeMap<>(Comparator.reverseOrder());
            for (Segment s : store.reversedSegments(timestampFrom, timestampTo)) {
                all.put(s.id(), buffered.computeIfAbsent(s.id(), id -> new BufferedSegment((VersionedSegment) s)));
            }
            long from = store.segmentIdForTimestamp(timestampFrom);
            long to = store.segmentIdForTimestamp(timestampTo);
            if (from <= to) {
                // buffered is ordered newest first: the ids in [from, to] are its sub-map from "to" down to "from".
                buffered.subMap(to, true, from, true).forEach(all::putIfAbsent);
            }
            return new ArrayList<>(all.values());
        }

        @Override
        public long segmentIdForTimestamp(long timestamp) {
            return store.segmentIdForTimestamp(timestamp);
        }
    }
}
