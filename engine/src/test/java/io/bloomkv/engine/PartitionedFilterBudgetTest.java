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
}
