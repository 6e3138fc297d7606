package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Fault;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#resume()} against the threads that record background errors: a compaction whose failed MANIFEST write is
 * reported to the listeners after it was recorded (a resume in between must not see it come back), and a listener's
 * {@link EventListener#onBackgroundError} calling resume on the thread that failed (refused, never a deadlock).
 * Deterministic: the listener holds the failed thread at the point of the race.
 */
class ResumeRacesTest {
    @TempDir
    Path dir;

    private final FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();

    @AfterEach
    void nothingLeaks() {
        assertThat(TableReader.liveTables()).as("tables left open").isZero();
    }

    private Options options() {
        return Options.defaults()
                .fileSystem(fs)
                .syncMode(SyncMode.GROUP_COMMIT)
                .writeBufferSize(256 << 10)
                .blockSize(512)
                .blockCacheSize(0);
    }

    private static void putRange(Db db, int from, int to, String value) {
        for (int k = from; k < to; k++) {
            db.put(TestKeys.key(k), TestKeys.bytes(value + k));
        }
    }

    private static boolean onThread(String prefix) {
        return Thread.currentThread().getName().startsWith(prefix);
    }

    /**
     * A background compaction's MANIFEST write fails: recorded at once, then told to the listeners on the compaction
     * thread. A resume on another thread while the listener runs clears it; when the listener returns, the error must
     * stay cleared (the compaction thread must not record the same error again).
     */
    @Test
    void aCompactionErrorClearedByResumeWhileItsListenerRunsStaysCleared() throws Exception {
        CountDownLatch inListener = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        EventListener holder = new EventListener() {
            @Override
            public boolean onBackgroundError(BackgroundErrorInfo info) {
                if (info.operation().equals("compaction") && inListener.getCount() > 0) {
                    inListener.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return false;
            }
        };
        Options opts = options().autoCompaction(true).l0CompactionTrigger(2).listeners(holder);
        try (Db db = Db.open(dir, opts)) {
            putRange(db, 0, 200, "a");
            db.flush();
            // Only the compaction thread's MANIFEST sync fails: the flush below records its table.
            Fault f = fs.inject((op, p) ->
                    op == Op.SYNC && p.getFileName().toString().startsWith("MANIFEST-") && onThread("bloomkv-compact"));
            try {
                putRange(db, 100, 300, "b");
                db.flush(); // the second level-0 table: a compaction starts and fails
                assertThat(inListener.await(30, TimeUnit.SECONDS))
                        .as("the compaction failed")
                        .isTrue();
            } finally {
                f.remove();
            }
            assertThat(db.property("bloomkv.background-errors")).contains("1");
            assertThatThrownBy(() -> db.put(TestKeys.key(1), TestKeys.bytes("x")))
                    .isInstanceOf(BloomKvException.class);

            db.resume();
            release.countDown();
            // The compaction thread went past its listener (and compacts again: resume woke it).
            db.waitForBackgroundWork();

            assertThat(db.property("bloomkv.background-errors"))
                    .as("the error resume cleared does not come back")
                    .contains("0");
            db.put(TestKeys.key(1), TestKeys.bytes("after"));
            assertThat(TestKeys.str(db.get(TestKeys.key(1)))).isEqualTo("after");
            assertThat(TestKeys.str(db.get(TestKeys.key(50)))).isEqualTo("a50");
            assertThat(TestKeys.str(db.get(TestKeys.key(250)))).isEqualTo("b250");
            DiskFullTest.assertNoOrphanTables(db, "after the compaction's retry");
        } finally {
            release.countDown();
        }
    }

    /**
     * A listener's onBackgroundError calls resume on the flush thread whose MANIFEST write failed: resume would wait for
     * that thread's flushes, so it is refused at once (InvalidArgumentException), and a resume from another thread
     * afterwards recovers.
     */
    @Test
    void resumeInsideOnBackgroundErrorIsRefusedNotADeadlock() throws Exception {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        CountDownLatch returned = new CountDownLatch(1);
        AtomicReference<Db> self = new AtomicReference<>();
        AtomicReference<Fault> fault = new AtomicReference<>();
        EventListener resumer = new EventListener() {
            @Override
            public boolean onBackgroundError(BackgroundErrorInfo info) {
                if (returned.getCount() > 0) {
                    fault.get().remove(); // the cause is fixed: resume's own steps would succeed
                    try {
                        self.get().resume();
                    } catch (Throwable e) {
                        thrown.set(e);
                    }
                    returned.countDown();
                }
                return false;
            }
        };
        Db db = Db.open(dir, options().autoCompaction(false).listeners(resumer));
        try {
            self.set(db);
            putRange(db, 0, 100, "a");
            Fault f = fs.inject(FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*"));
            fault.set(f);
            try {
                BloomKvException failed = catchThrowableOfType(db::flush, BloomKvException.class);
                assertThat(failed).as("the flush's MANIFEST write failed").isNotNull();
                assertThat(returned.await(10, TimeUnit.SECONDS))
                        .as("resume inside onBackgroundError returns (no deadlock)")
                        .isTrue();
            } finally {
                f.remove();
            }
            assertThat(thrown.get())
                    .as("refused with a clear exception")
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("onBackgroundError");
            assertThat(db.property("bloomkv.background-errors")).contains("1");

            db.resume();
            assertThat(db.property("bloomkv.background-errors")).contains("0");
            putRange(db, 100, 150, "b");
            db.flush();
            assertThat(TestKeys.str(db.get(TestKeys.key(10)))).isEqualTo("a10");
            assertThat(TestKeys.str(db.get(TestKeys.key(120)))).isEqualTo("b120");
        } finally {
            db.close(); // also ends a deadlocked resume (it gives up when the database closes)
        }
    }

    /**
     * A close while resume waits for its flushes (held by a pause): resume gives up with DbClosedException, close
     * returns, nothing leaks, and the next open holds every acknowledged write.
     */
    @Test
    void aCloseWhileResumeWaitsEndsItAndLosesNothing() throws Exception {
        CountDownLatch begun = new CountDownLatch(1);
        EventListener recorder = new EventListener() {
            @Override
            public void onErrorRecoveryBegin(ErrorRecoveryInfo info) {
                begun.countDown();
            }
        };
        Db db = Db.open(dir, options().autoCompaction(false).listeners(recorder));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread resumer = new Thread(() -> {
            try {
                db.resume();
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        try {
            putRange(db, 0, 100, "a");
            db.flush();
            putRange(db, 50, 150, "b");
            Fault f = fs.inject(FaultInjectingFileSystem.on(Op.WRITE, "*.sst"));
            try {
                assertThat(catchThrowableOfType(db::flush, BloomKvException.class))
                        .isNotNull();
            } finally {
                f.remove();
            }
            db.pauseBackgroundWork();
            resumer.start();
            assertThat(begun.await(10, TimeUnit.SECONDS)).as("resume began").isTrue();
            // Its WAL switch froze the memtable behind the one whose flush failed: it waits for their flushes now.
            awaitTrue(
                    () -> db.property("bloomkv.num-immutable-mem-table")
                            .orElse("")
                            .equals("2"),
                    "resume's WAL switch");
        } finally {
            db.close();
        }
        resumer.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(resumer.isAlive()).as("resume ended with the close").isFalse();
        assertThat(thrown.get()).isInstanceOf(DbClosedException.class);
        fs.crash();
        try (Db reopened = Db.open(dir, options())) {
            for (int k = 0; k < 150; k++) {
                assertThat(TestKeys.str(reopened.get(TestKeys.key(k))))
                        .as("key " + k)
                        .isEqualTo((k < 50 ? "a" : "b") + k);
            }
        }
    }

    /**
     * Writers keep writing while a WAL sync failure stops writes and resume runs: every write that returned is kept
     * (in the database, and after a power loss and a reopen), and every write that threw is absent, whichever WAL and
     * memtable it met. Deterministic input; the interleaving varies, the check holds for every one.
     */
    @Test
    void writersRacingResumeKeepWhatWasAcknowledgedAndNothingElse() throws Exception {
        int threads = 3;
        java.util.Set<Integer> acknowledged = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.Set<Integer> refused = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Options opts =
                options().syncMode(SyncMode.EVERY_WRITE).autoCompaction(false).writeBufferSize(64 << 10);
        Db db = Db.open(dir, opts);
        java.util.List<Thread> writers = new java.util.ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int base = t * 1_000_000;
                Thread w = new Thread(() -> {
                    for (int i = 0; !stop.get(); i++) {
                        int k = base + i;
                        try {
                            db.put(TestKeys.key(k), TestKeys.bytes("v" + k));
                            acknowledged.add(k);
                        } catch (DbClosedException e) {
                            return;
                        } catch (BloomKvException e) {
                            refused.add(k);
                        }
                    }
                });
                w.start();
                writers.add(w);
            }
            awaitTrue(() -> acknowledged.size() >= 300, "writes before the failure");
            Fault f = fs.injectNth(FaultInjectingFileSystem.on(Op.SYNC, "*.log"), 1);
            awaitTrue(
                    () -> !db.property("bloomkv.background-errors").orElse("0").equals("0"), "the WAL sync failure");
            f.remove();
            int before = acknowledged.size();
            db.resume();
            awaitTrue(() -> acknowledged.size() >= before + 300, "writes after resume");
            stop.set(true);
            for (Thread w : writers) {
                w.join(TimeUnit.SECONDS.toMillis(10));
            }
            assertThat(refused).as("writes refused while the error was set").isNotEmpty();
            checkWrites(db, acknowledged, refused, "running");
        } finally {
            stop.set(true);
            db.close();
        }
        fs.crash();
        try (Db reopened = Db.open(dir, opts)) {
            checkWrites(reopened, acknowledged, refused, "reopened after a power loss");
        }
    }

    /** Waits until {@code condition} holds, failing the test after ten seconds. */
    private static void awaitTrue(java.util.function.BooleanSupplier condition, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() < deadline).as("waiting for " + what).isTrue();
            Thread.sleep(1);
        }
    }

    private static void checkWrites(
            Db db, java.util.Set<Integer> acknowledged, java.util.Set<Integer> refused, String ctx) {
        for (int k : acknowledged) {
            assertThat(db.get(TestKeys.key(k))).as(ctx + ": acknowledged " + k).isNotNull();
        }
        for (int k : refused) {
            assertThat(db.get(TestKeys.key(k))).as(ctx + ": refused " + k).isNull();
        }
    }
}
