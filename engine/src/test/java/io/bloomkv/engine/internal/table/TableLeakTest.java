package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Filters;
import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.InternalKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.openhft.chronicle.core.OS;
import net.openhft.chronicle.core.io.AbstractReferenceCounted;
import net.openhft.chronicle.core.io.BackgroundResourceReleaser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Opening and releasing many tables leaves no off-heap memory behind. */
class TableLeakTest {
    @TempDir
    Path dir;

    @Test
    void noOffHeapLeakAfterOpeningAndClosingManyTables() throws IOException {
        FileSystem fs = FileSystem.disk();
        Random rnd = new Random(1);
        List<Path> paths = new ArrayList<>();
        FilterKind[] kinds = FilterKind.values();
        for (int i = 0; i < kinds.length; i++) {
            Path p = dir.resolve("t" + i + ".sst");
            TestTables.write(
                    fs,
                    p,
                    TestTables.model(2000, rnd),
                    TableBuilderOptions.defaults().filterKind(kinds[i]));
            paths.add(p);
        }
        // one table with a broken filter: the failed load must not leak either
        byte[] b = Files.readAllBytes(paths.get(0));
        Path broken = dir.resolve("broken.sst");
        try (TableReader t = TableReader.open(fs, paths.get(0), 0, null, null)) {
            b[(int) (t.footer().filter().offset() + t.footer().filter().size() / 2)] ^= 1;
        }
        Files.write(broken, b);
        paths.add(broken);

        AbstractReferenceCounted.enableReferenceTracing();
        try {
            BackgroundResourceReleaser.releasePendingResources();
            long nativeBefore = OS.memory().nativeMemoryUsed();
            long arenaBefore = Filters.hugePageArenaLiveBytes(); // filter bodies on huge pages, beside Chronicle's
            long liveBefore = TableReader.liveTables();
            long filterBefore = TableReader.liveFilterBytes();
            long peak = 0;
            for (int round = 0; round < 40; round++) {
                List<TableReader> open = new ArrayList<>();
                for (int i = 0; i < paths.size(); i++) {
                    open.add(TableReader.open(fs, paths.get(i), i, null, null));
                }
                peak = Math.max(
                        peak,
                        OS.memory().nativeMemoryUsed() - nativeBefore + Filters.hugePageArenaLiveBytes() - arenaBefore);
                assertThat(TableReader.liveFilterBytes() - filterBefore)
                        .isEqualTo(open.stream()
                                .mapToLong(TableReader::filterMemoryBytes)
                                .sum())
                        .isPositive();
                // pin some with iterators and extra references, in a random release order
                List<Runnable> releases = new ArrayList<>();
                for (TableReader t : open) {
                    InternalIterator it = t.iterator();
                    it.seekToFirst();
                    t.retain();
                    releases.add(it::close);
                    releases.add(t::release);
                    releases.add(t::close);
                    byte[] k = TestTables.userKey(2);
                    t.get(k, Hashing.hash64(k), InternalKey.MAX_SEQUENCE);
                }
                java.util.Collections.shuffle(releases, rnd);
                releases.forEach(Runnable::run);
                assertThat(open).allSatisfy(t -> assertThat(t.refCount()).isZero());
            }
            // a table that fails to open (corrupt footer) releases what it allocated, too
            byte[] bad = Files.readAllBytes(paths.get(1));
            bad[bad.length - 1] ^= 1;
            Path badFooter = dir.resolve("badfooter.sst");
            Files.write(badFooter, bad);
            for (int i = 0; i < 10; i++) {
                assertThatThrownBy(() ->
                                TableReader.open(fs, badFooter, 99, null, null).close())
                        .as("opening a table whose footer magic is damaged")
                        .isInstanceOf(CorruptionException.class)
                        .hasMessageContaining("bad magic number");
            }
            assertThat(peak).as("filters were really off-heap").isPositive();
            // Chronicle frees released stores on a background thread: wait for it
            BackgroundResourceReleaser.releasePendingResources();
            assertThat(OS.memory().nativeMemoryUsed())
                    .as("native memory back to where it was")
                    .isEqualTo(nativeBefore);
            assertThat(Filters.hugePageArenaLiveBytes())
                    .as("huge-page arena back to where it was")
                    .isEqualTo(arenaBefore);
            assertThat(TableReader.liveTables()).isEqualTo(liveBefore);
            assertThat(TableReader.liveFilterBytes()).isEqualTo(filterBefore);
            AbstractReferenceCounted.assertReferencesReleased();
        } finally {
            AbstractReferenceCounted.disableReferenceTracing();
        }
    }
}
