package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.query.FailureReason;
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
import org.apache.kafka.streams.state.internals.RocksDbVersionedKeyValueBytesStoreSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The points of the versioned store's contract the differential test does not reach: arguments, lifecycle, files, IQv2, offsets. */
class BloomKvVersionedStoreTest {
    @TempDir
    Path dir;

    private final List<StateStore> stores = new ArrayList<>();

    @AfterEach
    void closeAll() {
        stores.forEach(StateStore::close);
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

    private static String str(VersionedRecord<byte[]> r) {
        return r == null
                ? null
                : new String(r.value(), StandardCharsets.UTF_8) + "@" + r.timestamp()
                        + r.validTo().map(t -> "-" + t).orElse("");
    }

    /** The store inside Kafka's adapter, initialised with {@code ctx}. */
    private BloomKvVersionedStore open(TestStoreContext ctx, long historyRetention, long segmentInterval) {
        return open(ctx, historyRetention, segmentInterval, BloomKvStores.defaultKeyValueOptions());
    }

    private BloomKvVersionedStore open(
            TestStoreContext ctx, long historyRetention, long segmentInterval, io.bloomkv.engine.Options options) {
        StateStore adapter = BloomKvStores.persistentVersionedKeyValueStore(
                        "v", Duration.ofMillis(historyRetention), Duration.ofMillis(segmentInterval), options)
                .get();
        adapter.init(ctx, adapter);
        stores.add(adapter);
        try {
            java.lang.reflect.Field f =
                    org.apache.kafka.streams.state.internals.VersionedKeyValueToBytesStoreAdapter.class
                            .getDeclaredField("inner");
            f.setAccessible(true);
            return (BloomKvVersionedStore) f.get(adapter);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private TestStoreContext context() {
        return new TestStoreContext(dir.toFile());
    }

    /** Both factories throw the same exception type with the same message, or both accept. */
    private static void sameOutcome(Supplier<Object> ours, Supplier<Object> kafkas) {
        Throwable a = catchThrowable(ours::get);
        Throwable e = catchThrowable(kafkas::get);
        if (e == null) {
            assertThat(a).isNull();
        } else {
            assertThat(a).isNotNull().hasSameClassAs(e).hasMessage(e.getMessage());
        }
    }

    @Test
    void argumentChecksAreKafkas() {
        Duration max = Duration.ofSeconds(Long.MAX_VALUE);
        for (Duration hr : new Duration[] {null, Duration.ofMillis(-1), Duration.ZERO, Duration.ofMinutes(5), max}) {
            sameOutcome(
                    () -> BloomKvStores.persistentVersionedKeyValueStore("s", hr),
                    () -> Stores.persistentVersionedKeyValueStore("s", hr));
            for (Duration si : new Duration[] {null, Duration.ofMillis(-1), Duration.ZERO, Duration.ofMillis(1), max}) {
                sameOutcome(
                        () -> BloomKvStores.persistentVersionedKeyValueStore("s", hr, si),
                        () -> Stores.persistentVersionedKeyValueStore("s", hr, si));
                sameOutcome(
                        () -> BloomKvStores.persistentVersionedKeyValueStore(
                                "s", hr, si, io.bloomkv.engine.Options.defaults()),
                        () -> Stores.persistentVersionedKeyValueStore("s", hr, si));
            }
        }
        sameOutcome(
                () -> BloomKvStores.persistentVersionedKeyValueStore(null, Duration.ZERO),
                () -> Stores.persistentVersionedKeyValueStore(null, Duration.ZERO));
        sameOutcome(
                () -> BloomKvStores.persistentVersionedKeyValueStore(null, Duration.ZERO, Duration.ofMillis(1)),
                () -> Stores.persistentVersionedKeyValueStore(null, Duration.ZERO, Duration.ofMillis(1)));
        assertThatThrownBy(() -> BloomKvStores.persistentVersionedKeyValueStore("s", Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("historyRetention cannot be negative");
    }

    @Test
    void supplierMatchesKafkasDefaults() {
        for (long hr : new long[] {0, 1_000, 59_999, 60_000, 200_000, 300_001, 3_600_000, 86_400_000}) {
            VersionedBytesStoreSupplier ours =
                    BloomKvStores.persistentVersionedKeyValueStore("s", Duration.ofMillis(hr));
            RocksDbVersionedKeyValueBytesStoreSupplier theirs = (RocksDbVersionedKeyValueBytesStoreSupplier)
                    Stores.persistentVersionedKeyValueStore("s", Duration.ofMillis(hr));
            assertThat(ours.historyRetentionMs()).isEqualTo(hr);
            assertThat(((BloomKvVersionedBytesStoreSupplier) ours).segmentIntervalMs())
                    .as("default segment interval for " + hr)
                    .isEqualTo(theirs.segmentIntervalMs());
        }
        VersionedBytesStoreSupplier s =
                BloomKvStores.persistentVersionedKeyValueStore("name", Duration.ofMinutes(1), Duration.ofSeconds(7));
        assertThat(s.name()).isEqualTo("name");
        assertThat(s.metricsScope()).isEqualTo("bloomkv");
        assertThat(s.get()).as("a new store each time").isNotSameAs(s.get());
    }

    @Test
    void nullKeysThrowAndAClosedStoreIsUnusable() {
        BloomKvVersionedStore s = open(context(), 100, 10);
        assertThatThrownBy(() -> s.put(null, v("x"), 1))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("key cannot be null");
        assertThatThrownBy(() -> s.get(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.get(null, 5)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> s.delete(null, 5)).isInstanceOf(NullPointerException.class);
        s.put(b("a"), v("1"), 10);
        VersionedRecordIterator<byte[]> it = s.get(b("a"), 0, 100, org.apache.kafka.streams.query.ResultOrder.ANY);
        s.close();
        assertThat(s.isOpen()).isFalse();
        assertThatThrownBy(it::hasNext)
                .as("iterators are closed with the store")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.put(b("a"), v("2"), 11)).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(() -> s.get(b("a"))).isInstanceOf(InvalidStateStoreException.class);
        assertThatThrownBy(() -> s.get(b("a"), 10)).isInstanceOf(InvalidStateStoreException.class);
        s.close(); // idempotent
    }

    @Test
    void putsDeletesAndHistory() {
        BloomKvVersionedStore s = open(context(), 100, 25);
        assertThat(s.put(b("k"), v("a"), 10)).isEqualTo(VersionedKeyValueStore.PUT_RETURN_CODE_VALID_TO_UNDEFINED);
        assertThat(s.put(b("k"), v("c"), 30)).isEqualTo(VersionedKeyValueStore.PUT_RETURN_CODE_VALID_TO_UNDEFINED);
        assertThat(s.put(b("k"), v("b"), 20))
                .as("an out-of-order put returns its validTo")
                .isEqualTo(30);
        assertThat(str(s.get(b("k")))).isEqualTo("c@30");
        assertThat(str(s.get(b("k"), 25))).isEqualTo("b@20-30");
        assertThat(str(s.get(b("k"), 19))).isEqualTo("a@10-20");
        assertThat(s.get(b("k"), 9)).isNull();
        assertThat(str(s.delete(b("k"), 40)))
                .as("delete returns the version it ends")
                .isEqualTo("c@30");
        assertThat(s.get(b("k"))).isNull();
        assertThat(str(s.get(b("k"), 35))).isEqualTo("c@30-40");
        assertThat(s.put(b("k"), v("old"), 5)).isEqualTo(10);
        // Stream time 200: history before 100 is past retention; the put at 50 is too old to be put.
        assertThat(s.put(b("other"), v("x"), 200)).isEqualTo(VersionedKeyValueStore.PUT_RETURN_CODE_VALID_TO_UNDEFINED);
        assertThat(s.put(b("k"), v("late"), 50)).isEqualTo(VersionedKeyValueStore.PUT_RETURN_CODE_NOT_PUT);
        assertThat(s.get(b("k"), 35)).as("past the history retention").isNull();
        assertThat(str(s.get(b("other"), 90)))
                .as("before the newest version and past the history retention")
                .isNull();
        assertThat(str(s.get(b("other"), 99))).isNull();
        assertThat(str(s.get(b("other"), 250))).isEqualTo("x@200");
    }

    @Test
    void droppedPutsAreCountedInTheTaskMetric() {
        TestStoreContext ctx = context();
        BloomKvVersionedStore s = open(ctx, 10, 5);
        s.put(b("a"), v("1"), 100);
        assertThat(s.put(b("a"), v("0"), 50)).isEqualTo(VersionedKeyValueStore.PUT_RETURN_CODE_NOT_PUT);
        assertThat(s.delete(b("a"), 50)).isNull();
        Metric total = ctx.metrics.metrics().entrySet().stream()
                .filter(e -> e.getKey().name().equals("dropped-records-total")
                        && e.getKey().group().equals("stream-task-metrics"))
                .map(Map.Entry::getValue)
                .findFirst()
                .orElseThrow();
        assertThat(((Number) total.metricValue()).doubleValue()).isEqualTo(2.0);
    }

    /** The segment ids of the keys the store's database holds (the latest values' id -1 excluded). */
    private static java.util.SortedSet<Long> storedSegmentIds(BloomKvVersionedStore s) {
        java.util.SortedSet<Long> ids = new java.util.TreeSet<>();
        try (io.bloomkv.engine.DbIterator it = s.db().iterator()) {
            // From segment 0: below it are the latest values and the store's offset and position records.
            for (it.seek(Segment.prefix(0)); it.valid(); it.next()) {
                long id = Segment.idOf(it.key());
                if (id != VersionedSegment.LATEST_ID) {
                    ids.add(id);
                }
            }
        }
        return ids;
    }

    @Test
    void expiredHistoryLeavesAsWholeSegments() throws Exception {
        // A small write buffer: the memtable is flushed many times, so the engine's compactions meet the tombstones.
        BloomKvVersionedStore s =
                open(context(), 100, 20, BloomKvStores.defaultKeyValueOptions().writeBufferSize(8 << 10));
        for (long t = 0; t <= 1000; t += 2) {
            for (int k = 0; k < 5; k++) {
                s.put(b("k" + k), v("v" + t), t);
            }
            List<Long> ids = s.segmentIds();
            assertThat(ids.size())
                    .as("segments live at stream time " + t + ": " + ids)
                    .isLessThanOrEqualTo(100 / 20 + 2);
            assertThat(ids).as("the database holds the live segments only").containsAll(storedSegmentIds(s));
        }
        // Segment of validTo 1000 is live; validTo below segmentId(900) * 20 = 900 dropped.
        assertThat(s.segmentIds()).doesNotContain(0L, 44L).contains(45L, 50L);
        // A range tombstone counts as one delete in the engine's counters: every delete is one of expiry's.
        assertThat(s.db().stats().deletes())
                .as("expiry writes one range tombstone per dropped run of segments, nothing per record")
                .isEqualTo(s.expiryRangeDeletes());
        assertThat(s.expiryRangeDeletes()).isBetween(1L, 1000L / 20);
        s.db().waitForBackgroundWork();
        assertThat(s.db().stats().tablesDroppedByRangeDeletion())
                .as("tables of expired segments dropped unread by the engine's compactions")
                .isPositive();
        assertThat(str(s.get(b("k1"), 950))).isEqualTo("v950@950-952");
        assertThat(s.get(b("k1"), 850)).isNull();
    }

    @Test
    void historyIsReadableAfterReopen() {
        TestStoreContext ctx = context();
        BloomKvVersionedStore s = open(ctx, 1000, 100);
        for (long t = 0; t < 500; t += 10) {
            s.put(b("k"), v("v" + t), t);
        }
        s.commit(Map.of());
        s.close();
        BloomKvVersionedStore again = open(ctx, 1000, 100);
        assertThat(str(again.get(b("k")))).isEqualTo("v490@490");
        assertThat(str(again.get(b("k"), 255))).isEqualTo("v250@250-260");
        assertThat(str(again.get(b("k"), 5))).isEqualTo("v0@0-10");
        assertThat(again.put(b("k"), v("mid"), 255)).isEqualTo(260);
        assertThat(str(again.get(b("k"), 257))).isEqualTo("mid@255-260");
    }

    @Test
    void iqv2QueriesHonourThePositionBound() {
        TestStoreContext ctx = context();
        BloomKvVersionedStore s = open(ctx, 1000, 100);
        ctx.setRecord("input", 0, 41);
        s.put(b("k"), v("a"), 10);
        ctx.setRecord("input", 0, 42);
        s.put(b("k"), v("b"), 20);
        assertThat(s.getPosition().getPartitionPositions("input")).containsEntry(0, 42L);

        QueryResult<VersionedRecord<byte[]>> latest = s.query(
                VersionedKeyQuery.<Bytes, byte[]>withKey(b("k")), PositionBound.unbounded(), new QueryConfig(true));
        assertThat(latest.isSuccess()).isTrue();
        assertThat(str(latest.getResult())).isEqualTo("b@20");
        assertThat(latest.getPosition().getPartitionPositions("input")).containsEntry(0, 42L);
        assertThat(latest.getExecutionInfo()).isNotEmpty();
        QueryResult<VersionedRecord<byte[]>> asOf = s.query(
                VersionedKeyQuery.<Bytes, byte[]>withKey(b("k")).asOf(Instant.ofEpochMilli(15)),
                PositionBound.at(Position.emptyPosition().withComponent("input", 0, 42L)),
                new QueryConfig(false));
        assertThat(str(asOf.getResult())).isEqualTo("a@10-20");
        QueryResult<VersionedRecord<byte[]>> ahead = s.query(
                VersionedKeyQuery.<Bytes, byte[]>withKey(b("k")),
                PositionBound.at(Position.emptyPosition().withComponent("input", 0, 43L)),
                new QueryConfig(false));
        assertThat(ahead.isFailure()).isTrue();
        assertThat(ahead.getFailureReason()).isEqualTo(FailureReason.NOT_UP_TO_BOUND);

        MultiVersionedKeyQuery<Bytes, byte[]> all = MultiVersionedKeyQuery.<Bytes, byte[]>withKey(b("k"))
                .fromTime(Instant.ofEpochMilli(0))
                .toTime(Instant.ofEpochMilli(100))
                .withAscendingTimestamps();
        QueryResult<VersionedRecordIterator<byte[]>> multi = s.query(
                all, PositionBound.at(Position.emptyPosition().withComponent("input", 0, 41L)), new QueryConfig(true));
        List<String> got = new ArrayList<>();
        try (VersionedRecordIterator<byte[]> it = multi.getResult()) {
            it.forEachRemaining(r -> got.add(str(r)));
        }
        assertThat(got).containsExactly("a@10-20", "b@20");
        assertThat(multi.getExecutionInfo()).isNotEmpty();
        QueryResult<VersionedRecordIterator<byte[]>> multiAhead = s.query(
                all, PositionBound.at(Position.emptyPosition().withComponent("input", 0, 50L)), new QueryConfig(false));
        assertThat(multiAhead.getFailureReason()).isEqualTo(FailureReason.NOT_UP_TO_BOUND);
    }

    @Test
    void offsetsAreManagedByTheStore() {
        TestStoreContext ctx = context();
        BloomKvVersionedStore s = open(ctx, 1000, 100);
        @SuppressWarnings("deprecation")
        boolean manages = s.managesOffsets();
        assertThat(manages).isTrue();
        TopicPartition tp = new TopicPartition("app-v-changelog", 0);
        assertThat(s.committedOffset(tp)).isNull();
        ctx.setRecord("input", 0, 41);
        s.put(b("k"), v("a"), 10);
        s.commit(Map.of(tp, 17L));
        assertThat(s.committedOffset(tp)).isEqualTo(17L);
        assertThat(s.db().stats().walRecords())
                .as("no WAL by default, as Kafka's store")
                .isZero();
        assertThat(s.db().stats().walSyncs()).isZero();
        assertThat(s.db().stats().tableCount()).as("a commit writes no table").isZero();
        assertThat(dir.resolve("v.offsets"))
                .as("offsets are records of the database")
                .doesNotExist();
        assertThat(dir.resolve("v.position")).doesNotExist();
        s.close();
        s = open(ctx, 1000, 100);
        assertThat(s.committedOffset(tp)).as("durable across reopen").isEqualTo(17L);
        assertThat(s.getPosition()).isEqualTo(Position.emptyPosition().withComponent("input", 0, 41L));
        assertThat(str(s.get(b("k")))).isEqualTo("a@10");
        java.util.HashMap<TopicPartition, Long> remove = new java.util.HashMap<>();
        remove.put(tp, null);
        s.commit(remove);
        assertThat(s.committedOffset(tp)).isNull();
        s.commit(Map.of(tp, 20L));
        s.commit(Map.of());
        assertThat(s.committedOffset(tp))
                .as("an empty commit clears every offset")
                .isNull();
    }

    @Test
    void offsetAndPositionFilesOfAnEarlierVersionMoveIntoTheDatabase() throws Exception {
        TopicPartition tp = new TopicPartition("app-v-changelog", 0);
        new org.apache.kafka.streams.state.internals.OffsetCheckpoint(
                        dir.resolve("v.offsets").toFile())
                .write(Map.of(tp, 77L));
        org.apache.kafka.streams.state.internals.StoreQueryUtils.checkpointPosition(
                new org.apache.kafka.streams.state.internals.OffsetCheckpoint(
                        dir.resolve("v.position").toFile()),
                Position.emptyPosition().withComponent("input", 1, 9L));
        BloomKvVersionedStore s = open(context(), 1000, 100);
        assertThat(s.committedOffset(tp)).isEqualTo(77L);
        assertThat(s.getPosition()).isEqualTo(Position.emptyPosition().withComponent("input", 1, 9L));
        assertThat(dir.resolve("v.offsets")).doesNotExist();
        assertThat(dir.resolve("v.position")).doesNotExist();
        s.close();
        BloomKvVersionedStore again = open(context(), 1000, 100);
        assertThat(again.committedOffset(tp)).isEqualTo(77L);
        assertThat(again.getPosition()).isEqualTo(Position.emptyPosition().withComponent("input", 1, 9L));
    }

    @Test
    void underExactlyOnceAStoreNotClosedCleanlyIsCorrupted() throws Exception {
        TestStoreContext ctx = context();
        ctx.configs.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        BloomKvVersionedStore s = open(ctx, 1000, 100);
        s.put(b("k"), v("a"), 10);
        s.commit(Map.of(new TopicPartition("c", 0), 1L));
        s.close();
        // A crash leaves the open marker behind (the store was never closed).
        Files.createFile(dir.resolve("v.open"));
        StateStore crashed = BloomKvStores.persistentVersionedKeyValueStore(
                        "v", Duration.ofSeconds(1), Duration.ofMillis(100))
                .get();
        assertThatThrownBy(() -> crashed.init(ctx, crashed)).isInstanceOf(TaskCorruptedException.class);
        // The databases it opened were closed: at-least-once opens the same state.
        ctx.configs.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        BloomKvVersionedStore again = open(ctx, 1000, 100);
        assertThat(str(again.get(b("k")))).isEqualTo("a@10");
    }

    @Test
    void keyValueStoreManagesOffsetsToo() throws Exception {
        TestStoreContext ctx = context();
        ctx.configs.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        BloomKvStore kv =
                (BloomKvStore) BloomKvStores.persistentKeyValueStore("kv").get();
        kv.init(ctx, kv);
        TopicPartition tp = new TopicPartition("app-kv-changelog", 0);
        kv.put(b("a"), v("1"));
        kv.commit(Map.of(tp, 5L));
        @SuppressWarnings("deprecation")
        boolean manages = kv.managesOffsets();
        assertThat(manages).isTrue();
        assertThat(kv.committedOffset(tp)).isEqualTo(5L);
        kv.close();
        BloomKvStore reopened =
                (BloomKvStore) BloomKvStores.persistentKeyValueStore("kv").get();
        reopened.init(ctx, reopened);
        assertThat(reopened.committedOffset(tp)).isEqualTo(5L);
        assertThat(reopened.approximateNumEntries())
                .as("offsets are not entries")
                .isEqualTo(1);
        reopened.close();
        Files.createFile(dir.resolve("kv.open"));
        BloomKvStore crashed =
                (BloomKvStore) BloomKvStores.persistentKeyValueStore("kv").get();
        assertThatThrownBy(() -> crashed.init(ctx, crashed)).isInstanceOf(TaskCorruptedException.class);
        assertThat(crashed.isOpen()).isFalse();
    }
}
