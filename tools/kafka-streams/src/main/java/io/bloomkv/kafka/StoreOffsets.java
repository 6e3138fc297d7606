package io.bloomkv.kafka;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.internals.OffsetCheckpoint;

/**
 * The changelog offsets a bloomkv store manages itself (KIP-1035: {@code StateStore.managesOffsets() == true},
 * {@code commit(Map)}, {@code committedOffset}), the role of the offsets column family of Kafka 4.3's RocksDBStore.
 *
 * <p>Files beside the store's directory under the task directory:
 * <pre>
 * name.offsets   Kafka's OffsetCheckpoint text format (version, count, "topic partition offset" lines), written to a
 *                temporary file, fsynced and renamed over the old one; absent = no committed offset
 * name.open      empty; exists from init until a clean close
 * </pre>
 *
 * <p>Contract (StateStore Javadoc): {@link #commit} is called after the store made every write so far durable (its
 * write-ahead logs synced), so a committed offset never runs ahead of the data a crash leaves: after a crash the
 * store holds at least the data of its committed offset, and Kafka restores the changelog from there (replaying the
 * changelog over newer writes gives the same state). An empty map removes every offset; a null value removes that
 * partition's. Under {@code processing.guarantee=exactly_once_v2} a store whose {@code name.open} is still there at
 * init (the process died without closing it) may hold writes of an aborted transaction: as Kafka's RocksDB store
 * (whose status key stays "open" after a crash), init throws {@link TaskCorruptedException}, and Kafka Streams wipes
 * the task's state and restores it in full from the changelog.
 */
final class StoreOffsets {
    private final String storeName;
    private final OffsetCheckpoint file;
    private final File openMarker;
    private final Map<TopicPartition, Long> offsets = new HashMap<>();

    StoreOffsets(File stateDir, String storeName) {
        this.storeName = storeName;
        this.file = new OffsetCheckpoint(new File(stateDir, storeName + ".offsets"));
        this.openMarker = new File(stateDir, storeName + ".open");
    }

    static boolean eosEnabled(StateStoreContext context) {
        return StreamsConfig.EXACTLY_ONCE_V2.equals(context.appConfigs().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
    }

    /**
     * Reads the committed offsets and marks the store open (synced). Under EOS a store that was not closed cleanly
     * throws TaskCorruptedException (the caller closes its databases first).
     */
    void open(StateStoreContext context) {
        if (eosEnabled(context) && openMarker.exists()) {
            throw new TaskCorruptedException(Set.of(context.taskId()), new ProcessorStateException("State store " + storeName
                    + " was not closed cleanly: under EOS it may hold uncommitted data, so it is wiped and restored from the changelog"));
        }
        try {
            offsets.clear();
            offsets.putAll(file.read());
            try (FileOutputStream out = new FileOutputStream(openMarker)) {
                out.getFD().sync();
            }
        } catch (IOException e) {
            throw new ProcessorStateException("store " + storeName + ": cannot read its offsets or mark it open", e);
        }
    }

    /** Records the offsets (see the class contract); writes the file only when they changed. */
    void commit(Map<TopicPartition, Long> changelogOffsets) {
        Map<TopicPartition, Long> next = new HashMap<>(offsets);
        if (changelogOffsets.isEmpty()) {
            next.clear();
        } else {
            for (Map.Entry<TopicPartition, Long> e : changelogOffsets.entrySet()) {
                if (e.getValue() == null) {
                    next.remove(e.getKey());
                } else {
                    next.put(e.getKey(), e.getValue());
                }
            }
        }
        if (next.equals(offsets)) {
            return;
        }
        try {
            file.write(next);
        } catch (IOException e) {
            throw new ProcessorStateException("store " + storeName + ": cannot write its committed offsets", e);
        }
        offsets.clear();
        offsets.putAll(next);
    }

    Long committedOffset(TopicPartition partition) {
        return offsets.get(Objects.requireNonNull(partition, "partition cannot be null"));
    }

    /** Marks the store closed cleanly; called after its databases closed. */
    void close() {
        try {
            Files.deleteIfExists(openMarker.toPath());
        } catch (IOException e) {
            throw new ProcessorStateException("store " + storeName + ": cannot mark it closed", e);
        }
    }
}
