package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

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

    @ParameterizedTest(name = "manualWalFlush={0}")
    @ValueSource(booleans = {false, true})
    void everyWriteBeforeTheLastSyncSurvivesACrash(boolean manualWalFlush) throws IOException {
        long seed = TestKeys.seed("SyncWalTest");
        Random rnd = new Random(seed);
        for (int round = 0; round < 3; round++) {
            String ctx = "seed " + seed + " round " + round;
            Path d = dir.resolve("r" + round + "-" + manualWalFlush);
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            Options options = Options.defaults()
                    .fileSystem(fs)
                    .syncMode(SyncMode.NONE)
                    .writeBufferSize(8 << 10)
                    .manualWalFlush(manualWalFlush);
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
}
