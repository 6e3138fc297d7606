package io.bloomkv.kafka;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The changelog offsets a bloomkv store manages itself (KIP-1035: {@code StateStore.managesOffsets() == true},
 * {@code commit(Map)}, {@code committedOffset}), the role of the offsets column family of Kafka 4.3's RocksDBStore.
 *
 * <p>Files beside the store's directory under the task directory:
 * <pre>
 * name.offsets   Kafka's OffsetCheckpoint text format (version 0, count, "topic partition offset" lines), written to a
 *                temporary file and renamed over the old one (atomic move); absent = no committed offset
 * name.open      empty; exists from init until a clean close
 * </pre>
 *
 * <p>Contract (StateStore Javadoc): {@link #commit} is called after the store made every write so far durable (its
 * write-ahead logs synced, one fsync), so a committed offset never runs ahead of the data a crash leaves: after a
 * crash the store holds at least the data of its committed offset, and Kafka restores the changelog from there
 * (replaying the changelog over newer writes gives the same state). The offsets file itself is not fsynced (that
 * would double the fsyncs of a commit): a crash can only leave an older offsets file, or an unreadable one, which
 * counts as no offset at all (a full restore), never a newer one. An empty map removes every offset; a null value removes that
 * partition's. Under {@code processing.guarantee=exactly_once_v2} a store whose {@code name.open} is still there at
 * init (the process died without closing it) may hold writes of an aborted transaction: as Kafka's RocksDB store
 * (whose status key stays "open" after a crash), init throws {@link TaskCorruptedException}, and Kafka Streams wipes
 * the task's state and restores it in full from the changelog.
 */
final class StoreOffsets {
    private final String storeName;
    private static final Logger LOG = LoggerFactory.getLogger(StoreOffsets.class);

    private final OffsetCheckpoint file;
    private final File offsetsFile;
    private final File openMarker;
    private final Map<TopicPartition, Long> offsets = new HashMap<>();

    StoreOffsets(File stateDir, String storeName) {
        this.storeName = storeName;
        this.offsetsFile = new File(stateDir, storeName + ".offsets");
        this.file = new OffsetCheckpoint(offsetsFile);
        this.openMarker = openMarker(stateDir, storeName);
    }

    static boolean eosEnabled(StateStoreContext context) {
        return StreamsConfig.EXACTLY_ONCE_V2.equals(
                context.appConfigs().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
    }

    /**
     * Reads the committed offsets and marks the store open (synced). Under EOS a store that was not closed cleanly
     * throws TaskCorruptedException (the caller closes its databases first).
     */
    void open(StateStoreContext context) {
        markOpen(openMarker, storeName, context);
        offsets.clear();
        try {
            offsets.putAll(file.read());
        } catch (IOException | RuntimeException e) {
            // Torn by a crash: no offset, so Kafka restores the whole changelog over the data (always correct).
            LOG.warn("store {}: unreadable offsets file, restoring from the start of the changelog", storeName, e);
        }
    }

    /**
     * The {@code name.open} marker of a store under {@code stateDir} (see the class comment), for the stores that keep
     * their offsets elsewhere (the key-value store keeps them in its database).
     */
    static File openMarker(File stateDir, String storeName) {
        return new File(stateDir, storeName + ".open");
    }

    /**
     * Under EOS, a {@code marker} left by a run that did not close the store throws {@link TaskCorruptedException};
     * then the marker is created (synced), to be removed by {@link #markClosed} at a clean close.
     */
    static void markOpen(File marker, String storeName, StateStoreContext context) {
        if (eosEnabled(context) && marker.exists()) {
            throw new TaskCorruptedException(
                    Set.of(context.taskId()),
                    new ProcessorStateException(
                            "State store " + storeName
                                    + " was not closed cleanly: under EOS it may hold uncommitted data, so it is wiped and restored from the changelog"));
        }
        try (FileOutputStream out = new FileOutputStream(marker)) {
            out.getFD().sync();
        } catch (IOException e) {
            throw new ProcessorStateException("store " + storeName + ": cannot mark it open", e);
        }
    }

    /** Removes the marker: the store closed cleanly. */
    static void markClosed(File marker, String storeName) {
        try {
            Files.deleteIfExists(marker.toPath());
        } catch (IOException e) {
            throw new ProcessorStateException("store " + storeName + ": cannot mark it closed", e);
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
            write(next);
        } catch (IOException e) {
            throw new ProcessorStateException("store " + storeName + ": cannot write its committed offsets", e);
        }
        offsets.clear();
        offsets.putAll(next);
    }

    /** Kafka's OffsetCheckpoint format (readable by {@link OffsetCheckpoint#read}), without its fsync; empty = no file. */
    private void write(Map<TopicPartition, Long> next) throws IOException {
        Path path = offsetsFile.toPath();
        if (next.isEmpty()) {
            Files.deleteIfExists(path);
            return;
        }
        StringBuilder text = new StringBuilder("0\n").append(next.size()).append('\n');
        next.forEach((tp, offset) -> text.append(tp.topic())
                .append(' ')
                .append(tp.partition())
                .append(' ')
                .append(offset)
                .append('\n'));
        Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    Long committedOffset(TopicPartition partition) {
        return offsets.get(Objects.requireNonNull(partition, "partition cannot be null"));
    }

    /** Marks the store closed cleanly; called after its databases closed. */
    void close() {
        markClosed(openMarker, storeName);
    }
}
