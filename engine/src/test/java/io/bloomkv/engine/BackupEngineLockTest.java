package io.bloomkv.engine;

import static io.bloomkv.engine.BackupEngineTest.load;
import static io.bloomkv.engine.BackupEngineTest.small;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.InMemoryFileSystem;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One writable {@link BackupEngine} per backup directory: {@link BackupEngine#open} holds {@code LOCK} until {@link
 * BackupEngine#close}, and refuses a second writable open of this JVM or of another process with {@link
 * BackupEngineLockedException}; read-only engines take no lock; the lock file is not a backup's (never collected,
 * listed or restored).
 */
class BackupEngineLockTest {
    @TempDir
    Path dir;

    @Test
    void aSecondWritableOpenInThisJvmIsRefusedUntilTheFirstCloses() throws IOException {
        Path root = dir.resolve("backups");
        BackupEngine first = BackupEngine.open(root);
        assertThat(Files.isRegularFile(root.resolve("LOCK"))).isTrue();
        assertThatThrownBy(() -> BackupEngine.open(root))
                .isInstanceOf(BackupEngineLockedException.class)
                .hasMessageContaining("backup directory " + root)
                .satisfies(e -> assertThat(((BackupEngineLockedException) e).directory())
                        .isEqualTo(root));
        // The same directory by another spelling is the same lock.
        assertThatThrownBy(
                        () -> BackupEngine.open(dir.resolve("x").resolve("..").resolve("backups")))
                .isInstanceOf(BackupEngineLockedException.class);
        try (BackupEngine readOnly = BackupEngine.openReadOnly(root)) {
            assertThat(readOnly.backups()).isEmpty();
        }
        first.close();
        first.close(); // again: nothing
        try (Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()));
                BackupEngine second = BackupEngine.open(root)) {
            load(db, new TreeMap<>(), new Random(1), 200);
            assertThat(second.createBackup(db).id()).isEqualTo(1);
            assertThatThrownBy(() -> first.createBackup(db))
                    .isInstanceOf(BackupEngineClosedException.class)
                    .hasMessageContaining("createBackup");
        }
        assertThatThrownBy(first::backups).isInstanceOf(BackupEngineClosedException.class);
        assertThatThrownBy(() -> first.deleteBackup(1)).isInstanceOf(BackupEngineClosedException.class);
        assertThatThrownBy(() -> first.purgeOldBackups(0)).isInstanceOf(BackupEngineClosedException.class);
        assertThatThrownBy(first::garbageCollect).isInstanceOf(BackupEngineClosedException.class);
        assertThatThrownBy(() -> first.verify(1)).isInstanceOf(BackupEngineClosedException.class);
        assertThatThrownBy(() -> first.restore(1, dir.resolve("r"))).isInstanceOf(BackupEngineClosedException.class);
        assertThat(Files.exists(dir.resolve("r"))).isFalse();
    }

    /**
     * The lock goes through the engine's {@link FileSystem}: two engines on one in-memory file system exclude each
     * other.
     */
    @Test
    void theLockIsTakenThroughTheFileSystem() {
        InMemoryFileSystem fs = new InMemoryFileSystem();
        Path root = Path.of("/backups");
        try (BackupEngine first = BackupEngine.open(root, fs)) {
            assertThat(fs.exists(root.resolve("LOCK"))).isTrue();
            assertThatThrownBy(() -> BackupEngine.open(root, fs)).isInstanceOf(BackupEngineLockedException.class);
            // Another file system (another machine's disk, as far as the engine knows) has its own.
            try (BackupEngine elsewhere = BackupEngine.open(root, new InMemoryFileSystem())) {
                assertThat(elsewhere.isReadOnly()).isFalse();
            }
        }
        try (BackupEngine again = BackupEngine.open(root, fs)) {
            assertThat(again.backups()).isEmpty();
        }
    }

    /**
     * An open that fails after taking the lock (listing {@code meta/} fails) releases it, so the next open succeeds;
     * one whose lock cannot be taken for an I/O error holds nothing either.
     */
    @Test
    void anOpenThatFailsReleasesTheLock() {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Path root = dir.resolve("backups");
        FaultInjectingFileSystem.Fault list =
                fs.inject((op, p) -> op == FaultInjectingFileSystem.Op.LIST && p.equals(root.resolve("meta")));
        assertThatThrownBy(() -> BackupEngine.open(root, fs)).isInstanceOf(BloomKvIOException.class);
        assertThat(list.fired()).isEqualTo(1);
        list.remove();
        FaultInjectingFileSystem.Fault lock = fs.inject(FaultInjectingFileSystem.on(FaultInjectingFileSystem.Op.LOCK));
        assertThatThrownBy(() -> BackupEngine.open(root, fs)).isInstanceOf(BloomKvIOException.class);
        assertThat(lock.fired()).isEqualTo(1);
        lock.remove();
        try (BackupEngine engine = BackupEngine.open(root, fs)) {
            assertThat(engine.backups()).isEmpty();
        }
    }

    /**
     * The lock file is no backup's: it stays through creates, a garbage collection, a delete and a purge; no backup
     * names it, none is listed or reported damaged for it, and a restore does not copy it.
     */
    @Test
    void theLockFileIsNeverCollectedListedOrRestored() throws IOException {
        Path root = dir.resolve("backups");
        TreeMap<String, byte[]> model = new TreeMap<>();
        try (BackupEngine engine = BackupEngine.open(root);
                Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()).autoCompaction(false))) {
            for (int i = 0; i < 3; i++) {
                load(db, model, new Random(i), 300);
                db.flush();
                engine.createBackup(db);
            }
            engine.garbageCollect();
            assertThat(Files.exists(root.resolve("LOCK")))
                    .as("after garbageCollect")
                    .isTrue();
            engine.deleteBackup(1);
            assertThat(engine.purgeOldBackups(1)).containsExactly(2);
            assertThat(Files.exists(root.resolve("LOCK")))
                    .as("after a delete and a purge")
                    .isTrue();
            assertThat(engine.backups()).extracting(BackupEngine.BackupInfo::id).containsExactly(3);
            assertThat(engine.corruptedBackups()).isEmpty();
            assertThat(engine.backups().get(0).files())
                    .extracting(BackupEngine.BackupFile::path)
                    .noneMatch(p -> p.endsWith("LOCK"));
            assertThat(BackupGarbageCollectTest.files(root)).isEqualTo(BackupGarbageCollectTest.needed(engine));
            engine.restore(3, dir.resolve("restored"));
        }
        assertThat(Files.exists(dir.resolve("restored").resolve("LOCK")))
                .as("a restore copies no lock file")
                .isFalse();
        try (Db r = Db.open(dir.resolve("restored"), small(FileSystem.disk()))) {
            assertThat(CheckpointTest.contents(r)).isEqualTo(CheckpointTest.render(model));
        }
    }

    /**
     * A writable engine in another process holds the lock: this process's writable open is refused, a read-only one
     * lists; once the child closes its engine, and again once a child holding it is killed (the OS releases a dead
     * process's locks, so a crashed service leaves no stale lock), the open succeeds.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aWritableEngineInAnotherProcessIsRefused() throws Exception {
        Path root = dir.resolve("backups");
        try (BackupEngine engine = BackupEngine.open(root);
                Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()))) {
            load(db, new TreeMap<>(), new Random(2), 200);
            engine.createBackup(db);
        }
        for (boolean kill : new boolean[] {false, true}) {
            Process child = startHolder(root);
            try {
                assertThatThrownBy(() -> BackupEngine.open(root))
                        .as(kill ? "killed child" : "closing child")
                        .isInstanceOf(BackupEngineLockedException.class)
                        .hasMessageContaining(root.toString());
                try (BackupEngine readOnly = BackupEngine.openReadOnly(root)) {
                    assertThat(BackupIds.valid(readOnly)).containsExactly(1);
                }
                if (kill) {
                    child.destroyForcibly();
                } else {
                    child.getOutputStream().close(); // the child closes its engine at end of input, then exits
                }
                assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
                if (!kill) {
                    assertThat(child.exitValue()).isZero();
                }
            } finally {
                child.destroyForcibly();
            }
            try (BackupEngine engine = BackupEngine.open(root)) {
                assertThat(BackupIds.valid(engine)).containsExactly(1);
            }
        }
    }

    /** Starts {@link #main} on {@code root} in a child JVM and returns once it holds the lock. */
    private Process startHolder(Path root) throws IOException {
        List<String> cmd = ChildJvm.command("128m", BackupEngineLockTest.class, root.toString());
        Path err = dir.resolve("holder-" + System.nanoTime() + ".err");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertThat(line)
                .as("the child's first line; its stderr: " + Files.readString(err))
                .isEqualTo("locked");
        return p;
    }

    /** The child of {@link #aWritableEngineInAnotherProcessIsRefused}: holds a writable engine until end of input. */
    public static void main(String[] args) throws IOException {
        try (BackupEngine engine = BackupEngine.open(Path.of(args[0]))) {
            System.out.println("locked");
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the parent to close our input
            }
            engine.backups();
        }
    }
}
