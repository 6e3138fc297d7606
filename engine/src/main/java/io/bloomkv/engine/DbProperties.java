package io.bloomkv.engine;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The properties {@link Db#property} answers (RocksDB's {@code DB::GetProperty} and its {@code rocksdb.*} names, as
 * {@code bloomkv.*}): each a string, computed from one {@link Stats} taken for the call. Unknown names answer empty,
 * as RocksDB's GetProperty answers false. The list is {@link #NAMES} and docs/operations.md, "Properties".
 */
final class DbProperties {
    static final String PREFIX = "bloomkv.";
    static final String NUM_FILES_AT_LEVEL = PREFIX + "num-files-at-level";
    static final String BYTES_AT_LEVEL = PREFIX + "bytes-at-level";

    /** Every name answered; {@code num-files-at-level<N>} and {@code bytes-at-level<N>} take a level number. */
    static final List<String> NAMES = List.of(
            PREFIX + "stats",
            PREFIX + "levelstats",
            PREFIX + "estimate-num-keys",
            NUM_FILES_AT_LEVEL + "<N>",
            BYTES_AT_LEVEL + "<N>",
            PREFIX + "num-levels",
            PREFIX + "total-sst-files-size",
            PREFIX + "estimate-live-data-size",
            PREFIX + "filter-memory",
            PREFIX + "num-tables-without-filter",
            PREFIX + "cur-size-all-mem-tables",
            PREFIX + "num-entries-active-mem-table",
            PREFIX + "num-entries-imm-mem-tables",
            PREFIX + "num-immutable-mem-table",
            PREFIX + "num-mem-table-rewrites",
            PREFIX + "block-cache-usage",
            PREFIX + "block-cache-capacity",
            PREFIX + "num-snapshots",
            PREFIX + "num-live-versions",
            PREFIX + "num-running-iterators",
            PREFIX + "last-sequence",
            PREFIX + "background-errors",
            PREFIX + "background-error",
            PREFIX + "background-work-paused",
            PREFIX + "compaction-pending",
            PREFIX + "write-amplification",
            PREFIX + "filter-false-positive-rate");

    private DbProperties() {}

    /**
     * The value of property {@code name} given {@code s}, the block cache's used and capacity bytes (-1 without a
     * cache), the background error (or null), whether background work is paused ({@link Db#pauseBackgroundWork}
     * in effect) and whether a compaction is due.
     */
    static Optional<String> get(
            String name,
            Stats s,
            long cacheUsed,
            long cacheCapacity,
            BloomKvException error,
            boolean backgroundWorkPaused,
            boolean compactionPending) {
        if (!name.startsWith(PREFIX)) {
            return Optional.empty();
        }
        if (name.startsWith(NUM_FILES_AT_LEVEL)) {
            int level = level(name.substring(NUM_FILES_AT_LEVEL.length()), s.numLevels());
            return level < 0 ? Optional.empty() : Optional.of(Integer.toString(s.levelTables(level)));
        }
        if (name.startsWith(BYTES_AT_LEVEL)) {
            int level = level(name.substring(BYTES_AT_LEVEL.length()), s.numLevels());
            return level < 0 ? Optional.empty() : Optional.of(Long.toString(s.levelBytes(level)));
        }
        String v = switch (name.substring(PREFIX.length())) {
            case "stats" -> s.toString();
            case "levelstats" -> levelStats(s);
            case "estimate-num-keys" -> Long.toString(estimateNumKeys(s));
            case "num-levels" -> Integer.toString(s.numLevels());
            case "total-sst-files-size", "estimate-live-data-size" -> Long.toString(s.tableBytes());
            case "filter-memory" -> Long.toString(s.filterMemoryBytes());
            case "num-tables-without-filter" -> Integer.toString(s.tablesWithoutFilter());
            case "cur-size-all-mem-tables" -> Long.toString(s.memtableBytes());
            case "num-entries-active-mem-table" -> Long.toString(s.activeMemtableEntries);
            case "num-entries-imm-mem-tables" -> Long.toString(s.memtableEntries() - s.activeMemtableEntries);
            case "num-immutable-mem-table" -> Integer.toString(s.immutableMemtables());
            case "num-mem-table-rewrites" -> Long.toString(s.memtableRewrites());
            case "block-cache-usage" -> cacheUsed < 0 ? null : Long.toString(cacheUsed);
            case "block-cache-capacity" -> cacheCapacity < 0 ? null : Long.toString(cacheCapacity);
            case "num-snapshots" -> Integer.toString(s.openSnapshots());
            case "num-live-versions" -> Integer.toString(s.liveVersions());
            case "num-running-iterators" -> Integer.toString(s.openIterators());
            case "last-sequence" -> Long.toString(s.lastSequence());
            case "background-errors" -> error == null ? "0" : "1";
            case "background-error" -> error == null ? "" : error.toString();
            case "background-work-paused" -> backgroundWorkPaused ? "1" : "0";
            case "compaction-pending" -> compactionPending ? "1" : "0";
            case "write-amplification" -> String.format(Locale.ROOT, "%.3f", s.writeAmplification());
            case "filter-false-positive-rate" -> String.format(Locale.ROOT, "%.6f", s.measuredFalsePositiveRate());
            default -> null;
        };
        return Optional.ofNullable(v);
    }

    /**
     * RocksDB's estimate ({@code InternalStats::HandleEstimateNumKeys}): the memtables' entries plus the tables'
     * estimate (their entries that are not deletes less their deletes, at least 0), less twice the memtables' point
     * deletes (a delete cancels itself and, presumably, a put it hides, in the memtables or in the tables), at least 0.
     * Overwritten versions not yet compacted away still count.
     */
    static long estimateNumKeys(Stats s) {
        long live = 0;
        long deletions = 0;
        for (int level = 0; level < s.numLevels(); level++) {
            live += s.levelEntries(level) - s.levelDeletions[level];
            deletions += s.levelDeletions[level];
        }
        long keys = s.memtableEntries() + Math.max(0, live - deletions);
        return Math.max(0, keys - 2 * s.memtableDeletes);
    }

    /** RocksDB's {@code rocksdb.levelstats}: a header, then one line per level. */
    static String levelStats(Stats s) {
        StringBuilder sb = new StringBuilder();
        sb.append("Level Files Size(MB) Entries FilterBytes BitsPerKey\n");
        sb.append("----------------------------------------------------\n");
        for (int level = 0; level < s.numLevels(); level++) {
            sb.append(String.format(
                    Locale.ROOT,
                    "%5d %5d %8.2f %7d %11d %10.2f%n",
                    level,
                    s.levelTables(level),
                    s.levelBytes(level) / 1048576.0,
                    s.levelEntries(level),
                    s.levelFilterMemory(level),
                    s.levelBitsPerKey(level)));
        }
        return sb.toString();
    }

    /** The level a suffix names ("3"), or -1 when it is not a level of the database. */
    private static int level(String suffix, int numLevels) {
        if (suffix.isEmpty() || suffix.length() > 3) {
            return -1;
        }
        for (int i = 0; i < suffix.length(); i++) {
            if (suffix.charAt(i) < '0' || suffix.charAt(i) > '9') {
                return -1;
            }
        }
        int level = Integer.parseInt(suffix);
        return level < numLevels ? level : -1;
    }
}
