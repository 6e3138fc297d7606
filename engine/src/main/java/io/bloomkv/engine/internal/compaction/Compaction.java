package io.bloomkv.engine.internal.compaction;

import io.bloomkv.engine.internal.version.FileMetaData;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What one compaction merges: {@code base} from {@code level} and {@code below} from
 * {@code outputLevel}, written into {@code outputLevel} (the next level; the base level for level 0;
 * or {@code level} itself for an in-place rewrite by compactRange). {@code level0MayMove}: level-0 inputs whose key
 * ranges do not overlap may move down together (see {@link #isTrivialMove}).
 */
public record Compaction(
        int level, int outputLevel, List<FileMetaData> base, List<FileMetaData> below, boolean level0MayMove) {
    public Compaction {
        base = List.copyOf(base);
        below = List.copyOf(below);
    }

    /** A compaction whose level-0 inputs are never moved together. */
    public Compaction(int level, int outputLevel, List<FileMetaData> base, List<FileMetaData> below) {
        this(level, outputLevel, base, below, false);
    }

    /**
     * Inputs with nothing to merge below, no two of which hold the same user key, are moved, not rewritten (never an
     * in-place rewrite): a single table, or, when {@link #level0MayMove}, level-0 tables whose key ranges do not
     * overlap (a sequential load's flushes; RocksDB's {@code TryPickL0TrivialMove}). Moving keeps each key's newest
     * entry above its older ones: every level between holds nothing in their ranges. A moved table keeps the filter
     * it was written with, which is why the picker allows the level-0 move only where the filter policy gives every
     * level the same filter.
     */
    public boolean isTrivialMove() {
        return outputLevel != level
                && below.isEmpty()
                && (base.size() == 1 || (level == 0 && level0MayMove && disjoint(base)));
    }

    /** Whether no two of {@code files} overlap in user keys (a boundary key shared is an overlap). */
    static boolean disjoint(List<FileMetaData> files) {
        if (files.size() <= 1) {
            return true;
        }
        List<FileMetaData> sorted = new ArrayList<>(files);
        sorted.sort((a, b) -> Arrays.compareUnsigned(a.smallestUserKey(), b.smallestUserKey()));
        for (int i = 1; i < sorted.size(); i++) {
            if (Arrays.compareUnsigned(
                            sorted.get(i - 1).largestUserKey(), sorted.get(i).smallestUserKey())
                    >= 0) {
                return false;
            }
        }
        return true;
    }

    /** The largest user key of the inputs: no output holds a larger one. */
    public byte[] largestUserKey() {
        List<FileMetaData> inputs = new ArrayList<>(base);
        inputs.addAll(below);
        return CompactionPicker.userKeyRange(inputs)[1];
    }
}
