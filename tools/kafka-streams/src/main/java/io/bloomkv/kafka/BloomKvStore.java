package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.ReadOptions;
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
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.ChangelogRecordDeserializationHelper;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A persistent {@code KeyValueStore<Bytes, byte[]>} on one bloomkv database, the drop-in counterpart
 * of Kafka Streams' built-in persistent key-value store (made by {@link BloomKvStores}).
 *
 * <p>Contract, as {@link KeyValueStore} documents it: a null value deletes; null keys throw
 * {@link NullPointerException}; range bounds are inclusive, null is open, {@code from > to} gives an
 * empty iterator and a logged warning; iterators read the store as of their creation (never a
 * {@code ConcurrentModificationException}) and must be closed (closing the store closes them).
 * {@link #commit(Map)} writes the changelog offsets, which the store manages itself (KIP-1035), and the IQv2
 * {@link Position} into its own database beside the data ({@link StoreMetadata}), no fsync: with the default
 * {@code Options.disableWal} (Kafka's RocksDB store disables its WAL too) data and offsets reach disk together when a
 * memtable is flushed, and a crash leaves a committed offset that is never ahead of the data, from which Kafka restores
 * the changelog. {@link #flush()} flushes the memtable to a table (durable without a WAL). Data lives under
 * {@code stateDir/name}. Thread-safe (the stream thread writes, IQ threads read); writes are serialized. Engine failures surface as {@link ProcessorStateException}, use after
 * close as {@link InvalidStateStoreException}.
 *
 * <p>IQv2 consistency, as Kafka's {@code RocksDBStore}: every write (put, putAll, delete, a restore batch) changes the
 * data and advances the {@link Position} inside the position's monitor, which {@link #query} holds while it checks the
 * bound, reads and copies the position, so a result's position is that of the data it read. Lock order: this store's
 * monitor, then the position's; a query takes the position's alone (reads take no store monitor).
 */
public class BloomKvStore implements KeyValueStore<Bytes, byte[]> {
    private static final Logger LOG = LoggerFactory.getLogger(BloomKvStore.class);
    /** The scope of the store's metrics tags ({@code bloomkv-state-id}). */
    static final String METRICS_SCOPE = "bloomkv";

    private final String name;
    private final Options options;
    private final Set<BloomKvIterator> openIterators = ConcurrentHashMap.newKeySet();
    private volatile Db db;
    private volatile boolean open;

    private StateStoreContext context;
    /** Replaced at init only; its monitor guards a write with its position update (see the class comment). */
    private volatile Position position = Position.emptyPosition();

    private boolean consistencyEnabled;
    private BloomKvMetrics metrics;
    /** The committed offsets and the written position, in the database. */
    private final StoreMetadata metadata = new StoreMetadata();
    /** The restore's reused batch (guarded by this store's monitor; empty between restore batches), made on first use. */
    private final ReusableBatch restoreScratch = new ReusableBatch(ReusableBatch.KEEP_BYTES + 16);
    /** {@code name.open}: under EOS, a store not closed cleanly is wiped ({@link OpenMarker}). */
    private File openMarker;

    BloomKvStore(String name, Options options) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        this.options = options == null ? BloomKvStores.defaultKeyValueOptions() : options.copy();
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * Opens (or creates) the database under {@code stateDir/name}, reads the checkpointed position,
     * registers the gauges and a batching restore callback (each restored batch is one WriteBatch).
     */
    @Override
    public synchronized void init(StateStoreContext context, StateStore root) {
        if (open) {
            throw new IllegalStateException("store " + name + " is already open");
        }
        this.context = context;
        File stateDir = context.stateDir();
        Options o = options.copy();
        if (o.blockCache() == null) {
            SharedBlockCache shared = BloomKvConfig.sharedBlockCache(context.applicationId(), context.appConfigs());
            if (shared != null) {
                // The application asked for a bounded cache of blocks: read with pread so the blocks go through it
                // (mapped tables of uncompressed blocks skip the block cache; Options.useMmapReads).
                o.blockCache(shared).useMmapReads(false);
            }
        }
        if (o.writeBufferManager() == null) {
            // bloomkv.write.buffer.bytes: one memtable budget for every bloomkv store of the application in this JVM.
            o.writeBufferManager(BloomKvConfig.sharedWriteBufferManager(context.applicationId(), context.appConfigs()));
        }
        try {
            db = Db.open(new File(stateDir, name).toPath(), o);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": cannot open bloomkv database under " + stateDir, e);
        }
        openMarker = OpenMarker.file(stateDir, name);
        try {
            OpenMarker.markOpen(openMarker, name, context);
            position = metadata.open(db, stateDir, name);
        } catch (RuntimeException e) {
            Db d = db;
            db = null;
            d.close();
            throw e instanceof BloomKvException ? new ProcessorStateException("store " + name + ": cannot open", e) : e;
        }
        consistencyEnabled = StreamsConfig.InternalConfig.getBoolean(
                context.appConfigs(), StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, false);
        metrics = BloomKvMetrics.register(context, METRICS_SCOPE, name, this::statsOrNull);
        metrics.registerBudgets(o.blockCache(), o.writeBufferManager());
        open = true;
        context.register(root, new RestoreCallback());
    }

    /**
     * Restores changelog batches: each batch is one atomic WriteBatch of its records in changelog order (a key's later
     * record gets the later sequence number, so its last record wins, a null value a delete); the position follows
     * every record. The records go into the batch as they come, with no map to keep only each key's last one: the
     * memtable adds a repeated key's record as a version of the key it holds (no search), which costs less than
     * hashing and wrapping every key of the batch, and a fresh JVM restoring has that much less code to compile.
     */
    private final class RestoreCallback implements RecordBatchingStateRestoreCallback {
        @Override
        public void restoreBatch(Collection<ConsumerRecord<byte[], byte[]>> records) {
            synchronized (BloomKvStore.this) {
                long bytes = 0;
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    byte[] value = r.value();
                    bytes += WriteBatch.putSizeOf(
                            1 + Objects.requireNonNull(r.key(), "key cannot be null").length,
                            value == null ? 0 : value.length);
                }
                WriteBatch batch = restoreScratch.forBytes(bytes);
                Position p = position;
                try {
                    // The position advances with the batch written, never ahead of it (a standby answering a bounded
                    // query in between would otherwise pass the bound with the batch's data not yet readable).
                    synchronized (p) {
                        for (ConsumerRecord<byte[], byte[]> r : records) {
                            ChangelogRecordDeserializationHelper.applyChecksAndUpdatePosition(r, consistencyEnabled, p);
                            addTo(batch, r.key(), r.value());
                        }
                        write(batch);
                    }
                } finally {
                    batch.clear();
                }
            }
        }

        @Override
        public void restoreAll(Collection<KeyValue<byte[], byte[]>> records) {
            synchronized (BloomKvStore.this) {
                long bytes = 0;
                for (KeyValue<byte[], byte[]> r : records) {
                    bytes += WriteBatch.putSizeOf(
                            1 + Objects.requireNonNull(r.key, "key cannot be null").length,
                            r.value == null ? 0 : r.value.length);
                }
                WriteBatch batch = restoreScratch.forBytes(bytes);
                try {
                    for (KeyValue<byte[], byte[]> r : records) {
                        addTo(batch, r.key, r.value);
                    }
                    write(batch);
                } finally {
                    batch.clear();
                }
            }
        }
    }

    /** The stored keys' format byte ({@link StoreKeys#PLAIN}) as a key part: a batch copies it and the key once. */
    private static final byte[] PLAIN_PREFIX = {StoreKeys.PLAIN};

    private static void addTo(WriteBatch batch, byte[] key, byte[] value) {
        Objects.requireNonNull(key, "key cannot be null");
        if (value == null) {
            batch.delete(PLAIN_PREFIX, key);
        } else {
            batch.put(PLAIN_PREFIX, key, value);
        }
    }

    private Db db() {
        Db d = db;
        if (!open || d == null) {
            throw new InvalidStateStoreException("Store " + name + " is currently closed.");
        }
        return d;
    }

    private void write(WriteBatch batch) {
        if (batch.count() == 0) {
            return;
        }
        try {
            db().write(batch);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": write failed", e);
        }
    }

    @Override
    public synchronized void put(Bytes key, byte[] value) {
        Objects.requireNonNull(key, "key cannot be null");
        Db d = db();
        Position p = position;
        synchronized (p) {
            try {
                if (value == null) {
                    d.delete(StoreKeys.encode(key));
                } else {
                    d.put(StoreKeys.encode(key), value);
                }
            } catch (BloomKvException e) {
                throw new ProcessorStateException("store " + name + ": put failed", e);
            }
            updatePosition(p);
        }
    }

    @Override
    public synchronized byte[] putIfAbsent(Bytes key, byte[] value) {
        Objects.requireNonNull(key, "key cannot be null");
        byte[] old = get(key);
        if (old == null) {
            put(key, value);
        }
        return old;
    }

    /** One atomic WriteBatch; null values delete. */
    @Override
    public synchronized void putAll(List<KeyValue<Bytes, byte[]>> entries) {
        WriteBatch batch = new WriteBatch();
        for (KeyValue<Bytes, byte[]> e : entries) {
            Objects.requireNonNull(e.key, "key cannot be null");
            addTo(batch, e.key.get(), e.value);
        }
        Position p = position;
        synchronized (p) {
            write(batch);
            updatePosition(p);
        }
    }

    @Override
    public synchronized byte[] delete(Bytes key) {
        Objects.requireNonNull(key, "key cannot be null");
        byte[] old = get(key);
        put(key, null);
        return old;
    }

    @Override
    public byte[] get(Bytes key) {
        Objects.requireNonNull(key, "key cannot be null");
        try {
            return db().get(StoreKeys.encode(key));
        } catch (BloomKvException e) {
            throw translate(e, "get");
        }
    }

    private RuntimeException translate(BloomKvException e, String what) {
        if (!open) {
            return new InvalidStateStoreException("Store " + name + " is currently closed.");
        }
        return new ProcessorStateException("store " + name + ": " + what + " failed", e);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
        return range(from, to, true);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
        return range(from, to, false);
    }

    private KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to, boolean forward) {
        if (from != null && to != null && from.compareTo(to) > 0) {
            LOG.warn(
                    "Returning empty iterator for fetch with invalid key range: from > to. This may be due to range arguments "
                            + "set in the wrong order, or serdes that don't preserve ordering when lexicographically comparing the "
                            + "serialized bytes. Note that the built-in numerical serdes do not follow this for negative numbers");
            return new EmptyIterator();
        }
        byte[] lower = StoreKeys.encode(from == null ? new byte[0] : from.get());
        byte[] upper = to == null ? new byte[] {(byte) (StoreKeys.PLAIN + 1)} : StoreKeys.encodeSuccessor(to.get());
        return open(lower, upper, forward);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
        return range(null, null, true);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
        return range(null, null, false);
    }

    /** Keys starting with the serialized {@code prefix}, ascending. */
    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, PS prefixKeySerializer) {
        Objects.requireNonNull(prefix, "prefix cannot be null");
        Objects.requireNonNull(prefixKeySerializer, "prefixKeySerializer cannot be null");
        byte[] p = prefixKeySerializer.serialize(null, prefix);
        return open(StoreKeys.encode(p), StoreKeys.prefixEnd(p), true);
    }

    private KeyValueIterator<Bytes, byte[]> open(byte[] lower, byte[] upper, boolean forward) {
        DbIterator it;
        try {
            it = db().iterator(ReadOptions.defaults().iterateLowerBound(lower).iterateUpperBound(upper));
        } catch (BloomKvException e) {
            throw translate(e, "iterator");
        }
        BloomKvIterator kv = new BloomKvIterator(this, it, forward);
        openIterators.add(kv);
        if (!open) {
            kv.close();
            throw new InvalidStateStoreException("Store " + name + " is currently closed.");
        }
        return kv;
    }

    void iteratorClosed(BloomKvIterator it) {
        openIterators.remove(it);
    }

    /**
     * RocksDB's key-count estimate from the memtables' counts and the tables' properties: deletes are subtracted as
     * RocksDB subtracts them, versions not yet compacted away count (no I/O).
     */
    @Override
    public long approximateNumEntries() {
        // Kafka's RocksDB store answers RocksDB's rocksdb.estimate-num-keys; bloomkv.estimate-num-keys is that estimate
        // (deletes subtracted as RocksDB subtracts them), so a store that deletes reads as Kafka's would.
        long n;
        try {
            n = Long.parseLong(db().property("bloomkv.estimate-num-keys").orElseThrow());
        } catch (BloomKvException e) {
            throw translate(e, "approximateNumEntries");
        }
        if (n < 0) {
            return Long.MAX_VALUE;
        }
        // The offsets and position records live in the same database (StoreMetadata) but are not entries of the
        // store, as Kafka's RocksDB store keeps them in another column family: leave out the ones held now (older
        // versions of them still in the memtable stay in the estimate, as overwritten data keys do).
        return Math.max(0, n - metadataRecords());
    }

    private long metadataRecords() {
        synchronized (this) {
            return metadata.records();
        }
    }

    /** The engine's counters now, or null when the store is closed. */
    Stats statsOrNull() {
        Db d = db;
        if (!open || d == null) {
            return null;
        }
        try {
            return d.stats();
        } catch (BloomKvException e) {
            return null;
        }
    }

    /** The database under this store (open between init and close): for its stats and tables. */
    public Db database() {
        return db();
    }

    /**
     * Writes the position, then flushes the memtable to a table: every write so far is then durable, with or without
     * a WAL. Kafka Streams 4.3 no longer calls it (it commits with {@link #commit(Map)}, which writes no table); it is
     * the costly step the Kafka RocksDB store used to take at every commit (a memtable flush).
     */
    @Override
    public synchronized void flush() {
        Db d = db();
        try {
            metadata.writePosition(d, position);
            d.flush();
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": flush failed", e);
        }
    }

    /**
     * Writes {@code changelogOffsets} (KIP-1035, {@link StateStore#commit}'s contract: an empty map removes every
     * offset, a null value that partition's) and the position into the database, after the data they cover: one
     * write of a few records, no fsync, no file (as Kafka 4.3's RocksDBStore writes them to its offsets column family
     * with its WAL disabled). They reach disk with the data (see the class comment).
     */
    @Override
    public synchronized void commit(Map<TopicPartition, Long> changelogOffsets) {
        if (!open) {
            return;
        }
        try {
            metadata.commit(db(), changelogOffsets, position);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("Error while executing commit from store " + name, e);
        }
    }

    /** This store keeps its changelog offsets itself ({@link StoreMetadata}), as Kafka 4.3's RocksDBStore does. */
    @Deprecated
    @Override
    public boolean managesOffsets() {
        return true;
    }

    @Override
    public synchronized Long committedOffset(TopicPartition partition) {
        db();
        return metadata.committedOffset(partition);
    }

    /**
     * Advances the position to the record being processed, through the public StateStoreContext.recordMetadata()
     * (what Kafka's internal StoreQueryUtils.updatePosition does; no metadata outside processing, e.g. in a punctuator).
     */
    private void updatePosition(Position p) {
        if (context != null) {
            context.recordMetadata().ifPresent(m -> {
                if (m.topic() != null) {
                    p.withComponent(m.topic(), m.partition(), m.offset());
                }
            });
        }
    }

    /**
     * Closes the open iterators, unregisters the gauges, writes the position and closes the database (which, without a
     * WAL, flushes its memtable first). Idempotent.
     */
    @Override
    public synchronized void close() {
        if (!open) {
            return;
        }
        open = false;
        for (BloomKvIterator it : new ArrayList<>(openIterators)) {
            it.close();
        }
        openIterators.clear();
        if (metrics != null) {
            metrics.remove();
            metrics = null;
        }
        Db d = db;
        db = null;
        try {
            try {
                metadata.writePosition(d, position);
            } finally {
                d.close();
            }
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + name + ": close failed", e);
        }
        OpenMarker.markClosed(openMarker, name);
    }

    @Override
    public boolean persistent() {
        return true;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    /** IQv2: KeyQuery and RangeQuery (both orders) are answered; the position bound is checked against {@link #getPosition()}. */
    @Override
    public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
        return StoreQueryUtils.handleBasicQueries(query, positionBound, config, this, position, context);
    }

    @Override
    public Position getPosition() {
        return position;
    }

    /** An iterator with nothing in it (the answer to {@code from > to}). */
    private static final class EmptyIterator implements KeyValueIterator<Bytes, byte[]> {
        @Override
        public boolean hasNext() {
            return false;
        }

        @Override
        public KeyValue<Bytes, byte[]> next() {
            throw new java.util.NoSuchElementException();
        }

        @Override
        public Bytes peekNextKey() {
            throw new java.util.NoSuchElementException();
        }

        @Override
        public void close() {}
    }

    @Override
    public String toString() {
        return "BloomKvStore[" + name + (open ? ", open" : ", closed") + "]";
    }
}
