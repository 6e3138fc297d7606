package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.table.FilterMemory;
import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The resources several databases share ({@link SharedFilterBudget}'s off-heap filters and slot pool,
 * {@link SharedBlockCache}, {@link WriteBufferManager}) are given back by each database exactly once: an open that
 * fails after reading its tables leaves nothing behind, the first of two to close leaves the other's alone, and once
 * the last one closes nothing is held.
 */
class SharedResourcesReleaseTest {
    @TempDir
    Path dir;

    /** Partitioned filters (written under a budget), read with pread: partitions go through the budget's cache. */
    private static Options base() {
        return Options.defaults()
                .compression(Compression.NONE)
                .writeBufferSize(64 << 10)
                .targetFileSize(64 << 10)
                .useMmapReads(false)
                .filterPartitionSize(1024)
                .filterMemoryBudget(32 << 10);
    }

    @Test
    void aFailedOpenAndStaggeredClosesGiveEverythingBackOnce() {
        long liveBefore = FilterMemory.liveBytes();
        long tablesBefore = TableReader.liveTables();
        for (String name : new String[] {"a", "b", "merges"}) {
            Options o = name.equals("merges") ? base().mergeOperator(MergeOperators.stringAppend(',')) : base();
            try (Db db = Db.open(dir.resolve(name), o)) {
                for (int i = 0; i < 20_000; i++) {
                    db.put(TestKeys.key(2L * i), TestKeys.bytes("value-" + i));
                }
                if (name.equals("merges")) {
                    db.merge(TestKeys.key(0), TestKeys.bytes("x"));
                }
                db.flush();
            }
        }
        SharedFilterBudget filters = new SharedFilterBudget(24 << 10);
        SharedBlockCache cache = new SharedBlockCache(1 << 20);
        WriteBufferManager memtables = new WriteBufferManager(8 << 20);
        Options shared = base().filterMemoryBudget(filters).blockCache(cache).writeBufferManager(memtables);
        Db a = Db.open(dir.resolve("a"), shared);
        Db b = Db.open(dir.resolve("b"), shared.copy());
        try {
            for (Db db : new Db[] {a, b}) {
                for (int i = 0; i < 20_000; i += 7) {
                    assertThat(TestKeys.str(db.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
                    assertThat(db.get(TestKeys.key(2L * i + 1))).isNull();
                }
                db.put(TestKeys.key(1_000_001), TestKeys.bytes("in the memtable"));
                db.put(TestKeys.key(1_000_003), TestKeys.bytes("charges the first")); // a write is charged at the next
                db.waitForBackgroundWork();
            }
            long live = FilterMemory.liveBytes();
            long blocks = cache.blockCount();
            long charged = memtables.usedBytes();
            assertThat(live).isGreaterThan(liveBefore);
            assertThat(blocks).isPositive();
            assertThat(charged).isPositive();
            // refused after its tables are open and read: merge operands and no merge operator
            assertThatThrownBy(() -> Db.open(dir.resolve("merges"), shared.copy()))
                    .isInstanceOf(MergeOperatorException.class);
            assertThat(FilterMemory.liveBytes()).as("the failed open's filters").isEqualTo(live);
            assertThat(cache.blockCount()).as("the failed open's blocks").isEqualTo(blocks);
            assertThat(memtables.usedBytes()).as("the failed open's memtables").isEqualTo(charged);

            a.close();
            assertThat(memtables.usedBytes()).isPositive().isLessThan(charged);
            for (int i = 0; i < 20_000; i += 7) {
                assertThat(TestKeys.str(b.get(TestKeys.key(2L * i)))).isEqualTo("value-" + i);
                assertThat(b.get(TestKeys.key(2L * i + 1))).isNull();
            }
            assertThat(FilterMemory.liveBytes()).as("b's filters").isGreaterThan(liveBefore);
        } finally {
            a.close();
            b.close();
        }
        assertThat(FilterMemory.liveBytes()).as("off-heap filter memory").isEqualTo(liveBefore);
        assertThat(TableReader.liveTables()).isEqualTo(tablesBefore);
        assertThat(filters.pinnedBytes()).isZero();
        assertThat(filters.cachedBytes()).isZero();
        assertThat(cache.blockCount()).isZero();
        assertThat(cache.usedBytes()).isZero();
        assertThat(memtables.usedBytes()).isZero();
        assertThat(memtables.mutableBytes()).isZero();
        a.close(); // idempotent: nothing given back twice
        b.close();
        assertThat(memtables.usedBytes()).isZero();
        assertThat(FilterMemory.liveBytes()).isEqualTo(liveBefore);
    }
}
