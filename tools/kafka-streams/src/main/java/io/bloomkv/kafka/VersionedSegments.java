package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.WriteBatch;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.streams.errors.ProcessorStateException;

/**
 * The latest values and the segments of old versions of a {@link BloomKvVersionedStore}, all key ranges of ONE
 * bloomkv database under {@code stateDir/name/}: the counterpart of Kafka's {@code LogicalKeyValueSegments} (one
 * RocksDB instance, segment-prefixed keys; same segment ids, {@code timestamp / segmentInterval}; same liveness
 * rule: a segment is live while its id is at least {@code segmentId(streamTime - retention)}). Expired segments are
 * removed with one range tombstone over their key ranges, then their tables are removed from the database's file list
 * ({@link Db#deleteFilesInRange}): the database's flushes and compactions write one segment per table
 * ({@code Options.tablePartitionPrefixLength}), so expiry reads and writes nothing per record. The segment ids present are found again at
 * open (one seek per segment), so the history kept on disk stays readable after a restart.
 */
final class VersionedSegments {
    private final String name;
    private final long retention;
    private final long segmentInterval;
    private final TreeMap<Long, VersionedSegment> segments = new TreeMap<>();
    private Db db;
    private final ExpiryDeletions deletions;
    private VersionedSegment latest;
    /** Written since the last WAL sync. */
    private boolean dirty;

    VersionedSegments(String name, long retention, long segmentInterval) {
        this.name = name;
        this.deletions = new ExpiryDeletions(name);
        this.retention = retention;
        this.segmentInterval = segmentInterval;
    }

    long segmentId(long timestamp) {
        return timestamp / segmentInterval;
    }

    /** Opens the database under {@code dir} (created when missing) and finds the segments it holds, in id order. */
    void openExisting(File dir, Options options) {
        Options o = options.copy().tablePartitionPrefixLength(Segment.PREFIX_SIZE);
        db = Db.open(dir.toPath(), o);
        latest = new VersionedSegment(VersionedSegment.LATEST_ID, this);
        try (DbIterator it = db.iterator()) {
            it.seek(Segment.prefix(0));
            while (it.valid()) {
                long id = Segment.idOf(it.key());
                getOrCreateSegment(id);
                if (id == Long.MAX_VALUE) {
                    break;
                }
                it.seek(Segment.prefix(id + 1));
            }
        } catch (BloomKvException e) {
            close();
            throw new ProcessorStateException("versioned store " + name + ": cannot read the segments under " + dir, e);
        }
    }

    Db db() {
        Db d = db;
        if (d == null) {
            throw new org.apache.kafka.streams.errors.InvalidStateStoreException(
                    "Store " + name + " is currently closed");
        }
        return d;
    }

    /** The latest-value key range. */
    VersionedSegment latest() {
        return latest;
    }

    void written() {
        dirty = true;
    }

    VersionedSegment getOrCreateSegment(long segmentId) {
        VersionedSegment s = segments.get(segmentId);
        if (s == null) {
            if (segmentId < 0) {
                throw new IllegalArgumentException("Negative segment IDs are reserved for reserved segments, "
                        + "and should be created through createReservedSegment() instead");
            }
            s = new VersionedSegment(segmentId, this);
            segments.put(segmentId, s);
        }
        return s;
    }

    /** The segment, created if needed, or null when it is older than the retention at {@code streamTime}. */
    VersionedSegment getOrCreateSegmentIfLive(long segmentId, long streamTime) {
        long minLiveSegment = segmentId(streamTime - retention);
        if (segmentId >= minLiveSegment) {
            VersionedSegment s = getOrCreateSegment(segmentId);
            cleanupExpiredSegments(streamTime);
            return s;
        }
        return null;
    }

    /** The open segments whose ids lie in {@code [segmentId(timeFrom), segmentId(timeTo)]}, in time order or reversed. */
    List<VersionedSegment> segments(long timeFrom, long timeTo, boolean forward) {
        long from = segmentId(timeFrom);
        long to = segmentId(timeTo);
        if (from > to) {
            return List.of();
        }
        NavigableMap<Long, VersionedSegment> range = segments.subMap(from, true, to, true);
        return new ArrayList<>((forward ? range : range.descendingMap()).values());
    }

    /**
     * Drops every segment older than the retention at {@code streamTime}: one range tombstone over their key ranges
     * (never the latest values' range, id -1, below them), then their tables removed unread ({@link ExpiryDeletions}).
     */
    void cleanupExpiredSegments(long streamTime) {
        long minLiveSegment = segmentId(streamTime - retention);
        NavigableMap<Long, VersionedSegment> expired = segments.headMap(minLiveSegment, false);
        if (expired.isEmpty()) {
            return;
        }
        long first = expired.firstKey();
        long last = expired.lastKey();
        for (VersionedSegment s : expired.values()) {
            s.markClosed();
        }
        expired.clear();
        Segment.dropRange(db, deletions, first, last, "versioned store " + name);
        dirty = true;
    }

    /** Writes a batch built with {@link VersionedSegment#addTo} (any segments and the latest values, atomically). */
    void write(WriteBatch batch) {
        if (batch.count() > 0) {
            db().write(batch);
            dirty = true;
        }
    }

    /** Syncs the write-ahead log when something was written since the last sync. */
    void sync() {
        if (dirty) {
            db().syncWal();
            dirty = false;
        }
    }

    /** Waits for the table deletions expiry submitted (tests). */
    void awaitExpiryDeletions() {
        deletions.awaitIdle();
    }

    /** Tables expiry removed since open ({@link Db#deleteFilesInRange}). */
    long expiryTablesDeleted() {
        return deletions.tablesDeleted();
    }

    int size() {
        return segments.size();
    }

    /** The ids of the live segments, oldest first (tests). */
    List<Long> ids() {
        return new ArrayList<>(segments.keySet());
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

    /** Marks every segment closed and closes the database. Idempotent. */
    void close() {
        for (VersionedSegment s : segments.values()) {
            s.markClosed();
        }
        segments.clear();
        if (latest != null) {
            latest.markClosed();
        }
        Db d = db;
        if (d != null) {
            deletions.awaitIdle();
        }
        db = null;
        if (d != null) {
            d.close();
        }
    }
}
