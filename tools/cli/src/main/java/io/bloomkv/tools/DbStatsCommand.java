package io.bloomkv.tools;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.TableInfo;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv db stats DB_DIR}: levels, tables, sizes and filter memory, then a read probe: N
 * keys that are absent but fall inside the tables' key ranges (a sampled stored key followed by a
 * 0x00 byte and 8 random bytes, so it sorts right after a stored key), asked with {@code get}. The
 * probe reports the disk lookups the filters avoided, and the measured false-positive rate next to
 * the theoretical one: the mean, over every filter check the probe makes, of the checked table's
 * own formula ({@code Filter.expectedFpp}). The database is opened read-only (its directory is left
 * exactly as it was) and without a block cache, so every filter positive is one real data-block read.
 */
@Command(
        name = "stats",
        mixinStandardHelpOptions = true,
        description = {
            "Print levels, tables, sizes and filter memory, and probe absent keys.",
            "The read probe looks up N absent keys inside the tables' key ranges and",
            "prints the disk lookups the filters avoided and the measured vs theoretical",
            "false-positive rate."
        })
final class DbStatsCommand implements Callable<Integer> {
    /** Bytes appended to a sampled key to make a probe key: 0x00 then 8 random bytes. */
    static final int PROBE_SUFFIX = 9;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory.")
    Path dir;

    @Option(
            names = "--probes",
            paramLabel = "N",
            defaultValue = "10000",
            description = "Absent keys to probe; 0 skips the probe (default: ${DEFAULT-VALUE}).")
    int probes;

    @Option(
            names = "--seed",
            paramLabel = "SEED",
            description = "Seed of the probe keys (default: a fresh one, printed).")
    Long seed;

    @Option(names = "--no-tables", negatable = false, description = "Leave out the per-table listing.")
    boolean noTables;

    @Mixin
    KeyFormat format;

    @Mixin
    OpenOptions open;

    /** A live table with the figures of its filter. */
    private record TableFacts(TableInfo info) {
        String filter() {
            return info.filterProblem() != null
                    ? "UNUSABLE"
                    : info.filterKind() != null ? info.filterKind().name() : "none";
        }

        long keys() {
            return info.filterKind() == null ? 0 : info.filterKeyCount();
        }

        boolean covers(byte[] userKey) {
            return Arrays.compareUnsigned(userKey, info.smallestUserKey()) >= 0
                    && Arrays.compareUnsigned(userKey, info.largestUserKey()) <= 0;
        }
    }

    @Override
    public Integer call() {
        if (probes < 0) {
            throw new ParameterException(spec.commandLine(), "--probes must not be negative: " + probes);
        }
        PrintWriter out = spec.commandLine().getOut();
        Options options = open.apply(DbOpener.readOptions().blockCacheSize(0));
        try (Db db = DbOpener.open(dir, options, false)) {
            Stats s = db.stats();
            List<TableFacts> tables = db.tables().stream().map(TableFacts::new).toList();
            out.println("database: " + db.directory());
            printLevels(out, s);
            if (!noTables) {
                printTables(out, tables);
            }
            printFilterProblems(out, tables);
            out.println("memtable: " + Fmt.bytes(s.memtableBytes()) + " (" + s.immutableMemtables()
                    + " immutable); last sequence " + s.lastSequence());
            if (probes > 0) {
                probe(out, db, tables);
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    private static void printLevels(PrintWriter out, Stats s) {
        TextTable levels = new TextTable("level", "tables", "entries", "size", "filter memory", "filter bits/key");
        for (int level = 0; level < s.numLevels(); level++) {
            if (s.levelTables(level) == 0) {
                continue;
            }
            levels.row(
                    "L" + level,
                    s.levelTables(level),
                    Fmt.count(s.levelEntries(level)),
                    Fmt.bytes(s.levelBytes(level)),
                    Fmt.bytes(s.levelFilterMemory(level)),
                    Fmt.decimal(s.levelBitsPerKey(level), 2));
        }
        long entries = 0;
        for (int level = 0; level < s.numLevels(); level++) {
            entries += s.levelEntries(level);
        }
        levels.row(
                "total",
                s.tableCount(),
                Fmt.count(entries),
                Fmt.bytes(s.tableBytes()),
                Fmt.bytes(s.filterMemoryBytes()),
                Fmt.decimal(entries == 0 ? 0 : s.filterMemoryBytes() * 8.0 / entries, 2));
        out.println("levels (" + s.numLevels() + " configured; empty levels left out):");
        levels.print(out, "  ");
    }

    private void printTables(PrintWriter out, List<TableFacts> tables) {
        if (tables.isEmpty()) {
            out.println("tables: none (everything is still in the memtable/WAL)");
            return;
        }
        TextTable t = new TextTable(
                        "level",
                        "table",
                        "size",
                        "entries",
                        "filter",
                        "k",
                        "bits/key",
                        "bits set",
                        "expected FPR",
                        "smallest key",
                        "largest key")
                .leftAligned(4, 9, 10);
        for (TableFacts f : tables) {
            TableInfo i = f.info();
            boolean has = f.keys() > 0;
            t.row(
                    "L" + i.level(),
                    "#" + i.fileNumber(),
                    Fmt.bytes(i.fileSize()),
                    Fmt.count(i.entries()),
                    f.filter(),
                    has ? i.filterHashCount() : "-",
                    has ? Fmt.decimal((double) i.filterBitSize() / f.keys(), 2) : "-",
                    has ? Fmt.share(i.filterFractionOfBitsSet()) : "-",
                    has ? Fmt.rate(i.filterExpectedFpp()) : "-",
                    format.keys().format(i.smallestUserKey()),
                    format.keys().format(i.largestUserKey()));
        }
        out.println("tables (level 0 newest first):");
        t.print(out, "  ");
    }

    /**
     * The tables whose filter or range filter block could not be loaded, and why (nothing when there are none; printed
     * with --no-tables too). Reads fail open: such a table is read as if it had no such filter.
     */
    private static void printFilterProblems(PrintWriter out, List<TableFacts> tables) {
        List<String> lines = new ArrayList<>();
        for (TableFacts f : tables) {
            TableInfo i = f.info();
            String table = "  L" + i.level() + " #" + i.fileNumber() + " ";
            if (i.filterProblem() != null) {
                lines.add(table + "filter: " + i.filterProblem());
            }
            if (i.rangeFilterProblem() != null) {
                lines.add(table + "range filter: " + i.rangeFilterProblem());
            }
        }
        if (lines.isEmpty()) {
            return;
        }
        out.println("unusable filters (reads of these tables skip them, fail open):");
        lines.forEach(out::println);
    }

    private void probe(PrintWriter out, Db db, List<TableFacts> tables) {
        long s = seed != null ? seed : new SplittableRandom().nextLong();
        SplittableRandom rnd = new SplittableRandom(s);
        List<byte[]> sample = sampleKeys(db, probes, rnd.split());
        if (sample.isEmpty()) {
            out.println("read probe: skipped, the database holds no keys");
            return;
        }
        Stats before = db.stats();
        double expectedFalsePositives = 0;
        long expectedChecks = 0;
        long found = 0;
        byte[] suffix = new byte[PROBE_SUFFIX - 1];
        for (int i = 0; i < probes; i++) {
            byte[] base = sample.get(rnd.nextInt(sample.size()));
            rnd.nextBytes(suffix);
            byte[] key = Arrays.copyOf(base, base.length + PROBE_SUFFIX);
            System.arraycopy(suffix, 0, key, base.length + 1, suffix.length);
            for (TableFacts t : tables) {
                if (t.keys() > 0 && t.covers(key)) {
                    expectedChecks++;
                    expectedFalsePositives += t.info().filterExpectedFpp();
                }
            }
            if (db.get(key) != null) {
                found++;
            }
        }
        Stats after = db.stats();
        long checks = after.filterChecks() - before.filterChecks();
        long useful = after.filterUseful() - before.filterUseful();
        long positive = after.filterPositive() - before.filterPositive();
        long truePositive = after.filterTruePositive() - before.filterTruePositive();
        long falsePositive = positive - truePositive;
        long unfiltered = after.tablesReadWithoutFilter() - before.tablesReadWithoutFilter();
        long blockReads = after.blockReads() - before.blockReads();
        long blockBytes = after.blockReadBytes() - before.blockReadBytes();
        long negatives = useful + falsePositive;

        out.println("read probe: " + Fmt.count(probes) + " absent keys inside the tables' key ranges, seed " + s
                + " (no block cache)");
        TextTable t = TextTable.headless(3).leftAligned(2);
        t.row("filter checks", Fmt.count(checks), Fmt.decimal((double) checks / probes, 2) + " per get");
        t.row(
                "disk lookups avoided",
                Fmt.count(useful),
                Fmt.share(checks == 0 ? Double.NaN : (double) useful / checks) + " of checks");
        t.row(
                "filter positives",
                Fmt.count(positive),
                Fmt.count(truePositive) + " true positives (probe keys found: " + found + ")");
        if (unfiltered > 0) {
            t.row("tables without filter", Fmt.count(unfiltered), "read directly");
        }
        t.row(
                "blocks read",
                Fmt.count(blockReads),
                Fmt.decimal((double) blockReads / probes, 4) + " per get, " + Fmt.bytes(blockBytes));
        t.row(
                "measured FPR",
                Fmt.rate(negatives == 0 ? Double.NaN : (double) falsePositive / negatives),
                "95% interval " + Fmt.wilson95(falsePositive, negatives));
        t.row(
                "theoretical FPR",
                Fmt.rate(expectedChecks == 0 ? Double.NaN : expectedFalsePositives / expectedChecks),
                "mean of each checked table's expectedFpp over " + Fmt.count(expectedChecks) + " checks");
        t.print(out, "  ");
    }

    /** Up to {@code n} stored keys, a uniform sample (reservoir) over one scan of the database. */
    private static List<byte[]> sampleKeys(Db db, int n, SplittableRandom rnd) {
        List<byte[]> sample = new ArrayList<>(Math.min(n, 1 << 16));
        long seen = 0;
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                seen++;
                if (sample.size() < n) {
                    sample.add(it.key());
                } else {
                    long j = rnd.nextLong(seen);
                    if (j < n) {
                        sample.set((int) j, it.key());
                    }
                }
            }
        }
        return sample;
    }
}
