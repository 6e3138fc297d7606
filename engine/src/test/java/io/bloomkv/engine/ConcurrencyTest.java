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
import org.junit.jupiter.api.io.TempDir;

/**
 * Readers and a writer at once, with tiny tables so flushes and compactions run all the time. The
 * writer sets key k to "round r" in rounds; {@code acked[k]} is the last round whose put returned,
 * {@code started[k]} the last round begun. A get must return a round in [acked before, started
 * after]; an iterator must show, for every key, a round in [acked before creation, started after
 * the scan], in key order. Seeded; bounded in time.
 */
class ConcurrencyTest {
    static final int KEYS = 400;

    @TempDir
    Path dir;

    private static int roundOf(byte[] v) {
        String s = TestKeys.str(v);
        return Integer.parseInt(s.substring(0, s.indexOf('/')));
    }

    @Test
    void readersSeeWhatMustBeVisibleWhileWriterAndCompactionsRun() throws Exception {
        long seed = TestKeys.seed("ConcurrencyTest");
        Options o = Options.defaults().writeBufferSize(16 << 10).blockSize(512).targetFileSize(16 << 10)
                .maxBytesForLevelBase(64 << 10).levelSizeMultiplier(4).l0CompactionTrigger(2);
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
            Thread writer = new Thread(() -> {
                Random rnd = new Random(seed);
                try {
                    for (int round = 0; !stop.get(); round++) {
                        for (int k = 0; k < KEYS && !stop.get(); k++) {
                            started.set(k, round);
                            db.put(TestKeys.key(k), TestKeys.bytes(round + "/" + "x".repeat(rnd.nextInt(60))));
                            acked.set(k, round);
                        }
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }, "writer");
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                long readerSeed = seed + 1 + r;
                readers.add(new Thread(() -> {
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
                                    int k = Integer.parseInt(TestKeys.str(keys.get(i)).substring(3));
                                    int got = rounds.get(i);
                                    assertThat(got).as("seed " + seed + " scan key " + k).isBetween(before[k], started.get(k));
                                    if (i > 0) {
                                        assertThat(java.util.Arrays.compareUnsigned(keys.get(i - 1), keys.get(i))).isNegative();
                                    }
                                }
                                for (int k = 0; k < KEYS; k++) {
                                    if (before[k] >= 0) {
                                        assertThat(keys.size()).as("seed " + seed + ": acknowledged keys all in the scan").isGreaterThan(k);
                                    }
                                }
                                scans.incrementAndGet();
                            } else {
                                int k = rnd.nextInt(KEYS);
                                int low = acked.get(k);
                                byte[] v = db.get(TestKeys.key(k));
                                int high = started.get(k);
                                if (v == null) {
                                    assertThat(low).as("seed " + seed + " key " + k + " absent though acknowledged").isEqualTo(-1);
                                } else {
                                    assertThat(roundOf(v)).as("seed " + seed + " key " + k).isBetween(low, high);
                                }
                                reads.incrementAndGet();
                            }
                        }
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                }, "reader-" + r));
            }
            writer.start();
            readers.forEach(Thread::start);
            Thread.sleep(TimeUnit.SECONDS.toMillis(Long.getLong("bloomkv.concurrencySeconds", 4)));
            stop.set(true);
            writer.join();
            for (Thread t : readers) {
                t.join();
            }
            Stats s = db.stats();
            System.out.println("ConcurrencyTest: " + reads + " gets, " + scans + " scans; " + s);
            if (!failures.isEmpty()) {
                AssertionError e = new AssertionError("seed " + seed + ": " + failures.size() + " failures", failures.peek());
                throw e;
            }
            assertThat(reads.get()).isPositive();
            assertThat(scans.get()).isPositive();
            assertThat(s.flushes()).isPositive();
        }
    }
}
