package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Write-side review: interactions of compaction, range deletions, merges, snapshots, ingestion and recovery. */
class WriteSideReviewTest {
    @TempDir
    Path dir;

    @AfterEach
    void noTableLeftOpen() {
        assertThat(TableReader.liveTables()).as("no table left open").isZero();
    }

    /**
     * A tombstone ending at {@code end || 0x00} covers {@code end} itself, and its table's largest key is {@code end}
     * (RangeTombstone.largestCoveredBound). deleteFilesInRange(begin, end) must not take such a table for one "inside"
     * the range: removing it brings back an older version of {@code end}, a key outside the range.
     */
    @Test
    void deleteFilesInRangeKeepsATombstoneThatCoversTheEndKey() {
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false))) {
            db.put(bytes("k"), bytes("old"));
            db.flush();
            db.compactRange(null, null); // "k" in a deeper table that stays (it holds the end key)
            db.deleteRange(bytes("b"), bytes("k\0")); // covers b.. and "k" itself
            db.flush(); // a level-0 table of the tombstone only: its key range is [b, k]
            assertThat(db.get(bytes("k"))).isNull();

            db.deleteFilesInRange(bytes("b"), bytes("k"));

            assertThat(db.get(bytes("k")))
                    .as("a key outside [b, k) must read as before")
                    .isNull();
        }
    }
}
