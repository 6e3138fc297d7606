package io.bloomkv.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.compaction.Compaction;
import io.bloomkv.engine.internal.compaction.MergeCollapser;
import io.bloomkv.engine.internal.compaction.OutputCutter;
import io.bloomkv.engine.internal.filter.FilterPolicy;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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
    /**
     * {@link Options#rateLimiter}: shared by every flush and compaction output of the database (and, when the options
     * name a limiter, with the other databases given it); null when unlimited.
     */
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
        this.rateLimiter = options.sharedRateLimiter() != null
                ? options.sharedRateLimiter()
                : options.rateLimiter() > 0 ? new RateLimiter(options.rateLimiter()) : null;
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
            this(level, expectedEntries, expectedEntries, job, smallestUserKey, largestUserKey);
        }

        /**
         * {@code hashBufferHint}: the entries the writer's buffer of filter hashes is first sized for (it grows when
         * the table holds more), where {@code expectedEntries} sizes the filter policy's choice.
         */
        private Output(
                int level,
                long expectedEntries,
                long hashBufferHint,
                Compaction job,
                byte[] smallestUserKey,
                byte[] largestUserKey)
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
                        Math.max(1, hashBufferHint));
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
     * Writes {@code m} to new tables of level 0 (counted as flushed bytes) and adds them to {@code edit}; their numbers
     * stay protected until the caller has applied the edit. Empty when {@code m} is empty or everything in it was
     * dropped. No snapshot is open and every range tombstone is kept (recovery: the tables already replayed are not in
     * a Version yet).
     */
    List<FileMetaData> writeLevel0Tables(MemTable m, VersionEdit edit) throws IOException {
        return writeLevel0Tables(m, edit, Long.MAX_VALUE, null);
    }

    /**
     * {@link #writeLevel0Tables(MemTable, VersionEdit)} with {@code smallestSnapshot} the oldest sequence a reader may
     * read at, and {@code below} the Version whose tables lie under {@code m} (null: keep every tombstone).
     *
     * <ul>
     *   <li>Entries a range tombstone of {@code m} hides from every reader (a tombstone at or below
     *       {@code smallestSnapshot}, newer than the entry) are dropped, never written (RocksDB's flush does the same
     *       through its range-deletion aggregator); so are older entries of a key under its newest one that every
     *       reader sees, by the same rule as a compaction (a merge chain collapses, see below).</li>
     *   <li>The tombstones are written fragmented (as a compaction writes them, {@link #tombstonesToWrite}):
     *       every fragment newer than {@code smallestSnapshot}, and the newest one every reader sees, unless no table
     *       of {@code below} overlaps its range (the entries it covered here were dropped, and nothing older holds a
     *       key there: it would hide nothing).</li>
     *   <li>With {@link Options#tablePartitionPrefixLength} n > 0 the output is cut as a compaction's is
     *       ({@link OutputCutter}): one table per partition (keys sharing their first n bytes), holding the partition's
     *       entries and the parts of the tombstones inside the partition; the parts between partitions go to tables of
     *       tombstones only. No table then mixes two partitions, so a range tombstone over whole partitions covers
     *       whole tables, which {@link Db#deleteFilesInRange} removes without writing anything.</li>
     * </ul>
     *
     * Merge operand chains collapse as in a compaction (RocksDB's flush runs {@code MergeHelper} too), by
     * {@link MergeCollapser}: from a key's newest entry every reader sees, its operands and the value or tombstone under
     * them in this memtable become one full merge; without one (the value may be in a table), adjacent operands are
     * combined where the operator's partial merge accepts. Entries a snapshot still reads on their own are written as
     * they are.
     *
     * <p>Entries no reader can see are not written, as RocksDB's flush (its {@code CompactionIterator}) drops them: an
     * entry under a newer put or delete of its key that every reader sees (sequence {@code <= smallestSnapshot}: an
     * overwritten value), and an entry under a range tombstone of this memtable that every reader sees. The newest
     * entry of a key is always written (it hides older tables' entries), and the tombstones as the list above says, so
     * reads answer as before; a memtable whose keys are rewritten many times (counters, the versioned store's rows)
     * flushes only their last values.
     */
    List<FileMetaData> writeLevel0Tables(MemTable m, VersionEdit edit, long smallestSnapshot, Version below)
            throws IOException {
        if (m.isEmpty()) {
            return List.of();
        }
        RangeTombstoneList fragmented = m.rangeTombstoneList();
        MergeCollapser.Dead dead =
                fragmented.isEmpty() ? null : (k, s) -> fragmented.maxCovering(k, smallestSnapshot) > s;
        Level0Writer w = new Level0Writer(
                m.entryCount(), largestUserKey(m), tombstonesToWrite(fragmented, smallestSnapshot, below, -1));
        MergeOperator operator = options.mergeOperator();
        // Keys and values are lent (valid until the iterator moves) and written before it moves: the flush allocates
        // no key or value array per entry (the writer copies keys into buffers of its own, values into the block).
        // The memtable's own iterator, not a merging iterator over it: a compaction is then the merging iterator's
        // first user, so the JIT compiles it once for table iterators instead of first for this one memtable's (and
        // throwing that code away at the first compaction).
        try (InternalIterator it = m.iterator()) {
            it.seekToFirst();
            // The user key being written: a copy of its first bytes, currentLength of them (-1: none yet).
            byte[] current = new byte[64];
            int currentLength = -1;
            // Sequence of the key's last newer put or delete (-1: none yet); an older entry under it is hidden from
            // every reader when it is at most smallestSnapshot (which is Long.MAX_VALUE in recovery: no reader yet).
            long shadow = -1;
            while (it.valid()) {
                byte[] ik = it.lendKey();
                int userLength = InternalKey.userKeyLength(ik);
                long seq = InternalKey.sequence(ik);
                ValueType type = InternalKey.type(ik);
                if (currentLength < 0 || !Arrays.equals(ik, 0, userLength, current, 0, currentLength)) {
                    if (current.length < userLength) {
                        current = new byte[Math.max(userLength, 2 * current.length)];
                    }
                    System.arraycopy(ik, 0, current, 0, userLength);
                    currentLength = userLength;
                    shadow = -1;
                }
                if (operator != null && type == ValueType.MERGE && seq <= smallestSnapshot) {
                    byte[] userKey = InternalKey.userKey(ik);
                    if (dead == null || !dead.isDead(userKey, seq)) {
                        // Consumes the key's older entries; a deeper table may hold its value, so no full merge onto
                        // none.
                        for (MergeCollapser.Out e : MergeCollapser.collapse(it, userKey, operator, true, dead)) {
                            w.add(e.internalKey(), e.value(), false);
                        }
                        continue;
                    }
                }
                boolean hidden = shadow >= 0 && shadow <= smallestSnapshot;
                if (!hidden && dead != null) {
                    hidden = fragmented.maxCovering(ik, userLength, smallestSnapshot) > seq; // as dead.isDead
                }
                if (type != ValueType.MERGE) {
                    shadow = seq; // an operand does not hide the value under it
                }
                if (!hidden) { // hidden from every reader: never written
                    w.add(ik, it.lendValue(), true);
                }
                it.next();
            }
            w.finish();
        } catch (IOException | RuntimeException e) {
            w.abandon(e);
            throw e;
        }
        for (FileMetaData meta : w.written) {
            counters.flushBytes.add(meta.fileSize());
            edit.addFile(0, meta);
        }
        return w.written;
    }

    /** The largest user key of {@code m}'s entries and tombstones (a bound for the filter policy), or null. */
    private static byte[] largestUserKey(MemTable m) {
        byte[] largest = null;
        if (!m.hasNoPointEntries()) {
            try (InternalIterator it = m.iterator()) {
                it.seekToLast();
                largest = InternalKey.userKey(it.key());
            }
        }
        for (RangeTombstone t : m.rangeTombstones()) {
            if (largest == null || Arrays.compareUnsigned(t.largestCoveredBound(), largest) > 0) {
                largest = t.largestCoveredBound();
            }
        }
        return largest;
    }

    /**
     * The range tombstones a flush or a compaction writes (RocksDB's {@code CompactionRangeDelAggregator}), fragmented
     * (start ascending, sequence descending): per fragment, those newer than {@code smallestSnapshot} and the newest one
     * every reader sees (older ones are hidden behind it for every reader), that one only when {@code below} is null or
     * one of its tables below {@code outputLevel} overlaps the fragment (else the entries it covered are gone: a
     * compaction dropped them, or nothing below a flush holds any). A flush passes {@code outputLevel} -1: every level.
     */
    static List<RangeTombstone> tombstonesToWrite(
            RangeTombstoneList tombstones, long smallestSnapshot, Version below, int outputLevel) {
        List<RangeTombstone> out = new ArrayList<>();
        byte[] start = null;
        boolean sawVisibleToAll = false;
        for (RangeTombstone t : tombstones.fragments()) {
            if (start == null || !Arrays.equals(start, t.begin())) {
                start = t.begin();
                sawVisibleToAll = false;
            }
            if (t.sequence() > smallestSnapshot) {
                out.add(t);
            } else if (!sawVisibleToAll) {
                sawVisibleToAll = true;
                if (below == null || below.rangeMayExistBelow(outputLevel, t.begin(), t.end())) {
                    out.add(t);
                }
            }
        }
        return out;
    }

    /**
     * The tables of one flush, in key order. Without partitioning: one table with every entry and tombstone. With
     * prefix length n: a table per partition, and between partitions (and before the first, after the last) a table
     * of the tombstone parts there, if any. {@link #assigned} is where the tombstone parts not yet given to a table
     * start: everything below it went to an earlier table.
     */
    private final class Level0Writer {
        private final int prefixLength = options.tablePartitionPrefixLength();
        private final List<RangeTombstone> tombstones;
        private final long entries;
        private final byte[] largestUserKey;
        final List<FileMetaData> written = new ArrayList<>();
        private Output out;
        private long added;
        /**
         * The current table's partition: a copy of the internal key of its first entry (null without a table, or
         * without partitioning). Every entry of a partition shares its prefix, so its first key stands for all.
         */
        private byte[] partitionKey;
        /** Entries of the current (or, between tables, the last) table; -1 before the first. */
        private long tableEntries = -1;
        /** Lower end of the tombstone parts still to write; null with {@link #assignedAll} false: the key space start. */
        private byte[] assigned;
        /** True once every tombstone part went to a table (the last partition ran to the end of the key space). */
        private boolean assignedAll;

        Level0Writer(long entries, byte[] largestUserKey, List<RangeTombstone> tombstones) {
            this.entries = entries;
            this.largestUserKey = largestUserKey;
            this.tombstones = tombstones;
        }

        /**
         * Adds the next entry (internal key not below the previous one's); {@code lent}: the key and value are valid
         * only during the call (the memtable iterator's, {@code TableWriter.addLent}), else the writer copies the key.
         */
        void add(byte[] internalKey, byte[] value, boolean lent) throws IOException {
            if (out != null && prefixLength > 0 && !samePartition(partitionKey, internalKey, prefixLength)) {
                closeTable();
            }
            if (out == null) {
                byte[] userKey = InternalKey.userKey(internalKey);
                byte[] start = prefixLength > 0 ? OutputCutter.partitionStart(userKey, prefixLength) : null;
                if (start != null) {
                    tombstonesOnly(start); // the parts below this partition
                }
                long remaining = Math.max(1, entries - added);
                // A partition's table holds an unknown share of the remaining entries: its hash buffer starts at the
                // previous partition's size (and grows), not at every entry left per table.
                long hint = tableEntries < 0 ? remaining : Math.min(remaining, Math.max(16, tableEntries));
                out = new Output(0, remaining, hint, null, userKey, largestUserKey);
                tableEntries = 0;
                partitionKey = prefixLength > 0 ? internalKey.clone() : null;
            }
            if (lent) {
                out.writer.addLent(internalKey, value);
            } else {
                out.writer.add(internalKey, value);
            }
            added++;
            tableEntries++;
        }

        /** {@link OutputCutter#samePartition} of the user keys of internal keys {@code a} and {@code b}. */
        private static boolean samePartition(byte[] a, byte[] b, int n) {
            return OutputCutter.samePartition(a, InternalKey.userKeyLength(a), b, InternalKey.userKeyLength(b), n);
        }

        /** Finishes the current table with the tombstone parts of its partition (all of them without partitioning). */
        private void closeTable() throws IOException {
            byte[] end = prefixLength > 0
                    ? OutputCutter.partitionEnd(InternalKey.userKey(partitionKey), prefixLength)
                    : null;
            addParts(out, end);
            Output o = out;
            out = null;
            written.add(o.finish());
        }

        /** Writes the tombstone parts from {@link #assigned} up to {@code end} (null: the end) to a table of their own. */
        private void tombstonesOnly(byte[] end) throws IOException {
            RangeTombstone first = assignedAll ? null : firstPart(end);
            if (first == null) {
                return;
            }
            out = new Output(0, 1, null, first.begin(), largestUserKey);
            addParts(out, end);
            Output o = out;
            out = null;
            written.add(o.finish());
        }

        /** The first tombstone part in [{@link #assigned}, end), or null. */
        private RangeTombstone firstPart(byte[] end) {
            for (RangeTombstone t : tombstones) {
                RangeTombstone part = clip(t, end);
                if (part != null) {
                    return part;
                }
            }
            return null;
        }

        /** Adds the tombstone parts in [{@link #assigned}, end) to {@code o} and moves {@link #assigned} to end. */
        private void addParts(Output o, byte[] end) {
            if (assignedAll) {
                return;
            }
            for (RangeTombstone t : tombstones) {
                RangeTombstone part = clip(t, end);
                if (part != null) {
                    o.writer.addRangeTombstone(part);
                }
            }
            assigned = end;
            assignedAll = end == null;
        }

        /** {@code t} within [{@link #assigned}, end) (null bounds open), or null when nothing of it is. */
        private RangeTombstone clip(RangeTombstone t, byte[] end) {
            byte[] b = assigned != null && Arrays.compareUnsigned(t.begin(), assigned) < 0 ? assigned : t.begin();
            byte[] e = end != null && Arrays.compareUnsigned(t.end(), end) > 0 ? end : t.end();
            if (Arrays.compareUnsigned(b, e) >= 0) {
                return null;
            }
            return b == t.begin() && e == t.end() ? t : new RangeTombstone(b, e, t.sequence());
        }

        /** Finishes the last table and writes the tombstone parts above it. */
        void finish() throws IOException {
            if (out != null) {
                closeTable();
            }
            tombstonesOnly(null);
        }

        /** Deletes the tables written so far (the flush failed): they were never recorded. */
        void abandon(Exception cause) {
            if (out != null) {
                out.abandon(cause);
                out = null;
            }
            for (FileMetaData f : written) {
                discard(f.number(), cause);
            }
        }
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
