package io.bloomkv.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BackupEngineOptions;
import org.rocksdb.Env;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * A backup whose data file is missing or of the wrong size, rocksdbjni's {@code BackupEngine} as the oracle (its
 * {@code Initialize} checks, when it opens, that every file a backup's metadata names exists with the recorded size,
 * and counts one that fails as corrupt). The same backups are made on both engines (one key put and flushed per
 * backup, automatic compaction off, so backup B's new table is the one flushed for it), then the equivalent file of
 * one backup damaged on each: the table that backup added ({@code shared_checksum/} in RocksDB, {@code shared/} in
 * bloomkv; every later backup names it too) or the backup's own MANIFEST ({@code private/ID/} in both), deleted or
 * cut short by one byte. Both engines are reopened and compared: the valid and corrupt ids, those after {@code
 * purgeOldBackups(keep)}, the metadata files left and the id of the next backup.
 *
 * <p>RocksDB checks a size only where its metadata records one (the {@code size} field of its schema 2; its writer
 * records none by default, so by default it checks only that each file exists, and a short file is found by {@code
 * VerifyBackup} or a restore). bloomkv's metadata always records sizes, so RocksDB's metadata files are rewritten
 * before the damage to schema 2.1 with each file's size, as its writer stores them when asked to: RocksDB then applies
 * the rule bloomkv always applies.
 *
 * <p>After the next backup the two differ, as documented on {@link BackupEngine#purgeOldBackups}: RocksDB's garbage
 * collection removed the corrupt backups' private files (and the shared tables only they name), so they stay corrupt;
 * bloomkv kept them (the purge removes only the tables no remaining backup names), and a next backup
 * that stores the missing or short table again makes a backup whose only damage was that table whole again. So
 * afterwards bloomkv's valid backups include RocksDB's, and both hold the same backups.
 */
class BackupFileDamageDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    enum Damage {
        DELETE_SHARED,
        TRUNCATE_SHARED,
        DELETE_PRIVATE,
        TRUNCATE_PRIVATE
    }

    /** What the engines reported, observed from outside. */
    record Outcome(
            List<Integer> validBefore,
            List<Integer> corruptBefore,
            List<Integer> validAfter,
            List<Integer> corruptAfter,
            Set<String> metaFilesAfter,
            int nextId) {}

    /** An {@link Outcome} and, seen from a new engine after the next backup, the valid and corrupt ids. */
    record Run(Outcome outcome, List<Integer> validAtEnd, List<Integer> corruptAtEnd) {
        void agreesWith(Run rocks, String ctx) {
            assertThat(outcome).as(ctx).isEqualTo(rocks.outcome());
            assertThat(validAtEnd).as(ctx + ": valid after the next backup").containsAll(rocks.validAtEnd());
            Set<Integer> all = new TreeSet<>(validAtEnd);
            all.addAll(corruptAtEnd);
            Set<Integer> rocksAll = new TreeSet<>(rocks.validAtEnd());
            rocksAll.addAll(rocks.corruptAtEnd());
            assertThat(all).as(ctx + ": backups after the next one").isEqualTo(rocksAll);
        }
    }

    /** The case the task names: three backups, one file of backup 2 deleted or cut short, keep one. */
    @Test
    void aMissingOrShortFileOfBackupTwoAgreesWithRocksDb() throws Exception {
        for (Damage d : Damage.values()) {
            Run rocks = rocks("fixed-" + d, 3, 2, d, 1);
            Run ours = bloomkv("fixed-" + d, 3, 2, d, 1);
            boolean shared = d == Damage.DELETE_SHARED || d == Damage.TRUNCATE_SHARED;
            // RocksDB: a shared table of backup 2 is named by 3 too, so both are corrupt; a private file only 2.
            assertThat(rocks.outcome().corruptBefore()).as(d.toString()).isEqualTo(shared ? List.of(2, 3) : List.of(2));
            assertThat(rocks.outcome().validAfter()).as(d.toString()).isEqualTo(shared ? List.of(1) : List.of(3));
            ours.agreesWith(rocks, d.toString());
        }
    }

    /** Random counts of backups, damaged backup, kind of damage and {@code keep}. */
    @Test
    void randomFileDamageAgreesWithRocksDb() throws Exception {
        long seed = TestSeeds.seed("BackupFileDamageDifferentialTest.random");
        Random rnd = new Random(seed);
        for (int round = 0; round < 6; round++) {
            int n = 1 + rnd.nextInt(4);
            int victim = 1 + rnd.nextInt(n);
            Damage d = Damage.values()[rnd.nextInt(Damage.values().length)];
            int keep = rnd.nextInt(n + 2);
            String ctx = "seed " + seed + ", round " + round + ": " + n + " backups, " + d + " of backup " + victim
                    + ", keep " + keep;
            Run rocks = rocks("r" + round, n, victim, d, keep);
            Run ours = bloomkv("r" + round, n, victim, d, keep);
            ours.agreesWith(rocks, ctx);
        }
    }

    /**
     * Damages backup {@code victim}'s file: {@code added} is the table it added (in the shared directory), {@code
     * privateDir} its private directory, whose MANIFEST is the private victim.
     */
    private static void damage(Damage d, Path added, Path privateDir) throws IOException {
        Path victim = added;
        if (d == Damage.DELETE_PRIVATE || d == Damage.TRUNCATE_PRIVATE) {
            try (Stream<Path> s = Files.list(privateDir)) {
                victim = s.filter(p -> p.getFileName().toString().startsWith("MANIFEST-"))
                        .findFirst()
                        .orElseThrow();
            }
        }
        if (d == Damage.DELETE_SHARED || d == Damage.DELETE_PRIVATE) {
            Files.delete(victim);
        } else {
            try (RandomAccessFile f = new RandomAccessFile(victim.toFile(), "rw")) {
                f.setLength(f.length() - 1);
            }
        }
    }

    /**
     * Rewrites RocksDB's {@code meta/ID} (schema 1: timestamp, sequence number, file count, then one {@code NAME crc32
     * C} line per file) to schema 2.1 with each file's current size ({@code NAME crc32 C size S}), as RocksDB's writer
     * stores it when asked to record sizes.
     */
    private static void recordSizes(Path backupDir, int id) throws IOException {
        Path meta = backupDir.resolve("meta").resolve(Integer.toString(id));
        StringBuilder out = new StringBuilder("schema_version 2.1\n");
        for (String line : Files.readAllLines(meta, UTF_8)) {
            String[] parts = line.split(" ");
            out.append(line);
            if (parts.length == 3 && parts[1].equals("crc32")) {
                out.append(" size ").append(Files.size(backupDir.resolve(parts[0])));
            }
            out.append('\n');
        }
        Files.writeString(meta, out.toString(), UTF_8);
    }

    /** The file the last backup added to {@code shared}: the one name not in {@code before}. */
    private static Path added(Path shared, Set<String> before) throws IOException {
        Set<String> now = BackupIds.names(shared);
        now.removeAll(before);
        assertThat(now).as("tables added to " + shared).hasSize(1);
        return shared.resolve(now.iterator().next());
    }

    private Run rocks(String name, int n, int victim, Damage d, int keep) throws RocksDBException, IOException {
        Path dbDir = dir.resolve(name + "-rocks-db");
        Path backupDir = dir.resolve(name + "-rocks-backups");
        Files.createDirectories(backupDir); // rocksdbjni's BackupEngineOptions wants an existing directory
        Path shared = backupDir.resolve("shared_checksum");
        try (org.rocksdb.Options options =
                        new org.rocksdb.Options().setCreateIfMissing(true).setDisableAutoCompactions(true);
                RocksDB db = RocksDB.open(options, dbDir.toString());
                FlushOptions flush = new FlushOptions().setWaitForFlush(true);
                BackupEngineOptions beo = new BackupEngineOptions(backupDir.toString())) {
            Path victimTable = null;
            try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(Env.getDefault(), beo)) {
                for (int i = 1; i <= n; i++) {
                    Set<String> before = Files.isDirectory(shared) ? BackupIds.names(shared) : Set.of();
                    db.put(("k" + i).getBytes(UTF_8), ("v" + i).getBytes(UTF_8));
                    db.flush(flush);
                    engine.createNewBackup(db, true);
                    if (i == victim) {
                        victimTable = added(shared, before);
                    }
                }
            }
            for (int id = 1; id <= n; id++) {
                recordSizes(backupDir, id);
            }
            damage(d, victimTable, backupDir.resolve("private").resolve(Integer.toString(victim)));
            BackupIds.Purge purge = BackupIds.purge(beo, keep);
            List<Integer> validBefore = purge.validBefore();
            List<Integer> corruptBefore = purge.corruptBefore();
            List<Integer> validAfter = purge.validAfter();
            List<Integer> corruptAfter = purge.corruptAfter();
            Set<String> metaAfter = BackupIds.names(backupDir.resolve("meta"));
            int nextId;
            try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(Env.getDefault(), beo)) {
                db.put("next".getBytes(UTF_8), "v".getBytes(UTF_8));
                engine.createNewBackup(db, true);
                List<Integer> all = BackupIds.valid(engine);
                nextId = all.get(all.size() - 1);
            }
            try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(Env.getDefault(), beo)) {
                return new Run(
                        new Outcome(validBefore, corruptBefore, validAfter, corruptAfter, metaAfter, nextId),
                        BackupIds.valid(engine),
                        BackupIds.sorted(engine.getCorruptedBackups()));
            }
        }
    }

    private Run bloomkv(String name, int n, int victim, Damage d, int keep) throws IOException {
        Path dbDir = dir.resolve(name + "-bloomkv-db");
        Path backupDir = dir.resolve(name + "-bloomkv-backups");
        Path shared = backupDir.resolve("shared");
        try (Db db = Db.open(dbDir, Options.defaults().autoCompaction(false))) {
            BackupEngine first = BackupEngine.open(backupDir);
            Path victimTable = null;
            for (int i = 1; i <= n; i++) {
                Set<String> before = BackupIds.names(shared);
                db.put(("k" + i).getBytes(UTF_8), ("v" + i).getBytes(UTF_8));
                db.flush();
                first.createBackup(db);
                if (i == victim) {
                    victimTable = added(shared, before);
                }
            }
            damage(d, victimTable, backupDir.resolve("private").resolve(Integer.toString(victim)));
            Set<String> sharedBefore = BackupIds.names(shared);
            first.close();
            BackupEngine engine = BackupEngine.open(backupDir);
            List<Integer> validBefore = BackupIds.valid(engine);
            List<Integer> corruptBefore = engine.corruptedBackups();
            assertThat(engine.corruptedBackupReasons().keySet()).containsExactlyElementsOf(corruptBefore);
            for (CorruptionException why : engine.corruptedBackupReasons().values()) {
                assertThat(why.getMessage()).containsAnyOf("file is missing", "expected");
            }
            List<Integer> deleted = engine.purgeOldBackups(keep);
            List<Integer> validAfter = BackupIds.valid(engine);
            List<Integer> corruptAfter = engine.corruptedBackups();
            Set<String> metaAfter = BackupIds.names(backupDir.resolve("meta"));
            List<Integer> expectDeleted = new ArrayList<>(validBefore);
            expectDeleted.removeAll(validAfter);
            assertThat(deleted).as("ids purgeOldBackups returned").isEqualTo(expectDeleted);
            // The metadata of every backup here parses, damaged ones' too: the purge removed exactly the shared tables
            // no remaining backup names, and kept those a damaged one names (RocksDB's garbage collection removes the
            // ones only corrupt backups name).
            Set<String> named = new TreeSet<>();
            for (int id : BackupIds.all(engine)) {
                engine.readMeta(id).files().stream()
                        .map(BackupEngine.BackupFile::path)
                        .filter(f -> f.startsWith("shared/"))
                        .forEach(f -> named.add(f.substring("shared/".length())));
            }
            Set<String> expected = new TreeSet<>(sharedBefore);
            expected.retainAll(named);
            assertThat(BackupIds.names(shared))
                    .as("the shared tables the remaining backups name, damaged ones included")
                    .isEqualTo(expected);
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
            try (BackupEngine last = BackupEngine.open(backupDir)) {
                return new Run(
                        new Outcome(validBefore, corruptBefore, validAfter, corruptAfter, metaAfter, nextId),
                        BackupIds.valid(last),
                        last.corruptedBackups());
            }
        }
    }
}
