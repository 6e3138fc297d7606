package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.internals.SessionKeySchema;
import org.apache.kafka.streams.state.internals.WindowKeySchema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stored keys the window and session stores build in one array ({@code toStoreKey(gap, ...)}: the segment prefix
 * gap, then the composite key) are Kafka's composite keys byte for byte behind the gap, their timestamps read back in
 * place, for random keys and timestamps (the seed is logged); and a store's reused single-put batch survives a value
 * larger than the batch it keeps.
 */
class SegmentedKeyLayoutTest {
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

    @Test
    void storedKeysAreKafkasCompositeKeysBehindTheSegmentPrefix() {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("SegmentedKeyLayoutTest seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        for (int i = 0; i < 2_000; i++) {
            byte[] key = new byte[1 + rnd.nextInt(40)];
            rnd.nextBytes(key);
            long t1 = rnd.nextInt(4) == 0 ? rnd.nextLong() : rnd.nextLong() & Long.MAX_VALUE;
            long t2 = rnd.nextInt(4) == 0 ? rnd.nextLong() : rnd.nextLong() & Long.MAX_VALUE;
            int seq = rnd.nextInt();
            int gap = rnd.nextBoolean() ? Segment.PREFIX_SIZE : 0;

            byte[] window = WindowKeyLayout.toStoreKey(gap, key, t1, seq);
            byte[] kafkaWindow =
                    WindowKeySchema.toStoreKeyBinary(Bytes.wrap(key), t1, seq).get();
            assertThat(Arrays.copyOfRange(window, gap, window.length))
                    .as("seed " + seed)
                    .isEqualTo(kafkaWindow);
            assertThat(Arrays.copyOf(window, gap)).as("the gap is left zero").isEqualTo(new byte[gap]);
            assertThat(WindowKeyLayout.extractTimestamp(window)).isEqualTo(t1);
            assertThat(WindowKeyLayout.extractSeqnum(window)).isEqualTo(seq);
            assertThat(WindowKeyLayout.INSTANCE.segmentTimestamp(window)).isEqualTo(t1);
            assertThat(WindowKeyLayout.extractKeyBytes(kafkaWindow)).isEqualTo(key);

            // Kafka's session windows refuse negative times.
            long start = Math.min(t1, t2) & Long.MAX_VALUE;
            long end = Math.max(start, Math.max(t1, t2));
            Windowed<Bytes> session = new Windowed<>(Bytes.wrap(key), new SessionWindow(start, end));
            byte[] stored = SessionKeyLayout.toStoreKey(gap, session);
            byte[] kafkaSession = SessionKeySchema.toBinary(session).get();
            assertThat(Arrays.copyOfRange(stored, gap, stored.length))
                    .as("seed " + seed)
                    .isEqualTo(kafkaSession);
            assertThat(SessionKeyLayout.extractEnd(stored)).isEqualTo(end);
            assertThat(SessionKeyLayout.extractStart(stored)).isEqualTo(start);
            assertThat(SessionKeyLayout.INSTANCE.segmentTimestamp(stored)).isEqualTo(end);
        }
    }

    @Test
    void aValueLargerThanTheKeptBatchIsWrittenAndTheStoreGoesOn() {
        TestStoreContext ctx = new TestStoreContext(dir.toFile());
        WindowStore<Bytes, byte[]> w = BloomKvStores.persistentWindowStore(
                        "w", Duration.ofMinutes(2), Duration.ofSeconds(10), false)
                .get();
        w.init(ctx, w);
        stores.add(w);
        SessionStore<Bytes, byte[]> s =
                BloomKvStores.persistentSessionStore("s", Duration.ofMinutes(2)).get();
        s.init(new TestStoreContext(dir.resolve("s").toFile()), s);
        stores.add(s);
        byte[] big = new byte[200 << 10];
        new Random(7).nextBytes(big);
        Bytes a = Bytes.wrap(new byte[] {'a'});
        w.put(a, big, 1000);
        w.put(a, new byte[] {1}, 2000);
        w.put(a, big, 3000);
        assertThat(w.fetch(a, 1000)).isEqualTo(big);
        assertThat(w.fetch(a, 2000)).containsExactly(1);
        assertThat(w.fetch(a, 3000)).isEqualTo(big);
        w.put(a, null, 3000);
        assertThat(w.fetch(a, 3000)).as("a null value deletes").isNull();
        assertThat(w.fetch(a, 1000)).isEqualTo(big);

        Windowed<Bytes> one = new Windowed<>(a, new SessionWindow(10, 20));
        Windowed<Bytes> two = new Windowed<>(a, new SessionWindow(30, 40));
        s.put(one, big);
        s.put(two, new byte[] {2});
        assertThat(s.fetchSession(a, 10, 20)).isEqualTo(big);
        assertThat(s.fetchSession(a, 30, 40)).containsExactly(2);
        s.remove(one);
        assertThat(s.fetchSession(a, 10, 20)).isNull();
        assertThat(s.fetchSession(a, 30, 40)).containsExactly(2);
    }
}
