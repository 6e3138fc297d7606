package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.MultiVersionedKeyQuery;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.VersionedKeyQuery;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.state.VersionedRecordIterator;
import org.apache.kafka.streams.state.internals.VersionedKeyValueToBytesStoreAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BloomKvVersionedStore} against Kafka's own versioned store ({@code Stores.persistentVersionedKeyValueStore},
 * RocksDB) as the oracle: one random sequence of puts (in order, out of order, too old), deletes and stream-time
 * jumps goes to both, and every answer is compared: put's validTo, delete's previous version, {@code get(key)},
 * {@code get(key, asOf)} across and beyond the history retention, and multi-version queries both ways. Then the
 * same operations, as changelog records, are restored into two fresh stores in random batches and read back the
 * same way, and the restored stores take more operations alike. Replay a failure with {@code -Dbloomkv.seed=<seed>} (the seed is printed).
 */
class BloomKvVersionedStoreDifferentialTest {
    @TempDir
    Path dir;

    private final List<StateStore> stores = new ArrayList<>();

    @AfterEach
    void closeAll() {
        stores.forEach(StateStore::close);
        assertThat(io.bloomkv.engine.inspect.OpenResources.tables())
                .as("tables left open")
                .isZero();
    }

    /** One operation of the sequence, kept to replay it as the changelog. */
    private record Op(Bytes key, byte[] value, long timestamp) {}

    private static final class Pair {
        final VersionedKeyValueStore<Bytes, byte[]> bloom;
        final VersionedKeyValueStore<Bytes, byte[]> kafka;
        final StateStore bloomRoot;
        final StateStore kafkaRoot;
        final TestStoreContext bloomCtx;
        final TestStoreContext kafkaCtx;

        Pair(
                VersionedKeyValueStore<Bytes, byte[]> bloom,
                StateStore bloomRoot,
                TestStoreContext bloomCtx,
                VersionedKeyValueStore<Bytes, byte[]> kafka,
                StateStore kafkaRoot,
                TestStoreContext kafkaCtx) {
            this.bloom = bloom;
            this.kafka = kafka;
            this.bloomRoot = bloomRoot;
            this.kafkaRoot = kafkaRoot;
            this.bloomCtx = bloomCtx;
            this.kafkaCtx = kafkaCtx;
        }
    }

    @SuppressWarnings("unchecked")
    private static VersionedKeyValueStore<Bytes, byte[]> inner(StateStore adapter) throws Exception {
        Field f = VersionedKeyValueToBytesStoreAdapter.class.getDeclaredField("inner");
        f.setAccessible(true);
        return (VersionedKeyValueStore<Bytes, byte[]>) f.get(adapter);
    }

    /**
     * A bloomkv and a Kafka store; the bloomkv one with its default options (no WAL) or, when {@code wal}, with a WAL,
     * and a 64 KiB write buffer either way: its memtable is flushed often, so its reads meet tables, range tombstones
     * and the engine's compactions.
     */
    private Pair open(String tag, long historyRetention, long segmentInterval, boolean wal) throws Exception {
        io.bloomkv.engine.Options options = (wal
                        ? io.bloomkv.engine.Options.defaults().manualWalFlush(true)
                        : BloomKvStores.defaultKeyValueOptions())
                .writeBufferSize(64 << 10);
        VersionedBytesStoreSupplier ours = BloomKvStores.persistentVersionedKeyValueStore(
                "v", Duration.ofMillis(historyRetention), Duration.ofMillis(segmentInterval), options);
        VersionedBytesStoreSupplier theirs = Stores.persistentVersionedKeyValueStore(
                "v", Duration.ofMillis(historyRetention), Duration.ofMillis(segmentInterval));
        TestStoreContext bctx = new TestStoreContext(
                Files.createDirectories(dir.resolve(tag + "-bloomkv")).toFile());
        TestStoreContext kctx = new TestStoreContext(
                Files.createDirectories(dir.resolve(tag + "-kafka")).toFile());
        kctx.configs.put(org.apache.kafka.streams.StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "INFO");
        StateStore b = ours.get();
        StateStore k = theirs.get();
        b.init(bctx, b);
        stores.add(b);
        k.init(InternalTestContext.of(kctx), k);
        stores.add(k);
        return new Pair(inner(b), b, bctx, inner(k), k, kctx);
    }

    @Test
    void randomOperationsAnswerAsKafkasVersionedStore() throws Exception {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println(
                "BloomKvVersionedStoreDifferentialTest seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        long[] outcomes = new long[3];
        for (int round = 0; round < 3; round++) {
            long historyRetention = 20 + rnd.nextInt(200);
            long segmentInterval = Math.max(1, historyRetention / 4 + rnd.nextInt((int) historyRetention));
            boolean wal = round == 1;
            String what = "seed " + seed + " round " + round + " (historyRetention " + historyRetention
                    + ", segmentInterval " + segmentInterval + (wal ? ", with a WAL)" : ", without a WAL)");
            Pair p = open("r" + round, historyRetention, segmentInterval, wal);
            int keys = 1 + rnd.nextInt(12);
            List<Op> ops = new ArrayList<>();
            long streamTime = rnd.nextInt(50);
            for (int i = 0; i < 1500; i++) {
                int dice = rnd.nextInt(100);
                if (dice < 2) {
                    streamTime += rnd.nextInt((int) historyRetention * 3); // a jump: segments expire
                } else if (dice < 60) {
                    streamTime += rnd.nextInt(4);
                }
                Bytes key = key(rnd.nextInt(keys));
                long ts = rnd.nextInt(100) < 60
                        ? streamTime
                        : Math.max(0, streamTime - rnd.nextInt((int) historyRetention * 2));
                String at = what + " op " + i + " ts " + ts;
                if (rnd.nextInt(100) < 15) {
                    VersionedRecord<byte[]> expected = p.kafka.delete(key, ts);
                    VersionedRecord<byte[]> actual = p.bloom.delete(key, ts);
                    assertSame(actual, expected, at + " delete " + key);
                    ops.add(new Op(key, null, ts));
                } else {
                    byte[] value = value(rnd);
                    long expected = p.kafka.put(key, value, ts);
                    long actual = p.bloom.put(key, value, ts);
                    assertThat(actual)
                            .as(at + " put " + key + " returns validTo")
                            .isEqualTo(expected);
                    outcomes[
                            expected == VersionedKeyValueStore.PUT_RETURN_CODE_NOT_PUT
                                    ? 0
                                    : expected == VersionedKeyValueStore.PUT_RETURN_CODE_VALID_TO_UNDEFINED ? 1 : 2]++;
                    ops.add(new Op(key, value, ts));
                }
                if (rnd.nextInt(4) == 0) {
                    compareReads(p, rnd, keys, streamTime, historyRetention, at);
                }
            }
            for (int k = 0; k < keys; k++) {
                compareReads(p, rnd, keys, streamTime, historyRetention, what + " end");
            }
            System.out.println(what + ": puts not put " + outcomes[0] + ", newest " + outcomes[1] + ", with a validTo "
                    + outcomes[2] + "; reads of old versions " + historyHits + "; segments open "
                    + segmentCount(p.bloomRoot));
            restoreAndCompare(
                    ops,
                    rnd,
                    historyRetention,
                    segmentInterval,
                    wal,
                    keys,
                    streamTime,
                    what + " restore",
                    "rr" + round);
        }
        assertThat(outcomes)
                .as("the sequence drops too-old puts, puts newest versions and puts versions with a validTo")
                .doesNotContain(0L);
        assertThat(historyHits).as("reads that found old versions").isPositive();
    }

    /**
     * IQv2 with position bounds, null keys and a closed store, against Kafka's store: the same puts (each with its
     * input record's offset, so both positions advance) then {@code VersionedKeyQuery} (latest and as of a time) and
     * {@code MultiVersionedKeyQuery} under bounds behind, at and ahead of the position give the same results, failure
     * reasons and positions; null keys throw the same exceptions; after close every call throws the same exception.
     */
    @Test
    void queriesPositionBoundsNullKeysAndClosedStoreAnswerAsKafkas() throws Exception {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("BloomKvVersionedStoreDifferentialTest.queries seed " + seed
                + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        long historyRetention = 50 + rnd.nextInt(100);
        Pair p = open("q", historyRetention, Math.max(1, historyRetention / 3), false);
        int keys = 1 + rnd.nextInt(6);
        long streamTime = 0;
        long offset = 0;
        int[] seen = new int[3];
        for (int i = 0; i < 400; i++) {
            String what = "seed " + seed + " op " + i;
            streamTime += rnd.nextInt(3);
            long ts = rnd.nextInt(4) == 0 ? Math.max(0, streamTime - rnd.nextInt((int) historyRetention)) : streamTime;
            offset += 1 + rnd.nextInt(3);
            int partition = rnd.nextInt(2);
            p.bloomCtx.setRecord("input", partition, offset);
            p.kafkaCtx.setRecord("input", partition, offset);
            Bytes key = key(rnd.nextInt(keys));
            if (rnd.nextInt(8) == 0) {
                assertSame(p.bloom.delete(key, ts), p.kafka.delete(key, ts), what + " delete");
            } else {
                byte[] value = value(rnd);
                assertThat(p.bloom.put(key, value, ts)).as(what + " put").isEqualTo(p.kafka.put(key, value, ts));
            }
            if (rnd.nextInt(3) > 0) {
                continue;
            }
            PositionBound bound = switch (rnd.nextInt(4)) {
                case 0 -> PositionBound.unbounded();
                case 1 -> PositionBound.at(Position.emptyPosition());
                default ->
                    PositionBound.at(Position.emptyPosition()
                            .withComponent("input", rnd.nextInt(2), Math.max(0, offset - 3 + rnd.nextInt(6))));
            };
            Bytes q = key(rnd.nextInt(keys));
            VersionedKeyQuery<Bytes, byte[]> single = VersionedKeyQuery.withKey(q);
            if (rnd.nextBoolean()) {
                single = single.asOf(
                        Instant.ofEpochMilli(Math.max(0, streamTime - rnd.nextInt((int) historyRetention * 2))));
            }
            String expected = outcome(p.kafkaRoot.query(single, bound, new QueryConfig(false)));
            assertThat(outcome(p.bloomRoot.query(single, bound, new QueryConfig(false))))
                    .as(what + " " + single + " bound " + bound)
                    .isEqualTo(expected);
            seen[expected.startsWith("failure NOT_UP_TO_BOUND") ? 0 : expected.startsWith("null") ? 1 : 2]++;
            long to = Math.max(0, streamTime - rnd.nextInt((int) historyRetention));
            MultiVersionedKeyQuery<Bytes, byte[]> multi = MultiVersionedKeyQuery.<Bytes, byte[]>withKey(q)
                    .fromTime(Instant.ofEpochMilli(Math.max(0, to - rnd.nextInt((int) historyRetention))))
                    .toTime(Instant.ofEpochMilli(to));
            multi = rnd.nextBoolean() ? multi.withAscendingTimestamps() : multi.withDescendingTimestamps();
            assertThat(outcome(p.bloomRoot.query(multi, bound, new QueryConfig(false))))
                    .as(what + " multi-versioned query bound " + bound)
                    .isEqualTo(outcome(p.kafkaRoot.query(multi, bound, new QueryConfig(false))));
        }
        assertThat(p.bloomRoot.getPosition()).isEqualTo(p.kafkaRoot.getPosition());
        assertThat(seen)
                .as("queries refused by their bound, answered null, answered with a version")
                .doesNotContain(0);

        List<java.util.function.Function<VersionedKeyValueStore<Bytes, byte[]>, Object>> calls = List.of(
                s -> s.put(null, new byte[] {1}, 5), s -> s.get(null), s -> s.get(null, 5), s -> s.delete(null, 5));
        for (var call : calls) {
            assertThat(thrown(() -> call.apply(p.bloom))).as("null key").isEqualTo(thrown(() -> call.apply(p.kafka)));
        }
        p.bloomRoot.close();
        p.kafkaRoot.close();
        assertThat(p.bloomRoot.isOpen()).isEqualTo(p.kafkaRoot.isOpen());
        List<java.util.function.Function<VersionedKeyValueStore<Bytes, byte[]>, Object>> closed = List.of(
                s -> s.put(key(0), new byte[] {1}, 5),
                s -> s.get(key(0)),
                s -> s.get(key(0), 5),
                s -> s.delete(key(0), 5));
        for (var call : closed) {
            assertThat(thrown(() -> call.apply(p.bloom)))
                    .as("closed store")
                    .isEqualTo(thrown(() -> call.apply(p.kafka)));
        }
    }

    /** The exception class a call throws ("none" when it returns). */
    private static String thrown(java.util.function.Supplier<Object> call) {
        try {
            call.get();
            return "none";
        } catch (RuntimeException e) {
            return e.getClass().getName();
        }
    }

    /** A query result as comparable text: success with the answer, or the failure reason; then the position. */
    @SuppressWarnings("unchecked")
    private static String outcome(QueryResult<?> r) {
        String answer;
        if (r.isSuccess()) {
            Object result = r.getResult();
            if (result instanceof VersionedRecordIterator<?> it) {
                List<String> all = new ArrayList<>();
                try (VersionedRecordIterator<byte[]> records = (VersionedRecordIterator<byte[]>) it) {
                    records.forEachRemaining(x -> all.add(show(x)));
                }
                answer = all.toString();
            } else {
                answer = show((VersionedRecord<byte[]>) result);
            }
        } else {
            answer = "failure " + r.getFailureReason();
        }
        return answer + " at " + r.getPosition();
    }

    private void restoreAndCompare(
            List<Op> ops,
            Random rnd,
            long historyRetention,
            long segmentInterval,
            boolean wal,
            int keys,
            long streamTime,
            String what,
            String tag)
            throws Exception {
        Pair p = open(tag, historyRetention, segmentInterval, wal);
        RecordBatchingStateRestoreCallback b = (RecordBatchingStateRestoreCallback) p.bloomCtx.restoreCallback;
        RecordBatchingStateRestoreCallback k = (RecordBatchingStateRestoreCallback) p.kafkaCtx.restoreCallback;
        int offset = 0;
        while (offset < ops.size()) {
            int n = Math.min(ops.size() - offset, 1 + rnd.nextInt(300));
            List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
            for (int i = offset; i < offset + n; i++) {
                Op op = ops.get(i);
                batch.add(new ConsumerRecord<>(
                        "v-changelog",
                        0,
                        i,
                        op.timestamp(),
                        TimestampType.CREATE_TIME,
                        0,
                        0,
                        op.key().get(),
                        op.value(),
                        new RecordHeaders(),
                        Optional.empty()));
            }
            k.restoreBatch(batch);
            b.restoreBatch(batch);
            offset += n;
            compareReads(p, rnd, keys, streamTime, historyRetention, what + " after " + offset + " records");
        }
        for (int i = 0; i < keys; i++) {
            compareReads(p, rnd, keys, streamTime, historyRetention, what + " end");
        }
        // The restored stores go on processing alike (the stream time a restore leaves decides what later puts drop).
        long t = streamTime;
        for (int i = 0; i < 300; i++) {
            t += rnd.nextInt(3);
            Bytes key = key(rnd.nextInt(keys));
            long ts = rnd.nextInt(3) == 0 ? Math.max(0, t - rnd.nextInt((int) historyRetention * 2)) : t;
            String at = what + " then op " + i + " ts " + ts;
            if (rnd.nextInt(8) == 0) {
                assertSame(p.bloom.delete(key, ts), p.kafka.delete(key, ts), at + " delete " + key);
            } else {
                byte[] value = value(rnd);
                assertThat(p.bloom.put(key, value, ts)).as(at + " put " + key).isEqualTo(p.kafka.put(key, value, ts));
            }
            if (rnd.nextInt(4) == 0) {
                compareReads(p, rnd, keys, t, historyRetention, at);
            }
        }
    }

    private static long historyHits;

    private static int segmentCount(StateStore adapter) throws Exception {
        return ((BloomKvVersionedStore) inner(adapter)).segmentCount();
    }

    private static void compareReads(Pair p, Random rnd, int keys, long streamTime, long historyRetention, String at) {
        Bytes key = key(rnd.nextInt(keys));
        assertSame(p.bloom.get(key), p.kafka.get(key), at + " get(" + key + ")");
        for (int j = 0; j < 4; j++) {
            long asOf = Math.max(0, streamTime - rnd.nextInt((int) historyRetention * 2 + 5) + 3);
            assertSame(p.bloom.get(key, asOf), p.kafka.get(key, asOf), at + " get(" + key + ", " + asOf + ")");
        }
        long to = Math.max(0, streamTime - rnd.nextInt((int) historyRetention * 2 + 5) + 3);
        long from = Math.max(0, to - rnd.nextInt((int) historyRetention + 5));
        boolean ascending = rnd.nextBoolean();
        VersionedRecord<byte[]> old = p.kafka.get(key, Math.max(0, streamTime - historyRetention / 2));
        if (old != null && old.validTo().isPresent()) {
            historyHits++;
        }
        assertThat(multi(p.bloomRoot, key, from, to, ascending))
                .as(at + " MultiVersionedKeyQuery(" + key + ", " + from + ", " + to
                        + (ascending ? ", asc)" : ", desc)"))
                .isEqualTo(multi(p.kafkaRoot, key, from, to, ascending));
    }

    /** The versions a multi-versioned query answers, as comparable strings, through the store's IQv2 entry point. */
    private static List<String> multi(StateStore store, Bytes key, long from, long to, boolean ascending) {
        MultiVersionedKeyQuery<Bytes, byte[]> q = MultiVersionedKeyQuery.<Bytes, byte[]>withKey(key)
                .fromTime(Instant.ofEpochMilli(from))
                .toTime(Instant.ofEpochMilli(to));
        q = ascending ? q.withAscendingTimestamps() : q.withDescendingTimestamps();
        QueryResult<VersionedRecordIterator<byte[]>> r =
                store.query(q, PositionBound.unbounded(), new QueryConfig(false));
        assertThat(r.isSuccess())
                .as("query of " + store + ": " + (r.isSuccess() ? "" : r.getFailureMessage()))
                .isTrue();
        List<String> out = new ArrayList<>();
        try (VersionedRecordIterator<byte[]> it = r.getResult()) {
            while (it.hasNext()) {
                out.add(show(it.next()));
            }
        }
        return out;
    }

    private static void assertSame(VersionedRecord<byte[]> actual, VersionedRecord<byte[]> expected, String what) {
        assertThat(show(actual)).as(what).isEqualTo(show(expected));
    }

    private static String show(VersionedRecord<byte[]> r) {
        return r == null ? "null" : Arrays.toString(r.value()) + "@" + r.timestamp() + "-" + r.validTo();
    }

    private static Bytes key(int i) {
        return Bytes.wrap(new byte[] {'k', (byte) i});
    }

    private static byte[] value(Random rnd) {
        byte[] v = new byte[rnd.nextInt(5)];
        rnd.nextBytes(v);
        return v;
    }
}
