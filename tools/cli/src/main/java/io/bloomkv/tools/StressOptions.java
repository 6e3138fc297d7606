package io.bloomkv.tools;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.SyncMode;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * Options shared by {@code bloomkv stress} and {@code bloomkv crashtest}: the key space, the sync mode,
 * where the expected state lives, how tables are written and read (compression, filter kind, read mode), and a
 * database shape small enough that a short run flushes and compacts often (as db_stress does with its small write
 * buffers).
 */
final class StressOptions {
    /** How table files are read: {@code Options.useMmapReads} (the default), {@code pread}, or {@code useDirectReads}. */
    enum ReadMode {
        MMAP, PREAD, DIRECT;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The filter kinds a table can carry (COUNTING is for mutable sets). */
    static final FilterKind[] TABLE_FILTER_KINDS = {FilterKind.BLOCKED, FilterKind.STANDARD, FilterKind.PARTITIONED, FilterKind.RIBBON};

    @Option(names = "--keys", paramLabel = "N", defaultValue = "10000",
            description = "Keys of the key space (default: ${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--sync", paramLabel = "MODE", defaultValue = "EVERY_WRITE",
            description = "Sync mode: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    SyncMode sync;

    @Option(names = "--expected", paramLabel = "FILE",
            description = "The expected-state file (default: DB_DIR.expected beside the database).")
    Path expected;

    @Option(names = "--compression", paramLabel = "CODEC", defaultValue = "NONE",
            description = "Block compression of the tables written: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Compression compression;

    @Option(names = "--filter-kind", paramLabel = "KIND", defaultValue = "BLOCKED",
            description = "Filter of the tables written: BLOCKED, STANDARD, PARTITIONED or RIBBON (default: ${DEFAULT-VALUE}).")
    FilterKind filterKind;

    @Option(names = "--read-mode", paramLabel = "MODE", defaultValue = "MMAP",
            description = "How tables are read: ${COMPLETION-CANDIDATES} (mapped, the default; pread; O_DIRECT) (default: ${DEFAULT-VALUE}).")
    ReadMode readMode;

    Path expectedFile(Path dir) {
        return expected != null ? expected : dir.toAbsolutePath().normalize().resolveSibling(dir.getFileName() + ".expected");
    }

    /** Small memtables and tables so a run of seconds flushes and compacts; tables written and read as the options say. */
    Options toOptions() {
        return toOptions(compression, filterKind, readMode);
    }

    /** {@link #toOptions()} with another compression, filter kind and read mode (a crash test round's). */
    Options toOptions(Compression codec, FilterKind kind, ReadMode mode) {
        if (kind == FilterKind.COUNTING) {
            throw new CliException(ExitCodes.USAGE, "--filter-kind COUNTING is for mutable sets, not tables: use BLOCKED, STANDARD, PARTITIONED or RIBBON");
        }
        return Options.defaults().syncMode(sync).writeBufferSize(256 << 10).targetFileSize(256 << 10)
                .maxBytesForLevelBase(1 << 20).blockSize(1024)
                .compression(codec).filterKind(kind)
                .useMmapReads(mode == ReadMode.MMAP).useDirectReads(mode == ReadMode.DIRECT);
    }

    /** "compression LZ4, RIBBON filters, pread reads": what a run's tables are written and read with. */
    static String describe(Compression codec, FilterKind kind, ReadMode mode) {
        return "compression " + codec + ", " + kind + " filters, " + mode.label() + " reads";
    }
}
