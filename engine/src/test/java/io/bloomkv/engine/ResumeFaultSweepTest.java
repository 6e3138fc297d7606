package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Fault;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.FaultPredicate;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.fs.InMemoryFileSystem;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A fault during {@link Db#resume()} itself, at each of its I/O operations (its MANIFEST roll, WAL switch, the flushes
 * it waits for, the deletions after it): the N-th operation fails once (resume throws or tolerates it; a second resume
 * then recovers), or the process dies there (the N-th and every later operation fail, then a power loss keeps only
 * synced bytes). Either way the database reopens holding every acknowledged write, never the write that failed before
 * the resume, and no table it does not name. Deterministic (no random input): the operations of one resume are
 * counted first, then each is struck in turn.
 */
class ResumeFaultSweepTest {
    @TempDir
    Path root;

    /** In memory: the sweep opens and closes a database per operation, without fsyncs to a real disk. */
    private final FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new InMemoryFileSystem());

    @AfterEach
    void nothingLeaks() {
        assertThat(TableReader.liveTables()).as("tables left open").isZero();
    }

    /** The failure resume recovers from; the WAL-less case flushes its memtables at close instead of replaying. */
    enum Failure {
        FLUSH_TABLE_WRITE(SyncMode.GROUP_COMMIT, false),
        FLUSH_MANIFEST_WRITE(SyncMode.GROUP_COMMIT, false),
        WAL_APPEND_SYNC(SyncMode.EVERY_WRITE, false),
        WAL_SYNC(SyncMode.NONE, false),
        FLUSH_TABLE_WRITE_NO_WAL(SyncMode.NONE, true),
        /** Two full memtables wait behind the one whose flush failed, each with its own WAL. */
        FLUSH_TABLE_WRITE_BEHIND(SyncMode.GROUP_COMMIT, false),
        /** A TTL database with a merge operator and partitioned tables; merges and a range deletion in the memtable. */
        FLUSH_TABLE_WRITE_MERGES_TTL(SyncMode.GROUP_COMMIT, false);

        final SyncMode mode;
        final boolean noWal;

        Failure(SyncMode mode, boolean noWal) {
            this.mode = mode;
            this.noWal = noWal;
        }
    }

    private Options options(Failure failure) {
        if (failure == Failure.FLUSH_TABLE_WRITE_MERGES_TTL) {
            return plainOptions(failure)
                    .ttl(java.time.Duration.ofDays(1))
                    .mergeOperator(MergeOperators.stringAppend(','))
                    .tablePartitionPrefixLength(10);
        }
        return plainOptions(failure);
    }

    private Options plainOptions(Failure failure) {
        return Options.defaults()
                .fileSystem(fs)
                .syncMode(failure.mode)
                .disableWal(failure.noWal)
                .autoCompaction(false)
                .writeBufferSize(failure == Failure.FLUSH_TABLE_WRITE_BEHIND ? 8 << 10 : 256 << 10)
                .maxImmutableMemtables(4)
                .blockCacheSize(0);
    }

    private static final int FAILED_KEY = 9000;

    private static void put(Db db, TreeMap<Integer, String> model, int from, int to, String tag) {
        for (int k = from; k < to; k++) {
            String v = tag + k;
            db.put(TestKeys.key(k), TestKeys.bytes(v));
            model.put(k, v);
        }
    }

    /**
     * Opens a database in {@code dir}, writes (a table and a memtable) and makes {@code failure} stop writes; returns
     * it with {@code model} holding the acknowledged writes, which are durable (synced, or without a WAL, once the
     * resume flushes them: until then only {@code flushed}, those in tables, survive a power loss).
     */
    private Db failed(Path dir, Failure failure, TreeMap<Integer, String> model, TreeMap<Integer, String> flushed) {
        Db db = Db.open(dir, options(failure));
        put(db, model, 0, 30, "a");
        db.flush();
        flushed.putAll(model);
        if (failure == Failure.FLUSH_TABLE_WRITE_BEHIND) {
            // Paused, the memtables fill and wait (each about 2 KiB over the 8 KiB write buffer); the first flush after
            // the continue fails.
            db.pauseBackgroundWork();
            put(db, model, 20, 38, "b" + "x".repeat(900));
            assertThat(db.property("bloomkv.num-immutable-mem-table"))
                    .as("memtables waiting")
                    .isNotEqualTo("0");
        } else {
            put(db, model, 20, 50, "b");
        }
        if (failure == Failure.FLUSH_TABLE_WRITE_MERGES_TTL) {
            for (int k = 15; k < 35; k++) {
                db.merge(TestKeys.key(k), TestKeys.bytes("m"));
                model.merge(k, "m", (old, m) -> old + "," + m);
            }
            db.deleteRange(TestKeys.key(44), TestKeys.key(48));
            model.subMap(44, 48).clear();
        }
        if (failure.mode == SyncMode.NONE) {
            db.syncWal();
        }
        FaultPredicate cause = switch (failure) {
            case FLUSH_TABLE_WRITE, FLUSH_TABLE_WRITE_NO_WAL, FLUSH_TABLE_WRITE_BEHIND, FLUSH_TABLE_WRITE_MERGES_TTL ->
                FaultInjectingFileSystem.on(Op.WRITE, "*.sst");
            case FLUSH_MANIFEST_WRITE -> FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*");
            case WAL_APPEND_SYNC, WAL_SYNC -> FaultInjectingFileSystem.on(Op.SYNC, "*.log");
        };
        Fault f = fs.inject(cause);
        if (failure == Failure.FLUSH_TABLE_WRITE_BEHIND) {
            db.continueBackgroundWork();
        }
        try {
            BloomKvException e = catchThrowableOfType(
                    () -> {
                        switch (failure) {
                            case WAL_APPEND_SYNC -> db.put(TestKeys.key(FAILED_KEY), TestKeys.bytes("failed"));
                            case WAL_SYNC -> db.syncWal();
                            default -> db.flush();
                        }
                    },
                    BloomKvException.class);
            assertThat(e).as(failure + ": the failure").isNotNull();
        } finally {
            f.remove();
        }
        assertThat(db.property("bloomkv.background-errors")).contains("1");
        return db;
    }

    private void assertHolds(Db db, TreeMap<Integer, String> model, String ctx) throws IOException {
        TreeMap<String, String> want = new TreeMap<>();
        model.forEach((k, v) -> want.put(TestKeys.str(TestKeys.key(k)), java.util.Arrays.toString(TestKeys.bytes(v))));
        assertThat(FaultSweepTest.scan(db)).as(ctx + ": full scan").isEqualTo(want);
        for (Map.Entry<Integer, String> e : model.entrySet()) {
            assertThat(TestKeys.str(db.get(TestKeys.key(e.getKey()))))
                    .as(ctx + ": get " + e.getKey())
                    .isEqualTo(e.getValue());
        }
        assertThat(db.get(TestKeys.key(FAILED_KEY)))
                .as(ctx + ": the failed write")
                .isNull();
        java.util.TreeSet<Long> live = new java.util.TreeSet<>();
        db.tables().forEach(t -> live.add(t.fileNumber()));
        java.util.TreeSet<Long> onDisk = new java.util.TreeSet<>();
        for (Path p : fs.list(db.directory())) {
            String name = p.getFileName().toString();
            if (name.endsWith(".sst")) {
                onDisk.add(Long.parseLong(name.substring(0, name.indexOf('.'))));
            }
        }
        assertThat(onDisk).as(ctx + ": table files = live tables").isEqualTo(live);
    }

    /** The operations one resume (with the flushes it waits for and the deletions after it) makes. */
    private int resumeOps(Failure failure) {
        TreeMap<Integer, String> model = new TreeMap<>();
        Db db = failed(root.resolve("count"), failure, model, new TreeMap<>());
        try {
            Fault count = fs.injectNth((op, p) -> true, Integer.MAX_VALUE);
            try {
                db.resume();
            } finally {
                count.remove();
            }
            return count.matches();
        } finally {
            db.close();
        }
    }

    @ParameterizedTest
    @EnumSource(Failure.class)
    void aFaultAtEachOperationOfResumeLosesNothing(Failure failure) throws IOException {
        int ops = resumeOps(failure);
        System.out.println("ResumeFaultSweepTest: " + failure + ": " + ops + " operations");
        assertThat(ops).as(failure + ": resume does I/O").isGreaterThan(3);
        for (int n = 1; n <= ops; n++) {
            strike(failure, n, ops, false);
            strike(failure, n, ops, true);
        }
    }

    /** Resumes after {@code failure} with the {@code n}-th operation failing once, or ({@code dies}) from it on. */
    private void strike(Failure failure, int n, int ops, boolean dies) throws IOException {
        Path dir = root.resolve(n + (dies ? "-dies" : "-fails"));
        TreeMap<Integer, String> model = new TreeMap<>();
        TreeMap<Integer, String> flushed = new TreeMap<>();
        AtomicInteger seen = new AtomicInteger();
        AtomicReference<String> struck = new AtomicReference<>();
        FaultPredicate any = (op, p) -> {
            if (seen.incrementAndGet() == n) {
                struck.set(op + " " + (p == null ? "" : p.getFileName()));
            }
            return true;
        };
        String ctx = failure + ", operation " + n + " of " + ops + (dies ? ", dies there" : ", fails once");
        Db db = failed(dir, failure, model, flushed);
        try {
            Fault f = dies ? fs.injectFromNth(any, n) : fs.injectNth(any, n);
            BloomKvException thrown;
            try {
                thrown = catchThrowableOfType(db::resume, BloomKvException.class);
                if (dies) {
                    try {
                        db.close();
                    } catch (BloomKvException expected) {
                        // closing through a dead file system fails: what matters is what is on "disk"
                    }
                }
            } finally {
                f.remove();
            }
            ctx += " (" + struck.get() + ")";
            if (!dies) {
                if (thrown != null) {
                    assertThat(thrown).as(ctx + ": " + thrown).isNotInstanceOf(NotResumableException.class);
                    db.resume(); // the fault is gone: a second resume recovers
                }
                assertThat(db.property("bloomkv.background-errors")).as(ctx).contains("0");
                String op = String.valueOf(struck.get());
                if (op.startsWith("DELETE") || op.startsWith("LIST")) {
                    // A failed deletion, or listing before the deletions, leaves obsolete files for the next pass.
                    db.waitForBackgroundWork();
                }
                assertHolds(db, model, ctx + ", resumed");
                put(db, model, 200, 210, "c");
                if (failure.mode == SyncMode.NONE) {
                    db.syncWal();
                }
            }
        } finally {
            db.close(); // a second close (after the death) returns at once
        }
        fs.crash();
        try (Db reopened = Db.open(dir, options(failure))) {
            if (dies && failure.noWal && reopened.get(TestKeys.key(40)) == null) {
                // Without a WAL the memtables survive only if resume's flush was recorded before the death.
                assertHolds(reopened, flushed, ctx + ", reopened after a power loss, before resume's flush");
            } else {
                assertHolds(reopened, model, ctx + ", reopened after a power loss");
            }
        }
    }
}
