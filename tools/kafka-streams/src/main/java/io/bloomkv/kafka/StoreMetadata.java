package io.bloomkv.kafka;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.ReadOptions;
import io.bloomkv.engine.WriteBatch;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.internals.OffsetCheckpoint;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The changelog offsets (KIP-1035: {@code commit(Map)}, {@code committedOffset}) and the IQv2 position of a store
 * that manages its offsets (the key-value, versioned, window and session stores), kept as records of the store's own database: the role of the offsets column family of Kafka 4.3's
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
 * 0x00. An offset removed (a null value, or an empty commit) is a delete of its record. In the versioned, window and session
 * stores, whose keys all start with an 8-byte segment prefix ({@link Segment#prefix}: ids -1 and up, first byte 0x7F
 * or above; any id from -2^63 + 2^57 up has a first byte of 0x02 or more), these records sort below every segment and are never read
 * as one (the window and session stores look for their segments from key 0x02 up). Not thread-safe: the store calls it under its
 * lock.
 *
 * <p>The steps a store takes with them, the same for every store that manages its offsets: {@link #open} at init,
 * {@link #commit(Db, Map, Position)} at each commit, {@link #writePosition} before a flush or a close.
 */
final class StoreMetadata {
    private static final Logger LOG = LoggerFactory.getLogger(StoreMetadata.class);
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

    /**
     * Reads the offsets and the position of store {@code storeName} from {@code db}, after moving into it what an
     * earlier version of the store kept in files beside it ({@code name.offsets}, Kafka's offset checkpoint format,
     * and {@code name.position}; the database is then flushed and the files deleted). A file that cannot be read
     * counts as absent (no offset: Kafka restores the whole changelog, always correct). Returns the position.
     */
    Position open(Db db, File stateDir, String storeName) {
        Position position = load(db);
        File offsetsFile = new File(stateDir, storeName + ".offsets");
        File positionFile = new File(stateDir, storeName + ".position");
        if (!offsetsFile.exists() && !positionFile.exists()) {
            return position;
        }
        WriteBatch batch = new WriteBatch();
        if (offsetsFile.exists() && !hasOffsets()) {
            try {
                Map<TopicPartition, Long> old = new OffsetCheckpoint(offsetsFile).read();
                if (!old.isEmpty()) {
                    commit(batch, old);
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn(
                        "store {}: unreadable offsets file {}, restoring from the start of the changelog",
                        storeName,
                        offsetsFile,
                        e);
            }
        }
        if (positionFile.exists() && !hasPosition()) {
            position = StoreQueryUtils.readPositionFromCheckpoint(new OffsetCheckpoint(positionFile));
            position(batch, position);
        }
        if (batch.count() > 0) {
            db.write(batch);
        }
        db.flush();
        try {
            Files.deleteIfExists(offsetsFile.toPath());
            Files.deleteIfExists(positionFile.toPath());
        } catch (IOException e) {
            throw new ProcessorStateException(
                    "store " + storeName + ": cannot remove the files moved into the database", e);
        }
        return position;
    }

    /**
     * Writes a commit (StateStore.commit's contract, see {@link #commit(WriteBatch, Map)}) and the position components
     * that moved, as one write of a few records into {@code db}, after the data they cover: no fsync, no file.
     */
    void commit(Db db, Map<TopicPartition, Long> changelogOffsets, Position position) {
        WriteBatch batch = new WriteBatch();
        commit(batch, changelogOffsets);
        position(batch, position);
        if (batch.count() > 0) {
            db.write(batch);
        }
    }

    /** Writes the position components that moved since last written into {@code db}. */
    void writePosition(Db db, Position position) {
        WriteBatch batch = new WriteBatch();
        position(batch, position);
        if (batch.count() > 0) {
            db.write(batch);
        }
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
