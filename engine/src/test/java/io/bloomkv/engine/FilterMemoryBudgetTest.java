package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.table.FilterMemory;
import io.bloomkv.engine.internal.table.Footer;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Options#filterMemoryBudget(long)} and {@link SharedFilterBudget}: with a budget a tenth of the unbounded
 * filters' size, pinned plus cached filter bytes stay within it after every batch of gets (checked through
 * {@code bloomkv.filter-memory} and {@link Stats#filterMemoryBytes()}), every get still answers right and the filters
 * still rule out absent keys; a cached filter that fails its checksum fails open; the off-heap memory is freed at
 * close.
 */
class FilterMemoryBudgetTest {
    private static final int N = 20_000;

    @TempDir
    Path dir;

    /** Uncompressed tables (the default LZ4 would shrink the repetitive values into fewer tables than the test needs). */
    private static Options base() {
        return Options.defaults()
                .compression(Compression.NONE)
                .writeBufferSize(128 << 10)
                .targetFileSize(128 << 10)
                .maxBytesForLevelBase(512 << 10)
                .blockCacheSize(0)
                .useMmapReads(false);
    }

    /** Loads N keys in random order (several levels), then a few more flushed to level 0; returns the unbounded filter bytes. */
    private long load(Path d, long seed) {
        return load(d, seed, base());
    }

    private long load(Path d, long seed, Options options) {
        Random rnd = new Random(seed);
        try (Db db = Db.open(d, options)) {
            int[] order = new int[N];
            for (int i = 0; i < N; i++) {
                order[i] = i;
            }
            for (int i = N - 1; i > 0; i--) {
                int j = rnd.nextInt(i + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            for (int i : order) {
                db.put(TestKeys.key(2L * i), TestKeys.bytes("value-" + i));
            }
            db.flush();
            db.compactRange(null, null);
            for (int i = 0; i < 2000; i++) {
                db.put(TestKeys.key(2L * i), TestKeys.bytes("value-" + i));
            }
            db.flush();
            return Long.parseLong(db.property("bloomkv.filter-memory").orElseThrow());
        }
    }

    private static long filterMemory(Db db) {
        long p = Long.parseLong(db.property("bloomkv.filter-memory").orElseThrow());
        assertThat(p).isEqualTo(db.stats().filterMemoryBytes());
        return p;
    }

    @Test
    void aTenthOfTheFullSizeIsNeverExceededAndGetsStayRight() {
        long seed = TestSeeds.seed("FilterMemoryBudgetTest.tenth");
        long full = load(dir, seed);
        assertThat(full).isGreaterThan(0);
        long budget = full / 10;
        long liveBefore = FilterMemory.liveBytes();
        try (Db db = Db.open(dir, base().filterMemoryBudget(budget))) {
            assertThat(db.tables().size()).as("several tables").isGreaterThan(4);
            Random rnd = new Random(seed);
            for (int round = 0; round < 20; round++) {
                for (int j = 0; j < 500; j++) {
                    int i = rnd.nextInt(N);
                    assertThat(TestKeys.str(db.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
                    assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
                }
                assertThat(filterMemory(db))
                        .as("filter memory after round " + round)
                        .isLessThanOrEqualTo(budget);
            }
            Stats s = db.stats();
            // the pinned and cached filters still rule out absent keys; the tables whose filter exceeds the cache share
            // are read without one
            assertThat(s.filterUseful())
                    .as("the budgeted filters still rule out absent keys")
                    .isGreaterThan(500);
            assertThat(s.filterUseful() + s.tablesReadWithoutFilter()).isGreaterThan(10_000);
            // level 0 is pinned first
            List<TableInfo> tables = db.tables();
            assertThat(tables.get(0).level()).isZero();
            assertThat(filterMemory(db)).isLessThanOrEqualTo(budget);
        }
        assertThat(FilterMemory.liveBytes())
                .as("budgeted filter memory freed at close")
                .isEqualTo(liveBefore);
    }

    /**
     * {@link Db#tables()} under a budget reports each table's filter exactly as without one (a table read without its
     * filter, one too large for the budget's cache, as having none), and looking changes nothing the budget holds: no
     * filter loaded into its cache, none evicted, the gets' later loads the same. A filter neither pinned nor cached is
     * read for the description alone and freed at once.
     */
    @Test
    void listingTheTablesLeavesTheBudgetAsItWas() {
        long seed = TestSeeds.seed("FilterMemoryBudgetTest.tables");
        Options small = base().targetFileSize(16 << 10); // many tables with small filters: some fit the cache
        long full = load(dir, seed, small);
        Map<Long, TableInfo> unbudgeted = new HashMap<>();
        try (Db db = Db.open(dir, small)) {
            db.tables().forEach(t -> unbudgeted.put(t.fileNumber(), t));
        }
        long liveBefore = FilterMemory.liveBytes();
        SharedFilterBudget budget = new SharedFilterBudget(full / 12);
        try (Db db = Db.open(dir, small.filterMemoryBudget(budget))) {
            Random rnd = new Random(seed);
            for (int j = 0; j < 2000; j++) { // some filters cached, most not
                assertThat(db.get(TestKeys.key(2L * rnd.nextInt(N) + 1))).isNull();
            }
            long loads = budget.loads();
            long cached = budget.cachedBytes();
            long pinned = budget.pinnedBytes();
            long live = FilterMemory.liveBytes();
            assertThat(cached).as("the gets left filters in the cache").isPositive();
            for (int pass = 0; pass < 2; pass++) {
                List<TableInfo> tables = db.tables();
                assertThat(tables).hasSize(unbudgeted.size());
                int compared = 0;
                int withoutFilter = 0;
                int notInMemory = 0;
                for (TableInfo t : tables) {
                    TableInfo u = unbudgeted.get(t.fileNumber());
                    assertThat(u.filterKind()).isNotNull();
                    if (t.filterKind() == null) { // a whole filter larger than the budget's cache: read without it
                        assertThat(t.filterMemoryBytes()).isZero();
                        assertThat(t.filterProblem()).isNull();
                        withoutFilter++;
                        continue;
                    }
                    assertThat(t.filterHashCount()).as("k of " + t.fileNumber()).isEqualTo(u.filterHashCount());
                    assertThat(t.filterKind()).isEqualTo(u.filterKind());
                    assertThat(t.filterBitSize()).isEqualTo(u.filterBitSize());
                    assertThat(t.filterKeyCount()).isEqualTo(u.filterKeyCount()).isPositive();
                    assertThat(t.filterExpectedFpp()).isEqualTo(u.filterExpectedFpp());
                    assertThat(t.filterFractionOfBitsSet())
                            .isEqualTo(u.filterFractionOfBitsSet())
                            .isBetween(0.01, 0.99);
                    if (t.filterMemoryBytes() == 0) {
                        notInMemory++; // described from a read of its own, not through the cache
                    }
                    compared++;
                }
                assertThat(withoutFilter).isEqualTo(db.stats().tablesWithoutFilter());
                // all three kinds were listed: in memory (pinned or cached), read for the listing, read without
                assertThat(compared - notInMemory).as("described from memory").isPositive();
                assertThat(notInMemory).as("described from a read of their own").isGreaterThan(4);
                assertThat(withoutFilter).as("too large for the cache").isPositive();
                assertThat(budget.loads())
                        .as("loads through the budget's cache, pass " + pass)
                        .isEqualTo(loads);
                assertThat(budget.cachedBytes()).isEqualTo(cached);
                assertThat(budget.pinnedBytes()).isEqualTo(pinned);
                assertThat(FilterMemory.liveBytes())
                        .as("no filter memory left by the listing")
                        .isEqualTo(live);
            }
        }
        assertThat(FilterMemory.liveBytes()).isEqualTo(liveBefore);
    }

    @Test
    void withoutABudgetEveryFilterIsResidentAsBefore() {
        long full = load(dir, TestSeeds.seed("FilterMemoryBudgetTest.none"));
        try (Db db = Db.open(dir, base())) {
            assertThat(filterMemory(db)).isEqualTo(full);
            for (int i = 0; i < 1000; i++) {
                assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
            }
            assertThat(filterMemory(db)).isEqualTo(full);
        }
    }

    @Test
    void aSharedBudgetBoundsTwoDatabases() {
        long seed = TestSeeds.seed("FilterMemoryBudgetTest.shared");
        long full = load(dir.resolve("a"), seed) + load(dir.resolve("b"), seed + 1);
        SharedFilterBudget shared = new SharedFilterBudget(full / 10);
        try (Db a = Db.open(dir.resolve("a"), base().filterMemoryBudget(shared));
                Db b = Db.open(dir.resolve("b"), base().filterMemoryBudget(shared))) {
            Random rnd = new Random(seed);
            for (int j = 0; j < 4000; j++) {
                int i = rnd.nextInt(N);
                Db db = (j & 1) == 0 ? a : b;
                assertThat(TestKeys.str(db.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
                assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
                if (j % 500 == 0) {
                    assertThat(filterMemory(a) + filterMemory(b)).isLessThanOrEqualTo(shared.capacityBytes());
                    assertThat(shared.pinnedBytes() + shared.cachedBytes()).isLessThanOrEqualTo(shared.capacityBytes());
                }
            }
            assertThat(shared.pinnedBytes()).isGreaterThan(0);
            assertThat(shared.loads()).isGreaterThan(0);
        }
        assertThat(shared.pinnedBytes()).isZero();
        assertThat(shared.cachedBytes()).isZero();
        assertThatThrownBy(() -> new SharedFilterBudget(0)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> Options.defaults().filterMemoryBudget(-1))
                .isInstanceOf(InvalidArgumentException.class);
    }

    /**
     * {@code bloomkv.num-tables-without-filter} ({@link Stats#tablesWithoutFilter()}, the MBean's
     * {@code TablesWithoutFilter}) follows the budget: 0 without one, 1 under a budget too small to load the table's
     * filter (also after a second table, flushed under it with its filter pinned), 0 again when reopened with room for
     * the filter. The info log warns once in the open that finds such tables, however often the count is read and the
     * Versions change, and not in the others.
     */
    @Test
    void tablesReadWithoutAFilterAreCountedAndWarnedOnceAnOpen() throws Exception {
        try (Db db = oneTable()) {
            assertThat(db.property("bloomkv.num-tables-without-filter")).hasValue("0");
        }
        long filter;
        try (var files = Files.list(dir)) {
            Path sst =
                    files.filter(p -> p.toString().endsWith(".sst")).findFirst().orElseThrow();
            try (TableReader r = TableReader.open(FileSystem.disk(), sst, 0, null, null)) {
                filter = r.filterBlockSize(); // its charge in a budget
            }
        }
        DbLogTest.Recording tiny = new DbLogTest.Recording();
        try (Db db = Db.open(dir, base().filterMemoryBudget(filter / 2).listeners(new DbLog(tiny)))) {
            assertThat(db.property("bloomkv.num-tables-without-filter")).hasValue("1");
            assertThat(db.stats().tablesWithoutFilter()).isEqualTo(1);
            ObjectName name = new ObjectName("io.bloomkv:type=Db,name=" + ObjectName.quote(dir.toString()));
            assertThat((Integer) ManagementFactory.getPlatformMBeanServer().getAttribute(name, "TablesWithoutFilter"))
                    .isEqualTo(1);
            for (int i = 0; i < 100; i++) {
                db.put(TestKeys.key(2L * i + 1), TestKeys.bytes("odd-" + i));
            }
            db.flush(); // a new Version; the new table's small filter is pinned
            assertThat(db.stats().tableCount()).isEqualTo(2);
            assertThat(db.property("bloomkv.num-tables-without-filter")).hasValue("1");
            assertThat(TestKeys.str(db.get(TestKeys.key(2)))).isEqualTo("value-1");
            assertThat(TestKeys.str(db.get(TestKeys.key(3)))).isEqualTo("odd-1");
        }
        assertThat(warnings(tiny)).hasSize(1);
        assertThat(warnings(tiny).get(0)).contains("1 of 1 tables are read without a filter");
        DbLogTest.Recording roomy = new DbLogTest.Recording();
        try (Db db = Db.open(dir, base().filterMemoryBudget(filter * 4).listeners(new DbLog(roomy)))) {
            assertThat(db.property("bloomkv.num-tables-without-filter")).hasValue("0");
        }
        assertThat(warnings(roomy)).isEmpty();
    }

    /** Opens the database without a budget and writes 5000 even keys into one table. */
    private Db oneTable() {
        Db db = Db.open(dir, base().writeBufferSize(4 << 20));
        for (int i = 0; i < 5000; i++) {
            db.put(TestKeys.key(2L * i), TestKeys.bytes("value-" + i));
        }
        db.flush();
        return db;
    }

    /** The info log's warnings of tables read without a filter. */
    private static List<String> warnings(DbLogTest.Recording log) {
        return log.lines.stream()
                .filter(l -> l.startsWith("WARN ") && l.contains("without a filter"))
                .toList();
    }

    @Test
    void aCachedFilterFailingItsChecksumIsReportedAndFailsOpen() throws IOException {
        oneTable().close();
        Path sst;
        try (var s = Files.list(dir)) {
            sst = s.filter(p -> p.toString().endsWith(".sst")).findFirst().orElseThrow();
        }
        Footer f;
        try (TableReader r = TableReader.open(FileSystem.disk(), sst, 0, null, null)) {
            f = r.footer();
        }
        byte[] b = Files.readAllBytes(sst);
        b[(int) (f.filter().offset() + f.filter().size() / 2)] ^= 0x5A;
        Files.write(sst, b);
        // 1.5 filters: the pinned half cannot take it, the cache can: the filter is loaded through the cache.
        try (Db db = Db.open(dir, base().filterMemoryBudget(f.filter().size() * 3 / 2))) {
            for (int i = 0; i < 5000; i++) {
                assertThat(TestKeys.str(db.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
                assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
            }
            assertThat(db.stats().tablesReadWithoutFilter()).isGreaterThan(0);
            assertThat(db.tables().get(0).filterProblem()).contains("checksum");
            assertThat(filterMemory(db)).isZero();
        }
        // A budget smaller than the filter: it is never loaded (a whole-filter read per get would cost more than the
        // data block it saves); the table is read without it and every answer stays right.
        try (Db db = Db.open(dir, base().filterMemoryBudget(f.filter().size() / 2))) {
            for (int i = 0; i < 500; i++) {
                assertThat(TestKeys.str(db.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
                assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
            }
            assertThat(db.stats().tablesReadWithoutFilter()).isEqualTo(1000);
            assertThat(filterMemory(db)).isZero();
        }
    }
}
