package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.openhft.chronicle.core.OS;
import net.openhft.chronicle.core.io.BackgroundResourceReleaser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * After close nothing stays off-heap: no table reader alive, no filter bytes, no table file mapped, native memory back
 * to where it was, including tables opened and dropped by thousands of flushes and compactions,
 * and iterators and snapshots left open by the caller.
 */
class LeakTest {
    @TempDir
    Path dir;

    @Test
    void noOffHeapLeakAfterThousandsOfTableOpensAndClose() {
        long seed = TestKeys.seed("LeakTest");
        Random rnd = new Random(seed);
        // Chronicle allocates one page of native memory, once per JVM, for a static (NoBytesStore) the first time an
        // off-heap filter is made: made here before the baseline, so a run of this test alone compares like with like.
        try (io.bloomkv.bloom.Filter warm =
                io.bloomkv.bloom.Filters.create(io.bloomkv.bloom.FilterKind.BLOCKED, 10, 10)) {
            warm.add(new byte[] {1});
        }
        BackgroundResourceReleaser.releasePendingResources();
        long nativeBefore = OS.memory().nativeMemoryUsed();
        long arenaBefore = io.bloomkv.bloom.Filters.hugePageArenaLiveBytes();
        long liveBefore = TableReader.liveTables();
        long filterBefore = TableReader.liveFilterBytes();
        long mappedBefore = io.bloomkv.engine.fs.DiskFileSystem.liveMappedFiles();
        long walRegionsBefore = io.bloomkv.engine.fs.DiskFileSystem.liveMappedWritableRegions();
        Options o = Options.defaults()
                .writeBufferSize(4096)
                .blockSize(256)
                .targetFileSize(4096)
                .maxBytesForLevelBase(16 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2);
        long opened = 0;
        // Two rounds open well over a thousand tables; how many depends on when background work runs, so a round is
        // added while they have not (at most eight), and the count is then required.
        for (int round = 0; round < 2 || (opened <= 1000 && round < 8); round++) {
            Db db = Db.open(dir, o);
            List<DbIterator> leftOpen = new ArrayList<>();
            for (int i = 0; i < 6_000; i++) {
                db.put(TestKeys.key(rnd.nextInt(3000)), TestKeys.value(rnd, 60));
                if (i % 1500 == 0) {
                    DbIterator it = db.iterator();
                    it.seekToFirst();
                    leftOpen.add(it);
                    db.getSnapshot();
                }
            }
            db.waitForBackgroundWork();
            Stats s = db.stats();
            assertThat(TableReader.liveFilterBytes() - filterBefore)
                    .as("filters of live tables, plus tables pinned by open iterators")
                    .isGreaterThanOrEqualTo(s.filterMemoryBytes());
            opened += s.tablesOpened();
            db.close();
            assertThat(leftOpen)
                    .allSatisfy(it -> org.assertj.core.api.Assertions.assertThatThrownBy(it::valid)
                            .isInstanceOf(DbClosedException.class));
            assertThat(TableReader.liveTables())
                    .as("seed " + seed + " round " + round + ": table readers alive after close")
                    .isEqualTo(liveBefore);
            assertThat(TableReader.liveFilterBytes())
                    .as("filter bytes after close")
                    .isEqualTo(filterBefore);
            assertThat(io.bloomkv.engine.fs.DiskFileSystem.liveMappedFiles())
                    .as("table files still mapped after close")
                    .isEqualTo(mappedBefore);
            // each memtable switch closed a WAL (Options.useMmapWal: its region unmapped), close the last one
            assertThat(io.bloomkv.engine.fs.DiskFileSystem.liveMappedWritableRegions())
                    .as("WAL regions still mapped after close")
                    .isEqualTo(walRegionsBefore);
        }
        System.out.println("LeakTest: " + opened + " table opens");
        assertThat(opened).as("thousands of table opens").isGreaterThan(1000);
        BackgroundResourceReleaser.releasePendingResources();
        assertThat(OS.memory().nativeMemoryUsed())
                .as("native memory after close")
                .isEqualTo(nativeBefore);
        assertThat(io.bloomkv.bloom.Filters.hugePageArenaLiveBytes())
                .as("huge-page arena after close")
                .isEqualTo(arenaBefore);
    }
}
