package io.bloomkv.kafka;

import static io.bloomkv.kafka.WindowStoreDifferentialTest.randomKey;
import static org.assertj.core.api.Assertions.assertThat;

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
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.RocksDbTimeOrderedSessionBytesStoreSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * bloomkv's session store against Kafka's own persistent session store as the oracle (and Kafka's time-ordered
 * session store for the end-time range scan of emit-on-window-close): the same random puts, removes, late and
 * expired sessions and stream-time jumps give the same answer to every read, forward and backward. Seed logged;
 * replay with {@code -Dbloomkv.seed=N}.
 */
class SessionStoreDifferentialTest {
    private static final Duration RETENTION = Duration.ofMinutes(3);

    /** After each test, its drivers and stores closed: no table and no off-heap filter byte left open. */
    @RegisterExtension
    final OpenStores openStores = new OpenStores();

    @TempDir
    Path stateDir;

    @Test
    void sameAnswersAsKafkasStore() {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("SessionStoreDifferentialTest seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        SessionBytesStoreSupplier kafka = Stores.persistentSessionStore("kafka", RETENTION);
        SessionBytesStoreSupplier kafkaTimeOrdered =
                new RocksDbTimeOrderedSessionBytesStoreSupplier("kafkaTimeOrdered", RETENTION.toMillis(), true);
        SessionBytesStoreSupplier bloom =
                BloomKvStores.persistentSessionStore("bloom", RETENTION, WindowStoreDifferentialTest.smallOptions());
        assertThat(bloom.segmentIntervalMs()).isEqualTo(kafka.segmentIntervalMs());
        List<String> checks = new ArrayList<>();
        try (ShmDir shm = new ShmDir(stateDir)) {
            InsideTopology.run(
                    shm.path,
                    ctx -> {
                        SessionStore<Bytes, byte[]> k = ctx.getStateStore("kafka");
                        SessionStore<Bytes, byte[]> kt = ctx.getStateStore("kafkaTimeOrdered");
                        SessionStore<Bytes, byte[]> b = ctx.getStateStore("bloom");
                        Random rnd = new Random(seed);
                        long streamTime = 1_000_000;
                        long retention = RETENTION.toMillis();
                        List<Windowed<Bytes>> written = new ArrayList<>();
                        for (int op = 0; op < 1000; op++) {
                            int what = rnd.nextInt(100);
                            String at = "seed " + seed + " op " + op;
                            if (what < 55) {
                                long end = Math.max(
                                        0,
                                        streamTime - (long) (rnd.nextDouble() * retention * 1.3) + rnd.nextInt(20_000));
                                long start = Math.max(0, end - (rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(40_000)));
                                streamTime = Math.max(streamTime, end);
                                Windowed<Bytes> session = new Windowed<>(randomKey(rnd), new SessionWindow(start, end));
                                byte[] value = rnd.nextInt(10) == 0 ? null : ("v" + op).getBytes();
                                k.put(session, value);
                                kt.put(session, value);
                                b.put(session, value);
                                written.add(session);
                            } else if (what < 60 && !written.isEmpty()) {
                                Windowed<Bytes> session = written.get(rnd.nextInt(written.size()));
                                k.remove(session);
                                kt.remove(session);
                                b.remove(session);
                            } else if (what < 62) {
                                streamTime += rnd.nextInt(5) == 0
                                        ? retention + rnd.nextInt((int) retention)
                                        : rnd.nextInt(40_000);
                            } else {
                                Bytes key = randomKey(rnd);
                                long eset = streamTime - (long) (rnd.nextDouble() * retention * 1.5);
                                long lsst = eset + (long) (rnd.nextDouble() * retention);
                                List<String> got;
                                switch (rnd.nextInt(8)) {
                                    case 0 -> {
                                        Windowed<Bytes> s = !written.isEmpty() && rnd.nextBoolean()
                                                ? written.get(rnd.nextInt(written.size()))
                                                : new Windowed<>(key, new SessionWindow(eset, lsst));
                                        byte[] e = k.fetchSession(
                                                s.key(),
                                                s.window().start(),
                                                s.window().end());
                                        assertThat(b.fetchSession(
                                                        s.key(),
                                                        s.window().start(),
                                                        s.window().end()))
                                                .as(at)
                                                .isEqualTo(e);
                                        got = e == null ? List.of() : List.of("x");
                                    }
                                    case 1 ->
                                        got = same(
                                                at,
                                                sessions(k.findSessions(key, eset, lsst)),
                                                sessions(b.findSessions(key, eset, lsst)));
                                    case 2 ->
                                        got = same(
                                                at,
                                                sessions(k.backwardFindSessions(key, eset, lsst)),
                                                sessions(b.backwardFindSessions(key, eset, lsst)));
                                    case 3 -> {
                                        Bytes hi = randomKey(rnd);
                                        boolean fwd = rnd.nextBoolean();
                                        got = same(
                                                at,
                                                sessions(
                                                        fwd
                                                                ? k.findSessions(key, hi, eset, lsst)
                                                                : k.backwardFindSessions(key, hi, eset, lsst)),
                                                sessions(
                                                        fwd
                                                                ? b.findSessions(key, hi, eset, lsst)
                                                                : b.backwardFindSessions(key, hi, eset, lsst)));
                                    }
                                    case 4 ->
                                        got = rnd.nextBoolean()
                                                ? same(at, sessions(k.fetch(key)), sessions(b.fetch(key)))
                                                : same(
                                                        at,
                                                        sessions(k.backwardFetch(key)),
                                                        sessions(b.backwardFetch(key)));
                                    case 5 -> {
                                        Bytes hi = randomKey(rnd);
                                        got = rnd.nextBoolean()
                                                ? same(at, sessions(k.fetch(key, hi)), sessions(b.fetch(key, hi)))
                                                : same(
                                                        at,
                                                        sessions(k.backwardFetch(key, hi)),
                                                        sessions(b.backwardFetch(key, hi)));
                                    }
                                    default -> {
                                        long latestEnd = eset + (long) (rnd.nextDouble() * retention);
                                        got = same(
                                                at,
                                                sessions(kt.findSessions(eset, latestEnd)),
                                                sessions(b.findSessions(eset, latestEnd)));
                                    }
                                }
                                checks.add(got.isEmpty() ? "empty" : "some");
                            }
                        }
                    },
                    Stores.sessionStoreBuilder(kafka, Serdes.Bytes(), Serdes.ByteArray())
                            .withCachingDisabled()
                            .withLoggingDisabled(),
                    Stores.sessionStoreBuilder(kafkaTimeOrdered, Serdes.Bytes(), Serdes.ByteArray())
                            .withCachingDisabled()
                            .withLoggingDisabled(),
                    Stores.sessionStoreBuilder(bloom, Serdes.Bytes(), Serdes.ByteArray())
                            .withCachingDisabled()
                            .withLoggingDisabled());
        }
        assertThat(checks).as("reads compared").hasSizeGreaterThan(200);
        assertThat(checks.stream().filter(c -> !c.equals("empty")).count())
                .as("reads that returned something")
                .isGreaterThan(60);
    }

    private static List<String> same(String at, List<String> expected, List<String> actual) {
        assertThat(actual).as(at).isEqualTo(expected);
        return actual;
    }

    static List<String> sessions(KeyValueIterator<Windowed<Bytes>, byte[]> it) {
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
}
