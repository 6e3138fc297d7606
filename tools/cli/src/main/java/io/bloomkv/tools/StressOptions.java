package io.bloomkv.tools;

import io.bloomkv.engine.Options;
import io.bloomkv.engine.SyncMode;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * Options shared by {@code bloomkv stress} and {@code bloomkv crashtest}: the key space, the sync mode,
 * where the expected state lives, and a database shape small enough that a short run flushes and
 * compacts often (as db_stress does with its small write buffers).
 */
final class StressOptions {
    @Option(names = "--keys", paramLabel = "N", defaultValue = "10000",
            description = "Keys of the key space (default: ${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--sync", paramLabel = "MODE", defaultValue = "EVERY_WRITE",
            description = "Sync mode: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    SyncMode sync;

    @Option(names = "--expected", paramLabel = "FILE",
            description = "The expected-state file (default: DB_DIR.expected beside the database).")
    Path expected;

    Path expectedFile(Path dir) {
        return expected != null ? expected : dir.toAbsolutePath().normalize().resolveSibling(dir.getFileName() + ".expected");
    }

    /** Small memtables and tables so a run of seconds flushes and compacts. */
    Options toOptions() {
        return Options.defaults().syncMode(sync).writeBufferSize(256 << 10).targetFileSize(256 << 10)
                .maxBytesForLevelBase(1 << 20).blockSize(1024);
    }
}
