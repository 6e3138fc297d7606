package io.bloomkv.engine.internal.compaction;

import io.bloomkv.engine.Options;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.LevelTargets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;
import java.util.function.LongUnaryOperator;

/**
 * Chooses compactions, as LevelDB's version_set.cc does, as pure functions of the levels and the
 * options (tested from testdata/compaction_picker). A level's score says how much it overflows:
 * level 0 by table count against {@link Options#l0CompactionTrigger()}, level n >= 1 by bytes
 * against its target ({@link LevelTargets}: LevelDB's static sizes, or, with
 * {@link Options#dynamicLevelBytes()}, RocksDB's sizes computed from the last level upward); levels
 * above the base level and the last level never overflow. A level-0 compaction merges every
 * level-0 table with the overlapping tables of the base level; a level-n compaction takes the table
 * whose overlapping bytes in level n+1 are fewest per byte of its own (RocksDB's
 * kMinOverlappingRatio: the least rewriting per byte moved down; among equals the first after the
 * level's compaction pointer, round robin over the key space) and the overlapping tables of level n+1.
 */
public final class CompactionPicker {
    private CompactionPicker() {}

    /** The level whose compaction is most urgent and its score; >= 1 means it needs one. */
    public record Score(int level, double score) {}

    /** The size targets of {@code v}'s levels and its base level. */
    public static LevelTargets targets(LevelView v, Options options) {
        long[] bytes = new long[v.numLevels()];
        for (int level = 0; level < bytes.length; level++) {
            bytes[level] = levelBytes(v, level);
        }
        return LevelTargets.compute(
                bytes, options.dynamicLevelBytes(), options.maxBytesForLevelBase(), options.levelSizeMultiplier());
    }

    /** The most urgent level of {@code v} and its score. */
    public static Score score(LevelView v, Options options) {
        return score(v, options, targets(v, options));
    }

    /** The most urgent level of {@code v} and its score, given its {@link #targets}. */
    public static Score score(LevelView v, Options options, LevelTargets targets) {
        int bestLevel = 0;
        double bestScore = -1;
        for (int level = 0; level < v.numLevels() - 1; level++) {
            double score = level == 0
                    ? v.files(0).size() / (double) options.l0CompactionTrigger()
                    : level < targets.baseLevel()
                            ? 0 // above the base level: empty by construction
                            : levelBytes(v, level) / (double) targets.target(level);
            if (score > bestScore) {
                bestScore = score;
                bestLevel = level;
            }
        }
        return new Score(bestLevel, bestScore);
    }

    /**
     * The background compaction {@code v} needs, or null when no level's score reaches 1.
     * {@code compactPointer} gives each level's pointer: the largest internal key its last
     * compaction took (null = start of the key space).
     */
    public static Compaction pickAuto(LevelView v, Options options, IntFunction<byte[]> compactPointer) {
        return pickAuto(v, options, compactPointer, null, 0);
    }

    /**
     * {@link #pickAuto(LevelView, Options, IntFunction)}, then, when no level overflows, {@link #pickPeriodic} (with
     * {@code creationTime} null: no periodic compaction).
     */
    public static Compaction pickAuto(
            LevelView v,
            Options options,
            IntFunction<byte[]> compactPointer,
            LongUnaryOperator creationTime,
            long nowSeconds) {
        LevelTargets targets = targets(v, options);
        Score s = score(v, options, targets);
        if (s.score() < 1) {
            return creationTime == null
                    ? null
                    : pickPeriodic(v, options, creationTime, nowSeconds, targets.baseLevel());
        }
        Compaction c = pickLevel(v, s.level(), compactPointer.apply(s.level()), targets.baseLevel());
        if (c != null && c.level() == 0 && sameFilterAtEveryLevel(options)) {
            c = new Compaction(c.level(), c.outputLevel(), c.base(), c.below(), true);
        }
        return c;
    }

    /**
     * Whether a table gets the same filter whatever its level (the uniform allocation, one filter kind), so level-0
     * tables may be moved down unchanged: under {@link io.bloomkv.engine.FilterAllocation#MONKEY} or with
     * {@link Options#ribbonFromLevel()} below the first level a moved table would keep a filter its new level would
     * not get, and such tables are merged as before.
     */
    static boolean sameFilterAtEveryLevel(Options options) {
        return options.filterAllocation() == io.bloomkv.engine.FilterAllocation.UNIFORM
                && options.ribbonFromLevel() <= 0;
    }

    /**
     * RocksDB's periodic compaction ({@code periodic_compaction_seconds}): the oldest table whose age
     * ({@code nowSeconds} minus its creation time, {@code creationTime} of its number; 0 = unknown, as old as can be)
     * reached {@link Options#periodicCompaction}, among equals the shallowest, is compacted although no level overflows,
     * so what compactions remove (expired TTL values, compaction-filter decisions, overwritten versions) leaves a cold
     * level. A level-0 table goes down with every level-0 table (a level-0 table rewritten alone would sort as newer
     * than newer ones); a deeper table merges with the tables it overlaps one level down, or, when it overlaps none
     * there (or is in the last level), is rewritten in place, never moved, so it is read and its outputs are new.
     * Null when the option is off or no table is old enough.
     */
    public static Compaction pickPeriodic(
            LevelView v, Options options, LongUnaryOperator creationTime, long nowSeconds, int baseLevel) {
        if (options.periodicCompaction() == null) {
            return null;
        }
        long period = options.periodicCompaction().getSeconds();
        FileMetaData oldest = null;
        int oldestLevel = -1;
        long oldestTime = Long.MAX_VALUE;
        for (int level = 0; level < v.numLevels(); level++) {
            for (FileMetaData f : v.files(level)) {
                long created = creationTime.applyAsLong(f.number());
                if (nowSeconds - created >= period && created < oldestTime) {
                    oldest = f;
                    oldestLevel = level;
                    oldestTime = created;
                }
            }
        }
        if (oldest == null) {
            return null;
        }
        if (oldestLevel == 0) {
            return withBelow(v, 0, baseLevel, v.files(0));
        }
        List<FileMetaData> below = oldestLevel + 1 < v.numLevels()
                ? overlapping(v, oldestLevel + 1, oldest.smallestUserKey(), oldest.largestUserKey())
                : List.of();
        return below.isEmpty()
                ? new Compaction(oldestLevel, oldestLevel, List.of(oldest), List.of())
                : new Compaction(oldestLevel, oldestLevel + 1, List.of(oldest), below);
    }

    /**
     * The compaction of {@code level} into the next level (level 0: into {@code baseLevel}), or null
     * when the level is empty.
     */
    public static Compaction pickLevel(LevelView v, int level, byte[] compactPointer, int baseLevel) {
        List<FileMetaData> files = v.files(level);
        if (files.isEmpty()) {
            return null;
        }
        if (level == 0) {
            return withBelow(v, 0, baseLevel, files);
        }
        return withBelow(v, level, level + 1, List.of(minOverlappingRatio(v, level, files, compactPointer)));
    }

    /**
     * The table of {@code level} whose overlapping bytes in the next level, per byte of its own, are
     * fewest; among equals the first after {@code pointer} (round robin), else the first.
     */
    static FileMetaData minOverlappingRatio(LevelView v, int level, List<FileMetaData> files, byte[] pointer) {
        int start = 0;
        if (pointer != null) {
            while (start < files.size() && InternalKey.compare(files.get(start).largest(), pointer) <= 0) {
                start++;
            }
            if (start == files.size()) {
                start = 0;
            }
        }
        FileMetaData best = null;
        double bestRatio = Double.MAX_VALUE;
        for (int k = 0; k < files.size(); k++) {
            FileMetaData f = files.get((start + k) % files.size());
            long below = 0;
            for (FileMetaData g : overlapping(v, level + 1, f.smallestUserKey(), f.largestUserKey())) {
                below += g.fileSize();
            }
            double ratio = below / (double) Math.max(1, f.fileSize());
            if (ratio < bestRatio) {
                bestRatio = ratio;
                best = f;
            }
        }
        return best;
    }

    /**
     * The tables of {@code level} overlapping [from, to] (null = open bound), merged into the next
     * level, or rewritten in place when {@code inPlace}; null when none overlaps.
     */
    public static Compaction pickRange(LevelView v, int level, byte[] from, byte[] to, boolean inPlace) {
        return pickRange(v, level, from, to, inPlace ? level : level + 1);
    }

    /**
     * The tables of {@code level} overlapping [from, to] (null = open bound), merged into
     * {@code outputLevel} (below {@code level}), or rewritten in place when it is {@code level}; null
     * when none overlaps.
     */
    public static Compaction pickRange(LevelView v, int level, byte[] from, byte[] to, int outputLevel) {
        List<FileMetaData> base = overlapping(v, level, from, to);
        if (base.isEmpty()) {
            return null;
        }
        return outputLevel == level
                ? new Compaction(level, level, base, List.of())
                : withBelow(v, level, outputLevel, base);
    }

    /** The deepest level holding a table that overlaps [from, to]; 0 when none does. */
    public static int deepestOverlappingLevel(LevelView v, byte[] from, byte[] to) {
        int deepest = 0;
        for (int level = 0; level < v.numLevels(); level++) {
            if (!overlapping(v, level, from, to).isEmpty()) {
                deepest = level;
            }
        }
        return deepest;
    }

    /**
     * Tables of {@code level} whose user-key range overlaps [from, to] (null = open bound). For
     * level 0 the range grows to cover every overlapping table's range, transitively, so that no
     * newer entry of a key is left behind.
     */
    public static List<FileMetaData> overlapping(LevelView v, int level, byte[] fromUserKey, byte[] toUserKey) {
        List<FileMetaData> out = new ArrayList<>();
        byte[] from = fromUserKey;
        byte[] to = toUserKey;
        List<FileMetaData> files = v.files(level);
        for (int i = 0; i < files.size(); i++) {
            FileMetaData f = files.get(i);
            if (!f.overlaps(from, to)) {
                continue;
            }
            out.add(f);
            if (level == 0) {
                boolean grew = false;
                if (from != null && Arrays.compareUnsigned(f.smallestUserKey(), from) < 0) {
                    from = f.smallestUserKey();
                    grew = true;
                }
                if (to != null && Arrays.compareUnsigned(f.largestUserKey(), to) > 0) {
                    to = f.largestUserKey();
                    grew = true;
                }
                if (grew) {
                    out.clear();
                    i = -1;
                }
            }
        }
        return out;
    }

    /** Total file bytes of {@code level}. */
    public static long levelBytes(LevelView v, int level) {
        long sum = 0;
        for (FileMetaData f : v.files(level)) {
            sum += f.fileSize();
        }
        return sum;
    }

    /**
     * The tables of the level below {@code c}'s output level that overlap the user-key range of its
     * inputs (the "grandparents" its outputs are aligned with, see {@link OutputCutter}); none when the
     * output level is the last.
     */
    public static List<FileMetaData> grandparents(LevelView v, Compaction c) {
        int below = c.outputLevel() + 1;
        if (below >= v.numLevels()) {
            return List.of();
        }
        List<FileMetaData> inputs = new ArrayList<>(c.base());
        inputs.addAll(c.below());
        byte[][] range = userKeyRange(inputs);
        return overlapping(v, below, range[0], range[1]);
    }

    /** The smallest and largest user key of {@code files} (not empty). */
    static byte[][] userKeyRange(List<FileMetaData> files) {
        byte[] smallest = null;
        byte[] largest = null;
        for (FileMetaData f : files) {
            if (smallest == null || Arrays.compareUnsigned(f.smallestUserKey(), smallest) < 0) {
                smallest = f.smallestUserKey();
            }
            if (largest == null || Arrays.compareUnsigned(f.largestUserKey(), largest) > 0) {
                largest = f.largestUserKey();
            }
        }
        return new byte[][] {smallest, largest};
    }

    private static Compaction withBelow(LevelView v, int level, int outputLevel, List<FileMetaData> base) {
        byte[][] range = userKeyRange(base);
        return new Compaction(level, outputLevel, base, overlapping(v, outputLevel, range[0], range[1]));
    }
}
