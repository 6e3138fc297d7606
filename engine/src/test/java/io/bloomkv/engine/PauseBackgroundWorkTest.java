package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#pauseBackgroundWork()} and {@link Db#continueBackgroundWork()}, with RocksDB's semantics: a pause waits for
 * the running compaction (held here by a file system that blocks the compaction thread's first table), then nothing is
 * flushed or compacted while writes go on until they stall; continue releases them; pauses nest; a continue without
 * a pause is refused; close completes while paused and loses no acknowledged write; a seeded interleaving of pauses
 * and continues from two threads with writers, flushes and range compactions from three loses nothing. Each test
 * checks that no table reader outlives it.
 */
@ExtendWith(NoTableLeak.class)
class PauseBackgroundWorkTest {
    @TempDir
    Path dir;

    /** Tells the test when writes stall and resume, and keeps every stall event in order. */
    private static final class StallListener implements EventListener {
        final List<Boolean> events = new ArrayList<>();
        private CountDownLatch stalled = new CountDownLatch(1);

        @Override
        public synchronized void onWriteStallChanged(WriteStallInfo info) {
            events.add(info.stalled());
            if (info.stalled()) {
                stalled.countDown();
            }
        }

        /** Forgets the stalls so far: {@link #awaitStall} waits for the next one. */
        synchronized void arm() {
            stalled = new CountDownLatch(1);
        }

        /** Waits for a stall since the last {@link #arm} (true), or 60 seconds (false). */
        boolean awaitStall() throws InterruptedException {
            CountDownLatch l;
            synchronized (this) {
                l = stalled;
            }
            return l.await(60, TimeUnit.SECONDS);
        }

        /** The events alternate stalled / resumed, starting with a stall. */
        synchronized void assertAlternating() {
            for (int i = 0; i < events.size(); i++) {
                assertThat(events.get(i))
                        .as("stall event " + i + " of " + events)
                        .isEqualTo(i % 2 == 0);
            }
        }

        synchronized List<Boolean> copy() {
            return List.copyOf(events);
        }
    }

    private static byte[] value(int i) {
        byte[] v = new byte[100];
        Arrays.fill(v, (byte) i);
        v[0] = (byte) (i >>> 8);
        return v;
    }

    /** Waits until {@code t} waits for something (or ended): it has reached the wait the test expects, or passed it. */
    private static void awaitParked(Thread t) throws InterruptedException {
        while (t.isAlive()
                && t.getState() != Thread.State.WAITING
                && t.getState() != Thread.State.TIMED_WAITING
                && t.getState() != Thread.State.BLOCKED) {
            Thread.sleep(1);
        }
    }

    private static Thread start(String name, Runnable r, AtomicReference<Throwable> failure) {
        Thread t = new Thread(
                () -> {
                    try {
                        r.run();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                },
                name);
        t.start();
        return t;
    }

    /**
     * A file system that blocks the compaction thread when it creates its first output table, until released: a
     * compaction held in the middle (flushes are not held).
     */
    private static final class HeldCompaction {
        final FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        HeldCompaction() {
            fs.inject((op, p) -> {
                if (op == Op.CREATE
                        && p.getFileName().toString().endsWith(".sst")
                        && Thread.currentThread().getName().startsWith("bloomkv-compact-")
                        && release.getCount() > 0) {
                    held.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return false;
            });
        }
    }

    /** Two flushed level-0 tables over the same keys: their compaction merges them (it writes a table). */
    private static void twoOverlappingLevel0Tables(Db db) {
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 20; i++) {
                db.put(TestKeys.key(i), value(round * 100 + i));
            }
            db.flush();
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void pauseWaitsForTheRunningCompactionToFinish() throws Exception {
        HeldCompaction hold = new HeldCompaction();
        Db db = Db.open(dir, SmallLevels.options().fileSystem(hold.fs));
        try {
            long compactionsBefore = db.stats().compactions();
            twoOverlappingLevel0Tables(db);
            assertThat(hold.held.await(60, TimeUnit.SECONDS))
                    .as("the compaction reached its output")
                    .isTrue();
            twoOverlappingLevel0Tables(db); // flushed beside it: the next compaction is due once it ends
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicLong compactionsWhenPaused = new AtomicLong(-1);
            Thread pauser = start(
                    "pauser",
                    () -> {
                        db.pauseBackgroundWork();
                        compactionsWhenPaused.set(db.stats().compactions());
                    },
                    failure);
            // The compaction is held, so this wait ends only once the pause has begun (RocksDB's abort_on_pause).
            assertThatThrownBy(db::waitForBackgroundWork).isInstanceOf(BackgroundWorkPausedException.class);
            awaitParked(pauser);
            assertThat(pauser.isAlive())
                    .as("pause waits for the held compaction")
                    .isTrue();
            assertThat(compactionsWhenPaused.get()).isEqualTo(-1);
            hold.release.countDown();
            pauser.join();
            assertThat(failure.get()).isNull();
            assertThat(compactionsWhenPaused.get())
                    .as("the compaction finished (not abandoned) before the pause returned, and no other began")
                    .isEqualTo(compactionsBefore + 1);
            assertThatThrownBy(db::waitForBackgroundWork).isInstanceOf(BackgroundWorkPausedException.class);
            assertThat(db.stats().levelTables(0)).as("the compaction due waits").isEqualTo(2);
            assertThat(db.stats().compactions()).isEqualTo(compactionsBefore + 1);
            db.continueBackgroundWork();
            db.waitForBackgroundWork();
            assertThat(db.stats().compactions()).as("it ran after the continue").isEqualTo(compactionsBefore + 2);
            assertThat(db.stats().levelTables(0)).isZero();
            for (int i = 0; i < 20; i++) {
                assertThat(db.get(TestKeys.key(i))).isEqualTo(value(100 + i));
            }
        } finally {
            hold.release.countDown();
            db.close();
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void nothingIsFlushedOrCompactedWhilePausedAndContinueReleasesStalledWrites() throws Exception {
        StallListener stalls = new StallListener();
        Options o = SmallLevels.options().maxImmutableMemtables(2).listeners(stalls);
        Db db = Db.open(dir, o);
        int n = 3000;
        try {
            for (int i = 0; i < 20; i++) {
                db.put(TestKeys.key(100_000 + i), value(i));
            }
            db.flush();
            db.waitForBackgroundWork();
            db.pauseBackgroundWork();
            stalls.arm();
            List<Long> tables = tableNumbers(db);
            Stats before = db.stats();

            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicInteger acknowledged = new AtomicInteger();
            Thread writer = start(
                    "writer",
                    () -> {
                        for (int i = 0; i < n; i++) {
                            db.put(TestKeys.key(i), value(i));
                            acknowledged.incrementAndGet();
                        }
                    },
                    failure);
            assertThat(stalls.awaitStall())
                    .as("writes stall behind the paused flushes")
                    .isTrue();
            AtomicBoolean flushed = new AtomicBoolean();
            Thread flusher = start(
                    "flush",
                    () -> {
                        db.flush();
                        flushed.set(true);
                    },
                    failure);
            awaitParked(flusher);
            awaitParked(writer);

            Stats paused = db.stats();
            assertThat(tableNumbers(db))
                    .as("no table added or removed while paused")
                    .isEqualTo(tables);
            assertThat(paused.flushes()).isEqualTo(before.flushes());
            assertThat(paused.compactions()).isEqualTo(before.compactions());
            assertThat(paused.immutableMemtables()).as("frozen memtables wait").isEqualTo(2);
            assertThat(paused.writeStalls()).isPositive();
            assertThat(acknowledged.get()).as("the writer is stalled").isLessThan(n);
            assertThat(writer.isAlive()).isTrue();
            assertThat(flushed.get()).as("flush() waits for the paused flush").isFalse();
            assertThatThrownBy(db::waitForBackgroundWork).isInstanceOf(BackgroundWorkPausedException.class);

            db.continueBackgroundWork();
            writer.join();
            flusher.join();
            assertThat(failure.get()).isNull();
            assertThat(acknowledged.get()).isEqualTo(n);
            assertThat(flushed.get()).isTrue();
            db.waitForBackgroundWork();
            Stats after = db.stats();
            assertThat(after.flushes()).as("the held flushes ran").isGreaterThan(before.flushes() + 1);
            assertThat(after.levelTables(0))
                    .as("and the compactions they called for moved level 0 down")
                    .isLessThan(o.l0CompactionTrigger());
            assertThat(tableNumbers(db)).isNotEqualTo(tables);
            for (int i = 0; i < n; i++) {
                assertThat(db.get(TestKeys.key(i))).as("key " + i).isEqualTo(value(i));
            }
        } finally {
            db.close();
        }
        // After close every event is delivered: stalls and resumptions pair up, the last one a resumption.
        stalls.assertAlternating();
        assertThat(stalls.copy()).isNotEmpty().last().isEqualTo(false);
    }

    private static List<Long> tableNumbers(Db db) {
        List<Long> out = new ArrayList<>();
        for (TableInfo t : db.tables()) {
            out.add(t.fileNumber());
        }
        return out;
    }

    /**
     * RocksDB runs a manual compaction while background work is paused (it is scheduled directly); its flush, when a
     * memtable holds something, waits for the continue.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void compactRangeRunsWhilePausedButItsFlushWaits() throws Exception {
        Db db = Db.open(dir, SmallLevels.options().l0CompactionTrigger(4));
        try {
            twoOverlappingLevel0Tables(db);
            db.waitForBackgroundWork();
            assertThat(db.stats().levelTables(0)).isEqualTo(2);
            db.pauseBackgroundWork();
            db.compactRange(null, null); // nothing to flush: runs here
            assertThat(db.stats().levelTables(0)).isZero();
            db.put(TestKeys.key(5), value(7));
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean done = new AtomicBoolean();
            Thread compacter = start(
                    "compactRange",
                    () -> {
                        db.compactRange(null, null);
                        done.set(true);
                    },
                    failure);
            while (db.stats().immutableMemtables() == 0) {
                Thread.sleep(1); // until its flush froze the memtable, which then waits
            }
            awaitParked(compacter);
            assertThat(done.get()).as("its flush waits for the continue").isFalse();
            assertThat(db.stats().immutableMemtables()).isEqualTo(1);
            db.continueBackgroundWork();
            compacter.join();
            assertThat(failure.get()).isNull();
            assertThat(done.get()).isTrue();
            assertThat(db.stats().levelTables(0)).isZero();
            assertThat(db.get(TestKeys.key(5))).isEqualTo(value(7));
            assertThat(db.get(TestKeys.key(6))).isEqualTo(value(106));
        } finally {
            db.close();
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void pausesNestAndEachNeedsAContinue() {
        Db db = Db.open(dir, SmallLevels.options().maxImmutableMemtables(4));
        try {
            db.pauseBackgroundWork();
            db.pauseBackgroundWork();
            int i = 0;
            while (db.stats().immutableMemtables() == 0) {
                db.put(TestKeys.key(i), value(i));
                i++;
            }
            long flushes = db.stats().flushes();
            db.continueBackgroundWork();
            assertThatThrownBy(db::waitForBackgroundWork)
                    .as("still paused once")
                    .isInstanceOf(BackgroundWorkPausedException.class);
            assertThat(db.stats().immutableMemtables()).isEqualTo(1);
            assertThat(db.stats().flushes()).isEqualTo(flushes);
            db.continueBackgroundWork();
            db.waitForBackgroundWork();
            assertThat(db.stats().immutableMemtables()).isZero();
            assertThat(db.stats().flushes()).isGreaterThan(flushes);
            assertThatThrownBy(db::continueBackgroundWork)
                    .as("one continue more than the pauses")
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("not paused");
            for (int k = 0; k < i; k++) {
                assertThat(db.get(TestKeys.key(k))).isEqualTo(value(k));
            }
        } finally {
            db.close();
        }
    }

    @Test
    void continueWithoutPauseIsRefusedAndAClosedDatabaseRefusesBoth() {
        Db db = Db.open(dir, Options.defaults());
        assertThatThrownBy(db::continueBackgroundWork)
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("not paused");
        db.pauseBackgroundWork();
        db.continueBackgroundWork();
        assertThatThrownBy(db::continueBackgroundWork).isInstanceOf(InvalidArgumentException.class);
        db.pauseBackgroundWork();
        db.close();
        assertThatThrownBy(db::continueBackgroundWork).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(db::pauseBackgroundWork).isInstanceOf(DbClosedException.class);
    }

    /** RocksDB's WaitForCompact with abort_on_pause: a waiter gives up as soon as a pause begins. */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void waitForBackgroundWorkGivesUpWhenAPauseBegins() throws Exception {
        HeldCompaction hold = new HeldCompaction();
        Db db = Db.open(dir, SmallLevels.options().fileSystem(hold.fs));
        try {
            twoOverlappingLevel0Tables(db);
            assertThat(hold.held.await(60, TimeUnit.SECONDS)).isTrue();
            AtomicReference<Throwable> waited = new AtomicReference<>();
            Thread waiter = start("waiter", db::waitForBackgroundWork, waited);
            awaitParked(waiter);
            assertThat(waiter.isAlive()).as("it waits for the held compaction").isTrue();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread pauser = start("pauser", db::pauseBackgroundWork, failure);
            waiter.join(); // the held compaction is still held: only the pause can end the wait
            assertThat(waited.get()).isInstanceOf(BackgroundWorkPausedException.class);
            assertThat(hold.held.getCount()).isZero();
            assertThat(pauser.isAlive())
                    .as("the pause still waits for the compaction")
                    .isTrue();
            hold.release.countDown();
            pauser.join();
            assertThat(failure.get()).isNull();
            assertThatThrownBy(db::waitForBackgroundWork).isInstanceOf(BackgroundWorkPausedException.class);
            db.continueBackgroundWork();
            db.waitForBackgroundWork();
        } finally {
            hold.release.countDown();
            db.close();
        }
    }

    /**
     * A listener's onBackgroundError runs on the thread whose job failed: a pause from there does not wait for that job
     * (it would wait for itself). A failed compaction is retried after the continue; a failed flush stops the work.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aPauseFromOnBackgroundErrorDoesNotWaitForItsOwnJob() throws Exception {
        for (String thread : new String[] {"bloomkv-compact-", "bloomkv-flush-"}) {
            Path d = dir.resolve(thread.substring("bloomkv-".length(), thread.length() - 1));
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            AtomicBoolean failed = new AtomicBoolean();
            fs.inject((op, p) -> op == Op.CREATE
                    && p.getFileName().toString().endsWith(".sst")
                    && Thread.currentThread().getName().startsWith(thread)
                    && failed.compareAndSet(false, true));
            AtomicReference<Db> ref = new AtomicReference<>();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            CountDownLatch paused = new CountDownLatch(1);
            EventListener pauser = new EventListener() {
                @Override
                public boolean onBackgroundError(BackgroundErrorInfo info) {
                    try {
                        ref.get().pauseBackgroundWork();
                    } catch (Throwable t) {
                        thrown.set(t);
                    } finally {
                        paused.countDown();
                    }
                    return true; // ignored when recoverable (the compaction): it is retried
                }
            };
            Db db = Db.open(d, SmallLevels.options().fileSystem(fs).listeners(pauser));
            ref.set(db);
            try {
                if (thread.contains("compact")) {
                    twoOverlappingLevel0Tables(db);
                } else {
                    db.put(TestKeys.key(1), value(1));
                    assertThatThrownBy(db::flush).isInstanceOf(BloomKvIOException.class);
                }
                assertThat(paused.await(60, TimeUnit.SECONDS))
                        .as(thread + ": the pause returned")
                        .isTrue();
                assertThat(thrown.get()).isNull();
                db.continueBackgroundWork();
                if (thread.contains("compact")) {
                    db.waitForBackgroundWork();
                    assertThat(db.stats().levelTables(0))
                            .as("retried after the continue")
                            .isZero();
                    assertThat(db.get(TestKeys.key(3))).isEqualTo(value(103));
                } else {
                    assertThatThrownBy(db::waitForBackgroundWork).isInstanceOf(BloomKvIOException.class);
                }
            } finally {
                db.close();
            }
        }
    }

    /** A pause still waiting for a compaction when the database closes ends with DbClosedException; close completes. */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void closeEndsAPauseThatWaits() throws Exception {
        HeldCompaction hold = new HeldCompaction();
        Db db = Db.open(dir, SmallLevels.options().fileSystem(hold.fs));
        AtomicReference<Throwable> paused = new AtomicReference<>();
        AtomicReference<Throwable> closed = new AtomicReference<>();
        Thread pauser;
        Thread closer;
        try {
            twoOverlappingLevel0Tables(db);
            assertThat(hold.held.await(60, TimeUnit.SECONDS)).isTrue();
            pauser = start("pauser", db::pauseBackgroundWork, paused);
            assertThatThrownBy(db::waitForBackgroundWork).isInstanceOf(BackgroundWorkPausedException.class);
            closer = start("closer", db::close, closed);
            while (!db.toString().endsWith(", closed}")) {
                Thread.sleep(1); // until close has begun: it then waits for the held compaction
            }
        } finally {
            hold.release.countDown();
        }
        closer.join();
        pauser.join();
        assertThat(closed.get()).isNull();
        assertThat(paused.get()).isInstanceOf(DbClosedException.class);
        try (Db again = Db.open(dir, SmallLevels.options())) {
            for (int i = 0; i < 20; i++) {
                assertThat(again.get(TestKeys.key(i))).isEqualTo(value(100 + i));
            }
        }
    }

    /** The writer stalled by the pause gets a DbClosedException; the WAL holds every acknowledged write. */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void closeWhilePausedFailsTheStalledWriterAndLosesNothing() throws Exception {
        closeWhilePaused(Options.defaults());
    }

    /**
     * Without a WAL close flushes the memtables: it lifts the pause to do so, which lets the stalled write through
     * (before the flush that takes it), and then ends as usual.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void closeWhilePausedWithoutWalFlushesAndLosesNothing() throws Exception {
        closeWhilePaused(Options.defaults().disableWal(true).syncMode(SyncMode.NONE));
    }

    private void closeWhilePaused(Options base) throws Exception {
        StallListener stalls = new StallListener();
        Options o = SmallLevels.options()
                .disableWal(base.disableWal())
                .syncMode(base.syncMode())
                .listeners(stalls);
        Db db = Db.open(dir, o);
        AtomicInteger acknowledged = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread writer;
        try {
            for (int i = 0; i < 40; i++) {
                db.put(TestKeys.key(1_000_000 + i), value(i));
            }
            db.flush();
            DbIterator open = db.iterator(); // left open: close invalidates it
            open.seekToFirst();
            db.pauseBackgroundWork();
            db.pauseBackgroundWork();
            stalls.arm(); // the flush above may have stalled writes for a moment: the stall awaited is the pause's
            writer = start(
                    "writer",
                    () -> {
                        for (int i = 0; !stop.get(); i++) {
                            db.put(TestKeys.key(i), value(i));
                            acknowledged.incrementAndGet();
                        }
                    },
                    failure);
            assertThat(stalls.awaitStall()).isTrue();
            stop.set(true); // the write stalled now is the writer's last
        } finally {
            db.close();
        }
        writer.join();
        if (o.disableWal()) {
            assertThat(failure.get()).as("close let the stalled write through").isNull();
        } else {
            assertThat(failure.get())
                    .as("the stalled writer learns that the database closed")
                    .isInstanceOf(DbClosedException.class);
        }
        int acked = acknowledged.get();
        assertThat(acked).isPositive();
        assertThat(TableReader.liveTables()).isEqualTo(NoTableLeak.before());
        try (Db again = Db.open(dir, o)) {
            for (int i = 0; i < acked; i++) {
                assertThat(again.get(TestKeys.key(i)))
                        .as("acknowledged key " + i)
                        .isEqualTo(value(i));
            }
            for (int i = 0; i < 40; i++) {
                assertThat(again.get(TestKeys.key(1_000_000 + i))).isEqualTo(value(i));
            }
            assertThatThrownBy(again::continueBackgroundWork)
                    .as("a pause does not outlive the database")
                    .isInstanceOf(InvalidArgumentException.class);
        }
    }

    /** What rocksdbjni answers to the same calls, read-only too: bloomkv's semantics are these. */
    @Test
    void rocksDbAgreesOnNestingAndContinueWithoutPause() throws Exception {
        org.rocksdb.RocksDB.loadLibrary();
        Path rocksDir = dir.resolve("rocks");
        try (org.rocksdb.Options ro = new org.rocksdb.Options().setCreateIfMissing(true)) {
            try (org.rocksdb.RocksDB rocks = org.rocksdb.RocksDB.open(ro, rocksDir.toString())) {
                assertRocksInvalidArgument(rocks::continueBackgroundWork);
                rocks.pauseBackgroundWork();
                rocks.pauseBackgroundWork();
                rocks.continueBackgroundWork();
                rocks.put(TestKeys.key(1), value(1));
                rocks.continueBackgroundWork();
                assertRocksInvalidArgument(rocks::continueBackgroundWork);
            }
            try (org.rocksdb.RocksDB rocks = org.rocksdb.RocksDB.openReadOnly(ro, rocksDir.toString())) {
                rocks.pauseBackgroundWork(); // accepted read-only: counted, nothing to wait for
                rocks.continueBackgroundWork();
                assertRocksInvalidArgument(rocks::continueBackgroundWork);
            }
        }
    }

    private interface RocksCall {
        void run() throws org.rocksdb.RocksDBException;
    }

    private static void assertRocksInvalidArgument(RocksCall call) {
        assertThatThrownBy(call::run)
                .isInstanceOfSatisfying(
                        org.rocksdb.RocksDBException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(org.rocksdb.Status.Code.InvalidArgument));
    }

    /** A read-only database has no background work: pauses are only counted, and behave as elsewhere otherwise. */
    @Test
    void readOnlyDatabaseCountsPauses() {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put(TestKeys.key(1), value(1));
        }
        Db ro = Db.open(dir, Options.defaults().readOnly(true));
        try {
            ro.waitForBackgroundWork();
            assertThatThrownBy(ro::continueBackgroundWork).isInstanceOf(InvalidArgumentException.class);
            ro.pauseBackgroundWork();
            ro.pauseBackgroundWork();
            ro.continueBackgroundWork();
            assertThatThrownBy(ro::waitForBackgroundWork).isInstanceOf(BackgroundWorkPausedException.class);
            assertThat(ro.get(TestKeys.key(1))).isEqualTo(value(1));
            ro.continueBackgroundWork();
            ro.waitForBackgroundWork();
            assertThatThrownBy(ro::continueBackgroundWork).isInstanceOf(InvalidArgumentException.class);
            ro.pauseBackgroundWork(); // and closed while paused
        } finally {
            ro.close();
        }
    }

    /**
     * Three writers (puts, deletes, batches of their own keys, with reads checked against their models, flushes and
     * range compactions now and then) and two threads pausing and continuing at random, nested up to three deep each.
     * Every write acknowledged reads back, before and after a reopen; stall events pair up.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void randomPausesAndContinuesLoseNoWrite() throws Exception {
        long seed = TestSeeds.seed("PauseBackgroundWorkTest.randomPausesAndContinuesLoseNoWrite");
        int writers = 3;
        int admins = 2;
        int opsPerWriter = Integer.getInteger("bloomkv.pauseOps", 4000);
        int keysPerWriter = 400;
        StallListener stalls = new StallListener();
        Options o = SmallLevels.options().maxImmutableMemtables(2).listeners(stalls);
        List<Map<Integer, byte[]>> models = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            models.add(new HashMap<>());
        }
        Db db = Db.open(dir, o);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong writerOps = new AtomicLong();
        AtomicInteger writersLeft = new AtomicInteger(writers);
        AtomicInteger pausesTaken = new AtomicInteger();
        AtomicInteger pausedWaits = new AtomicInteger();
        try {
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int id = w;
                Map<Integer, byte[]> model = models.get(w);
                threads.add(start(
                        "writer-" + w,
                        () -> {
                            try {
                                writer(
                                        db,
                                        new Random(seed * 31 + id),
                                        id,
                                        keysPerWriter,
                                        opsPerWriter,
                                        model,
                                        writerOps);
                            } finally {
                                writersLeft.decrementAndGet();
                            }
                        },
                        failure));
            }
            for (int a = 0; a < admins; a++) {
                int id = a;
                threads.add(start(
                        "admin-" + a,
                        () -> admin(
                                db, new Random(seed * 31 + 100 + id), writersLeft, writerOps, pausesTaken, pausedWaits),
                        failure));
            }
            for (Thread t : threads) {
                t.join();
            }
            assertThat(failure.get()).as("seed " + seed).isNull();
            assertThat(pausesTaken.get()).isPositive();
            db.waitForBackgroundWork();
            verify(db, models, keysPerWriter, seed);
        } finally {
            db.close();
        }
        assertThat(TableReader.liveTables()).isEqualTo(NoTableLeak.before());
        stalls.assertAlternating();
        System.out.println("PauseBackgroundWorkTest: " + pausesTaken.get() + " pauses, "
                + stalls.copy().size() / 2 + " stalls, " + pausedWaits.get()
                + " waitForBackgroundWork calls refused while paused");
        try (Db again = Db.open(dir, o)) {
            verify(again, models, keysPerWriter, seed);
        }
    }

    private static byte[] ownKey(int writer, int k) {
        return TestKeys.key(writer * 1_000_000L + k);
    }

    private static void writer(
            Db db, Random rnd, int id, int keys, int ops, Map<Integer, byte[]> model, AtomicLong writerOps) {
        for (int i = 0; i < ops; i++) {
            int r = rnd.nextInt(100);
            if (r < 60) {
                int k = rnd.nextInt(keys);
                byte[] v = TestKeys.value(rnd, 120);
                db.put(ownKey(id, k), v);
                model.put(k, v);
            } else if (r < 70) {
                int k = rnd.nextInt(keys);
                db.delete(ownKey(id, k));
                model.remove(k);
            } else if (r < 82) {
                WriteBatch b = new WriteBatch();
                Map<Integer, byte[]> next = new HashMap<>();
                for (int j = 1 + rnd.nextInt(5); j > 0; j--) {
                    int k = rnd.nextInt(keys);
                    if (rnd.nextInt(4) == 0) {
                        b.delete(ownKey(id, k));
                        next.put(k, null);
                    } else {
                        byte[] v = TestKeys.value(rnd, 120);
                        b.put(ownKey(id, k), v);
                        next.put(k, v);
                    }
                }
                db.write(b);
                next.forEach((k, v) -> {
                    if (v == null) {
                        model.remove(k);
                    } else {
                        model.put(k, v);
                    }
                });
            } else if (r < 97) {
                int k = rnd.nextInt(keys);
                byte[] got = db.get(ownKey(id, k));
                if (!Arrays.equals(got, model.get(k))) {
                    throw new AssertionError("writer " + id + " key " + k + " reads " + Arrays.toString(got)
                            + ", expected " + Arrays.toString(model.get(k)));
                }
            } else if (r < 99) {
                db.flush(); // waits while paused
            } else {
                int a = rnd.nextInt(keys);
                db.compactRange(ownKey(id, a), ownKey(id, Math.min(keys - 1, a + rnd.nextInt(100))));
            }
            writerOps.incrementAndGet();
        }
    }

    /**
     * Pauses and continues at random while the writers run, nested up to three deep; while paused it lets the writers
     * run until they did a few operations, or stalled, or a few milliseconds passed (pacing only: nothing is asserted
     * on it). At depth 0 it sometimes waits for the background work, which a pause by the other admin may refuse. Ends
     * once the writers have, with every pause continued.
     */
    private static void admin(
            Db db,
            Random rnd,
            AtomicInteger writersLeft,
            AtomicLong writerOps,
            AtomicInteger pausesTaken,
            AtomicInteger pausedWaits) {
        int depth = 0;
        try {
            while (writersLeft.get() > 0) {
                boolean pause = depth == 0 || (depth < 3 && rnd.nextBoolean());
                if (pause) {
                    db.pauseBackgroundWork();
                    depth++;
                    pausesTaken.incrementAndGet();
                } else {
                    db.continueBackgroundWork();
                    depth--;
                }
                long ops = writerOps.get();
                long stallsBefore = db.stats().writeStalls();
                int want = 1 + rnd.nextInt(depth > 0 ? 60 : 300);
                for (int spins = rnd.nextInt(20);
                        writersLeft.get() > 0
                                && writerOps.get() - ops < want
                                && (depth == 0 || db.stats().writeStalls() == stallsBefore)
                                && (depth == 0 || spins > 0);
                        spins--) {
                    Thread.sleep(1);
                }
                if (depth == 0 && rnd.nextInt(8) == 0) {
                    try {
                        db.waitForBackgroundWork();
                    } catch (BackgroundWorkPausedException e) {
                        pausedWaits.incrementAndGet(); // the other admin paused
                    }
                }
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        } finally {
            for (; depth > 0; depth--) {
                db.continueBackgroundWork();
            }
        }
    }

    private static void verify(Db db, List<Map<Integer, byte[]>> models, int keys, long seed) {
        for (int w = 0; w < models.size(); w++) {
            for (int k = 0; k < keys; k++) {
                assertThat(db.get(ownKey(w, k)))
                        .as("seed " + seed + ": writer " + w + " key " + k)
                        .isEqualTo(models.get(w).get(k));
            }
        }
        int expected = 0;
        for (Map<Integer, byte[]> m : models) {
            expected += m.size();
        }
        int seen = 0;
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                seen++;
            }
        }
        assertThat(seen).as("seed " + seed + ": keys in a full scan").isEqualTo(expected);
    }
}
