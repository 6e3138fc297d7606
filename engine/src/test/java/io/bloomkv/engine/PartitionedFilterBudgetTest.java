package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.FilterMemory;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A database written with a filter memory budget has partitioned filters (engine/FORMAT.md "Partitioned filter"):
 * reopened with a budget a tenth of the unbounded filters' size (top-level indexes counted), its filter memory never
 * exceeds the budget, every get answers right, and, unlike whole filters beyond the cache share, the deep tables are
 * still filtered (absent keys ruled out, almost no table read without a filter), whether the tables are read with
 * pread (partitions loaded through the budget's cache) or mapped (partitions probed in place); reopened without a
 * budget, every partition is resident, as whole filters are.
 */
class PartitionedFilterBudgetTest {
    private static final int N = 40_000;

    @TempDir
    Path dir;

    /**
     * 1 KiB partitions: at this test's scale (filters of tens of KiB, a budget of a few) they stand where the default
     * 4 KiB partitions stand against a production budget of megabytes, far smaller than the cache share.
     */
    private static Options base() {
        return Options.defaults()
                .compression(Compression.NONE)
                .writeBufferSize(256 << 10)
                .targetFileSize(256 << 10)
                .maxBytesForLevelBase(1 << 20)
                .blockCacheSize(0)
                .useMmapReads(false)
                .filterPartitionSize(1024);
    }

    private static long filterMemory(Db db) {
        long p = Long.parseLong(db.property("bloomkv.filter-memory").orElseThrow());
        assertThat(p).isEqualTo(db.stats().filterMemoryBytes());
        return p;
    }

    @Test
    void aTenthOfTheFullSizeStillFiltersTheDeepTables() {
        long seed = TestSeeds.seed("PartitionedFilterBudgetTest.tenth");
        Random rnd = new Random(seed);
        // written under a budget: partitioned filters
        try (Db db = Db.open(dir, base().filterMemoryBudget(64 << 10))) {
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
            for (int i = 0; i < 3000; i++) {
                db.put(TestKeys.key(2L * i), TestKeys.bytes("value-" + i));
            }
            db.flush();
        }
        long full;
        try (Db db = Db.open(dir, base())) {
            full = filterMemory(db);
            List<TableInfo> tables = db.tables();
            assertThat(tables.size()).as("several tables").isGreaterThan(4);
            long deepest = tables.stream()
                    .mapToLong(TableInfo::filterMemoryBytes)
                    .max()
                    .orElseThrow();
            assertThat(deepest)
                    .as("the largest filter exceeds the cache share of the budget below")
                    .isGreaterThan(full / 20);
            for (int i = 0; i < 2000; i++) {
                assertThat(db.get(TestKeys.key(2L * rnd.nextInt(N) + 1))).isNull();
            }
            assertThat(filterMemory(db))
                    .as("resident partitions, as whole filters")
                    .isEqualTo(full);
        }
        long budget = full / 10;
        // pread: partitions copied into the budget's cache; mapped (the default): probed in place in the mapping
        for (boolean mmap : new boolean[] {false, true}) {
            long liveBefore = FilterMemory.liveBytes();
            int gets = 0;
            try (Db db = Db.open(dir, base().useMmapReads(mmap).filterMemoryBudget(budget))) {
                for (int round = 0; round < 10; round++) {
                    for (int j = 0; j < 500; j++) {
                        int i = rnd.nextInt(N);
                        assertThat(TestKeys.str(db.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
                        assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
                        gets += 2;
                    }
                    assertThat(filterMemory(db))
                            .as("filter memory after round " + round + (mmap ? ", mapped" : ", pread"))
                            .isLessThanOrEqualTo(budget);
                }
                Stats s = db.stats();
                // each absent key asks one table (two below key 6000): ~1% false positives at 10 bits per key
                assertThat(s.filterUseful())
                        .as("absent keys ruled out" + (mmap ? ", mapped" : ", pread"))
                        .isGreaterThan((long) (0.95 * gets / 2));
                assertThat(s.tablesReadWithoutFilter())
                        .as("no table read unfiltered" + (mmap ? ", mapped" : ", pread"))
                        .isZero();
                assertThat(db.tables().get(0).level()).isZero();
                assertThat(filterMemory(db)).isLessThanOrEqualTo(budget);
            }
            assertThat(FilterMemory.liveBytes())
                    .as("budgeted filter memory freed at close")
                    .isEqualTo(liveBefore);
        }
    }

    private static void putRange(Db db, int from, int to) {
        for (int i = from; i < to; i++) {
            db.put(TestKeys.key(2L * i), TestKeys.bytes("value-" + i));
        }
    }

    /**
     * Gets probe a pinned filter copy without a reference of their own; every live Version naming the table holds it
     * instead. A level-0 table that loses its pin to a newer one (a flush) while an iterator still reads through the
     * older Version keeps its copy, charged and allocated, until that iterator closes; then it is freed and the charge
     * returned.
     */
    @Test
    void anUnpinnedCopyLivesUntilNoVersionCanReadIt() {
        // one table per flush: a write buffer larger than 5,000 keys; read with pread (base), where pins take at most
        // half the budget and a retired copy fits beside them (mapped, pins may take all of it, and a table pinned in
        // place of a retired copy waits for the copy to be freed)
        java.util.function.Supplier<Options> opts =
                () -> base().autoCompaction(false).writeBufferSize(4 << 20);
        Options write = opts.get().filterMemoryBudget(Long.MAX_VALUE / 4);
        try (Db db = Db.open(dir, write)) {
            putRange(db, 0, 5000);
            db.flush();
            putRange(db, 5000, 10_000);
            db.flush();
        }
        long m;
        try (Db db = Db.open(dir, opts.get().filterMemoryBudget(new SharedFilterBudget(1L << 40)))) {
            m = db.tables().stream()
                    .mapToLong(TableInfo::filterMemoryBytes)
                    .max()
                    .orElseThrow();
        }
        long baseline = FilterMemory.liveBytes();
        // the pin allowance (half) holds one table's filter and every table's top-level index, not two filters
        SharedFilterBudget budget = new SharedFilterBudget(3 * m);
        try (Db db = Db.open(dir, opts.get().filterMemoryBudget(budget))) {
            List<TableInfo> before = db.tables();
            assertThat(before).hasSize(2);
            assertThat(before.stream().filter(t -> t.filterMemoryBytes() > m / 2))
                    .as("one level-0 filter pinned")
                    .hasSize(1);
            long pinnedBefore = FilterMemory.liveBytes() - baseline;
            assertThat(pinnedBefore).isPositive();
            long oldPinned = before.stream()
                    .filter(t -> t.filterMemoryBytes() > m / 2)
                    .findFirst()
                    .orElseThrow()
                    .fileNumber();
            try (DbIterator it = db.iterator()) {
                it.seekToFirst(); // reads through the Version where the older table is pinned
                putRange(db, 10_000, 15_000);
                db.flush();
                List<TableInfo> after = db.tables();
                TableInfo newest = after.stream()
                        .max(java.util.Comparator.comparingLong(TableInfo::fileNumber))
                        .orElseThrow();
                assertThat(newest.filterMemoryBytes())
                        .as("the new table took the pin")
                        .isGreaterThan(m / 2);
                assertThat(after.stream().filter(t -> t.filterMemoryBytes() > m / 2))
                        .as("two tables charged a copy: the newest, and the older one whose copy the iterator's"
                                + " Version still holds")
                        .hasSize(2);
                long charged =
                        after.stream().mapToLong(TableInfo::filterMemoryBytes).sum();
                assertThat(budget.pinnedBytes() + budget.cachedBytes())
                        .as("the budget charged what the tables report")
                        .isEqualTo(charged);
                assertThat(FilterMemory.liveBytes() - baseline - budget.cachedBytes())
                        .as("and the unpinned copy still allocated")
                        .isGreaterThan(pinnedBefore);
                // the new table's keys only (the tables' key ranges are disjoint): no partition of the others is
                // cached, so their charges stay their top-level indexes (and the retired copy)
                for (int i = 10_000; i < 15_000; i += 3) {
                    assertThat(TestKeys.str(db.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
                    assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
                }
                assertThat(it.valid()).isTrue();
            }
            List<TableInfo> afterClose = db.tables();
            assertThat(afterClose.stream()
                            .filter(t -> t.fileNumber() == oldPinned)
                            .findFirst()
                            .orElseThrow()
                            .filterMemoryBytes())
                    .as("the older table's copy freed with the last Version holding it")
                    .isLessThan(m / 2);
            long charged =
                    afterClose.stream().mapToLong(TableInfo::filterMemoryBytes).sum();
            assertThat(budget.pinnedBytes() + budget.cachedBytes())
                    .as("the tables' charges: pins, indexes, cached partitions")
                    .isEqualTo(charged);
            assertThat(FilterMemory.liveBytes() - baseline - budget.cachedBytes())
                    .as("one pinned copy left")
                    .isLessThan(pinnedBefore + pinnedBefore / 2);
        }
        assertThat(FilterMemory.liveBytes()).isEqualTo(baseline);
        assertThat(budget.pinnedBytes()).isZero();
    }

    /**
     * Pins move with every flush and compaction while two threads read: no present key is ever missed, no absent key
     * is found, and every pinned copy is freed at close (a copy freed while a get still read it would show as wrong
     * answers or a crash).
     */
    @Test
    void pinsMovingUnderConcurrentGetsNeverLoseAKey() throws Exception {
        long seed = TestSeeds.seed("PartitionedFilterBudgetTest.churn");
        for (boolean mmap : new boolean[] {false, true}) {
            java.nio.file.Path d = dir.resolve(mmap ? "mmap" : "pread");
            long baseline = FilterMemory.liveBytes();
            try (Db db = Db.open(d, base().useMmapReads(mmap).filterMemoryBudget(24 << 10))) {
                putRange(db, 0, 10_000);
                db.flush();
                java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
                List<Throwable> errors = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
                java.util.concurrent.atomic.AtomicLong gets = new java.util.concurrent.atomic.AtomicLong();
                List<Thread> readers = new java.util.ArrayList<>();
                for (int t = 0; t < 2; t++) {
                    Random rnd = new Random(seed + t);
                    Thread th = new Thread(() -> {
                        try {
                            while (!stop.get()) {
                                int i = rnd.nextInt(10_000);
                                byte[] v = db.get(TestKeys.key(2L * i));
                                if (v == null || !TestKeys.str(v).equals("value-" + i)) {
                                    throw new AssertionError(
                                            "key " + i + " read " + (v == null ? null : TestKeys.str(v)));
                                }
                                if (db.get(TestKeys.key(2L * i + 1)) != null) {
                                    throw new AssertionError("absent key " + (2L * i + 1) + " found");
                                }
                                gets.incrementAndGet();
                            }
                        } catch (Throwable e) {
                            errors.add(e);
                        }
                    });
                    readers.add(th);
                    th.start();
                }
                Random rnd = new Random(seed);
                for (int round = 0; round < 25; round++) {
                    int from = 10_000 + round * 800;
                    putRange(db, from, from + 800);
                    for (int j = 0; j < 200; j++) { // overwrites of loaded keys, same values
                        int i = rnd.nextInt(10_000);
                        db.put(TestKeys.key(2L * i), TestKeys.bytes("value-" + i));
                    }
                    db.flush();
                }
                db.waitForBackgroundWork();
                stop.set(true);
                for (Thread th : readers) {
                    th.join();
                }
                assertThat(errors)
                        .as("seed " + seed + (mmap ? ", mapped" : ", pread"))
                        .isEmpty();
                assertThat(gets.get()).isPositive();
                assertThat(filterMemory(db)).isLessThanOrEqualTo(24 << 10);
            }
            assertThat(FilterMemory.liveBytes())
                    .as("every pinned copy freed at close")
                    .isEqualTo(baseline);
        }
    }

    /**
     * A database reading through mappings may pin filters up to the whole budget (its unpinned partitions are probed in
     * place and never use the cache); one reading with pread keeps half of it for the cache.
     */
    @Test
    void mappedTablesMayPinTheWholeBudget() {
        try (Db db = Db.open(dir, base().filterMemoryBudget(Long.MAX_VALUE / 4))) {
            putRange(db, 0, 20_000);
            db.flush();
            db.compactRange(null, null);
        }
        long full;
        try (Db db = Db.open(dir, base().filterMemoryBudget(new SharedFilterBudget(1L << 40)))) {
            full = filterMemory(db);
        }
        for (boolean mmap : new boolean[] {true, false}) {
            SharedFilterBudget budget = new SharedFilterBudget(full * 9 / 10);
            try (Db db = Db.open(dir, base().useMmapReads(mmap).filterMemoryBudget(budget))) {
                String what = mmap ? "mapped" : "pread";
                assertThat(filterMemory(db)).as(what).isLessThanOrEqualTo(budget.capacityBytes());
                if (mmap) {
                    assertThat(budget.pinnedBytes())
                            .as(what + ": pins past half the budget")
                            .isGreaterThan(budget.capacityBytes() / 2);
                } else {
                    assertThat(budget.pinnedBytes())
                            .as(what + ": pins within half the budget")
                            .isLessThanOrEqualTo(budget.capacityBytes() / 2);
                }
                for (int i = 0; i < 20_000; i += 5) {
                    assertThat(TestKeys.str(db.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
                    assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
                }
                assertThat(db.stats().tablesReadWithoutFilter()).as(what).isZero();
                assertThat(filterMemory(db)).as(what).isLessThanOrEqualTo(budget.capacityBytes());
            }
        }
    }
}
