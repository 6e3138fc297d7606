package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.Options;
import io.bloomkv.engine.SharedBlockCache;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.RangeQuery;
import org.apache.kafka.streams.query.ResultOrder;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.TimestampedBytesStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every point of the {@code KeyValueStore<Bytes, byte[]>} contract on {@link BloomKvStore}. */
class BloomKvStoreTest {
    @TempDir
    Path dir;

    private final List<BloomKvStore> stores = new ArrayList<>();

    private BloomKvStore open(String name, TestStoreContext ctx) {
        BloomKvStore s = (BloomKvStore)
                BloomKvStores.persistentKeyValueStore(name, Options.defaults().writeBufferSize(64 << 10))
                        .get();
        s.init(ctx, s);
        stores.add(s);
        return s;
    }

    private TestStoreContext context() {
        return new TestStoreContext(dir.toFile());
    }

    @AfterEach
    void closeAll() {
        stores.forEach(BloomKvStore::close);
        // Every table and its off-heap filter released exactly once the stores are closed.
        assertThat(io.bloomkv.engine.inspect.OpenResources.tables())
                .as("tables left open")
                .isZero();
        assertThat(io.bloomkv.engine.inspect.OpenResources.filterBytes())
                .as("off-heap filter bytes left")
                .isZero();
    }

    private static Bytes b(String s) {
        return Bytes.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] v(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String str(byte[] a) {
        return a == null ? null : new String(a, StandardCharsets.UTF_8);
    }

    private static List<String> drain(KeyValueIterator<Bytes, byte[]> it) {
        List<String> out = new ArrayList<>();
        try (it) {
            while (it.hasNext()) {
                Bytes peeked = it.peekNextKey();
                KeyValue<Bytes, byte[]> kv = it.next();
                assertThat(kv.key).isEqualTo(peeked);
                out.add(str(kv.key.get()) + "=" + str(kv.value));
            }
            assertThatThrownBy(it::next).isInstanceOf(NoSuchElementException.class);
            assertThatThrownBy(it::peekNextKey).isInstanceOf(NoSuchElementException.class);
        }
        return out;
    }

    @Test
    void putGetDeleteAndTheirNullRules() {
        BloomKvStore s = open("kv", context());
        assertThat(s.get(b("a"))).isNull();
        s.put(b("a"), v("1"));
        assertThat(str(s.get(b("a")))).isEqualTo("1");
        s.put(b("a"), null); // null value = delete
        assertThat(s.get(b("a"))).isNull();
        assertThat(s.putIfAbsent(b("a"), v("2"))).isNull();
        assertThat(str(s.putIfAbsent(b("a"), v("3")))).isEqualTo("2");
        assertThat(str(s.get(b("a")))).isEqualTo("2");
        assertThat(str(s.delete(b("a")))).as("delete returns the old value").isEqualTo("2");
        assertThat(s.delete(b("a"))).isNull();
        s.put(b("x"), v("old"));
        s.putAll(List.of(KeyValue.pair(b("p"), v("P")), KeyValue.pair(b("q"), v("Q")), KeyValue.pair(b("x"), null)));
        assertThat(str(s.get(b("p")))).isEqualTo("P");
        assertThat(str(s.get(b("q")))).isEqualTo("Q");
        assertThat(s.get(b("x"))).as("putAll null value deletes").isNull();
        s.put(Bytes.wrap(new byte[0]), v("empty key"));
        assertThat(str(s.get(Bytes.wrap(new byte[0]))))
                .as("Kafka allows empty keys")
                .isEqualTo("empty key");
        assertThatThrownBy(() -> s.put(null, v("x"))).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.get(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.delete(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.putIfAbsent(null, v("x"))).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.putAll(List.of(KeyValue.pair(null, v("x")))))
                .isInstanceOf(NullPointerException.class);
        assertThat(s.persistent()).isTrue();
        assertThat(s.name()).isEqualTo("kv");
    }

    @Test
    void rangesAreInclusiveOpenOnNullAndEmptyWhenReversed() {
        BloomKvStore s = open("ranges", context());
        for (String k : new String[] {"a", "b", "c", "d", "e"}) {
            s.put(b(k), v(k.toUpperCase()));
        }
        s.put(b("c"), null);
        assertThat(drain(s.range(b("b"), b("d")))).containsExactly("b=B", "d=D");
        assertThat(drain(s.reverseRange(b("b"), b("d")))).containsExactly("d=D", "b=B");
        assertThat(drain(s.range(null, b("b")))).containsExactly("a=A", "b=B");
        assertThat(drain(s.range(b("d"), null))).containsExactly("d=D", "e=E");
        assertThat(drain(s.reverseRange(null, b("b")))).containsExactly("b=B", "a=A");
        assertThat(drain(s.range(null, null))).containsExactly("a=A", "b=B", "d=D", "e=E");
        assertThat(drain(s.range(b("bb"), b("cc")))).isEmpty();
        assertThat(drain(s.range(b("e"), b("a")))).as("from > to").isEmpty();
        assertThat(drain(s.reverseRange(b("e"), b("a")))).isEmpty();
        assertThat(drain(s.all())).containsExactly("a=A", "b=B", "d=D", "e=E");
        assertThat(drain(s.reverseAll())).containsExactly("e=E", "d=D", "b=B", "a=A");
    }

    @Test
    void prefixScanStopsAtThePrefixEnd() {
        BloomKvStore s = open("prefix", context());
        s.put(Bytes.wrap(new byte[] {'k', (byte) 0xFF}), v("ff"));
        s.put(Bytes.wrap(new byte[] {'k', (byte) 0xFF, 1}), v("ff1"));
        s.put(Bytes.wrap(new byte[] {'l'}), v("l"));
        for (String k : new String[] {"ab", "abc", "abd", "ac", "b"}) {
            s.put(b(k), v(k));
        }
        assertThat(drain(s.prefixScan("ab", new StringSerializer()))).containsExactly("ab=ab", "abc=abc", "abd=abd");
        assertThat(drain(s.prefixScan("z", new StringSerializer()))).isEmpty();
        assertThat(drain(s.prefixScan("", new StringSerializer()))).hasSize(8);
        List<String> ff = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it =
                s.prefixScan(new byte[] {'k', (byte) 0xFF}, Serdes.ByteArray().serializer())) {
            it.forEachRemaining(kv -> ff.add(str(kv.value)));
        }
        assertThat(ff).containsExactly("ff", "ff1");
    }

    /**
     * Random puts, deletes and flushes go to this store and to Kafka's own in-memory key-value store (the oracle), and
     * every range and reverse range answers as Kafka's: bounds drawn at random, open ends, and inverted ranges (from >
     * to, which Kafka answers with an empty iterator and a logged warning); delete's previous value and a last full
     * scan both ways too.
     */
    @Test
    void rangesAnswerAsKafkasOwnStoreOnRandomData() {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("BloomKvStoreTest.random seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        BloomKvStore s = open("random", context());
        KeyValueStore<Bytes, byte[]> kafka =
                Stores.inMemoryKeyValueStore("kafka").get();
        kafka.init(context(), kafka);
        int inverted = 0;
        int nonEmpty = 0;
        try {
            for (int i = 0; i < 3000; i++) {
                Bytes k = Bytes.wrap(new byte[] {(byte) rnd.nextInt(8), (byte) rnd.nextInt(256)});
                if (rnd.nextInt(4) == 0) {
                    assertThat(s.delete(k))
                            .as("seed " + seed + ": delete's previous value")
                            .isEqualTo(kafka.delete(k));
                } else {
                    byte[] val = new byte[1 + rnd.nextInt(20)];
                    rnd.nextBytes(val);
                    s.put(k, val);
                    kafka.put(k, val);
                }
                if (i % 700 == 0) {
                    s.flush();
                }
            }
            for (int q = 0; q < 200; q++) {
                Bytes from = rnd.nextInt(5) == 0
                        ? null
                        : Bytes.wrap(new byte[] {(byte) rnd.nextInt(8), (byte) rnd.nextInt(256)});
                Bytes to = rnd.nextInt(5) == 0 ? null : Bytes.wrap(new byte[] {(byte) rnd.nextInt(8)});
                String at = "seed " + seed + ", range [" + from + ", " + to + "]";
                List<String> expected = entries(kafka.range(from, to));
                assertThat(entries(s.range(from, to))).as(at).isEqualTo(expected);
                assertThat(entries(s.reverseRange(from, to)))
                        .as(at + " reversed")
                        .isEqualTo(entries(kafka.reverseRange(from, to)));
                if (from != null && to != null && from.compareTo(to) > 0) {
                    inverted++;
                }
                if (!expected.isEmpty()) {
                    nonEmpty++;
                }
            }
            assertThat(entries(s.all())).as("seed " + seed).isEqualTo(entries(kafka.all()));
            assertThat(entries(s.reverseAll())).as("seed " + seed).isEqualTo(entries(kafka.reverseAll()));
        } finally {
            kafka.close();
        }
        assertThat(inverted).as("inverted ranges compared").isGreaterThan(20);
        assertThat(nonEmpty).as("ranges that returned something").isGreaterThan(20);
    }

    /** An iterator's entries as "key=value" strings, in its order. */
    private static List<String> entries(KeyValueIterator<Bytes, byte[]> it) {
        List<String> out = new ArrayList<>();
        try (it) {
            it.forEachRemaining(kv -> out.add(kv.key + "=" + Arrays.toString(kv.value)));
        }
        return out;
    }

    @Test
    void iteratorsAreConsistentViewsAndClosedWithTheStore() {
        BloomKvStore s = open("iter", context());
        for (int i = 0; i < 10; i++) {
            s.put(b("k" + i), v("v" + i));
        }
        KeyValueIterator<Bytes, byte[]> it = s.all();
        assertThat(str(it.next().key.get())).isEqualTo("k0");
        // Writes while iterating: no ConcurrentModificationException, the iterator keeps its view.
        s.delete(b("k1"));
        s.put(b("k15"), v("new"));
        s.flush();
        List<String> rest = new ArrayList<>();
        it.forEachRemaining(kv -> rest.add(str(kv.key.get())));
        assertThat(rest).containsExactly("k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9");
        it.close();
        it.close(); // idempotent
        KeyValueIterator<Bytes, byte[]> left = s.range(b("k2"), b("k5"));
        assertThat(left.hasNext()).isTrue();
        s.close();
        assertThatThrownBy(left::hasNext)
                .as("closing the store closes its iterators")
                .isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(left::next).isInstanceOf(InvalidStateStoreException.class);
        left.close();
    }

    @Test
    void closeTwiceAndUseAfterClose() {
        BloomKvStore s = open("close", context());
        s.put(b("a"), v("1"));
        assertThat(s.isOpen()).isTrue();
        s.close();
        s.close();
        assertThat(s.isOpen()).isFalse();
        assertThatThrownBy(() -> s.get(b("a"))).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(() -> s.put(b("a"), v("2"))).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(s::all).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(s::approximateNumEntries).isInstanceOf(InvalidStateStoreException.class);
    }

    @Test
    void dataLivesUnderStateDirAndFlushMakesItDurable() throws Exception {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        TestStoreContext ctx = context();
        BloomKvStore s = (BloomKvStore) BloomKvStores.persistentKeyValueStore(
                        "durable", BloomKvStores.defaultKeyValueOptions().fileSystem(fs))
                .get();
        s.init(ctx, s);
        for (int i = 0; i < 100; i++) {
            s.put(b("k" + i), v("v" + i));
        }
        assertThat(s.database().stats().tableCount()).isZero();
        s.flush();
        assertThat(s.database().stats().tableCount())
                .as("flush writes the memtable to a table (no WAL)")
                .isEqualTo(1);
        assertThat(s.database().stats().walRecords()).as("no WAL record").isZero();
        assertThat(new File(dir.toFile(), "durable")).isDirectory();
        assertThat(Files.exists(dir.resolve("durable").resolve("CURRENT"))).isTrue();
        // A power loss right after the flush: what was flushed is on disk.
        FaultInjectingFileSystem.Fault everything = fs.inject((op, p) -> true);
        try {
            s.close();
        } catch (RuntimeException expected) {
            // closing through a dead file system fails
        } finally {
            everything.remove();
        }
        fs.crash(new Random(7));
        BloomKvStore again = (BloomKvStore) BloomKvStores.persistentKeyValueStore(
                        "durable", BloomKvStores.defaultKeyValueOptions().fileSystem(fs))
                .get();
        again.init(context(), again);
        stores.add(again);
        for (int i = 0; i < 100; i++) {
            assertThat(str(again.get(b("k" + i)))).isEqualTo("v" + i);
        }
        assertThat(again.approximateNumEntries()).isEqualTo(100);
    }

    @Test
    void approximateNumEntriesCountsMemtableAndTables() {
        BloomKvStore s = open("count", context());
        assertThat(s.approximateNumEntries()).isZero();
        for (int i = 0; i < 500; i++) {
            s.put(b("k" + i), v("v"));
        }
        assertThat(s.approximateNumEntries()).isEqualTo(500);
        s.flush();
        for (int i = 500; i < 600; i++) {
            s.put(b("k" + i), v("v"));
        }
        assertThat(s.approximateNumEntries()).isEqualTo(600);
    }

    /**
     * Deletes count as Kafka's RocksDB store counts them (RocksDB's rocksdb.estimate-num-keys: a delete in the memtable
     * takes itself and one put off the estimate), compared with Kafka's own store on the same writes.
     */
    @Test
    void approximateNumEntriesSubtractsDeletesAsKafkasRocksDbStore() {
        BloomKvStore s = open("deletes", context());
        KeyValueStore<Bytes, byte[]> kafka =
                Stores.persistentKeyValueStore("kafka-deletes").get();
        TestStoreContext kctx = context();
        kctx.configs.put(org.apache.kafka.streams.StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "INFO");
        kafka.init(InternalTestContext.of(kctx), kafka);
        try {
            for (int i = 0; i < 100; i++) {
                s.put(b("k" + i), v("v"));
                kafka.put(b("k" + i), v("v"));
            }
            for (int i = 0; i < 40; i++) {
                s.delete(b("k" + i));
                kafka.delete(b("k" + i));
            }
            assertThat(kafka.approximateNumEntries()).as("Kafka's store").isEqualTo(60);
            assertThat(s.approximateNumEntries()).isEqualTo(kafka.approximateNumEntries());
            for (int i = 40; i < 100; i++) {
                s.delete(b("k" + i));
                kafka.delete(b("k" + i));
            }
            assertThat(s.approximateNumEntries()).isZero().isEqualTo(kafka.approximateNumEntries());
        } finally {
            kafka.close();
        }
    }

    @Test
    void restoreWritesBatchesAndTracksThePosition() {
        TestStoreContext ctx = context();
        ctx.configs.put(
                org.apache.kafka.streams.StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, true);
        BloomKvStore s = open("restore", ctx);
        assertThat(ctx.registered).isSameAs(s);
        assertThat(ctx.restoreCallback).isInstanceOf(RecordBatchingStateRestoreCallback.class);
        List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            batch.add(ChangelogRecords.withPosition(
                    "app-restore-changelog",
                    3,
                    i,
                    v("k" + (i % 100)),
                    i == 999 ? null : v("v" + i),
                    "input",
                    3,
                    5000L + i));
        }
        ((RecordBatchingStateRestoreCallback) ctx.restoreCallback).restoreBatch(batch);
        assertThat(str(s.get(b("k5")))).isEqualTo("v905");
        assertThat(s.get(b("k99"))).as("a null value restores a delete").isNull();
        assertThat(s.getPosition().getPartitionPositions("input"))
                .as("the position restored from the records' headers")
                .containsEntry(3, 5999L);
        ((RecordBatchingStateRestoreCallback) ctx.restoreCallback)
                .restoreAll(List.of(KeyValue.pair(v("k5"), v("again"))));
        assertThat(str(s.get(b("k5")))).isEqualTo("again");
    }

    /**
     * Restore batches go through the store's reused batch when small and a batch of their own when not: a small batch
     * must leave nothing behind for the next (a record of the first batch written again by the second would undo a put
     * made between them), and a batch past the reused one's size must restore every record, a key's last one winning.
     */
    @Test
    void restoreBatchesLeaveNothingForTheNextAndLargeOnesRestoreWhole() {
        TestStoreContext ctx = context();
        BloomKvStore s = open("restore-reuse", ctx);
        RecordBatchingStateRestoreCallback cb = (RecordBatchingStateRestoreCallback) ctx.restoreCallback;
        cb.restoreBatch(List.of(new ConsumerRecord<>("app-restore-changelog", 0, 0, v("a"), v("1"))));
        s.put(b("a"), v("2"));
        cb.restoreBatch(List.of(new ConsumerRecord<>("app-restore-changelog", 0, 1, v("b"), v("1"))));
        assertThat(str(s.get(b("a"))))
                .as("the first restore batch is not written again")
                .isEqualTo("2");
        assertThat(str(s.get(b("b")))).isEqualTo("1");

        List<ConsumerRecord<byte[], byte[]>> large = new ArrayList<>();
        byte[] filler = new byte[200];
        for (int i = 0; i < 2000; i++) { // about 430 KB of operations, past the reused batch's 64 KiB
            byte[] value = Arrays.copyOf(filler, filler.length + 8);
            System.arraycopy(v(String.format("%08d", i)), 0, value, filler.length, 8);
            large.add(new ConsumerRecord<>("app-restore-changelog", 0, 2 + i, v("k" + (i % 700)), value));
        }
        cb.restoreBatch(large);
        for (int k = 0; k < 700; k++) {
            int last = k + 700 * ((1999 - k) / 700);
            byte[] got = s.get(b("k" + k));
            assertThat(new String(got, got.length - 8, 8, java.nio.charset.StandardCharsets.UTF_8))
                    .as("key k%d", k)
                    .isEqualTo(String.format("%08d", last));
        }
        cb.restoreBatch(List.of(new ConsumerRecord<>("app-restore-changelog", 0, 3000, v("c"), v("1"))));
        assertThat(str(s.get(b("k5"))))
                .as("the large batch is not written again")
                .endsWith(String.format("%08d", 1405));
    }

    @Test
    void iqV2KeyAndRangeQueriesAndPositionAcrossRestarts() {
        TestStoreContext ctx = context();
        BloomKvStore s = open("iq", ctx);
        ctx.setRecord("input", 0, 41);
        s.put(b("a"), v("A"));
        ctx.setRecord("input", 0, 42);
        s.put(b("b"), v("B"));
        assertThat(s.getPosition()).isEqualTo(Position.emptyPosition().withComponent("input", 0, 42));
        QueryResult<byte[]> r = s.query(KeyQuery.withKey(b("a")), PositionBound.unbounded(), new QueryConfig(false));
        assertThat(r.isSuccess()).isTrue();
        assertThat(str(r.getResult())).isEqualTo("A");
        QueryResult<KeyValueIterator<Bytes, byte[]>> range = s.query(
                RangeQuery.<Bytes, byte[]>withRange(b("a"), b("b")).withDescendingKeys(),
                PositionBound.unbounded(),
                new QueryConfig(false));
        assertThat(range.isSuccess()).isTrue();
        assertThat(drain(range.getResult())).containsExactly("b=B", "a=A");
        assertThat(RangeQuery.withNoBounds().resultOrder()).isEqualTo(ResultOrder.ANY);
        QueryResult<byte[]> ahead = s.query(
                KeyQuery.withKey(b("a")),
                PositionBound.at(Position.emptyPosition().withComponent("input", 0, 100)),
                new QueryConfig(false));
        assertThat(ahead.isFailure()).as("a position bound not reached yet").isTrue();
        s.flush();
        s.close();
        BloomKvStore again = open("iq", context());
        assertThat(again.getPosition())
                .as("checkpointed on flush, read at init")
                .isEqualTo(Position.emptyPosition().withComponent("input", 0, 42));
    }

    /**
     * IQv2 consistency: a query holds the position's monitor while it checks the bound, reads and copies the position
     * (Kafka's StoreQueryUtils.handleBasicQueries), so a write must change the data and the position under that same
     * monitor. Here the test holds it, as a query would: the put waits, and until it is let through the store shows
     * the old value with the old position, then the new value with the new position.
     */
    @Test
    void aPutAndItsPositionWaitForAQueryHoldingThePosition() throws Exception {
        TestStoreContext ctx = context();
        BloomKvStore s = open("iq-atomic", ctx);
        ctx.setRecord("input", 0, 1);
        s.put(b("k"), v("old"));
        ctx.setRecord("input", 0, 2);
        Position p = s.getPosition();
        Thread writer = new Thread(() -> s.put(b("k"), v("new")), "writer");
        synchronized (p) {
            writer.start();
            MonitorWaits.awaitBlockedOn(writer, p);
            assertThat(str(s.get(b("k"))))
                    .as("nothing written while a query holds the position")
                    .isEqualTo("old");
            assertThat(p.getPartitionPositions("input")).containsEntry(0, 1L);
        }
        writer.join();
        assertThat(str(s.get(b("k")))).isEqualTo("new");
        assertThat(s.getPosition().getPartitionPositions("input")).containsEntry(0, 2L);
    }

    /**
     * The same for a restore batch (a standby's or a restoring store's): its records' positions advance with the
     * batch written, never before it, so a bounded query cannot pass on the new position and read the old data.
     */
    @Test
    void aRestoreBatchAndItsPositionWaitForAQueryHoldingThePosition() throws Exception {
        TestStoreContext ctx = context();
        ctx.configs.put(
                org.apache.kafka.streams.StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, true);
        BloomKvStore s = open("iq-restore", ctx);
        RecordBatchingStateRestoreCallback cb = (RecordBatchingStateRestoreCallback) ctx.restoreCallback;
        List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            batch.add(ChangelogRecords.withPosition(
                    "app-iq-changelog", 0, i, v("k" + i), v("v" + i), "input", 0, 100L + i));
        }
        Position p = s.getPosition();
        Thread restorer = new Thread(() -> cb.restoreBatch(batch), "restorer");
        synchronized (p) {
            restorer.start();
            MonitorWaits.awaitBlockedOn(restorer, p);
            assertThat(p.getPartitionPositions("input"))
                    .as("the position waits with the batch")
                    .isEmpty();
            assertThat(s.get(b("k0"))).isNull();
        }
        restorer.join();
        assertThat(str(s.get(b("k2")))).isEqualTo("v2");
        assertThat(s.getPosition().getPartitionPositions("input")).containsEntry(0, 102L);
    }

    @Test
    void metricsAreRegisteredInTheStateStoreGroupAndRemovedOnClose() {
        TestStoreContext ctx = context();
        BloomKvStore s = open("metered", ctx);
        for (int i = 0; i < 2000; i++) {
            s.put(b("k" + i), v("v" + i));
        }
        s.database().flush(); // every key in a table with a filter
        for (int i = 0; i < 2000; i++) {
            s.get(b("k" + i + "x"));
        }
        Map<MetricName, ? extends Metric> m = ctx.metrics.metrics();
        MetricName useful = m.keySet().stream()
                .filter(n -> n.name().equals("bloomkv-filter-useful"))
                .findFirst()
                .orElseThrow();
        assertThat(useful.group()).isEqualTo("stream-state-metrics");
        assertThat(useful.tags()).containsEntry("bloomkv-state-id", "metered").containsEntry("task-id", "0_0");
        assertThat(((Number) m.get(useful).metricValue()).longValue()).isGreaterThan(1900);
        for (String name : new String[] {
            "bloomkv-filter-positive",
            "bloomkv-filter-false-positive-rate",
            "bloomkv-block-reads",
            "bloomkv-filter-memory-bytes"
        }) {
            assertThat(m.keySet().stream().anyMatch(n -> n.name().equals(name)))
                    .as(name)
                    .isTrue();
        }
        Metric memory = m.entrySet().stream()
                .filter(e -> e.getKey().name().equals("bloomkv-filter-memory-bytes"))
                .findFirst()
                .orElseThrow()
                .getValue();
        assertThat(((Number) memory.metricValue()).longValue())
                .isEqualTo(s.database().stats().filterMemoryBytes())
                .isGreaterThan(1000);
        s.close();
        assertThat(ctx.metrics.metrics().keySet().stream()
                        .noneMatch(n -> n.name().startsWith("bloomkv-")
                                || "metered".equals(n.tags().get("bloomkv-state-id"))))
                .as("removed on close, Kafka's names too")
                .isTrue();
    }

    @Test
    void oneConfiguredBlockCacheIsSharedByEveryStoreOfTheApplication() {
        TestStoreContext ctx1 = context();
        ctx1.configs.put(BloomKvConfig.BLOCK_CACHE_BYTES_CONFIG, 1L << 20);
        TestStoreContext ctx2 = context();
        ctx2.configs.put(BloomKvConfig.BLOCK_CACHE_BYTES_CONFIG, "1048576");
        BloomKvStore a = open("shared-a", ctx1);
        BloomKvStore c = open("shared-c", ctx2);
        SharedBlockCache cache = a.database().options().blockCache();
        assertThat(cache).isNotNull().isSameAs(c.database().options().blockCache());
        assertThat(cache.capacityBytes()).isEqualTo(1L << 20);
        for (int i = 0; i < 3000; i++) {
            a.put(b("k" + i), v("value-" + i));
            c.put(b("k" + i), v("other-" + i));
        }
        a.database().flush();
        c.database().flush();
        for (int i = 0; i < 3000; i++) {
            assertThat(str(a.get(b("k" + i)))).isEqualTo("value-" + i);
            assertThat(str(c.get(b("k" + i)))).isEqualTo("other-" + i);
        }
        assertThat(a.database().options().useMmapReads())
                .as("reads go through the shared cache")
                .isFalse();
        assertThat(cache.usedBytes()).isGreaterThan(0).isLessThanOrEqualTo(1L << 20);
        TestStoreContext bad = context();
        bad.configs.put(BloomKvConfig.BLOCK_CACHE_BYTES_CONFIG, "lots");
        BloomKvStore s =
                (BloomKvStore) BloomKvStores.persistentKeyValueStore("bad").get();
        assertThatThrownBy(() -> s.init(bad, s)).isInstanceOf(org.apache.kafka.common.config.ConfigException.class);
    }

    @Test
    void suppliersMakeTheFormatAsked() {
        assertThat(BloomKvStores.persistentKeyValueStore("p").get()).isNotInstanceOf(TimestampedBytesStore.class);
        assertThat(BloomKvStores.persistentTimestampedKeyValueStore("t").get())
                .isInstanceOf(TimestampedBytesStore.class);
        assertThat(BloomKvStores.persistentTimestampedKeyValueStoreWithHeaders("h")
                        .get())
                .isInstanceOf(org.apache.kafka.streams.state.HeadersBytesStore.class);
        assertThat(BloomKvStores.persistentKeyValueStore("p").metricsScope()).isEqualTo("bloomkv");
        assertThat(BloomKvStores.persistentKeyValueStore("p").get())
                .isNotSameAs(BloomKvStores.persistentKeyValueStore("p").get());
        BloomKvDslStoreSuppliers dsl = new BloomKvDslStoreSuppliers();
        assertThat(dsl.keyValueStore(new org.apache.kafka.streams.state.DslKeyValueParams("t", true))
                        .get())
                .isInstanceOf(BloomKvTimestampedStore.class);
        assertThat(dsl.keyValueStore(new org.apache.kafka.streams.state.DslKeyValueParams("p", false))
                        .get())
                .isExactlyInstanceOf(BloomKvStore.class);
    }
}
