package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The segments of old versions of a {@link BloomKvVersionedStore}, one bloomkv database each, under
 * {@code stateDir/name/}: the counterpart of Kafka's {@code AbstractSegments} (same segment ids,
 * {@code timestamp / segmentInterval}; same names, {@code name.<id * segmentInterval>}; same liveness rule: a
 * segment is live while its id is at least {@code segmentId(streamTime - retention)}). Expired segments are closed
 * and their directories destroyed: expiry costs no write per record. Unlike Kafka's logical segments (one RocksDB
 * instance, found again only when a put touches them), the existing segment directories are opened again when the
 * store opens, so the history kept on disk stays readable after a restart.
 */
final class VersionedSegments {
    private static final Logger LOG = LoggerFactory.getLogger(VersionedSegments.class);

    private final String name;
    private final long retention;
    private final long segmentInterval;
    private final TreeMap<Long, VersionedSegment> segments = new TreeMap<>();
    private File dir;
    private Options options;

    VersionedSegments(String name, long retention, long segmentInterval) {
        this.name = name;
        this.retention = retention;
        this.segmentInterval = segmentInterval;
    }

    long segmentId(long timestamp) {
        return timestamp / segmentInterval;
    }

    String segmentName(long segmentId) {
        return name + "." + segmentId * segmentInterval;
    }

    /** Opens every segment directory found under {@code dir} (created when missing), in id order. */
    void openExisting(File dir, Options options) {
        this.dir = dir;
        this.options = options;
        if (!dir.isDirectory() && !dir.mkdirs()) {
            throw new ProcessorStateException("dir " + dir + " doesn't exist and cannot be created for segments " + name);
        }
        String[] names = dir.list();
        List<Long> ids = new ArrayList<>();
        String prefix = name + ".";
        for (String n : names == null ? new String[0] : names) {
            if (n.startsWith(prefix)) {
                try {
                    ids.add(Long.parseLong(n.substring(prefix.length())) / segmentInterval);
                } catch (NumberFormatException e) {
                    throw new ProcessorStateException("Unable to parse segment id as long from segmentName: " + n, e);
                }
            }
        }
        ids.stream().sorted().forEach(this::getOrCreateSegment);
    }

    VersionedSegment getOrCreateSegment(long segmentId) {
        VersionedSegment s = segments.get(segmentId);
        if (s == null) {
            if (segmentId < 0) {
                throw new IllegalArgumentException("Negative segment IDs are reserved for reserved segments, "
                        + "and should be created through createReservedSegment() instead");
            }
            s = new VersionedSegment(segmentId, dir.toPath().resolve(segmentName(segmentId)), options);
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

    /** Closes and destroys every segment older than the retention at {@code streamTime}. */
    void cleanupExpiredSegments(long streamTime) {
        long minLiveSegment = segmentId(streamTime - retention);
        Iterator<Map.Entry<Long, VersionedSegment>> it = segments.headMap(minLiveSegment, false).entrySet().iterator();
        while (it.hasNext()) {
            VersionedSegment s = it.next().getValue();
            it.remove();
            try {
                s.destroy();
            } catch (RuntimeException e) {
                LOG.error("Error destroying {}", s, e);
            }
        }
    }

    /** Syncs the write-ahead log of every segment written since its last sync. */
    void sync() {
        for (VersionedSegment s : segments.values()) {
            s.sync();
        }
    }

    int size() {
        return segments.size();
    }

    Path directory() {
        return dir.toPath();
    }

    void close() {
        RuntimeException first = null;
        for (VersionedSegment s : segments.values()) {
            try {
                s.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        segments.clear();
        if (first != null) {
            throw first;
        }
    }
}
