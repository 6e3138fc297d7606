package io.bloomkv.engine;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.TableCache;
import io.bloomkv.engine.internal.version.Version;
import io.bloomkv.engine.internal.version.VersionEdit;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@link Db#deleteFilesInRange}: removes the tables lying wholly inside a key range with one VersionEdit, writing no
 * data (RocksDB's {@code DeleteFilesInRange}, Pebble's {@code Excise} without its splitting). With compactions paused
 * ({@link Compactor#exclusive}: a running compaction would otherwise write a removed table's entries into its
 * outputs) and new snapshots held back until the edit is installed ({@link DbState#deletingFiles}):
 *
 * <ol>
 *   <li>First, when a memtable holds a range tombstone overlapping the range, it is made durable: the write-ahead log
 *       synced ({@link Db#syncWal}), or without one ({@link Options#disableWal}) the memtables flushed. The removal
 *       is durable once its MANIFEST record is, so a crash never keeps the removal and loses the tombstone written
 *       before it (which would bring back the range's other entries). A range open above counts a memtable's delete
 *       of the greatest key as such a tombstone: a range deletion through that key is written with one, and is only
 *       that delete when it begins at the key ({@link WriteBatch#deleteRange}).</li>
 *   <li>Every table of every level (level 0 included, unlike RocksDB, which leaves level 0 alone) whose user keys and
 *       range tombstones lie in [begin, end) is a candidate. A table whose largest key is {@code end} itself counts as
 *       inside when it holds no entry of {@code end} and no tombstone covering it: that bound then comes from a range
 *       tombstone ending there ({@link io.bloomkv.engine.internal.rangedel.RangeTombstone#largestCoveredBound}; one
 *       ending at {@code end || 0x00} covers {@code end} and gives the same bound).</li>
 *   <li>A candidate an open snapshot can read (an entry at or below the newest snapshot's sequence) stays, so a
 *       snapshot never loses data (RocksDB removes it anyway: "snapshots before the delete might not see the data").
 *       </li>
 *   <li>Candidates holding range tombstones stay when a table that stays holds an entry in [begin, end): removing the
 *       tombstones could bring those entries back (RocksDB removes them; keys may then "reappear"). A memtable entry
 *       never needs them: tables' range tombstones come from flushed memtables, older than every memtable entry, or
 *       from ingested files, whose ingestion first flushed every memtable that overlapped them.</li>
 *   <li>The rest go in one edit (MANIFEST record of deleted files only: no new tag), installed as a compaction's is;
 *       their files are deleted once no reader holds them (open iterators keep reading them).</li>
 * </ol>
 *
 * Entries in [begin, end) of tables that stay (straddling the range or held for a snapshot), and of the memtables,
 * are untouched; older versions of keys in the range that those tables hold may become visible again where a removed
 * table held a newer version or a point delete. A range tombstone written first ({@link Db#deleteRange} over the same
 * range) hides all of them: then the call changes what reads see not at all, and only gives the space back.
 */
final class FileRangeDeleter {
    private final DbState state;
    private final VersionSet versions;
    private final TableCache tableCache;
    private final ObsoleteFiles obsolete;
    private final Compactor compactor;
    private final SnapshotList snapshots;
    private final Options options;
    private final CommitPipeline commits;
    /** {@link Db#flush}. */
    private final Runnable flush;

    private final Events events;

    FileRangeDeleter(
            DbState state,
            VersionSet versions,
            TableCache tableCache,
            ObsoleteFiles obsolete,
            Compactor compactor,
            SnapshotList snapshots,
            Options options,
            CommitPipeline commits,
            Runnable flush,
            Events events) {
        this.events = events;
        this.options = options;
        this.commits = commits;
        this.flush = flush;
        this.state = state;
        this.versions = versions;
        this.tableCache = tableCache;
        this.obsolete = obsolete;
        this.compactor = compactor;
        this.snapshots = snapshots;
    }

    /** A table of a level. */
    record LevelTable(int level, FileMetaData file) {}

    /** Removes the tables wholly inside [begin, end) (null bounds: open) as the class comment says; how many. */
    int run(byte[] begin, byte[] end) {
        if (memtableTombstoneOverlaps(begin, end)) {
            if (options.disableWal()) {
                flush.run();
            } else {
                commits.syncWal();
            }
        }
        try {
            return compactor.exclusive(() -> deleteHeld(begin, end));
        } catch (RuntimeException e) {
            throw e;
        } catch (IOException e) {
            throw new BloomKvIOException("deleteFilesInRange failed", e);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Whether a memtable (mutable or immutable) holds a range tombstone overlapping [begin, end) (null: open), or, for
     * a range open above, a delete of the greatest key ({@link LongKeys#LARGEST}): a range deletion through it is
     * written as one up to it and that delete ({@link WriteBatch#deleteRange}), only the delete when it begins there.
     */
    private boolean memtableTombstoneOverlaps(byte[] begin, byte[] end) {
        state.lock();
        try {
            if (tombstoneOverlaps(state.mem, begin, end)) {
                return true;
            }
            for (MemTable m : state.imms) {
                if (tombstoneOverlaps(m, begin, end)) {
                    return true;
                }
            }
            return false;
        } finally {
            state.unlock();
        }
    }

    private static boolean tombstoneOverlaps(MemTable m, byte[] begin, byte[] end) {
        if (m == null) {
            return false;
        }
        if (end == null && deletesLargest(m)) {
            return true;
        }
        if (!m.hasRangeTombstones()) {
            return false;
        }
        for (RangeTombstone t : m.rangeTombstones()) {
            if ((end == null || Arrays.compareUnsigned(t.begin(), end) < 0)
                    && (begin == null || Arrays.compareUnsigned(t.end(), begin) > 0)) {
                return true;
            }
        }
        return false;
    }

    /** Whether the newest entry of {@link LongKeys#LARGEST} in {@code m} is a delete. */
    private static boolean deletesLargest(MemTable m) {
        TableReader.Entry e = m.get(LongKeys.LARGEST, InternalKey.MAX_SEQUENCE);
        return e != null && e.type() == ValueType.DELETE;
    }

    /** Compactions paused. */
    private int deleteHeld(byte[] begin, byte[] end) throws IOException {
        state.lock();
        try {
            state.throwIfClosingOrFailed("database closed during deleteFilesInRange");
            state.deletingFiles = true; // no snapshot is taken from here until the edit is installed
        } finally {
            state.unlock();
        }
        boolean installed = false;
        try {
            long newestSnapshot = snapshots.newest(-1);
            VersionEdit edit = new VersionEdit();
            int removed;
            Version v = versions.retainCurrent();
            try {
                List<LevelTable> chosen = choose(v, begin, end, newestSnapshot);
                for (LevelTable t : chosen) {
                    edit.deleteFile(t.level(), t.file().number());
                }
                removed = chosen.size();
            } catch (UncheckedIOException e) {
                throw e.getCause(); // a table read fails unchecked inside its iterator
            } finally {
                v.release();
            }
            if (removed == 0) {
                return 0;
            }
            try {
                versions.logAndApply(edit);
            } catch (IOException | RuntimeException e) {
                // The edit may be on disk though its sync failed: the files stay until resume() rolls the MANIFEST
                // (or a reopen reads it).
                BloomKvException err = BackgroundErrors.of("deleteFilesInRange: MANIFEST write failed", e);
                state.setBackgroundError("deleteFilesInRange", err);
                events.writesStopped("deleteFilesInRange", err);
                throw e;
            }
            state.versionChanged();
            installed = true;
            return removed;
        } finally {
            state.lock();
            try {
                state.deletingFiles = false;
                state.signalChangeHeld();
            } finally {
                state.unlock();
            }
            if (installed) {
                obsolete.delete(); // once snapshots are let go: they do not wait for the unlinks
            }
        }
    }

    /** The tables of {@code v} to remove (steps 1 to 3 of the class comment). */
    List<LevelTable> choose(Version v, byte[] begin, byte[] end, long newestSnapshot) {
        List<LevelTable> chosen = new ArrayList<>();
        List<FileMetaData> staying = new ArrayList<>(); // tables that stay and overlap the range
        boolean tombstones = false;
        for (int level = 0; level < v.numLevels(); level++) {
            for (FileMetaData f : v.files(level)) {
                if (!overlaps(f, begin, end)) {
                    continue;
                }
                boolean inside = (begin == null || Arrays.compareUnsigned(f.smallestUserKey(), begin) >= 0)
                        && (end == null
                                || Arrays.compareUnsigned(f.largestUserKey(), end) < 0
                                || (Arrays.equals(f.largestUserKey(), end) && !reachesKey(f, end)));
                boolean snapshotReads = newestSnapshot >= 0 && f.smallestSequence() <= newestSnapshot;
                if (inside && !snapshotReads) {
                    chosen.add(new LevelTable(level, f));
                    tombstones |= tableCache.get(f.number()).properties().rangeDeletions() > 0;
                } else {
                    staying.add(f);
                }
            }
        }
        if (tombstones) {
            for (FileMetaData f : staying) {
                if (holdsEntryIn(f, begin, end)) {
                    chosen.removeIf(
                            t -> tableCache.get(t.file().number()).properties().rangeDeletions() > 0);
                    break;
                }
            }
        }
        return chosen;
    }

    /** Whether {@code f}'s user-key range (its range tombstones included) meets [begin, end) (null: open). */
    private static boolean overlaps(FileMetaData f, byte[] begin, byte[] end) {
        return (begin == null || Arrays.compareUnsigned(f.largestUserKey(), begin) >= 0)
                && (end == null || Arrays.compareUnsigned(f.smallestUserKey(), end) < 0);
    }

    /**
     * Whether table {@code f} holds a point entry of {@code userKey} or a range tombstone covering it: a tombstone
     * ending at {@code userKey || 0x00} covers {@code userKey} and gives the table that largest key too.
     */
    private boolean reachesKey(FileMetaData f, byte[] userKey) {
        return tableCache.get(f.number()).rangeTombstones().maxCovering(userKey, InternalKey.MAX_SEQUENCE) > 0
                || holdsEntryAt(f, userKey);
    }

    /** Whether table {@code f} holds a point entry (a put, delete or merge operand) of {@code userKey}. */
    private boolean holdsEntryAt(FileMetaData f, byte[] userKey) {
        try (InternalIterator it = seek(f, userKey)) {
            return it != null && it.valid() && InternalKey.compareUserKey(it.key(), userKey) == 0;
        }
    }

    /** Whether table {@code f} holds a point entry whose user key is in [from, to) (null bounds: open). */
    private boolean holdsEntryIn(FileMetaData f, byte[] from, byte[] to) {
        try (InternalIterator it = seek(f, from)) {
            return it != null && it.valid() && (to == null || InternalKey.compareUserKey(it.key(), to) < 0);
        }
    }

    /**
     * An iterator over {@code f}'s entries at the first one of a user key at or above {@code from} (null: the first),
     * or null when the table holds range tombstones only. One seek: an index block and a data block at most.
     */
    private InternalIterator seek(FileMetaData f, byte[] from) {
        TableReader r = tableCache.get(f.number());
        if (r.properties().entries() == 0) {
            return null;
        }
        InternalIterator it = r.iterator();
        try {
            if (from == null) {
                it.seekToFirst();
            } else {
                it.seek(InternalKey.forSeek(from, InternalKey.MAX_SEQUENCE));
            }
        } catch (RuntimeException e) {
            it.close();
            throw e;
        }
        return it;
    }
}
