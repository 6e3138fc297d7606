package io.bloomkv.engine.internal.compaction;

import io.bloomkv.engine.internal.version.FileMetaData;
import java.util.List;

/**
 * The tables of an LSM tree by level, as the compaction picker sees them: level 0 newest first
 * (ranges may overlap), deeper levels sorted by key with disjoint user-key ranges. A
 * {@link io.bloomkv.engine.internal.version.Version} is one; tests build others from text.
 */
public interface LevelView {
    int numLevels();

    /** The tables of {@code level}, in the order described above. */
    List<FileMetaData> files(int level);

    /** Every level's files as one immutable view. */
    static LevelView of(List<List<FileMetaData>> levels) {
        List<List<FileMetaData>> copy = levels.stream().map(List::copyOf).toList();
        return new LevelView() {
            @Override
            public int numLevels() {
                return copy.size();
            }

            @Override
            public List<FileMetaData> files(int level) {
                return copy.get(level);
            }
        };
    }
}
