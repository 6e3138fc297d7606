package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.WriteBatch;
import java.io.File;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.streams.errors.ProcessorStateException;

/**
 * The live segments of one window or session store, all in ONE bloomkv database under
 * {@code stateDir/storeName/} (segment id = timestamp / segmentInterval, Kafka's segment ids and names): each
 * segment is the key range of its id prefix ({@link Segment#prefix}). A segment is live while
 * {@code id >= segmentId(streamTime - retention)}; whenever a put or restore reaches a live segment (and at open),
 * the older ones are dropped together with ONE range tombstone over their key ranges ({@link Db#deleteRange}, as
 * Kafka's versioned store drops its logical segments): no write per expired record. The database's flushes and
 * compactions write one segment per table ({@code Options.tablePartitionPrefixLength}), so expiry then removes the
 * dropped range's tables from the database's file list ({@link Db#deleteFilesInRange} on the shared
 * {@link ExpiryDeletions} thread), as Kafka drops a segment's RocksDB instance: no flush, no compaction, nothing
 * read or rewritten, and the disk holds the live segments only. One database per store (not per segment) means one
 * memtable and one pair of
 * background threads per store however many segments are live, and no database opened or destroyed as stream
 * time passes. The segment ids present are found again at open by one seek per segment.
 * Not thread-safe: the owning store serializes the calls that change it; reads take a copy of the list.
 */
final class Segments {
    private final TreeMap<Long, Segment> segments = new TreeMap<>();
    private final String name;
    private final long retentionPeriod;
    private final long segmentInterval;
    private final Options options;
    private Db db;
    private final ExpiryDeletions deletions;
    /** Range tombstones written by expiry since open (one per expiry that dropped segments). */
    private long expiryRangeDeletes;
    /**
     * Without a write-ahead log: expired ranges (segment ids) whose tables are removed once the memtable holding their
     * tombstone has been flushed, oldest first; {@code flushes} is the database's flush count from which that is so.
     * See {@link #cleanupExpiredSegments}.
     */
    private final java.util.ArrayDeque<PendingRemoval> pendingRemovals = new java.util.ArrayDeque<>();

    private record PendingRemoval(long first, long last, long flushes) {}
    /** The segment of the last lookup: consecutive records mostly fall in one segment (no boxing, no tree walk). */
    private Segment lastSegment;
    /**
     * {@link #segments}' values in id order, replaced (never changed) when a segment is added or dropped, so a fetch
     * finds its few segments without a sorted-map view, boxed bounds or an iterator ({@link #search}).
     */
    private Segment[] ordered = new Segment[0];
    /** The batch of single deletes and of restore batches, reused from write to write. */
    private final ReusableBatch scratch = new ReusableBatch(64);

    /** {@code options}: those of the store's database (shared block cache and write-buffer budget set). */
    Segments(String name, long retentionPeriod, long segmentInterval, Options options) {
        this.name = name;
        this.deletions = new ExpiryDeletions(name);
        this.retentionPeriod = retentionPeriod;
        this.segmentInterval = segmentInterval;
        this.options = options;
    }

    long segmentId(long timestamp) {
        return timestamp / segmentInterval;
    }

    String segmentName(long segmentId) {
        return name + "." + segmentId * segmentInterval;
    }

    Segment segmentForTimestamp(long timestamp) {
        long id = segmentId(timestamp);
        Segment last = lastSegment;
        if (last != null && last.id == id && last.isOpen()) {
            return last;
        }
        Segment s = segments.get(id);
        if (s != null) {
            lastSegment = s;
        }
        return s;
    }

    private Segment getOrCreateSegment(long segmentId) {
        return getOrCreateSegment(segmentId, true);
    }

    /**
     * The segment of {@code segmentId}, created if missing; a new segment writes its marker ({@link Segment#MARKER})
     * unless it was found on disk ({@code create} false: {@link #openExisting}).
     */
    private Segment getOrCreateSegment(long segmentId, boolean create) {
        Segment last = lastSegment;
        if (last != null && last.id == segmentId && last.isOpen()) {
            return last;
        }
        Segment s = segments.get(segmentId);
        if (s == null) {
            s = new Segment(segmentId, segmentName(segmentId), db);
            if (create) {
                s.writeMarker();
            }
            segments.put(segmentId, s);
            reorder();
        }
        lastSegment = s;
        return s;
    }

    private void reorder() {
        ordered = segments.values().toArray(new Segment[0]);
    }

    /** The live segment of {@code segmentId} (created if needed), or null when it is expired at {@code streamTime}. */
    Segment getOrCreateSegmentIfLive(long segmentId, long streamTime) {
        long minLiveSegment = segmentId(streamTime - retentionPeriod);
        if (segmentId < minLiveSegment) {
            return null;
        }
        Segment segment = getOrCreateSegment(segmentId);
        cleanupExpiredSegments(streamTime);
        return segment;
    }

    /**
     * Opens the store's database under {@code stateDir/name}, finds the segments it holds (one seek per segment),
     * then drops those expired at {@code streamTime}.
     */
    void openExisting(File stateDir, long streamTime) {
        File dir = new File(stateDir, name);
        try {
            db = Db.open(dir.toPath(), options);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": cannot open bloomkv database under " + dir, e);
        }
        try (DbIterator it = db.iterator()) {
            // The store's own records (offsets, position: StoreMetadata) sort below every segment prefix.
            it.seek(new byte[] {(byte) (StoreKeys.META + 1)});
            while (it.valid()) {
                // A segment's first key: its marker, or (a database written before markers) its first record.
                long id = Segment.idOf(it.key());
                getOrCreateSegment(id, false);
                if (id == Long.MAX_VALUE) {
                    break;
                }
                it.seek(Segment.prefix(id + 1));
            }
        } catch (BloomKvException e) {
            db.close();
            db = null;
            throw new ProcessorStateException("store " + name + ": cannot read the segments under " + dir, e);
        }
        cleanupExpiredSegments(streamTime);
    }

    /** The open segments whose ids cover [timeFrom, timeTo], oldest first when {@code forward}. */
    List<Segment> segments(long timeFrom, long timeTo, boolean forward) {
        return java.util.Arrays.asList(search(timeFrom, timeTo, forward));
    }

    /**
     * {@link #segments} as a fresh array (the caller owns it): one small allocation per fetch (a store has
     * {@code retention / segmentInterval + 2} segments at most, so a linear walk is as fast as a tree's).
     */
    Segment[] search(long timeFrom, long timeTo, boolean forward) {
        long fromId = segmentId(timeFrom);
        long toId = segmentId(timeTo);
        Segment[] all = ordered;
        int first = 0;
        while (first < all.length && all[first].id < fromId) {
            first++;
        }
        int n = 0;
        for (int i = first; i < all.length && all[i].id <= toId; i++) {
            if (all[i].isOpen()) {
                n++;
            }
        }
        Segment[] out = new Segment[n];
        int j = forward ? 0 : n - 1;
        for (int i = first; i < all.length && all[i].id <= toId; i++) {
            if (all[i].isOpen()) {
                out[j] = all[i];
                j += forward ? 1 : -1;
            }
        }
        return out;
    }

    int size() {
        return segments.size();
    }

    /**
     * Drops every segment older than the oldest live one at {@code streamTime}: marks them closed and removes their
     * key ranges with one range tombstone (the segment ids in between hold nothing, so one tombstone covers them all).
     */
    void cleanupExpiredSegments(long streamTime) {
        long minLiveSegment = segmentId(streamTime - retentionPeriod);
        // The common case, once per record: nothing expired (no sub-map view made).
        if (segments.isEmpty() || segments.firstKey() >= minLiveSegment) {
            return;
        }
        NavigableMap<Long, Segment> expired = segments.headMap(minLiveSegment, false);
        long first = expired.firstKey();
        long last = expired.lastKey();
        for (Segment s : expired.values()) {
            s.markClosed();
        }
        expired.clear();
        reorder();
        // Invisible at once (the tombstone); their tables removed off the stream thread, without a compaction.
        if (!options.disableWal()) {
            Segment.dropRange(db, deletions, first, last, "store " + name);
        } else {
            // Without a WAL the engine would flush the memtable before removing the tables (the tombstone must be
            // durable first). Rather than a flush per expiry, the removal waits for the engine's own flush of the
            // memtable that holds the tombstone: the memtables flush one at a time, oldest first, so that is done
            // once the flush count has grown by the immutable memtables waiting now plus one. (Should the count
            // mislead, deleteFilesInRange still flushes first: the count only decides when, never whether it is safe.)
            Segment.writeTombstone(db, first, last, "store " + name);
            Stats st = db.stats();
            long flushes = st.flushes() + st.immutableMemtables() + 1;
            PendingRemoval tail = pendingRemovals.peekLast();
            if (tail != null && tail.flushes() == flushes) {
                // No flush in between: one removal covers both ranges (the ids between them hold nothing).
                pendingRemovals.pollLast();
                pendingRemovals.addLast(new PendingRemoval(tail.first(), last, flushes));
            } else {
                pendingRemovals.addLast(new PendingRemoval(first, last, flushes));
            }
            submitFlushedRemovals();
        }
        expiryRangeDeletes++;
    }

    /**
     * Hands the pending removals whose tombstone has been flushed to the expiry thread (no WAL; see
     * {@link #cleanupExpiredSegments}). Called at expiry and at every commit, so expired tables go within a commit
     * interval of the flush that made their tombstone durable.
     */
    void submitFlushedRemovals() {
        if (pendingRemovals.isEmpty()) {
            return;
        }
        long flushes;
        try {
            flushes = db.stats().flushes();
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": cannot read the flush count", e);
        }
        while (!pendingRemovals.isEmpty() && pendingRemovals.peekFirst().flushes() <= flushes) {
            submitRemoval(pendingRemovals.pollFirst());
        }
    }

    private void submitRemoval(PendingRemoval p) {
        deletions.submit(db, Segment.prefix(p.first()), Segment.prefix(p.last() + 1));
    }

    /** Expired ranges whose table removal waits for a flush (tests). */
    int pendingRemovals() {
        return pendingRemovals.size();
    }

    /** Writes a batch built with {@link Segment#addTo}. */
    void write(WriteBatch batch) {
        if (batch.count() == 0) {
            return;
        }
        try {
            db.write(batch);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": write failed", e);
        }
    }

    /**
     * An empty batch for {@code bytes} of operations ({@link WriteBatch#putSizeOf} each), to be written with
     * {@link #writeBatch} before the next call: the single puts' scratch batch, reused, when the operations fit the
     * size it is kept at (a restore batch of max.poll.records small records), so its buffer stays under twice that;
     * else a new batch sized once.
     */
    WriteBatch batchFor(long bytes) {
        return scratch.forBytes(bytes);
    }

    /** Writes a batch from {@link #batchFor}, then empties it: a reused batch holds no record between writes. */
    void writeBatch(WriteBatch batch) {
        try {
            write(batch);
        } finally {
            batch.clear();
        }
    }

    /** Puts (a null value deletes) {@code storedKey}, which carries {@code segment}'s prefix, in one write. */
    void putStored(Segment segment, byte[] storedKey, byte[] value) {
        segment.putStored(storedKey, value, scratch.cleared());
        scratch.trim();
    }

    /** Waits for the table deletions expiry submitted (tests). */
    void awaitExpiryDeletions() {
        deletions.awaitIdle();
    }

    long expiryRangeDeletes() {
        return expiryRangeDeletes;
    }

    /** Tables expiry removed since open ({@link Db#deleteFilesInRange}). */
    long expiryTablesDeleted() {
        return deletions.tablesDeleted();
    }

    /** The store's database (tests and metrics); null before open and after close. */
    Db db() {
        return db;
    }

    Stats statsOrNull() {
        Db d = db;
        if (d == null) {
            return null;
        }
        try {
            return d.stats();
        } catch (BloomKvException e) {
            return null;
        }
    }

    /** Marks every segment closed and closes the database (its open iterators too). Idempotent. */
    void close() {
        for (Segment s : segments.values()) {
            s.markClosed();
        }
        segments.clear();
        ordered = new Segment[0];
        lastSegment = null;
        Db d = db;
        if (d != null) {
            // Closing flushes the memtable anyway (no WAL): the waiting removals cost no extra flush now.
            while (!pendingRemovals.isEmpty()) {
                submitRemoval(pendingRemovals.pollFirst());
            }
            deletions.awaitIdle();
        }
        db = null;
        if (d != null) {
            try {
                d.close();
            } catch (BloomKvException e) {
                throw new ProcessorStateException("store " + name + ": close failed", e);
            }
        }
    }
}
