package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbClosedException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The removal of expired segments' tables right after their range tombstone is written (the window and session
 * stores' {@link Segments}; the versioned store leaves them to the engine's compactions, see {@link VersionedSegments}): {@link Db#deleteFilesInRange} over the tombstone's range, one MANIFEST record that
 * names the tables lying wholly in it, no data read or written. It runs off the stream thread, on one daemon thread
 * for every bloomkv segmented store of the JVM ({@code bloomkv-expiry}), because it syncs the MANIFEST and waits for
 * a compaction of the store's database that is running. An expired segment is already invisible once its tombstone
 * is written; the deletion only gives its disk space back, so a store's deletions are chained and its close waits for
 * the last one.
 */
final class ExpiryDeletions {
    private static final Logger LOG = LoggerFactory.getLogger(ExpiryDeletions.class);
    private static final ExecutorService EXECUTOR = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "bloomkv-expiry");
        t.setDaemon(true);
        return t;
    });

    private final String storeName;
    /** The store's last submitted deletion (the executor runs them in submission order). */
    private CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
    /** Tables removed by this store's deletions since it opened. */
    private final AtomicLong tablesDeleted = new AtomicLong();

    ExpiryDeletions(String storeName) {
        this.storeName = storeName;
    }

    /** Removes the tables of {@code db} inside [{@code from}, {@code to}) on the shared thread. Called under the store's lock. */
    void submit(Db db, byte[] from, byte[] to) {
        last = CompletableFuture.runAsync(
                () -> {
                    try {
                        tablesDeleted.addAndGet(db.deleteFilesInRange(from, to));
                    } catch (DbClosedException e) {
                        // The store closed first: the tombstone stays, and flushes and compactions drop what it covers.
                    } catch (BloomKvException e) {
                        // The engine also records an I/O failure as its background error: the next write reports it.
                        LOG.warn("store {}: the deletion of expired segments' tables failed", storeName, e);
                    }
                },
                EXECUTOR);
    }

    /** Tables removed since the store opened (tests, metrics). */
    long tablesDeleted() {
        return tablesDeleted.get();
    }

    /** Waits until the store's submitted deletions are done (before the database closes). */
    void awaitIdle() {
        boolean interrupted = false;
        while (true) {
            try {
                last.get();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException e) {
                LOG.warn("store {}: the deletion of expired segments' tables failed", storeName, e.getCause());
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
