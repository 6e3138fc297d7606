package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Fault;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.FaultPredicate;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.fs.InjectedIOException;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;

/**
 * {@link Db#resume()} (RocksDB's {@code DB::Resume}): at each kind of failure point an injected I/O error stops
 * writes; the fault is cleared, resume clears the error, and the database goes on. Every acknowledged write (before
 * the error and after the resume) reads back, the write that failed never appears, in the running database and after
 * a close, a simulated power loss (unsynced bytes dropped) and a reopen; the final contents equal RocksDB's
 * (rocksdbjni) fed the acknowledged operations, and no table file is left that the database does not name. Also: a
 * fault that stays (resume throws, a second one after clearing works), errors resume refuses (a corrupt table, an
 * Error), the events and the info log, a pause, concurrent calls, closed and read-only databases. Races with the
 * threads that record errors: a compaction that reports its recorded MANIFEST failure after a resume cleared it, resume
 * inside onBackgroundError (refused, not a deadlock), a close while resume waits, writers racing a WAL failure and
 * resume.
 *
 * <p>Replay with -Dbloomkv.seed=N.
 */
class ResumeTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private final FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();

    @AfterEach
    void nothingLeaks() {
        assertThat(TableReader.liveTables()).as("tables left open").isZero();
    }

    private Options options(SyncMode mode) {
        return Options.defaults()
                .fileSystem(fs)
                .syncMode(mode)
                .autoCompaction(false)
                .writeBufferSize(256 << 10)
                .blockSize(512)
                .blockCacheSize(0);
    }

    /**
     * One seeded history: the acknowledged operations in order (a null value deletes), what they leave, and what
     * assertions name (the case and its seed).
     */
    static final class History {
        final List<Map.Entry<String, byte[]>> ops = new ArrayList<>();
        final TreeMap<String, byte[]> model = new TreeMap<>();
        final Random rnd;
        final String ctx;

        History(String test) {
            long seed = TestKeys.seed("ResumeTest." + test);
            this.rnd = new Random(seed);
            this.ctx = test + ", seed " + seed;
        }

        void acknowledged(byte[] key, byte[] value) {
            String k = TestKeys.str(key);
            ops.add(new java.util.AbstractMap.SimpleImmutableEntry<>(k, value));
            if (value == null) {
                model.remove(k);
            } else {
                model.put(k, value);
            }
        }
    }

    /** {@code n} random puts and deletes of keys below 1000, each acknowledged. */
    private static void writeSome(Db db, History h, int n) {
        Random rnd = h.rnd;
        for (int i = 0; i < n; i++) {
            byte[] key = TestKeys.key(rnd.nextInt(1000));
            if (rnd.nextInt(5) == 0) {
                db.delete(key);
                h.acknowledged(key, null);
            } else {
                byte[] value = TestKeys.value(rnd, 120);
                db.put(key, value);
                h.acknowledged(key, value);
            }
        }
    }

    static TreeMap<String, String> render(Map<String, byte[]> model) {
        TreeMap<String, String> r = new TreeMap<>();
        model.forEach((k, v) -> r.put(k, Arrays.toString(v)));
        return r;
    }

    /** The database holds exactly {@code model}, by a full scan and key by key. */
    static void assertHolds(Db db, TreeMap<String, byte[]> model, String ctx) {
        assertThat(FaultSweepTest.scan(db)).as(ctx + ": full scan").isEqualTo(render(model));
        for (Map.Entry<String, byte[]> e : model.entrySet()) {
            assertThat(db.get(TestKeys.bytes(e.getKey())))
                    .as(ctx + ": get " + e.getKey())
                    .isEqualTo(e.getValue());
        }
    }

    static boolean injected(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof InjectedIOException) {
                return true;
            }
        }
        return false;
    }

    /** RocksDB fed {@code h}'s acknowledged operations holds what {@code db} holds. */
    private void assertEqualsRocksDb(Db db, History h, String ctx) throws Exception {
        Path rdir = dir.resolveSibling(dir.getFileName() + "-rocks-" + System.nanoTime());
        TreeMap<String, String> theirs = new TreeMap<>();
        try (org.rocksdb.Options ro = new org.rocksdb.Options().setCreateIfMissing(true);
                RocksDB rocks = RocksDB.open(ro, rdir.toString())) {
            for (Map.Entry<String, byte[]> op : h.ops) {
                if (op.getValue() == null) {
                    rocks.delete(TestKeys.bytes(op.getKey()));
                } else {
                    rocks.put(TestKeys.bytes(op.getKey()), op.getValue());
                }
            }
            try (RocksIterator it = rocks.newIterator()) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    theirs.put(TestKeys.str(it.key()), Arrays.toString(it.value()));
                }
            }
        } finally {
            try (Stream<Path> s = Files.walk(rdir)) {
                for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        assertThat(FaultSweepTest.scan(db))
                .as(ctx + ": bloomkv = RocksDB fed the acknowledged operations")
                .isEqualTo(theirs);
    }

    /** Where the injected error strikes, and the call that meets it. */
    enum FailurePoint {
        FLUSH_TABLE_WRITE("flush", SyncMode.GROUP_COMMIT),
        FLUSH_MANIFEST_WRITE("flush", SyncMode.GROUP_COMMIT),
        WAL_APPEND("WAL append", SyncMode.EVERY_WRITE),
        /** The record is written whole, its sync fails: replayed, the WAL would bring the failed write back. */
        WAL_APPEND_SYNC("WAL append", SyncMode.EVERY_WRITE),
        WAL_SYNC("WAL sync", SyncMode.NONE),
        WAL_SWITCH("WAL switch", SyncMode.GROUP_COMMIT),
        COMPACTION_OUTPUT("compaction", SyncMode.GROUP_COMMIT),
        INGEST_MANIFEST("ingest", SyncMode.GROUP_COMMIT),
        DELETE_FILES_IN_RANGE_MANIFEST("deleteFilesInRange", SyncMode.GROUP_COMMIT);

        final String operation;
        final SyncMode mode;

        FailurePoint(String operation, SyncMode mode) {
            this.operation = operation;
            this.mode = mode;
        }
    }

    /** Records the recovery events and background errors, in delivery order. */
    static final class Recorder implements EventListener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final List<ErrorRecoveryInfo> begun = new CopyOnWriteArrayList<>();
        final List<ErrorRecoveryInfo> completed = new CopyOnWriteArrayList<>();
        final CountDownLatch begin = new CountDownLatch(1);

        @Override
        public void onFlushBegin(FlushInfo info) {
            events.add("flushBegin");
        }

        @Override
        public void onFlushCompleted(FlushCompletedInfo info) {
            events.add("flushCompleted");
        }

        @Override
        public boolean onBackgroundError(BackgroundErrorInfo info) {
            events.add("backgroundError " + info.operation());
            return false;
        }

        @Override
        public void onErrorRecoveryBegin(ErrorRecoveryInfo info) {
            events.add("recoveryBegin " + info.operation());
            begun.add(info);
            begin.countDown();
        }

        @Override
        public void onErrorRecoveryCompleted(ErrorRecoveryInfo info) {
            events.add("recoveryCompleted " + info.operation());
            completed.add(info);
        }
    }

    @ParameterizedTest
    @EnumSource(FailurePoint.class)
    void resumesAfterEachKindOfFailure(FailurePoint point) throws Exception {
        History h = new History(point.toString());
        String ctx = h.ctx;
        Random rnd = h.rnd;
        Recorder rec = new Recorder();
        Options opts = options(point.mode).listeners(rec);
        byte[] failedKeys = null;
        try (Db db = Db.open(dir, opts)) {
            writeSome(db, h, 150);
            db.flush();
            writeSome(db, h, 100);
            // A key the failed call would have written: it must never appear.
            byte[] failedKey = null;
            BloomKvException failure;
            switch (point) {
                case FLUSH_TABLE_WRITE ->
                    failure = failing(db, FaultInjectingFileSystem.on(Op.WRITE, "*.sst"), db::flush);
                case FLUSH_MANIFEST_WRITE ->
                    failure = failing(db, FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*"), db::flush);
                case WAL_APPEND, WAL_APPEND_SYNC -> {
                    byte[] k = TestKeys.key(5000);
                    failedKey = k;
                    failure = failing(
                            db,
                            FaultInjectingFileSystem.on(point == FailurePoint.WAL_APPEND ? Op.WRITE : Op.SYNC, "*.log"),
                            () -> db.put(k, TestKeys.bytes("never acknowledged")));
                }
                case WAL_SYNC -> failure = failing(db, FaultInjectingFileSystem.on(Op.SYNC, "*.log"), db::syncWal);
                case WAL_SWITCH -> failure = failing(db, FaultInjectingFileSystem.on(Op.SYNC, "*.log"), db::flush);
                case COMPACTION_OUTPUT -> {
                    db.flush();
                    writeSome(db, h, 100);
                    db.flush(); // the memtable empty: compactRange's flush writes nothing
                    failure = failing(
                            db, FaultInjectingFileSystem.on(Op.WRITE, "*.sst"), () -> db.compactRange(null, null));
                }
                case INGEST_MANIFEST -> {
                    Path file = dir.resolveSibling(dir.getFileName() + "-ingest.sst");
                    try (TableFileWriter w = TableFileWriter.create(file, opts)) {
                        w.put(TestKeys.key(5000), TestKeys.bytes("ingested, never acknowledged"));
                        w.put(TestKeys.key(5001), TestKeys.bytes("ingested, never acknowledged"));
                        w.finish();
                    }
                    failedKey = TestKeys.key(5000);
                    failure = failing(
                            db,
                            FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*"),
                            () -> db.ingest(List.of(file), IngestOptions.defaults()));
                    Files.deleteIfExists(file);
                }
                case DELETE_FILES_IN_RANGE_MANIFEST -> {
                    // One table holding only keys of [2000, 2100): the failed call would have removed it.
                    db.flush();
                    for (int k = 2000; k < 2100; k++) {
                        byte[] v = TestKeys.value(rnd, 60);
                        db.put(TestKeys.key(k), v);
                        h.acknowledged(TestKeys.key(k), v);
                    }
                    db.flush();
                    int before = db.tables().size();
                    failure = failing(
                            db,
                            FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*"),
                            () -> db.deleteFilesInRange(TestKeys.key(2000), TestKeys.key(2100)));
                    assertThat(db.tables()).as(ctx + ": nothing removed").hasSize(before);
                }
                default -> throw new AssertionError(point);
            }
            assertThat(injected(failure))
                    .as(ctx + ": " + failure + " caused by the injected error")
                    .isTrue();
            assertThat(db.property("bloomkv.background-errors")).as(ctx).contains("1");
            long errors = db.stats().backgroundErrors();
            assertThat(errors).as(ctx + ": counted").isPositive();
            // The background error (ingest and deleteFilesInRange throw their I/O error wrapped apart from it).
            BloomKvException stopped =
                    catchThrowableOfType(() -> db.put(TestKeys.key(1), TestKeys.bytes("x")), BloomKvException.class);
            assertThat(injected(stopped))
                    .as(ctx + ": writes fail with the error, " + stopped)
                    .isTrue();
            assertHolds(db, h.model, ctx + ", after the failure");

            db.resume();

            assertThat(db.property("bloomkv.background-errors")).as(ctx).contains("0");
            assertThat(db.stats().backgroundErrors())
                    .as(ctx + ": a count, not lowered by resume")
                    .isEqualTo(errors);
            assertHolds(db, h.model, ctx + ", resumed");
            if (failedKey != null) {
                assertThat(db.get(failedKey))
                        .as(ctx + ": the failed write is not applied")
                        .isNull();
            }
            writeSome(db, h, 100);
            db.flush();
            writeSome(db, h, 50);
            db.compactRange(null, null);
            writeSome(db, h, 50);
            assertHolds(db, h.model, ctx + ", written after resume");
            DiskFullTest.assertNoOrphanTables(db, ctx + ", resumed");
            if (point.mode == SyncMode.NONE) {
                db.syncWal(); // what survives the power loss below, as under the syncing modes
            }
            if (point.mode == SyncMode.NONE) {
                db.syncWal(); // what survives the power loss below, as under the syncing modes
            }
            db.close(); // before the events are read: close delivers them
            assertThat(rec.begun).as(ctx + ": one recovery").hasSize(1);
            assertThat(rec.begun.get(0).operation()).isEqualTo(point.operation);
            assertThat(rec.begun.get(0).error()).isSameAs(stopped);
            assertThat(rec.completed).hasSize(1);
            assertThat(rec.completed.get(0).error()).isSameAs(stopped);
            failedKeys = failedKey;
        }
        fs.crash(); // a power loss after the close: only synced bytes are kept
        try (Db db = Db.open(dir, options(point.mode))) {
            assertHolds(db, h.model, ctx + ", reopened");
            if (failedKeys != null) {
                assertThat(db.get(failedKeys))
                        .as(ctx + ": the failed write is not applied after reopen")
                        .isNull();
            }
            DiskFullTest.assertNoOrphanTables(db, ctx + ", reopened");
            assertEqualsRocksDb(db, h, ctx + ", reopened");
        }
    }

    /** Runs {@code call} with {@code predicate}'s operations failing; returns what it threw (the fault is removed). */
    private BloomKvException failing(Db db, FaultPredicate predicate, Runnable call) {
        Fault f = fs.inject(predicate);
        try {
            return catchThrowableOfType(call::run, BloomKvException.class);
        } finally {
            f.remove();
        }
    }

    /** The step of resume that a fault still present fails: its MANIFEST roll, its WAL switch, or its flush. */
    enum StuckStep {
        MANIFEST_ROLL,
        WAL_SWITCH,
        FLUSH
    }

    @ParameterizedTest
    @EnumSource(StuckStep.class)
    void aFaultThatStaysFailsResumeAndALaterResumeWorks(StuckStep step) throws Exception {
        History h = new History("stays." + step);
        String ctx = h.ctx;
        Recorder rec = new Recorder();
        try (Db db = Db.open(dir, options(SyncMode.GROUP_COMMIT).listeners(rec))) {
            writeSome(db, h, 100);
            db.flush();
            writeSome(db, h, 100);
            FaultPredicate cause = step == StuckStep.MANIFEST_ROLL
                    ? FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*")
                    : FaultInjectingFileSystem.on(Op.WRITE, "*.sst");
            Fault f = fs.inject(cause);
            BloomKvException first = catchThrowableOfType(db::flush, BloomKvException.class);
            assertThat(injected(first)).as(ctx + ": " + first).isTrue();
            Fault stuck = step == StuckStep.WAL_SWITCH ? fs.inject(FaultInjectingFileSystem.on(Op.CREATE, "*.log")) : f;
            if (step == StuckStep.WAL_SWITCH) {
                f.remove();
            }

            BloomKvException again = catchThrowableOfType(db::resume, BloomKvException.class);
            assertThat(again).as(ctx + ": resume fails while the fault stays").isNotNull();
            assertThat(injected(again)).as(ctx + ": " + again).isTrue();
            assertThat(again).as(ctx + ": a new error").isNotSameAs(first);
            assertThat(db.property("bloomkv.background-errors")).contains("1");
            assertThatThrownBy(() -> db.put(TestKeys.key(1), TestKeys.bytes("x")))
                    .as(ctx + ": writes fail with the new error")
                    .isSameAs(again);
            assertHolds(db, h.model, ctx + ", after the failed resume");

            stuck.remove();
            db.resume();
            assertThat(db.property("bloomkv.background-errors")).contains("0");
            assertHolds(db, h.model, ctx + ", resumed");
            writeSome(db, h, 100);
            db.flush();
            writeSome(db, h, 30);
            assertHolds(db, h.model, ctx + ", written after resume");
            DiskFullTest.assertNoOrphanTables(db, ctx + ", resumed");
        }
        assertThat(rec.begun).as(ctx + ": two recoveries began").hasSize(2);
        assertThat(rec.completed).as(ctx + ": the second completed").hasSize(1);
        assertThat(rec.completed.get(0).operation())
                .as(ctx + ": the error of the failed resume's step")
                .isEqualTo(step == StuckStep.FLUSH ? "flush" : "resume");
        fs.crash();
        try (Db db = Db.open(dir, options(SyncMode.GROUP_COMMIT))) {
            assertHolds(db, h.model, ctx + ", reopened");
            DiskFullTest.assertNoOrphanTables(db, ctx + ", reopened");
            assertEqualsRocksDb(db, h, ctx + ", reopened");
        }
    }

    @Test
    void aCorruptTableIsNotResumable() throws IOException {
        Options opts =
                Options.defaults().autoCompaction(false).blockCacheSize(0).blockSize(512);
        try (Db db = Db.open(dir, opts)) {
            for (int t = 0; t < 2; t++) {
                for (int i = 0; i < 500; i++) {
                    db.put(TestKeys.key(i), TestKeys.bytes("value-" + t + "-" + i));
                }
                db.flush();
            }
        }
        Path table;
        try (Stream<Path> s = Files.list(dir)) {
            table = s.filter(p -> p.toString().endsWith(".sst"))
                    .sorted()
                    .findFirst()
                    .orElseThrow();
        }
        byte[] b = Files.readAllBytes(table);
        b[10] ^= 0x5A; // inside the first data block
        Files.write(table, b);
        try (Db db = Db.open(dir, opts)) {
            CorruptionException corrupt =
                    catchThrowableOfType(() -> db.compactRange(null, null), CorruptionException.class);
            assertThat(corrupt).isNotNull();
            for (int i = 0; i < 2; i++) {
                NotResumableException refused = catchThrowableOfType(db::resume, NotResumableException.class);
                assertThat(refused).as("resume refuses, every time").isNotNull();
                assertThat(refused.getCause()).isSameAs(corrupt);
                assertThat(refused.getMessage()).contains("corrupt").contains("reopen");
            }
            assertThatThrownBy(() -> db.put(TestKeys.key(1), TestKeys.bytes("x")))
                    .isSameAs(corrupt);
            assertThat(db.property("bloomkv.background-errors")).contains("1");
            assertThat(TestKeys.str(db.get(TestKeys.key(499)))).isEqualTo("value-1-499");
        }
    }

    @Test
    void anErrorIsNotResumable() {
        AtomicReference<Boolean> failMerges = new AtomicReference<>(false);
        MergeOperator append = MergeOperators.stringAppend(',');
        MergeOperator failing = new MergeOperator() {
            @Override
            public String name() {
                return append.name();
            }

            @Override
            public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
                if (failMerges.get()) {
                    throw new AssertionError("injected by ResumeTest");
                }
                return append.fullMerge(key, existingValue, operands);
            }
        };
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false).mergeOperator(failing))) {
            db.put(TestKeys.key(1), TestKeys.bytes("a"));
            db.merge(TestKeys.key(1), TestKeys.bytes("b"));
            failMerges.set(true);
            BloomKvException flush = catchThrowableOfType(db::flush, BloomKvException.class);
            assertThat(flush).as("the flush's merge throws an Error").isNotNull();
            assertThat(flush.getCause()).isInstanceOf(AssertionError.class);
            NotResumableException refused = catchThrowableOfType(db::resume, NotResumableException.class);
            assertThat(refused).isNotNull();
            assertThat(refused.getCause()).isSameAs(flush);
            assertThat(refused.getMessage()).contains("an Error");
        }
    }

    @Test
    void eventsComeInOrderAndTheInfoLogRecordsTheResume() throws Exception {
        Recorder rec = new Recorder();
        DbLogTest.Recording log = new DbLogTest.Recording();
        BloomKvException failure;
        try (Db db = Db.open(dir, options(SyncMode.GROUP_COMMIT).listeners(rec, new DbLog(log)))) {
            db.put(TestKeys.key(2), TestKeys.bytes("two"));
            failure = failing(db, FaultInjectingFileSystem.on(Op.WRITE, "*.sst"), db::flush);
            db.resume();
            db.resume(); // no error: nothing happens, no event
            db.put(TestKeys.key(3), TestKeys.bytes("three"));
        }
        // onBackgroundError runs on the failed flush's thread before the error is set, so before resume begins; the
        // other events come in order on the event thread.
        assertThat(rec.events.indexOf("backgroundError flush"))
                .as("the error is reported before the recovery begins")
                .isBetween(0, rec.events.indexOf("recoveryBegin flush"));
        assertThat(rec.events.stream().filter(e -> !e.startsWith("backgroundError")))
                .as("events in order")
                .containsExactly(
                        "flushBegin", // the flush that fails
                        "recoveryBegin flush",
                        "flushBegin", // its memtable, flushed again
                        "flushCompleted",
                        "flushBegin", // the memtable resume froze
                        "flushCompleted",
                        "recoveryCompleted flush");
        assertThat(rec.completed.get(0).error()).isSameAs(failure);
        assertThat(rec.completed.get(0).directory()).isEqualTo(dir);
        assertThat(log.lines)
                .as("the info log")
                .anyMatch(l -> l.startsWith("INFO [" + dir + "] resuming after the background flush error"))
                .anyMatch(l -> l.startsWith("INFO [" + dir + "] resumed"));
        assertThat(log.lines.stream().filter(l -> l.startsWith("ERROR")).toList())
                .singleElement()
                .asString()
                .contains("writes stopped until resume() or reopen");
    }

    @Test
    void resumeWaitsForAContinueWhilePausedAndWritesFailMeanwhile() throws Exception {
        Recorder rec = new Recorder();
        try (Db db = Db.open(dir, options(SyncMode.EVERY_WRITE).listeners(rec))) {
            db.put(TestKeys.key(1), TestKeys.bytes("one"));
            BloomKvException failure = failing(
                    db,
                    FaultInjectingFileSystem.on(Op.WRITE, "*.log"),
                    () -> db.put(TestKeys.key(2), TestKeys.bytes("two")));
            assertThat(injected(failure)).isTrue();
            db.pauseBackgroundWork();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread resumer = resumer(db, thrown);
            resumer.start();
            assertThat(rec.begin.await(30, TimeUnit.SECONDS))
                    .as("recovery began")
                    .isTrue();
            // Resume waits for its flushes, which the pause holds: until the continue, writes fail with the error.
            assertThatThrownBy(() -> db.put(TestKeys.key(3), TestKeys.bytes("three")))
                    .isSameAs(failure);
            assertThat(resumer.isAlive()).as("resume waits for the continue").isTrue();
            db.continueBackgroundWork();
            resumer.join(TimeUnit.SECONDS.toMillis(60));
            assertThat(resumer.isAlive()).isFalse();
            assertThat(thrown.get()).isNull();
            db.put(TestKeys.key(3), TestKeys.bytes("three"));
            assertThat(TestKeys.str(db.get(TestKeys.key(1)))).isEqualTo("one");
            assertThat(db.get(TestKeys.key(2))).isNull();
            assertThat(TestKeys.str(db.get(TestKeys.key(3)))).isEqualTo("three");
        }
    }

    @Test
    void concurrentResumesRecoverOnce() throws Exception {
        Recorder rec = new Recorder();
        try (Db db = Db.open(dir, options(SyncMode.GROUP_COMMIT).listeners(rec))) {
            db.put(TestKeys.key(1), TestKeys.bytes("one"));
            failing(db, FaultInjectingFileSystem.on(Op.WRITE, "*.sst"), db::flush);
            CyclicBarrier start = new CyclicBarrier(2);
            List<Throwable> thrown = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Thread th = new Thread(() -> {
                    try {
                        start.await();
                        db.resume();
                    } catch (Throwable e) {
                        thrown.add(e);
                    }
                });
                th.start();
                threads.add(th);
            }
            for (Thread th : threads) {
                th.join(TimeUnit.SECONDS.toMillis(60));
            }
            assertThat(thrown).as("both return").isEmpty();
            db.put(TestKeys.key(2), TestKeys.bytes("two"));
            assertThat(TestKeys.str(db.get(TestKeys.key(1)))).isEqualTo("one");
        }
        assertThat(rec.begun)
                .as("one recovery: the later call found the error cleared")
                .hasSize(1);
        assertThat(rec.completed).hasSize(1);
    }

    @Test
    void aClosedOrReadOnlyDatabaseRefusesAndAHealthyOneReturns() {
        Recorder rec = new Recorder();
        Db db = Db.open(dir, options(SyncMode.GROUP_COMMIT).listeners(rec));
        db.put(TestKeys.key(1), TestKeys.bytes("one"));
        db.resume(); // no error: returns at once
        db.close();
        assertThat(rec.events).as("a resume without an error is no recovery").isEmpty();
        assertThatThrownBy(db::resume).isInstanceOf(DbClosedException.class);
        try (Db ro = Db.open(dir, Options.defaults().readOnly(true))) {
            assertThatThrownBy(ro::resume).isInstanceOf(DbReadOnlyException.class);
        }
    }

    /**
     * A put whose WAL flush fails ({@link SyncMode#NONE}, a WAL written with {@code write(2)}: its record is left in
     * the file's user-space buffer) is not applied after a reopen: not after a close with the error still set, and not
     * after a resume whose flush failed (its WAL switch closes the failed WAL) and a close. Closing a WAL that failed
     * must drop what it still buffers, as RocksDB's {@code WritableFileWriter::Close} does after an error; flushed
     * there, the failed write came back. (A mapped WAL has no such buffer: an append is in the page cache at once.)
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void aWriteWhoseWalFlushFailedIsNotAppliedAfterAReopen(boolean failedResume) {
        String ctx = failedResume ? "after a failed resume" : "after a close";
        byte[] failedKey = TestKeys.key(5000);
        Options opts = options(SyncMode.NONE).useMmapWal(false);
        try (Db db = Db.open(dir, opts)) {
            putRange(db, 0, 100, "a");
            BloomKvException failed = failing(
                    db,
                    FaultInjectingFileSystem.on(Op.FLUSH, "*.log"),
                    () -> db.put(failedKey, TestKeys.bytes("never acknowledged")));
            assertThat(injected(failed)).as(ctx + ": " + failed).isTrue();
            if (failedResume) {
                BloomKvException again = failing(db, FaultInjectingFileSystem.on(Op.WRITE, "*.sst"), db::resume);
                assertThat(injected(again))
                        .as(ctx + ": resume failed, " + again)
                        .isTrue();
            }
            assertThat(db.get(failedKey)).as(ctx + ": running").isNull();
        }
        try (Db db = Db.open(dir, opts)) {
            for (int k = 0; k < 100; k++) {
                assertThat(TestKeys.str(db.get(TestKeys.key(k))))
                        .as(ctx + ": key " + k)
                        .isEqualTo("a" + k);
            }
            assertThat(db.get(failedKey))
                    .as(ctx + ": the failed write after a reopen")
                    .isNull();
        }
    }

    /**
     * A {@code syncWal()} that runs while resume runs, ahead of its WAL switch, meets the WAL whose append failed. That
     * is the failure resume is clearing, not a new one: syncWal throws the background error, records nothing and tells
     * no listener, and resume succeeds. Recorded as a new "WAL sync" failure, it became resume's failure and a second
     * onBackgroundError, though the disk was healthy again. Deterministic: the syncWal is held in its sync of the older
     * WAL (SyncMode.NONE leaves it unsynced) at the head of the write queue until resume has begun.
     */
    @Test
    void aSyncWalDuringResumeIsNoNewFailure() throws Exception {
        Recorder rec = new Recorder();
        Db db = Db.open(dir, options(SyncMode.NONE).listeners(rec));
        AtomicReference<Throwable> resumeThrew = new AtomicReference<>();
        AtomicReference<Throwable> syncThrew = new AtomicReference<>();
        CountDownLatch inOlderSync = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread resumer = resumer(db, resumeThrew);
        Thread syncer = new Thread(() -> {
            try {
                db.syncWal();
            } catch (Throwable t) {
                syncThrew.set(t);
            }
        });
        BloomKvException stopped;
        try {
            db.pauseBackgroundWork(); // the memtable frozen below keeps its WAL, unsynced
            for (int k = 0;
                    !db.property("bloomkv.num-immutable-mem-table").orElse("").equals("1");
                    k++) {
                db.put(TestKeys.key(k), TestKeys.bytes("v" + k));
            }
            stopped = failing(
                    db,
                    FaultInjectingFileSystem.on(Op.FLUSH, "*.log"),
                    () -> db.put(TestKeys.key(-1 >>> 1), TestKeys.bytes("never acknowledged")));
            assertThat(injected(stopped)).as(String.valueOf(stopped)).isTrue();
            db.continueBackgroundWork();
            java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean();
            Fault hold = fs.inject((op, p) -> {
                if (op == Op.SYNC && p.toString().endsWith(".log") && first.compareAndSet(false, true)) {
                    inOlderSync.countDown();
                    try {
                        release.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return false; // holds the first WAL sync, fails nothing
            });
            try {
                syncer.start();
                assertThat(inOlderSync.await(10, TimeUnit.SECONDS))
                        .as("syncWal holds the queue")
                        .isTrue();
                resumer.start();
                assertThat(rec.begin.await(10, TimeUnit.SECONDS))
                        .as("resume began")
                        .isTrue();
                release.countDown();
                syncer.join(TimeUnit.SECONDS.toMillis(10));
                resumer.join(TimeUnit.SECONDS.toMillis(10));
            } finally {
                release.countDown();
                hold.remove();
            }
            assertThat(resumeThrew.get()).as("resume").isNull();
            assertThat(syncThrew.get()).as("the syncWal during resume").isSameAs(stopped);
            assertThat(db.property("bloomkv.background-errors")).contains("0");
            db.put(TestKeys.key(-2 >>> 1), TestKeys.bytes("after"));
            db.syncWal();
        } finally {
            db.close();
        }
        assertThat(rec.events.stream().filter(e -> e.startsWith("backgroundError")))
                .as("one failure was reported: " + rec.events)
                .containsExactly("backgroundError WAL append");
        assertThat(rec.completed).hasSize(1);
    }

    /**
     * A listener's {@code onBackgroundError} runs on the failed flush's or compaction's thread; one that interrupts it
     * (itself, or a blocking call of its own that restored the flag) must not fail that thread's later I/O: a
     * FileChannel used by an interrupted thread closes and throws ClosedByInterruptException, so every later flush or
     * compaction failed and no resume could succeed. As for the event thread (EventListenerTest), the flag is cleared.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"flush", "compaction"})
    void aListenerInterruptingTheFailedThreadCostsNoLaterWork(String thread) throws Exception {
        EventListener interrupting = new EventListener() {
            @Override
            public boolean onBackgroundError(BackgroundErrorInfo info) {
                Thread.currentThread().interrupt();
                return false;
            }
        };
        boolean compaction = thread.equals("compaction");
        Options opts = options(SyncMode.GROUP_COMMIT)
                .autoCompaction(compaction)
                .l0CompactionTrigger(2)
                .listeners(interrupting);
        try (Db db = Db.open(dir, opts)) {
            putRange(db, 0, 100, "a");
            if (compaction) {
                db.flush();
            }
            putRange(db, 50, 150, "b");
            Fault f = fs.inject(FaultInjectingFileSystem.on(Op.WRITE, "*.sst")
                    .and((op, p) -> onThread(compaction ? "bloomkv-compact-" : "bloomkv-flush-")));
            try {
                if (compaction) {
                    db.flush(); // the second level-0 table: the compaction it starts fails
                    awaitTrue(
                            () -> !db.property("bloomkv.background-errors")
                                    .orElse("0")
                                    .equals("0"),
                            "its failure");
                } else {
                    assertThat(catchThrowableOfType(db::flush, BloomKvException.class))
                            .isNotNull();
                }
            } finally {
                f.remove();
            }
            db.resume();
            putRange(db, 150, 200, "c");
            db.flush();
            db.waitForBackgroundWork();
            assertThat(db.property("bloomkv.background-errors")).as(thread).contains("0");
            if (compaction) {
                assertThat(db.property("bloomkv.num-files-at-level0"))
                        .as("compacted")
                        .contains("1");
            }
            for (int k = 0; k < 200; k++) {
                assertThat(TestKeys.str(db.get(TestKeys.key(k))))
                        .as(thread + ": key " + k)
                        .isEqualTo((k < 50 ? "a" : k < 150 ? "b" : "c") + k);
            }
        }
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
        Options opts = options(SyncMode.GROUP_COMMIT)
                .autoCompaction(true)
                .l0CompactionTrigger(2)
                .listeners(holder);
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
     * A listener's onBackgroundError calls resume on the flush thread whose MANIFEST write failed: resume would wait
     * for that thread's flushes, so it is refused at once (InvalidArgumentException), and a resume from another thread
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
        Db db = Db.open(
                dir, options(SyncMode.GROUP_COMMIT).autoCompaction(false).listeners(resumer));
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
        Db db = Db.open(
                dir, options(SyncMode.GROUP_COMMIT).autoCompaction(false).listeners(recorder));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread resumer = resumer(db, thrown);
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
        try (Db reopened = Db.open(dir, options(SyncMode.GROUP_COMMIT))) {
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
        Options opts = options(SyncMode.EVERY_WRITE).autoCompaction(false).writeBufferSize(64 << 10);
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

    /** A thread (not started) that calls {@code db.resume()} and keeps what it throws in {@code thrown}. */
    private static Thread resumer(Db db, AtomicReference<Throwable> thrown) {
        return new Thread(() -> {
            try {
                db.resume();
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
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
