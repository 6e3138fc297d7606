package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;
import io.bloomkv.engine.internal.filter.FilterPolicy;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * FilterPolicy (internal/filter) under the user's Options.ribbonFromLevel, filterBudget and bitsPerKey: which kind each
 * level's tables get, at which bits per key, and what survives a reopen. (The seeds keep their labels from before the
 * policy moved out of LevelFilterPolicy, so the same runs replay.)
 */
class FilterPolicyTest {
    @TempDir
    Path dir;

    @Test
    void kindPerLevel() {
        Options o = Options.defaults();
        assertThat(o.ribbonFromLevel()).isEqualTo(-1);
        assertThat(new FilterPolicy(o).kindForLevel(0)).isEqualTo(FilterKind.BLOCKED);
        assertThat(new FilterPolicy(o).kindForLevel(6)).isEqualTo(FilterKind.BLOCKED);
        o.ribbonFromLevel(2);
        FilterPolicy p = new FilterPolicy(o);
        assertThat(p.kindForLevel(1)).isEqualTo(FilterKind.BLOCKED);
        assertThat(p.kindForLevel(2)).isEqualTo(FilterKind.RIBBON);
        assertThat(p.kindForLevel(5)).isEqualTo(FilterKind.RIBBON);
        assertThat(o.copy().ribbonFromLevel()).isEqualTo(2);
        assertThatThrownBy(() -> Options.defaults().ribbonFromLevel(-2)).isInstanceOf(InvalidArgumentException.class);
    }

    @Test
    void ribbonGetsBloomEquivalentBits() {
        double bloom = 10;
        double blockedRate = FilterMath.blockedFppForLoad(512 / bloom, FilterMath.optimalBlockedK(bloom), 512);
        double ribbon = FilterPolicy.bitsPerKey(FilterKind.RIBBON, FilterBudget.FALSE_POSITIVE_RATE, bloom, 1_000_000);
        assertThat(ribbon).isBetween(6.5, 7.5);
        assertThat(FilterMath.ribbonFppForBitsPerKey(1_000_000, ribbon)).isLessThanOrEqualTo(blockedRate);
        assertThat(FilterPolicy.bitsPerKey(FilterKind.BLOCKED, FilterBudget.FALSE_POSITIVE_RATE, bloom, 1_000_000))
                .isEqualTo(bloom);
        assertThat(FilterPolicy.bitsPerKey(FilterKind.RIBBON, FilterBudget.FALSE_POSITIVE_RATE, 0, 1_000_000))
                .isZero();
        // MONKEY's fractional budgets map to fractional RIBBON bits
        assertThat(FilterPolicy.bitsPerKey(FilterKind.RIBBON, FilterBudget.FALSE_POSITIVE_RATE, 8.37, 50_000))
                .isNotEqualTo(Math.rint(8.37));
    }

    @Test
    void tableFiltersPerLevelUnderTheUniformAllocation() {
        // UNIFORM needs no tree: the Version set is never asked (null here)
        FilterPolicy p = new FilterPolicy(Options.defaults().bitsPerKey(10).ribbonFromLevel(3));
        assertThat(p.forTable(null, 1, 1_000_000, null, null, null))
                .isEqualTo(new FilterPolicy.TableFilter(FilterKind.BLOCKED, 10));
        FilterPolicy.TableFilter deep = p.forTable(null, 3, 1_000_000, null, null, null);
        assertThat(deep.kind()).isEqualTo(FilterKind.RIBBON);
        assertThat(deep.bitsPerKey())
                .isEqualTo(FilterPolicy.bitsPerKey(FilterKind.RIBBON, FilterBudget.FALSE_POSITIVE_RATE, 10, 1_000_000))
                .isBetween(6.5, 7.5);
        // an ingested table: the last level's kind, its RIBBON bits computed for a large table
        assertThat(p.forIngestedTable(6))
                .isEqualTo(new FilterPolicy.TableFilter(
                        FilterKind.RIBBON,
                        FilterPolicy.bitsPerKey(FilterKind.RIBBON, FilterBudget.FALSE_POSITIVE_RATE, 10, 1 << 20)));
        assertThat(new FilterPolicy(Options.defaults().bitsPerKey(0).filterAllocation(FilterAllocation.MONKEY))
                        .forTable(null, 2, 1000, null, null, null)
                        .bitsPerKey())
                .isZero();
    }

    @Test
    void memoryBudgetSpendsTheBitsForALowerRate() {
        assertThat(Options.defaults().filterBudget()).isEqualTo(FilterBudget.FALSE_POSITIVE_RATE);
        assertThat(Options.defaults().filterBudget(FilterBudget.MEMORY).copy().filterBudget())
                .isEqualTo(FilterBudget.MEMORY);
        assertThatThrownBy(() -> Options.defaults().filterBudget(null)).isInstanceOf(InvalidArgumentException.class);
        for (FilterKind kind : List.of(FilterKind.RIBBON, FilterKind.BLOCKED, FilterKind.STANDARD)) {
            assertThat(FilterPolicy.bitsPerKey(kind, FilterBudget.MEMORY, 10, 1_000_000))
                    .isEqualTo(10);
        }
        double blockedRate = FilterMath.blockedFppForLoad(512 / 10.0, FilterMath.optimalBlockedK(10), 512);
        double ribbonRate = FilterMath.ribbonFppForBitsPerKey(1_000_000, 10);
        // the same 10 bits buy RIBBON a rate ~8x lower than BLOCKED's (0.12% vs 0.97%)
        assertThat(ribbonRate).isLessThan(blockedRate / 6).isGreaterThan(Math.pow(2, -10));
    }

    @Test
    void memoryBudgetRibbonTablesSpendBloomMemoryAndLetFewerAbsentKeysThrough() {
        long seed = TestKeys.seed("LevelFilterPolicyTest.memoryBudget");
        java.util.Random rnd = new java.util.Random(seed);
        int n = 40_000;
        double[] falsePositives = new double[2];
        double[] bitsPerKey = new double[2];
        FilterBudget[] budgets = {FilterBudget.FALSE_POSITIVE_RATE, FilterBudget.MEMORY};
        for (int b = 0; b < 2; b++) {
            Path d = dir.resolve(budgets[b].name());
            Options o = Options.defaults()
                    .filterKind(FilterKind.RIBBON)
                    .filterBudget(budgets[b])
                    .bitsPerKey(10)
                    .memtableFilterBitsPerKey(0);
            try (Db db = Db.open(d, o)) {
                for (int i = 0; i < n; i++) {
                    db.put(TestKeys.key(2L * i), TestKeys.value(rnd, 20));
                }
                db.flush();
                long bits = 0;
                long keys = 0;
                for (TableInfo t : db.tables()) {
                    assertThat(t.filterKind()).isEqualTo(FilterKind.RIBBON);
                    bits += t.filterBitSize();
                    keys += t.filterKeyCount();
                }
                bitsPerKey[b] = bits / (double) keys;
                Stats before = db.stats();
                int absent = 200_000;
                for (int i = 0; i < absent; i++) {
                    assertThat(db.get(TestKeys.key(2L * rnd.nextInt(n) + 1)))
                            .as("seed %d", seed)
                            .isNull();
                }
                falsePositives[b] = (db.stats().filterFalsePositive() - before.filterFalsePositive()) / (double) absent;
            }
        }
        // the rate budget spends ~7 bits per key for BLOCKED's ~1%; the memory budget spends the 10 bits for ~0.12%
        assertThat(bitsPerKey[0]).as("seed %d", seed).isBetween(6.5, 7.6);
        assertThat(bitsPerKey[1]).as("seed %d", seed).isBetween(9.8, 10.4);
        assertThat(falsePositives[0]).as("seed %d", seed).isBetween(0.005, 0.015);
        assertThat(falsePositives[1]).as("seed %d", seed).isLessThan(0.0025);
    }

    @Test
    void level0StaysBlockedAndDeeperLevelsAreRibbon() {
        Options o = Options.defaults()
                .writeBufferSize(16 << 10)
                .blockSize(512)
                .targetFileSize(16 << 10)
                .maxBytesForLevelBase(64 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .filterAllocation(FilterAllocation.MONKEY)
                .ribbonFromLevel(1);
        long seed = TestKeys.seed("LevelFilterPolicyTest");
        java.util.Random rnd = new java.util.Random(seed);
        int n = 6000;
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < n; i++) {
                db.put(TestKeys.key(2L * i), TestKeys.value(rnd, 100));
            }
            db.flush();
            db.waitForBackgroundWork();
        }
        // Reopened without automatic compactions, so the next flush's table stays in level 0 (with compactions on, it
        // could be the second level-0 table, which the trigger of 2 compacts away before the tables are listed).
        try (Db db = Db.open(dir, o.copy().autoCompaction(false))) {
            db.put(TestKeys.key(1), TestKeys.value(rnd, 10));
            db.flush();
            List<TableInfo> tables = db.tables();
            assertThat(tables.stream().anyMatch(t -> t.level() == 0)).isTrue();
            assertThat(tables.stream().anyMatch(t -> t.level() >= 1))
                    .as("seed %d", seed)
                    .isTrue();
            for (TableInfo t : tables) {
                assertThat(t.filterKind())
                        .as("level %d", t.level())
                        .isEqualTo(t.level() >= 1 ? FilterKind.RIBBON : FilterKind.BLOCKED);
            }
            for (int i = 0; i < n; i += 7) {
                assertThat(db.get(TestKeys.key(2L * i))).isNotNull();
            }
        }
        // reopened with the policy off: old tables keep their kind and still answer; new ones are BLOCKED
        try (Db db = Db.open(dir, o.copy().ribbonFromLevel(-1))) {
            assertThat(db.tables().stream().anyMatch(t -> t.filterKind() == FilterKind.RIBBON))
                    .isTrue();
            for (int i = 0; i < n; i += 7) {
                assertThat(db.get(TestKeys.key(2L * i))).isNotNull();
            }
        }
    }
}
