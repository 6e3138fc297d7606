package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readers and a writer at once, with tiny tables so flushes and compactions run all the time. The
 * writer sets key k to "round r" in rounds; {@code acked[k]} is the last round whose put returned,
 * {@code started[k]} the last round begun. A get must return a round in [acked before, started
 * after]; an iterator must show, for every key, a round in [acked before creation, started after
 * the scan], in key order. Seeded; bounded by operation counts, not by time: the writer does
 * {@code -Dbloomkv.concurrencyRounds} rounds (default 30) and waits before each round until the
 * readers have done {@link #READS_PER_ROUND} gets per round so far, so reads overlap writes however
 * the threads are scheduled.
 */
class ConcurrencyTest {
    static final int KEYS = 400;
    static final int READS_PER_ROUND = 150;

    @TempDir
    Path dir;

    private static int roundOf(byte[] v) {
        String s = TestKeys.str(v);
        return Integer.parseInt(s.substring(0, s.indexOf('/')));
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void readersSeeWhatMustBeVisibleWhileWriterAndCompactionsRun() throws Exception {
        long seed = TestKeys.seed("ConcurrencyTest");
        int writerRounds = Integer.getInteger("bloomkv.concurrencyRounds", 30);
        Options o = Options.defaults()
                .writeBufferSize(16 << 10)
                .blockSize(512)
                .targetFileSize(16 << 10)
                .maxBytesForLevelBase(64 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2);
        AtomicIntegerArray acked = new AtomicIntegerArray(KEYS);
        AtomicIntegerArray started = new AtomicIntegerArray(KEYS);
        for (int k = 0; k < KEYS; k++) {
            acked.set(k, -1);
            started.set(k, -1);
        }
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicLong reads = new AtomicLong();
        AtomicLong scans = new AtomicLong();
        try (Db db = Db.open(dir, o)) {
            Thread writer = new Thread(
                    () -> {
                        Random rnd = new Random(seed);
                        try {
                            for (int round = 0; round < writerRounds && failures.isEmpty(); round++) {
                                while (reads.get() < (long) round * READS_PER_ROUND && failures.isEmpty()) {
                                    Thread.sleep(1);
                                }
                                for (int k = 0; k < KEYS; k++) {
                                    started.set(k, round);
                                    db.put(TestKeys.key(k), TestKeys.bytes(round + "/" + "x".repeat(rnd.nextInt(60))));
                                    acked.set(k, round);
                                }
                            }
                        } catch (Throwable t) {
                            failures.add(t);
                        } finally {
                            stop.set(true);
                        }
                    },
                    "writer");
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                long readerSeed = seed + 1 + r;
                readers.add(new Thread(
                        () -> {
                            Random rnd = new Random(readerSeed);
                            try {
                                while (!stop.get()) {
                                    if (rnd.nextInt(50) == 0) {
                                        int[] before = new int[KEYS];
                                        for (int k = 0; k < KEYS; k++) {
                                            before[k] = acked.get(k);
                                        }
                                        List<byte[]> keys = new ArrayList<>();
                                        List<Integer> rounds = new ArrayList<>();
                                        try (DbIterator it = db.iterator()) {
                                            for (it.seekToFirst(); it.valid(); it.next()) {
                                                keys.add(it.key());
                                                rounds.add(roundOf(it.value()));
                                            }
                                        }
                                        for (int i = 0; i < keys.size(); i++) {
                                            int k = Integer.parseInt(
                                                    TestKeys.str(keys.get(i)).substring(3));
                                            int got = rounds.get(i);
                                            assertThat(got)
                                                    .as("seed " + seed + " scan key " + k)
                                                    .isBetween(before[k], started.get(k));
                                            if (i > 0) {
                                                assertThat(java.util.Arrays.compareUnsigned(
                                                                keys.get(i - 1), keys.get(i)))
                                                        .isNegative();
                                            }
                                        }
                                        for (int k = 0; k < KEYS; k++) {
                                            if (before[k] >= 0) {
                                                assertThat(keys.size())
                                                        .as("seed " + seed + ": acknowledged keys all in the scan")
                                                        .isGreaterThan(k);
                                            }
                                        }
                                        scans.incrementAndGet();
                                    } else {
                                        int k = rnd.nextInt(KEYS);
                                        int low = acked.get(k);
                                        byte[] v = db.get(TestKeys.key(k));
                                        int high = started.get(k);
                                        if (v == null) {
                                            assertThat(low)
                                                    .as("seed " + seed + " key " + k + " absent though acknowledged")
                                                    .isEqualTo(-1);
                                        } else {
                                            assertThat(roundOf(v))
                                                    .as("seed " + seed + " key " + k)
                                                    .isBetween(low, high);
                                        }
                                        reads.incrementAndGet();
                                    }
                                }
                            } catch (Throwable t) {
                                failures.add(t);
                            }
                        },
                        "reader-" + r));
            }
            writer.start();
            readers.forEach(Thread::start);
            writer.join();
            for (Thread t : readers) {
                t.join();
            }
            Stats s = db.stats();
            System.out.println("ConcurrencyTest: " + reads + " gets, " + scans + " scans; " + s);
            if (!failures.isEmpty()) {
                AssertionError e =
                        new AssertionError("seed " + seed + ": " + failures.size() + " failures", failures.peek());
                throw e;
            }
            assertThat(reads.get())
                    .as("seed " + seed)
                    .isGreaterThanOrEqualTo((long) (writerRounds - 1) * READS_PER_ROUND);
            assertThat(scans.get()).as("seed " + seed).isPositive();
            assertThat(s.lastSequence()).as("every put done").isEqualTo((long) writerRounds * KEYS);
            assertThat(s.flushes()).as("flushes ran under the readers").isGreaterThanOrEqualTo(5);
            assertThat(s.compactions()).as("compactions ran under the readers").isPositive();
            for (int k = 0; k < KEYS; k++) {
                assertThat(roundOf(db.get(TestKeys.key(k))))
                        .as("seed " + seed + " final value of key " + k)
                        .isEqualTo(writerRounds - 1);
            }
        }
    }
}
