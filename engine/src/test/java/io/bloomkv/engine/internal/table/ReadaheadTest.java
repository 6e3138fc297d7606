package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem.ForwardingReadableFile;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.TestTables.Model;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A compaction's pass over a table: the same entries as the block-by-block iterator, far fewer file reads, no cache fill. */
class ReadaheadTest {
    @TempDir
    Path dir;

    /** Counts readFully calls on the files it opens. */
    static final class CountingFs extends ForwardingFileSystem {
        final AtomicLong reads = new AtomicLong();

        CountingFs() {
            super(FileSystem.disk());
        }

        @Override
        public ReadableFile newReadableFile(Path p) throws IOException {
            return new ForwardingReadableFile(delegate().newReadableFile(p)) {
                @Override
                public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
                    reads.incrementAndGet();
                    super.readFully(pos, dst, off, len);
                }
            };
        }
    }

    /** Writes {@code model} to {@code name} with 512-byte blocks (many blocks per window). */
    private Path writeWithSmallBlocks(Model model, String name) throws IOException {
        Path p = dir.resolve(name);
        TestTables.write(
                FileSystem.disk(), p, model, TableBuilderOptions.defaults().blockSize(512));
        return p;
    }

    private static List<byte[][]> drain(InternalIterator it) {
        List<byte[][]> out = new ArrayList<>();
        for (it.seekToFirst(); it.valid(); it.next()) {
            out.add(new byte[][] {it.key(), it.value()});
        }
        return out;
    }

    private static void assertSameEntries(List<byte[][]> got, List<byte[][]> want, long seed) {
        assertThat(got).as("seed %d", seed).hasSameSizeAs(want);
        for (int i = 0; i < want.size(); i++) {
            assertThat(got.get(i)[0]).as("seed %d entry %d", seed, i).isEqualTo(want.get(i)[0]);
            assertThat(got.get(i)[1]).as("seed %d entry %d", seed, i).isEqualTo(want.get(i)[1]);
        }
    }

    @Test
    void onePassReadsWindowsNotBlocksAndLeavesTheCacheAlone() throws IOException {
        long seed = TestSeeds.seed("ReadaheadTest", "readahead.seed");
        Model model = TestTables.model(3000, new Random(seed));
        Path p = writeWithSmallBlocks(model, "000007.sst");
        long size = Files.size(p);
        for (int window : new int[] {2 * 4096, 5 * 4096, 1 << 20}) {
            CountingFs fs = new CountingFs();
            BlockCache cache = new BlockCache(8 << 20);
            ReadCounters counters = new ReadCounters();
            try (TableReader t = TableReader.open(fs, p, 7, cache, counters)) {
                long opened = fs.reads.get();
                List<byte[][]> got;
                try (InternalIterator it = t.compactionIterator(window)) {
                    got = drain(it);
                }
                long passReads = fs.reads.get() - opened;
                assertSameEntries(got, model.entries, seed);
                long blocks = counters.blockReads.sum();
                assertThat(blocks).as("every data block counted as read").isGreaterThan(100);
                // Each refill starts at the 4 KiB boundary below the next block, so it covers >= window - 4 KiB of it.
                assertThat(passReads)
                        .as("window %d: file reads for %d blocks", window, blocks)
                        .isLessThanOrEqualTo(size / (window - Readahead.ALIGNMENT) + 2);
                assertThat(cache.blockCount())
                        .as("a compaction's blocks stay out of the cache")
                        .isZero();

                // The block-by-block iterator: one read per block, through the cache.
                long before = fs.reads.get();
                try (InternalIterator it = t.iterator()) {
                    assertSameEntries(drain(it), model.entries, seed);
                }
                assertThat(fs.reads.get() - before).isEqualTo(blocks);
                assertThat(cache.blockCount()).isPositive();
            }
        }
    }

    @Test
    void aBlockLargerThanTheWindowIsReadAlone() throws IOException {
        Path p = dir.resolve("000008.sst");
        Model m = new Model();
        Random rnd = new Random(3);
        for (int i = 0; i < 12; i++) {
            byte[] value = new byte[i % 3 == 0 ? 20_000 : 100];
            rnd.nextBytes(value);
            m.entries.add(new byte[][] {InternalKey.encode(TestTables.userKey(i), 10 + i, ValueType.PUT), value});
            m.versions.put(TestTables.userKey(i), List.of(new TestTables.Version(10 + i, ValueType.PUT, value)));
        }
        TestTables.write(FileSystem.disk(), p, m, TableBuilderOptions.defaults().blockSize(1024));
        try (TableReader t = TableReader.open(FileSystem.disk(), p, 8, null, new ReadCounters());
                InternalIterator it = t.compactionIterator(4096)) {
            assertSameEntries(drain(it), m.entries, 3);
        }
    }

    @Test
    void aCorruptBlockInTheWindowIsACorruptionException() throws IOException {
        long seed = TestSeeds.seed("ReadaheadTest", "readahead.seed");
        Path p = writeWithSmallBlocks(TestTables.model(400, new Random(seed)), "000009.sst");
        byte[] bytes = Files.readAllBytes(p);
        bytes[700] ^= 0x5a; // inside the second data block
        Files.write(p, bytes);
        try (TableReader t = TableReader.open(FileSystem.disk(), p, 9, null, new ReadCounters());
                InternalIterator it = t.compactionIterator(1 << 20)) {
            assertThatThrownBy(() -> drain(it))
                    .isInstanceOf(CorruptionException.class)
                    .hasMessageContaining("checksum");
        }
    }

    @Test
    void windowSmallerThanADeviceBlockIsRefused() {
        assertThatThrownBy(() -> new Readahead(null, 0, 100)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSmallTableGetsAWindowOfItsOwnSize() {
        assertThat(new Readahead(null, 10_000, 1 << 20).windowSize()).isEqualTo(3 * 4096);
        assertThat(new Readahead(null, 0, 1 << 20).windowSize()).isEqualTo(4096);
        assertThat(new Readahead(null, 64L << 20, 1 << 20).windowSize()).isEqualTo(1 << 20);
    }
}
