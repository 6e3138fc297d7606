package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Options;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import java.io.File;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.state.internals.VersionedKeyValueToBytesStoreAdapter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The versioned store's commit without a WAL (its default options): its offsets are records of its database, written
 * with no fsync, so a crash (a simulated power loss: unsynced bytes lost or torn) leaves a committed offset never
 * ahead of the data, and restoring the changelog from that offset gives the answers of a store that never crashed:
 * Kafka's own versioned store, fed the same operations, is the oracle. Two limits keep that oracle exact, both
 * properties of Kafka's versioned store that this one shares: the operations stay within the grace period (a replay
 * from an offset restarts the observed stream time, so a put dropped the first time could be applied the second), and
 * the restore batches span less than half the history retention in time (a restore moves stream time to the batch's
 * newest record first and writes no version that expires by then, which can drop the row holding a tombstone's time
 * that a later out-of-order put in the same batch needs: a restore of such a batch answers unlike the processing, in
 * Kafka's store too). The reads compared are those within the history retention at the end. Replay with
 * -Dbloomkv.seed=N (the crash point also depends on when the background flushes ran).
 */
class BloomKvVersionedStoreCommitTest {
    private static final TopicPartition CHANGELOG = new TopicPartition("app-v-changelog", 1);

    @TempDir
    File dir;

    @RegisterExtension
    final OpenStores stores = new OpenStores();

    @SuppressWarnings("unchecked")
    private static <S> S inner(StateStore adapter) throws Exception {
        Field f = VersionedKeyValueToBytesStoreAdapter.class.getDeclaredField("inner");
        f.setAccessible(true);
        return (S) f.get(adapter);
    }

    private BloomKvVersionedStore openBloom(TestStoreContext ctx, long retention, long interval, Options options)
            throws Exception {
        StateStore adapter = BloomKvStores.persistentVersionedKeyValueStore(
                        "v", Duration.ofMillis(retention), Duration.ofMillis(interval), options)
                .get();
        adapter.init(ctx, adapter);
        stores.add(adapter);
        return inner(adapter);
    }

    /** Stops {@code adapter}'s store as a power loss would (its files see only errors), then drops what was not synced. */
    private void crash(FaultInjectingFileSystem fs, StateStore adapter, Random rnd) throws java.io.IOException {
        FaultInjectingFileSystem.Fault everything = fs.inject((op, p) -> true);
        try {
            adapter.close();
        } catch (RuntimeException expected) {
            // closing through a dead file system fails (its memtable cannot be flushed)
        } finally {
            everything.remove();
        }
        stores.remove(adapter);
        fs.crash(rnd);
    }

    @Test
    void aCrashLosesOnlyWhatTheChangelogRestoresFromTheCommittedOffset() throws Exception {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println(
                "BloomKvVersionedStoreCommitTest seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        for (int round = 0; round < 3; round++) {
            String what = "seed " + seed + " round " + round;
            long retention = 40 + rnd.nextInt(100);
            long interval = Math.max(1, retention / 3);
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            // A small write buffer: memtables are flushed (and the data and offsets in them made durable) many times.
            Options options =
                    BloomKvStores.defaultKeyValueOptions().fileSystem(fs).writeBufferSize(8 << 10);
            File bloomDir = new File(dir, "bloomkv-" + round);
            File kafkaDir = new File(dir, "kafka-" + round);
            assertThat(bloomDir.mkdirs() && kafkaDir.mkdirs()).isTrue();
            BloomKvVersionedStore bloom = openBloom(new TestStoreContext(bloomDir), retention, interval, options);
            StateStore bloomAdapter = stores.last();
            StateStore kafkaAdapter = Stores.persistentVersionedKeyValueStore(
                            "v", Duration.ofMillis(retention), Duration.ofMillis(interval))
                    .get();
            TestStoreContext kafkaCtx = new TestStoreContext(kafkaDir);
            kafkaCtx.configs.put(org.apache.kafka.streams.StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "INFO");
            kafkaAdapter.init(InternalTestContext.of(kafkaCtx), kafkaAdapter);
            stores.add(kafkaAdapter);
            VersionedKeyValueStore<Bytes, byte[]> kafka = inner(kafkaAdapter);

            int keys = 1 + rnd.nextInt(30);
            int n = 600 + rnd.nextInt(1400);
            int commitEvery = 40 + rnd.nextInt(200);
            List<ConsumerRecord<byte[], byte[]>> changelog = new ArrayList<>();
            long streamTime = 0;
            long committed = -1;
            for (int i = 0; i < n; i++) {
                streamTime += rnd.nextInt(3);
                // Within the grace period (history retention): never dropped, see the class comment.
                long ts = rnd.nextInt(4) == 0 ? Math.max(0, streamTime - rnd.nextInt((int) retention / 2)) : streamTime;
                Bytes key = Bytes.wrap(new byte[] {'k', (byte) rnd.nextInt(keys)});
                byte[] value = rnd.nextInt(8) == 0 ? null : ("v" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                if (value == null) {
                    bloom.delete(key, ts);
                    kafka.delete(key, ts);
                } else {
                    assertThat(bloom.put(key, value, ts)).as(what + " put " + i).isEqualTo(kafka.put(key, value, ts));
                }
                changelog.add(new ConsumerRecord<>(
                        CHANGELOG.topic(),
                        CHANGELOG.partition(),
                        i,
                        ts,
                        TimestampType.CREATE_TIME,
                        0,
                        0,
                        key.get(),
                        value,
                        new RecordHeaders(),
                        Optional.empty()));
                if ((i + 1) % commitEvery == 0 && i + 1 < n) { // the last records stay uncommitted
                    bloom.commit(Map.of(CHANGELOG, (long) changelog.size()));
                    committed = changelog.size();
                }
            }
            crash(fs, bloomAdapter, rnd);

            TestStoreContext ctx = new TestStoreContext(bloomDir);
            BloomKvVersionedStore again = openBloom(ctx, retention, interval, options);
            Long offset = again.committedOffset(CHANGELOG);
            long from = offset == null ? 0 : offset;
            assertThat(from)
                    .as(what + ": never ahead of what was committed")
                    .isLessThanOrEqualTo(Math.max(0, committed));
            RecordBatchingStateRestoreCallback restore = (RecordBatchingStateRestoreCallback) ctx.restoreCallback;
            // Stream time moves at most 2 per record: a batch of up to retention / 4 records spans at most half of it.
            for (int at = (int) from; at < changelog.size(); ) {
                int size = Math.min(changelog.size() - at, 1 + rnd.nextInt((int) retention / 4));
                restore.restoreBatch(changelog.subList(at, at + size));
                at += size;
            }
            for (int k = 0; k < keys; k++) {
                Bytes key = Bytes.wrap(new byte[] {'k', (byte) k});
                String at = what + " restored from offset " + from + " of " + n + ", key " + k;
                assertThat(show(again.get(key))).as(at + " get").isEqualTo(show(kafka.get(key)));
                for (long asOf = streamTime - retention; asOf <= streamTime + 2; asOf++) {
                    assertThat(show(again.get(key, asOf)))
                            .as(at + " get as of " + asOf)
                            .isEqualTo(show(kafka.get(key, asOf)));
                }
            }
        }
    }

    private static String show(VersionedRecord<byte[]> r) {
        return r == null ? "null" : Arrays.toString(r.value()) + "@" + r.timestamp() + "-" + r.validTo();
    }
}
