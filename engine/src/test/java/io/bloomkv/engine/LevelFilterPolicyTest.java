package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Options.ribbonFromLevel: which kind each level's tables get, at which bits per key, and what survives a reopen. */
class LevelFilterPolicyTest {
    @TempDir
    Path dir;

    @Test
    void kindPerLevel() {
        Options o = Options.defaults();
        assertThat(o.ribbonFromLevel()).isEqualTo(-1);
        assertThat(o.filterKindForLevel(0)).isEqualTo(FilterKind.BLOCKED);
        assertThat(o.filterKindForLevel(6)).isEqualTo(FilterKind.BLOCKED);
        o.ribbonFromLevel(2);
        assertThat(o.filterKindForLevel(1)).isEqualTo(FilterKind.BLOCKED);
        assertThat(o.filterKindForLevel(2)).isEqualTo(FilterKind.RIBBON);
        assertThat(o.filterKindForLevel(5)).isEqualTo(FilterKind.RIBBON);
        assertThat(o.copy().ribbonFromLevel()).isEqualTo(2);
        assertThatThrownBy(() -> Options.defaults().ribbonFromLevel(-2)).isInstanceOf(InvalidArgumentException.class);
    }

    @Test
    void ribbonGetsBloomEquivalentBits() {
        double bloom = 10;
        double blockedRate = FilterMath.blockedFppForLoad(512 / bloom, FilterMath.optimalBlockedK(bloom), 512);
        double ribbon = LevelFilterPolicy.bitsPerKey(FilterKind.RIBBON, bloom, 1_000_000);
        assertThat(ribbon).isBetween(6.5, 7.5);
        assertThat(FilterMath.ribbonFppForBitsPerKey(1_000_000, ribbon)).isLessThanOrEqualTo(blockedRate);
        assertThat(LevelFilterPolicy.bitsPerKey(FilterKind.BLOCKED, bloom, 1_000_000)).isEqualTo(bloom);
        assertThat(LevelFilterPolicy.bitsPerKey(FilterKind.RIBBON, 0, 1_000_000)).isZero();
        // MONKEY's fractional budgets map to fractional RIBBON bits
        assertThat(LevelFilterPolicy.bitsPerKey(FilterKind.RIBBON, 8.37, 50_000)).isNotEqualTo(Math.rint(8.37));
    }

    @Test
    void level0StaysBlockedAndDeeperLevelsAreRibbon() {
        Options o = Options.defaults().writeBufferSize(16 << 10).blockSize(512).targetFileSize(16 << 10)
                .maxBytesForLevelBase(64 << 10).levelSizeMultiplier(4).l0CompactionTrigger(2)
                .filterAllocation(FilterAllocation.MONKEY).ribbonFromLevel(1);
        long seed = TestKeys.seed("LevelFilterPolicyTest");
        java.util.Random rnd = new java.util.Random(seed);
        int n = 6000;
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < n; i++) {
                db.put(TestKeys.key(2L * i), TestKeys.value(rnd, 100));
            }
            db.flush();
            db.waitForBackgroundWork();
            db.put(TestKeys.key(1), TestKeys.value(rnd, 10));
            db.flush();
            List<TableInfo> tables = db.tables();
            assertThat(tables.stream().anyMatch(t -> t.level() == 0)).isTrue();
            assertThat(tables.stream().anyMatch(t -> t.level() >= 1)).as("seed %d", seed).isTrue();
            for (TableInfo t : tables) {
                assertThat(t.filterKind()).as("level %d", t.level()).isEqualTo(t.level() >= 1 ? FilterKind.RIBBON : FilterKind.BLOCKED);
            }
            for (int i = 0; i < n; i += 7) {
                assertThat(db.get(TestKeys.key(2L * i))).isNotNull();
            }
        }
        // reopened with the policy off: old tables keep their kind and still answer; new ones are BLOCKED
        try (Db db = Db.open(dir, o.copy().ribbonFromLevel(-1))) {
            assertThat(db.tables().stream().anyMatch(t -> t.filterKind() == FilterKind.RIBBON)).isTrue();
            for (int i = 0; i < n; i += 7) {
                assertThat(db.get(TestKeys.key(2L * i))).isNotNull();
            }
        }
    }
}
