package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.query.StateQueryResult;
import org.apache.kafka.streams.query.VersionedKeyQuery;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.VersionedRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link WindowedTestApp} (tumbling count, hopping aggregate, session aggregate, stream-table join against a bloomkv
 * versioned table) on a real one-node Kafka cluster (KafkaClusterTestKit, loopback), checked against counts computed
 * from the input:
 * <ol>
 * <li>at-least-once: run to the expected results; stop; wipe the state directory; start again: every store is
 *     restored from its changelog and answers identically;</li>
 * <li>exactly_once_v2: the application runs in a child JVM, is killed with {@code kill -9}
 *     ({@link Process#destroyForcibly()}) while input is still arriving, and is started again here: the stores
 *     (not closed cleanly, so possibly holding aborted writes) are wiped and restored by Kafka Streams
 *     (TaskCorruptedException, as for its RocksDB stores), and the results are exact. The restored record counts
 *     are printed.</li>
 * </ol>
 * Replay the input with {@code -Dbloomkv.seed=<seed>} (printed).
 */
class EmbeddedClusterWindowedAppTest {
    @TempDir
    Path dir;

    private static final int USERS = 40;
    /**
     * Event time starts an hour ago (whole minute): window and session changelogs are compacted and deleted by time, so
     * records far in the past would be deleted by the broker before a restore could read them.
     */
    private static final long BASE = (System.currentTimeMillis() - 3_600_000L) / 60_000L * 60_000L;
    /** Profile versions: p0 before every event, p1 from the middle of the event time on. */
    private static final long PROFILE_SWITCH = BASE + 150_000L;

    private final AtomicReference<Throwable> streamsError = new AtomicReference<>();
    /** The smallest offset each store's restore started from (the restore listener). */
    private final Map<String, Long> restoreStarts = new ConcurrentHashMap<>();

    /** The input and what the application must answer for it. */
    private static final class Expected {
        final TreeMap<String, Long> tumbling = new TreeMap<>();
        final TreeMap<String, Long> hopping = new TreeMap<>();
        final TreeMap<String, List<long[]>> sessionsByUser = new TreeMap<>();
        final TreeMap<String, Long> joins = new TreeMap<>();
        long time = BASE;
        int sent;

        void add(String user, long amount, long ts) {
            long minute = 60_000L;
            long start = ts - ts % minute;
            tumbling.merge(user + "@" + start, 1L, Long::sum);
            hopping.merge(user + "@" + start, amount, Long::sum);
            hopping.merge(user + "@" + (start - minute), amount, Long::sum);
            List<long[]> sessions = sessionsByUser.computeIfAbsent(user, u -> new ArrayList<>());
            long[] last = sessions.isEmpty() ? null : sessions.get(sessions.size() - 1);
            if (last != null && ts - last[1] <= 30_000L) {
                last[1] = ts;
                last[2] += amount;
            } else {
                sessions.add(new long[] {ts, ts, amount});
            }
            joins.merge((ts >= PROFILE_SWITCH ? "p1-" : "p0-") + user, 1L, Long::sum);
        }

        TreeMap<String, Long> sessions() {
            TreeMap<String, Long> out = new TreeMap<>();
            sessionsByUser.forEach((u, list) -> list.forEach(s -> out.put(u + "@" + s[0] + "-" + s[1], s[2])));
            return out;
        }
    }

    /** Sends {@code n} events in event-time order (gaps of up to 300 ms, now and then a 45 s pause that ends sessions). */
    private static void sendEvents(KafkaProducer<String, Long> producer, Random rnd, Expected e, int n) {
        for (int i = 0; i < n; i++) {
            e.time += rnd.nextInt(100) == 0 ? 45_000L : rnd.nextInt(300);
            String user = "u" + rnd.nextInt(USERS);
            long amount = 1 + rnd.nextInt(10);
            producer.send(new ProducerRecord<>(WindowedTestApp.EVENTS, null, e.time, user, amount));
            e.add(user, amount, e.time);
            e.sent++;
        }
        producer.flush();
    }

    private static KafkaClusterTestKit cluster(Path dir) throws Exception {
        KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                        .setCombined(true)
                        .setNumBrokerNodes(1)
                        .setNumControllerNodes(1)
                        .setBaseDirectory(dir.resolve("kafka"))
                        .build())
                .setConfigProp("group.initial.rebalance.delay.ms", "0")
                .setConfigProp("offsets.topic.replication.factor", "1")
                .setConfigProp("offsets.topic.num.partitions", "1")
                .setConfigProp("transaction.state.log.replication.factor", "1")
                .setConfigProp("transaction.state.log.min.isr", "1")
                .setConfigProp("transaction.state.log.num.partitions", "1")
                .build();
        cluster.format();
        cluster.startup();
        cluster.waitForReadyBrokers();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(
                            new NewTopic(WindowedTestApp.EVENTS, 2, (short) 1),
                            new NewTopic(WindowedTestApp.PROFILES, 2, (short) 1)))
                    .all()
                    .get();
        }
        return cluster;
    }

    private static void sendProfiles(KafkaClusterTestKit cluster) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                producerProps(cluster),
                Serdes.String().serializer(),
                Serdes.String().serializer())) {
            for (int u = 0; u < USERS; u++) {
                producer.send(new ProducerRecord<>(WindowedTestApp.PROFILES, null, BASE - 1_000L, "u" + u, "p0-u" + u));
                producer.send(
                        new ProducerRecord<>(WindowedTestApp.PROFILES, null, PROFILE_SWITCH, "u" + u, "p1-u" + u));
            }
            producer.flush();
        }
    }

    private static Properties producerProps(KafkaClusterTestKit cluster) {
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        pp.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return pp;
    }

    @Test
    @Timeout(240)
    void windowedSessionAndVersionedJoinResultsSurviveWipeAndRestore() throws Exception {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("EmbeddedClusterWindowedAppTest (wipe and restore) seed " + seed
                + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        try (KafkaClusterTestKit cluster = cluster(dir)) {
            sendProfiles(cluster);
            Expected expected = new Expected();
            Path stateDir = dir.resolve("state");
            Map<String, TreeMap<String, Long>> first;
            try (KafkaStreams streams =
                    start(cluster, stateDir, StreamsConfig.AT_LEAST_ONCE, new ConcurrentHashMap<>())) {
                describe = () -> describe(streams, expected);
                // The table first, then the events: every event finds its profile version (no race between the inputs).
                waitUntil(
                        () -> profilesLoaded(streams),
                        Duration.ofSeconds(120),
                        "the versioned table to hold every profile");
                try (KafkaProducer<String, Long> producer = new KafkaProducer<>(
                        producerProps(cluster),
                        Serdes.String().serializer(),
                        Serdes.Long().serializer())) {
                    sendEvents(producer, rnd, expected, 2000);
                }
                waitUntil(
                        () -> answersMatch(streams, expected),
                        Duration.ofSeconds(120),
                        "the first run to process every event");
                first = answers(streams);
                assertVersionedAnswers(streams);
                assertNoRocksDbStoreDirectories(
                        stateDir,
                        WindowedTestApp.PROFILE_STORE,
                        WindowedTestApp.JOIN_COUNTS,
                        WindowedTestApp.TUMBLING,
                        WindowedTestApp.HOPPING,
                        WindowedTestApp.SESSIONS);
                streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                        .withTimeout(Duration.ofSeconds(30)));
            }
            deleteRecursively(stateDir);
            Map<String, AtomicLong> restored = new ConcurrentHashMap<>();
            try (KafkaStreams streams = start(cluster, stateDir, StreamsConfig.AT_LEAST_ONCE, restored)) {
                describe = () -> describe(streams, expected);
                waitUntil(
                        () -> streams.state() == KafkaStreams.State.RUNNING && answersMatch(streams, expected),
                        Duration.ofSeconds(120),
                        "the second run to restore every store");
                assertThat(answers(streams))
                        .as("identical answers after wipe and restore")
                        .isEqualTo(first);
                assertVersionedAnswers(streams);
                assertNoRocksDbStoreDirectories(
                        stateDir,
                        WindowedTestApp.PROFILE_STORE,
                        WindowedTestApp.JOIN_COUNTS,
                        WindowedTestApp.TUMBLING,
                        WindowedTestApp.HOPPING,
                        WindowedTestApp.SESSIONS);
                System.out.println("records restored after the wipe, by store: " + restored);
                assertThat(restored.get(WindowedTestApp.PROFILE_STORE))
                        .as("the versioned table restored from its changelog")
                        .isNotNull();
                assertThat(restored.get(WindowedTestApp.PROFILE_STORE).get()).isEqualTo(2L * USERS);
                assertThat(restored.get(WindowedTestApp.JOIN_COUNTS).get()).isPositive();
                streams.close(Duration.ofSeconds(30));
            }
        }
    }

    @Test
    @Timeout(240)
    void exactlyOnceRunKilledMidStreamEndsWithExactCounts() throws Exception {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("EmbeddedClusterWindowedAppTest (EOS kill -9) seed " + seed + " (replay with -Dbloomkv.seed="
                + seed + ")");
        Random rnd = new Random(seed);
        try (KafkaClusterTestKit cluster = cluster(dir)) {
            sendProfiles(cluster);
            Expected expected = new Expected();
            Path stateDir = dir.resolve("state");
            try (KafkaProducer<String, Long> producer = new KafkaProducer<>(
                    producerProps(cluster),
                    Serdes.String().serializer(),
                    Serdes.Long().serializer())) {
                Process child = startChild(cluster, stateDir);
                describe = () -> "committed " + committedEvents(cluster) + ", child alive " + child.isAlive()
                        + ", child log: " + tail(stateDir.getParent().resolve("child.log")) + "\nchild threads: "
                        + threadDump(child);
                try {
                    waitUntil(
                            () -> committed(cluster, WindowedTestApp.PROFILES) >= 2L * USERS,
                            Duration.ofSeconds(150),
                            "the child to load the versioned table");
                    sendEvents(producer, rnd, expected, 1000);
                    waitUntil(
                            () -> committedEvents(cluster) >= 300,
                            Duration.ofSeconds(120),
                            "the child to commit some of its work");
                    sendEvents(producer, rnd, expected, 1000);
                    // kill -9 while the second half is being processed.
                    child.destroyForcibly().waitFor();
                } finally {
                    child.destroyForcibly();
                }
                long committed = committedEvents(cluster);
                System.out.println("child killed with " + committed + " of " + expected.sent + " events committed");
                assertThat(committed).as("killed mid-stream").isLessThan(expected.sent);
                try (Stream<Path> tasks = Files.list(stateDir.resolve(WindowedTestApp.APP))) {
                    assertThat(tasks.count())
                            .as("the child left its task directories")
                            .isPositive();
                }
                sendEvents(producer, rnd, expected, 500);
            }
            Map<String, AtomicLong> restored = new ConcurrentHashMap<>();
            try (KafkaStreams streams = start(cluster, stateDir, StreamsConfig.EXACTLY_ONCE_V2, restored)) {
                describe = () -> describe(streams, expected);
                waitUntil(
                        () -> streams.state() == KafkaStreams.State.RUNNING && answersMatch(streams, expected),
                        Duration.ofSeconds(150),
                        "the restarted run to reach the exact counts");
                assertVersionedAnswers(streams);
                assertNoRocksDbStoreDirectories(
                        stateDir,
                        WindowedTestApp.PROFILE_STORE,
                        WindowedTestApp.JOIN_COUNTS,
                        WindowedTestApp.TUMBLING,
                        WindowedTestApp.HOPPING,
                        WindowedTestApp.SESSIONS);
                System.out.println("records restored after kill -9 under exactly_once_v2, by store: " + restored);
                assertThat(restored.get(WindowedTestApp.PROFILE_STORE))
                        .as("the versioned table was wiped and restored")
                        .isNotNull();
                // The window and session stores manage their offsets too: each was found not closed cleanly
                // (<name>.open), so its task was wiped and it restored its changelog from the start.
                for (String store :
                        List.of(WindowedTestApp.TUMBLING, WindowedTestApp.HOPPING, WindowedTestApp.SESSIONS)) {
                    assertThat(restoreStarts.get(store))
                            .as(store + " restored from the start of its changelog")
                            .isEqualTo(0L);
                    assertThat(restored.get(store))
                            .as(store + " restored records")
                            .isNotNull();
                    assertThat(restored.get(store).get())
                            .as(store + " restored records")
                            .isPositive();
                }
                streams.close(Duration.ofSeconds(30));
            }
        }
    }

    /** Launches {@link WindowedTestApp#main} in a child JVM with this JVM's class path and flags. */
    private static Process startChild(KafkaClusterTestKit cluster, Path stateDir) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-agentlib") && !arg.startsWith("-javaagent") && !arg.startsWith("-Xmx")) {
                cmd.add(arg);
            }
        }
        cmd.add("-Xmx512m");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(WindowedTestApp.class.getName());
        cmd.add(cluster.bootstrapServers());
        cmd.add(stateDir.toString());
        cmd.add(StreamsConfig.EXACTLY_ONCE_V2);
        File log = stateDir.getParent().resolve("child.log").toFile();
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log)
                .start();
    }

    private static long committedEvents(KafkaClusterTestKit cluster) {
        return committed(cluster, WindowedTestApp.EVENTS);
    }

    /** Input records of {@code topic} committed by the application's consumer group. */
    private static long committed(KafkaClusterTestKit cluster, String topic) {
        try (Admin admin = cluster.admin()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(WindowedTestApp.APP)
                    .partitionsToOffsetAndMetadata()
                    .get();
            return offsets.entrySet().stream()
                    .filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
                    .mapToLong(e -> e.getValue().offset())
                    .sum();
        } catch (Exception e) {
            return 0;
        }
    }

    private KafkaStreams start(
            KafkaClusterTestKit cluster, Path stateDir, String guarantee, Map<String, AtomicLong> restored) {
        KafkaStreams streams = new KafkaStreams(
                WindowedTestApp.topology(),
                WindowedTestApp.props(cluster.bootstrapServers(), stateDir.toString(), guarantee));
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(TopicPartition tp, String store, long start, long end) {
                restoreStarts.merge(store, start, Math::min);
            }

            @Override
            public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long n) {
                restored.computeIfAbsent(store, s -> new AtomicLong()).addAndGet(n);
            }

            @Override
            public void onRestoreEnd(TopicPartition tp, String store, long total) {}
        });
        streams.setStateListener((now, before) -> System.out.println("streams " + before + " -> " + now));
        streams.setUncaughtExceptionHandler(e -> {
            streamsError.compareAndSet(null, e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        return streams;
    }

    /** What differs between the answers and the expectation (for a timeout's message). */
    private static String describe(KafkaStreams streams, Expected e) {
        Map<String, TreeMap<String, Long>> a = answers(streams);
        Map<String, TreeMap<String, Long>> want = Map.of(
                WindowedTestApp.TUMBLING,
                e.tumbling,
                WindowedTestApp.HOPPING,
                e.hopping,
                WindowedTestApp.SESSIONS,
                e.sessions(),
                WindowedTestApp.JOIN_COUNTS,
                e.joins);
        StringBuilder out = new StringBuilder("state " + streams.state());
        want.forEach((store, w) -> {
            TreeMap<String, Long> got = a.get(store);
            out.append("; ")
                    .append(store)
                    .append(": ")
                    .append(got.size())
                    .append(" of ")
                    .append(w.size())
                    .append(" entries");
            w.entrySet().stream()
                    .filter(x -> !x.getValue().equals(got.get(x.getKey())))
                    .findFirst()
                    .ifPresent(x -> out.append(", first differing ")
                            .append(x.getKey())
                            .append(" want ")
                            .append(x.getValue())
                            .append(" got ")
                            .append(got.get(x.getKey())));
        });
        return out.toString();
    }

    private static boolean answersMatch(KafkaStreams streams, Expected e) {
        Map<String, TreeMap<String, Long>> a = answers(streams);
        return a.get(WindowedTestApp.TUMBLING).equals(e.tumbling)
                && a.get(WindowedTestApp.HOPPING).equals(e.hopping)
                && a.get(WindowedTestApp.SESSIONS).equals(e.sessions())
                && a.get(WindowedTestApp.JOIN_COUNTS).equals(e.joins);
    }

    /** Every store's content through interactive queries (empty maps while not queryable). */
    private static Map<String, TreeMap<String, Long>> answers(KafkaStreams streams) {
        Map<String, TreeMap<String, Long>> out = new TreeMap<>();
        for (String s : List.of(
                WindowedTestApp.TUMBLING,
                WindowedTestApp.HOPPING,
                WindowedTestApp.SESSIONS,
                WindowedTestApp.JOIN_COUNTS)) {
            out.put(s, new TreeMap<>());
        }
        try {
            for (String s : List.of(WindowedTestApp.TUMBLING, WindowedTestApp.HOPPING)) {
                try (KeyValueIterator<Windowed<String>, Long> it = streams.store(StoreQueryParameters.fromNameAndType(
                                s, QueryableStoreTypes.<String, Long>windowStore()))
                        .all()) {
                    it.forEachRemaining(kv ->
                            out.get(s).put(kv.key.key() + "@" + kv.key.window().start(), kv.value));
                }
            }
            var sessions = streams.store(StoreQueryParameters.fromNameAndType(
                    WindowedTestApp.SESSIONS, QueryableStoreTypes.<String, Long>sessionStore()));
            for (int u = 0; u < USERS; u++) {
                try (KeyValueIterator<Windowed<String>, Long> it = sessions.fetch("u" + u)) {
                    it.forEachRemaining(kv -> out.get(WindowedTestApp.SESSIONS)
                            .put(
                                    kv.key.key() + "@" + kv.key.window().start() + "-"
                                            + kv.key.window().end(),
                                    kv.value));
                }
            }
            try (KeyValueIterator<String, Long> it = streams.store(StoreQueryParameters.fromNameAndType(
                            WindowedTestApp.JOIN_COUNTS, QueryableStoreTypes.<String, Long>keyValueStore()))
                    .all()) {
                it.forEachRemaining((KeyValue<String, Long> kv) ->
                        out.get(WindowedTestApp.JOIN_COUNTS).put(kv.key, kv.value));
            }
        } catch (InvalidStateStoreException notYet) {
            out.values().forEach(Map::clear);
        }
        return out;
    }

    /** The versioned table answers IQv2 version queries: the profile as of before and after its switch. */
    private static void assertVersionedAnswers(KafkaStreams streams) {
        for (int u = 0; u < USERS; u += 7) {
            String user = "u" + u;
            assertThat(versionOf(streams, VersionedKeyQuery.<String, String>withKey(user)))
                    .isEqualTo("p1-" + user + "@" + PROFILE_SWITCH);
            assertThat(versionOf(
                            streams,
                            VersionedKeyQuery.<String, String>withKey(user)
                                    .asOf(Instant.ofEpochMilli(PROFILE_SWITCH - 1))))
                    .isEqualTo("p0-" + user + "@" + (BASE - 1_000L));
        }
    }

    private static boolean profilesLoaded(KafkaStreams streams) {
        if (streams.state() != KafkaStreams.State.RUNNING) {
            return false;
        }
        for (int u = 0; u < USERS; u++) {
            if (!("p1-u" + u + "@" + PROFILE_SWITCH)
                    .equals(versionOf(streams, VersionedKeyQuery.<String, String>withKey("u" + u)))) {
                return false;
            }
        }
        return true;
    }

    private static String versionOf(KafkaStreams streams, VersionedKeyQuery<String, String> q) {
        StateQueryResult<VersionedRecord<String>> r = streams.query(
                StateQueryRequest.inStore(WindowedTestApp.PROFILE_STORE).withQuery(q));
        VersionedRecord<String> found = null;
        for (var partitionResult : r.getPartitionResults().values()) {
            if (partitionResult.isSuccess() && partitionResult.getResult() != null) {
                found = partitionResult.getResult();
            }
        }
        return found == null ? null : found.value() + "@" + found.timestamp();
    }

    /**
     * No store named in {@code storeNames} lives in a RocksDB directory: Kafka's RocksDB key-value and versioned stores
     * sit in {@code <task>/rocksdb/<store>}; the bloomkv ones in {@code <task>/<store>}, which must exist.
     */
    static void assertNoRocksDbStoreDirectories(Path stateDir, String... storeNames) throws Exception {
        List<Path> taskDirs;
        try (Stream<Path> apps = Files.list(stateDir)) {
            taskDirs = apps.filter(Files::isDirectory)
                    .flatMap(app -> {
                        try (Stream<Path> tasks = Files.list(app)) {
                            return tasks.filter(Files::isDirectory).toList().stream();
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    })
                    .toList();
        }
        boolean found = false;
        for (Path task : taskDirs) {
            for (String store : storeNames) {
                assertThat(task.resolve("rocksdb").resolve(store))
                        .as("a RocksDB directory for " + store)
                        .doesNotExist();
                found |= Files.isDirectory(task.resolve(store));
            }
        }
        assertThat(found)
                .as("bloomkv directories of " + List.of(storeNames) + " under " + stateDir)
                .isTrue();
        // Window and session stores: Kafka's segmented RocksDB stores keep their segments in <task>/<store>/, each a
        // RocksDB directory with OPTIONS-n files, which bloomkv never writes: none may exist anywhere.
        try (Stream<Path> all = Files.walk(stateDir)) {
            assertThat(all.filter(f -> f.getFileName().toString().startsWith("OPTIONS-"))
                            .toList())
                    .as("RocksDB OPTIONS files under " + stateDir)
                    .isEmpty();
        }
    }

    private java.util.function.Supplier<String> describe;

    private void waitUntil(BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (streamsError.get() != null) {
                throw new AssertionError("the application failed while waiting for " + what, streamsError.get());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "timed out waiting for " + what + (describe == null ? "" : ": " + describe.get()));
            }
            Thread.sleep(250);
        }
    }

    private static String threadDump(Process child) {
        try {
            Process jcmd = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "jcmd")
                                    .toString(),
                            Long.toString(child.pid()),
                            "Thread.print")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(jcmd.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            jcmd.waitFor();
            return out.length() > 6000 ? out.substring(0, 6000) : out;
        } catch (Exception e) {
            return e.toString();
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    private static void deleteRecursively(Path p) throws Exception {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> all = Files.walk(p)) {
            all.sorted(java.util.Comparator.reverseOrder())
                    .forEach(f -> f.toFile().delete());
        }
    }
}
