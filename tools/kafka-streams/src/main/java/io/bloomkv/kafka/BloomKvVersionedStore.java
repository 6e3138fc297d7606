package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.SharedBlockCache;
import io.bloomkv.engine.WriteBatch;
import java.io.File;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.ChangelogRecordDeserializationHelper;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorContextUtils;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.processor.internals.metrics.TaskMetrics;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.MultiVersionedKeyQuery;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.ResultOrder;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.state.VersionedRecordIterator;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A persistent {@code VersionedKeyValueStore<Bytes, byte[]>} on bloomkv databases, the counterpart of Kafka Streams'
 * {@code RocksDBVersionedStore} (made by {@link BloomKvStores#persistentVersionedKeyValueStore}), with the same
 * answers to every call.
 *
 * <p>Layout: one bloomkv database per store, as Kafka's store keeps one RocksDB instance. The newest version of each
 * key lives in the latest-value key range ({@link VersionedLatestValue}); older versions live in segments
 * ({@link VersionedSegments}), one key range per {@code segmentInterval} of validTo, a key's versions in one segment
 * packed in one row ({@link VersionedSegmentValue}). A put moves the previous newest version into the segment of
 * its new validTo; the rows a put changes are written as ONE write batch (atomic: Kafka's store writes them one at a
 * time). Segments older than {@code observedStreamTime - historyRetention} are dropped whole (one range tombstone,
 * as Kafka's logical segments; the engine's compactions drop their tables); the latest version of a key never
 * expires.
 *
 * <p>Contract, as {@link VersionedKeyValueStore} documents it and RocksDBVersionedStore behaves: history retention
 * is also the grace period: a put or delete older than {@code observedStreamTime - historyRetention} is not applied
 * (put returns {@link #PUT_RETURN_CODE_NOT_PUT}, delete returns null) and counted in the task's
 * {@code dropped-records} metric; {@code get(key, asOf)} older than that returns the latest version if it is old
 * enough, else null; observed stream time is not persisted (a reopened store starts from none, as Kafka's).
 * Null keys throw NullPointerException; use of a closed store throws InvalidStateStoreException. Thread-safe: every
 * call holds the store's lock (the stream thread writes, IQ threads read).
 *
 * <p>Offsets are managed by the store (KIP-1035), as Kafka 4.3's RocksDB stores do: with the default options
 * ({@link BloomKvStores#defaultKeyValueOptions()}) the database runs without a WAL (Kafka's RocksDB store disables
 * its WAL), and {@link #commit(Map)} writes the committed offsets and the IQv2 position as records of the same
 * database ({@link StoreMetadata}), no fsync: data and offsets reach disk together when the memtable is flushed, so a
 * crash leaves a committed offset never ahead of the data, from which Kafka restores the changelog (replaying it over
 * newer writes gives the same versions). Under EOS a store not closed cleanly is wiped ({@link OpenMarker}).
 *
 * <p>Invariant the reads and out-of-order puts use to skip segments: while a key has a latest version with validFrom
 * {@code T}, every older version of it ends by {@code T} (validTo {@code <= T}: versions never overlap), so no segment
 * after {@code segmentId(T)} holds a row of the key. A search for a version older than the latest starts at that
 * segment instead of the newest one (Kafka's store starts at the newest; the answers are the same, the skipped
 * segments would be point reads that miss). (A put writes its rows atomically; a store written by an earlier version,
 * which wrote the segment row before the latest value, may hold a row of a moved version in a newer segment after a
 * failure in between: that row starts at the old latest's validFrom, after every timestamp such a search looks for,
 * so skipping it changes no answer either.)
 */
public class BloomKvVersionedStore implements VersionedKeyValueStore<Bytes, byte[]> {
    private static final Logger LOG = LoggerFactory.getLogger(BloomKvVersionedStore.class);
    /** A marker for "no version found yet" during a put: not a valid record timestamp. */
    private static final long SENTINEL_TIMESTAMP = Long.MIN_VALUE;

    private final String name;
    private final long historyRetention;
    private final long gracePeriod;
    private final long segmentInterval;
    private final Options options;
    private final VersionedSegments segments;
    private final Set<VersionedRecordIterator<byte[]>> openIterators = ConcurrentHashMap.newKeySet();
    private final DirectClient directClient = new DirectClient();
    private final ReadMemo memo = new ReadMemo();
    private final VersionedRestoreBuffer restoreBuffer;
    private VersionedSegment latest;
    private StateStoreContext context;
    private Sensor expiredRecordSensor;
    private long observedStreamTime = ConsumerRecord.NO_TIMESTAMP;
    private boolean consistencyEnabled;
    private Position position = Position.emptyPosition();
    private BloomKvMetrics metrics;
    /** The committed offsets and the written position, in the database. */
    private final StoreMetadata metadata = new StoreMetadata();
    /** {@code name.open}: under EOS, a store not closed cleanly is wiped ({@link OpenMarker}). */
    private File openMarker;

    private volatile boolean open;

    BloomKvVersionedStore(String name, long historyRetention, long segmentInterval, Options options) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        this.historyRetention = historyRetention;
        // History retention doubles as the grace period, as in Kafka's store.
        this.gracePeriod = historyRetention;
        this.segmentInterval = segmentInterval;
        this.options = options == null ? BloomKvStores.defaultKeyValueOptions() : options.copy();
        this.segments = new VersionedSegments(name, historyRetention, segmentInterval);
        this.restoreBuffer = new VersionedRestoreBuffer(segments, segments::write);
    }

    @Override
    public String name() {
        return name;
    }

    public long historyRetentionMs() {
        return historyRetention;
    }

    public long segmentIntervalMs() {
        return segmentInterval;
    }

    /**
     * Opens the store's database under {@code stateDir/name/} and finds its segments, checks the store was closed
     * cleanly under EOS ({@link OpenMarker}), reads the committed offsets and the position ({@link StoreMetadata}),
     * registers the gauges and a batching restore callback.
     */
    @Override
    public synchronized void init(StateStoreContext context, StateStore root) {
        if (open) {
            throw new IllegalStateException("store " + name + " is already open");
        }
        this.context = context;
        Options o = options.copy();
        if (o.blockCache() == null) {
            SharedBlockCache shared = BloomKvConfig.sharedBlockCache(context.applicationId(), context.appConfigs());
            if (shared != null) {
                o.blockCache(shared).useMmapReads(false);
            }
        }
        if (o.writeBufferManager() == null) {
            // bloomkv.write.buffer.bytes: one memtable budget for every bloomkv store of the application in this JVM.
            o.writeBufferManager(BloomKvConfig.sharedWriteBufferManager(context.applicationId(), context.appConfigs()));
        }
        File stateDir = context.stateDir();
        try {
            segments.openExisting(new File(stateDir, name), o);
            latest = segments.latest();
            openMarker = OpenMarker.file(stateDir, name);
            OpenMarker.markOpen(openMarker, name, context);
            position = metadata.open(segments.db(), stateDir, name);
        } catch (RuntimeException e) {
            closeDatabases();
            throw e instanceof BloomKvException ? new ProcessorStateException("store " + name + ": cannot open", e) : e;
        }
        expiredRecordSensor = TaskMetrics.droppedRecordsSensor(
                Thread.currentThread().getName(),
                context.taskId().toString(),
                ProcessorContextUtils.metricsImpl(context));
        consistencyEnabled = StreamsConfig.InternalConfig.getBoolean(
                context.appConfigs(), StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, false);
        metrics = BloomKvMetrics.register(
                context, BloomKvStore.METRICS_SCOPE, name, () -> open ? segments.statsOrNull() : null);
        metrics.registerBudgets(o.blockCache(), o.writeBufferManager());
        open = true;
        context.register(root, (RecordBatchingStateRestoreCallback) this::restoreBatch);
    }

    private void validateStoreOpen() {
        if (!open) {
            throw new InvalidStateStoreException("Store " + name + " is currently closed");
        }
    }

    private RuntimeException translate(BloomKvException e, String what) {
        if (!open) {
            return new InvalidStateStoreException("Store " + name + " is currently closed");
        }
        return new ProcessorStateException("store " + name + ": " + what + " failed", e);
    }

    @Override
    public synchronized long put(Bytes key, byte[] value, long timestamp) {
        Objects.requireNonNull(key, "key cannot be null");
        validateStoreOpen();
        if (timestamp < observedStreamTime - gracePeriod) {
            expiredRecordSensor.record(1.0d, systemTimeMs());
            LOG.warn("Skipping record for expired put.");
            StoreQueryUtils.updatePosition(position, context);
            return PUT_RETURN_CODE_NOT_PUT;
        }
        observedStreamTime = Math.max(observedStreamTime, timestamp);
        long foundTs;
        try {
            foundTs = doPut(directClient, observedStreamTime, key, value, timestamp);
            directClient.write();
        } catch (BloomKvException e) {
            throw translate(e, "put");
        } finally {
            directClient.discard();
        }
        StoreQueryUtils.updatePosition(position, context);
        return foundTs;
    }

    /** The task's wall-clock time, as Kafka's store records its dropped-records sensor (mock time under test drivers). */
    private long systemTimeMs() {
        return context instanceof InternalProcessorContext<?, ?> ipc
                ? ipc.currentSystemTimeMs()
                : System.currentTimeMillis();
    }

    @Override
    public synchronized VersionedRecord<byte[]> delete(Bytes key, long timestamp) {
        Objects.requireNonNull(key, "key cannot be null");
        validateStoreOpen();
        if (timestamp < observedStreamTime - gracePeriod) {
            expiredRecordSensor.record(1.0d, systemTimeMs());
            LOG.warn("Skipping record for expired delete.");
            return null;
        }
        VersionedRecord<byte[]> existing = get(key, timestamp);
        observedStreamTime = Math.max(observedStreamTime, timestamp);
        try {
            doPut(directClient, observedStreamTime, key, null, timestamp);
            directClient.write();
        } catch (BloomKvException e) {
            throw translate(e, "delete");
        } finally {
            directClient.discard();
        }
        StoreQueryUtils.updatePosition(position, context);
        return existing;
    }

    @Override
    public synchronized VersionedRecord<byte[]> get(Bytes key) {
        Objects.requireNonNull(key, "key cannot be null");
        validateStoreOpen();
        try {
            byte[] raw = memo.read(latest, key);
            return raw == null
                    ? null
                    : new VersionedRecord<>(VersionedLatestValue.value(raw), VersionedLatestValue.timestamp(raw));
        } catch (BloomKvException e) {
            throw translate(e, "get");
        }
    }

    @Override
    public synchronized VersionedRecord<byte[]> get(Bytes key, long asOfTimestamp) {
        Objects.requireNonNull(key, "key cannot be null");
        validateStoreOpen();
        try {
            return getAsOf(key, asOfTimestamp);
        } catch (BloomKvException e) {
            throw translate(e, "get");
        }
    }

    private VersionedRecord<byte[]> getAsOf(Bytes key, long asOfTimestamp) {
        byte[] rawLatest = memo.read(latest, key);
        long newestSegmentTime = Long.MAX_VALUE;
        if (rawLatest != null) {
            long latestTs = VersionedLatestValue.timestamp(rawLatest);
            if (latestTs <= asOfTimestamp) {
                // The newest version never expires.
                return new VersionedRecord<>(VersionedLatestValue.value(rawLatest), latestTs);
            }
            newestSegmentTime = latestTs;
        }
        if (asOfTimestamp < observedStreamTime - historyRetention) {
            // Past the history retention: null, even if a segment still holds the version (predictable answers).
            LOG.warn("Returning null for expired get.");
            return null;
        }
        // Oldest first, from the segment of asOf up to the segment of the latest version's validFrom (no newer segment
        // holds the key: see the class). The version valid at asOf ends after asOf, so it lives in the first segment
        // whose row of the key ends after asOf; the rows before end by asOf. Kafka's store walks the same segments
        // newest first and stops at a row ending by asOf: versions never overlap, so both walks meet the same row
        // and give the same answer, but a key updated often (many versions a segment) is found here by the first
        // read, where the newest-first walk reads every segment between the latest version and asOf.
        long lastId = segments.segmentId(newestSegmentTime);
        for (int i = segments.indexAtOrAbove(segments.segmentId(asOfTimestamp)); i < segments.size(); i++) {
            VersionedSegment segment = segments.at(i);
            if (segment.id() > lastId) {
                break;
            }
            byte[] raw = memo.read(segment, key);
            if (raw == null || VersionedSegmentValue.nextTimestamp(raw) <= asOfTimestamp) {
                continue;
            }
            if (VersionedSegmentValue.minTimestamp(raw) > asOfTimestamp) {
                // The first version ending after asOf starts after it: nothing is valid at asOf.
                return null;
            }
            VersionedSegmentValue.Found f = VersionedSegmentValue.find(raw, asOfTimestamp);
            return f.value() == null ? null : new VersionedRecord<>(f.value(), f.validFrom(), f.validTo());
        }
        return null;
    }

    /**
     * The versions of {@code key} valid at some time in {@code [fromTimestamp, toTimestamp]} (Kafka's
     * {@code RocksDBVersionedStore.get(key, from, to, order)}, the answer to {@link MultiVersionedKeyQuery}): read
     * at once under the store's lock (a consistent view), returned by an iterator the store closes when it closes.
     */
    synchronized VersionedRecordIterator<byte[]> get(
            Bytes key, long fromTimestamp, long toTimestamp, ResultOrder order) {
        Objects.requireNonNull(key, "key cannot be null");
        validateStoreOpen();
        List<VersionedSegment> sources = new ArrayList<>();
        boolean onlyLatest = toTimestamp < observedStreamTime - historyRetention;
        // Newest first; an ascending answer is the same list read backwards.
        sources.add(latest);
        if (!onlyLatest) {
            for (int i = segments.indexAtOrBelow(segments.segmentId(toTimestamp)); i >= 0; i--) {
                sources.add(segments.at(i));
            }
        }
        List<VersionedRecord<byte[]>> newestFirst = new ArrayList<>();
        try {
            for (VersionedSegment s : sources) {
                byte[] raw = s.get(key);
                if (raw == null) {
                    continue;
                }
                if (s == latest) {
                    long ts = VersionedLatestValue.timestamp(raw);
                    if (ts <= toTimestamp) {
                        newestFirst.add(new VersionedRecord<>(VersionedLatestValue.value(raw), ts));
                    }
                } else {
                    for (VersionedSegmentValue.Found f :
                            VersionedSegmentValue.decode(raw).findAll(fromTimestamp, toTimestamp)) {
                        newestFirst.add(new VersionedRecord<>(f.value(), f.validFrom(), f.validTo()));
                    }
                }
            }
        } catch (BloomKvException e) {
            throw translate(e, "get");
        }
        if (order == ResultOrder.ASCENDING) {
            java.util.Collections.reverse(newestFirst);
        }
        ListIterator it = new ListIterator(newestFirst);
        openIterators.add(it);
        return it;
    }

    /** The answer of a multi-versioned query: a list read once, closed by the caller or by the store's close. */
    private final class ListIterator implements VersionedRecordIterator<byte[]> {
        private final List<VersionedRecord<byte[]>> records;
        private int next;
        private volatile boolean closed;

        ListIterator(List<VersionedRecord<byte[]>> records) {
            this.records = records;
        }

        @Override
        public boolean hasNext() {
            if (closed) {
                throw new IllegalStateException("The iterator is out of scope.");
            }
            return next < records.size();
        }

        @Override
        public VersionedRecord<byte[]> next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return records.get(next++);
        }

        @Override
        public void close() {
            closed = true;
            openIterators.remove(this);
        }
    }

    /** The put procedure shared by put, delete and restore (Kafka's {@code doPut}); returns the validTo or a code. */
    private long doPut(VersionedStoreClient client, long streamTime, Bytes key, byte[] value, long timestamp) {
        segments.cleanupExpiredSegments(streamTime);
        long[] found = {SENTINEL_TIMESTAMP};
        if (putToLatest(client, streamTime, key, value, timestamp, found)) {
            return code(found[0]);
        }
        if (putToSegments(client, streamTime, key, value, timestamp, found)) {
            return code(found[0]);
        }
        return code(finishPut(client, streamTime, key, value, timestamp, found[0]));
    }

    private static long code(long foundTs) {
        return foundTs == SENTINEL_TIMESTAMP ? PUT_RETURN_CODE_VALID_TO_UNDEFINED : foundTs;
    }

    /**
     * A put at or after the newest version replaces it (moving it into the segment of its new validTo first, so a
     * failure between the two writes duplicates rather than loses it). Otherwise {@code found[0]} becomes the newest
     * version's timestamp and the search goes on in the segments. Returns whether the put is done.
     */
    private boolean putToLatest(
            VersionedStoreClient client, long streamTime, Bytes key, byte[] value, long timestamp, long[] found) {
        byte[] rawLatest = client.latestValue(key);
        if (rawLatest == null) {
            return false;
        }
        long latestTs = VersionedLatestValue.timestamp(rawLatest);
        if (timestamp < latestTs) {
            found[0] = latestTs;
            return false;
        }
        if (timestamp > latestTs) {
            VersionedSegment segment = client.getOrCreateSegmentIfLive(segments.segmentId(timestamp), streamTime);
            // No live segment: the moved version would already be past the history retention; it is dropped.
            if (segment != null) {
                byte[] moved = VersionedLatestValue.value(rawLatest);
                byte[] rawSegment = client.get(segment, key);
                if (rawSegment == null) {
                    client.put(
                            segment,
                            key,
                            VersionedSegmentValue.withRecord(moved, latestTs, timestamp)
                                    .encode());
                } else {
                    client.put(segment, key, withNewest(rawSegment, latestTs, timestamp, moved));
                }
            }
        }
        if (value != null) {
            client.putLatestValue(key, VersionedLatestValue.encode(value, timestamp));
        } else {
            client.deleteLatestValue(key);
        }
        return true;
    }

    /**
     * {@code rawRow} with the version {@code [validFrom, validTo)} added as its newest: two block copies in the common
     * case ({@link VersionedSegmentValue#withNewest}), else the decoded row's {@code insertAsLatest}.
     */
    private static byte[] withNewest(byte[] rawRow, long validFrom, long validTo, byte[] value) {
        byte[] fast = VersionedSegmentValue.withNewest(rawRow, validFrom, validTo, value);
        if (fast != null) {
            return fast;
        }
        VersionedSegmentValue sv = VersionedSegmentValue.decode(rawRow);
        sv.insertAsLatest(validFrom, validTo, value);
        return sv.encode();
    }

    /** Searches the segments newest first for the one the put belongs in (Kafka's {@code maybePutToSegments}). */
    private boolean putToSegments(
            VersionedStoreClient client, long streamTime, Bytes key, byte[] value, long timestamp, long[] found) {
        // found[0] is the latest version's validFrom when there is one: no segment after its segment holds the key.
        long newestSegmentTime = found[0] == SENTINEL_TIMESTAMP ? Long.MAX_VALUE : found[0];
        long firstId = segments.segmentId(timestamp);
        // Newest first. putToSegment may add a segment to the list, and the loop returns right after it.
        for (int i = segments.indexAtOrBelow(segments.segmentId(newestSegmentTime)); i >= 0; i--) {
            VersionedSegment segment = segments.at(i);
            if (segment.id() < firstId) {
                break;
            }
            byte[] raw = client.get(segment, key);
            if (raw == null) {
                continue;
            }
            long nextTs = VersionedSegmentValue.nextTimestamp(raw);
            if (nextTs <= timestamp) {
                // This segment and older ones hold nothing the put affects: finishPut places it by found[0].
                return false;
            }
            long minTs = VersionedSegmentValue.minTimestamp(raw);
            if (minTs <= timestamp) {
                found[0] = putToSegment(client, streamTime, segment, raw, key, value, timestamp);
                return true;
            }
            if (minTs < streamTime - historyRetention) {
                // The put does not change any history still kept (possible in restore, where stream time runs ahead).
                found[0] = PUT_RETURN_CODE_NOT_PUT;
                return true;
            }
            found[0] = minTs;
        }
        return false;
    }

    /** Puts into the segment row that spans the timestamp; returns the put version's validTo. */
    private long putToSegment(
            VersionedStoreClient client,
            long streamTime,
            VersionedSegment segment,
            byte[] raw,
            Bytes key,
            byte[] value,
            long timestamp) {
        long segmentIdForTimestamp = segments.segmentId(timestamp);
        boolean olderSegmentMaybeNeeded = segmentIdForTimestamp != segment.id();
        VersionedSegmentValue sv = VersionedSegmentValue.decode(raw);
        VersionedSegmentValue.Found f = sv.find(timestamp);
        if (f.validFrom() == timestamp) {
            // Replaces a version: no validTo changes, nothing moves.
            sv.update(timestamp, value, f.index());
            client.put(segment, key, sv.encode());
            return f.validTo();
        }
        if (olderSegmentMaybeNeeded) {
            // The found version's validTo becomes this timestamp, which falls in an older segment: move it there
            // (in the same write as the update below; insertAsLatest reconciles a duplicate an earlier version of
            // the store may have left by a failure in between).
            VersionedSegment older = client.getOrCreateSegmentIfLive(segmentIdForTimestamp, streamTime);
            if (older != null) {
                byte[] rawOlder = client.get(older, key);
                if (rawOlder == null) {
                    client.put(
                            older,
                            key,
                            VersionedSegmentValue.withRecord(f.value(), f.validFrom(), timestamp)
                                    .encode());
                } else {
                    client.put(older, key, withNewest(rawOlder, f.validFrom(), timestamp, f.value()));
                }
            }
            sv.update(timestamp, value, f.index());
            client.put(segment, key, sv.encode());
            return f.validTo();
        }
        sv.insert(timestamp, value, f.index());
        client.put(segment, key, sv.encode());
        return f.validTo();
    }

    /** Places a put that no existing row spans, by the validTo found so far (Kafka's {@code finishPut}). */
    private long finishPut(
            VersionedStoreClient client, long streamTime, Bytes key, byte[] value, long timestamp, long foundTs) {
        if (foundTs == SENTINEL_TIMESTAMP) {
            if (value != null) {
                client.putLatestValue(key, VersionedLatestValue.encode(value, timestamp));
                return foundTs;
            }
            // A tombstone never goes to the latest-value database (it has no expiry): into the segment of its own
            // timestamp, as a degenerate row when the key has none there.
            VersionedSegment segment = client.getOrCreateSegmentIfLive(segments.segmentId(timestamp), streamTime);
            if (segment == null) {
                return PUT_RETURN_CODE_NOT_PUT;
            }
            byte[] raw = client.get(segment, key);
            if (raw == null) {
                client.put(
                        segment,
                        key,
                        VersionedSegmentValue.withRecord(null, timestamp, timestamp)
                                .encode());
            } else {
                long nextTs = VersionedSegmentValue.nextTimestamp(raw);
                if (nextTs == timestamp) {
                    // The row already ends at this timestamp: that end is the tombstone.
                    return foundTs;
                }
                client.put(segment, key, withNewest(raw, nextTs, timestamp, null));
            }
            return foundTs;
        }
        // foundTs is the put's validTo: the put is the newest or the oldest version of that segment's row.
        VersionedSegment segment = client.getOrCreateSegmentIfLive(segments.segmentId(foundTs), streamTime);
        if (segment == null) {
            return PUT_RETURN_CODE_NOT_PUT;
        }
        byte[] raw = client.get(segment, key);
        if (raw == null) {
            client.put(
                    segment,
                    key,
                    VersionedSegmentValue.withRecord(value, timestamp, foundTs).encode());
        } else {
            VersionedSegmentValue sv = VersionedSegmentValue.decode(raw);
            if (VersionedSegmentValue.nextTimestamp(raw) <= timestamp) {
                // A gap after an older degenerate row: newest of the row.
                sv.insertAsLatest(timestamp, foundTs, value);
            } else {
                sv.insertAsEarliest(timestamp, value);
            }
            client.put(segment, key, sv.encode());
        }
        return foundTs;
    }

    /**
     * Restores a changelog batch: stream time first jumps to the batch's newest timestamp (versions that would
     * expire by the batch's end are not written), the puts run on a {@link VersionedRestoreBuffer}, and the
     * buffer is written as one WriteBatch, older segments first, the latest values last.
     */
    synchronized void restoreBatch(Collection<ConsumerRecord<byte[], byte[]>> records) {
        memo.clear();
        long endOfBatchStreamTime = observedStreamTime;
        for (ConsumerRecord<byte[], byte[]> r : records) {
            endOfBatchStreamTime = Math.max(endOfBatchStreamTime, r.timestamp());
        }
        try {
            for (ConsumerRecord<byte[], byte[]> r : records) {
                if (r.timestamp() < observedStreamTime - gracePeriod) {
                    // Older than the grace period: it was never written to the store.
                    continue;
                }
                observedStreamTime = Math.max(observedStreamTime, r.timestamp());
                ChangelogRecordDeserializationHelper.applyChecksAndUpdatePosition(r, consistencyEnabled, position);
                doPut(restoreBuffer.client(), endOfBatchStreamTime, new Bytes(r.key()), r.value(), r.timestamp());
            }
            restoreBuffer.flush();
        } catch (BloomKvException e) {
            throw new ProcessorStateException("Error restoring batch to store " + name, e);
        } finally {
            memo.clear();
        }
    }

    /**
     * Writes the position, then flushes the memtable to a table: every write so far is then durable, with or without
     * a WAL. Kafka Streams 4.3 no longer calls it (it commits with {@link #commit(Map)}, which writes no table).
     */
    @Override
    public synchronized void flush() {
        validateStoreOpen();
        try {
            metadata.writePosition(segments.db(), position);
            segments.db().flush();
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": flush failed", e);
        }
    }

    /**
     * Writes {@code changelogOffsets} (KIP-1035, {@link StateStore#commit}'s contract: an empty map removes every
     * offset, a null value that partition's) and the position into the database, after the data they cover: one
     * write of a few records, no fsync, no file, as Kafka 4.3's RocksDB versioned store writes them to its RocksDB
     * instance's offsets column family with its WAL disabled (see the class comment).
     */
    @Override
    public synchronized void commit(Map<TopicPartition, Long> changelogOffsets) {
        if (!open) {
            return;
        }
        try {
            metadata.commit(segments.db(), changelogOffsets, position);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("Error while executing commit from store " + name, e);
        }
    }

    @Deprecated
    @Override
    public boolean managesOffsets() {
        return true;
    }

    @Override
    public synchronized Long committedOffset(TopicPartition partition) {
        validateStoreOpen();
        return metadata.committedOffset(partition);
    }

    /**
     * Closes the open iterators, unregisters the gauges, writes the position, closes the database (which, without a
     * WAL, flushes its memtable first) and marks the store closed cleanly. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (!open) {
            return;
        }
        open = false;
        memo.clear();
        for (VersionedRecordIterator<byte[]> it : new ArrayList<>(openIterators)) {
            it.close();
        }
        openIterators.clear();
        if (metrics != null) {
            metrics.remove();
            metrics = null;
        }
        try {
            try {
                metadata.writePosition(segments.db(), position);
            } finally {
                closeDatabases();
            }
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": close failed", e);
        }
        OpenMarker.markClosed(openMarker, name);
    }

    private void closeDatabases() {
        latest = null;
        segments.close();
    }

    @Override
    public boolean persistent() {
        return true;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    /**
     * IQv2: {@code VersionedKeyQuery} through Kafka's handler; {@link MultiVersionedKeyQuery} answered here (Kafka's
     * handler only knows its RocksDB store), with the same position-bound check and the same answers.
     */
    @Override
    @SuppressWarnings("unchecked")
    public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
        if (!(query instanceof MultiVersionedKeyQuery)) {
            // The store's lock before the position's, the order put takes them in.
            synchronized (this) {
                return StoreQueryUtils.handleBasicQueries(query, positionBound, config, this, position, context);
            }
        }
        long start = config.isCollectExecutionInfo() ? System.nanoTime() : -1L;
        QueryResult<R> result;
        synchronized (this) {
            if (context == null
                    || !StoreQueryUtils.isPermitted(
                            position, positionBound, context.taskId().partition())) {
                result = QueryResult.notUpToBound(
                        position,
                        positionBound,
                        context == null ? null : context.taskId().partition());
            } else {
                MultiVersionedKeyQuery<Bytes, byte[]> q = (MultiVersionedKeyQuery<Bytes, byte[]>) query;
                try {
                    result = (QueryResult<R>) QueryResult.forResult(get(
                            q.key(),
                            q.fromTime().get().toEpochMilli(),
                            q.toTime().get().toEpochMilli(),
                            q.resultOrder()));
                } catch (RuntimeException e) {
                    result = QueryResult.forFailure(
                            FailureReason.STORE_EXCEPTION,
                            "Failed to query store " + name + " with " + query + ": " + e);
                }
            }
            if (config.isCollectExecutionInfo()) {
                result.addExecutionInfo("Handled in " + getClass() + " in " + (System.nanoTime() - start) + "ns");
            }
            result.setPosition(position.copy());
        }
        return result;
    }

    @Override
    public Position getPosition() {
        return position;
    }

    /**
     * The store's database as the put procedure sees it: the rows a put changes are gathered into one write batch
     * (reused from put to put), written by {@link #write()} when the procedure is done; until then the procedure reads
     * its own writes from here (it reads each row before it writes it, so this is a guard, not a path it relies on).
     */
    private final class DirectClient implements VersionedStoreClient {
        /** A batch that grew past this (a large row) is let go rather than kept for the store's lifetime. */
        private static final int KEEP_BYTES = 64 << 10;

        private WriteBatch batch = new WriteBatch();
        private byte[] keyScratch;
        /** The rows written by the current put (a put writes at most three), in order; a null row is a delete. */
        private VersionedSegment[] writtenIn = new VersionedSegment[4];

        private Bytes[] writtenKey = new Bytes[4];
        private byte[][] writtenRow = new byte[4][];
        private int written;

        @Override
        public byte[] latestValue(Bytes key) {
            return get(latest, key);
        }

        @Override
        public void putLatestValue(Bytes key, byte[] value) {
            put(latest, key, value);
        }

        @Override
        public void deleteLatestValue(Bytes key) {
            put(latest, key, null);
        }

        @Override
        public VersionedSegment getOrCreateSegmentIfLive(long segmentId, long streamTime) {
            return segments.getOrCreateSegmentIfLive(segmentId, streamTime);
        }

        @Override
        public byte[] get(VersionedSegment segment, Bytes key) {
            for (int i = written - 1; i >= 0; i--) {
                if (writtenIn[i] == segment && writtenKey[i].equals(key)) {
                    return writtenRow[i];
                }
            }
            return memo.read(segment, key);
        }

        @Override
        public void put(VersionedSegment segment, Bytes key, byte[] row) {
            keyScratch = segment.addTo(batch, key, row, keyScratch);
            if (written == writtenIn.length) {
                writtenIn = java.util.Arrays.copyOf(writtenIn, written * 2);
                writtenKey = java.util.Arrays.copyOf(writtenKey, written * 2);
                writtenRow = java.util.Arrays.copyOf(writtenRow, written * 2);
            }
            writtenIn[written] = segment;
            writtenKey[written] = key;
            writtenRow[written] = row;
            written++;
        }

        /** Writes the gathered rows as one atomic write. */
        void write() {
            segments.write(batch);
        }

        /**
         * Empties the batch and forgets the rows (after {@link #write()}, or when the put failed), and the rows the
         * reads before the put memoized (the put may have changed them).
         */
        void discard() {
            memo.clear();
            if (batch.approximateSize() > KEEP_BYTES) {
                batch = new WriteBatch();
            } else {
                batch.clear();
            }
            java.util.Arrays.fill(writtenIn, 0, written, null);
            java.util.Arrays.fill(writtenKey, 0, written, null);
            java.util.Arrays.fill(writtenRow, 0, written, null);
            written = 0;
        }
    }

    /**
     * The rows the last reads of ONE key found (the latest value and segment rows; absent ones too), valid until the
     * store next writes: a put that follows reads of the same key (a versioned table's get then put, a lookup as of
     * an earlier time then the put) finds them here instead of searching the memtable again. Used under the store's
     * lock; every write path clears it (a put or delete when done, a restored batch, close), so a memoized row is
     * always the row in the database.
     */
    private static final class ReadMemo {
        private static final int SIZE = 4;
        private Bytes key;
        private final VersionedSegment[] segment = new VersionedSegment[SIZE];
        private final byte[][] row = new byte[SIZE][];
        private int count;

        /** The row of {@code key} in {@code s}: memoized, else read from the database and memoized. */
        byte[] read(VersionedSegment s, Bytes k) {
            if (k.equals(key)) {
                for (int i = 0; i < count; i++) {
                    if (segment[i] == s) {
                        return row[i];
                    }
                }
            } else {
                clear();
                key = k;
            }
            byte[] r = s.get(k);
            if (count < SIZE) {
                segment[count] = s;
                row[count] = r;
                count++;
            }
            return r;
        }

        void clear() {
            java.util.Arrays.fill(segment, 0, count, null);
            java.util.Arrays.fill(row, 0, count, null);
            count = 0;
            key = null;
        }
    }

    /** Number of live segments now (for tests and metrics). */
    synchronized int segmentCount() {
        return segments.size();
    }

    /** Range tombstones written by expiry since open (tests). */
    synchronized long expiryRangeDeletes() {
        return segments.expiryRangeDeletes();
    }

    /** The ids of the live segments, oldest first (tests). */
    synchronized List<Long> segmentIds() {
        return segments.ids();
    }

    /** The store's one database (tests); throws when closed. */
    synchronized io.bloomkv.engine.Db db() {
        return segments.db();
    }

    @Override
    public String toString() {
        return "BloomKvVersionedStore[" + name + (open ? ", open" : ", closed") + "]";
    }
}
