package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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

    /**
     * CompactionFilter's contract: it never sees a value a snapshot can still read. A snapshot taken while a
     * compaction runs (after it read the list of snapshots) reads the values the compaction is filtering: once the
     * compaction is installed, the snapshot must still read them as before.
     */
    @Test
    void aSnapshotTakenDuringACompactionKeepsWhatTheFilterWouldRemove() throws Exception {
        CountDownLatch inFilter = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        CompactionFilter dropAll = (level, bottommost, key, value) -> {
            if (first.compareAndSet(true, false)) {
                inFilter.countDown();
                try {
                    proceed.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return CompactionFilter.Decision.REMOVE;
        };
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false).compactionFilter(dropAll))) {
            db.put(bytes("a"), bytes("1"));
            db.put(bytes("b"), bytes("2"));
            db.flush();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread compaction = new Thread(() -> {
                try {
                    db.compactRange(null, null);
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            compaction.start();
            assertThat(inFilter.await(30, TimeUnit.SECONDS)).isTrue();
            try (Snapshot snap = db.getSnapshot()) {
                ReadOptions at = ReadOptions.defaults().snapshot(snap);
                assertThat(db.get(bytes("a"), at)).isEqualTo(bytes("1"));
                proceed.countDown();
                compaction.join();
                assertThat(failed.get()).isNull();
                assertThat(db.get(bytes("a"), at))
                        .as("what the snapshot read before")
                        .isEqualTo(bytes("1"));
                assertThat(db.get(bytes("b"), at))
                        .as("what the snapshot read before")
                        .isEqualTo(bytes("2"));
            } finally {
                proceed.countDown();
                compaction.join();
            }
        }
    }
}
