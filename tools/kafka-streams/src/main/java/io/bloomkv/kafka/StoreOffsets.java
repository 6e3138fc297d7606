package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.ReadOptions;
import io.bloomkv.engine.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.processor.StateStoreContext;

/**
 * The changelog offsets a store manages itself (KIP-1035, {@code StateStore.managesOffsets() == true}), kept in
 * the store's own database beside its data, as Kafka 4.3's RocksDBStore keeps them in an offsets column family.
 *
 * <p>Keys live in the meta key space (first byte {@link #META}, after every data key of {@link StoreKeys#PLAIN},
 * so no data iterator sees them):
 * <pre>
 * 0x01 's'                  status: 1 byte, 0x01 open, 0x00 closed cleanly
 * 0x01 'o' topic-partition  committed changelog offset: 8 bytes big-endian (key: UTF-8 of TopicPartition.toString())
 * </pre>
 *
 * <p>Contract (StateStore.commit / committedOffset Javadoc): {@code commit(offsets)} makes the offsets durable
 * together with every record written before it: the offsets go into the same write-ahead log after those records
 * and the log is synced, so a crash recovers a prefix of the log that holds the data of any offset it holds.
 * An empty map removes every offset, a null value removes that partition's. Under
 * {@code processing.guarantee=exactly_once_v2} a store found still marked open at {@link #open} (the process died
 * without closing it) may hold writes of an aborted transaction: as Kafka's RocksDB store does, it raises
 * {@link TaskCorruptedException}, and Kafka Streams wipes the task's state and restores it from the changelog.
 * Under at-least-once the store restores from its committed offset (replaying the changelog over newer writes
 * gives the same state).
 */
final class StoreOffsets {
    static final byte META = 1;
    private static final byte[] STATUS_KEY = {META, 's'};
    private static final byte[] OFFSET_PREFIX = {META, 'o'};
    private static final byte[] OPEN = {1};
    private static final byte[] CLOSED = {0};

    private StoreOffsets() {}

    static boolean eosEnabled(StateStoreContext context) {
        return StreamsConfig.EXACTLY_ONCE_V2.equals(context.appConfigs().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
    }

    /**
     * Marks the store open (synced). Under EOS a store that was not closed cleanly throws
     * TaskCorruptedException; the caller closes its database first.
     */
    static void open(Db db, String storeName, StateStoreContext context) {
        byte[] status = db.get(STATUS_KEY);
        if (eosEnabled(context) && status != null && status[0] == OPEN[0]) {
            throw new TaskCorruptedException(Set.of(context.taskId()), new ProcessorStateException("State store " + storeName
                    + " was not closed cleanly: under EOS it may hold uncommitted data, so it is wiped and restored from the changelog"));
        }
        db.put(STATUS_KEY, OPEN);
        db.syncWal();
    }

    /** Writes the offsets (see the class contract) in one batch and syncs the log. */
    static void commit(Db db, Map<TopicPartition, Long> changelogOffsets) {
        WriteBatch batch = new WriteBatch();
        if (changelogOffsets.isEmpty()) {
            try (DbIterator it = db.iterator(ReadOptions.defaults().iterateLowerBound(OFFSET_PREFIX)
                    .iterateUpperBound(new byte[] {META, 'o' + 1}))) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    batch.delete(it.key());
                }
            }
        } else {
            for (Map.Entry<TopicPartition, Long> e : changelogOffsets.entrySet()) {
                byte[] key = offsetKey(e.getKey());
                if (e.getValue() == null) {
                    batch.delete(key);
                } else {
                    batch.put(key, ByteBuffer.allocate(8).putLong(e.getValue()).array());
                }
            }
        }
        if (batch.count() > 0) {
            db.write(batch);
        }
        db.syncWal();
    }

    static Long committedOffset(Db db, TopicPartition partition) {
        byte[] v = db.get(offsetKey(Objects.requireNonNull(partition, "partition cannot be null")));
        return v == null ? null : ByteBuffer.wrap(v).getLong();
    }

    /** Marks the store closed cleanly (synced); called before the database closes. */
    static void close(Db db) {
        try {
            db.put(STATUS_KEY, CLOSED);
            db.syncWal();
        } catch (BloomKvException e) {
            throw new ProcessorStateException("cannot mark the store closed", e);
        }
    }

    private static byte[] offsetKey(TopicPartition tp) {
        byte[] name = tp.toString().getBytes(StandardCharsets.UTF_8);
        byte[] key = new byte[OFFSET_PREFIX.length + name.length];
        System.arraycopy(OFFSET_PREFIX, 0, key, 0, OFFSET_PREFIX.length);
        System.arraycopy(name, 0, key, OFFSET_PREFIX.length, name.length);
        return key;
    }
}
