package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A background thread putting {@code key(i) -> key(i)} for i = 0, 1, 2, ... until stopped, for the tests of a
 * point-in-time copy taken under a concurrent writer (checkpoint, backup). {@link #acked} counts the puts that
 * returned; whatever the thread dies of is kept and reported by {@link #stopAndCheck}, and {@link #awaitAcked} fails
 * at once when the writer is dead (so a writer that dies at its first put cannot pass as "empty copies").
 *
 * <p>{@link #pauseAtCopy} gives a file system that holds a copy after its point is fixed until the writer has
 * acknowledged more puts: every copy is then taken while writes are in flight, without guessing a sleep.
 */
final class SequentialWriter {
    /** Puts the writer must acknowledge while a copy is held ({@link #pauseAtCopy}). */
    static final int PUTS_DURING_COPY = 50;

    /** A guard against a hang only (a writer blocked by the copy): no test asserts how long anything takes. */
    private static final long LIVENESS_GUARD_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final AtomicLong acked = new AtomicLong();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile Thread thread;

    /** Starts the writer on {@code db} (once). */
    void start(Db db) {
        assertThat(thread).as("started once").isNull();
        Thread t = new Thread(
                () -> {
                    try {
                        for (long i = 0; !stop.get(); i++) {
                            db.put(TestKeys.key(i), TestKeys.key(i));
                            acked.set(i + 1);
                        }
                    } catch (Throwable e) {
                        failure.set(e);
                    }
                },
                "sequential-writer");
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    /** Puts acknowledged so far: keys {@code 0 .. acked()-1} are in the database (and perhaps the next one). */
    long acked() {
        return acked.get();
    }

    /** Waits until at least {@code n} puts are acknowledged; fails if the writer died or stopped first. */
    void awaitAcked(long n) {
        long deadline = System.nanoTime() + LIVENESS_GUARD_NANOS;
        while (acked.get() < n) {
            Throwable t = failure.get();
            if (t != null) {
                throw new AssertionError("the writer died after " + acked.get() + " puts", t);
            }
            assertThat(thread.isAlive())
                    .as("writer alive at %d of %d puts", acked.get(), n)
                    .isTrue();
            assertThat(System.nanoTime() - deadline)
                    .as("writer stuck at %d of %d puts (liveness guard)", acked.get(), n)
                    .isNegative();
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
        }
    }

    /** Stops the writer, waits for it, and fails if it died of anything. */
    void stopAndCheck() throws InterruptedException {
        stop.set(true);
        thread.join();
        Throwable t = failure.get();
        if (t != null) {
            throw new AssertionError("the writer died after " + acked.get() + " puts", t);
        }
    }

    /**
     * A file system over {@code fs} (open the database on it before {@link #start}) that, once armed by
     * {@link Pause#arm} in the thread about to take a copy of the database in {@code dbDir}, stops that thread at its
     * first link of a file of {@code dbDir} or listing of {@code dbDir} (the checkpoint's first steps after its point
     * is fixed and the WAL synced, before any table or WAL is copied) until this writer has acknowledged
     * {@link #PUTS_DURING_COPY} more puts. Those puts are after the copy's point: a copy holding one of them took
     * writes it must not.
     */
    Pause pauseAtCopy(FileSystem fs, Path dbDir) {
        return new Pause(fs, dbDir.toAbsolutePath().normalize());
    }

    final class Pause extends ForwardingFileSystem {
        private final Path dbDir;
        private volatile Thread armedBy;
        private volatile long ackedAtPause = -1;

        private Pause(FileSystem fs, Path dbDir) {
            super(fs);
            this.dbDir = dbDir;
        }

        /** The next copy taken by this thread pauses once. */
        void arm() {
            ackedAtPause = -1;
            armedBy = Thread.currentThread();
        }

        /**
         * Acknowledged puts when the last armed copy paused: every key at or above this plus one was written after
         * that copy's point. Fails if the copy never paused.
         */
        long ackedAtPause() {
            assertThat(ackedAtPause).as("the copy paused after its point").isNotNegative();
            return ackedAtPause;
        }

        private void maybePause(Path p) {
            if (armedBy == Thread.currentThread()
                    && p.toAbsolutePath().normalize().startsWith(dbDir)) {
                armedBy = null;
                long at = acked.get();
                ackedAtPause = at;
                awaitAcked(at + PUTS_DURING_COPY);
            }
        }

        @Override
        public void link(Path existing, Path link) throws IOException {
            maybePause(existing);
            super.link(existing, link);
        }

        @Override
        public List<Path> list(Path dir) throws IOException {
            if (dir.toAbsolutePath().normalize().equals(dbDir)) {
                maybePause(dir);
            }
            return super.list(dir);
        }
    }
}
