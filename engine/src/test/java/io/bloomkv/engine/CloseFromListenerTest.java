package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.fs.NoFsyncFileSystem;
import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#close} from an {@link EventListener#onBackgroundError} listener, which runs on the flush or compaction
 * thread close stops (or on compactRange's caller): the close completes without waiting for its own thread, the
 * failed job then ends, every table reader and filter is released, and the database reopens with its writes. And from
 * a listener on the event thread, where close's deletion pass runs.
 */
class CloseFromListenerTest {
    @TempDir
    Path dir;

    /** Calls close from onBackgroundError and records what it threw. */
    private static final class Closer implements EventListener {
        final AtomicReference<Db> db = new AtomicReference<>();
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        final AtomicReference<String> thread = new AtomicReference<>();
        final CountDownLatch asked = new CountDownLatch(1);

        @Override
        public boolean onBackgroundError(BackgroundErrorInfo info) {
            thread.set(Thread.currentThread().getName());
            try {
                db.get().close();
            } catch (Throwable t) {
                thrown.set(t);
            } finally {
                asked.countDown();
            }
            return false;
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS) // a close that waited for its own thread would hang
    void closeFromTheFlushThreadCloses() throws Exception {
        runWithFaultOn("bloomkv-flush", false);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void closeFromTheCompactionThreadCloses() throws Exception {
        runWithFaultOn("bloomkv-compact", false);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void closeFromACompactRangeCallersListenerCloses() throws Exception {
        runWithFaultOn(null, true);
    }

    /**
     * {@link Db#close} from a listener on the event thread ({@link EventListener#onCompactionCompleted}), while an
     * iterator left open still reads the compaction's inputs: close's deletion pass runs on the event thread and
     * queues onTableFileDeleted for them behind the callback that is closing; they are delivered once it returns, and
     * the directory holds no obsolete file.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void closeFromTheEventThreadDeletesObsoleteFiles() throws Exception {
        long tablesBefore = TableReader.liveTables();
        AtomicReference<Db> db = new AtomicReference<>();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<String> thread = new AtomicReference<>();
        CountDownLatch closed = new CountDownLatch(1);
        java.util.Set<Long> deleted = java.util.concurrent.ConcurrentHashMap.newKeySet();
        EventListener closer = new EventListener() {
            @Override
            public void onCompactionCompleted(CompactionCompletedInfo info) {
                thread.set(Thread.currentThread().getName());
                try {
                    db.get().close();
                } catch (Throwable t) {
                    thrown.set(t);
                } finally {
                    closed.countDown();
                }
            }

            @Override
            public void onTableFileDeleted(TableFileDeletedInfo info) {
                deleted.add(info.number());
            }
        };
        Options o = Options.defaults().autoCompaction(false).listeners(closer);
        java.util.TreeSet<Long> inputs = new java.util.TreeSet<>();
        db.set(Db.open(dir, o));
        try {
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 200; i++) {
                    db.get().put(TestKeys.key(i), TestKeys.key(round * 1000 + i));
                }
                db.get().flush();
            }
            db.get().tables().forEach(t -> inputs.add(t.fileNumber()));
            DbIterator left = db.get().iterator(); // closed by the close
            left.seekToFirst();
            db.get().compactRange(null, null);
            assertThat(closed.await(60, TimeUnit.SECONDS))
                    .as("onCompactionCompleted closed")
                    .isTrue();
        } finally {
            db.get().close();
        }
        assertThat(thread.get()).startsWith("bloomkv-events-");
        assertThat(thrown.get()).as("close from the event thread").isNull();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!deleted.containsAll(inputs) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(deleted)
                .as("onTableFileDeleted of the inputs, after the callback returned")
                .containsAll(inputs);
        CloseDeletesObsoleteFilesTest.assertNoObsoleteFile(dir, "after a close from the event thread");
        assertThat(TableReader.liveTables()).as("table readers").isEqualTo(tablesBefore);
        try (Db reopened = Db.open(dir, Options.defaults())) {
            for (int i = 0; i < 200; i++) {
                assertThat(reopened.get(TestKeys.key(i))).isEqualTo(TestKeys.key(1000 + i));
            }
        }
    }

    /** {@code threadPrefix}: the background thread whose table creation fails (unused with compactRange). */
    private void runWithFaultOn(String threadPrefix, boolean viaCompactRange) throws Exception {
        long tablesBefore = TableReader.liveTables();
        long filterBytesBefore = TableReader.liveFilterBytes();
        Closer closer = new Closer();
        FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
        Options o = Options.defaults()
                .fileSystem(fs)
                .writeBufferSize(8 << 10)
                .blockSize(512)
                .targetFileSize(8 << 10)
                .l0CompactionTrigger(2)
                .syncMode(SyncMode.NONE)
                .autoCompaction(!viaCompactRange)
                .listeners(closer);
        Db db = Db.open(dir, o); // an open that failed fails the test
        closer.db.set(db);
        FaultInjectingFileSystem.Fault fault = null;
        try {
            for (int i = 0; i < 200; i++) {
                db.put(TestKeys.key(i), TestKeys.key(i)); // in the WAL: the reopen must read them
            }
            if (viaCompactRange) {
                for (int round = 0; round < 2; round++) {
                    for (int i = 0; i < 200; i++) {
                        db.put(TestKeys.key(i), TestKeys.key(round * 1000 + i));
                    }
                    db.flush(); // two overlapping level-0 tables for compactRange to merge
                }
            }
            Thread caller = Thread.currentThread();
            fault = fs.injectNth(
                    FaultInjectingFileSystem.on(Op.CREATE, "*.sst")
                            .and((op, p) -> viaCompactRange
                                    ? Thread.currentThread() == caller
                                    : Thread.currentThread().getName().startsWith(threadPrefix)),
                    1);
            if (viaCompactRange) {
                try {
                    db.compactRange(null, null);
                } catch (BloomKvException expected) {
                    // its output could not be created
                }
            } else {
                try {
                    for (int i = 0; i < 20_000 && fault.fired() == 0; i++) {
                        db.put(TestKeys.key(i % 2000), TestKeys.key(i));
                    }
                } catch (BloomKvException writesStopped) {
                    // the failed flush or compaction stopped writes
                }
            }
            assertThat(fault.fired()).as("the fault fired").isEqualTo(1);
            assertThat(closer.asked.await(60, TimeUnit.SECONDS))
                    .as("onBackgroundError was called")
                    .isTrue();
            assertThat(closer.thread.get())
                    .as("the thread onBackgroundError ran on")
                    .startsWith(viaCompactRange ? Thread.currentThread().getName() : threadPrefix);
            assertThat(closer.thrown.get())
                    .as("close from " + closer.thread.get())
                    .isNull();
            assertThat(db.toString()).as("closed by the listener").contains("closed");
        } finally {
            if (fault != null) {
                fault.remove();
            }
            try {
                db.close();
            } catch (BloomKvException closeAfterError) {
                // a database whose writes stopped may report the error again at close
            }
        }
        assertThat(db.toString()).contains("closed");
        // The failed job ends after the listener returns; then nothing of the database is left open.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (TableReader.liveTables() > tablesBefore && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(TableReader.liveTables()).as("table readers").isEqualTo(tablesBefore);
        assertThat(TableReader.liveFilterBytes()).as("filter bytes").isEqualTo(filterBytesBefore);
        try (Db reopened = Db.open(dir, o.listeners(new EventListener[0]))) {
            for (int i = 0; i < 200; i++) {
                assertThat(reopened.get(TestKeys.key(i))).as("key " + i).isNotNull();
            }
        }
    }
}
