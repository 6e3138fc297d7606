package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Options#disableWal}: writes reach the memtable only. A clean close flushes them; a crash loses exactly the
 * writes not yet in a table, and what survives is a prefix of the writes in their order, at least every write made
 * before the last {@link Db#flush()}. Replay with -Dbloomkv.seed=N.
 */
class DisableWalTest {
    @TempDir
    Path dir;

    private static Options noWal(FaultInjectingFileSystem fs) {
        return Options.defaults().fileSystem(fs).disableWal(true).writeBufferSize(8 << 10);
    }

    @Test
    void aCleanCloseKeepsEveryWriteAndNoWalRecordIsWritten() throws IOException {
        Path d = dir.resolve("clean");
        Options o = Options.defaults().disableWal(true).writeBufferSize(64 << 10);
        try (Db db = Db.open(d, o)) {
            for (int i = 0; i < 3000; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
            }
            for (int i = 0; i < 3000; i += 3) {
                db.delete(TestKeys.key(i));
            }
            db.syncWal(); // nothing to sync: no error, no record
            assertThat(db.stats().walRecords()).as("WAL records").isZero();
            assertThat(db.stats().walBytesWritten()).as("WAL bytes").isZero();
            assertThat(db.stats().walSyncs()).as("WAL syncs").isZero();
        }
        try (Stream<Path> files = Files.list(d)) {
            for (Path log : files.filter(p -> p.toString().endsWith(".log")).toList()) {
                assertThat(Files.size(log)).as("WAL " + log.getFileName()).isZero();
            }
        }
        // Reopened with and without a WAL: the close flushed every write into tables.
        for (boolean disable : new boolean[] {true, false}) {
            try (Db db = Db.open(d, Options.defaults().disableWal(disable))) {
                for (int i = 0; i < 3000; i++) {
                    assertThat(TestKeys.str(db.get(TestKeys.key(i))))
                            .as("key " + i + " reopened with disableWal=" + disable)
                            .isEqualTo(i % 3 == 0 ? null : "v" + i);
                }
            }
        }
    }

    @Test
    void aCrashKeepsAPrefixOfTheWritesEndingAtOrAfterTheLastFlush() throws IOException {
        long seed = TestKeys.seed("DisableWalTest.crash");
        Random rnd = new Random(seed);
        for (int round = 0; round < 4; round++) {
            String ctx = "seed " + seed + " round " + round;
            Path d = dir.resolve("r" + round);
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            Db db = Db.open(d, noWal(fs));
            int n = 500 + rnd.nextInt(3000);
            int flushed = 0;
            for (int i = 0; i < n; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
                if (rnd.nextInt(400) == 0) {
                    db.flush();
                    flushed = i + 1;
                }
            }
            SimulatedCrashTest.crash(fs, db, rnd);
            try (Db reopened = Db.open(d, noWal(fs))) {
                int survived = 0;
                while (survived < n && reopened.get(TestKeys.key(survived)) != null) {
                    survived++;
                }
                assertThat(survived)
                        .as(ctx + ": every write before the flush after write " + flushed + " survives")
                        .isGreaterThanOrEqualTo(flushed);
                for (int i = 0; i < n; i++) {
                    assertThat(TestKeys.str(reopened.get(TestKeys.key(i))))
                            .as(ctx + ": key " + i + " (a prefix of " + survived + " writes of " + n + " survived)")
                            .isEqualTo(i < survived ? "v" + i : null);
                }
            }
        }
    }

    @Test
    void aCheckpointHoldsTheMemtablesWrites() {
        Options o = Options.defaults().disableWal(true);
        try (Db db = Db.open(dir.resolve("db"), o)) {
            db.put(TestKeys.bytes("a"), TestKeys.bytes("1"));
            db.checkpoint(dir.resolve("cp"));
            db.put(TestKeys.bytes("b"), TestKeys.bytes("2"));
        }
        try (Db cp = Db.open(dir.resolve("cp"), o)) {
            assertThat(TestKeys.str(cp.get(TestKeys.bytes("a")))).isEqualTo("1");
            assertThat(cp.get(TestKeys.bytes("b"))).isNull();
        }
    }

    @Test
    void aSyncedWriteModeNeedsAWal() {
        for (SyncMode mode : new SyncMode[] {SyncMode.EVERY_WRITE, SyncMode.GROUP_COMMIT}) {
            assertThatThrownBy(() -> Db.open(
                            dir.resolve("s" + mode),
                            Options.defaults().disableWal(true).syncMode(mode)))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("disableWal");
        }
    }

    @Test
    void optionsCopyKeepsIt() {
        assertThat(Options.defaults().disableWal()).isFalse();
        assertThat(Options.defaults().disableWal(true).copy().disableWal()).isTrue();
    }
}
