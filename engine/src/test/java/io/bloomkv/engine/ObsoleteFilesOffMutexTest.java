package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Obsolete files are never deleted (nor the directory listed for a deletion pass) on a thread holding the database
 * mutex: not by flushes, compactions (background or {@link Db#compactRange}), memtable switches in the write path,
 * ingestion, {@link Db#deleteFilesInRange}, iterator close or close. And they are still deleted promptly: when
 * {@link Db#flush}, {@link Db#compactRange} and {@link Db#waitForBackgroundWork} return, when the last iterator on an
 * old Version is closed, and by close.
 */
class ObsoleteFilesOffMutexTest {
    @TempDir
    Path dir;

    @TempDir
    Path external;

    @AfterEach
    void noTableLeftOpen() {
        assertThat(TableReader.liveTables()).as("no table left open").isZero();
    }

    /** Records every delete made while the calling thread holds the mutex of the database in {@link #db}. */
    static final class MutexWatchingFileSystem extends ForwardingFileSystem {
        final AtomicReference<Db> db = new AtomicReference<>();
        final List<String> underMutex = Collections.synchronizedList(new ArrayList<>());
        final java.util.concurrent.atomic.AtomicInteger deletes = new java.util.concurrent.atomic.AtomicInteger();

        MutexWatchingFileSystem() {
            super(FileSystem.disk());
        }

        @Override
        public void delete(Path p) throws IOException {
            check("delete " + p.getFileName());
            deletes.incrementAndGet();
            super.delete(p);
        }

        /** A pass lists the directory first: one under the mutex is caught even when it finds nothing to delete. */
        @Override
        public List<Path> list(Path d) throws IOException {
            check("list " + d.getFileName());
            return super.list(d);
        }

        private void check(String what) {
            Db d = db.get();
            if (d != null && d.mutexHeldByCurrentThread()) {
                StringBuilder sb =
                        new StringBuilder(what + " on " + Thread.currentThread().getName());
                for (StackTraceElement e : new Throwable().getStackTrace()) {
                    if (e.getClassName().startsWith("io.bloomkv.engine")
                            && !e.getClassName().contains("Test")) {
                        sb.append("\n    at ").append(e);
                    }
                }
                underMutex.add(sb.toString());
            }
        }
    }

    private static void put(Db db, int from, int to) {
        for (int i = from; i < to; i++) {
            db.put(bytes(String.format("k%06d", i)), new byte[100]);
        }
    }

    private Path externalFile(String name, int from, int to, Options options) {
        Path p = external.resolve(name);
        try (TableFileWriter w = TableFileWriter.create(p, options)) {
            for (int i = from; i < to; i++) {
                w.put(bytes(String.format("k%06d", i)), new byte[50]);
            }
            w.finish();
        }
        return p;
    }

    private static TreeSet<Long> onDisk(Path d, String suffix) throws IOException {
        TreeSet<Long> out = new TreeSet<>();
        try (Stream<Path> files = Files.list(d)) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(suffix))
                    .forEach(n -> out.add(Long.parseLong(n.substring(0, n.indexOf('.')))));
        }
        return out;
    }

    private static TreeSet<Long> liveTables(Db db) {
        TreeSet<Long> out = new TreeSet<>();
        db.tables().forEach(t -> out.add(t.fileNumber()));
        return out;
    }

    @Test
    void noDeleteUnderTheMutex() throws Exception {
        MutexWatchingFileSystem fs = new MutexWatchingFileSystem();
        Options options = SmallLevels.options().fileSystem(fs);
        try (Db db = Db.open(dir, options)) {
            fs.db.set(db);
            // Flushes and background compactions, two writers: memtable switches race the installs of flushes and
            // compactions, and then drop the superseded Version themselves.
            Thread other = new Thread(() -> put(db, 100000, 103000));
            other.start();
            put(db, 0, 3000);
            other.join();
            db.waitForBackgroundWork();
            db.compactRange(null, null); // a compaction on the caller's thread
            // An iterator keeps an old Version, whose tables a compaction makes obsolete; its close deletes them.
            DbIterator it = db.iterator();
            put(db, 0, 500);
            db.compactRange(null, null);
            it.close();
            db.ingest(List.of(externalFile("a.sst", 900000, 900100, options)), IngestOptions.defaults());
            put(db, 900050, 900060); // in a memtable: the next ingestion flushes it, then is rewritten
            db.ingest(List.of(externalFile("b.sst", 900040, 900070, options)), IngestOptions.defaults());
            db.ingest(
                    List.of(externalFile("c.sst", 950000, 950100, options)),
                    IngestOptions.defaults().moveFiles(true));
            db.flush();
            assertThat(db.deleteFilesInRange(bytes("k900000"), bytes("k999999")))
                    .isPositive();
            put(db, 3000, 4000);
            // Closed by close: an iterator on a Version that a compaction replaced.
            db.iterator();
            db.compactRange(null, null);
        }
        assertThat(fs.deletes.get()).as("files deleted").isGreaterThan(100);
        assertThat(fs.underMutex)
                .as("deletes (and listings) under the database mutex")
                .isEmpty();
    }

    /**
     * Holds the deletion pass of one thread (the ingesting one) in its directory listing until released: the listing
     * is a pass's first step, so while it is held the pass is in progress on that thread.
     */
    static final class PassHoldingFileSystem extends ForwardingFileSystem {
        final AtomicReference<Thread> holdOn = new AtomicReference<>();
        final java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);

        PassHoldingFileSystem() {
            super(FileSystem.disk());
        }

        /** When set, only a pass called from this class is held. */
        volatile Class<?> calledFrom;

        @Override
        public List<Path> list(Path d) throws IOException {
            if (Thread.currentThread() == holdOn.get() && inDeletionPass() && calledFromWanted()) {
                entered.countDown();
                try {
                    release.await(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.list(d);
        }

        private boolean calledFromWanted() {
            Class<?> c = calledFrom;
            if (c == null) {
                return true;
            }
            for (StackTraceElement e : new Throwable().getStackTrace()) {
                if (e.getClassName().equals(c.getName())) {
                    return true;
                }
            }
            return false;
        }

        private static boolean inDeletionPass() {
            for (StackTraceElement e : new Throwable().getStackTrace()) {
                if (e.getClassName().equals(ObsoleteFiles.class.getName())
                        && e.getMethodName().equals("delete")) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * The pass an ingestion runs after its install does not hold up writes: a put made while that pass is in progress
     * returns. Before, the pass ran at the head of the write queue (inside the ingestion's exclusive turn), so every
     * write waited for its listing and unlinks, as it had waited under the mutex.
     */
    @Test
    void aWriteDoesNotWaitForTheIngestionsDeletionPass() throws Exception {
        PassHoldingFileSystem fs = new PassHoldingFileSystem();
        Options options = Options.defaults().autoCompaction(false).fileSystem(fs);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (Db db = Db.open(dir, options)) {
            put(db, 0, 100);
            db.flush();
            Path file = externalFile("a.sst", 900000, 900100, options);
            whileItsPassIsHeld(
                    fs,
                    pool,
                    "the ingestion",
                    () -> db.ingest(List.of(file), IngestOptions.defaults()),
                    "a put",
                    () -> db.put(bytes("w"), bytes("v")));
            assertThat(db.get(bytes("w"))).isEqualTo(bytes("v"));
            assertThat(db.get(bytes("k900050"))).hasSize(50);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The pass after {@code deleteFilesInRange} runs once new snapshots are let go again: a snapshot taken while that
     * pass is in progress returns. Before, the pass ran while {@code deletingFiles} held snapshots back.
     */
    @Test
    void aSnapshotDoesNotWaitForTheDeleteFilesInRangePass() throws Exception {
        PassHoldingFileSystem fs = new PassHoldingFileSystem();
        Options options = Options.defaults().autoCompaction(false).fileSystem(fs);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (Db db = Db.open(dir, options)) {
            put(db, 0, 100);
            db.flush();
            put(db, 500, 600);
            db.flush();
            whileItsPassIsHeld(
                    fs,
                    pool,
                    "deleteFilesInRange",
                    () -> assertThat(db.deleteFilesInRange(bytes("k"), bytes("l")))
                            .isEqualTo(2),
                    "a snapshot",
                    () -> db.releaseSnapshot(db.getSnapshot()));
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A compaction whose filter changed entries holds new snapshots back until its install; its deletion pass runs
     * after it lets them go, so a snapshot taken while that pass is in progress returns.
     */
    @Test
    void aSnapshotDoesNotWaitForAFilteredCompactionsPass() throws Exception {
        PassHoldingFileSystem fs = new PassHoldingFileSystem();
        fs.calledFrom = Compactor.class; // not the pass of the flush compactRange starts with
        Options options = Options.defaults()
                .autoCompaction(false)
                .fileSystem(fs)
                .compactionFilter((level, bottommost, key, value) ->
                        key[key.length - 1] == '0' ? CompactionFilter.Decision.REMOVE : CompactionFilter.Decision.KEEP);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (Db db = Db.open(dir, options)) {
            put(db, 0, 100);
            db.flush();
            put(db, 50, 150);
            db.flush();
            whileItsPassIsHeld(
                    fs,
                    pool,
                    "the filtered compaction",
                    () -> db.compactRange(null, null),
                    "a snapshot",
                    () -> db.releaseSnapshot(db.getSnapshot()));
            assertThat(db.get(bytes("k000010"))).as("filtered out").isNull();
            assertThat(db.get(bytes("k000011"))).hasSize(100);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Runs {@code work} on a thread of {@code pool} whose deletion pass {@code fs} holds in its listing, then
     * {@code other} on another: {@code other} must return within 10 s, while the pass is held.
     */
    private static void whileItsPassIsHeld(
            PassHoldingFileSystem fs,
            java.util.concurrent.ExecutorService pool,
            String work,
            Runnable task,
            String other,
            Runnable otherTask)
            throws Exception {
        java.util.concurrent.Future<?> held = pool.submit(() -> {
            fs.holdOn.set(Thread.currentThread());
            task.run();
        });
        try {
            assertThat(fs.entered.await(60, java.util.concurrent.TimeUnit.SECONDS))
                    .as(work + " runs a deletion pass")
                    .isTrue();
            java.util.concurrent.Future<?> meanwhile = pool.submit(otherTask);
            try {
                meanwhile.get(10, java.util.concurrent.TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError(other + " waited for the deletion pass of " + work, e);
            }
        } finally {
            fs.release.countDown();
        }
        held.get(60, java.util.concurrent.TimeUnit.SECONDS);
    }

    @Test
    void flushAndCompactRangeReturnWithTheirObsoleteFilesGone() throws IOException {
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false))) {
            for (int round = 0; round < 4; round++) {
                put(db, round * 100, round * 100 + 100);
                db.flush();
                assertThat(onDisk(dir, ".log")).as("WALs after flush").hasSize(1);
                assertThat(onDisk(dir, ".sst")).isEqualTo(liveTables(db));
            }
            assertThat(liveTables(db)).hasSize(4);
            db.compactRange(null, null);
            assertThat(liveTables(db)).hasSize(1);
            assertThat(onDisk(dir, ".sst")).as("tables after compactRange").isEqualTo(liveTables(db));
        }
    }

    @Test
    void waitForBackgroundWorkReturnsWithObsoleteFilesGone() throws IOException {
        try (Db db = Db.open(dir, SmallLevels.options())) {
            for (int round = 0; round < 5; round++) {
                put(db, round * 1000, round * 1000 + 1000);
                db.waitForBackgroundWork();
                assertThat(onDisk(dir, ".sst"))
                        .as("tables after waitForBackgroundWork")
                        .isEqualTo(liveTables(db));
            }
        }
    }

    @Test
    void closingTheLastIteratorOfAnOldVersionDeletesItsTables() throws IOException {
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false))) {
            put(db, 0, 100);
            db.flush();
            put(db, 50, 150);
            db.flush();
            TreeSet<Long> old = liveTables(db);
            DbIterator first = db.iterator();
            DbIterator second = db.iterator();
            db.compactRange(null, null);
            assertThat(onDisk(dir, ".sst")).as("read by the iterators").containsAll(old);
            first.close();
            assertThat(onDisk(dir, ".sst")).as("still read by one iterator").containsAll(old);
            second.seekToFirst();
            assertThat(second.valid()).isTrue();
            second.close();
            assertThat(onDisk(dir, ".sst")).as("after the last iterator closed").isEqualTo(liveTables(db));
        }
    }

    @Test
    void closeDeletesTheTablesOfIteratorsItCloses() throws IOException {
        TreeSet<Long> live;
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false))) {
            put(db, 0, 100);
            db.flush();
            put(db, 50, 150);
            db.flush();
            db.iterator(); // left open: close closes it
            db.compactRange(null, null);
            live = liveTables(db);
            assertThat(onDisk(dir, ".sst")).hasSizeGreaterThan(live.size());
        }
        assertThat(onDisk(dir, ".sst")).as("after close").isEqualTo(live);
    }
}
