package io.bloomkv.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.table.BlockCache;
import io.bloomkv.engine.internal.version.FileNames;
import io.bloomkv.engine.internal.version.TableCache;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Which files of a database may be deleted, and deleting them (LevelDB's DeleteObsoleteFiles,
 * Pebble's obsolete_files.go): WALs older than the log number, MANIFESTs older than the current one,
 * stray temp files, and tables that no live Version names and no flush or compaction is writing
 * ({@link #pendingOutputs}). Thread-safe; passes are serialized.
 *
 * <p>A pass never runs on a thread holding the database mutex ({@link DbState}): listing the directory, unlinking,
 * closing readers and evicting their blocks would stall every writer meanwhile. RocksDB finds obsolete files under its
 * mutex and purges them after releasing it. Here a pass asked for under the mutex (a SuperVersion install dropped the
 * last reference of a Version) is skipped: a Version dies there only once an edit superseded it, and the thread that
 * installed that edit ({@link Flusher}, the compactions, {@link Ingester}, {@link FileRangeDeleter}, {@link Recovery})
 * runs a pass after its own install, once it released the mutex; a memtable switch or rewrite that drops the Version
 * first (racing that install) does so before it. {@link Db#flush} and {@link Db#waitForBackgroundWork} run a pass too
 * before they return (the flusher's runs after it let them go). A reader that drops the last reference of an old
 * Version (closing an iterator) runs the pass on its own thread, as RocksDB does by default. Close stops these passes
 * and runs one last pass itself ({@link #deleteAtClose}) once the background threads stopped, as RocksDB's close.
 */
final class ObsoleteFiles {
    private final FileSystem fs;
    private final Path dir;
    private final VersionSet versions;
    private final TableCache tableCache;
    private final BlockCache blockCache;
    private final Supplier<BloomKvException> backgroundError;
    /** Whether the calling thread holds the database mutex: then no pass runs (see the class comment). */
    private final BooleanSupplier mutexHeld;

    private final Set<Long> pendingOutputs = ConcurrentHashMap.newKeySet();
    /** Oldest WAL number each checkpoint in progress still reads, one entry per checkpoint (a multiset). */
    private final ConcurrentLinkedQueue<Long> pinnedLogs = new ConcurrentLinkedQueue<>();

    private final Object lock = new Object();
    private volatile boolean enabled;
    /** Whether open recovered (deletion was enabled once): only then does {@link #deleteAtClose} delete. */
    private volatile boolean recovered;

    private volatile Events events;

    ObsoleteFiles(
            FileSystem fs,
            Path dir,
            VersionSet versions,
            TableCache tableCache,
            BlockCache blockCacheOrNull,
            Supplier<BloomKvException> backgroundError,
            BooleanSupplier mutexHeld) {
        this.fs = fs;
        this.dir = dir;
        this.versions = versions;
        this.tableCache = tableCache;
        this.blockCache = blockCacheOrNull;
        this.backgroundError = backgroundError;
        this.mutexHeld = mutexHeld;
    }

    /** A new table number, kept from deletion until {@link #released}: call before the file is created. */
    long newOutput() {
        long number = versions.newFileNumber();
        pendingOutputs.add(number);
        return number;
    }

    /** Table {@code number} is named by a live Version now, or was abandoned. */
    void released(long number) {
        pendingOutputs.remove(number);
    }

    /**
     * Keeps every WAL numbered {@code from} or above until the returned handle is closed (a checkpoint reads
     * them; RocksDB's DisableFileDeletions, narrowed to the WALs). Call while {@code from} is still at most the
     * VersionSet's log number, so no pass can have judged those WALs obsolete yet (see {@link #delete}).
     */
    AutoCloseable pinLogs(long from) {
        Long entry = from;
        pinnedLogs.add(entry);
        return () -> pinnedLogs.remove(entry);
    }

    /** Where table-deleted events go. */
    void events(Events e) {
        this.events = e;
    }

    /** Deletion starts once open has recovered, and stops for good at close (which runs {@link #deleteAtClose}). */
    void enable(boolean on) {
        if (on) {
            recovered = true;
        }
        enabled = on;
    }

    /**
     * Deletes what is obsolete now, closing the readers of obsolete tables. Runs on whichever
     * thread dropped the last reference of a Version, or after a flush or compaction. A file that
     * cannot be deleted is left for the next pass: an obsolete file is harmless. On a thread holding
     * the database mutex it does nothing (see the class comment); otherwise it waits for a pass
     * running on another thread, then runs its own.
     */
    void delete() {
        // After a background error a failed MANIFEST write may still have reached the disk, naming
        // tables no live Version names: nothing is deleted until the next open reads the MANIFEST
        // (LevelDB's rule). The error is set before a failed edit's outputs leave pendingOutputs.
        if (!enabled || backgroundError.get() != null) {
            return;
        }
        if (mutexHeld.getAsBoolean()) {
            return; // the installer's pass, after it releases the mutex, deletes it (see the class comment)
        }
        synchronized (lock) {
            if (!enabled) {
                return; // close began while this pass waited for another
            }
            IOException failure = pass(); // what it could not delete is left for the next pass
            if (failure != null) {
                DbLog.LOG.warn("[{}] obsolete files left for the next pass", dir, failure);
            }
        }
    }

    /**
     * The last pass, run by {@link Db#close} after {@link #enable enable(false)} and after the background threads
     * stopped, before the tables, the MANIFEST and the directory lock are released: RocksDB's {@code
     * DBImpl::CloseHelper} runs {@code FindObsoleteFiles(force=true)} and {@code PurgeObsoleteFiles} at the same point,
     * so that files made obsolete by the last install (whose own pass close stopped), or left by a pass whose deletion
     * failed, or read until close by the iterators it invalidated, do not outlive the close. It first waits for a pass
     * in progress on another thread, so that no pass touches the directory once close returns. It deletes nothing
     * when open never finished recovery (a failed open, a read-only database: RocksDB's {@code opened_successfully_
     * && !read_only_}) or after a background error (see {@link #delete}; the next open deletes what is left).
     *
     * @return the first failure to list the directory or delete an obsolete file (later ones suppressed; every file
     *     is tried), or null. Close logs it (WARN) and releases everything; RocksDB's close, too, only logs a failed
     *     deletion.
     */
    IOException deleteAtClose() {
        synchronized (lock) {
            if (!recovered || backgroundError.get() != null) {
                return null;
            }
            return pass();
        }
    }

    /** One pass, {@link #lock} held: returns the first failure (later ones suppressed), or null. */
    private IOException pass() {
        IOException failure = null;
        // Order matters. A table's number enters pendingOutputs before its file is created or
        // opened, and leaves only once a live Version names it. So: first list the files and the
        // open readers, then read pendingOutputs, then the live files; whatever the listing saw
        // is then either pending or live, unless it is really obsolete.
        List<Long> openTables = tableCache.openNumbers();
        List<Path> entries;
        try {
            entries = fs.list(dir);
        } catch (IOException e) {
            failure = new IOException("cannot list " + dir + " for obsolete files", e);
            entries = List.of();
        }
        long manifest = versions.manifestNumber();
        Set<Long> keep = new HashSet<>(pendingOutputs);
        keep.addAll(versions.liveFiles());
        long logNumber = versions.logNumber();
        // Read after the log number: a pin taken while the log number was still at or below its WAL is seen.
        for (Long pinned : pinnedLogs) {
            logNumber = Math.min(logNumber, pinned);
        }
        for (Long n : openTables) {
            if (!keep.contains(n)) {
                tableCache.evict(n);
                if (blockCache != null) {
                    blockCache.evictFile(n);
                }
            }
        }
        for (Path p : entries) {
            FileNames.Parsed parsed = FileNames.parse(p.getFileName().toString());
            if (parsed != null && isObsolete(parsed, keep, logNumber, manifest)) {
                BloomKvException error = null;
                try {
                    fs.delete(p);
                } catch (NoSuchFileException gone) {
                    continue; // deleted meanwhile by someone else: what the pass wanted
                } catch (IOException e) {
                    IOException f = new IOException("cannot delete obsolete file " + p, e);
                    if (failure == null) {
                        failure = f;
                    } else {
                        failure.addSuppressed(f);
                    }
                    error = new BloomKvIOException("cannot delete obsolete table file " + p, e);
                }
                // A failed table deletion is an event too (RocksDB's OnTableFileDeleted with a failed status).
                Events ev = events;
                if (ev != null && parsed.kind() == FileNames.Kind.TABLE) {
                    EventListener.TableFileDeletedInfo info =
                            new EventListener.TableFileDeletedInfo(p, parsed.number(), error);
                    ev.post(l -> l.onTableFileDeleted(info));
                }
            }
        }
        return failure;
    }

    private static boolean isObsolete(FileNames.Parsed parsed, Set<Long> keep, long logNumber, long manifest) {
        return switch (parsed.kind()) {
            case LOG -> parsed.number() < logNumber;
            case TABLE -> !keep.contains(parsed.number());
            case MANIFEST, TEMP -> parsed.number() < manifest;
            default -> false;
        };
    }
}
