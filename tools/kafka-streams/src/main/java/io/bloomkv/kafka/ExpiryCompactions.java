package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbClosedException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The compactions that drop expired segments' tables right after their range tombstone is written (the window and
 * session stores' {@link Segments}; the versioned store leaves them to the engine's own compactions, see
 * {@link VersionedSegments}), run off the stream thread: one daemon thread for every bloomkv
 * segmented store of the JVM, so a task's processing does not wait for them (the engine serializes them with its
 * own background compactions). An expired segment is already invisible once its tombstone is written; the
 * compaction only gives its disk space back, so a store's compactions are chained and its close waits for the last
 * one (closing the database under a running compaction would fail it).
 */
final class ExpiryCompactions {
    private static final Logger LOG = LoggerFactory.getLogger(ExpiryCompactions.class);
    private static final ExecutorService EXECUTOR = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "bloomkv-expiry-compaction");
        t.setDaemon(true);
        return t;
    });

    private final String storeName;
    /** The store's last submitted compaction (the executor runs them in submission order). */
    private CompletableFuture<Void> last = CompletableFuture.completedFuture(null);

    ExpiryCompactions(String storeName) {
        this.storeName = storeName;
    }

    /** Compacts [{@code from}, {@code to}] of {@code db} on the shared thread. Called under the store's lock. */
    void submit(Db db, byte[] from, byte[] to) {
        last = CompletableFuture.runAsync(
                () -> {
                    try {
                        db.compactRange(from, to);
                    } catch (DbClosedException e) {
                        // The store closed first: the tombstone stays and a later compaction drops the tables.
                    } catch (BloomKvException e) {
                        // The engine also records an I/O failure as its background error: the next write reports it.
                        LOG.warn("store {}: the compaction of expired segments failed", storeName, e);
                    }
                },
                EXECUTOR);
    }

    /** Waits until the store's submitted compactions are done (before the database closes). */
    void awaitIdle() {
        boolean interrupted = false;
        while (true) {
            try {
                last.get();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException e) {
                LOG.warn("store {}: the compaction of expired segments failed", storeName, e.getCause());
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
