package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Options;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.internals.OffsetCheckpoint;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key-value store's commit without a WAL ({@link BloomKvStores#defaultKeyValueOptions()}): offsets and position
 * are records of its database ({@link StoreMetadata}), written with no fsync; a clean close keeps everything; a crash
 * loses exactly what the changelog restores from the committed offset. Replay with -Dbloomkv.seed=N.
 */
class BloomKvStoreCommitTest {
    private static final TopicPartition CHANGELOG = new TopicPartition("app-counts-changelog", 2);

    @TempDir
    File dir;

    @RegisterExtension
    final OpenStores stores = new OpenStores();

    private BloomKvStore open(String name, Options options, TestStoreContext ctx) {
        BloomKvStore s = (BloomKvStore)
                BloomKvStores.persistentKeyValueStore(name, options).get();
        s.init(ctx, s);
        stores.add(s);
        return s;
    }

    private static Bytes b(String s) {
        return Bytes.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String str(byte[] a) {
        return a == null ? null : new String(a, StandardCharsets.UTF_8);
    }

    private static TreeMap<String, String> contents(BloomKvStore s) {
        TreeMap<String, String> out = new TreeMap<>();
        try (KeyValueIterator<Bytes, byte[]> it = s.all()) {
            while (it.hasNext()) {
                KeyValue<Bytes, byte[]> kv = it.next();
                out.put(str(kv.key.get()), str(kv.value));
            }
        }
        return out;
    }

    @Test
    void theDefaultsRunWithoutAWalAndCommitWritesNoFileAndNoSync() {
        assertThat(BloomKvStores.defaultKeyValueOptions().disableWal()).isTrue();
        assertThat(BloomKvStores.defaultOptions().disableWal())
                .as("window and session stores keep their WAL")
                .isFalse();
        TestStoreContext ctx = new TestStoreContext(dir);
        BloomKvStore s = open("counts", BloomKvStores.defaultKeyValueOptions(), ctx);
        assertThat(s.committedOffset(CHANGELOG)).isNull();
        ctx.setRecord("input", 0, 41);
        s.put(b("a"), "1".getBytes(StandardCharsets.UTF_8));
        s.commit(Map.of(CHANGELOG, 10L));
        assertThat(s.committedOffset(CHANGELOG)).isEqualTo(10L);
        assertThat(s.database().stats().walRecords()).isZero();
        assertThat(s.database().stats().walSyncs()).isZero();
        assertThat(s.database().stats().tableCount())
                .as("a commit writes no table")
                .isZero();
        assertThat(new File(dir, "counts.offsets")).doesNotExist();
        assertThat(new File(dir, "counts.position")).doesNotExist();
        assertThat(contents(s))
                .as("the store's own records are never read as Kafka keys")
                .containsOnlyKeys("a");
        assertThat(s.range(null, null).hasNext()).isTrue();
        assertThat(s.reverseAll().next().key).isEqualTo(b("a"));

        // A null value removes that partition's offset, an empty map every offset (StateStore.commit's contract).
        TopicPartition other = new TopicPartition("app-other-changelog", 0);
        s.commit(Map.of(other, 5L));
        Map<TopicPartition, Long> removeOther = new HashMap<>();
        removeOther.put(other, null);
        s.commit(removeOther);
        assertThat(s.committedOffset(other)).isNull();
        assertThat(s.committedOffset(CHANGELOG)).isEqualTo(10L);
        s.close();

        BloomKvStore again = open("counts", BloomKvStores.defaultKeyValueOptions(), new TestStoreContext(dir));
        assertThat(again.committedOffset(CHANGELOG))
                .as("kept across a clean close")
                .isEqualTo(10L);
        assertThat(again.committedOffset(other)).isNull();
        assertThat(again.getPosition()).isEqualTo(Position.emptyPosition().withComponent("input", 0, 41));
        assertThat(str(again.get(b("a")))).isEqualTo("1");
        again.commit(Map.of());
        assertThat(again.committedOffset(CHANGELOG)).isNull();
        again.close();
        BloomKvStore third = open("counts", BloomKvStores.defaultKeyValueOptions(), new TestStoreContext(dir));
        assertThat(third.committedOffset(CHANGELOG))
                .as("an empty commit removed it")
                .isNull();
    }

    @Test
    void filesOfAnEarlierVersionMoveIntoTheDatabase() throws Exception {
        new OffsetCheckpoint(new File(dir, "old.offsets")).write(Map.of(CHANGELOG, 77L));
        StoreQueryUtils.checkpointPosition(
                new OffsetCheckpoint(new File(dir, "old.position")),
                Position.emptyPosition().withComponent("input", 1, 9L));
        BloomKvStore s = open("old", BloomKvStores.defaultKeyValueOptions(), new TestStoreContext(dir));
        assertThat(s.committedOffset(CHANGELOG)).isEqualTo(77L);
        assertThat(s.getPosition()).isEqualTo(Position.emptyPosition().withComponent("input", 1, 9L));
        assertThat(new File(dir, "old.offsets")).doesNotExist();
        assertThat(new File(dir, "old.position")).doesNotExist();
        s.close();
        BloomKvStore again = open("old", BloomKvStores.defaultKeyValueOptions(), new TestStoreContext(dir));
        assertThat(again.committedOffset(CHANGELOG)).isEqualTo(77L);
        assertThat(again.getPosition()).isEqualTo(Position.emptyPosition().withComponent("input", 1, 9L));
    }

    /** Stops {@code s} as a power loss would (its files see only errors), then drops what was not synced. */
    private static void crash(FaultInjectingFileSystem fs, BloomKvStore s, Random rnd) throws java.io.IOException {
        FaultInjectingFileSystem.Fault everything = fs.inject((op, p) -> true);
        try {
            s.close();
        } catch (RuntimeException expected) {
            // closing through a dead file system fails (its memtable cannot be flushed)
        } finally {
            everything.remove();
        }
        fs.crash(rnd);
    }

    /**
     * A word count whose process dies (a simulated power loss: unsynced bytes lost or torn) at a random point. The
     * store it leaves is exactly the state after some prefix of the changelog, at least up to its committed offset;
     * restoring the changelog from that offset gives the state of the whole changelog.
     */
    @Test
    void aCrashLosesExactlyWhatTheChangelogRestoresFromTheCommittedOffset() throws Exception {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("BloomKvStoreCommitTest seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        for (int round = 0; round < 3; round++) {
            String ctxText = "seed " + seed + " round " + round;
            File stateDir = new File(dir, "r" + round);
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            Options options =
                    BloomKvStores.defaultKeyValueOptions().fileSystem(fs).writeBufferSize(16 << 10);
            BloomKvStore s = open("counts", options, new TestStoreContext(stateDir));
            List<ConsumerRecord<byte[], byte[]>> changelog = new ArrayList<>();
            List<Map<String, String>> states = new ArrayList<>(); // states.get(i): after changelog[0, i)
            Map<String, String> model = new HashMap<>();
            states.add(Map.copyOf(model));
            int n = 800 + rnd.nextInt(1700);
            int commitEvery = 50 + rnd.nextInt(300);
            long committed = -1;
            for (int i = 0; i < n; i++) {
                String k = "w" + (int) (100 * Math.pow(rnd.nextDouble(), 3));
                String count = Long.toString(Long.parseLong(model.getOrDefault(k, "0")) + 1);
                s.put(b(k), count.getBytes(StandardCharsets.UTF_8));
                model.put(k, count);
                changelog.add(new ConsumerRecord<>(
                        CHANGELOG.topic(),
                        CHANGELOG.partition(),
                        i,
                        k.getBytes(StandardCharsets.UTF_8),
                        count.getBytes(StandardCharsets.UTF_8)));
                states.add(Map.copyOf(model));
                if ((i + 1) % commitEvery == 0) {
                    s.commit(Map.of(CHANGELOG, (long) changelog.size()));
                    committed = changelog.size();
                }
            }
            crash(fs, s, rnd);
            stores.remove(s);

            TestStoreContext ctx = new TestStoreContext(stateDir);
            BloomKvStore again = open("counts", options, ctx);
            Long offset = again.committedOffset(CHANGELOG);
            long from = offset == null ? 0 : offset;
            assertThat(from)
                    .as(ctxText + ": never ahead of what was committed")
                    .isLessThanOrEqualTo(Math.max(0, committed));
            TreeMap<String, String> left = contents(again);
            int prefix = -1;
            for (int i = states.size() - 1; i >= 0 && prefix < 0; i--) {
                if (new TreeMap<>(states.get(i)).equals(left)) {
                    prefix = i;
                }
            }
            assertThat(prefix)
                    .as(ctxText + ": the store is the state after a prefix of the changelog")
                    .isNotNegative();
            assertThat((long) prefix)
                    .as(ctxText + ": the data is never behind its committed offset " + from)
                    .isGreaterThanOrEqualTo(from);
            ((RecordBatchingStateRestoreCallback) ctx.restoreCallback)
                    .restoreBatch(changelog.subList((int) from, changelog.size()));
            assertThat(contents(again))
                    .as(ctxText + ": restored from offset " + from + " of " + n)
                    .isEqualTo(new TreeMap<>(model));
        }
    }
}
