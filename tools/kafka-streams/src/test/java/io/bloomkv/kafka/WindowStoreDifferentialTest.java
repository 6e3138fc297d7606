package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Options;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * bloomkv's window store against Kafka's own persistent window store as the oracle: the same random sequence of
 * puts (many windows and segments, stream time advancing and jumping, late and expired records, deletes,
 * duplicates) gives the same answer to every read, forward and backward. Seed logged; replay with
 * {@code -Dbloomkv.seed=N}.
 */
class WindowStoreDifferentialTest {
    private static final Duration RETENTION = Duration.ofMinutes(3); // segments of 90 s
    private static final Duration WINDOW = Duration.ofSeconds(30);

    /** After each test, its drivers and stores closed: no table and no off-heap filter byte left open. */
    @RegisterExtension
    final OpenStores openStores = new OpenStores();

    @TempDir
    Path stateDir;

    /** Keys of 0 to 3 bytes over bytes that stress the composite-key order (0x00, 0x7F, 0x80, 0xFF). */
    static Bytes randomKey(Random rnd) {
        byte[] alphabet = {0x00, 0x01, 'a', 'b', 0x7F, (byte) 0x80, (byte) 0xFF};
        int len = 1 + rnd.nextInt(3);
        byte[] k = new byte[len];
        for (int i = 0; i < len; i++) {
            k[i] = alphabet[rnd.nextInt(alphabet.length)];
        }
        return Bytes.wrap(k);
    }

    @ParameterizedTest(name = "retainDuplicates={0}")
    @ValueSource(booleans = {false, true})
    void sameAnswersAsKafkasStore(boolean retainDuplicates) {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("WindowStoreDifferentialTest seed " + seed + " retainDuplicates=" + retainDuplicates
                + " (replay with -Dbloomkv.seed=" + seed + ")");
        WindowBytesStoreSupplier kafka = Stores.persistentWindowStore("kafka", RETENTION, WINDOW, retainDuplicates);
        WindowBytesStoreSupplier bloom = BloomKvStores.persistentWindowStore(
                "bloom",
                RETENTION,
                WINDOW,
                retainDuplicates,
                Boolean.getBoolean("bloomkv.bigbuf") ? BloomKvStores.defaultSegmentedOptions() : smallOptions());
        assertThat(bloom.segmentIntervalMs()).isEqualTo(kafka.segmentIntervalMs());
        List<String> checks = new ArrayList<>();
        try (ShmDir shm = new ShmDir(stateDir)) {
            InsideTopology.run(
                    shm.path,
                    ctx -> {
                        WindowStore<Bytes, byte[]> k = ctx.getStateStore("kafka");
                        WindowStore<Bytes, byte[]> b = ctx.getStateStore("bloom");
                        Random rnd = new Random(seed);
                        long streamTime = 1_000_000;
                        long retention = RETENTION.toMillis();
                        for (int op = 0; op < 1000; op++) {
                            int what = rnd.nextInt(100);
                            if (what < 60) {
                                // Mostly around stream time; some late, some beyond retention (dropped), some ahead.
                                long ts =
                                        streamTime - (long) (rnd.nextDouble() * retention * 1.3) + rnd.nextInt(20_000);
                                ts = Math.max(0, ts);
                                streamTime = Math.max(streamTime, ts);
                                Bytes key = randomKey(rnd);
                                byte[] value = rnd.nextInt(10) == 0 ? null : ("v" + op).getBytes();
                                k.put(key, value, ts);
                                b.put(key, value, ts);
                            } else if (what < 62) {
                                streamTime += rnd.nextInt(5) == 0
                                        ? retention + rnd.nextInt((int) retention)
                                        : rnd.nextInt(40_000);
                            } else {
                                compareReads(k, b, rnd, streamTime, retention, "seed " + seed + " op " + op, checks);
                            }
                        }
                        // A last full comparison.
                        assertThat(windows(b.all())).isEqualTo(windows(k.all()));
                        assertThat(windows(b.backwardAll())).isEqualTo(windows(k.backwardAll()));
                    },
                    Stores.windowStoreBuilder(kafka, Serdes.Bytes(), Serdes.ByteArray())
                            .withCachingDisabled()
                            .withLoggingDisabled(),
                    Stores.windowStoreBuilder(bloom, Serdes.Bytes(), Serdes.ByteArray())
                            .withCachingDisabled()
                            .withLoggingDisabled());
        }
        assertThat(checks).as("reads compared").hasSizeGreaterThan(200);
        assertThat(checks.stream().filter(c -> !c.equals("empty")).count())
                .as("reads that returned something")
                .isGreaterThan(60);
    }

    private static void compareReads(
            WindowStore<Bytes, byte[]> k,
            WindowStore<Bytes, byte[]> b,
            Random rnd,
            long streamTime,
            long retention,
            String at,
            List<String> checks) {
        Bytes key = randomKey(rnd);
        long from = streamTime - (long) (rnd.nextDouble() * retention * 1.5);
        long to = from + (long) (rnd.nextDouble() * retention);
        switch (rnd.nextInt(9)) {
            case 0 -> {
                long t = from - from % 1000; // puts are on arbitrary ms; try exact ones too
                assertThat(b.fetch(key, t)).as(at).isEqualTo(k.fetch(key, t));
                checks.add("get");
            }
            case 1 -> record(checks, assertSame(at, values(k.fetch(key, from, to)), values(b.fetch(key, from, to))));
            case 2 ->
                record(
                        checks,
                        assertSame(at, values(k.backwardFetch(key, from, to)), values(b.backwardFetch(key, from, to))));
            case 3, 4 -> {
                Bytes other = randomKey(rnd);
                Bytes lo = rnd.nextInt(8) == 0 ? null : key;
                Bytes hi = rnd.nextInt(8) == 0 ? null : other;
                boolean fwd = rnd.nextBoolean();
                record(
                        checks,
                        assertSame(
                                at,
                                windows(fwd ? k.fetch(lo, hi, from, to) : k.backwardFetch(lo, hi, from, to)),
                                windows(fwd ? b.fetch(lo, hi, from, to) : b.backwardFetch(lo, hi, from, to))));
            }
            case 5, 6 -> {
                boolean fwd = rnd.nextBoolean();
                record(
                        checks,
                        assertSame(
                                at,
                                windows(fwd ? k.fetchAll(from, to) : k.backwardFetchAll(from, to)),
                                windows(fwd ? b.fetchAll(from, to) : b.backwardFetchAll(from, to))));
            }
            case 7 -> record(checks, assertSame(at, windows(k.all()), windows(b.all())));
            default -> record(checks, assertSame(at, windows(k.backwardAll()), windows(b.backwardAll())));
        }
    }

    private static void record(List<String> checks, List<String> result) {
        checks.add(result.isEmpty() ? "empty" : "some");
    }

    private static List<String> assertSame(String at, List<String> expected, List<String> actual) {
        assertThat(actual).as(at).isEqualTo(expected);
        return actual;
    }

    static List<String> values(WindowStoreIterator<byte[]> it) {
        List<String> out = new ArrayList<>();
        try (it) {
            while (it.hasNext()) {
                Long peek = it.peekNextKey();
                KeyValue<Long, byte[]> kv = it.next();
                assertThat(kv.key).isEqualTo(peek);
                out.add(kv.key + "=" + new String(kv.value));
            }
        }
        return out;
    }

    static List<String> windows(KeyValueIterator<Windowed<Bytes>, byte[]> it) {
        List<String> out = new ArrayList<>();
        try (it) {
            while (it.hasNext()) {
                Windowed<Bytes> peek = it.peekNextKey();
                KeyValue<Windowed<Bytes>, byte[]> kv = it.next();
                assertThat(kv.key).isEqualTo(peek);
                out.add(Arrays.toString(kv.key.key().get()) + "@"
                        + kv.key.window().start() + "-" + kv.key.window().end() + "=" + new String(kv.value));
            }
        }
        return out;
    }

    /** Options with small memtables, so a scenario flushes to tables and reads merge memtables and tables. */
    static Options smallOptions() {
        return BloomKvStores.defaultSegmentedOptions().writeBufferSize(32 << 10);
    }
}
