package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child JVM writes with EVERY_WRITE (even rounds) or NONE (odd rounds: a process crash must lose nothing acknowledged
 * either, the write-ahead log being in the OS page cache when a write returns, through its memory mapping by default,
 * {@code Options.useMmapWal}) and prints each acknowledged key; it is killed with kill -9
 * (destroyForcibly) at a random moment, several rounds on the same directory. After each kill the
 * database must open, hold every acknowledged key with its value, and hold nothing else but keys
 * the child wrote (an unacknowledged last write may or may not be there). The moment of the kill is
 * chosen by count, then time: once the child has acknowledged a random number of writes (1 to 400)
 * in this round, plus a random 0-300 ms, so every round kills a child that is writing however slow
 * the machine is. A second test kills a child whose background work is paused, once its writes stalled. Replay:
 * -Dbloomkv.seed=N.
 */
class CrashKillTest {
    @TempDir
    Path tmp;

    static final int ROUNDS = 4;

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void killedWriterLosesNothingAcknowledged() throws Exception {
        long seed = TestKeys.seed("CrashKillTest");
        Path dir = tmp.resolve("db");
        Random rnd = new Random(seed);
        long next = 0;
        long totalAcked = 0;
        for (int round = 0; round < ROUNDS; round++) {
            SyncMode sync = round % 2 == 0 ? SyncMode.EVERY_WRITE : SyncMode.NONE;
            long last = round(dir, rnd, "seed " + seed + " round " + round, round, next, sync, false);
            totalAcked = last;
            next = Math.max(next, last + 1);
        }
        assertThat(totalAcked).isPositive();
    }

    /**
     * The child pauses the background work as it opens ({@link Db#pauseBackgroundWork}) and writes until its writes
     * stall behind the paused flushes; it is killed while stalled (once it printed "stalled"), under both sync modes.
     * Every acknowledged write must be there after the kill: a pause holds flushes, never the WAL.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void killedWhilePausedAndStalledLosesNothingAcknowledged() throws Exception {
        long seed = TestKeys.seed("CrashKillTest.paused");
        Path dir = tmp.resolve("paused");
        Random rnd = new Random(seed);
        long next = 0;
        for (int round = 0; round < 2; round++) {
            SyncMode sync = round % 2 == 0 ? SyncMode.EVERY_WRITE : SyncMode.NONE;
            long last = round(dir, rnd, "seed " + seed + " paused round " + round, round, next, sync, true);
            next = Math.max(next, last + 1);
        }
    }

    /**
     * Runs a child writing from key {@code next} on, kills it (after a random number of acknowledgements; when
     * {@code paused}, once its writes stalled), reopens and checks it; returns the last key present (acknowledged, or
     * written and found).
     */
    private long round(Path dir, Random rnd, String name, int round, long next, SyncMode sync, boolean paused)
            throws Exception {
        String ctx = name + " (" + sync + (paused ? ", paused" : "") + ")";
        List<String> cmd = ChildJvm.command(
                "256m",
                CrashWriter.class,
                dir.toString(),
                Long.toString(next),
                Long.toString(rnd.nextLong()),
                sync.name());
        if (paused) {
            cmd.add("paused");
        }
        Path err = tmp.resolve("crash-child-" + dir.getFileName() + "-" + round + ".err");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        AtomicLong acked = new AtomicLong(-1);
        AtomicLong opened = new AtomicLong();
        AtomicLong stalled = new AtomicLong();
        Thread reader = new Thread(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.startsWith("ack ")) {
                        acked.set(Long.parseLong(line.substring(4)));
                    } else if (line.equals("open")) {
                        opened.set(System.nanoTime());
                    } else if (line.equals("stalled")) {
                        stalled.set(System.nanoTime());
                    }
                }
            } catch (IOException e) {
                // the child died
            }
        });
        reader.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (opened.get() == 0 && p.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(opened.get())
                .as(ctx + ": child opened the database; its stderr: " + readQuietly(err))
                .isNotZero();
        if (round == 0 && !paused) {
            // The LOCK file keeps a second process out while the child has the database open.
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> Db.open(dir, CrashWriter.options()))
                    .as(ctx + ": open while the child holds the lock")
                    .isInstanceOf(DbLockedException.class);
        }
        if (paused) {
            while (stalled.get() == 0 && p.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(stalled.get())
                    .as(ctx + ": child's writes stalled; its stderr: " + readQuietly(err))
                    .isNotZero();
        } else {
            long killAfter = next + rnd.nextInt(400);
            while (acked.get() < killAfter && p.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(acked.get())
                    .as(ctx + ": child acknowledged up to key " + killAfter + "; its stderr: " + readQuietly(err))
                    .isGreaterThanOrEqualTo(killAfter);
        }
        Thread.sleep(rnd.nextInt(300));
        assertThat(p.isAlive())
                .as(ctx + ": child still writing when killed; its stderr: " + readQuietly(err))
                .isTrue();
        p.destroyForcibly();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        reader.join();
        long lastAcked = acked.get();
        assertThat(lastAcked).as(ctx + ": child acknowledged writes").isGreaterThanOrEqualTo(next);

        try (Db db = Db.open(dir, CrashWriter.options())) {
            for (long id = 0; id <= lastAcked; id++) {
                assertThat(db.get(TestKeys.key(id)))
                        .as(ctx + ": acknowledged key " + id)
                        .isEqualTo(CrashWriter.valueOf(id));
            }
            long extra = 0;
            long lastPresent = lastAcked;
            try (DbIterator it = db.iterator()) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    long id = Long.parseLong(TestKeys.str(it.key()).substring(3));
                    assertThat(it.value()).as(ctx + ": value of key " + id).isEqualTo(CrashWriter.valueOf(id));
                    if (id > lastAcked) {
                        extra++;
                        lastPresent = Math.max(lastPresent, id);
                    }
                }
            }
            // Keys past the last acknowledgement the parent read may be present: the child's "ack" lines can
            // lag in the pipe on a loaded machine, and the last write may be durable but not yet acknowledged.
            // What a crash may never do is lose a write in the middle: the extra keys must be exactly the run
            // lastAcked+1 .. lastAcked+extra, with no gap.
            assertThat(lastPresent - lastAcked)
                    .as(ctx + ": unacknowledged keys present form a run with no gap")
                    .isEqualTo(extra);
            System.out.println(ctx + ": acknowledged up to " + lastAcked + ", " + extra + " unacknowledged present; "
                    + db.stats().tableCount() + " tables");
            return lastPresent;
        }
    }

    private static String readQuietly(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
