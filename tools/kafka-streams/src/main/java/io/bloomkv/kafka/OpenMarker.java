package io.bloomkv.kafka;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Set;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.processor.StateStoreContext;

/**
 * The {@code name.open} file beside a store that manages its own offsets (the key-value, versioned, window and session stores): it
 * exists from init until a clean close, the role of the status key ("open") of Kafka 4.3's RocksDBStore. Under
 * {@code processing.guarantee=exactly_once_v2} a store whose marker is still there at init (the process died
 * without closing it) may hold writes of an aborted transaction: as Kafka's RocksDB store, init then throws
 * {@link TaskCorruptedException}, and Kafka Streams wipes the task's state and restores it in full from the
 * changelog. The committed offsets themselves are records of the store's database ({@link StoreMetadata}).
 */
final class OpenMarker {
    private OpenMarker() {}

    static boolean eosEnabled(StateStoreContext context) {
        return StreamsConfig.EXACTLY_ONCE_V2.equals(
                context.appConfigs().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
    }

    /** The marker of store {@code storeName} under {@code stateDir}. */
    static File file(File stateDir, String storeName) {
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
}
