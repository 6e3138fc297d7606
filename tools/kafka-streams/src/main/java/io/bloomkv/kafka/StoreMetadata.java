package io.bloomkv.kafka;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.ReadOptions;
import io.bloomkv.engine.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.query.Position;

/**
 * The changelog offsets (KIP-1035: {@code commit(Map)}, {@code committedOffset}) and the IQv2 position of a key-value
 * store, kept as records of the store's own database: the role of the offsets column family of Kafka 4.3's
 * RocksDBStore, which holds both. Written with the data, in the same memtable, they reach disk with it: whatever a
 * crash leaves (a prefix of the writes, see {@code Options.disableWal}), the committed offset in it is never ahead of
 * the data in it, so Kafka restores the changelog from there and gets the same state. A commit is a write of a few
 * records, no fsync and no file, as RocksDB's (WAL disabled, no flush).
 *
 * <p>Records, under the format byte {@link StoreKeys#META} (every read of Kafka keys ends before it, so no get, range
 * or scan returns them):
 * <pre>
 * key:   0x01 | kind (1 byte: 'o' committed offset, 'p' position component) | topic (UTF-8) | 0x00 | partition (int32, big-endian)
 * value: offset (int64, big-endian)
 * </pre>
 * Topic names cannot hold 0x00 (Kafka allows ASCII letters, digits, '.', '_' and '-'), so the topic ends at the first
 * 0x00. An offset removed (a null value, or an empty commit) is a delete of its record. Not thread-safe: the store
 * calls it under its lock.
 */
final class StoreMetadata {
    static final byte OFFSET = 'o';
    static final byte POSITION = 'p';

    private final Map<TopicPartition, Long> offsets = new HashMap<>();
    /** The position components as last written (to write only the ones that moved). */
    private final Map<TopicPartition, Long> writtenPosition = new HashMap<>();

    /** Reads the offsets and the position from {@code db}. */
    Position load(Db db) {
        offsets.clear();
        offsets.putAll(read(db, OFFSET));
        writtenPosition.clear();
        writtenPosition.putAll(read(db, POSITION));
        Position p = Position.emptyPosition();
        writtenPosition.forEach((tp, o) -> p.withComponent(tp.topic(), tp.partition(), o));
        return p;
    }

    /** How many metadata records the database holds now (one per committed offset and per position component). */
    int records() {
        return offsets.size() + writtenPosition.size();
    }

    boolean hasOffsets() {
        return !offsets.isEmpty();
    }

    boolean hasPosition() {
        return !writtenPosition.isEmpty();
    }

    Long committedOffset(TopicPartition partition) {
        return offsets.get(Objects.requireNonNull(partition, "partition cannot be null"));
    }

    /**
     * Adds to {@code batch} the records of a commit (StateStore.commit's contract: an empty map removes every offset,
     * a null value removes that partition's) and applies it to the offsets in memory (a batch that then fails to be
     * written fails the task, whose store is reopened and {@link #load}ed again).
     */
    void commit(WriteBatch batch, Map<TopicPartition, Long> changelogOffsets) {
        if (changelogOffsets.isEmpty()) {
            for (TopicPartition tp : offsets.keySet()) {
                batch.delete(key(OFFSET, tp.topic(), tp.partition()));
            }
            offsets.clear();
            return;
        }
        for (Map.Entry<TopicPartition, Long> e : changelogOffsets.entrySet()) {
            TopicPartition tp = e.getKey();
            Long offset = e.getValue();
            if (offset == null) {
                if (offsets.remove(tp) != null) {
                    batch.delete(key(OFFSET, tp.topic(), tp.partition()));
                }
            } else if (!offset.equals(offsets.put(tp, offset))) {
                batch.put(key(OFFSET, tp.topic(), tp.partition()), longBytes(offset));
            }
        }
    }

    /** Adds to {@code batch} the position components that moved since they were last added. */
    void position(WriteBatch batch, Position position) {
        for (String topic : position.getTopics()) {
            for (Map.Entry<Integer, Long> e :
                    position.getPartitionPositions(topic).entrySet()) {
                TopicPartition tp = new TopicPartition(topic, e.getKey());
                Long offset = e.getValue();
                if (!offset.equals(writtenPosition.put(tp, offset))) {
                    batch.put(key(POSITION, topic, e.getKey()), longBytes(offset));
                }
            }
        }
    }

    /** The record key of {@code kind} for a topic partition. */
    static byte[] key(byte kind, String topic, int partition) {
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + t.length + 1 + 4)
                .put(StoreKeys.META)
                .put(kind)
                .put(t)
                .put((byte) 0)
                .putInt(partition)
                .array();
    }

    private static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    /** Every record of {@code kind} in {@code db}. */
    private static Map<TopicPartition, Long> read(Db db, byte kind) {
        Map<TopicPartition, Long> out = new HashMap<>();
        byte[] lower = {StoreKeys.META, kind};
        byte[] upper = {StoreKeys.META, (byte) (kind + 1)};
        try (DbIterator it =
                db.iterator(ReadOptions.defaults().iterateLowerBound(lower).iterateUpperBound(upper))) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                byte[] k = it.key();
                int end = 2;
                while (k[end] != 0) {
                    end++;
                }
                String topic = new String(k, 2, end - 2, StandardCharsets.UTF_8);
                int partition = ByteBuffer.wrap(k, end + 1, 4).getInt();
                out.put(
                        new TopicPartition(topic, partition),
                        ByteBuffer.wrap(it.value()).getLong());
            }
        }
        return out;
    }
}
