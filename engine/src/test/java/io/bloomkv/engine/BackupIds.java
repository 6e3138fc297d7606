package io.bloomkv.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/** What the backup differential tests compare on both engines: backup ids, sorted, and the names in a directory. */
final class BackupIds {
    private BackupIds() {}

    /** bloomkv's valid backups, in id order. */
    static List<Integer> valid(BackupEngine engine) {
        return engine.backups().stream().map(BackupEngine.BackupInfo::id).toList();
    }

    /** bloomkv's backups, valid and damaged, in id order. */
    static List<Integer> all(BackupEngine engine) {
        List<Integer> ids = new ArrayList<>(valid(engine));
        ids.addAll(engine.corruptedBackups());
        ids.sort(null);
        return ids;
    }

    /** RocksDB's valid backups (GetBackupInfo leaves out corrupt ones), in id order. */
    static List<Integer> valid(org.rocksdb.BackupEngine engine) {
        List<Integer> ids = new ArrayList<>();
        engine.getBackupInfo().forEach(b -> ids.add(b.backupId()));
        ids.sort(null);
        return ids;
    }

    /** RocksDB's corrupt backup ids, as bloomkv lists its own: sorted. */
    static List<Integer> sorted(int[] ids) {
        return Arrays.stream(ids).sorted().boxed().toList();
    }

    /** RocksDB's valid and corrupt ids before and after a purge. */
    record Purge(
            List<Integer> validBefore,
            List<Integer> corruptBefore,
            List<Integer> validAfter,
            List<Integer> corruptAfter) {}

    /** Opens RocksDB's engine on {@code beo}, purges keeping {@code keep}, and answers the ids around the purge. */
    static Purge purge(org.rocksdb.BackupEngineOptions beo, int keep) throws org.rocksdb.RocksDBException {
        try (org.rocksdb.BackupEngine engine = org.rocksdb.BackupEngine.open(org.rocksdb.Env.getDefault(), beo)) {
            List<Integer> validBefore = valid(engine);
            List<Integer> corruptBefore = sorted(engine.getCorruptedBackups());
            engine.purgeOldBackups(keep);
            return new Purge(validBefore, corruptBefore, valid(engine), sorted(engine.getCorruptedBackups()));
        }
    }

    /** The file names in {@code dir}, sorted. */
    static Set<String> names(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return new TreeSet<>(s.map(p -> p.getFileName().toString()).toList());
        }
    }
}
