package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import java.util.Objects;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * A persistent {@code WindowStore<Bytes, byte[]>} on bloomkv, the counterpart of Kafka Streams'
 * built-in persistent window store (made by {@link BloomKvStores#persistentWindowStore}): windows of a key are
 * stored under {@link WindowKeyLayout} keys in time {@link Segments} of {@code segmentInterval} ms, all segments
 * key ranges of one bloomkv database; expired segments are dropped whole by one range tombstone.
 *
 * <p>Contract, as {@link WindowStore} documents it and Kafka's store behaves: {@code put} with a null value
 * deletes the window (or does nothing when duplicates are retained); with {@code retainDuplicates} every
 * put is kept under its own sequence number and {@code fetch(key, time)} returns the one of the latest
 * sequence number only; windows older than observed stream time minus retention are never returned and
 * puts into expired segments are dropped (counted in the task's {@code dropped-records} metric);
 * time bounds are inclusive; key bounds are inclusive and null is open; fetches return segment by segment,
 * each in the byte order of the stored keys (key, then time); backward variants the exact reverse.
 * Iterators read each segment as of when they reach it, must be closed, and are closed with the store.
 * IQv2: {@code WindowKeyQuery} and {@code WindowRangeQuery} (closed time ranges) with position bounds.
 * Use after close throws {@link InvalidStateStoreException}.
 */
public class BloomKvWindowStore extends SegmentedBytesStoreBase implements WindowStore<Bytes, byte[]> {
    /** The metrics scope of window stores (Kafka's is {@code rocksdb-window}). */
    static final String METRICS_SCOPE = "bloomkv-window";

    /**
     * Which of Kafka's window stores a bloomkv window store answers as: Kafka's DSL gives windowed aggregations that
     * emit on window close its time-ordered window store, every other window store its key-ordered one.
     */
    enum Kind {
        /** Kafka's RocksDB window store: reads return windows from {@code streamTime - retention + 1} on. */
        KEY_ORDERED,
        /**
         * Kafka's time-ordered window store of tumbling and hopping windows emitting on close: reads return windows
         * from {@code streamTime - retention} on; scans keep the key order (a documented difference).
         */
        EMIT_ON_CLOSE,
        /**
         * Kafka's indexed time-ordered window store of sliding windows emitting on close: reads from
         * {@code streamTime - retention} on, and fetchAll / backwardFetchAll in time order (see the constructor).
         */
        EMIT_ON_CLOSE_SLIDING
    }

    private final boolean retainDuplicates;
    private final long windowSize;
    /** fetchAll / backwardFetchAll in time order (see the constructor). */
    private final boolean timeOrderedScans;

    private int seqnum = 0;
    /**
     * The stored key of the last put, refilled by the next put of a key of the same length (puts are serialized; the
     * engine copies the key into its write batch, and nothing keeps this array), so a put builds no key array.
     */
    private byte[] putKey;

    BloomKvWindowStore(
            String name,
            long retentionPeriod,
            long segmentInterval,
            long windowSize,
            boolean retainDuplicates,
            Options options) {
        this(name, retentionPeriod, segmentInterval, windowSize, retainDuplicates, Kind.KEY_ORDERED, options);
    }

    /**
     * {@code kind}: the {@link Kind} of Kafka's store this one answers as. Both emit-on-close kinds read from the
     * retention edge, {@code streamTime - retention}, as Kafka's time-ordered window store (one millisecond earlier
     * than its key-ordered store: a sliding window starting there is still emitted). For
     * {@link Kind#EMIT_ON_CLOSE_SLIDING}, fetchAll and backwardFetchAll return windows by start time, then key, then
     * sequence number, as Kafka's time-ordered window store does (its DSL gives it sliding-window emit-on-window-close
     * aggregations, whose emission order follows that scan; their stores are not cached). Key fetches keep the key
     * order.
     */
    BloomKvWindowStore(
            String name,
            long retentionPeriod,
            long segmentInterval,
            long windowSize,
            boolean retainDuplicates,
            Kind kind,
            Options options) {
        super(new SegmentedStore(
                name,
                METRICS_SCOPE,
                retentionPeriod,
                segmentInterval,
                WindowKeyLayout.INSTANCE,
                kind != Kind.KEY_ORDERED,
                options));
        this.timeOrderedScans = kind == Kind.EMIT_ON_CLOSE_SLIDING;
        this.retainDuplicates = retainDuplicates;
        this.windowSize = windowSize;
    }

    @Override
    public synchronized void put(Bytes key, byte[] value, long windowStartTimestamp) {
        Objects.requireNonNull(key, "key cannot be null");
        // A null value with duplicates retained deletes nothing (each put has its own sequence number).
        if (!(value == null && retainDuplicates)) {
            maybeUpdateSeqnumForDups();
            byte[] stored =
                    WindowKeyLayout.toStoreKey(putKey, Segment.PREFIX_SIZE, key.get(), windowStartTimestamp, seqnum);
            putKey = stored;
            bytes.putStored(stored, value);
        }
    }

    private void maybeUpdateSeqnumForDups() {
        if (retainDuplicates) {
            seqnum = (seqnum + 1) & 0x7FFFFFFF;
        }
    }

    @Override
    public byte[] fetch(Bytes key, long time) {
        Objects.requireNonNull(key, "key cannot be null");
        return bytes.getStored(WindowKeyLayout.toStoreKey(Segment.PREFIX_SIZE, key.get(), time, seqnum));
    }

    @Override
    public WindowStoreIterator<byte[]> fetch(Bytes key, long timeFrom, long timeTo) {
        Objects.requireNonNull(key, "key cannot be null");
        return WindowedIterators.values(bytes.fetch(key, timeFrom, timeTo, true));
    }

    @Override
    public WindowStoreIterator<byte[]> backwardFetch(Bytes key, long timeFrom, long timeTo) {
        Objects.requireNonNull(key, "key cannot be null");
        return WindowedIterators.values(bytes.fetch(key, timeFrom, timeTo, false));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes keyFrom, Bytes keyTo, long timeFrom, long timeTo) {
        return WindowedIterators.windows(bytes.fetch(keyFrom, keyTo, timeFrom, timeTo, true), windowSize);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(
            Bytes keyFrom, Bytes keyTo, long timeFrom, long timeTo) {
        return WindowedIterators.windows(bytes.fetch(keyFrom, keyTo, timeFrom, timeTo, false), windowSize);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> all() {
        return WindowedIterators.windows(bytes.all(true), windowSize);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardAll() {
        return WindowedIterators.windows(bytes.all(false), windowSize);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(long timeFrom, long timeTo) {
        return WindowedIterators.windows(
                timeOrderedScans ? timeOrdered(timeFrom, timeTo, true) : bytes.fetchAll(timeFrom, timeTo, true),
                windowSize);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetchAll(long timeFrom, long timeTo) {
        return WindowedIterators.windows(
                timeOrderedScans ? timeOrdered(timeFrom, timeTo, false) : bytes.fetchAll(timeFrom, timeTo, false),
                windowSize);
    }

    private KeyValueIterator<Bytes, byte[]> timeOrdered(long timeFrom, long timeTo, boolean forward) {
        long actualFrom = Math.max(timeFrom, bytes.retentionFloor());
        if (timeTo < actualFrom) {
            return EmptyKeyValueIterator.instance();
        }
        return new TimeOrderedIterator(
                bytes,
                bytes.segmentsFor(actualFrom, timeTo, forward),
                k -> WindowKeyLayout.INSTANCE.matches(k, null, null, actualFrom, timeTo),
                BloomKvWindowStore::timeFirst,
                forward);
    }

    /** Kafka's time-first window key: {@code [start (8)][key][seqnum (4)]}. */
    private static byte[] timeFirst(byte[] storeKey) {
        int keyLength = storeKey.length - WindowKeyLayout.SUFFIX_SIZE;
        return java.nio.ByteBuffer.allocate(storeKey.length)
                .putLong(WindowKeyLayout.extractTimestamp(storeKey))
                .put(storeKey, 0, keyLength)
                .putInt(WindowKeyLayout.extractSeqnum(storeKey))
                .array();
    }

    /** The observed stream time: the largest window start put, removed or restored (-1 before any). */
    public long observedStreamTime() {
        return bytes.observedStreamTime();
    }
}
