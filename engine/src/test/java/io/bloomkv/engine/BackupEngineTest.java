package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.NoFsyncFileSystem;
import io.bloomkv.engine.internal.version.FileNames;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BackupEngine}: backups restore exactly their point (under a concurrent writer too), share tables, and a
 * damaged file is detected, named and refused; a crash at any operation of a create leaves the backup whole or
 * absent, and the next create cleans up.
 */
class BackupEngineTest {
    @TempDir
    Path dir;

    static Options small(FileSystem fs) {
        return Options.defaults()
                .fileSystem(fs)
                .writeBufferSize(16 << 10)
                .blockSize(512)
                .targetFileSize(16 << 10)
                .syncMode(SyncMode.NONE);
    }

    static void load(Db db, TreeMap<String, byte[]> model, Random rnd, int n) {
        for (int i = 0; i < n; i++) {
            byte[] k = TestKeys.key(rnd.nextInt(2000));
            byte[] v = TestKeys.value(rnd, 80);
            db.put(k, v);
            model.put(TestKeys.str(k), v);
        }
    }

    /** A backup engine in dir/backups holding one backup of dir/db after {@code n} random puts from {@code seed}. */
    private BackupEngine oneBackup(long seed, int n) throws IOException {
        BackupEngine backups = BackupEngine.open(dir.resolve("backups"));
        try (Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()))) {
            load(db, new TreeMap<>(), new Random(seed), n);
            db.flush();
            backups.createBackup(db);
        }
        return backups;
    }

    @Test
    void backupsRestoreTheirPointAndShareTables() throws IOException {
        long seed = TestSeeds.seed("BackupEngineTest.roundTrip");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        try (BackupEngine backups = BackupEngine.open(dir.resolve("backups"))) {
            TreeMap<String, String> first;
            try (Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()).autoCompaction(false))) {
                load(db, model, rnd, 2000);
                db.flush();
                load(db, model, rnd, 100);
                BackupEngine.BackupInfo b1 = backups.createBackup(db);
                first = CheckpointTest.render(model);
                load(db, model, rnd, 1000);
                db.flush();
                BackupEngine.BackupInfo b2 = backups.createBackup(db);
                assertThat(b2.id()).isEqualTo(b1.id() + 1);
                long sharedOfBoth = b1.files().stream()
                        .filter(f -> f.path().startsWith("shared/"))
                        .filter(b2.files()::contains)
                        .count();
                assertThat(sharedOfBoth)
                        .as("the second backup reuses the first's tables")
                        .isPositive();
            }
            try (Stream<Path> s = Files.list(dir.resolve("backups").resolve("shared"))) {
                long stored = s.count();
                long named = backups.backups().stream()
                        .mapToLong(b -> b.files().stream()
                                .filter(f -> f.path().startsWith("shared/"))
                                .count())
                        .sum();
                assertThat(stored).as("shared tables stored once").isLessThan(named);
            }
            assertThat(backups.backups())
                    .extracting(BackupEngine.BackupInfo::id)
                    .containsExactly(1, 2);
            backups.verify(1);
            backups.verify(2);
            backups.restore(1, dir.resolve("r1"));
            backups.restore(2, dir.resolve("r2"));
            try (Db r1 = Db.open(dir.resolve("r1"), small(FileSystem.disk()))) {
                assertThat(CheckpointTest.contents(r1)).as("seed " + seed).isEqualTo(first);
            }
            try (Db r2 = Db.open(dir.resolve("r2"), small(FileSystem.disk()))) {
                assertThat(CheckpointTest.contents(r2)).as("seed " + seed).isEqualTo(CheckpointTest.render(model));
            }
            assertThatThrownBy(() -> backups.restore(2, dir.resolve("r2")))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("not empty");
            assertThatThrownBy(() -> backups.verify(7)).isInstanceOf(InvalidArgumentException.class);
        }
    }

    /**
     * {@code createBackup(db, progress)} announces the checkpoint's files and bytes, then counts both up to exactly
     * those totals, which are the backup's own (its files and {@code size()}); a table bigger than the 1 MiB read
     * buffer is reported within the file too.
     */
    @Test
    void createReportsItsProgressUpToTheBackupsFilesAndBytes() throws IOException {
        try (BackupEngine backups = BackupEngine.open(dir.resolve("backups"))) {
            List<long[]> calls = new ArrayList<>();
            BackupEngine.BackupInfo info;
            try (Db db = Db.open(dir.resolve("db"), Options.defaults().syncMode(SyncMode.NONE))) {
                Random rnd = new Random(7);
                for (int i = 0; i < 6000; i++) {
                    db.put(TestKeys.key(i), TestKeys.value(rnd, 1000)); // about 3 MB: a table over the read buffer
                }
                db.flush();
                db.put(TestKeys.key(1), TestKeys.value(rnd, 10)); // and a WAL
                info = backups.createBackup(db, new BackupEngine.Progress() {
                    @Override
                    public void started(int files, long bytes) {
                        calls.add(new long[] {-1, files, bytes});
                    }

                    @Override
                    public void progressed(int files, long bytes) {
                        calls.add(new long[] {0, files, bytes});
                    }
                });
            }
            assertThat(calls).isNotEmpty();
            assertThat(calls.get(0)).containsExactly(-1, info.files().size(), info.size());
            long[] last = calls.get(calls.size() - 1);
            assertThat(last).containsExactly(0, info.files().size(), info.size());
            for (int i = 1; i < calls.size(); i++) {
                assertThat(calls.get(i)[0]).as("started once, first").isZero();
            }
            for (int i = 2; i < calls.size(); i++) {
                assertThat(calls.get(i)[1]).as("files count up").isGreaterThanOrEqualTo(calls.get(i - 1)[1]);
                assertThat(calls.get(i)[2]).as("bytes count up").isGreaterThanOrEqualTo(calls.get(i - 1)[2]);
            }
            assertThat(calls.stream().filter(c -> c[0] == 0 && c[1] == 0 && c[2] > 0))
                    .as("bytes reported before the first file is done")
                    .isNotEmpty();
            assertThatThrownBy(() -> backups.createBackup(null, BackupEngine.Progress.NONE))
                    .isInstanceOf(InvalidArgumentException.class);
            try (Db db = Db.open(dir.resolve("db"), Options.defaults().syncMode(SyncMode.NONE))) {
                assertThatThrownBy(() -> backups.createBackup(db, null))
                        .isInstanceOf(InvalidArgumentException.class)
                        .hasMessageContaining("progress");
                long[] lastBytes = {-1};
                BackupEngine.BackupInfo second = backups.createBackup(db, (files, bytes) -> lastBytes[0] = bytes);
                assertThat(lastBytes[0]).as("a lambda is a progress").isEqualTo(second.size());
            }
        }
    }

    /** A file system over the disk on which every hard link fails, as across file systems: checkpoints copy tables. */
    private static FaultInjectingFileSystem noLinks() {
        FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
        fs.inject(FaultInjectingFileSystem.on(FaultInjectingFileSystem.Op.LINK));
        return fs;
    }

    /**
     * Whether the checkpoint of backup {@code id} is made: its CURRENT is in {@code tmp/ID/}, or moved on into
     * {@code private/ID/}.
     */
    private static boolean checkpointMade(Path root, int id) {
        String name = Integer.toString(id);
        return Files.exists(root.resolve("tmp").resolve(name).resolve(FileNames.CURRENT))
                || Files.exists(root.resolve("private").resolve(name).resolve(FileNames.CURRENT));
    }

    /** The bytes of the tables of {@code info} (in {@code shared/}). */
    private static long tableBytes(BackupEngine.BackupInfo info) {
        return info.files().stream()
                .filter(f -> f.path().startsWith("shared/"))
                .mapToLong(BackupEngine.BackupFile::size)
                .sum();
    }

    /**
     * Where the checkpoint cannot hard-link the tables (every link fails, as with the backup directory on another file
     * system), the progress covers its copy: {@code started} comes first, once, with the tables' bytes counted twice
     * (copied, then checksummed); the copy is reported as it goes, before any file is stored (a table over the 1 MiB
     * buffer in several steps) and before the checkpoint's CURRENT exists; files and bytes never go down and end at
     * exactly the totals; and the backup restores.
     */
    @Test
    void createReportsTheCheckpointsCopyWhereTablesCannotBeLinked() throws IOException {
        FaultInjectingFileSystem fs = noLinks();
        Path root = dir.resolve("backups");
        try (BackupEngine backups = BackupEngine.open(root, fs)) {
            // {-1: started, 0: progressed, 1: progressed before the checkpoint's CURRENT exists; files; bytes}
            List<long[]> calls = new ArrayList<>();
            TreeMap<String, byte[]> model = new TreeMap<>();
            BackupEngine.BackupInfo info;
            try (Db db =
                    Db.open(dir.resolve("db"), Options.defaults().fileSystem(fs).syncMode(SyncMode.NONE))) {
                Random rnd = new Random(7);
                for (int i = 0; i < 6000; i++) {
                    byte[] v = TestKeys.value(rnd, 1000); // about 3 MB: a table over the copy buffer
                    db.put(TestKeys.key(i), v);
                    model.put(TestKeys.str(TestKeys.key(i)), v);
                }
                db.flush();
                byte[] late = TestKeys.value(rnd, 10);
                db.put(TestKeys.key(1), late); // and a WAL
                model.put(TestKeys.str(TestKeys.key(1)), late);
                info = backups.createBackup(db, new BackupEngine.Progress() {
                    @Override
                    public void started(int files, long bytes) {
                        calls.add(new long[] {-1, files, bytes});
                    }

                    @Override
                    public void progressed(int files, long bytes) {
                        calls.add(new long[] {checkpointMade(root, 1) ? 0 : 1, files, bytes});
                    }
                });
            }
            long copied = tableBytes(info);
            assertThat(copied).as("the backup holds tables").isGreaterThan(1 << 20);
            long total = copied + info.size();
            assertThat(calls.get(0))
                    .as("started first")
                    .containsExactly(-1, info.files().size(), total);
            assertThat(calls.subList(1, calls.size()))
                    .as("started once")
                    .allSatisfy(c -> assertThat(c[0]).isNotNegative());
            assertThat(calls.get(calls.size() - 1))
                    .containsExactly(0, info.files().size(), total);
            for (int i = 2; i < calls.size(); i++) {
                assertThat(calls.get(i)[1]).as("files count up").isGreaterThanOrEqualTo(calls.get(i - 1)[1]);
                assertThat(calls.get(i)[2]).as("bytes count up").isGreaterThanOrEqualTo(calls.get(i - 1)[2]);
            }
            List<long[]> copying = calls.stream().filter(c -> c[0] == 1).toList();
            assertThat(copying)
                    .as("the copy, reported buffer by buffer before the checkpoint was made")
                    .hasSizeGreaterThanOrEqualTo(3)
                    .allSatisfy(c -> assertThat(c[1]).as("no file stored yet").isZero());
            assertThat(copying.get(copying.size() - 1)[2])
                    .as("the bytes of the copy: those of the tables")
                    .isEqualTo(copied);
            backups.verify(info.id());
            backups.restore(info.id(), dir.resolve("restored"));
            try (Db r = Db.open(dir.resolve("restored"), Options.defaults())) {
                assertThat(CheckpointTest.contents(r)).isEqualTo(CheckpointTest.render(model));
            }
        }
    }

    /**
     * A progress callback that throws while the checkpoint copies the tables it could not link (before its CURRENT
     * exists) fails the create with that exception, as is, with nothing added to it: nothing of the backup or of its
     * checkpoint is left, the backups before it still verify, and the next create (copying again) succeeds.
     */
    @Test
    void aProgressCallbackThatThrowsDuringTheCheckpointsCopyLeavesNothing() throws IOException {
        long seed = TestSeeds.seed("BackupEngineTest.cancelCopy");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        FaultInjectingFileSystem fs = noLinks();
        Path root = dir.resolve("backups");
        try (BackupEngine backups = BackupEngine.open(root, fs)) {
            try (Db db = Db.open(dir.resolve("db"), small(fs).autoCompaction(false))) {
                load(db, model, rnd, 1000);
                db.flush();
                BackupEngine.BackupInfo first = backups.createBackup(db);
                Set<String> before = tree(root);
                load(db, model, rnd, 1000);
                db.flush();
                load(db, model, rnd, 20);
                RuntimeException cancel = new IllegalStateException("cancelled by the caller");
                boolean[] inCopy = {false};
                Throwable thrown = catchThrowable(() -> backups.createBackup(db, (files, bytes) -> {
                    inCopy[0] = files == 0 && bytes > 0 && !checkpointMade(root, first.id() + 1);
                    throw cancel;
                }));
                assertThat(thrown).isSameAs(cancel);
                assertThat(thrown.getSuppressed())
                        .as("the clean-up met no problem")
                        .isEmpty();
                assertThat(inCopy[0])
                        .as("the first report is of the checkpoint's copy")
                        .isTrue();
                assertNothingLeftAndTheNextCreateRestores(backups, db, first, root, before, seed);
            }
            try (Db r = Db.open(dir.resolve("restored"), small(FileSystem.disk()))) {
                assertThat(CheckpointTest.contents(r)).as("seed " + seed).isEqualTo(CheckpointTest.render(model));
            }
        }
    }

    /**
     * A progress callback that throws (a caller cancelling the backup) fails the create with its own exception, after
     * some of the checkpoint's tables were already stored: no backup is listed, nothing it stored is left in the backup
     * directory, the backups before it still verify, and the next create succeeds.
     */
    @Test
    void aProgressCallbackThatThrowsFailsTheCreateAndLeavesNothing() throws IOException {
        long seed = TestSeeds.seed("BackupEngineTest.cancel");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Path root = dir.resolve("backups");
        try (BackupEngine backups = BackupEngine.open(root)) {
            try (Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()).autoCompaction(false))) {
                load(db, model, rnd, 1000);
                db.flush();
                BackupEngine.BackupInfo first = backups.createBackup(db);
                Set<String> before = tree(root);
                load(db, model, rnd, 1000);
                db.flush();
                load(db, model, rnd, 20);
                RuntimeException cancel = new IllegalStateException("cancelled by the caller");
                AtomicInteger stored = new AtomicInteger();
                assertThatThrownBy(() -> backups.createBackup(db, new BackupEngine.Progress() {
                            @Override
                            public void started(int files, long bytes) {}

                            @Override
                            public void progressed(int files, long bytes) {
                                stored.set(files);
                                if (files == 3) {
                                    throw cancel;
                                }
                            }
                        }))
                        .isSameAs(cancel);
                assertThat(stored.get())
                        .as("files stored before the callback threw")
                        .isEqualTo(3);
                assertNothingLeftAndTheNextCreateRestores(backups, db, first, root, before, seed);
            }
            try (Db r = Db.open(dir.resolve("restored"), small(FileSystem.disk()))) {
                assertThat(CheckpointTest.contents(r)).as("seed " + seed).isEqualTo(CheckpointTest.render(model));
            }
        }
    }

    /**
     * After a create that failed: only {@code first} is listed, the backup directory holds what it held before the
     * create ({@code before}), {@code first} still verifies, and a new create verifies and restores into
     * {@code restored} of the test's directory.
     */
    private void assertNothingLeftAndTheNextCreateRestores(
            BackupEngine backups, Db db, BackupEngine.BackupInfo first, Path root, Set<String> before, long seed)
            throws IOException {
        assertThat(backups.backups()).extracting(BackupEngine.BackupInfo::id).containsExactly(first.id());
        assertThat(tree(root)).as("seed %d: what the failed create left", seed).isEqualTo(before);
        backups.verify(first.id());
        BackupEngine.BackupInfo next = backups.createBackup(db);
        backups.verify(next.id());
        backups.restore(next.id(), dir.resolve("restored"));
    }

    /** Every file and directory under {@code root}, relative to it. */
    private static Set<String> tree(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.map(p -> root.relativize(p).toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    @Test
    void aCorruptedBackupFileIsDetectedNamedAndRefused() throws IOException {
        try (BackupEngine backups = oneBackup(3, 1500)) {
            Path victim;
            try (Stream<Path> s = Files.list(dir.resolve("backups").resolve("shared"))) {
                victim = s.sorted().findFirst().orElseThrow();
            }
            try (RandomAccessFile f = new RandomAccessFile(victim.toFile(), "rw")) {
                f.seek(10);
                int b = f.read();
                f.seek(10);
                f.write(b ^ 0x40);
            }
            assertThatThrownBy(() -> backups.verify(1))
                    .isInstanceOf(CorruptionException.class)
                    .hasMessageContaining(victim.getFileName().toString())
                    .hasMessageContaining("checksum");
            Path target = dir.resolve("restored");
            assertThatThrownBy(() -> backups.restore(1, target))
                    .isInstanceOf(CorruptionException.class)
                    .hasMessageContaining(victim.getFileName().toString());
            assertThat(Files.exists(target.resolve("CURRENT"))).isFalse();

            Path meta = dir.resolve("backups").resolve("meta").resolve("1");
            Files.writeString(meta, Files.readString(meta).replace("timestamp", "timestamq"));
            assertThatThrownBy(() -> backups.verify(1))
                    .isInstanceOf(CorruptionException.class)
                    .hasMessageContaining("meta");
        }
    }

    /**
     * A backup whose metadata is damaged is named, left out of the list, and blocks nothing (RocksDB's corrupt
     * backups): a new backup is made and restores, a purge neither counts nor deletes it, no shared table is removed
     * while the damaged one is there (which it needs is unknown), and deleting it removes it and then the tables no
     * backup names.
     */
    @Test
    void aBackupWithDamagedMetadataIsNamedAndBlocksNothing() throws IOException {
        try (BackupEngine backups = oneBackup(3, 1500)) {
            Path meta = dir.resolve("backups").resolve("meta").resolve("1");
            Files.writeString(meta, Files.readString(meta).replace("timestamp", "timestamq"));
            java.util.Set<String> sharedBefore = storedShared(dir.resolve("backups"));
            assertThat(sharedBefore).isNotEmpty();
            assertThat(backups.backups()).isEmpty();
            assertThat(backups.corruptedBackups()).containsExactly(1);
            TreeMap<String, byte[]> model = new TreeMap<>();
            try (Db db = Db.open(dir.resolve("db2"), small(FileSystem.disk()))) {
                load(db, model, new Random(11), 300);
                db.flush();
                BackupEngine.BackupInfo second = backups.createBackup(db);
                assertThat(second.id()).isEqualTo(2);
            }
            assertThat(backups.backups())
                    .extracting(BackupEngine.BackupInfo::id)
                    .containsExactly(2);
            assertThat(storedShared(dir.resolve("backups"))).containsAll(sharedBefore);
            backups.verify(2);
            backups.restore(2, dir.resolve("restored2"));
            try (Db r = Db.open(dir.resolve("restored2"), small(FileSystem.disk()))) {
                assertThat(CheckpointTest.contents(r)).isEqualTo(CheckpointTest.render(model));
            }
            // A purge counts only valid backups and leaves the damaged one (RocksDB's PurgeOldBackups: see
            // BackupPurgeDifferentialTest), removing no shared table while it is there.
            assertThat(backups.purgeOldBackups(1)).isEmpty();
            assertThat(backups.corruptedBackups()).containsExactly(1);
            assertThat(storedShared(dir.resolve("backups"))).containsAll(sharedBefore);
            backups.deleteBackup(1);
            assertThat(backups.corruptedBackups()).isEmpty();
            java.util.Set<String> named = new java.util.HashSet<>();
            backups.backups().get(0).files().forEach(f -> {
                if (f.path().startsWith("shared/")) {
                    named.add(f.path());
                }
            });
            assertThat(storedShared(dir.resolve("backups"))).isEqualTo(named);
            assertThat(Files.exists(dir.resolve("backups").resolve("private").resolve("1")))
                    .isFalse();
        }
    }

    /**
     * A metadata file whose checksum matches but that lists a name no backup writes (a NUL, which the file system
     * refuses; a separator; "."; a name with ".." in it; an empty name; a shared name restore cannot map back to a
     * table number; a private name that is not one of the database's own) is damage: listing, verifying and restoring report a
     * CorruptionException, never a path exception from the file system (found by BackupMetaFuzzTest).
     */
    @Test
    void aListedFileNameNoBackupWritesIsCorruption() throws IOException {
        try (BackupEngine backups = oneBackup(5, 500)) {
            Path meta = dir.resolve("backups").resolve("meta").resolve("1");
            String original = Files.readString(meta);
            String body = original.substring(0, original.lastIndexOf("crc32c "));
            String shared = body.lines()
                    .filter(l -> l.startsWith("shared/"))
                    .findFirst()
                    .orElseThrow()
                    .split(" ")[0];
            for (String bad : new String[] {
                shared.replace("_", "_\u0000"),
                "shared/sub/" + shared.substring(7),
                "shared/..",
                "shared/...sst",
                "shared/abc.sst",
                "shared/12_0A1B2C3D_100.sst",
                "private/1/notes.txt",
                "private/1/000001.sst",
                "shared/.",
                "shared/",
                "private/1/a\\b",
                "private/2/CURRENT"
            }) {
                String changed = body.replace(shared + " ", bad + " ");
                Files.write(
                        meta, BackupEngine.withChecksumLine(changed.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                assertThatThrownBy(() -> backups.verify(1))
                        .as(bad)
                        .isInstanceOf(CorruptionException.class)
                        .hasMessageContaining("bad file line");
                assertThat(backups.backups()).as(bad).isEmpty();
                assertThat(backups.corruptedBackups()).as(bad).containsExactly(1);
                assertThatThrownBy(() -> backups.restore(1, dir.resolve("restored")))
                        .as(bad)
                        .isInstanceOf(CorruptionException.class);
            }
            Files.writeString(meta, original);
            assertThat(backups.backups()).hasSize(1);
            backups.verify(1);
        }
    }

    /**
     * A writer puts 0, 1, 2, ...; each backup restores to a prefix holding every key acknowledged before the call and
     * none written after its checkpoint's point. Each backup's checkpoint is held after its point until the writer has
     * acknowledged more puts ({@link SequentialWriter#pauseAtCopy}), so every backup is taken with writes in flight.
     */
    @Test
    void backupsUnderAConcurrentWriterRestoreExactlyTheirPoint() throws Exception {
        Path src = dir.resolve("db");
        SequentialWriter writer = new SequentialWriter();
        SequentialWriter.Pause pause = writer.pauseAtCopy(FileSystem.disk(), src);
        try (BackupEngine backups = BackupEngine.open(dir.resolve("backups"), pause)) {
            Options opts = small(pause);
            long[][] bounds = new long[3][];
            try (Db db = Db.open(src, opts)) {
                writer.start(db);
                try {
                    for (int b = 0; b < bounds.length; b++) {
                        writer.awaitAcked(writer.acked() + 500);
                        long before = writer.acked();
                        pause.arm();
                        backups.createBackup(db);
                        bounds[b] = new long[] {before, pause.ackedAtPause(), writer.acked()};
                    }
                } finally {
                    writer.stopAndCheck();
                }
            }
            System.out.println("backups under a writer (acked before, at the pause, after): "
                    + java.util.Arrays.deepToString(bounds));
            for (int b = 0; b < bounds.length; b++) {
                long before = bounds[b][0];
                long atPause = bounds[b][1];
                long after = bounds[b][2];
                assertThat(after - before)
                        .as("backup %d: puts acknowledged while it ran (%d before, %d after)", b + 1, before, after)
                        .isGreaterThanOrEqualTo(SequentialWriter.PUTS_DURING_COPY);
                Path target = dir.resolve("r" + b);
                backups.restore(b + 1, target);
                try (Db r = Db.open(target, small(FileSystem.disk()))) {
                    long n = CheckpointTest.contents(r).size();
                    // Every put acknowledged before the call is in; none begun after the point (which precedes the
                    // pause: at most the put in flight then, key atPause) is.
                    assertThat(n)
                            .as(
                                    "backup %d keys (acked %d before, %d at the pause, %d after)",
                                    b + 1, before, atPause, after)
                            .isBetween(before, atPause + 1);
                    for (long i = 0; i < n; i++) {
                        assertThat(r.get(TestKeys.key(i)))
                                .as("backup " + (b + 1) + " key " + i)
                                .isEqualTo(TestKeys.key(i));
                    }
                }
            }
        }
    }

    /**
     * The process dies at each operation of a create in turn: afterwards the backup is listed and restores exactly,
     * or is not listed; either way the next create succeeds and every listed backup verifies.
     */
    @Test
    void aCrashAtAnyOperationOfACreateLeavesTheBackupWholeOrAbsent() throws IOException {
        crashAtEveryOperationOfACreate(dir, 0, TestSeeds.seed("BackupEngineTest.crash"));
    }

    /**
     * Makes {@code prior} backups of a database under {@code dir}/cN, then kills the process at operation N of the
     * next create, for every N in turn (the bytes not synced are dropped or torn). Afterwards the new backup is listed
     * and whole, or not listed; opening the engine removes nothing (as RocksDB's open); every listed backup verifies
     * and restores exactly its point beside the leftovers; the engine's first mutating call, a purge that deletes
     * nothing or the next create (alternately), leaves exactly the files the listed backups name ({@link
     * BackupGarbageCollectTest#needed}: nothing of an unfinished create), and the next create succeeds.
     */
    static void crashAtEveryOperationOfACreate(Path dir, int prior, long seed) throws IOException {
        int total = -1;
        int whole = 0;
        int absent = 0;
        int withLeftovers = 0;
        int id = prior + 1;
        for (int i = 0; total < 0 || i <= total + 1; i++) {
            Random rnd = new Random(seed);
            FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
            Path base = dir.resolve("c" + i);
            Path root = base.resolve("backups");
            TreeMap<String, byte[]> model = new TreeMap<>();
            java.util.Map<Integer, TreeMap<String, String>> states = new TreeMap<>();
            Db db = Db.open(base.resolve("db"), small(fs).autoCompaction(false).syncMode(SyncMode.EVERY_WRITE));
            try (BackupEngine backups = BackupEngine.open(root, fs)) {
                for (int b = 1; b <= prior; b++) {
                    load(db, model, rnd, 300);
                    db.flush();
                    backups.createBackup(db);
                    states.put(b, CheckpointTest.render(model));
                }
                load(db, model, rnd, 300);
                db.flush();
                load(db, model, rnd, 20);
                states.put(id, CheckpointTest.render(model));
                AtomicInteger ops = new AtomicInteger();
                FaultInjectingFileSystem.Fault counter = fs.inject((op, p) -> {
                    ops.incrementAndGet();
                    return false;
                });
                FaultInjectingFileSystem.Fault dead = i == 0 ? null : fs.injectFromNth((op, p) -> true, i);
                boolean returned = false;
                try {
                    backups.createBackup(db);
                    returned = true;
                } catch (BloomKvIOException expected) {
                    // the process is dying
                }
                counter.remove();
                if (i == 0) {
                    total = ops.get();
                }
                if (dead != null) {
                    dead.remove();
                }
                SimulatedCrashTest.crash(fs, db, new Random(seed + i));
                String ctx = "seed " + seed + ", crash at operation " + i + " of " + total;
                Set<String> beforeOpen = BackupGarbageCollectTest.files(root);

                try (BackupEngine after = BackupEngine.open(root, FileSystem.disk())) {
                    Set<String> needed = BackupGarbageCollectTest.needed(after);
                    assertThat(after.corruptedBackups()).as(ctx).isEmpty();
                    assertThat(BackupGarbageCollectTest.files(root))
                            .as(ctx + ": the open removes nothing")
                            .isEqualTo(beforeOpen);
                    if (!beforeOpen.equals(needed)) {
                        withLeftovers++;
                    }
                    List<Integer> listed = after.backups().stream()
                            .map(BackupEngine.BackupInfo::id)
                            .toList();
                    if (returned) {
                        // A create that returned has durable metadata (what fails after it, removing tmp/, is only
                        // logged).
                        assertThat(listed).as(ctx + ": returned").contains(id);
                    }
                    for (int b = 1; b <= prior; b++) {
                        assertThat(listed).as(ctx).contains(b);
                    }
                    if (listed.contains(id)) {
                        whole++;
                    } else {
                        absent++;
                    }
                    for (int b : listed) {
                        after.verify(b);
                        Path target = base.resolve("restored" + b);
                        after.restore(b, target);
                        try (Db r = Db.open(target, small(FileSystem.disk()))) {
                            assertThat(CheckpointTest.contents(r))
                                    .as(ctx + ", backup " + b)
                                    .isEqualTo(states.get(b));
                        }
                    }
                    boolean purgeFirst = i % 2 == 0;
                    if (purgeFirst) {
                        assertThat(after.purgeOldBackups(listed.size())).as(ctx).isEmpty();
                        assertThat(BackupGarbageCollectTest.files(root))
                                .as(ctx + ": the files after the first purge")
                                .isEqualTo(needed);
                    }
                    try (Db again = Db.open(base.resolve("db"), small(FileSystem.disk()))) {
                        assertThat(CheckpointTest.contents(again))
                                .as(ctx + ": source")
                                .isEqualTo(states.get(id));
                        BackupEngine.BackupInfo next = after.createBackup(again);
                        after.verify(next.id());
                    }
                    assertThat(BackupGarbageCollectTest.files(root))
                            .as(ctx + ": the files after the " + (purgeFirst ? "next" : "first") + " create")
                            .isEqualTo(BackupGarbageCollectTest.needed(after));
                    try (Stream<Path> s = Files.list(root.resolve("private"))) {
                        assertThat(s.map(p -> Integer.parseInt(p.getFileName().toString())))
                                .as(ctx + ": private directories after the first purge or create")
                                .containsExactlyInAnyOrderElementsOf(BackupIds.valid(after));
                    }
                }
            }
        }
        System.out.println("BackupEngineTest crashes after " + prior + " backups: " + whole + " whole, " + absent
                + " absent, " + withLeftovers + " left files the first purge or create removed");
        assertThat(whole).isPositive();
        assertThat(absent).isPositive();
        assertThat(withLeftovers).isPositive();
    }

    /**
     * Removing the emptied work directory {@code tmp/ID/} fails after the backup's metadata is durable: the create
     * still returns the backup (as RocksDB counts a backup created once its metadata is stored), logs a WARN naming
     * the directory, and the backup verifies and restores; the next create removes the leftover, and so does a purge.
     */
    @Test
    void aWorkDirectoryThatCannotBeRemovedAfterTheMetadataDoesNotFailTheCreate() throws IOException {
        long seed = TestSeeds.seed("BackupEngineTest.tmpRemoval");
        Random rnd = new Random(seed);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Path root = dir.resolve("backups");
        DbLogTest.Recording log = new DbLogTest.Recording();
        try (BackupEngine backups = BackupEngine.open(root, fs, log)) {
            TreeMap<String, byte[]> model = new TreeMap<>();
            try (Db db = Db.open(dir.resolve("db"), small(fs))) {
                load(db, model, rnd, 500);
                db.flush();
                load(db, model, rnd, 20);
                Path work1 = root.resolve("tmp").resolve("1");
                FaultInjectingFileSystem.Fault fault =
                        fs.injectNth((op, p) -> op == FaultInjectingFileSystem.Op.DELETE && p.equals(work1), 1);
                BackupEngine.BackupInfo first = backups.createBackup(db);
                TreeMap<String, String> firstState = CheckpointTest.render(model);
                assertThat(first.id()).isEqualTo(1);
                assertThat(fault.fired()).isEqualTo(1);
                fault.remove();
                assertThat(Files.isDirectory(work1))
                        .as("the work directory is left")
                        .isTrue();
                assertThat(log.lines)
                        .as("seed " + seed)
                        .anySatisfy(l -> assertThat(l)
                                .startsWith("WARN")
                                .contains("backup 1 created")
                                .contains(work1.toString()));
                // Read-only: a writable engine's open would remove the leftover this test leaves to the next create.
                assertThat(BackupEngine.openReadOnly(root).backups())
                        .extracting(BackupEngine.BackupInfo::id)
                        .containsExactly(1);
                backups.verify(1);
                backups.restore(1, dir.resolve("restored1"));
                try (Db r = Db.open(dir.resolve("restored1"), small(FileSystem.disk()))) {
                    assertThat(CheckpointTest.contents(r)).as("seed " + seed).isEqualTo(firstState);
                }

                load(db, model, rnd, 200);
                db.flush();
                BackupEngine.BackupInfo second = backups.createBackup(db);
                assertThat(second.id()).isEqualTo(2);
                try (Stream<Path> s = Files.list(root.resolve("tmp"))) {
                    assertThat(s.toList()).as("the next create removed tmp/1").isEmpty();
                }
                backups.verify(1);
                backups.verify(2);

                // The same failure on the third create; a purge that deletes nothing removes the leftover.
                Path work3 = root.resolve("tmp").resolve("3");
                fault = fs.injectNth((op, p) -> op == FaultInjectingFileSystem.Op.DELETE && p.equals(work3), 1);
                assertThat(backups.createBackup(db).id()).isEqualTo(3);
                assertThat(fault.fired()).isEqualTo(1);
                assertThat(Files.isDirectory(work3)).isTrue();
                assertThat(backups.purgeOldBackups(3)).isEmpty();
                assertThat(Files.exists(work3)).as("the purge removed tmp/3").isFalse();
                assertThat(backups.backups())
                        .extracting(BackupEngine.BackupInfo::id)
                        .containsExactly(1, 2, 3);
                backups.verify(3);
            }
        }
    }

    /**
     * A backup naming a file that is missing or of another size is damaged (RocksDB checks each listed file's size
     * when it opens, see BackupFileDamageDifferentialTest): left out of backups(), named by corruptedBackups() with
     * the file, neither counted nor deleted by a purge, the files it names kept while it is there; putting the file
     * back makes it whole again, and deleting it frees what only it named.
     */
    @Test
    void aBackupWithAMissingOrShortFileIsDamaged() throws IOException {
        long seed = TestSeeds.seed("BackupEngineTest.fileDamage");
        Path root = dir.resolve("backups");
        try (BackupEngine backups = BackupEngine.open(root)) {
            java.util.List<TreeMap<String, String>> states;
            try (Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()).autoCompaction(false))) {
                states = threeBackups(db, backups, new Random(seed));
            }
            String ctx = "seed " + seed;
            // A private file of backup 2 is missing: only backup 2 is damaged.
            Path manifest = manifestOf(root, 2);
            Path saved = dir.resolve("saved-manifest");
            Files.move(manifest, saved);
            Set<String> sharedBefore = storedShared(root);
            assertThat(backups.backups())
                    .as(ctx)
                    .extracting(BackupEngine.BackupInfo::id)
                    .containsExactly(1, 3);
            assertThat(backups.corruptedBackups()).as(ctx).containsExactly(2);
            assertThat(backups.corruptedBackupReasons().get(2))
                    .hasMessageContaining("file is missing")
                    .hasMessageContaining(manifest.getFileName().toString());
            assertThat(backups.corruptedBackupReasons().get(2).file()).isEqualTo(manifest);
            assertThat(BackupEngine.openReadOnly(root).corruptedBackups())
                    .as("a new (read-only) engine too")
                    .containsExactly(2);
            assertThatThrownBy(() -> backups.verify(2)).isInstanceOf(CorruptionException.class);
            // The purge counts 1 and 3 and deletes 1; 2 stays, and so does every shared table 2 names (all of 1's here;
            // BackupGarbageCollectTest removes tables only a deleted backup named while another is damaged).
            assertThat(backups.purgeOldBackups(1)).as(ctx).containsExactly(1);
            assertThat(backups.corruptedBackups()).containsExactly(2);
            assertThat(storedShared(root)).as("the tables damaged 2 names stay").isEqualTo(sharedBefore);
            Files.move(saved, manifest);
            assertThat(backups.backups())
                    .extracting(BackupEngine.BackupInfo::id)
                    .containsExactly(2, 3);
            assertThat(backups.corruptedBackups()).isEmpty();
            backups.verify(2);
            backups.restore(2, dir.resolve("restored2"));
            try (Db r = Db.open(dir.resolve("restored2"), small(FileSystem.disk()))) {
                assertThat(CheckpointTest.contents(r)).as(ctx).isEqualTo(states.get(1));
            }

            // A shared table only backup 3 names is one byte short: backup 3 is damaged, with its size in the reason.
            Set<String> onlyThree = new TreeSet<>();
            for (BackupEngine.BackupFile f : backups.backups().get(1).files()) {
                if (f.path().startsWith("shared/")) {
                    onlyThree.add(f.path());
                }
            }
            backups.backups().get(0).files().forEach(f -> onlyThree.remove(f.path()));
            assertThat(onlyThree).as(ctx).isNotEmpty();
            Path table = root.resolve(onlyThree.iterator().next());
            long size = Files.size(table);
            try (RandomAccessFile f = new RandomAccessFile(table.toFile(), "rw")) {
                f.setLength(size - 1);
            }
            assertThat(backups.backups())
                    .extracting(BackupEngine.BackupInfo::id)
                    .containsExactly(2);
            assertThat(backups.corruptedBackupReasons()).containsOnlyKeys(3);
            assertThat(backups.corruptedBackupReasons().get(3))
                    .hasMessageContaining("size " + (size - 1) + ", expected " + size)
                    .hasMessageContaining(table.getFileName().toString());
            assertThat(backups.purgeOldBackups(0)).containsExactly(2);
            assertThat(backups.corruptedBackups()).containsExactly(3);
            assertThat(Files.exists(table)).as("kept while 3 is damaged").isTrue();
            backups.deleteBackup(3);
            assertThat(backups.corruptedBackups()).isEmpty();
            assertThat(storedShared(root)).isEmpty();
            try (Stream<Path> s = Files.list(root.resolve("private"))) {
                assertThat(s.toList()).isEmpty();
            }
        }
    }

    /**
     * Syncing meta/ fails after the metadata file was renamed into place: the create throws and removes the metadata
     * (RocksDB's CreateNewBackup deletes the new backup on any failure), so no backup is listed that the caller was
     * told failed; the next create succeeds, takes the same id and verifies and restores.
     */
    @Test
    void aFailedSyncOfMetaAfterTheRenameLeavesNoBackup() throws IOException {
        long seed = TestSeeds.seed("BackupEngineTest.metaSync");
        Random rnd = new Random(seed);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Path root = dir.resolve("backups");
        try (BackupEngine backups = BackupEngine.open(root, fs)) {
            Path meta = root.resolve("meta");
            TreeMap<String, byte[]> model = new TreeMap<>();
            try (Db db = Db.open(dir.resolve("db"), small(fs))) {
                load(db, model, rnd, 500);
                db.flush();
                load(db, model, rnd, 20);
                AtomicInteger renamed = new AtomicInteger();
                FaultInjectingFileSystem.Fault rename = fs.inject((op, p) -> {
                    if (op == FaultInjectingFileSystem.Op.RENAME && p.equals(meta.resolve("1"))) {
                        renamed.incrementAndGet();
                    }
                    return false;
                });
                FaultInjectingFileSystem.Fault fault = fs.injectNth(
                        (op, p) -> op == FaultInjectingFileSystem.Op.SYNC_DIR && p.equals(meta) && renamed.get() > 0,
                        1);
                assertThatThrownBy(() -> backups.createBackup(db)).isInstanceOf(BloomKvIOException.class);
                assertThat(fault.fired()).as("seed " + seed).isEqualTo(1);
                fault.remove();
                rename.remove();
                assertThat(backups.backups()).as("seed " + seed).isEmpty();
                assertThat(backups.corruptedBackups()).isEmpty();
                assertThat(BackupEngine.openReadOnly(root).backups()).isEmpty();
                assertThat(Files.exists(meta.resolve("1"))).isFalse();
                assertThat(storedShared(root))
                        .as("the failed create's tables are removed")
                        .isEmpty();

                BackupEngine.BackupInfo next = backups.createBackup(db);
                assertThat(next.id()).isEqualTo(1);
                backups.verify(1);
                backups.restore(1, dir.resolve("restored"));
                try (Db r = Db.open(dir.resolve("restored"), small(FileSystem.disk()))) {
                    assertThat(CheckpointTest.contents(r)).as("seed " + seed).isEqualTo(CheckpointTest.render(model));
                }
            }
        }
    }

    /**
     * Syncing meta/ fails for good once the metadata file was renamed into place: the create removes the metadata
     * but cannot make that removal durable, so it removes none of the data the metadata names (after a crash the
     * metadata could come back, naming files that are gone). Once meta/ syncs again, the next purge removes them.
     */
    @Test
    void aFailedCreateRemovesNoDataWhileItsMetadataRemovalIsNotDurable() throws IOException {
        long seed = TestSeeds.seed("BackupEngineTest.metaSyncDown");
        Random rnd = new Random(seed);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Path root = dir.resolve("backups");
        try (BackupEngine backups = BackupEngine.open(root, fs)) {
            Path meta = root.resolve("meta");
            TreeMap<String, byte[]> model = new TreeMap<>();
            try (Db db = Db.open(dir.resolve("db"), small(fs))) {
                load(db, model, rnd, 500);
                db.flush();
                AtomicInteger renamed = new AtomicInteger();
                FaultInjectingFileSystem.Fault rename = fs.inject((op, p) -> {
                    if (op == FaultInjectingFileSystem.Op.RENAME && p.equals(meta.resolve("1"))) {
                        renamed.incrementAndGet();
                    }
                    return false;
                });
                FaultInjectingFileSystem.Fault fault = fs.inject(
                        (op, p) -> op == FaultInjectingFileSystem.Op.SYNC_DIR && p.equals(meta) && renamed.get() > 0);
                assertThatThrownBy(() -> backups.createBackup(db)).isInstanceOf(BloomKvIOException.class);
                assertThat(fault.fired())
                        .as("seed " + seed)
                        .isGreaterThanOrEqualTo(2); // the create's and the removal's
                assertThat(Files.exists(meta.resolve("1"))).isFalse();
                assertThat(storedShared(root))
                        .as("seed " + seed + ": the tables the unsynced metadata names stay")
                        .isNotEmpty();
                assertThat(Files.exists(root.resolve("private").resolve("1")))
                        .as("and its private files")
                        .isTrue();
                fault.remove();
                rename.remove();
                assertThat(backups.purgeOldBackups(0)).isEmpty();
                assertThat(storedShared(root)).as("removed once meta/ syncs").isEmpty();
                assertThat(Files.exists(root.resolve("private").resolve("1"))).isFalse();
                BackupEngine.BackupInfo next = backups.createBackup(db);
                backups.verify(next.id());
            }
        }
    }

    /** Three backups of one database, the later ones sharing tables with the earlier; returns each one's contents. */
    static java.util.List<TreeMap<String, String>> threeBackups(Db db, BackupEngine backups, Random rnd) {
        TreeMap<String, byte[]> model = new TreeMap<>();
        java.util.List<TreeMap<String, String>> states = new java.util.ArrayList<>();
        for (int b = 0; b < 3; b++) {
            load(db, model, rnd, 400);
            db.flush();
            load(db, model, rnd, 20);
            backups.createBackup(db);
            states.add(CheckpointTest.render(model));
        }
        return states;
    }

    /** Backup {@code id}'s MANIFEST in the backup directory {@code root}. */
    static Path manifestOf(Path root, int id) throws IOException {
        try (Stream<Path> s = Files.list(root.resolve("private").resolve(Integer.toString(id)))) {
            return s.filter(p -> p.getFileName().toString().startsWith("MANIFEST-"))
                    .findFirst()
                    .orElseThrow();
        }
    }

    static java.util.Set<String> storedShared(Path backupDir) throws IOException {
        try (Stream<Path> s = Files.list(backupDir.resolve("shared"))) {
            return s.map(p -> "shared/" + p.getFileName()).collect(java.util.stream.Collectors.toSet());
        }
    }

    static java.util.Set<String> namedShared(BackupEngine backups) {
        java.util.Set<String> named = new java.util.HashSet<>();
        for (BackupEngine.BackupInfo b : backups.backups()) {
            b.files().stream()
                    .map(BackupEngine.BackupFile::path)
                    .filter(f -> f.startsWith("shared/"))
                    .forEach(named::add);
        }
        return named;
    }

    static void copyTree(Path from, Path to) throws IOException {
        Files.createDirectories(to.getParent());
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Files.copy(p, to.resolve(from.relativize(p).toString()));
            }
        }
    }

    @Test
    void deleteAndPurgeRemoveExactlyTheFilesNoRemainingBackupNames() throws IOException {
        long seed = TestSeeds.seed("BackupEngineTest.delete");
        Path bdir = dir.resolve("backups");
        try (BackupEngine backups = BackupEngine.open(bdir)) {
            java.util.List<TreeMap<String, String>> states;
            try (Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()).autoCompaction(false))) {
                states = threeBackups(db, backups, new Random(seed));
                load(db, new TreeMap<>(), new Random(seed + 1), 400);
                db.flush();
                backups.createBackup(db);
            }
            java.util.Set<String> sharedBy2 = new java.util.HashSet<>();
            backups.backups().get(1).files().stream()
                    .map(BackupEngine.BackupFile::path)
                    .forEach(sharedBy2::add);

            backups.deleteBackup(2);
            assertThat(backups.backups())
                    .extracting(BackupEngine.BackupInfo::id)
                    .containsExactly(1, 3, 4);
            assertThat(Files.exists(bdir.resolve("private").resolve("2"))).isFalse();
            assertThat(storedShared(bdir)).as("seed " + seed).isEqualTo(namedShared(backups));
            // Tables backup 2 shared with 1 or 3 are kept.
            assertThat(storedShared(bdir)).containsAnyElementsOf(sharedBy2);
            for (int id : new int[] {1, 3}) {
                backups.verify(id);
                Path target = dir.resolve("r" + id);
                backups.restore(id, target);
                try (Db r = Db.open(target, small(FileSystem.disk()))) {
                    assertThat(CheckpointTest.contents(r))
                            .as("seed " + seed + " backup " + id)
                            .isEqualTo(states.get(id - 1));
                }
            }
            assertThatThrownBy(() -> backups.deleteBackup(2))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("no backup 2");

            assertThat(backups.purgeOldBackups(1)).containsExactly(1, 3);
            assertThat(backups.backups())
                    .extracting(BackupEngine.BackupInfo::id)
                    .containsExactly(4);
            assertThat(storedShared(bdir)).isEqualTo(namedShared(backups));
            backups.verify(4);
            assertThat(backups.purgeOldBackups(5)).isEmpty();
            assertThatThrownBy(() -> backups.purgeOldBackups(-1)).isInstanceOf(InvalidArgumentException.class);
            assertThat(backups.purgeOldBackups(0)).containsExactly(4);
            assertThat(backups.backups()).isEmpty();
            assertThat(storedShared(bdir)).isEmpty();
            try (Stream<Path> s = Files.list(bdir.resolve("private"))) {
                assertThat(s.count()).isZero();
            }
        }
    }

    /**
     * The process dies at each file-system operation of a delete (and of a purge) in turn: every backup still listed
     * verifies and restores exactly its point, the kept backups are all listed, opening the engine again removes
     * nothing, and its first purge (which deletes no backup) leaves only the files some backup names.
     */
    @Test
    void aCrashAtAnyOperationOfADeleteOrPurgeLeavesEveryRemainingBackupWhole() throws IOException {
        long seed = TestSeeds.seed("BackupEngineTest.deleteCrash");
        Path template = dir.resolve("template");
        java.util.List<TreeMap<String, String>> states;
        try (Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()).autoCompaction(false));
                BackupEngine backups = BackupEngine.open(template)) {
            states = threeBackups(db, backups, new Random(seed));
        }
        for (boolean purge : new boolean[] {false, true}) {
            int total = -1;
            int gone = 0;
            int kept = 0;
            for (int i = 0; total < 0 || i <= total + 1; i++) {
                FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
                Path base = dir.resolve((purge ? "p" : "d") + i);
                copyTree(template, base.resolve("backups"));
                try (BackupEngine backups = BackupEngine.open(base.resolve("backups"), fs)) {
                    AtomicInteger ops = new AtomicInteger();
                    FaultInjectingFileSystem.Fault counter = fs.inject((op, p) -> {
                        ops.incrementAndGet();
                        return false;
                    });
                    FaultInjectingFileSystem.Fault dead = i == 0 ? null : fs.injectFromNth((op, p) -> true, i);
                    try {
                        if (purge) {
                            backups.purgeOldBackups(1);
                        } else {
                            backups.deleteBackup(2);
                        }
                    } catch (BloomKvIOException expected) {
                        // the process is dying
                    }
                    counter.remove();
                    if (i == 0) {
                        total = ops.get();
                    }
                    if (dead != null) {
                        dead.remove();
                    }
                    fs.crash(new Random(seed + i));
                    String ctx = "seed " + seed + ", " + (purge ? "purge" : "delete") + ", crash at operation " + i
                            + " of " + total;
                    Set<String> beforeOpen = BackupGarbageCollectTest.files(base.resolve("backups"));
                    try (BackupEngine after = BackupEngine.open(base.resolve("backups"), FileSystem.disk())) {
                        assertThat(BackupGarbageCollectTest.files(base.resolve("backups")))
                                .as(ctx + ": the open removes nothing")
                                .isEqualTo(beforeOpen);
                        java.util.List<Integer> listed = after.backups().stream()
                                .map(BackupEngine.BackupInfo::id)
                                .toList();
                        assertThat(after.purgeOldBackups(listed.size())).as(ctx).isEmpty();
                        assertThat(storedShared(base.resolve("backups")))
                                .as(ctx)
                                .isEqualTo(namedShared(after));
                        try (Stream<Path> s = Files.list(base.resolve("backups").resolve("private"))) {
                            assertThat(s.map(p ->
                                            Integer.parseInt(p.getFileName().toString())))
                                    .as(ctx + ": private directories after the first purge")
                                    .containsExactlyInAnyOrderElementsOf(listed);
                        }
                        assertThat(listed).as(ctx).contains(3);
                        if (!purge) {
                            assertThat(listed).as(ctx).contains(1);
                        }
                        if (listed.size() == 3) {
                            kept++;
                        } else {
                            gone++;
                        }
                        for (int id : listed) {
                            after.verify(id);
                        }
                        // Verified backups restore byte for byte; one of them per crash point is also opened and
                        // compared.
                        int id = listed.get(i % listed.size());
                        Path target = base.resolve("r" + id);
                        after.restore(id, target);
                        try (Db r = Db.open(target, small(FileSystem.disk()))) {
                            assertThat(CheckpointTest.contents(r))
                                    .as(ctx + ", backup " + id)
                                    .isEqualTo(states.get(id - 1));
                        }
                    }
                }
            }
            System.out.println("BackupEngineTest " + (purge ? "purge" : "delete") + " crashes: " + gone + " deleted, "
                    + kept + " still listed");
            assertThat(gone).isPositive();
            assertThat(kept).isPositive();
        }
    }
}
