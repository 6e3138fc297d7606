package io.bloomkv.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.compaction.Compaction;
import io.bloomkv.engine.internal.compaction.MergeCollapser;
import io.bloomkv.engine.internal.filter.FilterPolicy;
import io.bloomkv.engine.internal.iterator.MergingIterator;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.rangedel.RangeTombstoneList;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableBuilderOptions;
import io.bloomkv.engine.internal.table.TableProperties;
import io.bloomkv.engine.internal.table.TableWriter;
import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.FileNames;
import io.bloomkv.engine.internal.version.TableCache;
import io.bloomkv.engine.internal.version.Version;
import io.bloomkv.engine.internal.version.VersionEdit;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Writes new tables for flushes, recovery and compactions: each gets a number protected from
 * obsolete-file deletion, the block layout and filter of its level, an fsync, and is opened in the
 * table cache before it is recorded. A table that fails is deleted.
 */
final class TableOutputs {
    private final FileSystem fs;
    private final Path dir;
    private final Options options;
    /** Which filter each new table gets (kind and bits per key, by level and the tree's shape). */
    private final FilterPolicy filterPolicy;

    private final VersionSet versions;
    private final TableCache tableCache;
    private final ObsoleteFiles obsolete;
    private final DbCounters counters;
    /** {@link Options#rateLimiter}: shared by every flush and compaction output of the database; null when unlimited. */
    private final RateLimiter rateLimiter;

    TableOutputs(
            FileSystem fs,
            Path dir,
            Options options,
            VersionSet versions,
            TableCache tableCache,
            ObsoleteFiles obsolete,
            DbCounters counters) {
        this.fs = fs;
        this.dir = dir;
        this.options = options;
        this.filterPolicy = new FilterPolicy(options);
        this.versions = versions;
        this.tableCache = tableCache;
        this.obsolete = obsolete;
        this.counters = counters;
        this.rateLimiter = options.rateLimiter() > 0 ? new RateLimiter(options.rateLimiter()) : null;
    }

    /** The rate limiter of table writes, or null. */
    RateLimiter rateLimiter() {
        return rateLimiter;
    }

    /** One table being written; {@link #finish} or {@link #abandon} it. */
    final class Output {
        final long number;
        final Path path;
        final TableWriter writer;

        private Output(int level, long expectedEntries, Compaction job, byte[] smallestUserKey, byte[] largestUserKey)
                throws IOException {
            number = obsolete.newOutput();
            path = FileNames.tableFile(dir, number);
            WritableFile file = null;
            try {
                file = fs.newWritableFile(path);
                if (rateLimiter != null) {
                    file = rateLimiter.limit(file);
                }
                writer = new TableWriter(
                        file,
                        tableOptions(level, expectedEntries, job, smallestUserKey, largestUserKey),
                        Math.max(1, expectedEntries));
            } catch (IOException | RuntimeException e) {
                if (file != null) {
                    try {
                        file.close();
                    } catch (IOException suppressed) {
                        e.addSuppressed(suppressed);
                    }
                }
                obsolete.released(number);
                throw e;
            }
        }

        /**
         * Finishes (fsyncs) the table and opens it in the table cache; the number stays protected
         * until the caller has recorded it and calls {@link ObsoleteFiles#released}. On failure the
         * table is abandoned.
         */
        FileMetaData finish() throws IOException {
            TableProperties props;
            try {
                props = writer.finish();
                writer.close();
                tableCache.open(number);
            } catch (IOException | RuntimeException e) {
                abandon(e);
                throw e;
            }
            return FileMetaData.of(number, props);
        }

        /** Closes, evicts and deletes the table; problems are added to {@code cause}. */
        void abandon(Exception cause) {
            try {
                writer.close();
            } catch (IOException | RuntimeException suppressed) {
                cause.addSuppressed(suppressed);
            }
            discard(number, cause);
        }
    }

    /**
     * Starts a table of {@code level}, written by compaction {@code job}, sized for about {@code expectedEntries} keys
     * within [smallestUserKey, largestUserKey].
     */
    Output newOutput(int level, long expectedEntries, Compaction job, byte[] smallestUserKey, byte[] largestUserKey)
            throws IOException {
        return new Output(level, expectedEntries, job, smallestUserKey, largestUserKey);
    }

    /** Evicts and deletes a finished table that will not be recorded; problems are added to {@code cause}. */
    void discard(long number, Exception cause) {
        tableCache.evict(number);
        try {
            fs.delete(FileNames.tableFile(dir, number));
        } catch (IOException suppressed) {
            cause.addSuppressed(suppressed);
        }
        obsolete.released(number);
    }

    /**
     * Writes {@code m} to a new table of level 0 (counted as flushed bytes) and adds it to {@code edit}; the number stays
     * protected until the caller has applied the edit. Null when {@code m} is empty. No snapshot is open (recovery).
     */
    FileMetaData writeLevel0Table(MemTable m, VersionEdit edit) throws IOException {
        return writeLevel0Table(m, edit, Long.MAX_VALUE);
    }

    /**
     * {@link #writeLevel0Table(MemTable, VersionEdit)} with {@code smallestSnapshot} the oldest sequence a reader may
     * read at. Merge operand chains collapse as in a compaction (RocksDB's flush runs {@code MergeHelper} too), by
     * {@link MergeCollapser}: from a key's newest entry every reader sees, its operands and the value or tombstone under
     * them in this memtable become one full merge; without one (the value may be in a table), adjacent operands are
     * combined where the operator's partial merge accepts. Entries a snapshot still reads on their own are written as
     * they are.
     *
     * <p>Entries no reader can see are not written, as RocksDB's flush (its {@code CompactionIterator}) drops them: an
     * entry under a newer put or delete of its key that every reader sees (sequence {@code <= smallestSnapshot}: an
     * overwritten value), and an entry under a range tombstone of this memtable that every reader sees. The newest
     * entry of a key and the tombstones themselves are always written (they hide older tables' entries), so reads of
     * the table answer as before; a memtable whose keys are rewritten many times (counters, the versioned store's rows)
     * flushes only their last values.
     */
    FileMetaData writeLevel0Table(MemTable m, VersionEdit edit, long smallestSnapshot) throws IOException {
        if (m.isEmpty()) {
            return null;
        }
        byte[] smallest = null;
        byte[] largest = null;
        if (!m.hasNoPointEntries()) {
            try (InternalIterator it = m.iterator()) {
                it.seekToFirst();
                smallest = InternalKey.userKey(it.key());
                it.seekToLast();
                largest = InternalKey.userKey(it.key());
            }
        }
        for (RangeTombstone t : m.rangeTombstones()) { // a table's range includes its range tombstones
            if (smallest == null || Arrays.compareUnsigned(t.begin(), smallest) < 0) {
                smallest = t.begin();
            }
            if (largest == null || Arrays.compareUnsigned(t.largestCoveredBound(), largest) > 0) {
                largest = t.largestCoveredBound();
            }
        }
        Output out = new Output(0, m.entryCount(), null, smallest, largest);
        MergeOperator operator = options.mergeOperator();
        try (MergingIterator it = new MergingIterator(java.util.List.of(m.iterator()))) {
            it.seekToFirst();
            MergeCollapser.Dead dead = null;
            if (!m.rangeTombstones().isEmpty()) {
                // A range tombstone of this memtable that every reader sees hides the older entries it covers (and
                // ends a merge chain as a delete would).
                RangeTombstoneList tombstones = RangeTombstoneList.of(m.rangeTombstones());
                dead = (k, s) -> tombstones.maxCovering(k, smallestSnapshot) > s;
            }
            byte[] keyOfCurrent = null; // an internal key of the user key being written (a stable copy)
            // Sequence of the key's last newer put or delete (-1: none yet); an older entry under it is hidden from
            // every reader when it is at most smallestSnapshot (which is Long.MAX_VALUE in recovery: no reader yet).
            long shadow = -1;
            while (it.valid()) {
                byte[] ik = it.keyNoCopy();
                long seq = InternalKey.sequence(ik);
                ValueType type = InternalKey.type(ik);
                if (keyOfCurrent == null || InternalKey.compareUserKeys(ik, keyOfCurrent) != 0) {
                    keyOfCurrent = ik; // a fresh copy (see below), never changed: no copy of its own
                    shadow = -1;
                }
                byte[] userKey = operator == null ? null : InternalKey.userKey(ik);
                if (operator != null
                        && type == ValueType.MERGE
                        && seq <= smallestSnapshot
                        && (dead == null || !dead.isDead(userKey, seq))) {
                    // Consumes the key's older entries; a deeper table may hold its value, so no full merge onto none.
                    for (MergeCollapser.Out e : MergeCollapser.collapse(it, userKey, operator, true, dead)) {
                        out.writer.add(e.internalKey(), e.value());
                    }
                } else {
                    boolean hidden = shadow >= 0 && shadow <= smallestSnapshot;
                    if (!hidden && dead != null) {
                        hidden = dead.isDead(userKey != null ? userKey : InternalKey.userKey(ik), seq);
                    }
                    if (type != ValueType.MERGE) {
                        shadow = seq; // an operand does not hide the value under it
                    }
                    if (hidden) {
                        it.next();
                    } else {
                        // the key array is the memtable iterator's fresh copy, never reused
                        // (MergingIterator.keyNoCopy):
                        // the writer keeps it instead of copying it twice more
                        byte[] value = it.value();
                        it.next();
                        out.writer.addOwned(ik, value);
                    }
                }
            }
            for (RangeTombstone t : m.rangeTombstones()) {
                out.writer.addRangeTombstone(t);
            }
        } catch (IOException | RuntimeException e) {
            out.abandon(e);
            throw e;
        }
        FileMetaData meta = out.finish();
        counters.flushBytes.add(meta.fileSize());
        edit.addFile(0, meta);
        return meta;
    }

    /**
     * How a table of {@code level} whose user keys lie in [smallestUserKey, largestUserKey] is built: block layout from
     * the options, filter from the {@link FilterPolicy} (with MONKEY it asks what the range overlaps and, for a table of
     * compaction {@code job} (null: a flush), what the tree holds once the job is done).
     */
    TableBuilderOptions tableOptions(
            int level, long expectedEntries, Compaction job, byte[] smallestUserKey, byte[] largestUserKey) {
        FilterPolicy.TableFilter filter =
                filterPolicy.forTable(versions, level, expectedEntries, job, smallestUserKey, largestUserKey);
        return TableBuilderOptions.defaults()
                .blockSize(options.blockSize())
                .restartInterval(options.blockRestartInterval())
                .filterKind(filter.kind())
                .bitsPerKey(filter.bitsPerKey())
                .compression(compressionForLevel(level))
                .prefixLength(options.prefixLength())
                .rangeFilterBitsPerKey(options.rangeFilterBitsPerKey())
                .filterPartitionBytes(filterPartitionBytes(options))
                .creationTime(Math.max(0, Math.floorDiv(options.clock().millis(), 1000L))); // periodicCompaction's age
    }

    /**
     * Target partition size of the point filters written under {@code options}: with a filter memory budget, every
     * table whose filter is larger than one partition is written partitioned (engine/FORMAT.md "Partitioned filter");
     * without one, whole filters as before. Not "only above the cache share": that share is not known when a table is
     * written (it moves with the pins, with the other databases of a {@link SharedFilterBudget}, and with the budget
     * the store is reopened with), and a partitioned filter that ends up pinned costs only a binary search over its
     * top-level index per probe (a few hundred entries for a 64 MiB table) and ~0.5% more memory, where a whole
     * filter that ends up beyond the cache share is not loaded at all and its table is read unfiltered.
     */
    static int filterPartitionBytes(Options options) {
        return options.filterMemoryBudget() > 0 || options.sharedFilterBudget() != null
                ? options.filterPartitionSize()
                : 0;
    }

    /**
     * {@link Options#bottommostCompression()} for a compaction output into {@code level} when no deeper
     * level holds a table now (the bottommost level, as RocksDB defines it); otherwise, and for
     * flushes into level 0, {@link Options#compression()}.
     */
    Compression compressionForLevel(int level) {
        if (level == 0 || options.bottommostCompression() == options.compression()) {
            return options.compression();
        }
        Version v = versions.retainCurrent();
        try {
            for (int deeper = level + 1; deeper < v.numLevels(); deeper++) {
                if (!v.files(deeper).isEmpty()) {
                    return options.compression();
                }
            }
            return options.bottommostCompression();
        } finally {
            v.release();
        }
    }
}
