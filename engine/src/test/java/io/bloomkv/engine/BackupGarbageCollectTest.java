package io.bloomkv.engine;

import static io.bloomkv.engine.BackupEngineTest.load;
import static io.bloomkv.engine.BackupEngineTest.manifestOf;
import static io.bloomkv.engine.BackupEngineTest.small;
import static io.bloomkv.engine.BackupEngineTest.storedShared;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BackupEngine#garbageCollect} and the collection the engine's first create, delete or purge runs (RocksDB's
 * {@code GarbageCollect}, which its open only notes is due): opening removes nothing, so a create in progress in
 * another engine goes on; what an interrupted create left is gone after the first create, delete or purge, and what is
 * left is exactly what the model says each backup needs: {@code meta/ID} and the files it names, for every backup whose
 * metadata parses (valid or damaged), and every shared table while some backup's metadata does not parse. Every
 * remaining backup verifies and restores its point. {@link BackupEngine#openReadOnly} removes nothing.
 */
class BackupGarbageCollectTest {
    @TempDir
    Path dir;

    /**
     * The process dies at each file-system operation of a second create in turn: opening the engine afterwards
     * removes nothing, and its first purge or create leaves exactly the files of the backups listed (backup 1, and
     * backup 2 if its metadata became durable; the tables the two share included), each of which verifies and
     * restores exactly its point; nothing of an unfinished backup 2 is left.
     */
    @Test
    void theFirstPurgeOrCreateAfterACrashedCreateLeavesExactlyTheFilesOfTheListedBackups() throws IOException {
        BackupEngineTest.crashAtEveryOperationOfACreate(dir, 1, TestSeeds.seed("BackupGarbageCollectTest.crash"));
    }

    /**
     * Leftovers built by hand (a checkpoint in {@code tmp/}, a private directory and a metadata temp file of a backup
     * that has no metadata, unreferenced shared files) next to a backup damaged by a missing file: a read-only engine
     * removes nothing and refuses every write; opening a writable one removes nothing either; its first purge, which
     * deletes no backup, removes the leftovers and keeps every file of the damaged backup, and deleting another backup
     * removes the tables only it named although one is damaged.
     * Putting the missing file back makes the damaged backup whole: it verifies and restores.
     */
    @Test
    void leftoversGoAndADamagedBackupKeepsItsFiles() throws IOException {
        long seed = TestSeeds.seed("BackupGarbageCollectTest.leftovers");
        Random rnd = new Random(seed);
        String ctx = "seed " + seed;
        Path root = dir.resolve("backups");
        BackupEngine backups = BackupEngine.open(root);
        // Two databases in one backup directory: backups 1 and 3 of A (3 holds every table of 1 and more), 2 of B.
        Map<Integer, TreeMap<String, String>> states = new TreeMap<>();
        TreeMap<String, byte[]> modelA = new TreeMap<>();
        TreeMap<String, byte[]> modelB = new TreeMap<>();
        try (Db a = Db.open(dir.resolve("a"), small(FileSystem.disk()).autoCompaction(false));
                Db b = Db.open(dir.resolve("b"), small(FileSystem.disk()).autoCompaction(false))) {
            load(a, modelA, rnd, 400);
            a.flush();
            backups.createBackup(a);
            states.put(1, CheckpointTest.render(modelA));
            load(b, modelB, rnd, 400);
            b.flush();
            backups.createBackup(b);
            states.put(2, CheckpointTest.render(modelB));
            load(a, modelA, rnd, 400);
            a.flush();
            backups.createBackup(a);
            states.put(3, CheckpointTest.render(modelA));
        }
        Set<String> onlyThree = shared(backups, 3);
        onlyThree.removeAll(shared(backups, 1));
        onlyThree.removeAll(shared(backups, 2));
        assertThat(onlyThree).as(ctx).isNotEmpty();

        // Backup 2 is damaged: its MANIFEST is missing (its metadata parses).
        Path manifest = manifestOf(root, 2);
        Path saved = dir.resolve("saved-manifest");
        Files.move(manifest, saved);
        // What an interrupted create of backup 4 leaves, and stray files in shared/.
        Path any = root.resolve(shared(backups, 1).iterator().next());
        Files.createDirectories(root.resolve("tmp").resolve("4"));
        Files.copy(any, root.resolve("tmp").resolve("4").resolve("000009.sst"));
        Files.createDirectories(root.resolve("private").resolve("4"));
        Files.copy(saved, root.resolve("private").resolve("4").resolve(manifest.getFileName()));
        Files.writeString(root.resolve("meta").resolve("4.tmp"), "bloomkv-backup 1\nid 4\n");
        Files.copy(any, root.resolve("shared").resolve("9_0badf00d_" + Files.size(any) + ".sst"));
        Files.writeString(root.resolve("shared").resolve("stray"), "x");
        backups.close();

        Set<String> planted = files(root);
        BackupEngine readOnly = BackupEngine.openReadOnly(root);
        assertThat(readOnly.isReadOnly()).isTrue();
        assertThat(readOnly.backups()).extracting(BackupEngine.BackupInfo::id).containsExactly(1, 3);
        assertThat(readOnly.corruptedBackups()).containsExactly(2);
        readOnly.verify(1);
        readOnly.restore(3, dir.resolve("ro3"));
        try (Db r = Db.open(dir.resolve("ro3"), small(FileSystem.disk()))) {
            assertThat(CheckpointTest.contents(r)).as(ctx).isEqualTo(states.get(3));
        }
        assertThatThrownBy(readOnly::garbageCollect)
                .isInstanceOf(BackupReadOnlyException.class)
                .hasMessageContaining("garbageCollect")
                .satisfies(e ->
                        assertThat(((BackupReadOnlyException) e).directory()).isEqualTo(root));
        assertThatThrownBy(() -> readOnly.deleteBackup(1)).isInstanceOf(BackupReadOnlyException.class);
        assertThatThrownBy(() -> readOnly.purgeOldBackups(0)).isInstanceOf(BackupReadOnlyException.class);
        try (Db a = Db.open(dir.resolve("a"), small(FileSystem.disk()))) {
            assertThatThrownBy(() -> readOnly.createBackup(a)).isInstanceOf(BackupReadOnlyException.class);
        }
        assertThat(files(root))
                .as(ctx + ": the read-only engine removed nothing")
                .isEqualTo(planted);

        try (BackupEngine engine = BackupEngine.open(root)) {
            assertThat(engine.backups()).extracting(BackupEngine.BackupInfo::id).containsExactly(1, 3);
            assertThat(files(root))
                    .as(ctx + ": the writable open removed nothing")
                    .isEqualTo(planted);
            assertThat(engine.purgeOldBackups(2)).as(ctx).isEmpty();
            Set<String> needed = needed(engine);
            assertThat(needed).as(ctx).doesNotContain(root.relativize(manifest).toString());
            assertThat(files(root)).as(ctx + ": after the first purge").isEqualTo(needed);
            assertThat(dirs(root.resolve("private"))).containsExactly("1", "2", "3");
            assertThat(dirs(root.resolve("tmp"))).isEmpty();

            // Deleting 3 removes the tables only it named, although 2 is damaged; 2's files all stay.
            engine.deleteBackup(3);
            assertThat(storedShared(root)).as(ctx).doesNotContainAnyElementsOf(onlyThree);
            assertThat(files(root)).as(ctx + ": after deleting 3").isEqualTo(needed(engine));
            Files.move(saved, manifest);
            assertThat(engine.backups()).extracting(BackupEngine.BackupInfo::id).containsExactly(1, 2);
            for (int id : new int[] {1, 2}) {
                engine.verify(id);
                engine.restore(id, dir.resolve("r" + id));
                try (Db r = Db.open(dir.resolve("r" + id), small(FileSystem.disk()))) {
                    assertThat(CheckpointTest.contents(r))
                            .as(ctx + ", backup " + id)
                            .isEqualTo(states.get(id));
                }
            }
        }
    }

    /**
     * A backup whose metadata does not parse names tables no one can know: while it is there no shared table is
     * removed, those of a deleted backup included (RocksDB would remove every table only corrupt backups name);
     * deleting it lets the collection remove every table no remaining backup names.
     */
    @Test
    void whileSomeMetadataDoesNotParseNoSharedTableIsRemoved() throws IOException {
        long seed = TestSeeds.seed("BackupGarbageCollectTest.unreadable");
        Random rnd = new Random(seed);
        Path root = dir.resolve("backups");
        BackupEngine backups = BackupEngine.open(root);
        TreeMap<String, byte[]> modelB = new TreeMap<>();
        try (Db a = Db.open(dir.resolve("a"), small(FileSystem.disk()).autoCompaction(false));
                Db b = Db.open(dir.resolve("b"), small(FileSystem.disk()).autoCompaction(false))) {
            load(a, new TreeMap<>(), rnd, 400);
            a.flush();
            backups.createBackup(a);
            load(b, modelB, rnd, 400);
            b.flush();
            backups.createBackup(b);
            load(a, new TreeMap<>(), rnd, 400);
            a.flush();
            backups.createBackup(a);
        }
        Path meta = root.resolve("meta").resolve("1");
        Files.writeString(meta, Files.readString(meta).replace("timestamp", "timestamq"));
        Set<String> before = storedShared(root);
        backups.close();
        try (BackupEngine engine = BackupEngine.open(root)) {
            assertThat(engine.corruptedBackups()).containsExactly(1);
            engine.deleteBackup(3);
            assertThat(storedShared(root))
                    .as("seed " + seed + ": 3's tables stay while 1's metadata does not parse")
                    .isEqualTo(before);
            engine.deleteBackup(1);
            assertThat(files(root)).as("seed " + seed).isEqualTo(needed(engine));
            assertThat(dirs(root.resolve("private"))).containsExactly("2");
            engine.verify(2);
            engine.restore(2, dir.resolve("r2"));
            try (Db r = Db.open(dir.resolve("r2"), small(FileSystem.disk()))) {
                assertThat(CheckpointTest.contents(r)).isEqualTo(CheckpointTest.render(modelB));
            }
        }
    }

    /**
     * {@code meta/} cannot be synced: the open touches nothing (it syncs nothing, logs nothing); the collection the
     * first delete runs fails, so the delete throws and deletes nothing, and so does {@link
     * BackupEngine#garbageCollect}. Once {@code meta/} syncs, the collection is still due: the next create runs it
     * first and removes the leftover of an interrupted create of another id, then the delete succeeds.
     */
    @Test
    void aCollectionThatFailsInsideDeleteFailsTheDeleteAndStaysDue() throws IOException {
        Path root = dir.resolve("backups");
        try (Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()));
                BackupEngine backups = BackupEngine.open(root)) {
            load(db, new TreeMap<>(), new Random(7), 300);
            db.flush();
            backups.createBackup(db);
        }
        // Not the next id (2): a create that did not collect first would leave it.
        Path leftover = root.resolve("tmp").resolve("7");
        Files.createDirectories(leftover);
        Files.writeString(leftover.resolve("CURRENT"), "MANIFEST-000001\n");
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        FaultInjectingFileSystem.Fault fault =
                fs.inject((op, p) -> op == FaultInjectingFileSystem.Op.SYNC_DIR && p.equals(root.resolve("meta")));
        DbLogTest.Recording log = new DbLogTest.Recording();
        try (BackupEngine engine = BackupEngine.open(root, fs, log)) {
            assertThat(fault.fired()).isZero();
            assertThat(log.lines).isEmpty();
            assertThat(engine.backups()).extracting(BackupEngine.BackupInfo::id).containsExactly(1);
            assertThatThrownBy(() -> engine.deleteBackup(1))
                    .isInstanceOf(BloomKvIOException.class)
                    .hasMessageContaining("cannot delete backup 1 in " + root);
            assertThat(fault.fired()).isEqualTo(1);
            assertThat(engine.backups()).extracting(BackupEngine.BackupInfo::id).containsExactly(1);
            assertThat(Files.exists(leftover.resolve("CURRENT"))).isTrue();
            assertThatThrownBy(engine::garbageCollect)
                    .isInstanceOf(BloomKvIOException.class)
                    .hasMessageContaining("cannot collect garbage in " + root);
            assertThat(Files.exists(leftover)).isTrue();
            fault.remove();
            try (Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()))) {
                assertThat(engine.createBackup(db).id()).isEqualTo(2);
            }
            assertThat(Files.exists(leftover)).isFalse();
            assertThat(files(root)).isEqualTo(needed(engine));
            engine.deleteBackup(1);
            assertThat(engine.backups()).extracting(BackupEngine.BackupInfo::id).containsExactly(2);
            assertThat(files(root)).isEqualTo(needed(engine));
            engine.verify(2);
        }
    }

    /**
     * While one engine's create is in progress (its progress callback runs after the checkpoint is in {@code tmp/}),
     * a second writable engine cannot open the directory (its first create, delete or purge would collect the
     * unfinished create's files), and a read-only engine lists the backups without the unfinished one. The create
     * completes, and the backup verifies and restores its point.
     */
    @Test
    void whileAnEngineCreatesABackupASecondWritableOpenIsRefusedAndAReadOnlyOneListsWithoutIt() throws IOException {
        Path root = dir.resolve("backups");
        TreeMap<String, byte[]> model = new TreeMap<>();
        try (BackupEngine creating = BackupEngine.open(root);
                Db db = Db.open(dir.resolve("db"), small(FileSystem.disk()))) {
            load(db, model, new Random(11), 300);
            db.flush();
            creating.createBackup(db);
            load(db, model, new Random(12), 300);
            db.flush();
            java.util.List<java.util.List<Integer>> seen = new java.util.ArrayList<>();
            BackupEngine.BackupInfo second = creating.createBackup(db, (files, bytes) -> {
                if (seen.isEmpty()) {
                    assertThat(Files.isDirectory(root.resolve("tmp").resolve("2")))
                            .isTrue();
                    assertThatThrownBy(() -> BackupEngine.open(root))
                            .isInstanceOf(BackupEngineLockedException.class)
                            .hasMessageContaining(root.toString());
                    seen.add(BackupIds.valid(BackupEngine.openReadOnly(root)));
                }
            });
            assertThat(seen).containsExactly(java.util.List.of(1));
            assertThat(second.id()).isEqualTo(2);
            creating.verify(2);
            creating.restore(2, dir.resolve("r2"));
            try (Db r = Db.open(dir.resolve("r2"), small(FileSystem.disk()))) {
                assertThat(CheckpointTest.contents(r)).isEqualTo(CheckpointTest.render(model));
            }
            assertThat(files(root)).isEqualTo(needed(creating));
        }
    }

    /**
     * The first delete or purge after the open collects what a crash left and removes the deleted backups' files in
     * one pass: it reads each metadata file once and lists {@code shared/} as one collection does, and leaves exactly
     * what a separate {@link BackupEngine#garbageCollect} followed by the same delete or purge leaves. Cases: deleting
     * a backup, a purge, and deleting the backup whose metadata does not parse (which lifts the freeze on shared
     * tables).
     */
    @Test
    void theFirstDeleteOrPurgeCollectsAndRemovesInOnePass() throws IOException {
        long seed = TestSeeds.seed("BackupGarbageCollectTest.onePass");
        Path template = dir.resolve("template");
        try (BackupEngine backups = BackupEngine.open(template);
                Db a = Db.open(dir.resolve("a"), small(FileSystem.disk()).autoCompaction(false));
                Db b = Db.open(dir.resolve("b"), small(FileSystem.disk()).autoCompaction(false))) {
            Random rnd = new Random(seed);
            for (Db db : new Db[] {a, b, a, a}) {
                load(db, new TreeMap<>(), rnd, 300);
                db.flush();
                backups.createBackup(db);
            }
        }
        // What a crashed create of backup 9 leaves, and a table no metadata names.
        Path any;
        try (Stream<Path> s = Files.list(template.resolve("shared"))) {
            any = s.sorted().findFirst().orElseThrow();
        }
        Files.createDirectories(template.resolve("tmp").resolve("9"));
        Files.copy(any, template.resolve("tmp").resolve("9").resolve("000009.sst"));
        Files.createDirectories(template.resolve("private").resolve("9"));
        Files.writeString(template.resolve("private").resolve("9").resolve("CURRENT"), "MANIFEST-000001\n");
        Files.writeString(template.resolve("meta").resolve("9.tmp"), "bloomkv-backup 1\nid 9\n");
        Files.copy(any, template.resolve("shared").resolve("9_0badf00d_" + Files.size(any) + ".sst"));
        for (String call : new String[] {"delete", "purge", "deleteUnparsable"}) {
            String ctx = "seed " + seed + ", " + call;
            Path onePass = dir.resolve(call + "-one");
            Path twoPasses = dir.resolve(call + "-two");
            for (Path copy : new Path[] {onePass, twoPasses}) {
                BackupEngineTest.copyTree(template, copy);
                if (call.equals("deleteUnparsable")) {
                    Path meta = copy.resolve("meta").resolve("2");
                    Files.writeString(meta, Files.readString(meta).replace("timestamp", "timestamq"));
                }
            }
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            Map<String, Integer> metaReads = new TreeMap<>();
            int[] sharedListings = {0};
            FaultInjectingFileSystem.Fault counter = fs.inject((op, p) -> {
                if (op == FaultInjectingFileSystem.Op.OPEN && p.getParent().equals(onePass.resolve("meta"))) {
                    metaReads.merge(p.getFileName().toString(), 1, Integer::sum);
                } else if (op == FaultInjectingFileSystem.Op.LIST && p.equals(onePass.resolve("shared"))) {
                    sharedListings[0]++;
                }
                return false;
            });
            Set<String> left;
            try (BackupEngine engine = BackupEngine.open(onePass, fs)) {
                firstCall(engine, call);
                counter.remove();
                left = files(onePass);
                assertThat(left).as(ctx).isEqualTo(needed(engine));
            }
            assertThat(metaReads.values())
                    .as(ctx + ": reads of each metadata file")
                    .containsOnly(1);
            assertThat(metaReads).as(ctx).containsOnlyKeys("1", "2", "3", "4");
            // The collection lists shared/ with sizes, then again to remove unnamed tables unless a name is unknown.
            assertThat(sharedListings[0])
                    .as(ctx + ": listings of shared/")
                    .isEqualTo(call.equals("deleteUnparsable") ? 1 : 2);
            try (BackupEngine engine = BackupEngine.open(twoPasses)) {
                engine.garbageCollect();
                firstCall(engine, call);
            }
            assertThat(left).as(ctx + ": as a collection and then the call").isEqualTo(files(twoPasses));
            assertThat(left)
                    .as(ctx + ": the crash's leftovers are gone")
                    .noneMatch(f -> f.startsWith("tmp/") || f.startsWith("private/9/") || f.contains("0badf00d"))
                    .doesNotContain("meta/9.tmp");
        }
    }

    private static void firstCall(BackupEngine engine, String call) {
        switch (call) {
            case "delete" -> engine.deleteBackup(3);
            case "purge" -> assertThat(engine.purgeOldBackups(2)).containsExactly(1, 2);
            default -> engine.deleteBackup(2);
        }
    }

    @Test
    void openReadOnlyWantsAnExistingBackupDirectoryAndCreatesNothing() throws IOException {
        Path missing = dir.resolve("missing");
        assertThatThrownBy(() -> BackupEngine.openReadOnly(missing))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("not a backup directory");
        assertThat(Files.exists(missing)).isFalse();
        Files.createDirectories(dir.resolve("plain"));
        assertThatThrownBy(() -> BackupEngine.openReadOnly(dir.resolve("plain")))
                .isInstanceOf(InvalidArgumentException.class);
        assertThat(dirs(dir.resolve("plain"))).isEmpty();
        try (BackupEngine writable = BackupEngine.open(dir.resolve("b"))) {
            assertThat(writable.isReadOnly()).isFalse();
        }
        assertThat(BackupEngine.openReadOnly(dir.resolve("b")).backups()).isEmpty();
    }

    /**
     * What the model says the backup directory must hold: {@code meta/ID} and every file it names, for each backup, and
     * the {@code LOCK} file a writable engine's open created (no collection removes it).
     */
    static Set<String> needed(BackupEngine engine) throws IOException {
        Set<String> needed = new TreeSet<>();
        if (!engine.isReadOnly()) {
            needed.add("LOCK");
        }
        for (int id : BackupIds.all(engine)) {
            needed.add("meta/" + id);
            engine.readMeta(id).files().forEach(f -> needed.add(f.path()));
        }
        // A listed file that is missing (the damage of a damaged backup) is not there to be kept.
        needed.removeIf(f -> !Files.exists(engine.directory().resolve(f)));
        return needed;
    }

    /** The regular files under {@code root}, by their path relative to it ('/'-separated). */
    static Set<String> files(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return new TreeSet<>(s.filter(Files::isRegularFile)
                    .map(p -> root.relativize(p).toString().replace('\\', '/'))
                    .toList());
        }
    }

    private static Set<String> dirs(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return new TreeSet<>(s.map(p -> p.getFileName().toString()).toList());
        }
    }

    private static Set<String> ids(BackupEngine engine) {
        Set<String> ids = new TreeSet<>();
        engine.backups().forEach(b -> ids.add(Integer.toString(b.id())));
        return ids;
    }

    private static Set<String> shared(BackupEngine engine, int id) {
        Set<String> named = new TreeSet<>();
        engine.backups().stream()
                .filter(b -> b.id() == id)
                .flatMap(b -> b.files().stream())
                .map(BackupEngine.BackupFile::path)
                .filter(f -> f.startsWith("shared/"))
                .forEach(named::add);
        return named;
    }
}
