package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link Db#syncWal()} under SyncMode.NONE, with and without manualWalFlush: a simulated power loss keeps every write made before the last sync. */
class SyncWalTest {
    @TempDir
    Path dir;

    /** A database over {@code fs} whose writes are not synced ({@link SyncMode#NONE}) until syncWal() is called. */
    private static Options unsynced(FaultInjectingFileSystem fs, int writeBufferSize) {
        return Options.defaults().fileSystem(fs).syncMode(SyncMode.NONE).writeBufferSize(writeBufferSize);
    }

    @ParameterizedTest(name = "manualWalFlush={0}")
    @ValueSource(booleans = {false, true})
    void everyWriteBeforeTheLastSyncSurvivesACrash(boolean manualWalFlush) throws IOException {
        long seed = TestKeys.seed("SyncWalTest");
        Random rnd = new Random(seed);
        for (int round = 0; round < 3; round++) {
            String ctx = "seed " + seed + " round " + round;
            Path d = dir.resolve("r" + round + "-" + manualWalFlush);
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            Options options = unsynced(fs, 8 << 10).manualWalFlush(manualWalFlush);
            Db db = Db.open(d, options);
            int n = 300 + rnd.nextInt(1500);
            int synced = 0;
            long syncsBefore = db.stats().walSyncs();
            int syncs = 0;
            for (int i = 0; i < n; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
                if (rnd.nextInt(100) == 0) {
                    db.syncWal();
                    synced = i + 1;
                    syncs++;
                }
            }
            assertThat(db.stats().walSyncs() - syncsBefore)
                    .as(ctx + " one WAL sync per call at least")
                    .isGreaterThanOrEqualTo(syncs);
            SimulatedCrashTest.crash(fs, db, rnd);
            try (Db reopened = Db.open(d, options)) {
                for (int i = 0; i < synced; i++) {
                    assertThat(TestKeys.str(reopened.get(TestKeys.key(i))))
                            .as(ctx + " key " + i + " written before the sync at " + synced)
                            .isEqualTo("v" + i);
                }
            }
        }
    }

    @Test
    void manualWalFlushKeepsEverythingAcrossACleanClose() {
        Options o = Options.defaults().manualWalFlush(true).writeBufferSize(64 << 10);
        try (Db db = Db.open(dir.resolve("clean"), o)) {
            for (int i = 0; i < 3000; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
                assertThat(TestKeys.str(db.get(TestKeys.key(i))))
                        .as("read your write")
                        .isEqualTo("v" + i);
            }
        }
        try (Db db = Db.open(dir.resolve("clean"), o)) {
            for (int i = 0; i < 3000; i++) {
                assertThat(TestKeys.str(db.get(TestKeys.key(i)))).isEqualTo("v" + i);
            }
        }
    }

    /**
     * A memtable switch under NONE whose new WAL cannot take its log-start record fails the database (writes are
     * refused with the background error); the old WAL, which holds every acknowledged write, stays the current one:
     * syncWal() makes those writes durable (as often as it is called) and a crash after it loses none of them.
     */
    @Test
    void afterASwitchThatFailsAtTheNewLogSyncWalStillSyncsTheOldOne() throws IOException {
        long seed = TestKeys.seed("SyncWalTest.failedSwitch");
        Random rnd = new Random(seed);
        Path d = dir.resolve("failed-switch");
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options options = unsynced(fs, 1 << 20).autoCompaction(false);
        Db db = Db.open(d, options);
        int n = 200 + rnd.nextInt(300);
        for (int i = 0; i < n; i++) {
            db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
        }
        java.util.List<String> logs = new java.util.ArrayList<>();
        for (Path p : fs.list(d)) {
            if (p.getFileName().toString().endsWith(".log")) {
                logs.add(p.getFileName().toString());
            }
        }
        assertThat(logs).as("one live WAL").hasSize(1);
        FaultInjectingFileSystem.Fault newLog =
                fs.inject(FaultInjectingFileSystem.on(FaultInjectingFileSystem.Op.WRITE, "*.log")
                        .and((op, p) -> !p.getFileName().toString().equals(logs.get(0))));
        assertThatThrownBy(db::flush).isInstanceOf(BloomKvIOException.class).hasMessageContaining("cannot switch");
        newLog.remove();
        assertThat(newLog.fired()).as("the log-start record's write failed").isPositive();
        assertThatThrownBy(() -> db.put(TestKeys.key(n), TestKeys.bytes("refused")))
                .isInstanceOf(BloomKvException.class)
                .hasMessageContaining("cannot switch");
        db.syncWal();
        db.syncWal(); // the current WAL stays open: a second sync finds it so
        SimulatedCrashTest.crash(fs, db, rnd);
        try (Db reopened = Db.open(d, options)) {
            for (int i = 0; i < n; i++) {
                assertThat(TestKeys.str(reopened.get(TestKeys.key(i))))
                        .as("seed " + seed + " key " + i + " of " + n)
                        .isEqualTo("v" + i);
            }
        }
    }
}
