package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#close()} racing with many threads that iterate, get, take snapshots and write: every
 * call either completes normally or throws {@link DbClosedException} (never a
 * NullPointerException or another exception, never a crash from released off-heap memory), and
 * after close no table reader or filter byte stays alive.
 */
class CloseRaceTest {
    @TempDir
    Path dir;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void closeRacingReadersIteratorsAndWritersOnlyThrowsDbClosed() throws Exception {
        long seed = TestSeeds.seed("CloseRaceTest");
        Random rnd = new Random(seed);
        long liveBefore = TableReader.liveTables();
        long filterBefore = TableReader.liveFilterBytes();
        Options o = Options.defaults().writeBufferSize(16 << 10).blockSize(512);
        int rounds = 25;
        int threads = 6;
        AtomicLong completedOps = new AtomicLong();
        AtomicLong closedSeen = new AtomicLong();
        for (int round = 0; round < rounds; round++) {
            Path d = Files.createDirectories(dir.resolve("r" + round));
            Db db = Db.open(d, o);
            for (int i = 0; i < 3000; i++) {
                db.put(TestKeys.key(rnd.nextInt(5000)), TestKeys.value(rnd, 40));
            }
            db.flush();
            for (int i = 0; i < 500; i++) {
                db.put(TestKeys.key(rnd.nextInt(5000)), TestKeys.value(rnd, 40));
            }
            ConcurrentLinkedQueue<Throwable> wrong = new ConcurrentLinkedQueue<>();
            CountDownLatch started = new CountDownLatch(threads);
            List<Thread> workers = new ArrayList<>();
            // Iterators shared with the closing thread are opened before close and moved by their owner.
            for (int t = 0; t < threads; t++) {
                long threadSeed = rnd.nextLong();
                int kind = t % 3;
                Thread th = new Thread(
                        () -> {
                            Random r = new Random(threadSeed);
                            started.countDown();
                            try {
                                DbIterator it = db.iterator();
                                it.seekToFirst();
                                while (true) {
                                    switch (kind) {
                                        case 0 -> {
                                            if (!it.valid()) {
                                                it.seek(TestKeys.key(r.nextInt(5000)));
                                            } else {
                                                it.key();
                                                it.value();
                                                it.next();
                                            }
                                        }
                                        case 1 -> {
                                            db.get(TestKeys.key(r.nextInt(5000)));
                                            if (r.nextInt(50) == 0) {
                                                try (DbIterator own = db.iterator()) {
                                                    own.seek(TestKeys.key(r.nextInt(5000)));
                                                    for (int n = 0; n < 20 && own.valid(); n++) {
                                                        own.next();
                                                    }
                                                }
                                            }
                                        }
                                        default -> {
                                            try (Snapshot s = db.getSnapshot()) {
                                                db.get(
                                                        TestKeys.key(r.nextInt(5000)),
                                                        ReadOptions.defaults().snapshot(s));
                                            }
                                            db.put(TestKeys.key(r.nextInt(5000)), TestKeys.value(r, 40));
                                        }
                                    }
                                    completedOps.incrementAndGet();
                                }
                            } catch (DbClosedException expected) {
                                closedSeen.incrementAndGet();
                            } catch (Throwable e) {
                                wrong.add(e);
                            }
                        },
                        "close-race-" + t);
                workers.add(th);
                th.start();
            }
            started.await();
            Thread.sleep(rnd.nextInt(20));
            db.close();
            for (Thread th : workers) {
                th.join(TimeUnit.SECONDS.toMillis(60));
                assertThat(th.isAlive())
                        .as("seed " + seed + ": " + th.getName() + " still running after close")
                        .isFalse();
            }
            if (!wrong.isEmpty()) {
                AssertionError err = new AssertionError("seed " + seed + " round " + round
                        + ": a call racing close threw something other than DbClosedException");
                wrong.forEach(err::addSuppressed);
                throw err;
            }
            assertThat(TableReader.liveTables())
                    .as("seed " + seed + ": readers alive after close")
                    .isEqualTo(liveBefore);
            assertThat(TableReader.liveFilterBytes())
                    .as("seed " + seed + ": filter bytes after close")
                    .isEqualTo(filterBefore);
        }
        System.out.println("CloseRaceTest: " + completedOps.get() + " calls completed, " + closedSeen.get()
                + " threads stopped by DbClosedException over " + rounds + " rounds");
        assertThat(closedSeen.get())
                .as("every worker ends with DbClosedException")
                .isEqualTo((long) rounds * threads);
    }
}
