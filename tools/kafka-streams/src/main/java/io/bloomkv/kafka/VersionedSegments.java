package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.WriteBatch;
import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;

/**
 * The latest values and the segments of old versions of a {@link BloomKvVersionedStore}, all key ranges of ONE
 * bloomkv database under {@code stateDir/name/}: the counterpart of Kafka's {@code LogicalKeyValueSegments} (one
 * RocksDB instance, segment-prefixed keys; same segment ids, {@code timestamp / segmentInterval}; same liveness
 * rule: a segment is live while its id is at least {@code segmentId(streamTime - retention)}).
 *
 * <p>Expired segments are removed as Kafka removes its logical segments: ONE range tombstone over their key ranges
 * (no write per record, nothing read), and no compaction forced: the engine's own compactions drop the covered data
 * as they reach it, and the tables holding only expired segments whole and unread (the database's tables are
 * partitioned by segment prefix, {@code Options.tablePartitionPrefixLength}). The store never reads an expired
 * segment's keys (its reads go through the live segments listed here), so the tombstone is for what the disk holds
 * and for a reopen, not for answers. The segment ids present are found again at open (one seek per segment), so the
 * history kept on disk stays readable after a restart.
 *
 * <p>The live segments are kept in a sorted array (they change once per segment interval, and are searched several
 * times per record): walked by index, without a map view or a list per lookup. Not thread-safe: the store calls it
 * under its lock.
 */
final class VersionedSegments {
    private final String name;
    private final long retention;
    private final long segmentInterval;
    /** The live segments, ids ascending, in {@code [0, count)}. */
    private VersionedSegment[] live = new VersionedSegment[8];

    private int count;
    private Db db;
    private VersionedSegment latest;
    /** Range tombstones written by expiry since open (one per expiry that dropped segments). */
    private long expiryRangeDeletes;

    VersionedSegments(String name, long retention, long segmentInterval) {
        this.name = name;
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
            throw new InvalidStateStoreException("Store " + name + " is currently closed");
        }
        return d;
    }

    /** The latest-value key range. */
    VersionedSegment latest() {
        return latest;
    }

    /** The number of live segments; {@link #at} takes indexes below it. */
    int size() {
        return count;
    }

    /** The live segment at {@code index} (ids ascending). */
    VersionedSegment at(int index) {
        return live[index];
    }

    /** The index of the first live segment whose id is at least {@code id} ({@link #size()} when none). */
    int indexAtOrAbove(long id) {
        int lo = 0;
        int hi = count;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (live[mid].id() < id) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The index of the last live segment whose id is at most {@code id} (-1 when none). */
    int indexAtOrBelow(long id) {
        if (count > 0 && live[count - 1].id() <= id) {
            return count - 1; // the common case: from the newest segment down
        }
        return indexAtOrAbove(id == Long.MAX_VALUE ? id : id + 1) - 1;
    }

    VersionedSegment getOrCreateSegment(long segmentId) {
        if (count > 0 && live[count - 1].id() == segmentId) {
            return live[count - 1]; // the common case: the segment of the newest records
        }
        int i = indexAtOrAbove(segmentId);
        if (i < count && live[i].id() == segmentId) {
            return live[i];
        }
        if (segmentId < 0) {
            throw new IllegalArgumentException("Negative segment IDs are reserved for reserved segments, "
                    + "and should be created through createReservedSegment() instead");
        }
        VersionedSegment s = new VersionedSegment(segmentId, this);
        if (count == live.length) {
            live = Arrays.copyOf(live, count * 2);
        }
        System.arraycopy(live, i, live, i + 1, count - i);
        live[i] = s;
        count++;
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

    /**
     * Drops every segment older than the retention at {@code streamTime}: marks them closed and writes one range
     * tombstone over their key ranges (never the latest values' range, id -1, below them; the ids between them hold
     * nothing). Nothing else: see the class comment.
     */
    void cleanupExpiredSegments(long streamTime) {
        long minLiveSegment = segmentId(streamTime - retention);
        // The common case, once per record: nothing expired.
        if (count == 0 || live[0].id() >= minLiveSegment) {
            return;
        }
        int expired = indexAtOrAbove(minLiveSegment);
        long first = live[0].id();
        long last = live[expired - 1].id();
        for (int i = 0; i < expired; i++) {
            live[i].markClosed();
        }
        System.arraycopy(live, expired, live, 0, count - expired);
        Arrays.fill(live, count - expired, count, null);
        count -= expired;
        try {
            db().deleteRange(Segment.prefix(first), Segment.prefix(last + 1));
        } catch (BloomKvException e) {
            throw new ProcessorStateException(
                    "versioned store " + name + ": cannot drop the expired segments " + first + ".." + last, e);
        }
        expiryRangeDeletes++;
    }

    /** Range tombstones written by expiry since open. */
    long expiryRangeDeletes() {
        return expiryRangeDeletes;
    }

    /** Writes a batch built with {@link VersionedSegment#addTo} (any segments and the latest values, atomically). */
    void write(WriteBatch batch) {
        if (batch.count() > 0) {
            db().write(batch);
        }
    }

    /** The ids of the live segments, oldest first (tests). */
    List<Long> ids() {
        List<Long> ids = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            ids.add(live[i].id());
        }
        return ids;
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

    /** Marks every segment closed and closes the database (which, without a WAL, flushes its memtable first). Idempotent. */
    void close() {
        for (int i = 0; i < count; i++) {
            live[i].markClosed();
        }
        Arrays.fill(live, 0, count, null);
        count = 0;
        if (latest != null) {
            latest.markClosed();
        }
        Db d = db;
        db = null;
        if (d != null) {
            d.close();
        }
    }
}
