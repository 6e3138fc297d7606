package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The sync modes: EVERY_WRITE fsyncs each write; GROUP_COMMIT batches concurrent writers behind one fsync. */
class GroupCommitTest {
    @TempDir
    Path dir;

    @Test
    void everyWriteSyncsEachWrite() {
        try (Db db = Db.open(dir, Options.defaults().syncMode(SyncMode.EVERY_WRITE))) {
            for (int i = 0; i < 50; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v"));
            }
            Stats s = db.stats();
            assertThat(s.walSyncs()).isEqualTo(50);
            assertThat(s.walRecords()).isEqualTo(50);
        }
    }

    @Test
    void noneNeverSyncsAWrite() {
        try (Db db = Db.open(dir, Options.defaults().syncMode(SyncMode.NONE))) {
            for (int i = 0; i < 50; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v"));
            }
            assertThat(db.stats().walSyncs()).isZero();
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void concurrentWritersShareFsyncsAndAllWritesSurvive() throws Exception {
        int threads = 8;
        int perThread = 150;
        // WAL fsyncs take at least 2 ms, as on a disk, so writers queue behind each sync however fast
        // the test machine's fsync is (tmpfs makes it free) and however the threads are scheduled.
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        fs.inject((op, p) -> {
            if (op == Op.SYNC && p.getFileName().toString().endsWith(".log")) {
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        });
        try (Db db =
                Db.open(dir, Options.defaults().syncMode(SyncMode.GROUP_COMMIT).fileSystem(fs))) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    futures.add(pool.submit(() -> {
                        for (int i = 0; i < perThread; i++) {
                            db.put(TestKeys.key(id * 10_000L + i), TestKeys.bytes("t" + id + "-" + i));
                        }
                    }));
                }
                for (Future<?> f : futures) {
                    f.get();
                }
            } finally {
                pool.shutdown();
            }
            Stats s = db.stats();
            System.out.println("GroupCommitTest: " + s.writeBatches() + " writes, " + s.walRecords() + " WAL records, "
                    + s.walSyncs() + " fsyncs");
            assertThat(s.writeBatches()).isEqualTo((long) threads * perThread);
            assertThat(s.walSyncs()).isEqualTo(s.walRecords());
            assertThat(s.walRecords()).as("groups formed behind a leader").isLessThan(s.writeBatches());
        }
        try (Db db = Db.open(dir, Options.defaults())) {
            for (int t = 0; t < threads; t++) {
                for (int i = 0; i < perThread; i++) {
                    assertThat(TestKeys.str(db.get(TestKeys.key(t * 10_000L + i))))
                            .isEqualTo("t" + t + "-" + i);
                }
            }
        }
    }

    /**
     * Single puts (which build no batch) and batches of puts and deletes from concurrent writers, grouped behind slow
     * WAL syncs so that most WAL records mix both kinds: every write is read back, then again after the WAL is
     * replayed, and values larger than the leader's scratch ({@link CommitPipeline#WAL_SCRATCH_MAX}) join the groups.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void groupsMixingPutsAndBatchesReplayFromTheWal() throws Exception {
        int threads = 6;
        int perThread = 120;
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        fs.inject((op, p) -> {
            if (op == Op.SYNC && p.getFileName().toString().endsWith(".log")) {
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        });
        byte[] large = new byte[CommitPipeline.WAL_SCRATCH_MAX + 100];
        java.util.Arrays.fill(large, (byte) 'L');
        try (Db db =
                Db.open(dir, Options.defaults().syncMode(SyncMode.GROUP_COMMIT).fileSystem(fs))) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    futures.add(pool.submit(() -> {
                        for (int i = 0; i < perThread; i++) {
                            long k = id * 10_000L + 2L * i;
                            if (id % 2 == 0) {
                                byte[] v = i % 40 == 7 ? large : TestKeys.bytes("p" + id + "-" + i);
                                db.put(TestKeys.key(k), v);
                            } else {
                                db.write(new WriteBatch()
                                        .put(TestKeys.key(k), TestKeys.bytes("b" + id + "-" + i))
                                        .put(TestKeys.key(k + 1), TestKeys.bytes("gone"))
                                        .delete(TestKeys.key(k + 1)));
                            }
                        }
                    }));
                }
                for (Future<?> f : futures) {
                    f.get();
                }
            } finally {
                pool.shutdown();
            }
            Stats s = db.stats();
            assertThat(s.writeBatches()).isEqualTo((long) threads * perThread);
            assertThat(s.walRecords()).as("groups formed behind a leader").isLessThan(s.writeBatches());
            assertAllWrites(db, threads, perThread, large);
        }
        try (Db db = Db.open(dir, Options.defaults())) {
            assertAllWrites(db, threads, perThread, large);
        }
    }

    private static void assertAllWrites(Db db, int threads, int perThread, byte[] large) {
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < perThread; i++) {
                long k = t * 10_000L + 2L * i;
                if (t % 2 == 0) {
                    byte[] want = i % 40 == 7 ? large : TestKeys.bytes("p" + t + "-" + i);
                    assertThat(db.get(TestKeys.key(k))).as("put %d-%d", t, i).isEqualTo(want);
                } else {
                    assertThat(TestKeys.str(db.get(TestKeys.key(k)))).isEqualTo("b" + t + "-" + i);
                    assertThat(db.get(TestKeys.key(k + 1)))
                            .as("deleted %d-%d", t, i)
                            .isNull();
                }
            }
        }
    }
}
