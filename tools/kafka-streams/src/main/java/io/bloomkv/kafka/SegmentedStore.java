package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.SharedBlockCache;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.WriteBatch;
import java.io.File;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
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
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The time-segmented byte store under a window or session store (Kafka's
 * abstract segmented bytes store): composite keys of a {@link SegmentedKeySchema} in
 * {@link Segments}, all segments in one bloomkv database per store (segment-prefixed keys).
 *
 * <p>Contract, as Kafka's: the observed stream time is the largest segment timestamp put, removed or
 * restored (not persisted: -1 after a restart, as Kafka's); a put whose segment is older than
 * {@code segmentId(streamTime - retention)} is dropped and counted in the task's {@code dropped-records}
 * sensor ({@code TaskMetrics.droppedRecordsSensor}); reads never return entries older than
 * {@code streamTime - retention + 1} (the time-ordered window store's: {@code streamTime - retention}); fetches go
 * segment by segment (oldest first forward), each segment in its composite key order, filtered by the schema.
 * Writes are serialized; reads are thread-safe (IQ threads).
 * Use after close throws {@link InvalidStateStoreException}; engine failures {@link ProcessorStateException}.
 *
 * <p>Offsets, as the key-value and versioned stores: the store manages its changelog offsets (KIP-1035). A commit
 * writes them and the IQv2 position as records of the store's database ({@link StoreMetadata}, under the format byte
 * {@link StoreKeys#META}, below every segment prefix), after the data they cover, no fsync; with the default options
 * (no write-ahead log, {@link BloomKvStores#defaultSegmentedOptions()}) data and offsets reach disk together when a
 * memtable is flushed, so a crash leaves a committed offset never ahead of the data, from which Kafka restores the
 * changelog. Under EOS a store not closed cleanly is wiped ({@link OpenMarker}).
 *
 * <p>IQv2 consistency, as Kafka's segmented stores: a put and a restore batch change the data and advance the
 * {@link Position} inside the position's monitor, which a query holds (Kafka's {@code StoreQueryUtils}) while it checks
 * the bound, reads and copies the position. Lock order: the position's monitor, then this store's. A query reads
 * through this store's synchronized fetches while it holds the position, so a writer must not hold this store's
 * monitor while it waits for the position's (that order would deadlock a query against a put).
 */
final class SegmentedStore {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentedStore.class);

    private final String name;
    private final String metricsScope;
    private final long retentionPeriod;
    private final long segmentInterval;
    private final SegmentedKeySchema schema;
    /**
     * Reads return entries from {@code observedStreamTime - retentionPeriod + readFloorOffset} on: 1 for Kafka's
     * segmented stores, 0 for its time-ordered window store ({@link #SegmentedStore(String, String, long, long,
     * SegmentedKeySchema, boolean, Options)}).
     */
    private final long readFloorOffset;

    private final Options options;
    private final Set<SegmentIterator> openIterators = ConcurrentHashMap.newKeySet();
    private Segments segments;
    private volatile long observedStreamTime = ConsumerRecord.NO_TIMESTAMP;
    private volatile boolean open;
    private StateStoreContext context;
    /** Replaced at init only; its monitor is taken before this store's by a write (see the class comment). */
    private volatile Position position = Position.emptyPosition();
    /** The committed offsets and the written position, in the database. */
    private final StoreMetadata metadata = new StoreMetadata();
    /** {@code name.open}: under EOS, a store not closed cleanly is wiped ({@link OpenMarker}). */
    private File openMarker;

    private boolean consistencyEnabled;
    private Sensor expiredRecordSensor;
    private BloomKvMetrics metrics;

    SegmentedStore(
            String name,
            String metricsScope,
            long retentionPeriod,
            long segmentInterval,
            SegmentedKeySchema schema,
            Options options) {
        this(name, metricsScope, retentionPeriod, segmentInterval, schema, false, options);
    }

    /**
     * {@code readsFromRetentionEdge}: reads return entries from {@code observedStreamTime - retentionPeriod} on, one
     * millisecond earlier than Kafka's segmented stores, as Kafka's time-ordered window store does (the store its
     * DSL gives windowed aggregations that emit on window close); puts and expiry are the same either way.
     */
    SegmentedStore(
            String name,
            String metricsScope,
            long retentionPeriod,
            long segmentInterval,
            SegmentedKeySchema schema,
            boolean readsFromRetentionEdge,
            Options options) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        this.readFloorOffset = readsFromRetentionEdge ? 0 : 1;
        this.metricsScope = metricsScope;
        this.retentionPeriod = retentionPeriod;
        this.segmentInterval = segmentInterval;
        this.schema = schema;
        this.options = options == null ? BloomKvStores.defaultSegmentedOptions() : options.copy();
    }

    String name() {
        return name;
    }

    boolean isOpen() {
        return open;
    }

    long observedStreamTime() {
        return observedStreamTime;
    }

    /**
     * The options of the store's database: the application's shared block cache and write-buffer budget when
     * configured ({@link BloomKvConfig}), else the options' own block cache and write buffer: a store costs what
     * one key-value store costs however many segments it has (they are key ranges of one database). Tables are
     * partitioned by segment prefix ({@code Options.tablePartitionPrefixLength}).
     */
    private Options segmentOptions(StateStoreContext context) {
        Options o = options.copy();
        if (o.blockCache() == null) {
            SharedBlockCache shared = BloomKvConfig.sharedBlockCache(context.applicationId(), context.appConfigs());
            if (shared != null) {
                o.blockCache(shared).useMmapReads(false);
            } else if (o.blockCacheSize() > 0) {
                // The database's own cache, made here so the store metrics report its capacity and use.
                o.blockCache(new SharedBlockCache(o.blockCacheSize()));
            }
        }
        if (o.writeBufferManager() == null) {
            o.writeBufferManager(BloomKvConfig.sharedWriteBufferManager(context.applicationId(), context.appConfigs()));
        }
        // Flushes and compactions write one segment per table, so an expired segment's tables are removed whole,
        // unread.
        o.tablePartitionPrefixLength(Segment.PREFIX_SIZE);
        return o;
    }

    synchronized void init(StateStoreContext context, StateStore root) {
        if (open) {
            throw new IllegalStateException("store " + name + " is already open");
        }
        this.context = context;
        Options segmentOptions = segmentOptions(context);
        segments = new Segments(name, retentionPeriod, segmentInterval, segmentOptions);
        expiredRecordSensor = TaskMetrics.droppedRecordsSensor(
                Thread.currentThread().getName(),
                context.taskId().toString(),
                ProcessorContextUtils.metricsImpl(context));
        segments.openExisting(context.stateDir(), observedStreamTime);
        try {
            openMarker = OpenMarker.file(context.stateDir(), name);
            OpenMarker.markOpen(openMarker, name, context);
            position = metadata.open(segments.db(), context.stateDir(), name);
        } catch (RuntimeException e) {
            segments.close();
            throw e instanceof BloomKvException ? new ProcessorStateException("store " + name + ": cannot open", e) : e;
        }
        consistencyEnabled = StreamsConfig.InternalConfig.getBoolean(
                context.appConfigs(), StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, false);
        metrics = BloomKvMetrics.registerSegmented(context, metricsScope, name, this::statsOrNull, this::segmentCount);
        metrics.registerBudgets(segmentOptions.blockCache(), segmentOptions.writeBufferManager());
        open = true;
        context.register(root, (RecordBatchingStateRestoreCallback) this::restoreBatch);
    }

    private Stats statsOrNull() {
        Segments s = segments;
        return open && s != null ? s.statsOrNull() : null;
    }

    private synchronized int segmentCount() {
        return open ? segments.size() : 0;
    }

    /** The store's database (tests); null when closed. */
    synchronized io.bloomkv.engine.Db db() {
        return open ? segments.db() : null;
    }

    /** Expired ranges whose table removal waits for a flush (tests). */
    synchronized int pendingRemovals() {
        return segments.pendingRemovals();
    }

    /** Waits for the table deletions expiry submitted (tests). */
    void awaitExpiryDeletions() {
        Segments s;
        synchronized (this) {
            s = segments;
        }
        s.awaitExpiryDeletions();
    }

    /** Range tombstones expiry wrote since open (tests: one per expiry, none per record). */
    synchronized long expiryRangeDeletes() {
        return segments.expiryRangeDeletes();
    }

    /** Tables expiry removed since open, whole and unread (tests). */
    synchronized long expiryTablesDeleted() {
        return segments.expiryTablesDeleted();
    }

    private void checkOpen() {
        if (!open) {
            throw new InvalidStateStoreException("Store " + name + " is currently closed.");
        }
    }

    Position position() {
        return position;
    }

    /**
     * Restores a batch of changelog records (keys are composite keys): stream time first advances to the batch's
     * largest timestamp (expired segments drop first), then the records of live segments go to one WriteBatch
     * (a null value deletes); records of expired segments are skipped.
     */
    void restoreBatch(Collection<ConsumerRecord<byte[], byte[]>> records) {
        // The position advances with the batch written, never ahead of it (a standby answering a bounded query in
        // between would otherwise pass the bound with the batch's data not yet readable).
        Position p = position;
        synchronized (p) {
            restoreBatchLocked(records, p);
        }
    }

    private synchronized void restoreBatchLocked(Collection<ConsumerRecord<byte[], byte[]>> records, Position p) {
        checkOpen();
        long batchBytes = 0;
        for (ConsumerRecord<byte[], byte[]> record : records) {
            observedStreamTime = Math.max(observedStreamTime, schema.segmentTimestamp(record.key()));
            byte[] value = record.value();
            batchBytes +=
                    WriteBatch.putSizeOf(Segment.PREFIX_SIZE + record.key().length, value == null ? 0 : value.length);
        }
        // Sized for every record (those of expired segments are few): the store's reused batch when that is
        // large enough, else one buffer sized once, not one copy per doubling.
        WriteBatch batch = segments.batchFor(batchBytes);
        for (ConsumerRecord<byte[], byte[]> record : records) {
            long segmentId = segments.segmentId(schema.segmentTimestamp(record.key()));
            // Stream time is fixed for the batch, so a segment live here stays live until the batch is written.
            Segment segment = segments.getOrCreateSegmentIfLive(segmentId, observedStreamTime);
            if (segment != null) {
                ChangelogRecordDeserializationHelper.applyChecksAndUpdatePosition(record, consistencyEnabled, p);
                segment.addTo(batch, record.key(), record.value());
            }
        }
        segments.writeBatch(batch);
    }

    /**
     * Puts (null deletes) a stored key: {@link Segment#PREFIX_SIZE} bytes for the segment prefix (filled here), then
     * the composite key, built by the layout in one array ({@code WindowKeyLayout.toStoreKey(gap, ...)}) so the key
     * is copied once on its way to the engine. Dropped and counted when its segment has expired.
     */
    void putStored(byte[] storedKey, byte[] value) {
        Position p = position;
        synchronized (p) { // before this store's monitor: see the class comment
            putStoredLocked(storedKey, value, p);
        }
    }

    private synchronized void putStoredLocked(byte[] storedKey, byte[] value, Position p) {
        checkOpen();
        long timestamp = schema.segmentTimestamp(storedKey);
        observedStreamTime = Math.max(observedStreamTime, timestamp);
        long segmentId = segments.segmentId(timestamp);
        Segment segment = segments.getOrCreateSegmentIfLive(segmentId, observedStreamTime);
        if (segment == null) {
            long now = context instanceof InternalProcessorContext<?, ?> ipc
                    ? ipc.currentSystemTimeMs()
                    : System.currentTimeMillis();
            expiredRecordSensor.record(1.0d, now);
        } else {
            StoreQueryUtils.updatePosition(p, context);
            segment.fillPrefix(storedKey);
            segments.putStored(segment, storedKey, value);
        }
    }

    /** Deletes a stored key (as {@link #putStored}) from its segment if that segment exists (none is created). */
    synchronized void removeStored(byte[] storedKey) {
        checkOpen();
        long timestamp = schema.segmentTimestamp(storedKey);
        observedStreamTime = Math.max(observedStreamTime, timestamp);
        Segment segment = segments.segmentForTimestamp(timestamp);
        if (segment == null) {
            return;
        }
        segment.fillPrefix(storedKey);
        segments.putStored(segment, storedKey, null);
    }

    /**
     * The value of a stored key (as {@link #putStored}; the prefix is filled here), null when absent or older than
     * stream time minus retention.
     */
    byte[] getStored(byte[] storedKey) {
        Segment segment;
        synchronized (this) {
            checkOpen();
            long timestamp = schema.segmentTimestamp(storedKey);
            if (timestamp < observedStreamTime - retentionPeriod + readFloorOffset) {
                return null;
            }
            segment = segments.segmentForTimestamp(timestamp);
        }
        if (segment == null) {
            return null;
        }
        segment.fillPrefix(storedKey);
        try {
            return segment.getStored(storedKey);
        } catch (InvalidStateStoreException e) {
            checkOpen();
            return null; // the segment expired meanwhile
        }
    }

    private long actualFrom(long from) {
        return Math.max(from, observedStreamTime - retentionPeriod + readFloorOffset);
    }

    /** One key's entries in [from, to]: one bounded scan per segment between the key's fixed-size bounds. */
    synchronized KeyValueIterator<Bytes, byte[]> fetch(Bytes key, long from, long to, boolean forward) {
        checkOpen();
        long actualFrom = actualFrom(from);
        if (schema.emptyWhenToBeforeFrom() && to < actualFrom) {
            LOG.debug("Returning no records for key {} as to ({}) < actualFrom ({}) ", key, to, actualFrom);
            return EmptyKeyValueIterator.instance();
        }
        Segment[] search = segments.search(actualFrom, schema.searchUpperTime(to), forward);
        return register(new SegmentIterator(
                this,
                search,
                schema.lowerRangeFixedSize(key, actualFrom),
                schema.upperRangeFixedSize(key, to),
                forward,
                k -> schema.matches(k, key, key, actualFrom, to)));
    }

    /** Entries of keys in [keyFrom, keyTo] (null is open) in [from, to]; empty with a warning when keyFrom > keyTo. */
    synchronized KeyValueIterator<Bytes, byte[]> fetch(
            Bytes keyFrom, Bytes keyTo, long from, long to, boolean forward) {
        checkOpen();
        if (keyFrom != null && keyTo != null && keyFrom.compareTo(keyTo) > 0) {
            LOG.warn("Returning empty iterator for fetch with invalid key range: from > to. "
                    + "This may be due to range arguments set in the wrong order, "
                    + "or serdes that don't preserve ordering when lexicographically comparing the serialized bytes. "
                    + "Note that the built-in numerical serdes do not follow this for negative numbers");
            return EmptyKeyValueIterator.instance();
        }
        long actualFrom = actualFrom(from);
        if (schema.emptyWhenToBeforeFrom() && to < actualFrom) {
            LOG.debug(
                    "Returning no records for keys {}/{} as to ({}) < actualFrom ({}) ",
                    keyFrom,
                    keyTo,
                    to,
                    actualFrom);
            return EmptyKeyValueIterator.instance();
        }
        Segment[] search = segments.search(actualFrom, schema.searchUpperTime(to), forward);
        return register(new SegmentIterator(
                this,
                search,
                schema.lowerRange(keyFrom, actualFrom),
                schema.upperRange(keyTo, to),
                forward,
                k -> schema.matches(k, keyFrom, keyTo, actualFrom, to)));
    }

    /** Every live entry, segment by segment. */
    synchronized KeyValueIterator<Bytes, byte[]> all(boolean forward) {
        checkOpen();
        long actualFrom = actualFrom(0);
        Segment[] search = segments.search(actualFrom, schema.searchUpperTime(Long.MAX_VALUE), forward);
        return register(new SegmentIterator(
                this, search, null, null, forward, k -> schema.matches(k, null, null, actualFrom, Long.MAX_VALUE)));
    }

    /** Every entry with a segment timestamp in [timeFrom, timeTo] (only the segments of that time range are read). */
    synchronized KeyValueIterator<Bytes, byte[]> fetchAll(long timeFrom, long timeTo, boolean forward) {
        checkOpen();
        long actualFrom = actualFrom(timeFrom);
        if (schema.emptyWhenToBeforeFrom() && timeTo < actualFrom) {
            LOG.debug("Returning no records for as timeTo ({}) < actualFrom ({}) ", timeTo, actualFrom);
            return EmptyKeyValueIterator.instance();
        }
        Segment[] search = segments.search(actualFrom, timeTo, forward);
        return register(new SegmentIterator(
                this, search, null, null, forward, k -> schema.matches(k, null, null, actualFrom, timeTo)));
    }

    /**
     * Stream time minus retention (plus one, but for Kafka's time-ordered window store): reads return nothing older.
     */
    long retentionFloor() {
        return observedStreamTime - retentionPeriod + readFloorOffset;
    }

    /** The live segments whose ids cover [timeFrom, timeTo], for callers that scan them one at a time. */
    synchronized List<Segment> segmentsFor(long timeFrom, long timeTo, boolean forward) {
        checkOpen();
        return segments.segments(timeFrom, timeTo, forward);
    }

    /** A scan over one segment (for callers that order each segment's entries themselves). */
    synchronized SegmentIterator scan(Segment segment, SegmentIterator.Filter filter) {
        checkOpen();
        return register(new SegmentIterator(this, new Segment[] {segment}, null, null, true, filter));
    }

    private SegmentIterator register(SegmentIterator it) {
        openIterators.add(it);
        return it;
    }

    void iteratorClosed(SegmentIterator it) {
        openIterators.remove(it);
    }

    /**
     * Writes the position, then flushes the memtable to a table: every write so far is then durable, with or without
     * a WAL. Kafka Streams 4.3 no longer calls it (it commits with {@link #commit(Map)}, which writes no table).
     */
    synchronized void flush() {
        checkOpen();
        try {
            metadata.writePosition(segments.db(), position);
            segments.db().flush();
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": flush failed", e);
        }
        segments.submitFlushedRemovals();
    }

    /**
     * Writes {@code changelogOffsets} (KIP-1035, {@code StateStore.commit}'s contract: an empty map removes every
     * offset, a null value that partition's) and the position into the database, after the data they cover: one write
     * of a few records, no fsync, no file (see the class comment). A no-op once closed.
     */
    synchronized void commit(Map<TopicPartition, Long> changelogOffsets) {
        if (!open) {
            return;
        }
        try {
            metadata.commit(segments.db(), changelogOffsets, position);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("Error while executing commit from store " + name, e);
        }
        segments.submitFlushedRemovals();
    }

    /** The changelog offset last committed for {@code partition}, or null. */
    synchronized Long committedOffset(TopicPartition partition) {
        checkOpen();
        return metadata.committedOffset(partition);
    }

    /**
     * Closes the open iterators, unregisters the gauges, writes the position, closes the database (which, without a
     * WAL, flushes its memtable first) and marks the store closed cleanly. Idempotent.
     */
    synchronized void close() {
        if (!open) {
            return;
        }
        open = false;
        for (SegmentIterator it : new ArrayList<>(openIterators)) {
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
                segments.close();
            }
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": close failed", e);
        }
        OpenMarker.markClosed(openMarker, name);
    }
}
