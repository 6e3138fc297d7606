package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gets take the SuperVersion from a per-thread cache ({@link ThreadLocalRefs}): while reader threads keep their cached
 * SuperVersions, flushes and compactions still retire old Versions, and the tables only those referenced are closed;
 * every get sees the latest write; nothing is left open after close.
 */
class ThreadLocalSuperVersionTest {
    @TempDir
    Path dir;

    private static byte[] value(long key, int round) {
        return ("v" + round + "-" + key).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void readersCachingSuperVersionsDoNotKeepObsoleteTablesOpen() throws Exception {
        long seed = TestSeeds.seed("ThreadLocalSuperVersionTest");
        Random rnd = new Random(seed);
        long liveBefore = TableReader.liveTables();
        int keys = 1500;
        Options o = Options.defaults().writeBufferSize(32 << 10).blockSize(512).compression(Compression.NONE);
        Db db = Db.open(dir, o);
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        List<Thread> readers = new ArrayList<>();
        // round[k]: the last round whose write of key k completed; a get that starts later sees it or a newer one.
        int[] round = new int[keys];
        java.util.concurrent.CountDownLatch idleRead = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch idleEnd = new java.util.concurrent.CountDownLatch(1);
        // A thread that reads once and then stays alive without reading: only the scrape at each install can take
        // the SuperVersion it cached (its own next get would find it stale, but it makes none).
        Thread idle = new Thread(() -> {
            db.get(TestKeys.key(0));
            idleRead.countDown();
            try {
                idleEnd.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            for (int k = 0; k < keys; k++) {
                db.put(TestKeys.key(k), value(k, 0));
            }
            idle.start();
            idleRead.await();
            for (int t = 0; t < 2; t++) {
                long threadSeed = rnd.nextLong();
                Thread th = new Thread(() -> {
                    Random r = new Random(threadSeed);
                    try {
                        while (!stop.get()) {
                            int k = r.nextInt(keys);
                            int atLeast;
                            synchronized (round) {
                                atLeast = round[k];
                            }
                            byte[] v = db.get(TestKeys.key(k));
                            String s = v == null ? null : new String(v, StandardCharsets.UTF_8);
                            if (s == null
                                    || !s.endsWith("-" + k)
                                    || Integer.parseInt(s.substring(1, s.indexOf('-'))) < atLeast) {
                                failures.add(
                                        new AssertionError("key " + k + ": got " + s + ", wrote round " + atLeast));
                            }
                            reads.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                readers.add(th);
                th.start();
            }
            for (int r = 1; r <= 8; r++) {
                for (int i = 0; i < keys / 2; i++) {
                    int k = rnd.nextInt(keys);
                    db.put(TestKeys.key(k), value(k, r));
                    synchronized (round) {
                        round[k] = r;
                    }
                }
                db.flush();
                if (r % 4 == 0) {
                    db.compactRange(null, null);
                }
            }
            db.waitForBackgroundWork();
            // Readers are still running and caching; the scrapes at each install let every old Version go.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            Stats s = db.stats();
            while (System.nanoTime() < deadline
                    && (s.liveVersions() != 1 || TableReader.liveTables() - liveBefore != s.tableCount())) {
                Thread.sleep(10);
                s = db.stats();
            }
            assertThat(s.liveVersions()).as("live versions, seed %d", seed).isEqualTo(1);
            assertThat(TableReader.liveTables() - liveBefore)
                    .as("open tables, seed %d", seed)
                    .isEqualTo(s.tableCount());
            assertThat(s.tablesClosed()).as("tables closed, seed %d", seed).isPositive();
        } finally {
            idleEnd.countDown();
            idle.join();
            stop.set(true);
            for (Thread th : readers) {
                th.join();
            }
            db.close();
        }
        for (Throwable f : failures) {
            throw new AssertionError("seed " + seed + ": " + f, f);
        }
        assertThat(reads.get()).isPositive();
        assertThat(TableReader.liveTables())
                .as("tables open after close, seed %d", seed)
                .isEqualTo(liveBefore);
    }
}
