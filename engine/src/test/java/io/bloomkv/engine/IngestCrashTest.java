package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.NoFsyncFileSystem;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Db#ingest} under failures, in both placements (files overlapping the tree and a memtable: flush, then a
 * rewrite with a new sequence number; files overlapping nothing: moved by a link into the last level):
 * <ul>
 *   <li>every file-system operation of an ingestion failed in turn: the call succeeds with every file in, or throws
 *       and the database serves exactly what it held before (unless the failure stopped it with a background error);
 *       after a crash and a reopen it holds all the files or none;
 *   <li>the process dies at each operation of an ingestion in turn (that one and all later ones fail, then unsynced
 *       bytes are dropped or torn): the reopened database holds exactly the writes before plus all files, or none.
 * </ul>
 * The files hold puts and deletes, and one of them a range deletion over older keys.
 */
class IngestCrashTest {
    @TempDir
    Path dir;

    private static Options small(FileSystem fs) {
        return Options.defaults()
                .fileSystem(fs)
                .writeBufferSize(16 << 10)
                .blockSize(4096)
                .targetFileSize(16 << 10)
                .autoCompaction(false)
                .syncMode(SyncMode.EVERY_WRITE);
    }

    private static FaultInjectingFileSystem faulty() {
        return new FaultInjectingFileSystem(new NoFsyncFileSystem());
    }

    /** A database with tables and a memtable, and two external files; returns the model after ingesting them. */
    private static final class Setup {
        final Db db;
        final TreeMap<String, byte[]> before = new TreeMap<>();
        final TreeMap<String, byte[]> after;
        final List<Path> files;

        Setup(FaultInjectingFileSystem fs, Path base, boolean overlapping, long seed) {
            Random rnd = new Random(seed);
            db = Db.open(base.resolve("db"), small(fs));
            for (int i = 0; i < 300; i++) {
                byte[] k = TestKeys.key(rnd.nextInt(1000));
                byte[] v = TestKeys.value(rnd, 60);
                db.put(k, v);
                before.put(TestKeys.str(k), v);
            }
            db.flush();
            for (int i = 0; i < 20; i++) {
                byte[] k = TestKeys.key(rnd.nextInt(1000));
                byte[] v = TestKeys.value(rnd, 60);
                db.put(k, v);
                before.put(TestKeys.str(k), v);
            }
            int start = overlapping ? 0 : 5000;
            after = new TreeMap<>(before);
            TreeMap<String, byte[]> f1 = new TreeMap<>();
            TreeMap<String, byte[]> f2 = new TreeMap<>();
            // a fifth of the files' entries are deletes (null here); f1 also deletes a range of older keys
            for (int i = start; i < start + 1000; i += 3) {
                (i < start + 500 ? f1 : f2)
                        .put(TestKeys.str(TestKeys.key(i)), rnd.nextInt(5) == 0 ? null : TestKeys.value(rnd, 60));
            }
            byte[][] range = {TestKeys.key(start + 100), TestKeys.key(start + 200)};
            after.subMap(TestKeys.str(range[0]), TestKeys.str(range[1])).clear();
            for (TreeMap<String, byte[]> f : List.of(f1, f2)) {
                f.forEach((k, v) -> {
                    if (v == null) {
                        after.remove(k);
                    } else {
                        after.put(k, v);
                    }
                });
            }
            Options writerOptions = small(fs);
            files = List.of(
                    write(writerOptions, base.resolve("f1.sst"), f1, range),
                    write(writerOptions, base.resolve("f2.sst"), f2, null));
        }

        private static Path write(Options o, Path p, TreeMap<String, byte[]> m, byte[][] range) {
            try (TableFileWriter w = TableFileWriter.create(p, o)) {
                if (range != null) {
                    w.deleteRange(range[0], range[1]);
                }
                for (Map.Entry<String, byte[]> e : m.entrySet()) {
                    if (e.getValue() == null) {
                        w.delete(TestKeys.bytes(e.getKey()));
                    } else {
                        w.put(TestKeys.bytes(e.getKey()), e.getValue());
                    }
                }
                w.finish();
            }
            return p;
        }
    }

    private static boolean isFailed(Db db) {
        try {
            db.syncWal();
            return false;
        } catch (BloomKvException e) {
            return true;
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void everyFailedOperationLeavesAllOrNothing(boolean overlapping) throws IOException {
        long seed = TestSeeds.seed("IngestCrashTest.faultSweep");
        int total = -1;
        int failed = 0;
        for (int i = 0; total < 0 || i <= total; i++) {
            FaultInjectingFileSystem fs = faulty();
            Path base = dir.resolve("f" + overlapping + i);
            Setup s = new Setup(fs, base, overlapping, seed);
            AtomicInteger ops = new AtomicInteger();
            FaultInjectingFileSystem.Fault counter = fs.inject((op, p) -> {
                ops.incrementAndGet();
                return false;
            });
            FaultInjectingFileSystem.Fault nth = i == 0 ? null : fs.injectNth((op, p) -> true, i);
            String ctx = "seed " + seed + ", overlapping " + overlapping + ", fault at operation " + i + " of " + total;
            boolean ingested;
            try {
                s.db.ingest(s.files, IngestOptions.defaults().moveFiles(true));
                ingested = true;
            } catch (BloomKvException e) {
                ingested = false;
                failed++;
            }
            counter.remove();
            if (nth != null) {
                nth.remove();
            }
            if (i == 0) {
                total = ops.get();
                assertThat(ingested).isTrue();
            }
            boolean stopped = isFailed(s.db);
            if (ingested) {
                assertThat(CheckpointTest.contents(s.db)).as(ctx).isEqualTo(CheckpointTest.render(s.after));
            } else if (!stopped) {
                assertThat(CheckpointTest.contents(s.db))
                        .as(ctx + ": unchanged")
                        .isEqualTo(CheckpointTest.render(s.before));
            }
            SimulatedCrashTest.crash(fs, s.db, null);
            try (Db again = Db.open(base.resolve("db"), small(FileSystem.disk()))) {
                TreeMap<String, String> got = CheckpointTest.contents(again);
                if (ingested) {
                    assertThat(got).as(ctx + ": after reopen").isEqualTo(CheckpointTest.render(s.after));
                } else if (!stopped) {
                    assertThat(got).as(ctx + ": after reopen").isEqualTo(CheckpointTest.render(s.before));
                } else {
                    assertThat(got)
                            .as(ctx + ": all or nothing")
                            .isIn(CheckpointTest.render(s.before), CheckpointTest.render(s.after));
                }
            }
        }
        System.out.println("IngestCrashTest fault sweep (overlapping " + overlapping + "): " + total + " operations, "
                + failed + " failed");
        assertThat(failed).isPositive();
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aCrashAtAnyOperationLeavesAllOrNothing(boolean overlapping) throws IOException {
        long seed = TestSeeds.seed("IngestCrashTest.crash");
        int total = -1;
        int all = 0;
        int none = 0;
        for (int i = 0; total < 0 || i <= total + 1; i++) {
            FaultInjectingFileSystem fs = faulty();
            Path base = dir.resolve("c" + overlapping + i);
            Setup s = new Setup(fs, base, overlapping, seed);
            AtomicInteger ops = new AtomicInteger();
            FaultInjectingFileSystem.Fault counter = fs.inject((op, p) -> {
                ops.incrementAndGet();
                return false;
            });
            FaultInjectingFileSystem.Fault dead = i == 0 ? null : fs.injectFromNth((op, p) -> true, i);
            try {
                s.db.ingest(s.files, IngestOptions.defaults().moveFiles(true));
            } catch (BloomKvException expected) {
                // the process is dying
            }
            counter.remove();
            if (i == 0) {
                total = ops.get();
            }
            if (dead != null) {
                dead.remove();
            }
            SimulatedCrashTest.crash(fs, s.db, new Random(seed + i));
            String ctx = "seed " + seed + ", overlapping " + overlapping + ", crash at operation " + i + " of " + total;
            try (Db again = Db.open(base.resolve("db"), small(FileSystem.disk()))) {
                TreeMap<String, String> got = CheckpointTest.contents(again);
                if (got.equals(CheckpointTest.render(s.after))) {
                    all++;
                } else {
                    assertThat(got).as(ctx).isEqualTo(CheckpointTest.render(s.before));
                    none++;
                }
            }
        }
        System.out.println(
                "IngestCrashTest crashes (overlapping " + overlapping + "): " + all + " all, " + none + " none");
        assertThat(all).isPositive();
        assertThat(none).isPositive();
    }
}
