package io.bloomkv.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rocksdb.BackupEngineOptions;
import org.rocksdb.Env;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * {@link BackupEngine#purgeOldBackups} with backups whose metadata is damaged, rocksdbjni's {@code BackupEngine} as the
 * oracle: the same backups are made on both, the same metadata files damaged (a newline put before their first line,
 * which neither parses), both engines reopened and purged with the same {@code keep}. RocksDB counts only the valid
 * backups, keeps the newest {@code keep} of them, deletes the other valid ones and leaves every corrupt one (its
 * metadata file stays, it is still reported corrupt), wherever its id falls; the next backup's id is above every id,
 * the corrupt ones' too. bloomkv must agree on all of that. The one difference, deliberate and documented on {@link
 * BackupEngine#purgeOldBackups}: RocksDB's garbage collection also removes a corrupt backup's private directory (and
 * the shared tables only it named), bloomkv keeps them while the damaged metadata is there.
 */
class BackupPurgeDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    /** What a purge left, observed from outside the engine. */
    record Outcome(
            List<Integer> validBefore,
            List<Integer> corruptBefore,
            List<Integer> validAfter,
            List<Integer> corruptAfter,
            Set<String> metaFilesAfter,
            int nextId) {}

    /** The case the task names: three backups, the newest damaged, keep two. */
    @Test
    void aDamagedNewestBackupIsNotCountedAmongTheKept() throws Exception {
        Outcome rocks = rocks("fixed-newest", 3, Set.of(3), 2);
        Outcome ours = bloomkv("fixed-newest", 3, Set.of(3), 2);
        assertThat(rocks.validAfter()).containsExactly(1, 2);
        assertThat(rocks.corruptAfter()).containsExactly(3);
        assertThat(ours).isEqualTo(rocks);
    }

    /**
     * The ids given after the newest backups are deleted: while the engine stays open, not the deleted ids again
     * (RocksDB keeps its latest id in memory); after a reopen, one above the highest id left.
     */
    @Test
    void aDeletedNewestBackupsIdIsNotGivenAgainWhileTheEngineIsOpen() throws Exception {
        List<Integer> rocks = new ArrayList<>();
        Path rocksBackups = dir.resolve("ids-rocks-backups");
        Files.createDirectories(rocksBackups);
        try (org.rocksdb.Options options = new org.rocksdb.Options().setCreateIfMissing(true);
                RocksDB db = RocksDB.open(options, dir.resolve("ids-rocks-db").toString());
                BackupEngineOptions beo = new BackupEngineOptions(rocksBackups.toString())) {
            try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(Env.getDefault(), beo)) {
                for (int i = 0; i < 3; i++) {
                    db.put(("k" + i).getBytes(UTF_8), "v".getBytes(UTF_8));
                    engine.createNewBackup(db, true);
                }
                engine.deleteBackup(3);
                engine.createNewBackup(db, true);
                rocks.addAll(BackupIds.valid(engine));
                engine.deleteBackup(4);
                engine.purgeOldBackups(1);
                engine.createNewBackup(db, true);
                rocks.addAll(BackupIds.valid(engine));
                engine.deleteBackup(5);
            }
            try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(Env.getDefault(), beo)) {
                engine.createNewBackup(db, true);
                rocks.addAll(BackupIds.valid(engine));
            }
        }
        List<Integer> ours = new ArrayList<>();
        Path ourBackups = dir.resolve("ids-bloomkv-backups");
        try (Db db = Db.open(dir.resolve("ids-bloomkv-db"), Options.defaults())) {
            BackupEngine engine = BackupEngine.open(ourBackups);
            for (int i = 0; i < 3; i++) {
                db.put(("k" + i).getBytes(UTF_8), "v".getBytes(UTF_8));
                engine.createBackup(db);
            }
            engine.deleteBackup(3);
            engine.createBackup(db);
            ours.addAll(BackupIds.valid(engine));
            engine.deleteBackup(4);
            engine.purgeOldBackups(1);
            engine.createBackup(db);
            ours.addAll(BackupIds.valid(engine));
            engine.deleteBackup(5);
            engine.close();
            try (BackupEngine reopened = BackupEngine.open(ourBackups)) {
                reopened.createBackup(db);
                ours.addAll(BackupIds.valid(reopened));
            }
        }
        assertThat(rocks).as("RocksDB").containsExactly(1, 2, 4, 2, 5, 2, 3);
        assertThat(ours).isEqualTo(rocks);
    }

    /** A damaged backup older than the kept one, and one among those deleted: neither is deleted. */
    @Test
    void aDamagedOlderBackupIsLeftAlone() throws Exception {
        Outcome rocks = rocks("fixed-older", 5, Set.of(1, 3), 1);
        Outcome ours = bloomkv("fixed-older", 5, Set.of(1, 3), 1);
        assertThat(rocks.validAfter()).containsExactly(5);
        assertThat(rocks.corruptAfter()).containsExactly(1, 3);
        assertThat(rocks.metaFilesAfter()).containsExactlyInAnyOrder("1", "3", "5");
        assertThat(ours).isEqualTo(rocks);
    }

    /** Random counts of backups, damaged subsets and {@code keep} (0 and more than there are included). */
    @Test
    void randomDamageAndKeepAgreeWithRocksDb() throws Exception {
        long seed = TestSeeds.seed("BackupPurgeDifferentialTest.random");
        Random rnd = new Random(seed);
        for (int round = 0; round < 8; round++) {
            int n = 1 + rnd.nextInt(5);
            Set<Integer> damaged = new TreeSet<>();
            for (int id = 1; id <= n; id++) {
                if (rnd.nextInt(3) == 0) {
                    damaged.add(id);
                }
            }
            int keep = rnd.nextInt(n + 2);
            String ctx =
                    "seed " + seed + ", round " + round + ": " + n + " backups, damaged " + damaged + ", keep " + keep;
            Outcome rocks = rocks("r" + round, n, damaged, keep);
            Outcome ours = bloomkv("r" + round, n, damaged, keep);
            assertThat(ours).as(ctx).isEqualTo(rocks);
        }
    }

    /**
     * What was left of an interrupted create, observed from outside the engine: after the open (the private
     * directories, whether the planted table is there), then after the first mutating call, and the next backup's id.
     */
    record Collected(
            Set<String> privateDirsAfterOpen,
            boolean plantedTableLeftAfterOpen,
            List<Integer> valid,
            List<Integer> corrupt,
            Set<String> privateDirs,
            boolean plantedTableLeft,
            int nextId) {}

    /**
     * What a create interrupted after storing some files leaves, built by hand on both engines: a private directory
     * of the next id holding a copy of a private file, a table in the shared directory that no metadata names, and a
     * metadata temp file. Both engines are opened on it: neither open removes anything (RocksDB's only notes that a
     * collection is due). Then the same first call on both, {@code firstCall}: {@code garbageCollect()}, a purge that
     * keeps both backups, or the delete of backup 1; each must leave the same backups and private directories and
     * remove the planted table, and the next backup must get the same id.
     */
    @ParameterizedTest
    @ValueSource(strings = {"garbageCollect", "purge", "delete"})
    void anInterruptedCreatesLeftoversStayAtOpenAndGoAtTheFirstCollection(String firstCall) throws Exception {
        Collected rocks;
        Path rocksDb = dir.resolve("gc-rocks-db");
        Path rocksBackups = dir.resolve("gc-rocks-backups");
        Files.createDirectories(rocksBackups);
        try (org.rocksdb.Options options = new org.rocksdb.Options().setCreateIfMissing(true);
                RocksDB db = RocksDB.open(options, rocksDb.toString());
                FlushOptions flush = new FlushOptions().setWaitForFlush(true);
                BackupEngineOptions beo = new BackupEngineOptions(rocksBackups.toString())) {
            try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(Env.getDefault(), beo)) {
                for (int i = 1; i <= 2; i++) {
                    db.put(("k" + i).getBytes(UTF_8), ("v" + i).getBytes(UTF_8));
                    db.flush(flush);
                    engine.createNewBackup(db, true);
                }
            }
            Path planted = plantLeftovers(rocksBackups, "shared_checksum", ".3.tmp");
            try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(Env.getDefault(), beo)) {
                Set<String> privateAfterOpen = BackupIds.names(rocksBackups.resolve("private"));
                boolean leftAfterOpen = Files.exists(planted);
                switch (firstCall) {
                    case "garbageCollect" -> engine.garbageCollect();
                    case "purge" -> engine.purgeOldBackups(2);
                    default -> engine.deleteBackup(1);
                }
                List<Integer> valid = BackupIds.valid(engine);
                List<Integer> corrupt = BackupIds.sorted(engine.getCorruptedBackups());
                Set<String> privateDirs = BackupIds.names(rocksBackups.resolve("private"));
                boolean left = Files.exists(planted);
                db.put("next".getBytes(UTF_8), "v".getBytes(UTF_8));
                engine.createNewBackup(db, true);
                List<Integer> all = BackupIds.valid(engine);
                rocks = new Collected(
                        privateAfterOpen, leftAfterOpen, valid, corrupt, privateDirs, left, all.get(all.size() - 1));
            }
        }
        Collected ours;
        Path ourBackups = dir.resolve("gc-bloomkv-backups");
        try (Db db = Db.open(dir.resolve("gc-bloomkv-db"), Options.defaults())) {
            BackupEngine first = BackupEngine.open(ourBackups);
            for (int i = 1; i <= 2; i++) {
                db.put(("k" + i).getBytes(UTF_8), ("v" + i).getBytes(UTF_8));
                db.flush();
                first.createBackup(db);
            }
            Path planted = plantLeftovers(ourBackups, "shared", "3.tmp");
            Files.createDirectories(ourBackups.resolve("tmp").resolve("3"));
            Files.writeString(ourBackups.resolve("tmp").resolve("3").resolve("CURRENT"), "MANIFEST-000001\n");
            first.close();
            BackupEngine engine = BackupEngine.open(ourBackups);
            Set<String> privateAfterOpen = BackupIds.names(ourBackups.resolve("private"));
            boolean leftAfterOpen = Files.exists(planted);
            assertThat(BackupIds.names(ourBackups.resolve("tmp"))).containsExactly("3");
            assertThat(BackupIds.names(ourBackups.resolve("meta"))).containsExactly("1", "2", "3.tmp");
            switch (firstCall) {
                case "garbageCollect" -> engine.garbageCollect();
                case "purge" -> engine.purgeOldBackups(2);
                default -> engine.deleteBackup(1);
            }
            List<Integer> valid = BackupIds.valid(engine);
            List<Integer> corrupt = engine.corruptedBackups();
            Set<String> privateDirs = BackupIds.names(ourBackups.resolve("private"));
            boolean left = Files.exists(planted);
            assertThat(BackupIds.names(ourBackups.resolve("tmp"))).isEmpty();
            assertThat(BackupIds.names(ourBackups.resolve("meta")))
                    .containsExactlyElementsOf(
                            valid.stream().map(String::valueOf).toList());
            db.put("next".getBytes(UTF_8), "v".getBytes(UTF_8));
            int nextId = engine.createBackup(db).id();
            engine.verify(nextId);
            engine.close();
            ours = new Collected(privateAfterOpen, leftAfterOpen, valid, corrupt, privateDirs, left, nextId);
        }
        List<Integer> remaining = firstCall.equals("delete") ? List.of(2) : List.of(1, 2);
        Set<String> remainingDirs =
                new TreeSet<>(remaining.stream().map(String::valueOf).toList());
        assertThat(rocks)
                .isEqualTo(new Collected(Set.of("1", "2", "3"), true, remaining, List.of(), remainingDirs, false, 3));
        assertThat(ours).isEqualTo(rocks);
    }

    /**
     * Plants in {@code backupDir} what a create of backup 3 interrupted after storing files leaves: {@code private/3/}
     * with a copy of a file of {@code private/2/}, a table in {@code sharedDir} that no metadata names (returned), and
     * the metadata temp file {@code meta/METATMP}.
     */
    private static Path plantLeftovers(Path backupDir, String sharedDir, String metaTmp) throws IOException {
        Path private2 = backupDir.resolve("private").resolve("2");
        String file = BackupIds.names(private2).iterator().next();
        Files.createDirectories(backupDir.resolve("private").resolve("3"));
        Files.copy(
                private2.resolve(file),
                backupDir.resolve("private").resolve("3").resolve(file));
        Path table = backupDir.resolve(sharedDir).resolve("999_0badf00d_5.sst");
        Files.writeString(table, "table");
        Files.writeString(backupDir.resolve("meta").resolve(metaTmp), "partial");
        return table;
    }

    /** Puts a newline before the first line of {@code meta/ID}: neither RocksDB nor bloomkv parses it then. */
    private static void damage(Path backupDir, int id) throws IOException {
        Path meta = backupDir.resolve("meta").resolve(Integer.toString(id));
        byte[] b = Files.readAllBytes(meta);
        byte[] out = new byte[b.length + 1];
        out[0] = '\n';
        System.arraycopy(b, 0, out, 1, b.length);
        Files.write(meta, out);
    }

    private Outcome rocks(String name, int n, Set<Integer> damaged, int keep) throws RocksDBException, IOException {
        Path dbDir = dir.resolve(name + "-rocks-db");
        Path backupDir = dir.resolve(name + "-rocks-backups");
        Files.createDirectories(backupDir); // rocksdbjni's BackupEngineOptions wants an existing directory
        try (org.rocksdb.Options options = new org.rocksdb.Options().setCreateIfMissing(true);
                RocksDB db = RocksDB.open(options, dbDir.toString());
                FlushOptions flush = new FlushOptions().setWaitForFlush(true);
                BackupEngineOptions beo = new BackupEngineOptions(backupDir.toString())) {
            try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(Env.getDefault(), beo)) {
                for (int i = 1; i <= n; i++) {
                    db.put(("k" + i).getBytes(UTF_8), ("v" + i).getBytes(UTF_8));
                    db.flush(flush);
                    engine.createNewBackup(db, true);
                }
            }
            for (int id : damaged) {
                damage(backupDir, id);
            }
            BackupIds.Purge purge = BackupIds.purge(beo, keep);
            List<Integer> validBefore = purge.validBefore();
            List<Integer> corruptBefore = purge.corruptBefore();
            List<Integer> validAfter = purge.validAfter();
            List<Integer> corruptAfter = purge.corruptAfter();
            Set<String> metaAfter = BackupIds.names(backupDir.resolve("meta"));
            for (int id : corruptAfter) {
                // RocksDB's garbage collection removed the corrupt backup's private files (bloomkv keeps them).
                assertThat(Files.exists(backupDir.resolve("private").resolve(Integer.toString(id))))
                        .as("RocksDB private/" + id + " of a corrupt backup after a purge")
                        .isFalse();
            }
            // The next id from a reopened engine: RocksDB takes it from the metadata files there are, corrupt ones
            // included, as bloomkv does on every create (an engine that stays open also remembers the ids it deleted).
            try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(Env.getDefault(), beo)) {
                db.put("next".getBytes(UTF_8), "v".getBytes(UTF_8));
                engine.createNewBackup(db, true);
                List<Integer> all = BackupIds.valid(engine);
                int nextId = all.get(all.size() - 1);
                return new Outcome(validBefore, corruptBefore, validAfter, corruptAfter, metaAfter, nextId);
            }
        }
    }

    private Outcome bloomkv(String name, int n, Set<Integer> damaged, int keep) throws IOException {
        Path dbDir = dir.resolve(name + "-bloomkv-db");
        Path backupDir = dir.resolve(name + "-bloomkv-backups");
        try (Db db = Db.open(dbDir, Options.defaults())) {
            BackupEngine first = BackupEngine.open(backupDir);
            for (int i = 1; i <= n; i++) {
                db.put(("k" + i).getBytes(UTF_8), ("v" + i).getBytes(UTF_8));
                db.flush();
                first.createBackup(db);
            }
            for (int id : damaged) {
                damage(backupDir, id);
            }
            Set<String> sharedBefore = BackupIds.names(backupDir.resolve("shared"));
            first.close();
            BackupEngine engine = BackupEngine.open(backupDir);
            List<Integer> validBefore = BackupIds.valid(engine);
            List<Integer> corruptBefore = engine.corruptedBackups();
            List<Integer> deleted = engine.purgeOldBackups(keep);
            List<Integer> validAfter = BackupIds.valid(engine);
            List<Integer> corruptAfter = engine.corruptedBackups();
            Set<String> metaAfter = BackupIds.names(backupDir.resolve("meta"));
            List<Integer> expectDeleted = new ArrayList<>(validBefore);
            expectDeleted.removeAll(validAfter);
            assertThat(deleted).as("ids purgeOldBackups returned").isEqualTo(expectDeleted);
            for (int id : corruptAfter) {
                assertThat(Files.exists(backupDir.resolve("private").resolve(Integer.toString(id))))
                        .as("bloomkv keeps private/" + id + " of a damaged backup")
                        .isTrue();
            }
            if (!corruptAfter.isEmpty()) {
                assertThat(BackupIds.names(backupDir.resolve("shared")))
                        .as("no shared table removed while one is damaged")
                        .isEqualTo(sharedBefore);
            }
            for (int id : validAfter) {
                engine.verify(id);
            }
            db.put("next".getBytes(UTF_8), "v".getBytes(UTF_8));
            engine.close();
            int nextId;
            try (BackupEngine reopened = BackupEngine.open(backupDir)) {
                nextId = reopened.createBackup(db).id();
                reopened.verify(nextId);
            }
            return new Outcome(validBefore, corruptBefore, validAfter, corruptAfter, metaAfter, nextId);
        }
    }
}
