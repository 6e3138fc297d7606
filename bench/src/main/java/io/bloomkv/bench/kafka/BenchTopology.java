package io.bloomkv.bench.kafka;

import io.bloomkv.kafka.BloomKvDslStoreSuppliers;
import io.bloomkv.kafka.BloomKvStores;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.DslSessionParams;
import org.apache.kafka.streams.state.DslStoreSuppliers;
import org.apache.kafka.streams.state.DslWindowParams;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStore;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.internals.SessionKeySchema;
import org.apache.kafka.streams.state.internals.WindowKeySchema;

/**
 * One store workload of {@code bench kafka-streams --topology}, applied record by record to the innermost store as a
 * stream thread's processor applies it (no record cache, so every record reaches the store), each store write also
 * appended as the changelog record Kafka's change-logging layer would send (the input of the restore phase), to a
 * compact {@link Changelog}.
 * The stores come from the DSL suppliers a user switches with {@code dsl.store.suppliers.class}:
 * {@link BloomKvDslStoreSuppliers} against Kafka's {@code BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers}
 * (the versioned store, which the DSL only makes through {@code Materialized.as(supplier)}, from
 * {@link BloomKvStores#persistentVersionedKeyValueStore} against {@code Stores.persistentVersionedKeyValueStore}).
 *
 * <ul>
 * <li>{@code kv}: a count per key (KTable aggregation): get, put;</li>
 * <li>{@code window}: a count per key and tumbling window: fetch(key, windowStart), put;</li>
 * <li>{@code session}: a sum per key and session: findSessions(key, t - gap, t + gap), remove the merged ones, put
 *     the merged session;</li>
 * <li>{@code versioned}: a versioned table: a lookup as of an earlier time (a stream-table join), then a put at the
 *     record's timestamp, one in ten out of order.</li>
 * </ul>
 */
abstract class BenchTopology {
    static final String CHANGELOG = "bench-changelog";
    static final List<String> NAMES = List.of("kv", "window", "session", "versioned");

    final String name;

    BenchTopology(String name) {
        this.name = name;
    }

    /** A new store (one task's) of {@code engine} ({@code rocksdb} or {@code bloomkv}). */
    abstract StateStore newStore(String engine);

    /**
     * Whether the stores of this topology get the internal context: Kafka's segmented RocksDB stores (window, session,
     * versioned) require it; the same context goes to the bloomkv stores of the topology, so both see one context.
     */
    boolean needsInternalContext() {
        return !name.equals("kv");
    }

    /**
     * Applies record {@code i} (key bytes, event time) to {@code store} (task {@code partition}'s); appends its
     * changelog records to {@code changelog}.
     */
    abstract void process(
            StateStore store, int i, byte[] key, long timestamp, Random rnd, int partition, Changelog changelog);

    static DslStoreSuppliers suppliers(String engine) {
        return engine.equals("rocksdb")
                ? new BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers()
                : new BloomKvDslStoreSuppliers();
    }

    static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    static long longOf(byte[] raw) {
        return raw == null ? 0 : ByteBuffer.wrap(raw).getLong();
    }

    static void log(Changelog changelog, byte[] key, byte[] value, long timestamp) {
        changelog.append(key, value, timestamp);
    }

    static BenchTopology of(String name, Duration windowSize, Duration retention, Duration sessionGap) {
        return switch (name) {
            case "kv" ->
                new BenchTopology("kv") {
                    @Override
                    StateStore newStore(String engine) {
                        return suppliers(engine)
                                .keyValueStore(new DslKeyValueParams("counts", DslStoreFormat.PLAIN))
                                .get();
                    }

                    @Override
                    @SuppressWarnings("unchecked")
                    void process(
                            StateStore store,
                            int i,
                            byte[] key,
                            long timestamp,
                            Random rnd,
                            int partition,
                            Changelog changelog) {
                        KeyValueStore<Bytes, byte[]> kv = (KeyValueStore<Bytes, byte[]>) store;
                        Bytes k = Bytes.wrap(key);
                        byte[] v = longBytes(longOf(kv.get(k)) + 1);
                        kv.put(k, v);
                        log(changelog, key, v, timestamp);
                    }
                };
            case "window" ->
                new BenchTopology("window") {
                    @Override
                    StateStore newStore(String engine) {
                        return suppliers(engine)
                                .windowStore(new DslWindowParams(
                                        "window-counts",
                                        retention,
                                        windowSize,
                                        false,
                                        EmitStrategy.onWindowUpdate(),
                                        false,
                                        DslStoreFormat.PLAIN))
                                .get();
                    }

                    @Override
                    @SuppressWarnings("unchecked")
                    void process(
                            StateStore store,
                            int i,
                            byte[] key,
                            long timestamp,
                            Random rnd,
                            int partition,
                            Changelog changelog) {
                        WindowStore<Bytes, byte[]> ws = (WindowStore<Bytes, byte[]>) store;
                        Bytes k = Bytes.wrap(key);
                        long start = timestamp - timestamp % windowSize.toMillis();
                        byte[] v = longBytes(longOf(ws.fetch(k, start)) + 1);
                        ws.put(k, v, start);
                        log(
                                changelog,
                                WindowKeySchema.toStoreKeyBinary(k, start, 0).get(),
                                v,
                                timestamp);
                    }
                };
            case "session" ->
                new BenchTopology("session") {
                    @Override
                    StateStore newStore(String engine) {
                        return suppliers(engine)
                                .sessionStore(
                                        new DslSessionParams("session-sums", retention, EmitStrategy.onWindowUpdate()))
                                .get();
                    }

                    @Override
                    @SuppressWarnings("unchecked")
                    void process(
                            StateStore store,
                            int i,
                            byte[] key,
                            long timestamp,
                            Random rnd,
                            int partition,
                            Changelog changelog) {
                        SessionStore<Bytes, byte[]> ss = (SessionStore<Bytes, byte[]>) store;
                        Bytes k = Bytes.wrap(key);
                        long gap = sessionGap.toMillis();
                        long start = timestamp;
                        long end = timestamp;
                        long sum = 1;
                        java.util.List<Windowed<Bytes>> merged = new java.util.ArrayList<>();
                        try (KeyValueIterator<Windowed<Bytes>, byte[]> it =
                                ss.findSessions(k, timestamp - gap, timestamp + gap)) {
                            while (it.hasNext()) {
                                var kv = it.next();
                                merged.add(kv.key);
                                start = Math.min(start, kv.key.window().start());
                                end = Math.max(end, kv.key.window().end());
                                sum += longOf(kv.value);
                            }
                        }
                        for (Windowed<Bytes> w : merged) {
                            ss.remove(w);
                            log(changelog, SessionKeySchema.toBinary(w).get(), null, timestamp);
                        }
                        Windowed<Bytes> session = new Windowed<>(k, new SessionWindow(start, end));
                        byte[] v = longBytes(sum);
                        ss.put(session, v);
                        log(changelog, SessionKeySchema.toBinary(session).get(), v, timestamp);
                    }
                };
            case "versioned" ->
                new BenchTopology("versioned") {
                    @Override
                    StateStore newStore(String engine) {
                        return (engine.equals("rocksdb")
                                        ? Stores.persistentVersionedKeyValueStore("versioned", retention)
                                        : BloomKvStores.persistentVersionedKeyValueStore("versioned", retention))
                                .get();
                    }

                    @Override
                    void process(
                            StateStore store,
                            int i,
                            byte[] key,
                            long timestamp,
                            Random rnd,
                            int partition,
                            Changelog changelog) {
                        VersionedBytesStore vs = (VersionedBytesStore) store;
                        Bytes k = Bytes.wrap(key);
                        long span = retention.toMillis() / 4 + 1;
                        vs.get(k, timestamp - (long) (rnd.nextDouble() * span));
                        long ts = rnd.nextInt(10) == 0 ? timestamp - (long) (rnd.nextDouble() * span) : timestamp;
                        byte[] v = longBytes(i);
                        vs.put(k, v, ts);
                        log(changelog, key, v, ts);
                    }
                };
            default ->
                throw new IllegalArgumentException("unknown topology " + name + " (" + String.join(", ", NAMES) + ")");
        };
    }
}
