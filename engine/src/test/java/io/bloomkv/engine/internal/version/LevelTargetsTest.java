package io.bloomkv.engine.internal.version;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Level size targets, static and computed from the last level upward (RocksDB's dynamic level bytes). */
class LevelTargetsTest {
    private static final long MB = 1L << 20;

    @Test
    void staticTargetsGrowByTheMultiplierFromLevelOne() {
        LevelTargets t = LevelTargets.compute(new long[7], false, 256 * MB, 10);
        assertThat(t.baseLevel()).isEqualTo(1);
        assertThat(t.target(1)).isEqualTo(256 * MB);
        assertThat(t.target(2)).isEqualTo(2560 * MB);
        assertThat(t.target(6)).isEqualTo(256 * MB * 100_000);
    }

    @Test
    void emptyTreeCompactsLevelZeroIntoTheLastLevel() {
        LevelTargets t = LevelTargets.compute(new long[] {5 * MB, 0, 0, 0, 0, 0, 0}, true, 256 * MB, 10);
        assertThat(t.baseLevel()).isEqualTo(6);
        for (int level = 1; level < 6; level++) {
            assertThat(t.target(level)).isEqualTo(Long.MAX_VALUE);
        }
    }

    @Test
    void smallLastLevelIsTheBaseLevel() {
        LevelTargets t = LevelTargets.compute(new long[] {0, 0, 0, 0, 0, 0, 200 * MB}, true, 256 * MB, 10);
        assertThat(t.baseLevel()).isEqualTo(6);
    }

    @Test
    void levelsAboveAreTheLastLevelDividedByTheMultiplier() {
        // 30 GiB in the last level: L5 3 GiB, L4 300 MiB > 256 MiB, L3 30 MiB <= 256 MiB is the base level.
        long last = 30L * 1024 * MB;
        LevelTargets t = LevelTargets.compute(new long[] {0, 0, 0, 0, 0, 0, last}, true, 256 * MB, 10);
        assertThat(t.baseLevel()).isEqualTo(3);
        assertThat(t.target(1)).isEqualTo(Long.MAX_VALUE);
        assertThat(t.target(2)).isEqualTo(Long.MAX_VALUE);
        assertThat(t.target(3)).as("never below the base size").isEqualTo(256 * MB);
        assertThat(t.target(4)).isBetween(300 * MB, 310 * MB);
        assertThat(t.target(5)).isBetween(3000 * MB, 3100 * MB);
        assertThat(t.target(6)).isEqualTo(last);
    }

    @Test
    void baseLevelMovesUpAsTheDataGrows() {
        int previous = 6;
        for (long size = MB; size < (1L << 42); size *= 3) {
            LevelTargets t = LevelTargets.compute(new long[] {0, 0, 0, 0, 0, 0, size}, true, 64 * MB, 8);
            assertThat(t.baseLevel())
                    .as("size " + size)
                    .isLessThanOrEqualTo(previous)
                    .isGreaterThanOrEqualTo(1);
            previous = t.baseLevel();
            // Non-empty levels needed: about 1 + log_8(size / 64 MiB).
            double expected =
                    size <= 64 * MB ? 1 : 1 + Math.ceil(Math.log(size / (double) (64 * MB)) / Math.log(8) - 1e-9);
            assertThat(7 - t.baseLevel()).as("levels used at " + size).isEqualTo((int) Math.min(6, expected));
        }
    }

    @Test
    void baseLevelIsNeverBelowTheFirstNonEmptyLevel() {
        // A tree written with static sizes (data in level 1) and reopened with dynamic sizing.
        LevelTargets t = LevelTargets.compute(new long[] {0, 10 * MB, 100 * MB, 0, 0, 0, 0}, true, 256 * MB, 10);
        assertThat(t.baseLevel()).isEqualTo(1);
        assertThat(t.target(1)).isEqualTo(256 * MB);
    }
}
