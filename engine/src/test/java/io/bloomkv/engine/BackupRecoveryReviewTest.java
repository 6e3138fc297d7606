package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FileSystem;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review of checkpoints, backups and recovery together: merge operands, range tombstones and the TTL flag survive a
 * recovery followed at once by a checkpoint and incremental backups (and a checkpoint of that checkpoint); and
 * checkpoints taken while writes, flushes, compactions, ingestions and deleteFilesInRange run hold a prefix of the
 * writes.
 */
class BackupRecoveryReviewTest {
    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String key(String prefix, long i) {
        return String.format("%s%08d", prefix, i);
    }

    private static Options ttlMerge() {
        return Options.defaults()
                .fileSystem(FileSystem.disk())
                .writeBufferSize(16 << 10)
                .blockSize(512)
                .targetFileSize(16 << 10)
                .syncMode(SyncMode.NONE)
                .ttl(Duration.ofDays(1))
                .mergeOperator(MergeOperators.stringAppend(','));
    }

    /** Merges, puts and range deletions, part flushed, part only in the WAL; returns nothing (read back via Db). */
    private static void load(Db db, Random rnd, int from, int n) {
        for (int i = from; i < from + n; i++) {
            int k = rnd.nextInt(300);
            switch (rnd.nextInt(8)) {
                case 0 -> db.deleteRange(b(key("k", k)), b(key("k", k + 1 + rnd.nextInt(5))));
                case 1, 2 -> db.put(b(key("k", k)), b("p" + i));
                default -> db.merge(b(key("k", k)), b("m" + i));
            }
            if (i % 400 == 399) {
                db.flush();
            }
        }
    }

    @Test
    void recoveryThenCheckpointAndIncrementalBackupsKeepMergesTombstonesAndTtl() {
        long seed = TestKeys.seed("recoveryThenCheckpointAndIncrementalBackups");
        Random rnd = new Random(seed);
        Path src = dir.resolve("db");
        try (Db db = Db.open(src, ttlMerge())) {
            load(db, rnd, 0, 1500);
        }
        try (BackupEngine be = BackupEngine.open(dir.resolve("backups"))) {
            TreeMap<String, String> atFirst;
            TreeMap<String, String> atSecond;
            // No automatic compaction here: one between the two backups could rewrite every table of the first, and
            // the incremental backup below must share some.
            try (Db db = Db.open(src, ttlMerge().autoCompaction(false))) {
                // Right after recovery (its WAL replayed into level 0, a new WAL started): checkpoint and back up.
                atFirst = CheckpointTest.contents(db);
                db.checkpoint(dir.resolve("cp1"));
                be.createBackup(db);
                load(db, rnd, 1500, 700); // unflushed merges and tombstones on top of the shared tables
                atSecond = CheckpointTest.contents(db);
                be.createBackup(db);
            }
            assertThat(atFirst).as("seed %d", seed).isNotEmpty().isNotEqualTo(atSecond);
            try (Db cp = Db.open(dir.resolve("cp1"), ttlMerge())) {
                assertThat(CheckpointTest.contents(cp))
                        .as("checkpoint, seed %d", seed)
                        .isEqualTo(atFirst);
                cp.merge(b(key("k", 1)), b("x"));
                cp.checkpoint(dir.resolve("cp1b")); // a checkpoint of a checkpoint (its WAL copies have no log-start)
            }
            try (Db cp = Db.open(dir.resolve("cp1b"), ttlMerge())) {
                TreeMap<String, String> expected = new TreeMap<>(atFirst);
                assertThat(CheckpointTest.contents(cp).keySet()).contains(key("k", 1));
                expected.remove(key("k", 1));
                TreeMap<String, String> got = CheckpointTest.contents(cp);
                got.remove(key("k", 1));
                assertThat(got).isEqualTo(expected);
            }
            // The TTL flag travels: opening without TTL is refused.
            Options noTtl = ttlMerge().ttl(null);
            assertThatThrownBy(() -> Db.open(dir.resolve("cp1"), noTtl).close())
                    .isInstanceOf(TtlMismatchException.class);

            List<BackupEngine.BackupInfo> infos = be.backups();
            assertThat(infos).hasSize(2);
            long shared = infos.get(1).files().stream()
                    .filter(f -> infos.get(0).files().contains(f))
                    .count();
            assertThat(shared).as("tables shared by the incremental backup").isPositive();
            be.deleteBackup(infos.get(0).id());
            be.verify(infos.get(1).id());
            be.restore(infos.get(1).id(), dir.resolve("r2"));
            try (Db r = Db.open(dir.resolve("r2"), ttlMerge())) {
                assertThat(CheckpointTest.contents(r))
                        .as("restore of backup 2, seed %d", seed)
                        .isEqualTo(atSecond);
            }
            assertThatThrownBy(() -> Db.open(dir.resolve("r2"), noTtl).close())
                    .isInstanceOf(TtlMismatchException.class);
            // Restore into a non-empty directory is refused and leaves it as it was.
            assertThatThrownBy(() -> be.restore(infos.get(1).id(), dir.resolve("r2")))
                    .isInstanceOf(InvalidArgumentException.class);
            try (Db r = Db.open(dir.resolve("r2"), ttlMerge())) {
                assertThat(CheckpointTest.contents(r)).isEqualTo(atSecond);
            }
        }
    }

    /**
     * A writer commits batches {put a_i, merge ctr +1} (every 10th also deleting a_(i-5) by a range tombstone) while
     * another thread ingests, flushes, compacts and deletes files in a disjoint range. Each checkpoint must open with
     * a counter n at least the batches acknowledged before the call, and exactly the writer's keys of the first n
     * batches.
     */
    @Test
    void checkpointsUnderWritesIngestionsCompactionsAndFileDeletionsHoldAPrefix() throws Exception {
        long seed = TestKeys.seed("checkpointsUnderWritesIngestions");
        Path src = dir.resolve("db");
        Options opts = ttlMerge().ttl(null).mergeOperator(MergeOperators.uint64Add());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong acked = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (Db db = Db.open(src, opts)) {
            Thread writer = new Thread(() -> {
                try {
                    for (long i = 0; !stop.get(); i++) {
                        WriteBatch wb = new WriteBatch().put(b(key("a", i)), b("v" + i));
                        wb.merge(b("ctr"), MergeOperators.encodeUint64(1));
                        if (i % 10 == 9) {
                            wb.deleteRange(b(key("a", i - 5)), b(key("a", i - 4)));
                        }
                        db.write(wb);
                        acked.set(i + 1);
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            });
            Thread churn = new Thread(() -> {
                Random rnd = new Random(seed);
                try {
                    for (int round = 0; !stop.get(); round++) {
                        Path f = dir.resolve("ingest-" + round + ".sst");
                        try (TableFileWriter w = TableFileWriter.create(f, opts)) {
                            for (int j = 0; j < 50; j++) {
                                w.put(b(key("z" + String.format("%04d", round), j)), b("z" + j));
                            }
                            w.finish();
                        }
                        db.ingest(List.of(f), IngestOptions.defaults().moveFiles(rnd.nextBoolean()));
                        switch (rnd.nextInt(3)) {
                            case 0 -> db.flush();
                            case 1 -> db.compactRange(null, null);
                            default -> db.deleteFilesInRange(b("z"), b("z" + String.format("%04d", round / 2)));
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            });
            writer.start();
            churn.start();
            List<String> log = new ArrayList<>();
            try {
                for (int c = 0; c < 8 && failure.get() == null; c++) {
                    long target = acked.get() + 300;
                    while (acked.get() < target && failure.get() == null) {
                        Thread.onSpinWait();
                    }
                    long before = acked.get();
                    Path cp = dir.resolve("cp" + c);
                    db.checkpoint(cp);
                    long after = acked.get();
                    try (Db copy = Db.open(cp, opts)) {
                        byte[] ctr = copy.get(b("ctr"));
                        long n = ctr == null ? 0 : MergeOperators.decodeUint64(ctr);
                        log.add(before + "<=" + n + "<=" + after);
                        assertThat(n).as("checkpoint %d, seed %d", c, seed).isBetween(before, after + 1);
                        for (long i = 0; i < n + 20; i++) {
                            boolean deleted = i % 10 == 4 && i + 5 < n; // batch i+5 deleted it
                            byte[] want = i >= n || deleted ? null : b("v" + i);
                            assertThat(copy.get(b(key("a", i))))
                                    .as("checkpoint %d key %d of %d, seed %d", c, i, n, seed)
                                    .isEqualTo(want);
                        }
                    }
                }
            } finally {
                stop.set(true);
                writer.join();
                churn.join();
            }
            System.out.println("checkpoints (acked before <= counter <= after): " + log + " seed " + seed);
            if (failure.get() != null) {
                throw new AssertionError("seed " + seed, failure.get());
            }
        }
        Files.walk(dir).count(); // the directory is readable to the end (no stray handles)
    }

    /** The writer's state after {@code n} batches: counter n, a_i = v_i except those deleted by a later batch. */
    private static void assertPrefix(Db db, long n, long limit, String ctx) {
        byte[] ctr = db.get(b("ctr"));
        assertThat(ctr == null ? 0 : MergeOperators.decodeUint64(ctr))
                .as(ctx + " counter")
                .isEqualTo(n);
        for (long i = 0; i < limit; i++) {
            boolean deleted = i % 10 == 4 && i + 5 < n;
            byte[] want = i >= n || deleted ? null : b("v" + i);
            assertThat(db.get(b(key("a", i))))
                    .as(ctx + " key " + i + " of " + n)
                    .isEqualTo(want);
        }
    }

    /**
     * A power loss tears the unsynced ends of several WALs (SyncMode.NONE, small memtables); the reopened database
     * holds a prefix of the batches (at least those before the last syncWal), and a checkpoint and a backup taken at
     * once after the recovery hold exactly that prefix, also after a second power loss of the source.
     */
    @Test
    void tornWalsThenImmediateCheckpointAndBackupHoldTheRecoveredPrefix() throws Exception {
        long seed = TestKeys.seed("tornWalsThenImmediateCheckpointAndBackup");
        Random rnd = new Random(seed);
        for (int round = 0; round < 6; round++) {
            String ctx = "seed " + seed + " round " + round;
            io.bloomkv.engine.fs.FaultInjectingFileSystem fs = io.bloomkv.engine.fs.FaultInjectingFileSystem.overDisk();
            Options opts = ttlMerge()
                    .ttl(null)
                    .mergeOperator(MergeOperators.uint64Add())
                    .fileSystem(fs);
            Path src = dir.resolve("t" + round);
            Db db = Db.open(src, opts);
            int n = 300 + rnd.nextInt(1500);
            long synced = 0;
            for (long i = 0; i < n; i++) {
                WriteBatch wb = new WriteBatch().put(b(key("a", i)), b("v" + i));
                wb.merge(b("ctr"), MergeOperators.encodeUint64(1));
                if (i % 10 == 9) {
                    wb.deleteRange(b(key("a", i - 5)), b(key("a", i - 4)));
                }
                db.write(wb);
                if (rnd.nextInt(400) == 0) {
                    db.syncWal();
                    synced = i + 1;
                }
            }
            SimulatedCrashTest.crash(fs, db, rnd);
            try (BackupEngine be = BackupEngine.open(dir.resolve("b" + round), fs)) {
                Db reopened = Db.open(src, opts);
                byte[] ctr = reopened.get(b("ctr"));
                long present = ctr == null ? 0 : MergeOperators.decodeUint64(ctr);
                assertThat(present).as(ctx + " durable by syncWal").isBetween(synced, (long) n);
                assertPrefix(reopened, present, n, ctx + " reopened");
                reopened.checkpoint(dir.resolve("cp-t" + round));
                be.createBackup(reopened);
                reopened.put(b(key("a", n + 1)), b("later")); // after the point
                SimulatedCrashTest.crash(fs, reopened, rnd);
                try (Db cp = Db.open(dir.resolve("cp-t" + round), opts)) {
                    assertPrefix(cp, present, n + 2, ctx + " checkpoint");
                }
                be.verify(1);
                be.restore(1, dir.resolve("r-t" + round));
                try (Db r = Db.open(dir.resolve("r-t" + round), opts)) {
                    assertPrefix(r, present, n + 2, ctx + " restored");
                }
                try (Db again = Db.open(src, opts)) {
                    assertPrefix(again, present, n, ctx + " source after a second crash");
                }
            }
        }
    }

    /**
     * Two checkpoints into the same new directory at once (two threads): one may fail, but the one that succeeds must
     * open with every key. Checkpoint A is held right after it created the directory; B, finding it empty, runs to the
     * end; then A resumes.
     */
    @Test
    void aCheckpointThatLosesARaceForItsDirectoryLeavesTheWinnersFilesAlone() throws Exception {
        java.util.concurrent.CountDownLatch created = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch resume = new java.util.concurrent.CountDownLatch(1);
        AtomicReference<Thread> held = new AtomicReference<>();
        FileSystem fs = new io.bloomkv.engine.fs.ForwardingFileSystem(FileSystem.disk()) {
            @Override
            public void createDirectories(Path d) throws java.io.IOException {
                super.createDirectories(d);
                if (Thread.currentThread() == held.get()) {
                    created.countDown();
                    try {
                        resume.await();
                    } catch (InterruptedException e) {
                        throw new java.io.InterruptedIOException();
                    }
                }
            }
        };
        Options opts = ttlMerge().ttl(null).fileSystem(fs);
        Path target = dir.resolve("cp");
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            for (int i = 0; i < 2000; i++) {
                db.put(b(key("a", i)), b("v" + i));
            }
            db.flush();
            AtomicReference<Throwable> aFailure = new AtomicReference<>();
            Thread a = new Thread(() -> {
                try {
                    db.checkpoint(target);
                } catch (Throwable t) {
                    aFailure.set(t);
                }
            });
            held.set(a);
            a.start();
            created.await();
            Throwable bFailure = null;
            try {
                db.checkpoint(target);
            } catch (RuntimeException e) {
                bFailure = e;
            } finally {
                resume.countDown();
                a.join();
            }
            assertThat(aFailure.get() == null || bFailure == null)
                    .as("at least one checkpoint succeeds (A: %s, B: %s)", aFailure.get(), bFailure)
                    .isTrue();
        }
        try (Db cp = Db.open(target, ttlMerge().ttl(null))) {
            for (int i = 0; i < 2000; i++) {
                assertThat(cp.get(b(key("a", i)))).as("key %d", i).isEqualTo(b("v" + i));
            }
        }
    }
}
