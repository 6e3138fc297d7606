package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.fs.NoFsyncFileSystem;
import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The order of {@link EventListener} events around failures: a write stall ends (stalled=false) when the stall ends,
 * whatever ends it (a background error, a resume's flushes, close), once per stall.
 */
class EventOrderTest {
    @TempDir
    Path dir;

    private final FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());

    @AfterEach
    void nothingLeaks() {
        assertThat(TableReader.liveTables()).as("tables left open").isZero();
    }

    /** Records events as lines. */
    static final class Recorder implements EventListener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final AtomicReference<Db> db = new AtomicReference<>();

        @Override
        public void onFlushBegin(FlushInfo info) {
            events.add("flush-begin");
        }

        @Override
        public void onCompactionBegin(CompactionInfo info) {
            events.add("compaction-begin");
        }

        @Override
        public void onWriteStallChanged(WriteStallInfo info) {
            events.add(info.stalled() ? "stall-on" : "stall-off");
        }

        @Override
        public boolean onBackgroundError(BackgroundErrorInfo info) {
            events.add("error " + info.operation());
            return false;
        }

        long count(String event) {
            return events.stream().filter(event::equals).count();
        }

        /** Waits (up to half a minute) until {@code event} has been delivered {@code times} times. */
        void await(String event, long times) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (count(event) < times && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(count(event)).as(event + " in " + events).isGreaterThanOrEqualTo(times);
        }

        /** The stall events alternate, on first, and every stall that began has ended. */
        void assertStallsAlternateAndEnded() {
            List<String> stalls =
                    events.stream().filter(e -> e.startsWith("stall")).toList();
            for (int i = 0; i < stalls.size(); i++) {
                assertThat(stalls.get(i))
                        .as("stall event " + i + " of " + stalls)
                        .isEqualTo(i % 2 == 0 ? "stall-on" : "stall-off");
            }
            assertThat(stalls.size() % 2)
                    .as("every stall-on has its stall-off: " + stalls)
                    .isZero();
        }
    }

    private Options options(Recorder rec) {
        return Options.defaults()
                .fileSystem(fs)
                .writeBufferSize(8 << 10)
                .blockSize(512)
                .autoCompaction(false)
                .syncMode(SyncMode.NONE)
                .listeners(rec);
    }

    /** Puts until stopped or until a put fails (its error kept). */
    private static Thread writer(Db db, AtomicBoolean stop, AtomicReference<Throwable> failure) {
        Thread t = new Thread(
                () -> {
                    try {
                        for (int i = 0; !stop.get(); i++) {
                            db.put(TestKeys.key(i % 5000), TestKeys.key(i));
                        }
                    } catch (Throwable e) {
                        failure.set(e);
                    }
                },
                "stall-writer");
        t.start();
        return t;
    }

    private static void join(Thread t) throws InterruptedException {
        t.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(t.isAlive()).as(t.getName() + " still running").isFalse();
    }

    private static void closeAfterError(Db db) {
        try {
            db.close();
        } catch (BloomKvException closeAfterError) {
            // closing a database whose writes stopped may report the error again
        }
    }

    /**
     * A writer stalls behind a paused flush; the flush then fails: the stall ends with the error, not at some later
     * write. After a resume, a stall that ends when its flush makes room, and one that close ends.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aStallEndsWhenAnErrorAResumedFlushOrCloseEndsIt() throws Exception {
        Recorder rec = new Recorder();
        Db db = Db.open(dir, options(rec));
        AtomicBoolean stop = new AtomicBoolean();
        try {
            rec.db.set(db);
            db.pauseBackgroundWork();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread w = writer(db, stop, failure);
            rec.await("stall-on", 1);
            FaultInjectingFileSystem.Fault fault = fs.inject(FaultInjectingFileSystem.on(Op.CREATE, "*.sst"));
            db.continueBackgroundWork();
            join(w);
            assertThat(failure.get()).isInstanceOf(BloomKvIOException.class);
            rec.await("stall-off", 1); // no write after the failed one
            assertThat(rec.events).containsSubsequence("stall-on", "error flush", "stall-off");
            rec.assertStallsAlternateAndEnded();

            // The fault cleared, resume flushes: writes go on, a new stall ends when its flush makes room.
            fault.remove();
            db.resume();
            db.pauseBackgroundWork();
            failure.set(null);
            w = writer(db, stop, failure);
            rec.await("stall-on", 2);
            db.continueBackgroundWork();
            rec.await("stall-off", 2);
            stop.set(true);
            join(w);
            assertThat(failure.get()).isNull();
            rec.await("stall-off", rec.count("stall-on")); // the writer's last stall, if any, may still be queued
            rec.assertStallsAlternateAndEnded();

            // A stall that close ends (it lifts the pause, and the writer leaves with the database closed or done).
            stop.set(false);
            db.pauseBackgroundWork();
            long on = rec.count("stall-on"); // before the writer starts: its stall may be delivered at once
            w = writer(db, stop, failure);
            rec.await("stall-on", on + 1);
            db.close();
            join(w);
            assertThat(failure.get()).isInstanceOf(DbClosedException.class);
        } finally {
            stop.set(true);
            closeAfterError(db);
        }
        assertThat(rec.count("stall-off")).isEqualTo(rec.count("stall-on"));
        rec.assertStallsAlternateAndEnded();
    }
}
