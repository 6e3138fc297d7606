package io.bloomkv.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.FileNames;
import io.bloomkv.engine.internal.version.TableCache;
import io.bloomkv.engine.internal.version.Version;
import io.bloomkv.engine.internal.version.VersionEdit;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@link Db#ingest}: adds table files written outside the database ({@link TableFileWriter}, entries at sequence 0)
 * to its tree (RocksDB's {@code ExternalSstFileIngestionJob}, Pebble's {@code ingest.go}).
 *
 * <p>Steps:
 * <ol>
 *   <li>Outside any lock: open every file with the engine's table reader (a file that is not a valid table is a
 *       {@link CorruptionException}, one with an entry above sequence 0 or files whose key ranges overlap each other
 *       an {@link InvalidArgumentException}); nothing has changed yet.
 *   <li>At the head of the write queue ({@link CommitPipeline#exclusive}; writes wait from here to the end): if a
 *       memtable holds a key in a file's range, flush the memtables and wait for it (or refuse, as
 *       {@link IngestOptions#allowBlockingFlush} says). If no snapshot is open, new snapshots wait until the end.
 *   <li>With compactions paused ({@link Compactor#exclusive}): if no table of any level overlaps any file's range
 *       and no snapshot is open, every file goes, as written at sequence 0, to the last level: nothing older than
 *       sequence 0 exists, and nothing newer holds its keys, so reads and compactions order it correctly. Otherwise
 *       the ingestion takes one fresh sequence number {@code S = lastSequence + 1} and each file is rewritten with
 *       every entry at {@code S} (through the engine's table builder, with the filter of its level) into the deepest
 *       level at or above which nothing overlaps it (level 0 when level 0 does; never a level above the base level,
 *       which dynamic level sizing keeps empty).
 *   <li>Files placed as written are hard-linked ({@link IngestOptions#moveFiles}) or copied into the database under
 *       new table numbers (kept from obsolete-file deletion), synced, with a directory sync.
 *   <li>Commit point: one VersionEdit adding every table (and, when it took one, the last sequence S) appended to
 *       the MANIFEST and synced (new snapshots wait from the publication of S to the install). A crash before it
 *       leaves unnamed tables, deleted by the next open (the database as before); after it, every file is in. An
 *       error before it removes what was written and leaves the database usable; a failed MANIFEST write is a
 *       background error, as for a flush.
 *   <li>With {@code moveFiles}, the original names are deleted last (a failure to delete one is ignored, as RocksDB
 *       does: the data is in the database).
 * </ol>
 *
 * <p>Why rewrite rather than a "global sequence number" recorded in the MANIFEST and substituted by the reader
 * (RocksDB's {@code global_seqno}): no format change, the table reader, compaction, checkpoints, backups and the
 * table dump tool see ordinary tables whose checksums cover their real sequence numbers. The cost, one sequential
 * rewrite, is paid only by a file that overlaps existing keys (or while a snapshot is open); the bulk-loading case,
 * new key ranges, links or copies the file as written.
 */
final class Ingester {
    private final FileSystem fs;
    private final Path dir;
    private final DbState state;
    private final VersionSet versions;
    private final TableCache tableCache;
    private final ObsoleteFiles obsolete;
    private final TableOutputs outputs;
    private final CommitPipeline commits;
    private final Compactor compactor;
    private final SnapshotList snapshots;
    private final Events events;
    /** Whether the database has a merge operator: without one, a file holding merge operands is refused. */
    private final boolean mergeOperator;

    /** One external file: its reader (open until the end) and its user-key range. */
    private record Input(Path path, TableReader reader, byte[] smallest, byte[] largest) {}

    /** What the ingestion decided and wrote. */
    record Result(int files, int rewritten, int linked, long sequence, List<Integer> levels) {}

    Ingester(
            FileSystem fs,
            Path dir,
            DbState state,
            VersionSet versions,
            TableCache tableCache,
            ObsoleteFiles obsolete,
            TableOutputs outputs,
            CommitPipeline commits,
            Compactor compactor,
            SnapshotList snapshots,
            Events events,
            boolean mergeOperator) {
        this.fs = fs;
        this.dir = dir;
        this.state = state;
        this.versions = versions;
        this.tableCache = tableCache;
        this.obsolete = obsolete;
        this.outputs = outputs;
        this.commits = commits;
        this.compactor = compactor;
        this.snapshots = snapshots;
        this.events = events;
        this.mergeOperator = mergeOperator;
    }

    Result run(List<Path> files, IngestOptions options) {
        List<Input> inputs = openAll(files);
        try {
            return commits.exclusive(() -> ingestHeld(inputs, options));
        } finally {
            for (Input in : inputs) {
                in.reader.close();
            }
            // The pass the install put off (it dropped the old Version under the mutex), run here: out of the write
            // queue, whose head the ingestion held (every write waited behind it), and out of the compaction lock.
            obsolete.delete();
        }
    }

    /** Opens and checks every file; sorted by smallest key. */
    private List<Input> openAll(List<Path> files) {
        List<Input> inputs = new ArrayList<>();
        Set<Path> seen = new HashSet<>();
        try {
            for (Path p : files) {
                if (p == null) {
                    throw new InvalidArgumentException("ingest: a file path is null");
                }
                if (!seen.add(p.toAbsolutePath().normalize())) {
                    throw new InvalidArgumentException("ingest: file listed twice: " + p);
                }
                if (!fs.exists(p)) {
                    throw new InvalidArgumentException("ingest: no such file: " + p);
                }
                TableReader r;
                try {
                    r = TableReader.open(fs, p, 0, null, new ReadCounters());
                } catch (IOException e) {
                    throw new BloomKvIOException("ingest: cannot read table file " + p, e);
                }
                inputs.add(new Input(
                        p, r, r.properties().smallestUserKey(), r.properties().largestUserKey()));
                if (r.properties().largestSeq() != 0) {
                    throw new InvalidArgumentException("ingest: " + p + " holds entries above sequence 0 (largest "
                            + r.properties().largestSeq() + "): only files written by TableFileWriter are ingested");
                }
                if (!mergeOperator && r.properties().mergeOperands() > 0) {
                    // Its keys could not be read (Db.checkMergeOperator would refuse the next open): refused whole.
                    throw new InvalidArgumentException(
                            "ingest: " + p + " holds " + r.properties().mergeOperands()
                                    + " merge operands and the database has no merge operator (Options.mergeOperator)");
                }
            }
            inputs.sort(Comparator.comparing(Input::smallest, Arrays::compareUnsigned));
            for (int i = 1; i < inputs.size(); i++) {
                if (Arrays.compareUnsigned(inputs.get(i - 1).largest, inputs.get(i).smallest) >= 0) {
                    throw new InvalidArgumentException("ingest: the key ranges of " + inputs.get(i - 1).path + " and "
                            + inputs.get(i).path + " overlap");
                }
            }
            return inputs;
        } catch (RuntimeException e) {
            for (Input in : inputs) {
                in.reader.close();
            }
            throw e;
        }
    }

    /** At the head of the write queue, mutex held. */
    private Result ingestHeld(List<Input> inputs, IngestOptions options) {
        state.assertHeld();
        if (memtablesOverlap(inputs)) {
            if (!options.allowBlockingFlush()) {
                throw new InvalidArgumentException(
                        "ingest: a memtable holds keys in the files' ranges and " + "allowBlockingFlush is false");
            }
            if (overlaps(state.mem, inputs)) {
                commits.freezeMemTableHeld();
            }
            state.awaitImmutablesFlushed();
            state.throwIfClosingOrFailed("database closed during ingest");
        }
        boolean snapshotsOpen = snapshots.oldest(Long.MAX_VALUE) != Long.MAX_VALUE;
        if (!snapshotsOpen) {
            state.ingestHoldsSnapshots = true;
        }
        state.unlock();
        try {
            return compactor.exclusive(() -> place(inputs, options, snapshotsOpen));
        } catch (RuntimeException e) {
            throw e;
        } catch (IOException e) {
            throw new BloomKvIOException("ingest failed", e);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            state.lock();
            state.ingestHoldsSnapshots = false;
            state.signalChangeHeld();
        }
    }

    /** Mutex held. True when the mutable or an immutable memtable holds a key in some file's range. */
    private boolean memtablesOverlap(List<Input> inputs) {
        if (overlaps(state.mem, inputs)) {
            return true;
        }
        for (MemTable m : state.imms) {
            if (overlaps(m, inputs)) {
                return true;
            }
        }
        return false;
    }

    private static boolean overlaps(MemTable m, List<Input> inputs) {
        // A range tombstone is newer than sequence 0: left in the memtable over a file's range, it would hide the
        // ingested keys, so it counts as an overlap (flushed first; the file is then rewritten above it).
        for (RangeTombstone t : m.rangeTombstones()) {
            for (Input in : inputs) {
                if (java.util.Arrays.compareUnsigned(t.begin(), in.largest) <= 0
                        && java.util.Arrays.compareUnsigned(t.end(), in.smallest) > 0) {
                    return true;
                }
            }
        }
        if (m.isEmpty()) {
            return false;
        }
        try (InternalIterator it = m.iterator()) {
            for (Input in : inputs) {
                it.seek(InternalKey.forSeek(in.smallest, InternalKey.MAX_SEQUENCE));
                if (it.valid() && InternalKey.compareUserKey(it.key(), in.largest) <= 0) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Compactions paused, mutex not held, writes waiting: chooses levels, writes the tables, records them. */
    private Result place(List<Input> inputs, IngestOptions options, boolean snapshotsOpen) throws IOException {
        int n = inputs.size();
        int[] levels = new int[n];
        boolean overlapsTree = false;
        Version v = versions.retainCurrent();
        try {
            for (int i = 0; i < n; i++) {
                levels[i] = targetLevel(v, inputs.get(i));
                overlapsTree |= levels[i] < 0;
                if (levels[i] < 0) {
                    levels[i] = -levels[i] - 1;
                }
            }
        } finally {
            v.release();
        }
        boolean rewrite = overlapsTree || snapshotsOpen;
        long sequence = rewrite ? versions.lastSequence() + 1 : 0;
        VersionEdit edit = new VersionEdit();
        List<FileMetaData> added = new ArrayList<>();
        List<Integer> addedLevels = new ArrayList<>();
        int linked = 0;
        try {
            for (int i = 0; i < n; i++) {
                Input in = inputs.get(i);
                int level = rewrite ? levels[i] : versions.numLevels() - 1;
                FileMetaData meta;
                if (rewrite) {
                    meta = rewrite(in, level, sequence);
                } else {
                    long number = obsolete.newOutput();
                    Path dst = FileNames.tableFile(dir, number);
                    // Recorded before the file exists, so that a failure below deletes what was written.
                    meta = new FileMetaData(
                            number,
                            in.reader.fileSize(),
                            in.reader.properties().smallestKey(),
                            in.reader.properties().largestKey(),
                            in.reader.properties().entries(),
                            0,
                            0);
                    added.add(meta);
                    addedLevels.add(level);
                    if (options.moveFiles() ? Checkpointer.linkOrCopy(fs, in.path, dst) : copyFile(in.path, dst)) {
                        linked++;
                    }
                    tableCache.open(number);
                    edit.addFile(level, meta);
                    continue;
                }
                added.add(meta);
                addedLevels.add(level);
                edit.addFile(level, meta);
            }
            fs.syncDirectory(dir);
        } catch (IOException | RuntimeException e) {
            for (FileMetaData f : added) {
                outputs.discard(f.number(), e);
            }
            throw e;
        }
        if (rewrite) {
            state.lock();
            try {
                // From here readers at the last sequence read at S: a snapshot taken before the tables are installed
                // would read S without them, then with them. New snapshots wait until the end
                // (DbState.ingestHoldsSnapshots, cleared by ingest's finally).
                state.ingestHoldsSnapshots = true;
            } finally {
                state.unlock();
            }
            versions.setLastSequence(sequence);
        }
        try {
            versions.logAndApply(edit);
        } catch (IOException | RuntimeException e) {
            // The edit may be on disk though its sync failed: keep the tables, stop writes (as a failed flush does).
            BloomKvException err = BackgroundErrors.of("ingest: MANIFEST write failed", e);
            state.setBackgroundError("ingest", err);
            events.writesStopped("ingest", err);
            throw e;
        } finally {
            for (FileMetaData f : added) {
                obsolete.released(f.number());
            }
        }
        state.versionChanged(); // the obsolete-file pass this put off runs in run(), once the write queue is left
        for (FileMetaData f : added) {
            events.post(l -> l.onTableFileCreated(new EventListener.TableFileCreatedInfo(
                    FileNames.tableFile(dir, f.number()),
                    f.number(),
                    f.fileSize(),
                    f.entries(),
                    EventListener.TableReason.INGEST)));
        }
        if (options.moveFiles()) {
            for (Input in : inputs) {
                try {
                    fs.delete(in.path);
                } catch (IOException ignored) {
                    // The data is in the database; a leftover original name loses nothing (RocksDB logs and goes on).
                }
            }
        }
        return new Result(n, rewrite ? n : 0, linked, sequence, addedLevels);
    }

    /** Copies a file (synced); false: not linked. */
    private boolean copyFile(Path src, Path dst) throws IOException {
        Checkpointer.copy(fs, src, dst);
        return false;
    }

    /**
     * The deepest level the file may go to with a fresh sequence number: below it nothing overlaps at or above it.
     * Encoded as {@code level} when nothing in the tree overlaps the file, {@code -(level + 1)} when something does.
     */
    private static int targetLevel(Version v, Input in) {
        if (!v.overlapping(0, in.smallest, in.largest).isEmpty()) {
            return -1;
        }
        int target = 0;
        int base = Math.max(1, v.baseLevel());
        for (int level = 1; level < v.numLevels(); level++) {
            if (!v.overlapping(level, in.smallest, in.largest).isEmpty()) {
                return -(target + 1);
            }
            if (level >= base) {
                target = level;
            }
        }
        return target;
    }

    /**
     * Rewrites {@code in} into a new table of {@code level} with every entry and range tombstone at {@code sequence};
     * protected number. A tombstone at {@code sequence} covers only older entries: the file's own entries, now at the
     * same sequence, stay visible (RocksDB's rule for a file's range deletions).
     */
    private FileMetaData rewrite(Input in, int level, long sequence) throws IOException {
        TableOutputs.Output out =
                outputs.newOutput(level, in.reader.properties().entries(), null, in.smallest, in.largest);
        try (InternalIterator it = in.reader.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                byte[] key = it.key();
                out.writer.add(
                        InternalKey.encode(InternalKey.userKey(key), sequence, InternalKey.type(key)), it.value());
            }
            for (RangeTombstone t : in.reader.rangeTombstones().fragments()) {
                out.writer.addRangeTombstone(new RangeTombstone(t.begin(), t.end(), sequence));
            }
        } catch (java.io.UncheckedIOException e) {
            // the table iterator reports read errors unchecked
            out.abandon(e.getCause());
            throw e.getCause();
        } catch (IOException | RuntimeException e) {
            out.abandon(e);
            throw e;
        }
        return out.finish();
    }
}
