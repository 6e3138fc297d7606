package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Fault;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.version.FileNames;
import io.bloomkv.engine.internal.version.TableCache;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Db#close} deletes the files that are obsolete once its background work has stopped, before it releases the
 * tables, the MANIFEST and the lock (RocksDB's {@code DBImpl::CloseHelper}: {@code FindObsoleteFiles(force=true)} and
 * {@code PurgeObsoleteFiles}): what the last install made obsolete, what iterators left open still read, what an
 * earlier pass failed to delete. After close the directory holds exactly the files the MANIFEST (read here with a
 * {@link VersionSet}, without opening the database, whose open would delete them too) still needs. A deletion that
 * fails there is logged, as RocksDB's close logs it, and every resource and the lock are released; a read-only
 * database, and one
 * whose writes a background error stopped, delete nothing at close.
 */
class CloseDeletesObsoleteFilesTest {
    @TempDir
    Path dir;

    @TempDir
    Path external;

    private long tablesBefore;
    private long filterBytesBefore;

    @BeforeEach
    void countOpenTables() {
        tablesBefore = TableReader.liveTables();
        filterBytesBefore = TableReader.liveFilterBytes();
    }

    @AfterEach
    void noTableLeftOpen() {
        assertThat(TableReader.liveTables()).as("no table left open").isEqualTo(tablesBefore);
        assertThat(TableReader.liveFilterBytes()).as("no filter left allocated").isEqualTo(filterBytesBefore);
    }

    private static void put(Db db, int from, int to) {
        for (int i = from; i < to; i++) {
            db.put(bytes(String.format("k%06d", i)), bytes("v" + i));
        }
    }

    /** What the MANIFEST of a closed database needs: its tables, its log number, its MANIFEST number. */
    record Needed(TreeSet<Long> tables, long logNumber, long manifest) {}

    /** Reads CURRENT and the MANIFEST only: no file is deleted, as opening the database would. */
    static Needed needed(Path d) throws IOException {
        try (TableCache tables = new TableCache(FileSystem.disk(), d, null, new ReadCounters())) {
            VersionSet vs = new VersionSet(FileSystem.disk(), d, Options.defaults(), tables, () -> {});
            vs.recover();
            try {
                return new Needed(new TreeSet<>(vs.liveFiles()), vs.logNumber(), vs.manifestNumber());
            } finally {
                vs.close();
            }
        }
    }

    /** The database files of {@code d} of {@code kind}, by number. */
    static TreeSet<Long> onDisk(Path d, FileNames.Kind kind) throws IOException {
        TreeSet<Long> out = new TreeSet<>();
        try (Stream<Path> files = Files.list(d)) {
            files.map(p -> FileNames.parse(p.getFileName().toString()))
                    .filter(p -> p != null && p.kind() == kind)
                    .forEach(p -> out.add(p.number()));
        }
        return out;
    }

    /** Names of every file in {@code d}. */
    static TreeSet<String> names(Path d) throws IOException {
        TreeSet<String> out = new TreeSet<>();
        try (Stream<Path> files = Files.list(d)) {
            files.forEach(p -> out.add(p.getFileName().toString()));
        }
        return out;
    }

    /** The closed database in {@code d} holds no obsolete table, WAL, MANIFEST or temp file. */
    static void assertNoObsoleteFile(Path d, String when) throws IOException {
        Needed n = needed(d);
        assertThat(onDisk(d, FileNames.Kind.TABLE))
                .as(when + ": tables on disk = tables the MANIFEST names")
                .isEqualTo(n.tables());
        assertThat(onDisk(d, FileNames.Kind.LOG))
                .as(when + ": WALs on disk (log number " + n.logNumber() + ")")
                .isNotEmpty()
                .allMatch(number -> number >= n.logNumber());
        assertThat(onDisk(d, FileNames.Kind.MANIFEST)).as(when + ": MANIFESTs").containsExactly(n.manifest());
        assertThat(onDisk(d, FileNames.Kind.TEMP)).as(when + ": temp files").isEmpty();
    }

    /** True when an obsolete table or WAL is on disk. */
    static boolean hasObsoleteFile(Path d) throws IOException {
        Needed n = needed(d);
        return !n.tables().containsAll(onDisk(d, FileNames.Kind.TABLE))
                || onDisk(d, FileNames.Kind.LOG).first() < n.logNumber();
    }

    /**
     * A flush that finishes while close waits for it: its install makes the flushed memtable's WAL obsolete, and its
     * own pass no longer runs (close stopped passes before it joined the flush thread). Close's pass deletes the WAL.
     */
    @Test
    void aFlushFinishingDuringCloseLeavesNoObsoleteWal() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean armed = new AtomicBoolean(true);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        // Never fails: holds the flush thread as it creates its table, until released.
        fs.inject((op, p) -> {
            if (op == Op.CREATE
                    && p.getFileName().toString().endsWith(".sst")
                    && Thread.currentThread().getName().startsWith("bloomkv-flush")
                    && armed.compareAndSet(true, false)) {
                entered.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        });
        Options options = Options.defaults().autoCompaction(false).fileSystem(fs);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Db db = Db.open(dir, options);
            Future<?> flushed;
            Future<?> closed;
            try {
                put(db, 0, 1000);
                // Hands the memtable to the flush thread, which is held; this call waits for it.
                flushed = pool.submit(db::flush);
                assertThat(entered.await(60, TimeUnit.SECONDS))
                        .as("the flush began")
                        .isTrue();
                Thread[] t = new Thread[1];
                CountDownLatch started = new CountDownLatch(1);
                closed = pool.submit(() -> {
                    t[0] = Thread.currentThread();
                    started.countDown();
                    db.close();
                });
                started.await();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!waitsForTheFlushThread(t[0]) && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertThat(waitsForTheFlushThread(t[0]))
                        .as("close waits for the flush")
                        .isTrue();
            } finally {
                release.countDown();
            }
            closed.get(60, TimeUnit.SECONDS);
            try {
                flushed.get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                // flush() sees the database closing (close marks it before it waits for the flush thread)
                assertThat(e.getCause()).isInstanceOf(DbClosedException.class);
            }
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
        assertNoObsoleteFile(dir, "after a flush that finished during close");
        try (Db ro = Db.open(dir, Options.defaults().readOnly(true))) {
            assertThat(ro.tables())
                    .as("the flush that finished during close installed its table")
                    .hasSize(1);
        }
        try (Db reopened = Db.open(dir, Options.defaults())) {
            for (int i = 0; i < 1000; i += 7) {
                assertThat(reopened.get(bytes(String.format("k%06d", i)))).isEqualTo(bytes("v" + i));
            }
        }
    }

    private static boolean waitsForTheFlushThread(Thread t) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals(Flusher.class.getName())
                    && e.getMethodName().equals("join")) {
                return true;
            }
        }
        return false;
    }

    /** Tables and WALs that a pass failed to delete (left for the next pass) are deleted by close's pass. */
    @Test
    void closeDeletesWhatAFailedPassLeft() throws IOException {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options = Options.defaults().autoCompaction(false).fileSystem(fs);
        try (Db db = Db.open(dir, options)) {
            Fault noDeletes = fs.inject(FaultInjectingFileSystem.on(Op.DELETE));
            put(db, 0, 100);
            db.flush();
            put(db, 50, 150);
            db.flush();
            db.compactRange(null, null);
            noDeletes.remove();
            assertThat(noDeletes.fired()).as("deletions failed").isPositive();
            assertThat(db.tables()).hasSize(1);
            assertThat(onDisk(dir, FileNames.Kind.TABLE))
                    .as("the compaction's inputs are left")
                    .hasSize(3);
            assertThat(onDisk(dir, FileNames.Kind.LOG))
                    .as("the flushed WALs are left")
                    .hasSizeGreaterThan(1);
        }
        assertNoObsoleteFile(dir, "after close");
    }

    /**
     * Tables only an iterator left open reads stay while it is open; close invalidates the iterator and deletes them.
     * The pass that closing an iterator runs is stopped then: close's own pass deletes them.
     */
    @Test
    void closeDeletesTheTablesOfIteratorsItInvalidates() throws IOException {
        List<Long> deleted = java.util.Collections.synchronizedList(new ArrayList<>());
        EventListener recorder = new EventListener() {
            @Override
            public void onTableFileDeleted(TableFileDeletedInfo info) {
                deleted.add(info.number());
            }
        };
        Options options = Options.defaults().autoCompaction(false).listeners(recorder);
        TreeSet<Long> inputs = new TreeSet<>();
        DbIterator left;
        try (Db db = Db.open(dir, options)) {
            put(db, 0, 100);
            db.flush();
            put(db, 50, 150);
            db.flush();
            db.tables().forEach(t -> inputs.add(t.fileNumber()));
            left = db.iterator();
            left.seekToFirst();
            db.compactRange(null, null);
            assertThat(onDisk(dir, FileNames.Kind.TABLE))
                    .as("read by the iterator")
                    .containsAll(inputs);
        }
        assertThatThrownBy(left::seekToFirst).isInstanceOf(DbClosedException.class);
        assertNoObsoleteFile(dir, "after close");
        assertThat(deleted)
                .as("onTableFileDeleted, delivered before close returned")
                .containsAll(inputs);
    }

    /**
     * Every deletion of close's pass fails (or its listing does): close logs it and does not throw (RocksDB's close
     * only logs a failed deletion), and still releases every table, filter and the lock; the files it left are
     * obsolete, and the next open deletes them.
     */
    @ParameterizedTest
    @EnumSource(
            value = Op.class,
            names = {"DELETE", "LIST"})
    void aFailingPassAtCloseStillReleasesEverything(Op failing) throws IOException {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options = Options.defaults().autoCompaction(false).fileSystem(fs);
        Db db = Db.open(dir, options);
        Fault fault;
        try {
            put(db, 0, 100);
            db.flush();
            put(db, 50, 150);
            db.flush();
            DbIterator left = db.iterator(); // keeps the compaction's inputs until close
            left.seekToFirst();
            db.compactRange(null, null);
            put(db, 150, 160); // in the WAL only
        } finally {
            fault = fs.inject(FaultInjectingFileSystem.on(failing));
        }
        try {
            db.close(); // the failure is logged, not thrown
        } finally {
            fault.remove();
        }
        assertThat(fault.fired()).isPositive();
        assertThat(db.toString()).contains("closed");
        assertThat(TableReader.liveTables()).as("every table released").isEqualTo(tablesBefore);
        assertThat(TableReader.liveFilterBytes()).as("every filter released").isEqualTo(filterBytesBefore);
        assertThatThrownBy(() -> db.get(bytes("k000001"))).isInstanceOf(DbClosedException.class);
        db.close(); // idempotent
        assertThat(hasObsoleteFile(dir)).as("the compaction's inputs were left").isTrue();
        try (Db reopened = Db.open(dir, options)) { // the lock was released
            for (int i = 0; i < 160; i++) {
                assertThat(reopened.get(bytes(String.format("k%06d", i)))).isEqualTo(bytes("v" + i));
            }
        }
        assertNoObsoleteFile(dir, "after the next open and its close");
    }

    /**
     * A checkpoint that runs across close: it retained its Version and pinned its WALs before close began, and reads
     * them after close returned. Meanwhile a flush made its WAL obsolete and a compaction its table, so close's pass
     * sees both as obsolete but for the pin and the retained Version, and must keep them: the checkpoint then holds
     * every write acknowledged before it began (without the pin, the WAL's writes would be silently missing: the
     * checkpoint copies the WALs it finds). They stay on disk after close (the passes are stopped) until the next open.
     */
    @Test
    void aCheckpointRunningAcrossCloseKeepsItsWalsAndTables() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean armed = new AtomicBoolean(false);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        // Never fails: holds the checkpoint at its first table link, after it pinned the WALs, until released.
        fs.inject((op, p) -> {
            if (op == Op.LINK && armed.compareAndSet(true, false)) {
                entered.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        });
        Path target = external.resolve("checkpoint");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Db db = Db.open(dir, Options.defaults().autoCompaction(false).fileSystem(fs));
            Future<?> checkpoint;
            try {
                put(db, 0, 100);
                db.flush(); // the table the checkpoint links
                put(db, 100, 200); // in the WAL only: the WAL the checkpoint copies
                armed.set(true);
                checkpoint = pool.submit(() -> db.checkpoint(target));
                assertThat(entered.await(60, TimeUnit.SECONDS))
                        .as("the checkpoint began")
                        .isTrue();
                put(db, 200, 300);
                db.flush(); // the checkpoint's WAL is now below the log number
                for (int i = 0; i < 100; i++) {
                    db.put(bytes(String.format("k%06d", i)), bytes("w" + i));
                }
                db.flush();
                db.compactRange(null, null); // the checkpoint's table is now in no current Version
            } finally {
                db.close();
                release.countDown();
            }
            checkpoint.get(60, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
        assertThat(hasObsoleteFile(dir))
                .as("the checkpoint's WAL and table, kept by close's pass, are left for the next open")
                .isTrue();
        try (Db copy = Db.open(target, Options.defaults())) {
            for (int i = 0; i < 300; i++) {
                assertThat(copy.get(bytes(String.format("k%06d", i))))
                        .as("k%06d in the checkpoint", i)
                        .isEqualTo(i < 200 ? bytes("v" + i) : null);
            }
        }
        try (Db reopened = Db.open(dir, Options.defaults())) {
            assertThat(reopened.get(bytes("k000001"))).isEqualTo(bytes("w1"));
            assertThat(reopened.get(bytes("k000299"))).isEqualTo(bytes("v299"));
        }
        assertNoObsoleteFile(dir, "after the next open and its close");
    }

    /** A read-only database deletes nothing at close, obsolete files included. */
    @Test
    void aReadOnlyCloseDeletesNothing() throws IOException {
        leaveObsoleteFiles();
        TreeSet<String> before = names(dir);
        try (Db ro = Db.open(dir, Options.defaults().readOnly(true))) {
            assertThat(ro.get(bytes("k000001"))).isEqualTo(bytes("v1"));
        }
        assertThat(names(dir)).as("a read-only open and close change nothing").isEqualTo(before);
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(db.get(bytes("k000001"))).isEqualTo(bytes("v1"));
        }
        assertNoObsoleteFile(dir, "after a read-write open and close");
    }

    /**
     * After a background error close deletes nothing (a failed MANIFEST write may have reached the disk naming files no
     * live Version names): the next open, which reads the MANIFEST, does.
     */
    @Test
    void aCloseAfterABackgroundErrorDeletesNothing() throws IOException {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options = Options.defaults().autoCompaction(false).fileSystem(fs);
        Db db = Db.open(dir, options);
        try {
            Fault noDeletes = fs.inject(FaultInjectingFileSystem.on(Op.DELETE));
            put(db, 0, 100);
            db.flush();
            put(db, 50, 150);
            db.flush();
            db.compactRange(null, null);
            noDeletes.remove();
            put(db, 150, 160);
            Fault noTables = fs.inject(FaultInjectingFileSystem.on(Op.CREATE, "*.sst"));
            try {
                assertThatThrownBy(db::flush).isInstanceOf(BloomKvException.class);
            } finally {
                noTables.remove();
            }
            assertThat(db.property("bloomkv.background-errors")).contains("1");
        } finally {
            try {
                db.close();
            } catch (BloomKvException reported) {
                // a database whose writes stopped may report the error again at close
            }
        }
        assertThat(hasObsoleteFile(dir))
                .as("obsolete files left for the next open")
                .isTrue();
        try (Db reopened = Db.open(dir, options)) {
            for (int i = 0; i < 160; i++) {
                assertThat(reopened.get(bytes(String.format("k%06d", i)))).isEqualTo(bytes("v" + i));
            }
        }
        assertNoObsoleteFile(dir, "after the next open and its close");
    }

    /**
     * A pass in progress on another thread (the one an ingestion runs after its install, outside every engine lock)
     * when close begins: close waits for it, so that no pass lists, deletes or closes a reader once close returned
     * (and the lock with it).
     */
    @Test
    void closeWaitsForAPassInProgress() throws Exception {
        ObsoleteFilesOffMutexTest.PassHoldingFileSystem fs = new ObsoleteFilesOffMutexTest.PassHoldingFileSystem();
        Options options = Options.defaults().autoCompaction(false).fileSystem(fs);
        Path file = external.resolve("a.sst");
        try (TableFileWriter w = TableFileWriter.create(file, options)) {
            for (int i = 900000; i < 900100; i++) {
                w.put(bytes(String.format("k%06d", i)), bytes("x"));
            }
            w.finish();
        }
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Db db = Db.open(dir, options);
            put(db, 0, 100);
            db.flush();
            Future<?> ingest = pool.submit(() -> {
                fs.holdOn.set(Thread.currentThread());
                db.ingest(List.of(file), IngestOptions.defaults());
            });
            Future<?> close;
            try {
                assertThat(fs.entered.await(60, TimeUnit.SECONDS))
                        .as("the ingestion's pass began")
                        .isTrue();
                close = pool.submit(db::close);
                assertThatThrownBy(() -> close.get(500, TimeUnit.MILLISECONDS))
                        .as("close returned while a pass was in progress")
                        .isInstanceOf(TimeoutException.class);
            } finally {
                fs.release.countDown();
            }
            close.get(60, TimeUnit.SECONDS);
            ingest.get(60, TimeUnit.SECONDS);
        } finally {
            fs.release.countDown();
            pool.shutdownNow();
        }
        assertNoObsoleteFile(dir, "after close");
        try (Db reopened = Db.open(dir, Options.defaults())) {
            assertThat(reopened.get(bytes("k900050"))).isEqualTo(bytes("x"));
            assertThat(reopened.get(bytes("k000050"))).isEqualTo(bytes("v50"));
        }
    }

    /** A closed database in {@link #dir} whose compaction inputs and flushed WALs are still on disk. */
    private void leaveObsoleteFiles() throws IOException {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Db db = Db.open(dir, Options.defaults().autoCompaction(false).fileSystem(fs));
        Fault noDeletes = fs.inject(FaultInjectingFileSystem.on(Op.DELETE));
        try {
            put(db, 0, 100);
            db.flush();
            put(db, 50, 150);
            db.flush();
            db.compactRange(null, null);
            db.close(); // its pass's deletions fail: logged, left on disk
        } finally {
            noDeletes.remove();
            db.close();
        }
        assertThat(hasObsoleteFile(dir)).as("obsolete files left").isTrue();
    }
}
