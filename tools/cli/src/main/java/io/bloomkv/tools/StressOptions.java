package io.bloomkv.tools;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.SyncMode;
import io.bloomkv.tools.stress.StressValue;
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
        MMAP,
        PREAD,
        DIRECT;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The filter kinds a table can carry (COUNTING is for mutable sets). */
    static final FilterKind[] TABLE_FILTER_KINDS = {
        FilterKind.BLOCKED, FilterKind.STANDARD, FilterKind.PARTITIONED, FilterKind.RIBBON
    };

    @Option(
            names = "--keys",
            paramLabel = "N",
            defaultValue = "10000",
            description = "Keys of the key space (default: ${DEFAULT-VALUE}).")
    int keys;

    @Option(
            names = "--sync",
            paramLabel = "MODE",
            defaultValue = "EVERY_WRITE",
            description = "Sync mode: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    SyncMode sync;

    @Option(
            names = "--expected",
            paramLabel = "FILE",
            description = "The expected-state file (default: DB_DIR.expected beside the database).")
    Path expected;

    @Option(
            names = "--compression",
            paramLabel = "CODEC",
            defaultValue = "NONE",
            description =
                    "Block compression of the tables written: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Compression compression;

    @Option(
            names = "--filter-kind",
            paramLabel = "KIND",
            defaultValue = "BLOCKED",
            description =
                    "Filter of the tables written: BLOCKED, STANDARD, PARTITIONED or RIBBON (default: ${DEFAULT-VALUE}).")
    FilterKind filterKind;

    @Option(
            names = "--range-filter-bits",
            paramLabel = "B",
            defaultValue = "0",
            description =
                    "Bits per key of the tables' range filters, 0 = none (Options.rangeFilterBitsPerKey) (default: ${DEFAULT-VALUE}).")
    double rangeFilterBits;

    /** Range filter settings --vary-options picks from (0 = none). */
    static final double[] RANGE_FILTER_BITS = {0, 10, 16};

    @Option(
            names = "--filter-budget",
            paramLabel = "BYTES",
            defaultValue = "0",
            description =
                    "Filter memory budget in bytes, 0 = none (Options.filterMemoryBudget) (default: ${DEFAULT-VALUE}).")
    long filterBudget;

    /**
     * Filter memory budgets --vary-options picks from (0 = none): a few KiB, below one table's filter at the default
     * key space (every filter through the cache, most loads evicting another), and one holding most of them. Under a
     * budget the tables are written with partitioned filters of 1 KiB partitions (engine/FORMAT.md "Partitioned
     * filter"), so even the smallest budget caches partitions; a round without one reopens them resident.
     */
    static final long[] FILTER_BUDGETS = {0, 4 << 10, 64 << 10};

    @Option(
            names = "--read-mode",
            paramLabel = "MODE",
            defaultValue = "MMAP",
            description =
                    "How tables are read: ${COMPLETION-CANDIDATES} (mapped, the default; pread; O_DIRECT) (default: ${DEFAULT-VALUE}).")
    ReadMode readMode;

    @Option(
            names = "--ttl",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description =
                    "Options.ttl in seconds, 0 = none; at least " + MIN_TTL_SECONDS + ": the expected state keeps no "
                            + "write times, so no value may expire during a run. A database made with a TTL keeps one (default: ${DEFAULT-VALUE}).")
    long ttlSeconds;

    @Option(
            names = "--periodic-compaction",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description = "Options.periodicCompaction in seconds, 0 = off (default: ${DEFAULT-VALUE}).")
    long periodicCompactionSeconds;

    /**
     * The shortest --ttl: the expected-state rule of a TTL run is that of a plain one (nothing expires within a run), so
     * what a TTL run checks is that every value's write-time suffix survives crashes, recovery, flushes, merge
     * collapsing and compactions (a lost or doubled suffix reads as a wrong value: StressValue checks length and bytes).
     */
    static final long MIN_TTL_SECONDS = 3600;

    /** Periodic compaction settings --vary-options picks from (0 = off; 1 s rewrites every table about once a second). */
    static final long[] PERIODIC_COMPACTION_SECONDS = {0, 1, 5};

    /** {@code o} with {@code ttlSeconds} (0 = none) and {@code periodicSeconds} (0 = off). */
    static Options withExpiry(Options o, long ttlSeconds, long periodicSeconds) {
        if (ttlSeconds != 0 && ttlSeconds < MIN_TTL_SECONDS) {
            throw new CliException(
                    ExitCodes.USAGE, "--ttl must be 0 or at least " + MIN_TTL_SECONDS + " s: " + ttlSeconds);
        }
        if (periodicSeconds < 0) {
            throw new CliException(ExitCodes.USAGE, "--periodic-compaction must be >= 0: " + periodicSeconds);
        }
        return o.ttl(ttlSeconds == 0 ? null : java.time.Duration.ofSeconds(ttlSeconds))
                .periodicCompaction(periodicSeconds == 0 ? null : java.time.Duration.ofSeconds(periodicSeconds));
    }

    /** Refuses (exit code 2) a thread count out of [1, 64], or fewer keys than threads. */
    void checkThreads(int threads) {
        if (threads < 1 || threads > 64) {
            throw new CliException(ExitCodes.USAGE, "--threads must be in [1, 64]: " + threads);
        }
        if (keys < threads) {
            throw new CliException(ExitCodes.USAGE, "--keys must be at least --threads");
        }
    }

    Path expectedFile(Path dir) {
        return expected != null
                ? expected
                : dir.toAbsolutePath().normalize().resolveSibling(dir.getFileName() + ".expected");
    }

    /** How a run writes and reads its tables; its {@code toString} ("compression LZ4, RIBBON filters, pread reads") names it in the output. */
    record Tables(
            Compression compression,
            FilterKind filterKind,
            ReadMode readMode,
            double rangeFilterBits,
            long filterBudget) {
        Tables(Compression compression, FilterKind filterKind, ReadMode readMode) {
            this(compression, filterKind, readMode, 0, 0);
        }

        Tables(Compression compression, FilterKind filterKind, ReadMode readMode, double rangeFilterBits) {
            this(compression, filterKind, readMode, rangeFilterBits, 0);
        }

        Tables {
            if (filterKind == FilterKind.COUNTING) {
                throw new CliException(
                        ExitCodes.USAGE,
                        "--filter-kind COUNTING is for mutable sets, not tables: use BLOCKED, STANDARD, PARTITIONED or RIBBON");
            }
        }

        @Override
        public String toString() {
            return "compression " + compression + ", " + filterKind + " filters, "
                    + (rangeFilterBits > 0 ? "range filters at " + rangeFilterBits + " bits/key, " : "")
                    + (filterBudget > 0 ? "filter budget " + filterBudget + " bytes, " : "") + readMode.label()
                    + " reads";
        }
    }

    /** The tables' settings these options give. */
    Tables tables() {
        if (filterBudget < 0) {
            throw new CliException(ExitCodes.USAGE, "--filter-budget must be >= 0: " + filterBudget);
        }
        return new Tables(compression, filterKind, readMode, rangeFilterBits, filterBudget);
    }

    /** Small memtables and tables so a run of seconds flushes and compacts; tables written and read as {@code tables} says. */
    Options toOptions(Tables tables) {
        return withExpiry(Options.defaults(), ttlSeconds, periodicCompactionSeconds)
                .syncMode(sync)
                .writeBufferSize(256 << 10)
                .targetFileSize(256 << 10)
                .maxBytesForLevelBase(1 << 20)
                .blockSize(1024)
                .compression(tables.compression())
                .filterKind(tables.filterKind())
                .rangeFilterBitsPerKey(tables.rangeFilterBits())
                .filterMemoryBudget(tables.filterBudget())
                .filterPartitionSize(1024)
                .useMmapReads(tables.readMode() == ReadMode.MMAP)
                .useDirectReads(tables.readMode() == ReadMode.DIRECT)
                .mergeOperator(
                        StressValue.MERGE_OPERATOR); // the runs write merges: every open of their database needs it
    }
}
