package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.WindowKeyQuery;
import org.apache.kafka.streams.query.WindowRangeQuery;
import org.apache.kafka.streams.state.HeadersBytesStore;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.TimestampedBytesStore;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The window and session stores directly: argument checks, closed-store behaviour, metrics, restore, IQv2, reopen. */
class BloomKvWindowStoreTest {
    private static final Duration RETENTION = Duration.ofMinutes(2); // segments of 60 s
    private static final Duration SIZE = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    @RegisterExtension
    final OpenStores stores = new OpenStores();

    private static Bytes b(String s) {
        return Bytes.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] v(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private WindowStore<Bytes, byte[]> window(TestStoreContext ctx, boolean retainDuplicates) {
        WindowStore<Bytes, byte[]> s = BloomKvStores.persistentWindowStore(
                        "w", RETENTION, SIZE, retainDuplicates, WindowStoreDifferentialTest.smallOptions())
                .get();
        s.init(ctx, s);
        stores.add(s);
        return s;
    }

    private SessionStore<Bytes, byte[]> session(TestStoreContext ctx) {
        SessionStore<Bytes, byte[]> s =
                BloomKvStores.persistentSessionStore("s", RETENTION).get();
        s.init(ctx, s);
        stores.add(s);
        return s;
    }

    /** The same exception type and message from Kafka's factory and bloomkv's, or the same supplier parameters. */
    private static void sameOutcome(Supplier<Object> kafka, Supplier<Object> bloom) {
        Object k;
        try {
            k = kafka.get();
        } catch (RuntimeException e) {
            assertThatThrownBy(bloom::get).isExactlyInstanceOf(e.getClass()).hasMessage(e.getMessage());
            return;
        }
        Object b = bloom.get();
        if (k instanceof WindowBytesStoreSupplier kw) {
            WindowBytesStoreSupplier bw = (WindowBytesStoreSupplier) b;
            assertThat(List.of(
                            bw.name(),
                            bw.retentionPeriod(),
                            bw.segmentIntervalMs(),
                            bw.windowSize(),
                            bw.retainDuplicates()))
                    .isEqualTo(List.of(
                            kw.name(),
                            kw.retentionPeriod(),
                            kw.segmentIntervalMs(),
                            kw.windowSize(),
                            kw.retainDuplicates()));
        } else {
            SessionBytesStoreSupplier ks = (SessionBytesStoreSupplier) k;
            SessionBytesStoreSupplier bs = (SessionBytesStoreSupplier) b;
            assertThat(List.of(bs.name(), bs.retentionPeriod(), bs.segmentIntervalMs()))
                    .isEqualTo(List.of(ks.name(), ks.retentionPeriod(), ks.segmentIntervalMs()));
        }
    }

    @Test
    void factoriesCheckArgumentsAsKafkasDo() {
        Duration[] durations = {
            null,
            Duration.ofMillis(-1),
            Duration.ZERO,
            Duration.ofSeconds(30),
            Duration.ofMinutes(10),
            Duration.ofSeconds(Long.MAX_VALUE)
        };
        int checked = 0;
        for (String name : new String[] {null, "n"}) {
            for (Duration r : durations) {
                for (Duration w : durations) {
                    for (boolean dups : new boolean[] {false, true}) {
                        sameOutcome(
                                () -> Stores.persistentWindowStore(name, r, w, dups),
                                () -> BloomKvStores.persistentWindowStore(name, r, w, dups));
                        sameOutcome(
                                () -> Stores.persistentTimestampedWindowStore(name, r, w, dups),
                                () -> BloomKvStores.persistentTimestampedWindowStore(name, r, w, dups));
                        sameOutcome(
                                () -> Stores.persistentTimestampedWindowStoreWithHeaders(name, r, w, dups),
                                () -> BloomKvStores.persistentTimestampedWindowStoreWithHeaders(name, r, w, dups));
                        checked += 3;
                    }
                }
                sameOutcome(
                        () -> Stores.persistentSessionStore(name, r),
                        () -> BloomKvStores.persistentSessionStore(name, r));
                sameOutcome(
                        () -> Stores.persistentSessionStoreWithHeaders(name, r),
                        () -> BloomKvStores.persistentSessionStoreWithHeaders(name, r));
                checked += 2;
            }
        }
        assertThat(checked).isEqualTo(2 * 6 * (6 * 2 * 3 + 2));
        // The value formats Kafka's wrappers look for.
        assertThat(BloomKvStores.persistentWindowStore("n", RETENTION, SIZE, false)
                        .get())
                .isNotInstanceOf(TimestampedBytesStore.class);
        assertThat(BloomKvStores.persistentTimestampedWindowStore("n", RETENTION, SIZE, false)
                        .get())
                .isInstanceOf(TimestampedBytesStore.class);
        assertThat(BloomKvStores.persistentTimestampedWindowStoreWithHeaders("n", RETENTION, SIZE, false)
                        .get())
                .isInstanceOf(TimestampedBytesStore.class)
                .isInstanceOf(HeadersBytesStore.class);
        assertThat(BloomKvStores.persistentTimestampedWindowStoreWithHeaders("n", RETENTION, SIZE, false))
                .isInstanceOf(org.apache.kafka.streams.state.HeadersBytesStoreSupplier.class);
        assertThat(BloomKvStores.persistentSessionStoreWithHeaders("n", RETENTION)
                        .get())
                .isInstanceOf(HeadersBytesStore.class);
        assertThat(BloomKvStores.persistentSessionStore("n", RETENTION).get()).isNotInstanceOf(HeadersBytesStore.class);
    }

    @Test
    void nullsAreRejectedAsKafkasStoresDo() {
        TestStoreContext ctx = new TestStoreContext(dir.toFile());
        WindowStore<Bytes, byte[]> w = window(ctx, false);
        assertThatThrownBy(() -> w.put(null, v("x"), 0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> w.fetch(null, 0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> w.fetch(null, 0, 10)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> w.backwardFetch(null, 0, 10)).isInstanceOf(NullPointerException.class);
        SessionStore<Bytes, byte[]> s = session(ctx);
        assertThatThrownBy(() -> s.put(null, v("x"))).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.remove(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.findSessions(null, 0, 10)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.fetchSession(null, 0, 10)).isInstanceOf(NullPointerException.class);
        // Null range bounds are open, as Kafka's.
        w.put(b("a"), v("1"), 1000);
        try (KeyValueIterator<Windowed<Bytes>, byte[]> it = w.fetch(null, null, 0, 5000)) {
            assertThat(it.hasNext()).isTrue();
            assertThat(it.peekNextKey().key()).isEqualTo(b("a"));
        }
    }

    @Test
    void aClosedStoreAndItsIteratorsThrowInvalidStateStoreException() {
        TestStoreContext ctx = new TestStoreContext(dir.toFile());
        WindowStore<Bytes, byte[]> w = window(ctx, false);
        SessionStore<Bytes, byte[]> s = session(ctx);
        for (int i = 0; i < 10; i++) {
            w.put(b("k" + i), v("v" + i), 1000L * i);
            s.put(new Windowed<>(b("k" + i), new SessionWindow(1000L * i, 1000L * i + 500)), v("s" + i));
        }
        WindowStoreIterator<byte[]> open = w.fetch(b("k1"), 0, 100_000);
        KeyValueIterator<Windowed<Bytes>, byte[]> openAll = w.all();
        KeyValueIterator<Windowed<Bytes>, byte[]> openSessions = s.fetch(b("k2"));
        assertThat(openAll.next().key.key()).isEqualTo(b("k0"));
        w.close();
        s.close();
        w.close(); // idempotent
        assertThat(w.isOpen()).isFalse();
        assertThatThrownBy(open::hasNext).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(openAll::next).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(openSessions::peekNextKey).isInstanceOf(InvalidStateStoreException.class);
        open.close();
        openAll.close();
        openSessions.close();
        assertThatThrownBy(() -> w.put(b("x"), v("x"), 1)).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(() -> w.fetch(b("x"), 1)).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(() -> w.fetch(b("x"), 0, 1)).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(w::all).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(() -> w.fetchAll(0, 1)).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(() -> s.findSessions(b("x"), 0, 1)).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(() -> s.findSessions(0, 1)).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(() -> s.remove(new Windowed<>(b("x"), new SessionWindow(0, 1))))
                .isInstanceOf(InvalidStateStoreException.class);
    }

    private static double metric(TestStoreContext ctx, String group, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : ctx.metrics.metrics().entrySet()) {
            if (e.getKey().group().equals(group) && e.getKey().name().equals(name)) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("no metric " + group + "/" + name);
    }

    @Test
    void expiredPutsAreDroppedAndCountedAndExpiredWindowsNeverReturned() {
        TestStoreContext ctx = new TestStoreContext(dir.toFile());
        WindowStore<Bytes, byte[]> w = window(ctx, false);
        w.put(b("a"), v("early"), 10_000);
        w.put(b("a"), v("now"), 600_000); // stream time 600 s: retention 120 s keeps windows from 480 001 ms
        assertThat(metric(ctx, "stream-task-metrics", "dropped-records-total")).isZero();
        w.put(b("a"), v("late"), 100_000); // its segment expired: dropped
        w.put(b("b"), v("late"), 470_000); // segment 7 (420-480 s) < segmentId(600 s - 120 s) = 8: dropped too
        w.put(b("b"), v("kept"), 480_000); // segment 8 is live: kept, but older than the read floor (480 001 ms)
        assertThat(metric(ctx, "stream-task-metrics", "dropped-records-total")).isEqualTo(2.0);
        assertThat(WindowStoreDifferentialTest.values(w.fetch(b("a"), 0, Long.MAX_VALUE)))
                .containsExactly("600000=now");
        assertThat(w.fetch(b("a"), 10_000)).isNull();
        assertThat(w.fetch(b("b"), 480_000))
                .as("older than stream time - retention + 1")
                .isNull();
        assertThat(WindowStoreDifferentialTest.windows(w.all())).containsExactly("[97]@600000-610000=now");
        // The budgets and the engine counters are in the store metrics.
        assertThat(metric(ctx, "stream-state-metrics", "bloomkv-write-buffer-capacity-bytes"))
                .as("no shared budget configured: the memtable is bounded by Options.writeBufferSize alone")
                .isZero();
        assertThat(metric(ctx, "stream-state-metrics", "bloomkv-block-cache-capacity-bytes"))
                .isGreaterThan(0);
        assertThat(metric(ctx, "stream-state-metrics", "bloomkv-segments")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void duplicatesAreKeptAndAPointFetchSeesTheLatestSequenceOnly() {
        TestStoreContext ctx = new TestStoreContext(dir.toFile());
        WindowStore<Bytes, byte[]> w = window(ctx, true);
        w.put(b("a"), v("1"), 5000);
        w.put(b("a"), v("2"), 5000);
        w.put(b("a"), null, 5000); // a no-op with duplicates
        assertThat(WindowStoreDifferentialTest.values(w.fetch(b("a"), 0, 10_000)))
                .containsExactly("5000=1", "5000=2");
        assertThat(WindowStoreDifferentialTest.values(w.backwardFetch(b("a"), 0, 10_000)))
                .containsExactly("5000=2", "5000=1");
        assertThat(new String(w.fetch(b("a"), 5000))).isEqualTo("2");
        w.put(b("b"), v("3"), 6000);
        assertThat(w.fetch(b("a"), 5000))
                .as("the point fetch uses the store's current sequence number")
                .isNull();
    }

    /**
     * Without a WAL (the default options) expiry forces no flush: the range tombstone is written at once and the
     * expired tables are removed only after the engine's own flush of the memtable holding it.
     */
    @Test
    void expiryWithoutAWalWaitsForTheEnginesFlush() {
        TestStoreContext ctx = new TestStoreContext(dir.toFile());
        WindowStore<Bytes, byte[]> s = BloomKvStores.persistentWindowStore(
                        "w", RETENTION, SIZE, false, BloomKvStores.defaultSegmentedOptions())
                .get();
        s.init(ctx, s);
        stores.add(s);
        BloomKvWindowStore w = (BloomKvWindowStore) s;
        assertThat(w.db().options().disableWal()).isTrue();
        // Segments of 60 s, retention 2 min: 10 minutes of windows expire several segments.
        for (long t = 0; t < 600_000; t += 1_000) {
            w.put(b("k" + (t % 7)), v("v" + t), t);
        }
        w.commit(Map.of(new TopicPartition("changelog", 0), 600L));
        assertThat(w.expiryRangeDeletes()).as("expiry wrote its tombstones").isPositive();
        assertThat(w.db().stats().flushes()).as("no flush forced by expiry").isZero();
        assertThat(w.pendingRemovals()).as("the removal waits for a flush").isEqualTo(1);
        w.flush();
        w.awaitExpiryDeletions();
        assertThat(w.pendingRemovals()).as("handed over after the flush").isZero();
        assertThat(WindowStoreDifferentialTest.windows(w.fetchAll(0, Long.MAX_VALUE)))
                .as("only the live segments answer")
                .allSatisfy(e -> assertThat(Long.parseLong(e.substring(e.indexOf('@') + 1, e.indexOf('-'))))
                        .isGreaterThanOrEqualTo(480_000L));
    }

    @Test
    void restoresThroughTheBatchingCallbackAndReopensWithItsSegments() {
        TestStoreContext ctx = new TestStoreContext(dir.resolve("a").toFile());
        WindowStore<Bytes, byte[]> w = window(ctx, false);
        List<ConsumerRecord<byte[], byte[]>> changelog = new ArrayList<>();
        long offset = 0;
        for (int i = 0; i < 400; i++) {
            Bytes key = b("k" + (i % 37));
            long ts = 1000L * i;
            byte[] value = i % 11 == 0 ? null : v("v" + i);
            w.put(key, value, ts);
            // What Kafka's change-logging layer writes: the composite key and the value.
            changelog.add(new ConsumerRecord<>(
                    "changelog", 0, offset++, WindowKeyLayout.toStoreKey(key.get(), ts, 0), value));
        }
        // The same windows again, several times within one restore batch, puts and deletes interleaved: the restored
        // store must end with each window's last record, as the changelog's order says.
        for (int i = 0; i < 120; i++) {
            Bytes key = b("k" + (i % 5));
            long ts = 360_000L + 1000L * (i % 9);
            byte[] value = i % 4 == 3 ? null : v("again" + i);
            w.put(key, value, ts);
            changelog.add(new ConsumerRecord<>(
                    "changelog", 0, offset++, WindowKeyLayout.toStoreKey(key.get(), ts, 0), value));
        }
        List<String> expected = WindowStoreDifferentialTest.windows(w.all());
        assertThat(expected).isNotEmpty();
        TestStoreContext ctx2 = new TestStoreContext(dir.resolve("b").toFile());
        WindowStore<Bytes, byte[]> restored = window(ctx2, false);
        RecordBatchingStateRestoreCallback cb = (RecordBatchingStateRestoreCallback) ctx2.restoreCallback;
        for (int from = 0; from < changelog.size(); from += 64) {
            cb.restoreBatch(changelog.subList(from, Math.min(changelog.size(), from + 64)));
        }
        assertThat(WindowStoreDifferentialTest.windows(restored.all())).isEqualTo(expected);
        assertThat(WindowStoreDifferentialTest.windows(restored.backwardFetch(b("k1"), b("k3"), 0, Long.MAX_VALUE)))
                .isEqualTo(WindowStoreDifferentialTest.windows(w.backwardFetch(b("k1"), b("k3"), 0, Long.MAX_VALUE)));
        // Reopen: the live segments are opened again (stream time restarts unknown, as Kafka's).
        restored.flush();
        restored.close();
        stores.remove(restored);
        WindowStore<Bytes, byte[]> reopened =
                window(new TestStoreContext(dir.resolve("b").toFile()), false);
        // Until a put sets stream time again, the live segments' older windows are visible too (as in Kafka's store).
        assertThat(WindowStoreDifferentialTest.windows(reopened.all()))
                .containsAll(expected)
                .hasSizeGreaterThan(expected.size());
        reopened.put(b("k0"), null, 399_000);
        assertThat(WindowStoreDifferentialTest.windows(reopened.all())).isEqualTo(expected);
    }

    @Test
    void iqv2WindowQueriesWithPositionBounds() {
        TestStoreContext ctx = new TestStoreContext(dir.toFile());
        WindowStore<Bytes, byte[]> w = window(ctx, false);
        SessionStore<Bytes, byte[]> s = session(ctx);
        ctx.setRecord("in", 0, 7);
        w.put(b("a"), v("1"), 1000);
        w.put(b("a"), v("2"), 2000);
        w.put(b("b"), v("3"), 2000);
        s.put(new Windowed<>(b("a"), new SessionWindow(100, 200)), v("s"));
        QueryConfig config = new QueryConfig(false);
        // Kafka 4.3.1's WindowKeyQuery stores its bounds swapped (its constructor takes (key, timeTo, timeFrom) and the
        // factory passes (key, timeFrom, timeTo)): the store answers what Kafka's stores answer, so [0, 1500] is asked
        // as (1500, 0).
        QueryResult<WindowStoreIterator<byte[]>> byKey = w.query(
                WindowKeyQuery.withKeyAndWindowStartRange(b("a"), Instant.ofEpochMilli(1500), Instant.ofEpochMilli(0)),
                PositionBound.unbounded(),
                config);
        assertThat(byKey.isSuccess()).isTrue();
        assertThat(WindowStoreDifferentialTest.values(byKey.getResult())).containsExactly("1000=1");
        assertThat(byKey.getPosition()).isEqualTo(Position.fromMap(Map.of("in", Map.of(0, 7L))));
        QueryResult<KeyValueIterator<Windowed<Bytes>, byte[]>> range = w.query(
                WindowRangeQuery.withWindowStartRange(Instant.ofEpochMilli(1500), Instant.ofEpochMilli(2500)),
                PositionBound.unbounded(),
                config);
        assertThat(WindowStoreDifferentialTest.windows(range.getResult()))
                .containsExactly("[97]@2000-12000=2", "[98]@2000-12000=3");
        QueryResult<WindowStoreIterator<byte[]>> ahead = w.query(
                WindowKeyQuery.withKeyAndWindowStartRange(b("a"), Instant.ofEpochMilli(1500), Instant.ofEpochMilli(0)),
                PositionBound.at(Position.fromMap(Map.of("in", Map.of(0, 8L)))),
                config);
        assertThat(ahead.isFailure()).isTrue();
        assertThat(ahead.getFailureReason()).isEqualTo(FailureReason.NOT_UP_TO_BOUND);
        QueryResult<KeyValueIterator<Windowed<Bytes>, byte[]>> sessions = s.query(
                WindowRangeQuery.withKey(b("a")),
                PositionBound.at(Position.fromMap(Map.of("in", Map.of(0, 7L)))),
                config);
        assertThat(SessionStoreDifferentialTest.sessions(sessions.getResult())).containsExactly("[97]@100-200=s");
        // The position survives a restart through its checkpoint.
        w.flush();
        Position before = w.getPosition().copy();
        w.close();
        stores.remove(w);
        assertThat(window(new TestStoreContext(dir.toFile()), false).getPosition())
                .isEqualTo(before);
    }
    /**
     * Lock order: a window query holds the position's monitor (Kafka's StoreQueryUtils) while it reads through the
     * store's fetches, so a put must not hold what a fetch needs while it waits for the position. Here the test holds
     * the position as a query would: the put waits for it, a fetch meanwhile returns (the old value) instead of
     * deadlocking with the put, and once the position is free the new value and position are there together.
     */
    @Test
    void aPutWaitingForAQueryDoesNotBlockTheQuerysFetch() throws Exception {
        TestStoreContext ctx = new TestStoreContext(dir.toFile());
        WindowStore<Bytes, byte[]> w = window(ctx, false);
        ctx.setRecord("in", 0, 1);
        w.put(b("k"), v("old"), 1000);
        ctx.setRecord("in", 0, 2);
        Position p = w.getPosition();
        Thread writer = new Thread(() -> w.put(b("k"), v("new"), 1000), "writer");
        List<String> fetched = new ArrayList<>();
        Thread reader = new Thread(
                () -> fetched.addAll(WindowStoreDifferentialTest.values(w.fetch(b("k"), 0, 5000))), "reader");
        synchronized (p) {
            writer.start();
            MonitorWaits.awaitBlockedOn(writer, p);
            reader.start();
            reader.join(30_000);
            assertThat(reader.isAlive())
                    .as("a fetch while a put waits for the position (the query's fetch) does not wait for the put")
                    .isFalse();
            assertThat(fetched).containsExactly("1000=old");
            assertThat(p.getPartitionPositions("in")).containsEntry(0, 1L);
        }
        writer.join();
        reader.join();
        assertThat(WindowStoreDifferentialTest.values(w.fetch(b("k"), 0, 5000))).containsExactly("1000=new");
        assertThat(w.getPosition().getPartitionPositions("in")).containsEntry(0, 2L);
    }

    /** A restore batch of a window store waits for a query holding the position, and advances it with its data. */
    @Test
    void aWindowRestoreBatchAndItsPositionWaitForAQueryHoldingThePosition() throws Exception {
        TestStoreContext ctx = new TestStoreContext(dir.toFile());
        ctx.configs.put(
                org.apache.kafka.streams.StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, true);
        WindowStore<Bytes, byte[]> w = window(ctx, false);
        RecordBatchingStateRestoreCallback cb = (RecordBatchingStateRestoreCallback) ctx.restoreCallback;
        ConsumerRecord<byte[], byte[]> r = ChangelogRecords.withPosition(
                "changelog", 0, 0, WindowKeyLayout.toStoreKey(b("k").get(), 1000, 0), v("restored"), "in", 0, 9L);
        Position p = w.getPosition();
        Thread restorer = new Thread(() -> cb.restoreBatch(List.of(r)), "restorer");
        synchronized (p) {
            restorer.start();
            MonitorWaits.awaitBlockedOn(restorer, p);
            assertThat(p.getPartitionPositions("in"))
                    .as("the position waits with the batch")
                    .isEmpty();
            assertThat(WindowStoreDifferentialTest.values(w.fetch(b("k"), 0, 5000)))
                    .isEmpty();
        }
        restorer.join();
        assertThat(WindowStoreDifferentialTest.values(w.fetch(b("k"), 0, 5000))).containsExactly("1000=restored");
        assertThat(w.getPosition().getPartitionPositions("in")).containsEntry(0, 9L);
    }
}
