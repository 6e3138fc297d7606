package io.bloomkv.engine.internal.compaction;

import io.bloomkv.engine.internal.version.FileMetaData;
import java.util.ArrayList;
import java.util.List;

/**
 * What one compaction merges: {@code base} from {@code level} and {@code below} from
 * {@code outputLevel}, written into {@code outputLevel} (the next level; the base level for level 0;
 * or {@code level} itself for an in-place rewrite by compactRange).
 */
public record Compaction(int level, int outputLevel, List<FileMetaData> base, List<FileMetaData> below) {
    public Compaction {
        base = List.copyOf(base);
        below = List.copyOf(below);
    }

    /** A single input with nothing to merge below is moved, not rewritten (never an in-place rewrite). */
    public boolean isTrivialMove() {
        return outputLevel != level && base.size() == 1 && below.isEmpty();
    }

    /** The largest user key of the inputs: no output holds a larger one. */
    public byte[] largestUserKey() {
        List<FileMetaData> inputs = new ArrayList<>(base);
        inputs.addAll(below);
        return CompactionPicker.userKeyRange(inputs)[1];
    }
}
