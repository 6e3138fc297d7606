package io.bloomkv.engine;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.InMemoryFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Fuzz target for the backup metadata file (engine/FORMAT.md, "Backup directory"): {@link BackupEngine#readMeta}
 * of fuzzed bytes, as they are and with a valid checksum line appended (so the parser behind the checksum is
 * reached). Invariant: it throws only {@link CorruptionException}, never another exception, and a file it accepts
 * names only paths inside the backup directory.
 */
class BackupMetaFuzzTest {
    private static final Path DIR = Path.of("/fuzz/backups");

    @FuzzTest(maxDuration = "5m")
    void backupMetadata(byte[] data) throws IOException {
        parse(data);
        parse(BackupEngine.withChecksumLine(data));
    }

    private static void parse(byte[] meta) throws IOException {
        FileSystem fs = new InMemoryFileSystem();
        try (BackupEngine engine = BackupEngine.open(DIR, fs)) {
            try (WritableFile f = fs.newWritableFile(DIR.resolve("meta").resolve("1"))) {
                f.append(meta, 0, meta.length);
            }
            BackupEngine.BackupInfo info;
            try {
                info = engine.readMeta(1);
            } catch (CorruptionException expected) {
                return;
            }
            for (BackupEngine.BackupFile file : info.files()) {
                Path p = DIR.resolve(file.path()).normalize();
                if (!p.startsWith(DIR) || file.path().contains("..")) {
                    throw new AssertionError("accepted a path outside the backup directory: " + file.path());
                }
            }
        }
    }
}
