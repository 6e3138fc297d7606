package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.NoFsyncFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.version.FileNames;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link EventListener}: flushes, compactions, table files, write stalls and background errors are reported, on the
 * event thread (the background error on the failing thread), never under an engine lock, and a listener may call
 * the database; a recoverable compaction error can be ignored, an ignored one does not stop writes.
 */
class EventListenerTest {
    @TempDir
    Path dir;

    /** Records every event as a line, and any violation of the threading contract. */
    static final class Recorder implements EventListener {
        final AtomicReference<Db> db = new AtomicReference<>();
        final List<String> events = new CopyOnWriteArrayList<>();
        final List<Object> infos = new CopyOnWriteArrayList<>();
        final List<String> violations = new CopyOnWriteArrayList<>();
        volatile boolean ignoreErrors;

        private void record(String what, Object info) {
            Db d = db.get();
            if (d != null && d.engineLockHeldByCurrentThread()) {
                violations.add(what + " delivered under an engine lock");
            }
            if (!what.equals("error") && !Thread.currentThread().getName().startsWith("bloomkv-events-")) {
                violations.add(what + " delivered on " + Thread.currentThread().getName());
            }
            if (d != null) {
                try {
                    d.property("bloomkv.num-files-at-level0"); // a listener may call the database
                } catch (DbClosedException closing) {
                    // events queued before close are delivered while it closes
                }
            }
            events.add(what);
            infos.add(info);
        }

        @Override
        public void onFlushBegin(FlushInfo info) {
            record("flush-begin", info);
        }

        @Override
        public void onFlushCompleted(FlushCompletedInfo info) {
            record("flush-done", info);
        }

        @Override
        public void onCompactionBegin(CompactionInfo info) {
            record("compaction-begin", info);
        }

        @Override
        public void onCompactionCompleted(CompactionCompletedInfo info) {
            record("compaction-done", info);
        }

        @Override
        public void onTableFileCreated(TableFileCreatedInfo info) {
            record("table-created", info);
        }

        @Override
        public void onTableFileDeleted(TableFileDeletedInfo info) {
            record("table-deleted", info);
        }

        @Override
        public void onWriteStallChanged(WriteStallInfo info) {
            record(info.stalled() ? "stall-on" : "stall-off", info);
        }

        @Override
        public boolean onBackgroundError(BackgroundErrorInfo info) {
            record("error", info);
            return ignoreErrors;
        }

        <T> List<T> of(Class<T> type) {
            List<T> out = new ArrayList<>();
            for (Object o : infos) {
                if (type.isInstance(o)) {
                    out.add(type.cast(o));
                }
            }
            return out;
        }
    }

    private static Options small(FileSystem fs) {
        return Options.defaults()
                .fileSystem(fs)
                .writeBufferSize(8 << 10)
                .blockSize(512)
                .targetFileSize(8 << 10)
                .maxBytesForLevelBase(32 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .syncMode(SyncMode.NONE);
    }

    @Test
    void flushesCompactionsAndTableFilesAreReportedOffTheEngineLocks() {
        Recorder rec = new Recorder();
        long flushes;
        Set<Long> live = new HashSet<>();
        try (Db db = Db.open(dir, small(FileSystem.disk()).listeners(rec))) {
            rec.db.set(db);
            for (int i = 0; i < 6000; i++) {
                db.put(TestKeys.key(i % 1500), TestKeys.key(i));
            }
            db.flush();
            db.waitForBackgroundWork();
            flushes = db.stats().flushes();
            db.tables().forEach(t -> live.add(t.fileNumber()));
        }
        // close delivered what was queued
        assertThat(rec.violations).isEmpty();
        List<EventListener.FlushInfo> begun = rec.of(EventListener.FlushInfo.class);
        List<EventListener.FlushCompletedInfo> flushed = rec.of(EventListener.FlushCompletedInfo.class);
        assertThat(flushed).hasSize((int) flushes);
        assertThat(begun).hasSize((int) flushes);
        for (int i = 0; i < flushed.size(); i++) {
            assertThat(flushed.get(i).walNumber()).isEqualTo(begun.get(i).walNumber());
            assertThat(flushed.get(i).tableBytes()).isPositive();
        }
        List<EventListener.CompactionCompletedInfo> compacted = rec.of(EventListener.CompactionCompletedInfo.class);
        assertThat(compacted).isNotEmpty();
        assertThat(rec.of(EventListener.CompactionInfo.class)).hasSize(compacted.size());
        assertThat(compacted)
                .anyMatch(c ->
                        !c.trivialMove() && c.bytesWritten() > 0 && !c.outputs().isEmpty());
        // every table: created once; those gone deleted (after their creation); the live ones not deleted
        Set<Long> created = new HashSet<>();
        for (EventListener.TableFileCreatedInfo t : rec.of(EventListener.TableFileCreatedInfo.class)) {
            assertThat(created.add(t.number()))
                    .as("table " + t.number() + " created once")
                    .isTrue();
        }
        Set<Long> deleted = new HashSet<>();
        for (EventListener.TableFileDeletedInfo t : rec.of(EventListener.TableFileDeletedInfo.class)) {
            assertThat(created).contains(t.number());
            deleted.add(t.number());
        }
        assertThat(deleted).isNotEmpty().doesNotContainAnyElementsOf(live);
        assertThat(rec.of(EventListener.TableFileDeletedInfo.class))
                .as("a deletion that succeeded carries no error")
                .allMatch(t -> t.error() == null);
        assertThat(created).containsAll(live);
        int firstBegin = rec.events.indexOf("flush-begin");
        assertThat(firstBegin).isLessThan(rec.events.indexOf("flush-done"));
    }

    /**
     * A table deletion that fails is an onTableFileDeleted event too, carrying the failure (RocksDB's {@code
     * OnTableFileDeleted} with a failed {@code info.status}); the table stays on disk, and the pass that deletes it
     * later reports that deletion without an error.
     */
    @Test
    void aFailedTableDeletionIsReportedWithItsError() {
        Recorder rec = new Recorder();
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        List<Long> inputs = new ArrayList<>();
        try (Db db = Db.open(
                dir, Options.defaults().autoCompaction(false).fileSystem(fs).listeners(rec))) {
            rec.db.set(db);
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 100; i++) {
                    db.put(TestKeys.key(i), TestKeys.key(i + round));
                }
                db.flush();
            }
            db.tables().forEach(t -> inputs.add(t.fileNumber()));
            FaultInjectingFileSystem.Fault noDeletes = fs.inject(FaultInjectingFileSystem.on(Op.DELETE, "*.sst"));
            try {
                db.compactRange(null, null);
            } finally {
                noDeletes.remove();
            }
            assertThat(noDeletes.fired()).as("the inputs' deletions failed").isGreaterThanOrEqualTo(inputs.size());
            for (long n : inputs) {
                assertThat(fs.exists(FileNames.tableFile(dir, n)))
                        .as("table " + n + " left on disk")
                        .isTrue();
            }
            db.put(TestKeys.key(1000), TestKeys.key(1000));
            db.flush(); // its pass deletes the inputs left
            db.waitForBackgroundWork();
        }
        assertThat(rec.violations).isEmpty();
        List<EventListener.TableFileDeletedInfo> events = rec.of(EventListener.TableFileDeletedInfo.class);
        List<EventListener.TableFileDeletedInfo> failed =
                events.stream().filter(t -> t.error() != null).toList();
        assertThat(failed.stream().map(t -> t.number()).distinct())
                .as("each input's failed deletion")
                .containsExactlyInAnyOrderElementsOf(inputs);
        for (EventListener.TableFileDeletedInfo t : failed) {
            assertThat(t.error())
                    .isInstanceOf(BloomKvIOException.class)
                    .hasMessageContaining(t.path().toString());
            assertThat(t.error().getCause()).isInstanceOf(IOException.class);
        }
        assertThat(events.stream().filter(t -> t.error() == null).map(t -> t.number()))
                .as("deleted by the next pass, without an error")
                .containsExactlyInAnyOrderElementsOf(inputs);
        assertThat(events.indexOf(failed.get(0)))
                .as("the failure is reported before the deletion that succeeded")
                .isLessThan(events.indexOf(events.stream()
                        .filter(t -> t.error() == null)
                        .findFirst()
                        .orElseThrow()));
    }

    @Test
    void writeStallsAreReportedOnAndOff() {
        Recorder rec = new Recorder();
        // Slow table syncs keep a memtable waiting for its flush, so writers stall on the immutable memtable.
        FileSystem slowTables = new ForwardingFileSystem(FileSystem.disk()) {
            @Override
            public WritableFile newWritableFile(Path p) throws IOException {
                WritableFile f = super.newWritableFile(p);
                if (!p.toString().endsWith(".sst")) {
                    return f;
                }
                return new ForwardingWritableFile(f) {
                    @Override
                    public void sync() throws IOException {
                        try {
                            Thread.sleep(50);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        super.sync();
                    }
                };
            }
        };
        try (Db db = Db.open(dir, small(slowTables).autoCompaction(false).listeners(rec))) {
            rec.db.set(db);
            for (int i = 0; i < 3000; i++) {
                db.put(TestKeys.key(i), TestKeys.key(i));
            }
            db.waitForBackgroundWork();
            db.put(TestKeys.key(0), TestKeys.key(0)); // passes without a stall: "off" if the last was "on"
            assertThat(db.stats().writeStalls()).isPositive();
        }
        assertThat(rec.violations).isEmpty();
        List<String> stalls =
                rec.events.stream().filter(e -> e.startsWith("stall")).toList();
        assertThat(stalls).isNotEmpty();
        for (int i = 0; i < stalls.size(); i++) {
            assertThat(stalls.get(i))
                    .as("stall events alternate, starting with on")
                    .isEqualTo(i % 2 == 0 ? "stall-on" : "stall-off");
        }
        assertThat(stalls.get(stalls.size() - 1)).isEqualTo("stall-off");
    }

    /** A compaction output that cannot be created: an ignored (recoverable) error leaves writes going; else they stop. */
    @Test
    void aRecoverableCompactionErrorMayBeIgnored() {
        for (boolean ignore : new boolean[] {true, false}) {
            Recorder rec = new Recorder();
            rec.ignoreErrors = ignore;
            FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
            FaultInjectingFileSystem.Fault fault = fs.injectNth(
                    FaultInjectingFileSystem.on(Op.CREATE, "*.sst")
                            .and((op, p) -> Thread.currentThread().getName().startsWith("bloomkv-compact")),
                    1);
            Path d = dir.resolve("ignore-" + ignore);
            try (Db db = Db.open(d, small(fs).listeners(rec))) {
                rec.db.set(db);
                for (int i = 0; i < 4000 && fault.fired() == 0; i++) {
                    db.put(TestKeys.key(i % 1000), TestKeys.key(i));
                }
                assertThat(fault.fired()).isEqualTo(1);
                List<EventListener.BackgroundErrorInfo> errors = rec.of(EventListener.BackgroundErrorInfo.class);
                // the error callback is synchronous: it has run once the fault fired and the compaction thread moved on
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (rec.of(EventListener.BackgroundErrorInfo.class).isEmpty() && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                errors = rec.of(EventListener.BackgroundErrorInfo.class);
                assertThat(errors).hasSize(1);
                assertThat(errors.get(0).operation()).isEqualTo("compaction");
                assertThat(errors.get(0).recoverable()).isTrue();
                if (ignore) {
                    for (int i = 0; i < 2000; i++) {
                        db.put(TestKeys.key(i % 1000), TestKeys.key(i));
                    }
                    db.waitForBackgroundWork();
                    assertThat(db.property("bloomkv.background-errors")).hasValue("0");
                    for (int i = 0; i < 1000; i++) {
                        assertThat(db.get(TestKeys.key(i))).isEqualTo(TestKeys.key(1000 + i));
                    }
                } else {
                    waitForError(db);
                    assertWritesStopped(db);
                }
            } catch (BloomKvException closeAfterError) {
                assertThat(ignore)
                        .as("only the unignored run may fail at close")
                        .isFalse();
            }
            assertThat(rec.violations).as("ignore " + ignore).isEmpty();
        }
    }

    /** A WAL sync failure stops writes on the caller's path; the listeners hear of it (not recoverable). */
    @Test
    void aWalSyncErrorIsReportedToTheListeners() {
        Recorder rec = new Recorder();
        FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
        Path d = dir.resolve("wal-sync");
        Db db = Db.open(d, small(fs).listeners(rec)); // an open that failed fails the test
        try {
            rec.db.set(db);
            db.put(TestKeys.key(1), TestKeys.key(1));
            FaultInjectingFileSystem.Fault fault = fs.injectNth(FaultInjectingFileSystem.on(Op.SYNC, "*.log"), 1);
            assertThatThrownBy(db::syncWal).isInstanceOf(BloomKvIOException.class);
            assertThat(fault.fired()).isEqualTo(1);
            fault.remove();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (rec.of(EventListener.BackgroundErrorInfo.class).isEmpty() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            List<EventListener.BackgroundErrorInfo> errors = rec.of(EventListener.BackgroundErrorInfo.class);
            assertThat(errors).hasSize(1);
            assertThat(errors.get(0).operation()).isEqualTo("WAL sync");
            assertThat(errors.get(0).recoverable()).isFalse();
            assertThat(errors.get(0).error()).isInstanceOf(BloomKvIOException.class);
            assertThatThrownBy(() -> db.put(TestKeys.key(2), TestKeys.key(2))).isInstanceOf(BloomKvException.class);
        } finally {
            try {
                db.close();
            } catch (BloomKvException closeAfterError) {
                // closing a database whose writes stopped may report the error again
            }
        }
        assertThat(rec.violations).isEmpty();
    }

    /**
     * A compactRange that fails reading or writing a table is treated as a background compaction's failure: reported
     * as recoverable, and a listener that ignores it leaves writes going; otherwise they stop.
     */
    @Test
    void aCompactRangeErrorIsReportedAndMayBeIgnoredAsABackgroundOne() {
        for (boolean ignore : new boolean[] {true, false}) {
            Recorder rec = new Recorder();
            rec.ignoreErrors = ignore;
            FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
            String caller = Thread.currentThread().getName();
            Path d = dir.resolve("compact-range-" + ignore);
            try (Db db = Db.open(d, small(fs).autoCompaction(false).listeners(rec))) {
                rec.db.set(db);
                for (int i = 0; i < 3000; i++) {
                    db.put(TestKeys.key(i % 1000), TestKeys.key(i));
                }
                db.flush();
                FaultInjectingFileSystem.Fault fault = fs.injectNth(
                        FaultInjectingFileSystem.on(Op.CREATE, "*.sst")
                                .and((op, p) -> Thread.currentThread().getName().equals(caller)),
                        1);
                assertThatThrownBy(() -> db.compactRange(null, null)).isInstanceOf(BloomKvIOException.class);
                assertThat(fault.fired()).isEqualTo(1);
                fault.remove();
                List<EventListener.BackgroundErrorInfo> errors = rec.of(EventListener.BackgroundErrorInfo.class);
                assertThat(errors)
                        .as("asked on the caller's thread before compactRange throws")
                        .hasSize(1);
                assertThat(errors.get(0).operation()).isEqualTo("compaction");
                assertThat(errors.get(0).recoverable()).isTrue();
                if (ignore) {
                    db.put(TestKeys.key(0), TestKeys.key(9999));
                    assertThat(db.property("bloomkv.background-errors")).hasValue("0");
                    db.compactRange(null, null);
                    assertThat(db.get(TestKeys.key(0))).isEqualTo(TestKeys.key(9999));
                    assertThat(db.get(TestKeys.key(999))).isEqualTo(TestKeys.key(2999));
                } else {
                    assertWritesStopped(db);
                }
            } catch (BloomKvException closeAfterError) {
                assertThat(ignore)
                        .as("only the unignored run may fail at close")
                        .isFalse();
            }
            assertThat(rec.violations).as("ignore " + ignore).isEmpty();
        }
    }

    /**
     * A compactRange whose MANIFEST write fails is told to the listeners on the caller's thread, unrecoverable, once,
     * as a background compaction's is (and so reaches the info log's ERROR line); the error is recorded once.
     */
    @Test
    void aCompactRangeManifestFailureIsReported() {
        Recorder rec = new Recorder();
        FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
        String caller = Thread.currentThread().getName();
        Db db = Db.open(dir, small(fs).autoCompaction(false).listeners(rec));
        try {
            rec.db.set(db);
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 200; i++) {
                    db.put(TestKeys.key(i), TestKeys.key(round * 1000 + i));
                }
                db.flush();
            }
            FaultInjectingFileSystem.Fault fault = fs.inject(FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*")
                    .and((op, p) -> Thread.currentThread().getName().equals(caller)));
            Throwable thrown;
            try {
                thrown = org.assertj.core.api.Assertions.catchThrowable(() -> db.compactRange(null, null));
            } finally {
                fault.remove();
            }
            assertThat(thrown).isInstanceOf(BloomKvIOException.class);
            assertThat(oneUnrecoverableCompactionError(rec, db).error()).isSameAs(thrown);
        } finally {
            closeAfterError(db);
        }
        assertThat(rec.violations).isEmpty();
    }

    /**
     * A compactRange that finds a corrupt table is a background compaction's failure, as in RocksDB (whose manual
     * compaction reports OnBackgroundError with reason COMPACTION and status Corruption, and then refuses writes):
     * the listeners are told, unrecoverable, and writes stop, as they do when the background thread finds it. Before,
     * only I/O errors were: the CorruptionException went to the caller alone, writes went on.
     */
    @Test
    void aCompactRangeThatFindsACorruptTableStopsWritesAsABackgroundOneDoes() throws IOException {
        Options o = small(FileSystem.disk()).autoCompaction(false).blockCacheSize(0);
        try (Db db = Db.open(dir, o)) {
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 200; i++) {
                    db.put(TestKeys.key(i), TestKeys.key(round * 1000 + i));
                }
                db.flush(); // two overlapping level-0 tables: the range compaction reads both
            }
        }
        Path older;
        try (java.util.stream.Stream<Path> s = java.nio.file.Files.list(dir)) {
            older = s.filter(p -> p.toString().endsWith(".sst"))
                    .sorted()
                    .findFirst()
                    .orElseThrow();
        }
        byte[] b = java.nio.file.Files.readAllBytes(older);
        b[10] ^= 0x5A; // in the first data block
        java.nio.file.Files.write(older, b);
        Recorder rec = new Recorder();
        rec.ignoreErrors = true; // asked, but an unrecoverable error is not ignored
        Db db = Db.open(dir, o.listeners(rec)); // outside the catch below: an open that failed would fail the test
        try {
            rec.db.set(db);
            assertThatThrownBy(() -> db.compactRange(null, null)).isInstanceOf(CorruptionException.class);
            assertThat(oneUnrecoverableCompactionError(rec, db).error()).isInstanceOf(CorruptionException.class);
        } finally {
            closeAfterError(db);
        }
        assertThat(rec.violations).isEmpty();
    }

    /**
     * The one background error the listeners were asked about, on the caller's thread before compactRange threw:
     * a compaction's, unrecoverable; writes stopped.
     */
    private static EventListener.BackgroundErrorInfo oneUnrecoverableCompactionError(Recorder rec, Db db) {
        List<EventListener.BackgroundErrorInfo> errors = rec.of(EventListener.BackgroundErrorInfo.class);
        assertThat(errors)
                .as("asked on the caller's thread before compactRange throws")
                .hasSize(1);
        assertThat(errors.get(0).operation()).isEqualTo("compaction");
        assertThat(errors.get(0).recoverable()).isFalse();
        assertWritesStopped(db);
        return errors.get(0);
    }

    private static void closeAfterError(Db db) {
        try {
            db.close();
        } catch (BloomKvException closeAfterError) {
            // closing a database whose writes stopped may report the error again
        }
    }

    /** The background error is set and writes fail. */
    private static void assertWritesStopped(Db db) {
        assertThat(db.property("bloomkv.background-errors")).hasValue("1");
        assertThatThrownBy(() -> db.put(TestKeys.key(1), TestKeys.key(1))).isInstanceOf(BloomKvException.class);
    }

    private static void waitForError(Db db) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (db.property("bloomkv.background-errors").orElseThrow().equals("0") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
    }

    /** Throws {@code t} unchecked, as a Kotlin or Scala listener may throw a checked exception. */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }

    /** A listener that throws from every callback: an Error (a failed assertion) or an undeclared checked exception. */
    static final class Thrower implements EventListener {
        @Override
        public void onFlushBegin(FlushInfo info) {
            throw new AssertionError("listener assertion failed");
        }

        @Override
        public void onFlushCompleted(FlushCompletedInfo info) {
            throw sneaky(new IOException("checked, undeclared"));
        }

        @Override
        public void onTableFileCreated(TableFileCreatedInfo info) {
            throw new StackOverflowError("deep listener");
        }

        @Override
        public boolean onBackgroundError(BackgroundErrorInfo info) {
            throw new AssertionError("listener assertion failed");
        }
    }

    /**
     * Whatever a listener throws, an Error or an undeclared checked exception included, changes nothing (the
     * documented contract): the listeners after it still get every event, and a failed flush still becomes the
     * background error. Before, only RuntimeExceptions were caught: the event thread died at the first Error (no event
     * of any listener delivered after it), and an Error from onBackgroundError ended the flush thread before it
     * recorded the error, so flush() waited forever.
     */
    @Test
    void whateverAListenerThrowsChangesNothing() throws Exception {
        Recorder rec = new Recorder();
        FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
        java.util.concurrent.ExecutorService caller = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            Db db = Db.open(dir, small(fs).autoCompaction(false).listeners(new Thrower(), rec));
            try {
                rec.db.set(db);
                for (int round = 0; round < 2; round++) {
                    db.put(TestKeys.key(round), TestKeys.key(round));
                    db.flush();
                }
                db.put(TestKeys.key(2), TestKeys.key(2));
                fs.injectNth(FaultInjectingFileSystem.on(Op.CREATE, "*.sst"), 1);
                java.util.concurrent.Future<?> failedFlush = caller.submit(db::flush);
                // generous: a flush of one key; before the fix it never returned
                assertThatThrownBy(() -> failedFlush.get(60, java.util.concurrent.TimeUnit.SECONDS))
                        .as("a flush whose failure a listener threw on fails, it does not hang")
                        .isInstanceOf(java.util.concurrent.ExecutionException.class)
                        .hasCauseInstanceOf(BloomKvException.class);
                assertThat(db.property("bloomkv.background-errors")).hasValue("1");
            } finally {
                try {
                    db.close();
                } catch (BloomKvException afterError) {
                    // closing a database whose writes stopped may report the error again
                }
            }
        } finally {
            caller.shutdownNow();
        }
        assertThat(rec.violations).isEmpty();
        assertThat(rec.of(EventListener.FlushCompletedInfo.class))
                .as("the next listener still got every flush")
                .hasSize(2);
        assertThat(rec.of(EventListener.TableFileCreatedInfo.class)).hasSize(2);
        assertThat(rec.of(EventListener.FlushInfo.class)).hasSize(3);
        List<EventListener.BackgroundErrorInfo> errors = rec.of(EventListener.BackgroundErrorInfo.class);
        assertThat(errors).hasSize(1);
        assertThat(errors.get(0).operation()).isEqualTo("flush");
    }

    /**
     * A listener whose onTableFileCreated throws still gets onFlushCompleted and onCompactionCompleted, and every table
     * created: each callback is its own event. Before, a flush's (or a compaction's) tables and its completion were one
     * event per listener, so the first throw lost that listener's completion and the rest of the tables.
     */
    @Test
    void aThrowingCallbackDoesNotCostTheListenerItsOtherCallbacks() {
        List<Long> created = new CopyOnWriteArrayList<>();
        List<Object> completed = new CopyOnWriteArrayList<>();
        EventListener listener = new EventListener() {
            @Override
            public void onTableFileCreated(TableFileCreatedInfo info) {
                created.add(info.number());
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void onFlushCompleted(FlushCompletedInfo info) {
                completed.add(info);
            }

            @Override
            public void onCompactionCompleted(CompactionCompletedInfo info) {
                completed.add(info);
            }
        };
        long flushes;
        long compactions;
        int outputs = 0;
        try (Db db = Db.open(dir, small(FileSystem.disk()).listeners(listener))) {
            for (int i = 0; i < 6000; i++) {
                db.put(TestKeys.key(i % 1500), TestKeys.key(i));
            }
            db.flush();
            db.waitForBackgroundWork();
            flushes = db.stats().flushes();
            compactions = db.stats().compactions();
        }
        List<EventListener.CompactionCompletedInfo> compacted = new ArrayList<>();
        long flushCompletions = 0;
        for (Object o : completed) {
            if (o instanceof EventListener.CompactionCompletedInfo c) {
                compacted.add(c);
                outputs += c.trivialMove() ? 0 : c.outputs().size();
            } else {
                flushCompletions++;
            }
        }
        assertThat(flushCompletions).isEqualTo(flushes);
        assertThat(compacted.stream().filter(c -> !c.trivialMove()).count())
                .isEqualTo(compactions)
                .isPositive();
        assertThat(created).as("every table of every flush and compaction").hasSize((int) flushes + outputs);
    }

    /**
     * A listener that interrupts the event thread (by mistake, or through a blocking call of its own) costs no event:
     * the thread used to end at its next wait, and every later event of every listener was lost.
     */
    @Test
    void aListenerThatInterruptsTheEventThreadLosesNoLaterEvent() throws Exception {
        List<Long> flushed = new CopyOnWriteArrayList<>();
        List<Boolean> interruptedOnEntry = new CopyOnWriteArrayList<>();
        EventListener interrupter = new EventListener() {
            @Override
            public void onFlushCompleted(FlushCompletedInfo info) {
                Thread.currentThread().interrupt();
            }
        };
        EventListener counter = new EventListener() {
            @Override
            public void onFlushCompleted(FlushCompletedInfo info) {
                interruptedOnEntry.add(Thread.currentThread().isInterrupted());
                flushed.add(info.walNumber());
            }
        };
        long flushes;
        try (Db db = Db.open(dir, Options.defaults().listeners(interrupter, counter))) {
            for (int round = 0; round < 3; round++) {
                db.put(TestKeys.key(round), TestKeys.key(round));
                db.flush();
                // flush() returns once the flush is recorded; its event may still be queued: wait for it
                long expected = round + 1;
                long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
                while (flushed.size() < expected && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
            }
            flushes = db.stats().flushes();
        }
        assertThat(flushes).isEqualTo(3);
        assertThat(flushed).as("every flush reported after the first interrupt").hasSize(3);
        assertThat(interruptedOnEntry)
                .as("the next listener does not inherit the interrupt")
                .containsOnly(false);
    }

    /**
     * A flushed table is announced (onTableFileCreated, onFlushCompleted) before any compaction that reads it begins.
     * The flush installs its Version, then drops its memtable under the mutex (closing its WAL), then queued its
     * events; a compaction thread that had just finished another compaction could pick the new table in between and
     * queue its onCompactionBegin first (and more: its whole compaction needs the mutex only at its end). The hooks
     * below hold each thread in that window: the compaction thread in its obsolete-file pass after a compaction
     * (outside the mutex, about to pick again), the flush thread in the close of the flushed memtable's WAL; the
     * compaction thread is let go first and the flush thread once the next compaction writes its output.
     */
    @Test
    void aFlushedTableIsAnnouncedBeforeACompactionReadsIt() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        EventListener listener = new EventListener() {
            @Override
            public void onTableFileCreated(TableFileCreatedInfo info) {
                order.add("created " + info.number());
            }

            @Override
            public void onCompactionBegin(CompactionInfo info) {
                order.add("compaction " + info.inputs());
            }
        };
        java.util.concurrent.CountDownLatch compactorHeld = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch releaseCompactor = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch flusherHeld = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch releaseFlusher = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch nextCompactionWrites = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean holdCompactor = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean holdFlusher = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicReference<Db> dbRef = new AtomicReference<>();
        FileSystem hooked = new ForwardingFileSystem(FileSystem.disk()) {
            @Override
            public List<Path> list(Path d) throws IOException {
                Db db = dbRef.get();
                if (db != null
                        && Thread.currentThread().getName().startsWith("bloomkv-compact")
                        && !db.mutexHeldByCurrentThread()
                        && holdCompactor.compareAndSet(true, false)) {
                    compactorHeld.countDown();
                    await(releaseCompactor);
                }
                return super.list(d);
            }

            @Override
            public WritableFile newWritableFile(Path p) throws IOException {
                if (p.toString().endsWith(".sst")
                        && Thread.currentThread().getName().startsWith("bloomkv-compact")
                        && releaseCompactor.getCount() == 0) {
                    nextCompactionWrites.countDown();
                }
                WritableFile f = super.newWritableFile(p);
                if (!p.toString().endsWith(".log")) {
                    return f;
                }
                return new ForwardingWritableFile(f) {
                    @Override
                    public void close() throws IOException {
                        if (Thread.currentThread().getName().startsWith("bloomkv-flush")
                                && holdFlusher.compareAndSet(true, false)) {
                            flusherHeld.countDown();
                            await(releaseFlusher);
                        }
                        super.close();
                    }
                };
            }
        };
        Options o = small(hooked).useMmapWal(false).l0CompactionTrigger(1).listeners(listener);
        java.util.concurrent.ExecutorService flushCaller = java.util.concurrent.Executors.newSingleThreadExecutor();
        try (Db db = Db.open(dir, o)) {
            dbRef.set(db);
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 100; i++) { // less than a memtable: only the flush() switches it
                    db.put(TestKeys.key(i), TestKeys.key(round * 1000 + i));
                }
                if (round == 1) {
                    // the compaction of this round's table stops before it picks again (none other runs now)
                    db.waitForBackgroundWork();
                    holdCompactor.set(true);
                }
                db.flush();
            }
            assertThat(compactorHeld.await(60, java.util.concurrent.TimeUnit.SECONDS))
                    .isTrue();
            for (int i = 0; i < 100; i++) {
                db.put(TestKeys.key(i), TestKeys.key(2000 + i));
            }
            holdFlusher.set(true);
            java.util.concurrent.Future<?> flushed = flushCaller.submit(db::flush);
            assertThat(flusherHeld.await(60, java.util.concurrent.TimeUnit.SECONDS))
                    .isTrue();
            releaseCompactor.countDown();
            // the compactor picks the new table (level 0 at its trigger) and writes its output meanwhile
            assertThat(nextCompactionWrites.await(60, java.util.concurrent.TimeUnit.SECONDS))
                    .isTrue();
            releaseFlusher.countDown();
            flushed.get(60, java.util.concurrent.TimeUnit.SECONDS);
            db.waitForBackgroundWork();
        } finally {
            releaseCompactor.countDown();
            releaseFlusher.countDown();
            flushCaller.shutdownNow();
        }
        Set<String> created = new HashSet<>();
        int compactions = 0;
        for (String e : order) {
            if (e.startsWith("created ")) {
                created.add(e.substring("created ".length()));
                continue;
            }
            compactions++;
            String inputs = e.substring("compaction [".length(), e.length() - 1);
            for (String n : inputs.split(", ")) {
                assertThat(created)
                        .as("input " + n + " of \"" + e + "\" announced before; events " + order)
                        .contains(n);
            }
        }
        assertThat(compactions).isGreaterThanOrEqualTo(3);
    }

    private static void await(java.util.concurrent.CountDownLatch latch) {
        try {
            if (!latch.await(120, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("test hook: not released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void listenersAreCheckedAndCopied() {
        assertThatThrownBy(() -> Options.defaults().listeners((EventListener) null))
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> Options.defaults().listeners((EventListener[]) null))
                .isInstanceOf(InvalidArgumentException.class);
        Recorder r = new Recorder();
        Options o = Options.defaults().listeners(r);
        assertThat(o.copy().listeners()).containsExactly(r);
        assertThat(Collections.unmodifiableList(o.listeners())).hasSize(1);
    }
}
