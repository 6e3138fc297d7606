package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Power losses simulated by {@link FaultInjectingFileSystem#crash(Random)}: unsynced bytes are lost
 * or torn at a random length. Acknowledged synced writes must survive every crash; a torn WAL tail
 * is cut cleanly; half-written tables (a flush or compaction cut short) are ignored and removed. Wide range deletions
 * make the write path rewrite memtables without what they hide before the crashes.
 * Replay with -Dbloomkv.seed=N.
 */
class SimulatedCrashTest {
    @TempDir
    Path dir;

    private static Options tiny(FaultInjectingFileSystem fs, SyncMode mode) {
        return Options.defaults()
                .fileSystem(fs)
                .syncMode(mode)
                .writeBufferSize(8 << 10)
                .blockSize(512)
                .targetFileSize(8 << 10)
                .maxBytesForLevelBase(32 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2);
    }

    /** Stops {@code db} as a crash would (its threads and handles see only errors), then drops unsynced data. */
    static void crash(FaultInjectingFileSystem fs, Db db, Random rnd) throws IOException {
        FaultInjectingFileSystem.Fault everything = fs.inject((op, p) -> true);
        try {
            db.close();
        } catch (RuntimeException expected) {
            // closing through a dead file system fails; what matters is what is on "disk"
        } finally {
            everything.remove();
        }
        fs.crash(rnd);
    }

    private static void assertContentEquals(Db db, TreeMap<String, byte[]> model, String ctx) {
        TreeMap<String, byte[]> actual = new TreeMap<>();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                actual.put(TestKeys.str(it.key()), it.value());
            }
        }
        assertThat(actual.keySet()).as(ctx + " keys").isEqualTo(model.keySet());
        for (Map.Entry<String, byte[]> e : model.entrySet()) {
            assertThat(actual.get(e.getKey()))
                    .as(ctx + " value of " + e.getKey())
                    .isEqualTo(e.getValue());
            assertThat(db.get(TestKeys.bytes(e.getKey())))
                    .as(ctx + " get " + e.getKey())
                    .isEqualTo(e.getValue());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = SyncMode.class,
            names = {"EVERY_WRITE", "GROUP_COMMIT"})
    void randomCrashesLoseNothingAcknowledged(SyncMode mode) throws IOException {
        long seed = TestKeys.seed("SimulatedCrashTest.randomCrashes." + mode);
        Random rnd = new Random(seed);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options = tiny(fs, mode);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Db db = Db.open(dir, options);
        long rewrites = 0;
        try {
            for (int round = 0; round < 8; round++) {
                String ctx = "seed " + seed + " round " + round;
                int ops = 50 + rnd.nextInt(250);
                for (int op = 0; op < ops; op++) {
                    byte[] k = TestKeys.key(rnd.nextInt(400));
                    int r = rnd.nextInt(100);
                    if (r < 70) {
                        byte[] v = TestKeys.value(rnd, 120);
                        db.put(k, v);
                        model.put(TestKeys.str(k), v);
                    } else if (r < 85) {
                        db.delete(k);
                        model.remove(TestKeys.str(k));
                    } else if (r < 88) {
                        // A wide range deletion: it hides much of the memtable, which the next write then rewrites
                        // without what it hides (MemTable.withoutHidden), before the crash or a flush.
                        int from = rnd.nextInt(400);
                        int to = Math.min(400, from + 1 + rnd.nextInt(250));
                        db.deleteRange(TestKeys.key(from), TestKeys.key(to));
                        model.subMap(TestKeys.str(TestKeys.key(from)), TestKeys.str(TestKeys.key(to)))
                                .clear();
                    } else if (r < 97) {
                        WriteBatch b = new WriteBatch();
                        TreeMap<String, byte[]> pending = new TreeMap<>();
                        for (int i = 0; i < 8; i++) {
                            byte[] bk = TestKeys.key(rnd.nextInt(400));
                            byte[] bv = TestKeys.value(rnd, 60);
                            b.put(bk, bv);
                            pending.put(TestKeys.str(bk), bv);
                        }
                        db.write(b);
                        model.putAll(pending);
                    } else {
                        db.flush();
                    }
                }
                // Every round also rewrites a memtable before its crash, whatever the random operations did: puts
                // into a fresh memtable (well below its 8 KiB, past the rewrite's 1 KiB), a range deletion hiding all
                // of them, then a write, which replaces the memtable with one without them.
                db.flush();
                long rewritesBefore = db.stats().memtableRewrites();
                for (int i = 0; i < 30; i++) {
                    byte[] k = TestKeys.key(rnd.nextInt(400));
                    byte[] v = TestKeys.value(rnd, 60);
                    db.put(k, v);
                    model.put(TestKeys.str(k), v);
                }
                db.deleteRange(TestKeys.key(0), TestKeys.key(400));
                model.clear();
                byte[] lastKey = TestKeys.key(rnd.nextInt(400));
                byte[] last = TestKeys.value(rnd, 60);
                db.put(lastKey, last);
                model.put(TestKeys.str(lastKey), last);
                assertThat(db.stats().memtableRewrites())
                        .as(ctx + ": the memtable under the range deletion rewritten")
                        .isGreaterThan(rewritesBefore);
                rewrites += db.stats().memtableRewrites();
                crash(fs, db, rnd);
                db = Db.open(dir, options);
                assertContentEquals(db, model, ctx);
            }
            assertThat(rewrites)
                    .as("seed " + seed + ": memtables rewritten before crashes")
                    .isPositive();
        } finally {
            db.close();
        }
    }

    @Test
    void tornWalTailIsCutCleanly() throws IOException {
        long seed = TestKeys.seed("SimulatedCrashTest.tornWalTail");
        Random rnd = new Random(seed);
        long notReplayed = 0;
        for (int round = 0; round < 8; round++) {
            String ctx = "seed " + seed + " round " + round;
            Path d = dir.resolve("r" + round);
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            Options options =
                    Options.defaults().fileSystem(fs).syncMode(SyncMode.NONE).writeBufferSize(16 << 10);
            Db db = Db.open(d, options);
            int n = 200 + rnd.nextInt(1500);
            int synced = 0; // every write before the last syncWal() is durable, in the WALs of older memtables too
            for (int i = 0; i < n; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
                if (rnd.nextInt(500) == 0) {
                    db.syncWal();
                    synced = i + 1;
                }
            }
            crash(fs, db, rnd);
            try (Db reopened = Db.open(d, options)) {
                // The WALs are a sequence: what survives is a prefix of the writes, however the unsynced ends of the
                // logs of older memtables (not synced at their switch under NONE) and of the last one were torn.
                int present = 0;
                while (present < n && reopened.get(TestKeys.key(present)) != null) {
                    present++;
                }
                assertThat(present).as(ctx + ": writes made durable by syncWal").isGreaterThanOrEqualTo(synced);
                notReplayed += reopened.stats().walsNotReplayed();
                for (int i = 0; i < n; i++) {
                    byte[] v = reopened.get(TestKeys.key(i));
                    if (i < present) {
                        assertThat(TestKeys.str(v)).as(ctx + " key " + i).isEqualTo("v" + i);
                    } else {
                        assertThat(v)
                                .as(ctx + " key " + i + " after the first missing key " + present)
                                .isNull();
                    }
                }
                reopened.put(TestKeys.key(n), TestKeys.bytes("after"));
                assertThat(TestKeys.str(reopened.get(TestKeys.key(n)))).isEqualTo("after");
            }
        }
        System.out.println("SimulatedCrashTest.tornWalTail: " + notReplayed + " WALs not replayed after a lost one");
    }

    @Test
    void halfWrittenTableIsIgnoredAndRemoved() throws IOException {
        long seed = TestKeys.seed("SimulatedCrashTest.halfWrittenTable");
        Random rnd = new Random(seed);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options = Options.defaults().fileSystem(fs).syncMode(SyncMode.EVERY_WRITE);
        Db db = Db.open(dir, options);
        for (int i = 0; i < 500; i++) {
            db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
        }
        FaultInjectingFileSystem.Fault tableSync = fs.inject(FaultInjectingFileSystem.on(Op.SYNC, "*.sst"));
        assertThatThrownBy(db::flush).isInstanceOf(BloomKvIOException.class);
        // After a failed flush, writes fail until reopen; reads go on.
        assertThatThrownBy(() -> db.put(TestKeys.key(9999), TestKeys.bytes("x")))
                .isInstanceOf(BloomKvIOException.class);
        assertThat(TestKeys.str(db.get(TestKeys.key(7)))).isEqualTo("v7");
        tableSync.remove();
        crash(fs, db, rnd);
        try (Db reopened = Db.open(dir, options)) {
            for (int i = 0; i < 500; i++) {
                assertThat(TestKeys.str(reopened.get(TestKeys.key(i))))
                        .as("seed " + seed + " key " + i)
                        .isEqualTo("v" + i);
            }
            assertThat(reopened.get(TestKeys.key(9999))).isNull();
            long tablesOnDisk;
            try (Stream<Path> files = Files.list(dir)) {
                tablesOnDisk = files.filter(p -> p.toString().endsWith(".sst")).count();
            }
            assertThat(tablesOnDisk)
                    .as("no orphan table left")
                    .isEqualTo(reopened.stats().tableCount());
        }
    }

    @Test
    void failuresDuringFlushOrCompactionThenCrashLoseNothing() throws IOException {
        long seed = TestKeys.seed("SimulatedCrashTest.failuresDuringCompaction");
        Random rnd = new Random(seed);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options = tiny(fs, SyncMode.EVERY_WRITE);
        TreeMap<String, byte[]> model = new TreeMap<>();
        long compactions = 0;
        for (int round = 0; round < 8; round++) {
            String ctx = "seed " + seed + " round " + round;
            Db db = Db.open(dir, options);
            assertContentEquals(db, model, ctx + " after reopen");
            // Fail the k-th table write or MANIFEST sync from now on: a flush or compaction dies midway.
            FaultInjectingFileSystem.Fault fault = rnd.nextBoolean()
                    ? fs.injectFromNth(FaultInjectingFileSystem.on(Op.WRITE, "*.sst"), 5 + rnd.nextInt(200))
                    : fs.injectFromNth(FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*"), 1 + rnd.nextInt(6));
            boolean failed = false;
            for (int op = 0; op < 1500 && !failed; op++) {
                byte[] k = TestKeys.key(rnd.nextInt(1000));
                byte[] v = TestKeys.value(rnd, 100);
                try {
                    if (rnd.nextInt(8) == 0) {
                        db.delete(k);
                        model.remove(TestKeys.str(k));
                    } else {
                        db.put(k, v);
                        model.put(TestKeys.str(k), v);
                    }
                } catch (BloomKvIOException e) {
                    failed = true;
                }
            }
            compactions += db.stats().compactions();
            fault.remove();
            crash(fs, db, rnd);
        }
        try (Db db = Db.open(dir, options)) {
            assertContentEquals(db, model, "seed " + seed + " final");
        }
        assertThat(compactions).as("seed " + seed + ": compactions ran").isPositive();
    }

    @Test
    void writesAfterABackgroundErrorFailButTheDataIsKept() throws IOException {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options = Options.defaults().fileSystem(fs).syncMode(SyncMode.GROUP_COMMIT);
        try (Db db = Db.open(dir, options)) {
            db.put(TestKeys.key(1), TestKeys.bytes("one"));
            FaultInjectingFileSystem.Fault walWrite = fs.inject(FaultInjectingFileSystem.on(Op.WRITE, "*.log"));
            assertThatThrownBy(() -> db.put(TestKeys.key(2), TestKeys.bytes("two")))
                    .isInstanceOf(BloomKvIOException.class)
                    .hasMessageContaining(".log");
            walWrite.remove();
            assertThatThrownBy(() -> db.put(TestKeys.key(3), TestKeys.bytes("three")))
                    .isInstanceOf(BloomKvIOException.class);
            assertThat(TestKeys.str(db.get(TestKeys.key(1)))).isEqualTo("one");
        }
        try (Db db = Db.open(dir, options)) {
            assertThat(TestKeys.str(db.get(TestKeys.key(1)))).isEqualTo("one");
            assertThat(db.get(TestKeys.key(2))).isNull();
            db.put(TestKeys.key(3), TestKeys.bytes("three"));
            assertThat(Arrays.equals(db.get(TestKeys.key(3)), TestKeys.bytes("three")))
                    .isTrue();
        }
    }

    /**
     * A MANIFEST sync that fails may still have written the edit (the OS keeps the bytes; here a
     * clean close flushes them), so the table that edit names must not be deleted as obsolete
     * (LevelDB: no file deletion after a background error). Version drops after the failure, from
     * an iterator opened before an earlier flush, must not remove it either.
     */
    @Test
    void failedManifestSyncKeepsTheTableTheEditMayName() throws IOException {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options =
                Options.defaults().fileSystem(fs).syncMode(SyncMode.EVERY_WRITE).autoCompaction(false);
        Db db = Db.open(dir, options);
        try {
            for (int i = 0; i < 100; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
            }
            DbIterator pinsOldVersion = db.iterator();
            db.flush();
            for (int i = 100; i < 200; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
            }
            FaultInjectingFileSystem.Fault manifestSync = fs.inject(FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*"));
            assertThatThrownBy(db::flush).isInstanceOf(BloomKvIOException.class);
            assertThat(manifestSync.fired()).isPositive();
            manifestSync.remove();
            pinsOldVersion.close();
        } finally {
            db.close();
        }
        try (Db reopened = Db.open(dir, options)) {
            for (int i = 0; i < 200; i++) {
                assertThat(TestKeys.str(reopened.get(TestKeys.key(i))))
                        .as("key " + i)
                        .isEqualTo("v" + i);
            }
        }
    }

    /**
     * A crash in the middle of a compaction, made certain: a fault that only the compaction thread
     * hits (a table write at a random point, or the MANIFEST sync that would install the result),
     * then a power loss. The database must open with every acknowledged write.
     */
    @ParameterizedTest
    @ValueSource(strings = {"table write", "MANIFEST sync"})
    void crashInTheMiddleOfACompactionLosesNothing(String where) throws IOException {
        long seed = TestKeys.seed("SimulatedCrashTest.crashMidCompaction." + where.replace(' ', '-'));
        Random rnd = new Random(seed);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options = tiny(fs, SyncMode.EVERY_WRITE);
        FaultInjectingFileSystem.FaultPredicate onCompactionThread =
                (op, p) -> Thread.currentThread().getName().startsWith("bloomkv-compact-");
        TreeMap<String, byte[]> model = new TreeMap<>();
        for (int round = 0; round < 4; round++) {
            String ctx = "seed " + seed + " round " + round;
            Db db = Db.open(dir, options);
            assertContentEquals(db, model, ctx + " after reopen");
            FaultInjectingFileSystem.Fault fault = where.equals("table write")
                    ? fs.injectFromNth(
                            FaultInjectingFileSystem.on(Op.WRITE, "*.sst").and(onCompactionThread), 1 + rnd.nextInt(40))
                    : fs.injectFromNth(
                            FaultInjectingFileSystem.on(Op.SYNC, "MANIFEST-*").and(onCompactionThread),
                            1 + rnd.nextInt(3));
            // Bounded by operations: tiny tables make a compaction every few hundred writes.
            for (int op = 0; op < 50_000 && fault.fired() == 0; op++) {
                byte[] k = TestKeys.key(rnd.nextInt(1000));
                try {
                    if (rnd.nextInt(8) == 0) {
                        db.delete(k);
                        model.remove(TestKeys.str(k));
                    } else {
                        byte[] v = TestKeys.value(rnd, 100);
                        db.put(k, v);
                        model.put(TestKeys.str(k), v);
                    }
                } catch (BloomKvIOException e) {
                    break; // the failed compaction stopped writes; the write was not applied
                }
            }
            assertThat(fault.fired()).as(ctx + ": a compaction failed midway").isPositive();
            fault.remove();
            crash(fs, db, rnd);
        }
        try (Db db = Db.open(dir, options)) {
            assertContentEquals(db, model, "seed " + seed + " final");
        }
    }
}
