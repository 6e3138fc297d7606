package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live segments of one window or session store (Kafka's {@code AbstractSegments} /
 * {@code KeyValueSegments}): segment id = timestamp / segmentInterval, one bloomkv database per segment
 * under {@code stateDir/storeName/storeName.<id * segmentInterval>} (Kafka's segment names). A segment is
 * live while {@code id >= segmentId(streamTime - retention)}; older ones are closed and their directories
 * deleted whenever a put or restore reaches a live segment (and at open), so expiry writes nothing per record.
 * Not thread-safe: the owning store serializes the calls that change it; reads take a copy of the list.
 */
final class Segments {
    private static final Logger LOG = LoggerFactory.getLogger(Segments.class);

    private final TreeMap<Long, Segment> segments = new TreeMap<>();
    private final String name;
    private final long retentionPeriod;
    private final long segmentInterval;
    private final Options options;
    private File dir;

    /** {@code options}: those of every segment database (shared block cache and write-buffer budget set). */
    Segments(String name, long retentionPeriod, long segmentInterval, Options options) {
        this.name = name;
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
        return segments.get(segmentId(timestamp));
    }

    private Segment getOrCreateSegment(long segmentId) {
        Segment s = segments.get(segmentId);
        if (s != null) {
            return s;
        }
        String segmentName = segmentName(segmentId);
        s = Segment.open(segmentId, segmentName, new File(dir, segmentName).toPath(), options);
        Map.Entry<Long, Segment> newest = segments.lastEntry();
        segments.put(segmentId, s);
        if (newest != null && newest.getKey() < segmentId) {
            // Stream time moved into a new segment: the older ones now get late records only. Their memtables
            // go to tables, so idle segments hold no share of the write-buffer budget.
            for (Segment older : segments.headMap(segmentId, false).values()) {
                older.flushMemtable();
            }
        }
        return s;
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

    /** Opens the segments found under {@code stateDir/name} (in id order), then drops those expired at {@code streamTime}. */
    void openExisting(File stateDir, long streamTime) {
        dir = new File(stateDir, name);
        if (dir.isDirectory()) {
            String[] list = dir.list();
            Arrays.stream(list == null ? new String[0] : list)
                    .mapToLong(this::segmentIdFromSegmentName)
                    .filter(id -> id >= 0)
                    .sorted()
                    .forEach(id -> segments.computeIfAbsent(id,
                            k -> Segment.open(k, segmentName(k), new File(dir, segmentName(k)).toPath(), options)));
        } else if (!dir.mkdirs()) {
            throw new ProcessorStateException(String.format("dir %s doesn't exist and cannot be created for segments %s", dir, name));
        }
        cleanupExpiredSegments(streamTime);
    }

    private long segmentIdFromSegmentName(String segmentName) {
        if (segmentName.length() <= name.length() + 1 || !segmentName.startsWith(name) || segmentName.charAt(name.length()) != '.') {
            LOG.warn("Unexpected entry {} in the segment directory {}; it is not a segment and is skipped", segmentName, dir);
            return -1L;
        }
        try {
            return Long.parseLong(segmentName.substring(name.length() + 1)) / segmentInterval;
        } catch (NumberFormatException e) {
            throw new ProcessorStateException("Unable to parse segment id as long from segmentName: " + segmentName, e);
        }
    }

    /** The open segments whose ids cover [timeFrom, timeTo], oldest first when {@code forward}. */
    List<Segment> segments(long timeFrom, long timeTo, boolean forward) {
        long fromId = segmentId(timeFrom);
        long toId = segmentId(timeTo);
        if (fromId > toId) {
            return List.of();
        }
        NavigableMap<Long, Segment> range = segments.subMap(fromId, true, toId, true);
        return openOnes(forward ? range.values() : range.descendingMap().values());
    }

    List<Segment> allSegments(boolean forward) {
        return openOnes(forward ? segments.values() : segments.descendingMap().values());
    }

    private static List<Segment> openOnes(Collection<Segment> values) {
        List<Segment> result = new ArrayList<>(values.size());
        for (Segment s : values) {
            if (s.isOpen()) {
                result.add(s);
            }
        }
        return result;
    }

    /** Closes and deletes every segment older than the oldest live one at {@code streamTime}. */
    void cleanupExpiredSegments(long streamTime) {
        long minLiveSegment = segmentId(streamTime - retentionPeriod);
        Iterator<Map.Entry<Long, Segment>> toRemove = segments.headMap(minLiveSegment, false).entrySet().iterator();
        while (toRemove.hasNext()) {
            Segment segment = toRemove.next().getValue();
            toRemove.remove();
            try {
                segment.destroy();
            } catch (ProcessorStateException e) {
                LOG.error("Error destroying {}", segment, e);
            }
        }
    }

    /** Syncs the WAL of every segment written since the last sync. */
    void syncWal() {
        for (Segment s : segments.values()) {
            s.syncWal();
        }
    }

    /** Closes every segment (their iterators too) and forgets them; every one is tried, the first failure thrown. */
    void close() {
        RuntimeException failure = null;
        for (Segment s : segments.values()) {
            try {
                s.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        segments.clear();
        if (failure != null) {
            throw failure;
        }
    }
}
