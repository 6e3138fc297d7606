package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The public types of {@code io.bloomkv.engine} are exactly the user's API (Guava's BloomFilter
 * keeps its strategies package-private the same way); internals live in
 * {@code io.bloomkv.engine.internal.*} or are package-private. A new public type here is a decision:
 * add it to the list on purpose.
 */
class PublicApiTest {
    private static final Set<String> USER_API = Set.of(
            "BackupEngine",
            "BloomKvException",
            "BloomKvIOException",
            "Compression",
            "CorruptionException",
            "Db",
            "DbClosedException",
            "DbIterator",
            "DbLockedException",
            "DbMXBean",
            "DbReadOnlyException",
            "EventListener",
            "FilterAllocation",
            "FilterBudget",
            "InvalidArgumentException",
            "NotADatabaseException",
            "Options",
            "RateLimiter",
            "ReadOptions",
            "SharedBlockCache",
            "SharedFilterBudget",
            "Snapshot",
            "Stats",
            "SyncMode",
            "IngestOptions",
            "TableFileWriter",
            "TableInfo",
            "WriteBatch",
            "WriteBufferManager",
            // RocksDB-semantics features (issue 39)
            "CompactionFilter",
            "MergeOperator",
            "MergeOperatorException",
            "MergeOperators",
            "TtlMismatchException",
            // rocksdbjni's Holder, for keyMayExist's value
            "Holder",
            // waitForBackgroundWork while pauseBackgroundWork holds the work (RocksDB's abort_on_pause)
            "BackgroundWorkPausedException",
            // approximateSizes (rocksdbjni's Range and SizeApproximationFlag)
            "KeyRange",
            "SizeApproximation",
            // resume() refusing an error it cannot clear (RocksDB's Resume on an unrecoverable error)
            "NotResumableException",
            // BackupEngine.openReadOnly's refusal of writes (RocksDB's BackupEngineReadOnly has no write calls)
            "BackupReadOnlyException",
            // one writable BackupEngine per directory (its LOCK), and calls after its close (as DbClosedException)
            "BackupEngineLockedException",
            "BackupEngineClosedException");

    @Test
    void thePublicTypesOfTheApiPackageAreTheUserApi() throws Exception {
        Path classes = Path.of(Db.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .resolve("io/bloomkv/engine");
        Set<String> publicTypes = new TreeSet<>();
        try (Stream<Path> s = Files.list(classes)) {
            for (Path p : s.toList()) {
                String name = p.getFileName().toString();
                if (!name.endsWith(".class") || name.contains("$") || name.equals("package-info.class")) {
                    continue;
                }
                String simple = name.substring(0, name.length() - ".class".length());
                Class<?> c = Class.forName("io.bloomkv.engine." + simple, false, Db.class.getClassLoader());
                if (Modifier.isPublic(c.getModifiers())) {
                    publicTypes.add(simple);
                }
            }
        }
        assertThat(publicTypes).containsExactlyInAnyOrderElementsOf(USER_API);
    }
}
