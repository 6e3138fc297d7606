package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.MultiVersionedKeyQuery;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.DslSessionParams;
import org.apache.kafka.streams.state.DslWindowParams;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.state.VersionedRecordIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.apache.kafka.streams.state.internals.RocksDbIndexedTimeOrderedWindowBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.RocksDbTimeOrderedSessionBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.VersionedKeyValueToBytesStoreAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The window, session and versioned stores against Kafka's own RocksDB stores at the edges the other differential
 * tests do not reach: stream time starting at 0 (a negative retention floor), timestamps on the retention floor and on
 * segment boundaries (each +-1), time bounds {@code Long.MIN_VALUE} / {@code Long.MAX_VALUE} / negative /
 * {@code from > to}, null key bounds and empty keys, removes that move stream time without expiring anything,
 * changelog batches (with position headers) restored between puts, both stores committed, closed and reopened
 * (stream time forgotten), iterators consumed across puts that add windows and expire segments, the IQv2 positions
 * and the {@code dropped-records} count; for the versioned store a history retention of 0, 1 ms segments, and puts,
 * deletes and reads on the grace boundary; for the window stores of emit-on-window-close, Kafka's time-ordered window
 * store as the oracle. Every answer (or exception) is compared. Seed logged; replay with {@code -Dbloomkv.seed=N}.
 */
class StoresEdgeReviewTest {
    @TempDir
    File tempDir;

    /** The stores' state directories: on /dev/shm when there is one (Kafka's stores fsync every segment). */
    private ShmDir shm;

    private File dir;

    private final List<Pair> pairs = new ArrayList<>();

    @BeforeEach
    void stateDir() {
        shm = new ShmDir(tempDir.toPath());
        dir = shm.path.toFile();
    }

    /** Closes the stores before their directory goes; {@link OpenStores} then checks nothing was left open. */
    @AfterEach
    void closeStores() {
        try {
            for (Pair p : pairs) {
                for (StateStore s : List.of(p.bloom, p.kafka)) {
                    s.close();
                    stores.remove(s);
                }
            }
        } finally {
            shm.close();
        }
    }

    @RegisterExtension
    final OpenStores stores = new OpenStores();

    /** A bloomkv store and Kafka's, each with its own context and directory. */
    private final class Pair {
        final String kind;
        final Supplier<StateStore> bloomFactory;
        final Supplier<StateStore> kafkaFactory;
        final File bloomDir;
        final File kafkaDir;
        TestStoreContext bloomCtx;
        TestStoreContext kafkaCtx;
        StateStore bloom;
        StateStore kafka;

        Pair(String kind, Supplier<StateStore> bloomFactory, Supplier<StateStore> kafkaFactory) {
            this.kind = kind;
            this.bloomFactory = bloomFactory;
            this.kafkaFactory = kafkaFactory;
            this.bloomDir = new File(dir, kind + "-bloomkv");
            this.kafkaDir = new File(dir, kind + "-kafka");
            assertThat(bloomDir.mkdirs() && kafkaDir.mkdirs()).isTrue();
            open();
            pairs.add(this);
        }

        void open() {
            bloomCtx = context(bloomDir);
            kafkaCtx = context(kafkaDir);
            bloom = bloomFactory.get();
            bloom.init(bloomCtx, bloom);
            stores.add(bloom);
            kafka = kafkaFactory.get();
            kafka.init(InternalTestContext.of(kafkaCtx), kafka);
            stores.add(kafka);
        }

        /** Commits (as a task does before it closes its stores), closes and reopens both stores. */
        void reopen(long changelogOffset) {
            Map<TopicPartition, Long> offsets = Map.of(new TopicPartition(kind + "-changelog", 0), changelogOffset);
            try {
                // Kafka's task commit: the stores' commit, then the commit callbacks (Kafka's segmented stores write
                // their position there).
                for (TestStoreContext ctx : List.of(bloomCtx, kafkaCtx)) {
                    (ctx == bloomCtx ? bloom : kafka).commit(offsets);
                    if (ctx.commitCallback != null) {
                        ctx.commitCallback.onCommit();
                    }
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            for (StateStore s : List.of(bloom, kafka)) {
                s.close();
                stores.remove(s);
            }
            open();
            // Kafka keeps the offsets in its segments (a store without any forgets them, and is restored from the
            // changelog's start); bloomkv keeps them in its database.
            TopicPartition tp = offsets.keySet().iterator().next();
            assertThat(bloom.committedOffset(tp)).as("committed offset").isEqualTo(changelogOffset);
            if (kafka.committedOffset(tp) != null) {
                assertThat(kafka.committedOffset(tp)).isEqualTo(changelogOffset);
            }
        }

        void restore(List<ConsumerRecord<byte[], byte[]>> batch) {
            ((RecordBatchingStateRestoreCallback) kafkaCtx.restoreCallback).restoreBatch(batch);
            ((RecordBatchingStateRestoreCallback) bloomCtx.restoreCallback).restoreBatch(batch);
        }

        /** The input record both stores' next writes come from (their IQv2 positions advance by it). */
        void record(long inputOffset) {
            bloomCtx.setRecord("in", 0, inputOffset);
            kafkaCtx.setRecord("in", 0, inputOffset);
        }

        void samePosition(String at) {
            assertThat(bloom.getPosition()).as(at + ": position").isEqualTo(kafka.getPosition());
        }

        void sameDroppedRecords(String at) {
            assertThat(dropped(bloomCtx)).as(at + ": dropped-records-total").isEqualTo(dropped(kafkaCtx));
        }
    }

    private static TestStoreContext context(File dir) {
        TestStoreContext ctx = new TestStoreContext(dir);
        ctx.configs.put(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "INFO");
        ctx.configs.put(StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, true);
        return ctx;
    }

    /** The task's dropped-records-total (0 when the sensor recorded nothing yet). */
    private static double dropped(TestStoreContext ctx) {
        for (Map.Entry<MetricName, KafkaMetric> e : ctx.metrics.metrics().entrySet()) {
            if (e.getKey().name().equals("dropped-records-total")
                    && e.getKey().group().equals("stream-task-metrics")) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        return 0;
    }

    private static long seed(String what) {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println(
                "StoresEdgeReviewTest." + what + " seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        return seed;
    }

    /** Keys of 0 to 3 bytes (empty now and then) over bytes that stress the composite-key order. */
    private static Bytes key(Random rnd) {
        if (rnd.nextInt(25) == 0) {
            return Bytes.wrap(new byte[0]);
        }
        return WindowStoreDifferentialTest.randomKey(rnd);
    }

    private static byte[] value(Random rnd, int i) {
        return ("v" + i).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A timestamp at an edge: on and around the retention floor ({@code st - retention + 1} is the first time reads
     * return), on and around segment boundaries (the live floor's segment and the current one), at and just past
     * stream time, near 0, or anywhere from 1.5 retention periods back.
     */
    private static long edgeTime(Random rnd, long st, long retention, long interval) {
        return switch (rnd.nextInt(8)) {
            case 0 -> st - retention + rnd.nextInt(4) - 1;
            case 1 -> {
                long floorSegment = Math.floorDiv(st - retention, interval) + rnd.nextInt(3) - 1;
                yield floorSegment * interval + rnd.nextInt(3) - 1;
            }
            case 2 -> st + rnd.nextInt(3);
            case 3 -> rnd.nextInt(3);
            case 4 -> Math.floorDiv(st, interval) * interval + rnd.nextInt(3) - 1;
            default -> st - (long) (rnd.nextDouble() * retention * 1.5) + rnd.nextInt((int) (retention / 5));
        };
    }

    /** A query bound: an edge time, or one of Long.MIN_VALUE, Long.MAX_VALUE, a small negative time. */
    private static long boundTime(Random rnd, long st, long retention, long interval) {
        return switch (rnd.nextInt(10)) {
            case 0 -> Long.MIN_VALUE;
            case 1 -> Long.MAX_VALUE;
            case 2 -> -1 - rnd.nextInt(3);
            default -> edgeTime(rnd, st, retention, interval);
        };
    }

    /** What a read gives, or the exception it throws, as text. */
    private static List<String> outcome(Supplier<List<String>> read) {
        try {
            return read.get();
        } catch (RuntimeException e) {
            if (Boolean.getBoolean("bloomkv.trace")) {
                e.printStackTrace();
            }
            return List.of("threw " + e.getClass().getName());
        }
    }

    /** Oracle answers that held something (not empty, not an exception), so a run shows it compared real answers. */
    private static final java.util.concurrent.atomic.AtomicLong ANSWERED = new java.util.concurrent.atomic.AtomicLong();

    /** {@link #outcome} of Kafka's store, counted in {@link #ANSWERED} when it holds something. */
    private static List<String> oracle(Supplier<List<String>> read) {
        List<String> out = outcome(read);
        if (!out.isEmpty()
                && !out.get(0).startsWith("threw")
                && !out.get(0).equals("null")
                && !out.get(0).equals("[null]")) {
            ANSWERED.incrementAndGet();
        }
        return out;
    }

    private static void answeredSome(long before, String what) {
        assertThat(ANSWERED.get() - before)
                .as(what + ": oracle answers that held something")
                .isGreaterThan(30);
    }

    private static String show(Windowed<Bytes> k, byte[] v) {
        return Arrays.toString(k.key().get()) + "@" + k.window().start() + "-"
                + k.window().end() + "=" + (v == null ? "null" : new String(v, StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------------------------------------------- window stores

    @ParameterizedTest(name = "retainDuplicates={0}")
    @ValueSource(booleans = {false, true})
    void windowStoreEdgesAnswerAsKafkas(boolean retainDuplicates) {
        long seed = seed("window(retainDuplicates=" + retainDuplicates + ")");
        Random rnd = new Random(seed);
        for (int round = 0; round < 2; round++) {
            long answeredBefore = ANSWERED.get();
            // Kafka's segment interval: max(retention / 2, 60 s); one round on the 60 s minimum (3 segments live).
            long retention = round == 0 ? 100_000 : 240_000 + rnd.nextInt(100_000);
            long window = 1 + rnd.nextInt((int) Math.min(retention, 90_000));
            Pair p = new Pair(
                    "w" + round + retainDuplicates,
                    () -> BloomKvStores.persistentWindowStore(
                                    "w",
                                    Duration.ofMillis(retention),
                                    Duration.ofMillis(window),
                                    retainDuplicates,
                                    WindowStoreDifferentialTest.smallOptions())
                            .get(),
                    () -> Stores.persistentWindowStore(
                                    "w", Duration.ofMillis(retention), Duration.ofMillis(window), retainDuplicates)
                            .get());
            long interval = Math.max(retention / 2, 60_000);
            long st = 0;
            int offset = 0;
            for (int op = 0; op < 1000; op++) {
                String at = "seed " + seed + " round " + round + " (retention " + retention + ", window " + window
                        + ") op " + op + " st " + st;
                int dice = rnd.nextInt(100);
                if (dice < 45) {
                    long ts = Math.max(
                            0,
                            rnd.nextInt(6) == 0
                                    ? st + rnd.nextInt((int) (interval / 4))
                                    : edgeTime(rnd, st, retention, interval));
                    Bytes key = key(rnd);
                    byte[] value = rnd.nextInt(8) == 0 ? null : value(rnd, op);
                    p.record(op);
                    window(p.kafka).put(key, value, ts);
                    window(p.bloom).put(key, value, ts);
                    if (!(value == null && retainDuplicates)) {
                        st = Math.max(st, ts);
                    }
                } else if (dice < 47) {
                    // A changelog batch, as a restore after a rebalance would apply it between processing.
                    List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
                    int n = 1 + rnd.nextInt(20);
                    for (int i = 0; i < n; i++) {
                        // Now and then a record far ahead: records of segments expired by the batch's end are skipped.
                        long ts = rnd.nextInt(12) == 0
                                ? st + retention / 2 + rnd.nextInt((int) retention)
                                : Math.max(0, edgeTime(rnd, st, retention, interval));
                        int seq = retainDuplicates ? 1_000_000 + rnd.nextInt(3) : 0;
                        byte[] value = rnd.nextInt(6) == 0 ? null : value(rnd, -op * 100 - i);
                        batch.add(ChangelogRecords.withPosition(
                                "w-changelog",
                                0,
                                offset++,
                                WindowKeyLayout.toStoreKey(key(rnd).get(), ts, seq),
                                value,
                                "in",
                                1,
                                offset));
                        st = Math.max(st, ts);
                    }
                    p.restore(batch);
                    p.samePosition(at + " restored");
                } else if (dice < 48 && rnd.nextInt(4) == 0) {
                    p.sameDroppedRecords(at);
                    p.samePosition(at);
                    p.reopen(offset); // stream time forgotten by both
                    p.samePosition(at + " reopened");
                } else if (dice < 50) {
                    // A jump: segments expire at the next put into a live one.
                    st += retention / 2 + rnd.nextInt((int) retention * 2);
                    Bytes key = key(rnd);
                    window(p.kafka).put(key, value(rnd, op), st);
                    window(p.bloom).put(key, value(rnd, op), st);
                } else if (dice < 53) {
                    interleavedWindowFetch(p, rnd, st, retention, interval, op, at);
                } else {
                    compareWindowReads(p, rnd, st, retention, interval, at);
                }
            }
            p.sameDroppedRecords("seed " + seed + " round " + round + " end");
            answeredSome(answeredBefore, "seed " + seed + " round " + round);
            assertThat(windows(window(p.bloom).all()))
                    .isEqualTo(windows(window(p.kafka).all()));
        }
    }

    @SuppressWarnings("unchecked")
    private static WindowStore<Bytes, byte[]> window(StateStore s) {
        return (WindowStore<Bytes, byte[]>) s;
    }

    private static void compareWindowReads(Pair p, Random rnd, long st, long retention, long interval, String at) {
        WindowStore<Bytes, byte[]> k = window(p.kafka);
        WindowStore<Bytes, byte[]> b = window(p.bloom);
        Bytes key = key(rnd);
        long from = boundTime(rnd, st, retention, interval);
        long to = boundTime(rnd, st, retention, interval);
        if (rnd.nextInt(3) > 0 && from > to) {
            long t = from;
            from = to;
            to = t;
        }
        long f = from;
        long t = to;
        String what = at + " [" + from + ", " + to + "] key " + key;
        switch (rnd.nextInt(9)) {
            case 0 -> {
                long time = edgeTime(rnd, st, retention, interval);
                assertThat(outcome(() -> List.of(String.valueOf(Arrays.toString(b.fetch(key, time))))))
                        .as(what + " fetch(key, " + time + ")")
                        .isEqualTo(oracle(() -> List.of(String.valueOf(Arrays.toString(k.fetch(key, time))))));
            }
            case 1 ->
                assertThat(outcome(() -> values(b.fetch(key, f, t))))
                        .as(what + " fetch")
                        .isEqualTo(oracle(() -> values(k.fetch(key, f, t))));
            case 2 ->
                assertThat(outcome(() -> values(b.backwardFetch(key, f, t))))
                        .as(what + " backwardFetch")
                        .isEqualTo(oracle(() -> values(k.backwardFetch(key, f, t))));
            case 3, 4 -> {
                Bytes lo = rnd.nextInt(4) == 0 ? null : key;
                Bytes hi = rnd.nextInt(4) == 0 ? null : key(rnd);
                boolean fwd = rnd.nextBoolean();
                assertThat(outcome(() -> windows(fwd ? b.fetch(lo, hi, f, t) : b.backwardFetch(lo, hi, f, t))))
                        .as(what + " key range " + lo + ".." + hi + (fwd ? " forward" : " backward"))
                        .isEqualTo(oracle(() -> windows(fwd ? k.fetch(lo, hi, f, t) : k.backwardFetch(lo, hi, f, t))));
            }
            case 5, 6 -> {
                boolean fwd = rnd.nextBoolean();
                assertThat(outcome(() -> windows(fwd ? b.fetchAll(f, t) : b.backwardFetchAll(f, t))))
                        .as(what + " fetchAll" + (fwd ? "" : " backward"))
                        .isEqualTo(oracle(() -> windows(fwd ? k.fetchAll(f, t) : k.backwardFetchAll(f, t))));
            }
            case 7 ->
                assertThat(outcome(() -> windows(b.all()))).as(what + " all").isEqualTo(oracle(() -> windows(k.all())));
            default ->
                assertThat(outcome(() -> windows(b.backwardAll())))
                        .as(what + " backwardAll")
                        .isEqualTo(oracle(() -> windows(k.backwardAll())));
        }
    }

    /**
     * A segment whose records were all deleted still exists after a restart, as Kafka's segment directory does: a
     * backward iterator opened after the restart, consumed part way, then sees a put into that segment in both stores.
     * (Once the bloomkv store found its segments at open by their records only, so the emptied segment was gone and
     * the iterator, which reads the segments that existed when it opened, missed the put.) The same for a forward one
     * and a segment ahead.
     */
    @Test
    void aSegmentEmptiedByDeletesOutlivesARestartAsKafkas() {
        long retention = 240_000; // segments of 120 s
        for (boolean forward : new boolean[] {false, true}) {
            Pair p = new Pair(
                    "emptied-" + forward,
                    () -> BloomKvStores.persistentWindowStore(
                                    "w",
                                    Duration.ofMillis(retention),
                                    Duration.ofMillis(1_000),
                                    false,
                                    WindowStoreDifferentialTest.smallOptions())
                            .get(),
                    () -> Stores.persistentWindowStore(
                                    "w", Duration.ofMillis(retention), Duration.ofMillis(1_000), false)
                            .get());
            Bytes a = Bytes.wrap(new byte[] {1});
            Bytes c = Bytes.wrap(new byte[] {2});
            long emptied = forward ? 250_000 : 10_000; // segment 2 ahead of the records, or segment 0 behind them
            for (WindowStore<Bytes, byte[]> s : List.of(window(p.kafka), window(p.bloom))) {
                p.record(1);
                s.put(a, new byte[] {1}, emptied);
                s.put(a, null, emptied);
                s.put(c, new byte[] {2}, 130_000);
                s.put(c, new byte[] {3}, 131_000);
            }
            p.reopen(4);
            List<List<String>> answers = new ArrayList<>();
            for (WindowStore<Bytes, byte[]> s : List.of(window(p.kafka), window(p.bloom))) {
                List<String> got = new ArrayList<>();
                try (KeyValueIterator<Windowed<Bytes>, byte[]> it = forward ? s.all() : s.backwardAll()) {
                    KeyValue<Windowed<Bytes>, byte[]> first = it.next();
                    got.add(show(first.key, first.value));
                    p.record(5);
                    s.put(a, new byte[] {4}, emptied + 1);
                    drain(it, got);
                }
                answers.add(got);
            }
            assertThat(answers.get(0))
                    .as("Kafka's iterator reads the put into its emptied segment")
                    .hasSize(3);
            assertThat(answers.get(1)).as(forward ? "forward" : "backward").isEqualTo(answers.get(0));
        }
    }

    /**
     * A fetch consumed part way, then puts (some into later segments, some jumping stream time so segments expire
     * under the iterator), then drained: each store's iterator opens a segment when it reaches it, so both see the
     * same puts.
     */
    private static void interleavedWindowFetch(
            Pair p, Random rnd, long st, long retention, long interval, int op, String at) {
        WindowStore<Bytes, byte[]> k = window(p.kafka);
        WindowStore<Bytes, byte[]> b = window(p.bloom);
        boolean fwd = rnd.nextBoolean();
        boolean all = rnd.nextBoolean();
        long from = Math.max(0, st - retention);
        List<String> ks = new ArrayList<>();
        List<String> bs = new ArrayList<>();
        try (KeyValueIterator<Windowed<Bytes>, byte[]> ki = all
                        ? (fwd ? k.all() : k.backwardAll())
                        : (fwd ? k.fetchAll(from, st) : k.backwardFetchAll(from, st));
                KeyValueIterator<Windowed<Bytes>, byte[]> bi = all
                        ? (fwd ? b.all() : b.backwardAll())
                        : (fwd ? b.fetchAll(from, st) : b.backwardFetchAll(from, st))) {
            int first = rnd.nextInt(5);
            for (int i = 0; i < first && ki.hasNext(); i++) {
                KeyValue<Windowed<Bytes>, byte[]> kv = ki.next();
                ks.add(show(kv.key, kv.value));
            }
            for (int i = 0; i < first && bi.hasNext(); i++) {
                KeyValue<Windowed<Bytes>, byte[]> kv = bi.next();
                bs.add(show(kv.key, kv.value));
            }
            int puts = 1 + rnd.nextInt(4);
            for (int i = 0; i < puts; i++) {
                long ts = rnd.nextInt(4) == 0
                        ? st + retention / 2 + rnd.nextInt((int) retention)
                        : Math.max(0, edgeTime(rnd, st, retention, interval));
                Bytes key = key(rnd);
                byte[] v = value(rnd, 1_000_000 + op * 10 + i);
                k.put(key, v, ts);
                b.put(key, v, ts);
            }
            drain(ki, ks);
            drain(bi, bs);
        }
        assertThat(bs)
                .as(at + " interleaved " + (all ? "all" : "fetchAll") + (fwd ? "" : " backward"))
                .isEqualTo(ks);
    }

    private static void drain(KeyValueIterator<Windowed<Bytes>, byte[]> it, List<String> out) {
        while (it.hasNext()) {
            KeyValue<Windowed<Bytes>, byte[]> kv = it.next();
            out.add(show(kv.key, kv.value));
        }
    }

    private static List<String> values(WindowStoreIterator<byte[]> it) {
        return WindowStoreDifferentialTest.values(it);
    }

    private static List<String> windows(KeyValueIterator<Windowed<Bytes>, byte[]> it) {
        return WindowStoreDifferentialTest.windows(it);
    }

    // ------------------------------------------------------------------ window stores of emit-on-window-close

    /**
     * The window stores {@link BloomKvDslStoreSuppliers} gives emit-on-window-close aggregations against the store
     * Kafka's DSL gives them, its time-ordered window store ({@code RocksDbIndexedTimeOrderedWindowBytesStoreSupplier},
     * indexed by key for sliding windows): the same windows at the retention edge (Kafka's time-ordered store reads
     * from {@code streamTime - retention} inclusive, one millisecond earlier than its key-ordered store), the same
     * answers to the reads the DSL's processors make ({@code fetchAll} by time for sliding windows,
     * {@code fetch(key, key, from, to)}, {@code fetch(key, time)}) and to single-key fetches, and the same window
     * sets otherwise (the scan order across keys of tumbling and hopping windows is a documented difference).
     */
    @ParameterizedTest(name = "sliding={0}")
    @ValueSource(booleans = {true, false})
    void emitOnWindowCloseStoresAnswerAsKafkasTimeOrderedStore(boolean sliding) {
        long seed = seed("emitOnWindowClose(sliding=" + sliding + ")");
        Random rnd = new Random(seed);
        long answeredBefore = ANSWERED.get();
        long retention = 100_000 + rnd.nextInt(150_000);
        long window = 1 + rnd.nextInt((int) Math.min(retention, 60_000));
        Pair p = new Pair(
                "eowc" + sliding,
                () -> new BloomKvDslStoreSuppliers()
                        .windowStore(new DslWindowParams(
                                "w",
                                Duration.ofMillis(retention),
                                Duration.ofMillis(window),
                                false,
                                EmitStrategy.onWindowClose(),
                                sliding,
                                DslStoreFormat.TIMESTAMPED))
                        .get(),
                () -> RocksDbIndexedTimeOrderedWindowBytesStoreSupplier.create(
                                "w", Duration.ofMillis(retention), Duration.ofMillis(window), false, sliding)
                        .get());
        long interval = Math.max(retention / 2, 60_000);
        long st = 0;
        int offset = 0;
        for (int op = 0; op < 1000; op++) {
            String at = "seed " + seed + " (retention " + retention + ", window " + window + ") op " + op + " st " + st;
            int dice = rnd.nextInt(100);
            if (dice < 45) {
                long ts = Math.max(
                        0,
                        rnd.nextInt(6) == 0
                                ? st + rnd.nextInt((int) (interval / 4))
                                : edgeTime(rnd, st, retention, interval));
                Bytes key = key(rnd);
                byte[] value = value(rnd, op);
                window(p.kafka).put(key, value, ts);
                window(p.bloom).put(key, value, ts);
                st = Math.max(st, ts);
            } else if (dice < 47) {
                List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
                int n = 1 + rnd.nextInt(20);
                for (int i = 0; i < n; i++) {
                    long ts = Math.max(0, edgeTime(rnd, st, retention, interval));
                    batch.add(new ConsumerRecord<>(
                            "w-changelog",
                            0,
                            offset++,
                            WindowKeyLayout.toStoreKey(key(rnd).get(), ts, 0),
                            value(rnd, -op * 100 - i)));
                    st = Math.max(st, ts);
                }
                p.restore(batch);
            } else if (dice < 48 && rnd.nextInt(4) == 0) {
                p.reopen(offset);
            } else if (dice < 50) {
                st += retention / 2 + rnd.nextInt((int) retention * 2);
                Bytes key = key(rnd);
                window(p.kafka).put(key, value(rnd, op), st);
                window(p.bloom).put(key, value(rnd, op), st);
            } else {
                compareEmitOnCloseReads(p, rnd, sliding, st, retention, interval, at);
            }
        }
        p.sameDroppedRecords("seed " + seed + " end");
        answeredSome(answeredBefore, "seed " + seed);
    }

    /**
     * A sliding-window count emitting on window close, where a jump of stream time leaves a closed window starting
     * exactly at {@code streamTime - retention} (retention = 2 x time difference + grace): Kafka's time-ordered store
     * still returns it, so Kafka emits it; bloomkv's store read from one millisecond later and never emitted it.
     */
    @Test
    void slidingWindowEmittedOnCloseOnTheRetentionEdgeIsEmittedAsKafkaEmitsIt() {
        List<List<KeyValue<String, String>>> outputs = new ArrayList<>();
        for (boolean bloom : new boolean[] {false, true}) {
            StreamsBuilder builder = new StreamsBuilder();
            builder.stream("in", Consumed.with(Serdes.String(), Serdes.String()))
                    .groupByKey()
                    .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(3)))
                    .emitStrategy(EmitStrategy.onWindowClose())
                    .count()
                    .toStream()
                    .map((w, c) -> KeyValue.pair(
                            w.key() + "@" + w.window().start() + "-"
                                    + w.window().end(),
                            "" + c))
                    .to("out", Produced.with(Serdes.String(), Serdes.String()));
            Properties props = new Properties();
            props.put(StreamsConfig.APPLICATION_ID_CONFIG, "edge-" + bloom);
            props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:1234");
            props.put(StreamsConfig.STATE_DIR_CONFIG, new File(dir, "dsl-" + bloom).getPath());
            if (bloom) {
                props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, BloomKvDslStoreSuppliers.class);
            }
            try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(props), props)) {
                TestInputTopic<String, String> in = driver.createInputTopic(
                        "in", Serdes.String().serializer(), Serdes.String().serializer());
                TestOutputTopic<String, String> out = driver.createOutputTopic(
                        "out", Serdes.String().deserializer(), Serdes.String().deserializer());
                long[] times = {100_000, 103_000, 120_000, 123_000, 131_000, 200_000, 223_000, 300_000};
                for (int i = 0; i < times.length; i++) {
                    in.pipeInput("k" + i % 3, "x", Instant.ofEpochMilli(times[i]));
                }
                outputs.add(out.readKeyValuesToList());
            }
        }
        // k2's window [190 s, 200 s] starts at the store's stream time (213 s, k0's window at 223 s) minus its
        // retention (23 s) when the record at 223 s closes it.
        assertThat(outputs.get(0)).as("Kafka's store").contains(KeyValue.pair("k2@190000-200000", "1"));
        assertThat(outputs.get(1)).as("bloomkv's store").isEqualTo(outputs.get(0));
    }

    private static void compareEmitOnCloseReads(
            Pair p, Random rnd, boolean sliding, long st, long retention, long interval, String at) {
        WindowStore<Bytes, byte[]> k = window(p.kafka);
        WindowStore<Bytes, byte[]> b = window(p.bloom);
        Bytes key = key(rnd);
        // The DSL's bounds are never negative.
        long from = Math.max(0, edgeTime(rnd, st, retention, interval));
        long to = rnd.nextInt(8) == 0 ? Long.MAX_VALUE : Math.max(0, edgeTime(rnd, st, retention, interval));
        if (rnd.nextInt(3) > 0 && from > to) {
            long t = from;
            from = to;
            to = t;
        }
        long f = from;
        long t = to;
        String what = at + " [" + from + ", " + to + "] key " + key;
        switch (rnd.nextInt(7)) {
            case 0 -> {
                long time = rnd.nextBoolean()
                        ? st - retention + rnd.nextInt(3) - 1
                        : edgeTime(rnd, st, retention, interval);
                assertThat(outcome(() -> List.of(String.valueOf(Arrays.toString(b.fetch(key, time))))))
                        .as(what + " fetch(key, " + time + ")")
                        .isEqualTo(oracle(() -> List.of(String.valueOf(Arrays.toString(k.fetch(key, time))))));
            }
            case 1 -> {
                boolean fwd = rnd.nextBoolean();
                assertThat(outcome(() -> values(fwd ? b.fetch(key, f, t) : b.backwardFetch(key, f, t))))
                        .as(what + " fetch(key)" + (fwd ? "" : " backward"))
                        .isEqualTo(oracle(() -> values(fwd ? k.fetch(key, f, t) : k.backwardFetch(key, f, t))));
            }
            case 2 -> {
                boolean fwd = rnd.nextBoolean();
                assertThat(outcome(() -> windows(fwd ? b.fetch(key, key, f, t) : b.backwardFetch(key, key, f, t))))
                        .as(what + " fetch(key, key)" + (fwd ? "" : " backward"))
                        .isEqualTo(
                                oracle(() -> windows(fwd ? k.fetch(key, key, f, t) : k.backwardFetch(key, key, f, t))));
            }
            case 3, 4 -> {
                boolean fwd = rnd.nextBoolean();
                // Kafka's processors fetch closed windows from the retention edge on: the edge itself too.
                long edgeFrom = rnd.nextBoolean() ? Math.max(0, st - retention) : f;
                long edgeTo = Math.max(edgeFrom, t);
                List<String> expected = oracle(
                        () -> windows(fwd ? k.fetchAll(edgeFrom, edgeTo) : k.backwardFetchAll(edgeFrom, edgeTo)));
                List<String> actual = outcome(
                        () -> windows(fwd ? b.fetchAll(edgeFrom, edgeTo) : b.backwardFetchAll(edgeFrom, edgeTo)));
                assertThat(sliding ? actual : sorted(actual))
                        .as(what + " fetchAll [" + edgeFrom + ", " + edgeTo + "]" + (fwd ? "" : " backward"))
                        .isEqualTo(sliding ? expected : sorted(expected));
            }
            default -> {
                boolean fwd = rnd.nextBoolean();
                assertThat(sorted(outcome(() -> windows(fwd ? b.all() : b.backwardAll()))))
                        .as(what + " all" + (fwd ? "" : " backward") + ", as sets")
                        .isEqualTo(sorted(oracle(() -> windows(fwd ? k.all() : k.backwardAll()))));
            }
        }
    }

    private static List<String> sorted(List<String> in) {
        List<String> out = new ArrayList<>(in);
        java.util.Collections.sort(out);
        return out;
    }

    // --------------------------------------------------------------------------------------------- session stores

    @Test
    void sessionStoreEdgesAnswerAsKafkas() {
        long seed = seed("session");
        Random rnd = new Random(seed);
        for (int round = 0; round < 2; round++) {
            long answeredBefore = ANSWERED.get();
            long retention = round == 0 ? 100_000 : 240_000 + rnd.nextInt(100_000);
            Pair p = new Pair(
                    "s" + round,
                    () -> BloomKvStores.persistentSessionStore(
                                    "s", Duration.ofMillis(retention), WindowStoreDifferentialTest.smallOptions())
                            .get(),
                    () -> Stores.persistentSessionStore("s", Duration.ofMillis(retention))
                            .get());
            long interval = Math.max(retention / 2, 60_000);
            long st = 0;
            int offset = 0;
            List<Windowed<Bytes>> written = new ArrayList<>();
            for (int op = 0; op < 1500; op++) {
                String at =
                        "seed " + seed + " round " + round + " (retention " + retention + ") op " + op + " st " + st;
                int dice = rnd.nextInt(100);
                if (dice < 40) {
                    Windowed<Bytes> s = session(rnd, st, retention, interval);
                    byte[] value = rnd.nextInt(10) == 0 ? null : value(rnd, op);
                    p.record(op);
                    sessions(p.kafka).put(s, value);
                    sessions(p.bloom).put(s, value);
                    written.add(s);
                    st = Math.max(st, s.window().end());
                } else if (dice < 46) {
                    // A remove moves stream time (even of a session never written) but expires nothing.
                    Windowed<Bytes> s = !written.isEmpty() && rnd.nextBoolean()
                            ? written.get(rnd.nextInt(written.size()))
                            : session(rnd, st, retention, interval);
                    sessions(p.kafka).remove(s);
                    sessions(p.bloom).remove(s);
                    st = Math.max(st, s.window().end());
                } else if (dice < 48) {
                    List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
                    int n = 1 + rnd.nextInt(20);
                    for (int i = 0; i < n; i++) {
                        long ahead = st + retention / 2 + rnd.nextInt((int) retention);
                        Windowed<Bytes> s = rnd.nextInt(12) == 0
                                ? new Windowed<>(key(rnd), new SessionWindow(ahead - rnd.nextInt(1000), ahead))
                                : !written.isEmpty() && rnd.nextInt(3) == 0
                                        ? written.get(rnd.nextInt(written.size()))
                                        : session(rnd, st, retention, interval);
                        byte[] value = rnd.nextInt(6) == 0 ? null : value(rnd, -op * 100 - i);
                        batch.add(ChangelogRecords.withPosition(
                                "s-changelog", 0, offset++, SessionKeyLayout.toStoreKey(s), value, "in", 1, offset));
                        st = Math.max(st, s.window().end());
                    }
                    p.restore(batch);
                    p.samePosition(at + " restored");
                } else if (dice < 49 && rnd.nextInt(4) == 0) {
                    p.sameDroppedRecords(at);
                    p.samePosition(at);
                    p.reopen(offset);
                    p.samePosition(at + " reopened");
                } else if (dice < 51) {
                    st += retention / 2 + rnd.nextInt((int) retention * 2);
                    Windowed<Bytes> s = new Windowed<>(key(rnd), new SessionWindow(st, st));
                    sessions(p.kafka).put(s, value(rnd, op));
                    sessions(p.bloom).put(s, value(rnd, op));
                } else {
                    compareSessionReads(p, rnd, st, retention, interval, written, at);
                }
            }
            p.sameDroppedRecords("seed " + seed + " round " + round + " end");
            answeredSome(answeredBefore, "seed " + seed + " round " + round);
            assertThat(sessionList(sessions(p.bloom).fetch(null, null)))
                    .isEqualTo(sessionList(sessions(p.kafka).fetch(null, null)));
        }
    }

    /**
     * The session store {@link BloomKvDslStoreSuppliers} gives session aggregations that emit on window close against
     * the store Kafka's DSL gives them, its time-ordered session store with a key index: the reads the DSL's session
     * processor makes ({@code findSessions(key, earliestSessionEndTime, latestSessionStartTime)}, with an earliest end
     * that can be negative, and the end-time range {@code findSessions(earliestSessionEndTime, latestSessionEndTime)}),
     * and the other single-key reads, at the same edges as {@link #sessionStoreEdgesAnswerAsKafkas}.
     */
    @Test
    void emitOnWindowCloseSessionStoreAnswersAsKafkasTimeOrderedStore() {
        long seed = seed("emitOnWindowCloseSession");
        Random rnd = new Random(seed);
        long answeredBefore = ANSWERED.get();
        long retention = 100_000 + rnd.nextInt(150_000);
        Pair p = new Pair(
                "eowc-s",
                () -> new BloomKvDslStoreSuppliers()
                        .sessionStore(new DslSessionParams(
                                "s", Duration.ofMillis(retention), EmitStrategy.onWindowClose(), DslStoreFormat.PLAIN))
                        .get(),
                () -> new RocksDbTimeOrderedSessionBytesStoreSupplier("s", retention, true).get());
        long interval = Math.max(retention / 2, 60_000);
        long st = 0;
        int offset = 0;
        List<Windowed<Bytes>> written = new ArrayList<>();
        for (int op = 0; op < 1000; op++) {
            String at = "seed " + seed + " (retention " + retention + ") op " + op + " st " + st;
            int dice = rnd.nextInt(100);
            if (dice < 40) {
                Windowed<Bytes> s = session(rnd, st, retention, interval);
                byte[] value = rnd.nextInt(10) == 0 ? null : value(rnd, op);
                sessions(p.kafka).put(s, value);
                sessions(p.bloom).put(s, value);
                written.add(s);
                st = Math.max(st, s.window().end());
            } else if (dice < 45 && !written.isEmpty()) {
                Windowed<Bytes> s = written.get(rnd.nextInt(written.size()));
                sessions(p.kafka).remove(s);
                sessions(p.bloom).remove(s);
            } else if (dice < 47) {
                List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
                int n = 1 + rnd.nextInt(20);
                for (int i = 0; i < n; i++) {
                    Windowed<Bytes> s = session(rnd, st, retention, interval);
                    batch.add(new ConsumerRecord<>(
                            "s-changelog", 0, offset++, SessionKeyLayout.toStoreKey(s), value(rnd, -op * 100 - i)));
                    st = Math.max(st, s.window().end());
                }
                p.restore(batch);
            } else if (dice < 48 && rnd.nextInt(4) == 0) {
                p.reopen(offset);
            } else if (dice < 50) {
                st += retention / 2 + rnd.nextInt((int) retention * 2);
                Windowed<Bytes> s = new Windowed<>(key(rnd), new SessionWindow(st, st));
                sessions(p.kafka).put(s, value(rnd, op));
                sessions(p.bloom).put(s, value(rnd, op));
            } else {
                SessionStore<Bytes, byte[]> k = sessions(p.kafka);
                SessionStore<Bytes, byte[]> b = sessions(p.bloom);
                Bytes key = !written.isEmpty() && rnd.nextBoolean()
                        ? written.get(rnd.nextInt(written.size())).key()
                        : key(rnd);
                long eset = edgeTime(rnd, st, retention, interval);
                long lsst = Math.max(0, edgeTime(rnd, st, retention, interval));
                String what = at + " key " + key + " [" + eset + ", " + lsst + "]";
                long now = st;
                int read = rnd.nextInt(5);
                switch (read) {
                    case 0, 1, 2 ->
                        sameSingleKeySessionRead(
                                read,
                                b,
                                k,
                                () -> writtenOrNew(rnd, written, now, retention, interval),
                                key,
                                eset,
                                lsst,
                                what);
                    case 3 -> {
                        long from = Math.max(0, eset);
                        long to = Math.max(from, lsst);
                        assertThat(outcome(() -> sessionList(b.findSessions(from, to))))
                                .as(what + " findSessions(" + from + ", " + to + ")")
                                .isEqualTo(oracle(() -> sessionList(k.findSessions(from, to))));
                    }
                    default ->
                        assertThat(outcome(() -> sessionList(b.fetch(key))))
                                .as(what + " fetch(key)")
                                .isEqualTo(oracle(() -> sessionList(k.fetch(key))));
                }
            }
        }
        p.sameDroppedRecords("seed " + seed + " end");
        answeredSome(answeredBefore, "seed " + seed);
    }

    @SuppressWarnings("unchecked")
    private static SessionStore<Bytes, byte[]> sessions(StateStore s) {
        return (SessionStore<Bytes, byte[]>) s;
    }

    /** A session written before (half the time, when there is one) or a new one near the edges. */
    private static Windowed<Bytes> writtenOrNew(
            Random rnd, List<Windowed<Bytes>> written, long st, long retention, long interval) {
        return !written.isEmpty() && rnd.nextBoolean()
                ? written.get(rnd.nextInt(written.size()))
                : session(rnd, st, retention, interval);
    }

    /**
     * One single-key read on both stores, the answers (or exceptions) compared: {@code op} 0 fetchSession of a session
     * from {@code session}, 1 findSessions, 2 backwardFindSessions of {@code key} over [{@code eset}, {@code lsst}].
     */
    private static void sameSingleKeySessionRead(
            int op,
            SessionStore<Bytes, byte[]> b,
            SessionStore<Bytes, byte[]> k,
            java.util.function.Supplier<Windowed<Bytes>> session,
            Bytes key,
            long eset,
            long lsst,
            String what) {
        switch (op) {
            case 0 -> {
                Windowed<Bytes> s = session.get();
                long start = s.window().start();
                long end = s.window().end();
                assertThat(outcome(() -> List.of(Arrays.toString(b.fetchSession(s.key(), start, end)))))
                        .as(what + " fetchSession " + s)
                        .isEqualTo(oracle(() -> List.of(Arrays.toString(k.fetchSession(s.key(), start, end)))));
            }
            case 1 ->
                assertThat(outcome(() -> sessionList(b.findSessions(key, eset, lsst))))
                        .as(what + " findSessions")
                        .isEqualTo(oracle(() -> sessionList(k.findSessions(key, eset, lsst))));
            case 2 ->
                assertThat(outcome(() -> sessionList(b.backwardFindSessions(key, eset, lsst))))
                        .as(what + " backwardFindSessions")
                        .isEqualTo(oracle(() -> sessionList(k.backwardFindSessions(key, eset, lsst))));
            default -> throw new IllegalArgumentException("op " + op);
        }
    }

    private static Windowed<Bytes> session(Random rnd, long st, long retention, long interval) {
        long end = Math.max(0, edgeTime(rnd, st, retention, interval));
        long start = switch (rnd.nextInt(4)) {
            case 0 -> end;
            case 1 -> Math.max(0, edgeTime(rnd, st, retention, interval));
            default -> Math.max(0, end - rnd.nextInt((int) retention));
        };
        return new Windowed<>(key(rnd), new SessionWindow(Math.min(start, end), end));
    }

    private static void compareSessionReads(
            Pair p, Random rnd, long st, long retention, long interval, List<Windowed<Bytes>> written, String at) {
        SessionStore<Bytes, byte[]> k = sessions(p.kafka);
        SessionStore<Bytes, byte[]> b = sessions(p.bloom);
        Bytes key = !written.isEmpty() && rnd.nextBoolean()
                ? written.get(rnd.nextInt(written.size())).key()
                : key(rnd);
        long eset = boundTime(rnd, st, retention, interval);
        long lsst = boundTime(rnd, st, retention, interval);
        String what = at + " key " + key + " earliestEnd " + eset + " latestStart " + lsst;
        int op = rnd.nextInt(7);
        switch (op) {
            case 0, 1, 2 ->
                sameSingleKeySessionRead(
                        op, b, k, () -> writtenOrNew(rnd, written, st, retention, interval), key, eset, lsst, what);
            case 3, 4 -> {
                Bytes lo = rnd.nextInt(4) == 0 ? null : key;
                Bytes hi = rnd.nextInt(4) == 0 ? null : key(rnd);
                boolean fwd = rnd.nextBoolean();
                assertThat(outcome(() -> sessionList(
                                fwd ? b.findSessions(lo, hi, eset, lsst) : b.backwardFindSessions(lo, hi, eset, lsst))))
                        .as(what + " key range " + lo + ".." + hi + (fwd ? " forward" : " backward"))
                        .isEqualTo(oracle(() -> sessionList(
                                fwd
                                        ? k.findSessions(lo, hi, eset, lsst)
                                        : k.backwardFindSessions(lo, hi, eset, lsst))));
            }
            case 5 -> {
                boolean fwd = rnd.nextBoolean();
                assertThat(outcome(() -> sessionList(fwd ? b.fetch(key) : b.backwardFetch(key))))
                        .as(what + " fetch(key)" + (fwd ? "" : " backward"))
                        .isEqualTo(oracle(() -> sessionList(fwd ? k.fetch(key) : k.backwardFetch(key))));
            }
            default -> {
                Bytes lo = rnd.nextInt(4) == 0 ? null : key;
                Bytes hi = rnd.nextInt(4) == 0 ? null : key(rnd);
                boolean fwd = rnd.nextBoolean();
                assertThat(outcome(() -> sessionList(fwd ? b.fetch(lo, hi) : b.backwardFetch(lo, hi))))
                        .as(what + " fetch(" + lo + ", " + hi + ")" + (fwd ? "" : " backward"))
                        .isEqualTo(oracle(() -> sessionList(fwd ? k.fetch(lo, hi) : k.backwardFetch(lo, hi))));
            }
        }
    }

    private static List<String> sessionList(KeyValueIterator<Windowed<Bytes>, byte[]> it) {
        return SessionStoreDifferentialTest.sessions(it);
    }

    /**
     * Negative window starts, which the DSL never writes but the store API takes: the same answers or the same
     * exceptions (a window with a negative start cannot be read back as a {@code TimeWindow}; a point fetch can).
     * (Kafka's versioned store is left out: with negative timestamps it fails its own searches with an
     * IllegalStateException, "Search in segment expected to find result but did not".)
     */
    @Test
    void negativeWindowStartsAnswerAsKafkas() {
        Bytes key = Bytes.wrap(new byte[] {'k'});
        Pair w = new Pair(
                "neg-w",
                () -> BloomKvStores.persistentWindowStore("w", Duration.ofMinutes(2), Duration.ofSeconds(10), false)
                        .get(),
                () -> Stores.persistentWindowStore("w", Duration.ofMinutes(2), Duration.ofSeconds(10), false)
                        .get());
        for (StateStore s : List.of(w.bloom, w.kafka)) {
            window(s).put(key, value(null, 1), -5);
            window(s).put(key, value(null, 2), 5);
            window(s).put(key, value(null, 3), -70_000); // segment -1
        }
        for (int q = 0; q < 6; q++) {
            int query = q;
            assertThat(outcome(() -> windowQuery(window(w.bloom), key, query)))
                    .as("window query " + q)
                    .isEqualTo(oracle(() -> windowQuery(window(w.kafka), key, query)));
        }
    }

    /**
     * A single-key {@code findSessions} with a negative latestSessionStartTime: Kafka's session schema builds its
     * upper bound as the session window {@code [latestSessionStartTime, Long.MAX_VALUE]}, whose constructor throws
     * IllegalArgumentException, whatever the store holds; the key-range variant has no such window and answers.
     */
    @Test
    void findSessionsWithANegativeLatestStartThrowsAsKafkas() {
        Pair p = new Pair(
                "neg-s",
                () -> BloomKvStores.persistentSessionStore("s", Duration.ofMinutes(2))
                        .get(),
                () -> Stores.persistentSessionStore("s", Duration.ofMinutes(2)).get());
        Bytes key = Bytes.wrap(new byte[] {'k'});
        for (StateStore s : List.of(p.bloom, p.kafka)) {
            sessions(s).put(new Windowed<>(key, new SessionWindow(0, 10)), value(null, 1));
        }
        for (long[] range : new long[][] {{0, -1}, {-5, -1}, {Long.MIN_VALUE, Long.MIN_VALUE}, {5, 0}, {-5, 0}}) {
            String what = "findSessions(key, " + range[0] + ", " + range[1] + ")";
            assertThat(outcome(() -> sessionList(sessions(p.bloom).findSessions(key, range[0], range[1]))))
                    .as(what)
                    .isEqualTo(outcome(() -> sessionList(sessions(p.kafka).findSessions(key, range[0], range[1]))));
            assertThat(outcome(() -> sessionList(sessions(p.bloom).backwardFindSessions(key, range[0], range[1]))))
                    .as("backward " + what)
                    .isEqualTo(outcome(
                            () -> sessionList(sessions(p.kafka).backwardFindSessions(key, range[0], range[1]))));
            assertThat(outcome(() -> sessionList(sessions(p.bloom).findSessions(key, key, range[0], range[1]))))
                    .as("key range " + what)
                    .isEqualTo(
                            outcome(() -> sessionList(sessions(p.kafka).findSessions(key, key, range[0], range[1]))));
        }
        assertThat(outcome(() -> sessionList(sessions(p.bloom).findSessions(key, 0, -1))))
                .containsExactly("threw java.lang.IllegalArgumentException");
    }

    private static List<String> windowQuery(WindowStore<Bytes, byte[]> s, Bytes key, int query) {
        return switch (query) {
            case 0 -> List.of(Arrays.toString(s.fetch(key, -5)), Arrays.toString(s.fetch(key, -70_000)));
            case 1 -> values(s.fetch(key, -100_000, 100));
            case 2 -> values(s.backwardFetch(key, Long.MIN_VALUE, Long.MAX_VALUE));
            case 3 -> windows(s.fetch(null, null, -100_000, 100));
            case 4 -> windows(s.fetchAll(-100_000, -1));
            default -> windows(s.all());
        };
    }

    // ------------------------------------------------------------------------------------------- versioned stores

    @SuppressWarnings("unchecked")
    private static VersionedKeyValueStore<Bytes, byte[]> inner(StateStore adapter) {
        try {
            Field f = VersionedKeyValueToBytesStoreAdapter.class.getDeclaredField("inner");
            f.setAccessible(true);
            return (VersionedKeyValueStore<Bytes, byte[]>) f.get(adapter);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * The versioned store against Kafka's at its edges: a history retention of 0 (no history: every put older than
     * stream time is dropped) and 1 ms segments, segments longer than the retention, puts and deletes exactly on the
     * grace boundary ({@code streamTime - historyRetention}) and on segment boundaries, {@code get(key, asOf)} at the
     * retention edge and at Long.MIN_VALUE / Long.MAX_VALUE, multi-version queries over the same edges, changelog
     * batches restored between puts, the positions and the dropped-records count.
     */
    @Test
    void versionedStoreEdgesAnswerAsKafkas() {
        long seed = seed("versioned");
        Random rnd = new Random(seed);
        long[][] shapes = {{0, 1}, {0, 7}, {10, 1}, {10, 3}, {30, 30}, {30, 100}, {100, 7}};
        for (long[] shape : shapes) {
            long answeredBefore = ANSWERED.get();
            long retention = shape[0];
            long interval = shape[1];
            Pair p = new Pair(
                    "v" + retention + "-" + interval,
                    () -> BloomKvStores.persistentVersionedKeyValueStore(
                                    "v",
                                    Duration.ofMillis(retention),
                                    Duration.ofMillis(interval),
                                    BloomKvStores.defaultKeyValueOptions().writeBufferSize(64 << 10))
                            .get(),
                    () -> Stores.persistentVersionedKeyValueStore(
                                    "v", Duration.ofMillis(retention), Duration.ofMillis(interval))
                            .get());
            VersionedKeyValueStore<Bytes, byte[]> b = inner(p.bloom);
            VersionedKeyValueStore<Bytes, byte[]> k = inner(p.kafka);
            int keys = 1 + rnd.nextInt(4);
            long st = -1;
            int offset = 0;
            for (int op = 0; op < 400; op++) {
                String at = "seed " + seed + " (historyRetention " + retention + ", segmentInterval " + interval
                        + ") op " + op + " st " + st;
                Bytes key = Bytes.wrap(new byte[] {'k', (byte) rnd.nextInt(keys)});
                long ts = versionedTime(rnd, st, retention, interval);
                int dice = rnd.nextInt(100);
                if (dice < 45) {
                    byte[] value = rnd.nextInt(15) == 0 ? null : value(rnd, op);
                    p.record(op);
                    List<String> expected = outcome(() -> List.of(String.valueOf(k.put(key, value, ts))));
                    List<String> actual = outcome(() -> List.of(String.valueOf(b.put(key, value, ts))));
                    assertThat(actual).as(at + " put(" + key + ", " + ts + ")").isEqualTo(expected);
                    st = Math.max(st, ts >= st - retention ? ts : st);
                } else if (dice < 55) {
                    p.record(op);
                    List<String> expected = outcome(() -> List.of(show(k.delete(key, ts))));
                    List<String> actual = outcome(() -> List.of(show(b.delete(key, ts))));
                    assertThat(actual)
                            .as(at + " delete(" + key + ", " + ts + ")")
                            .isEqualTo(expected);
                    st = Math.max(st, ts >= st - retention ? ts : st);
                } else if (dice < 58) {
                    List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
                    int n = 1 + rnd.nextInt(15);
                    for (int i = 0; i < n; i++) {
                        long rts = Math.max(0, versionedTime(rnd, st, retention, interval));
                        ConsumerRecord<byte[], byte[]> r = new ConsumerRecord<>(
                                "v-changelog",
                                0,
                                offset++,
                                rts,
                                TimestampType.CREATE_TIME,
                                0,
                                0,
                                new byte[] {'k', (byte) rnd.nextInt(keys)},
                                rnd.nextInt(6) == 0 ? null : value(rnd, -op * 100 - i),
                                new RecordHeaders(),
                                Optional.empty());
                        ConsumerRecord<byte[], byte[]> positioned = ChangelogRecords.withPosition(
                                "v-changelog", 0, r.offset(), r.key(), r.value(), "in", 1, offset);
                        positioned.headers().forEach(h -> r.headers().add(h));
                        batch.add(r);
                        st = Math.max(st, rts >= st - retention ? rts : st);
                    }
                    p.restore(batch);
                    p.samePosition(at + " restored");
                } else {
                    compareVersionedReads(p, b, k, rnd, key, st, retention, interval, at);
                }
            }
            p.samePosition("seed " + seed + " end");
            p.sameDroppedRecords(
                    "seed " + seed + " (historyRetention " + retention + ", segmentInterval " + interval + ") end");
        }
    }

    /** A versioned timestamp: on and around the grace edge, segment boundaries, stream time. */
    private static long versionedTime(Random rnd, long st, long retention, long interval) {
        long t = switch (rnd.nextInt(7)) {
            case 0 -> st - retention + rnd.nextInt(3) - 1;
            case 1 -> Math.floorDiv(st - retention, interval) * interval + rnd.nextInt(3) - 1;
            case 2 -> Math.floorDiv(st, interval) * interval + rnd.nextInt(3) - 1;
            case 3 -> st + rnd.nextInt(3);
            case 4 -> st + rnd.nextInt((int) (3 * interval + 3));
            default -> st - rnd.nextInt((int) (2 * retention + 3));
        };
        // Never negative: with negative timestamps Kafka's store fails its own searches ("Search in segment expected
        // to find result but did not").
        return Math.max(0, t);
    }

    private static void compareVersionedReads(
            Pair p,
            VersionedKeyValueStore<Bytes, byte[]> b,
            VersionedKeyValueStore<Bytes, byte[]> k,
            Random rnd,
            Bytes key,
            long st,
            long retention,
            long interval,
            String at) {
        switch (rnd.nextInt(3)) {
            case 0 ->
                assertThat(outcome(() -> List.of(show(b.get(key)))))
                        .as(at + " get(" + key + ")")
                        .isEqualTo(oracle(() -> List.of(show(k.get(key)))));
            case 1 -> {
                long asOf = switch (rnd.nextInt(8)) {
                    case 0 -> Long.MIN_VALUE;
                    case 1 -> Long.MAX_VALUE;
                    default -> versionedTime(rnd, st, retention, interval);
                };
                assertThat(outcome(() -> List.of(show(b.get(key, asOf)))))
                        .as(at + " get(" + key + ", " + asOf + ")")
                        .isEqualTo(oracle(() -> List.of(show(k.get(key, asOf)))));
            }
            default -> {
                long from0 = rnd.nextInt(8) == 0 ? Long.MIN_VALUE : versionedTime(rnd, st, retention, interval);
                long to0 = rnd.nextInt(8) == 0 ? Long.MAX_VALUE : versionedTime(rnd, st, retention, interval);
                // Kafka's metered layer refuses fromTime > toTime before the store sees the query.
                long to = Math.max(from0, to0);
                long from = Math.min(from0, to0);
                boolean ascending = rnd.nextBoolean();
                assertThat(multi(p.bloom, key, from, to, ascending))
                        .as(at + " MultiVersionedKeyQuery(" + key + ", " + from + ", " + to + ", "
                                + (ascending ? "asc" : "desc") + ")")
                        .isEqualTo(multi(p.kafka, key, from, to, ascending));
            }
        }
    }

    /** A multi-version query's answer, through the store's IQv2 entry point as Kafka's metered layer calls it. */
    private static List<String> multi(StateStore store, Bytes key, long from, long to, boolean ascending) {
        MultiVersionedKeyQuery<Bytes, byte[]> q = MultiVersionedKeyQuery.<Bytes, byte[]>withKey(key)
                .fromTime(Instant.ofEpochMilli(from))
                .toTime(Instant.ofEpochMilli(to));
        q = ascending ? q.withAscendingTimestamps() : q.withDescendingTimestamps();
        QueryResult<VersionedRecordIterator<byte[]>> r =
                store.query(q, PositionBound.unbounded(), new QueryConfig(false));
        if (!r.isSuccess()) {
            return List.of("failure " + r.getFailureReason());
        }
        List<String> out = new ArrayList<>();
        try (VersionedRecordIterator<byte[]> it = r.getResult()) {
            while (it.hasNext()) {
                out.add(show(it.next()));
            }
        }
        out.add("at " + r.getPosition());
        return out;
    }

    private static String show(VersionedRecord<byte[]> r) {
        return r == null
                ? "null"
                : new String(r.value(), StandardCharsets.UTF_8) + "@" + r.timestamp() + "-" + r.validTo();
    }
}
