package io.bloomkv.engine.internal.version;

import java.util.Arrays;

/**
 * The size each level may reach before it is compacted into the next one, and the level that
 * level 0 compacts into (the base level). A pure function of the levels' sizes and three options.
 *
 * <p><b>Static</b> (LevelDB): level 1 is the base level, its target is {@code maxBytesForLevelBase},
 * each deeper level's is {@code multiplier} times the one above.
 *
 * <p><b>Dynamic</b> (RocksDB's {@code level_compaction_dynamic_level_bytes}): the targets are computed
 * from the last level upward, so the tree has as few levels as the data needs at any size. The last
 * level's target is the largest level's actual size; each level above gets that divided by
 * {@code multiplier}. The base level is the deepest level whose target does not exceed
 * {@code maxBytesForLevelBase} (never deeper than the first non-empty level); levels above it
 * stay empty, and level 0 compacts straight into it. In an empty tree the base level is the last
 * level. With data of size S in the last level, the tree has about
 * {@code 1 + log_multiplier(S / maxBytesForLevelBase)} non-empty levels, each about
 * {@code multiplier} times the one above, which bounds write amplification by about
 * {@code multiplier} per level actually used rather than per level configured.
 */
public final class LevelTargets {
    private final int baseLevel;
    private final long[] targets;

    private LevelTargets(int baseLevel, long[] targets) {
        this.baseLevel = baseLevel;
        this.targets = targets;
    }

    /**
     * @param levelBytes bytes held by each level (index 0 = level 0; at least two levels)
     * @param dynamic    compute targets from the last level upward (else LevelDB's static sizes)
     */
    public static LevelTargets compute(long[] levelBytes, boolean dynamic, long maxBytesForLevelBase, int multiplier) {
        int numLevels = levelBytes.length;
        long[] targets = new long[numLevels];
        targets[0] = 0; // level 0 is scored by table count, not bytes
        if (!dynamic) {
            double t = maxBytesForLevelBase;
            for (int level = 1; level < numLevels; level++) {
                targets[level] = t >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) t;
                t *= multiplier;
            }
            return new LevelTargets(1, targets);
        }
        int last = numLevels - 1;
        long maxLevelSize = 0;
        int firstNonEmpty = -1;
        for (int level = 1; level < numLevels; level++) {
            if (levelBytes[level] > 0) {
                maxLevelSize = Math.max(maxLevelSize, levelBytes[level]);
                if (firstNonEmpty < 0) {
                    firstNonEmpty = level;
                }
            }
        }
        Arrays.fill(targets, 1, numLevels, Long.MAX_VALUE);
        if (firstNonEmpty < 0) {
            // Nothing below level 0 yet: level 0 compacts straight into the last level.
            return new LevelTargets(last, targets);
        }
        // Target of the first non-empty level when the last level's target is its actual size.
        double size = maxLevelSize;
        for (int level = last - 1; level >= firstNonEmpty; level--) {
            size /= multiplier;
        }
        int base = firstNonEmpty;
        while (base > 1 && size > maxBytesForLevelBase) {
            base--;
            size /= multiplier;
        }
        double baseSize = Math.max(1, Math.min(size, maxBytesForLevelBase));
        double t = baseSize;
        for (int level = base; level < numLevels; level++) {
            if (level > base) {
                t *= multiplier;
            }
            // Levels between the base and the last may not shrink below the base size
            // (RocksDB: max(level_size, base_bytes_max)).
            double target = level == last ? Math.max(t, maxLevelSize) : Math.max(t, maxBytesForLevelBase);
            targets[level] = target >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) target;
        }
        return new LevelTargets(base, targets);
    }

    /** The level that level 0 compacts into; levels 1 .. baseLevel-1 are empty (dynamic sizing). */
    public int baseLevel() {
        return baseLevel;
    }

    /** Maximum bytes of {@code level} (>= 1) before it is compacted into the next one; Long.MAX_VALUE above the base level. */
    public long target(int level) {
        return targets[level];
    }

    public int numLevels() {
        return targets.length;
    }

    @Override
    public String toString() {
        return "LevelTargets{base=" + baseLevel + ", targets=" + Arrays.toString(targets) + "}";
    }
}
