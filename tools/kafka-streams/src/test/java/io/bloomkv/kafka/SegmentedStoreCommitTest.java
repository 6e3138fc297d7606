package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Options;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The window and session stores' commit without a WAL (their default options): their offsets are records of their
 * database, written with no fsync, so a crash (a simulated power loss: unsynced bytes lost or torn) leaves a
 * committed offset never ahead of the data, and restoring the changelog from that offset gives the answers of a store
 * that never crashed: Kafka's own window or session store, fed the same operations, is the oracle. Stream time moves
 * over several retention periods, so segments expire (range tombstone, tables removed at once) before and after the
 * commits, late and expired puts included. Replay with -Dbloomkv.seed=N (the crash point also depends on when the
 * background flushes ran).
 */
class SegmentedStoreCommitTest {
    private static final TopicPartition CHANGELOG = new TopicPartition("app-w-changelog", 3);
    private static final long RETENTION = 120_000; // segments of 60 s
    private static final Duration WINDOW = Duration.ofSeconds(10);

    @TempDir
    File dir;

    @RegisterExtension
    final OpenStores stores = new OpenStores();

    /** One kind of store under test: opens both engines' stores, applies an operation to both, reads both. */
    private interface Kind {
        StateStore openBloom(TestStoreContext ctx, Options options);

        StateStore openKafka(TestStoreContext ctx);

        /** Applies one random operation at {@code ts} to both stores; returns its changelog key and value. */
        KeyValue<byte[], byte[]> apply(StateStore bloom, StateStore kafka, Random rnd, int i, long ts, int keys);

        /** Every answer compared after the restore, as text. */
        List<String> reads(StateStore store, int keys, long streamTime);
    }

    private static Bytes key(int k) {
        return Bytes.wrap(new byte[] {'k', (byte) k});
    }

    private static byte[] value(Random rnd, int i) {
        return rnd.nextInt(8) == 0 ? null : ("v" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static final Kind WINDOW_STORE = new Kind() {
        @Override
        public StateStore openBloom(TestStoreContext ctx, Options options) {
            StateStore s = BloomKvStores.persistentWindowStore(
                            "w", Duration.ofMillis(RETENTION), WINDOW, false, options)
                    .get();
            s.init(ctx, s);
            return s;
        }

        @Override
        public StateStore openKafka(TestStoreContext ctx) {
            StateStore s = Stores.persistentWindowStore("w", Duration.ofMillis(RETENTION), WINDOW, false)
                    .get();
            s.init(InternalTestContext.of(ctx), s);
            return s;
        }

        @Override
        @SuppressWarnings("unchecked")
        public KeyValue<byte[], byte[]> apply(
                StateStore bloom, StateStore kafka, Random rnd, int i, long ts, int keys) {
            Bytes key = key(rnd.nextInt(keys));
            long windowStart = ts - ts % WINDOW.toMillis();
            byte[] value = value(rnd, i);
            ((WindowStore<Bytes, byte[]>) bloom).put(key, value, windowStart);
            ((WindowStore<Bytes, byte[]>) kafka).put(key, value, windowStart);
            // What Kafka's change-logging layer writes: the composite key (sequence number 0, no duplicates), the
            // value.
            return KeyValue.pair(WindowKeyLayout.toStoreKey(key.get(), windowStart, 0), value);
        }

        @Override
        @SuppressWarnings("unchecked")
        public List<String> reads(StateStore store, int keys, long streamTime) {
            WindowStore<Bytes, byte[]> w = (WindowStore<Bytes, byte[]>) store;
            List<String> out = new ArrayList<>();
            out.addAll(WindowStoreDifferentialTest.windows(w.all()));
            out.addAll(WindowStoreDifferentialTest.windows(w.backwardAll()));
            out.addAll(WindowStoreDifferentialTest.windows(w.fetchAll(streamTime - RETENTION / 2, streamTime)));
            for (int k = 0; k < keys; k++) {
                try (WindowStoreIterator<byte[]> it = w.fetch(key(k), 0, Long.MAX_VALUE)) {
                    while (it.hasNext()) {
                        KeyValue<Long, byte[]> kv = it.next();
                        out.add(k + "@" + kv.key + "=" + new String(kv.value, StandardCharsets.UTF_8));
                    }
                }
            }
            return out;
        }
    };

    private static final Kind SESSION_STORE = new Kind() {
        @Override
        public StateStore openBloom(TestStoreContext ctx, Options options) {
            StateStore s = BloomKvStores.persistentSessionStore("s", Duration.ofMillis(RETENTION), options)
                    .get();
            s.init(ctx, s);
            return s;
        }

        @Override
        public StateStore openKafka(TestStoreContext ctx) {
            StateStore s = Stores.persistentSessionStore("s", Duration.ofMillis(RETENTION))
                    .get();
            s.init(InternalTestContext.of(ctx), s);
            return s;
        }

        @Override
        @SuppressWarnings("unchecked")
        public KeyValue<byte[], byte[]> apply(
                StateStore bloom, StateStore kafka, Random rnd, int i, long ts, int keys) {
            Windowed<Bytes> session = new Windowed<>(
                    key(rnd.nextInt(keys)), new SessionWindow(Math.max(0, ts - rnd.nextInt(30_000)), ts));
            byte[] value = value(rnd, i);
            if (value == null) {
                ((SessionStore<Bytes, byte[]>) bloom).remove(session);
                ((SessionStore<Bytes, byte[]>) kafka).remove(session);
            } else {
                ((SessionStore<Bytes, byte[]>) bloom).put(session, value);
                ((SessionStore<Bytes, byte[]>) kafka).put(session, value);
            }
            return KeyValue.pair(SessionKeyLayout.toStoreKey(session), value);
        }

        @Override
        @SuppressWarnings("unchecked")
        public List<String> reads(StateStore store, int keys, long streamTime) {
            SessionStore<Bytes, byte[]> s = (SessionStore<Bytes, byte[]>) store;
            List<String> out = new ArrayList<>();
            out.addAll(SessionStoreDifferentialTest.sessions(s.findSessions(key(0), key(keys), 0, Long.MAX_VALUE)));
            for (int k = 0; k < keys; k++) {
                out.addAll(SessionStoreDifferentialTest.sessions(s.findSessions(key(k), 0, Long.MAX_VALUE)));
                out.addAll(SessionStoreDifferentialTest.sessions(
                        s.backwardFindSessions(key(k), streamTime - RETENTION / 2, streamTime)));
            }
            return out;
        }
    };

    @Test
    void windowStoreCrashLosesOnlyWhatTheChangelogRestoresFromTheCommittedOffset() throws Exception {
        crashAndRestore("window", WINDOW_STORE);
    }

    @Test
    void sessionStoreCrashLosesOnlyWhatTheChangelogRestoresFromTheCommittedOffset() throws Exception {
        crashAndRestore("session", SESSION_STORE);
    }

    /** Stops {@code store} as a power loss would (its files see only errors), then drops what was not synced. */
    private void crash(FaultInjectingFileSystem fs, StateStore store, Random rnd) throws java.io.IOException {
        FaultInjectingFileSystem.Fault everything = fs.inject((op, p) -> true);
        try {
            store.close();
        } catch (RuntimeException expected) {
            // closing through a dead file system fails (its memtable cannot be flushed)
        } finally {
            everything.remove();
        }
        stores.remove(store);
        fs.crash(rnd);
    }

    private void crashAndRestore(String kindName, Kind kind) throws Exception {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("SegmentedStoreCommitTest " + kindName + " seed " + seed + " (replay with -Dbloomkv.seed="
                + seed + ")");
        Random rnd = new Random(seed);
        for (int round = 0; round < 3; round++) {
            String what = kindName + " seed " + seed + " round " + round;
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            // A small write buffer: memtables are flushed (and the data and offsets in them made durable) many times.
            Options options =
                    BloomKvStores.defaultSegmentedOptions().fileSystem(fs).writeBufferSize(8 << 10);
            File bloomDir = new File(dir, kindName + "-bloomkv-" + round);
            File kafkaDir = new File(dir, kindName + "-kafka-" + round);
            assertThat(bloomDir.mkdirs() && kafkaDir.mkdirs()).isTrue();
            StateStore bloom = kind.openBloom(new TestStoreContext(bloomDir), options);
            stores.add(bloom);
            TestStoreContext kafkaCtx = new TestStoreContext(kafkaDir);
            kafkaCtx.configs.put(org.apache.kafka.streams.StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "INFO");
            StateStore kafka = kind.openKafka(kafkaCtx);
            stores.add(kafka);

            int keys = 1 + rnd.nextInt(30);
            int n = 600 + rnd.nextInt(1400);
            int commitEvery = 40 + rnd.nextInt(200);
            List<ConsumerRecord<byte[], byte[]>> changelog = new ArrayList<>();
            long streamTime = 0;
            long committed = -1;
            for (int i = 0; i < n; i++) {
                // About 1.5 retention periods over the run: segments expire before and after commits.
                streamTime += rnd.nextInt(400);
                // Some late records, some older than the retention (dropped by both stores).
                long ts = rnd.nextInt(4) == 0
                        ? Math.max(0, streamTime - (long) (rnd.nextDouble() * RETENTION * 1.2))
                        : streamTime;
                KeyValue<byte[], byte[]> logged = kind.apply(bloom, kafka, rnd, i, ts, keys);
                changelog.add(new ConsumerRecord<>(
                        CHANGELOG.topic(),
                        CHANGELOG.partition(),
                        i,
                        ts,
                        TimestampType.CREATE_TIME,
                        0,
                        0,
                        logged.key,
                        logged.value,
                        new RecordHeaders(),
                        Optional.empty()));
                if ((i + 1) % commitEvery == 0 && i + 1 < n) { // the last records stay uncommitted
                    bloom.commit(Map.of(CHANGELOG, (long) changelog.size()));
                    committed = changelog.size();
                }
            }
            crash(fs, bloom, rnd);

            TestStoreContext ctx = new TestStoreContext(bloomDir);
            StateStore again = kind.openBloom(ctx, options);
            stores.add(again);
            Long offset = again.committedOffset(CHANGELOG);
            long from = offset == null ? 0 : offset;
            assertThat(from)
                    .as(what + ": never ahead of what was committed")
                    .isLessThanOrEqualTo(Math.max(0, committed));
            RecordBatchingStateRestoreCallback restore = (RecordBatchingStateRestoreCallback) ctx.restoreCallback;
            for (int at = (int) from; at < changelog.size(); ) {
                int size = Math.min(changelog.size() - at, 1 + rnd.nextInt(100));
                restore.restoreBatch(changelog.subList(at, at + size));
                at += size;
            }
            String at = what + " restored from offset " + from + " of " + n + " (committed " + committed + ")";
            List<String> expected = kind.reads(kafka, keys, streamTime);
            assertThat(expected).as(at + ": the oracle answers something").isNotEmpty();
            assertThat(kind.reads(again, keys, streamTime)).as(at).isEqualTo(expected);
            // A clean close and reopen keeps the committed offset and the position (records of the database).
            again.commit(Map.of(CHANGELOG, (long) changelog.size()));
            again.close();
            stores.remove(again);
            StateStore reopened = kind.openBloom(new TestStoreContext(bloomDir), options);
            stores.add(reopened);
            assertThat(reopened.committedOffset(CHANGELOG)).as(at + " reopened").isEqualTo(changelog.size());
            assertThat(reopened.getPosition()).as(at + " position").isEqualTo(again.getPosition());
        }
    }
}
