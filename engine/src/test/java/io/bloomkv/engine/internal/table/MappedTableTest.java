package io.bloomkv.engine.internal.table;

import static io.bloomkv.engine.internal.table.TestTables.userKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.fs.DiskFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.inspect.OpenResources;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.table.TestTables.Model;
import io.bloomkv.engine.internal.table.TestTables.Version;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Point reads of a mapped table (docs/operations.md, "Mapped reads"): each read copies its block out of the mapping
 * into the thread's buffers ({@link ReadScratch}) and checks it there. Reads give the same answers as {@code pread} of
 * the same file and as the model, pass after pass over reused buffers, on random tables (seeded); a damaged block is a
 * {@link CorruptionException} naming the file and the block at every read; bytes changed under the mapping after a
 * block was read are caught by the checksum at its next read. Each mapped table holds one mapping while open, and
 * after each test every table opened is released and every mapping unmapped.
 */
class MappedTableTest {
    @TempDir
    Path dir;

    private final FileSystem fs = FileSystem.disk();
    private long seed;
    private Random rnd;
    private long tablesBefore;
    private long mappedFilesBefore;
    private long mappedBytesBefore;

    @BeforeEach
    void seed() {
        seed = TestSeeds.seed("MappedTableTest", "table.seed");
        rnd = new Random(seed);
        tablesBefore = OpenResources.tables();
        mappedFilesBefore = DiskFileSystem.liveMappedFiles();
        mappedBytesBefore = DiskFileSystem.liveMappedBytes();
    }

    /** Every table the test opened is released, and its mapping unmapped. */
    @AfterEach
    void nothingLeaks() {
        assertThat(OpenResources.tables()).as("open tables, seed %d", seed).isEqualTo(tablesBefore);
        assertThat(DiskFileSystem.liveMappedFiles())
                .as("mapped files, seed %d", seed)
                .isEqualTo(mappedFilesBefore);
        assertThat(DiskFileSystem.liveMappedBytes())
                .as("mapped bytes, seed %d", seed)
                .isEqualTo(mappedBytesBefore);
    }

    /** The mapped table {@code t} holds one mapping of its whole file, beside those open before the test. */
    private void assertMapped(TableReader t, Path p) throws IOException {
        assertThat(DiskFileSystem.liveMappedFiles())
                .as("%s is mapped", p.getFileName())
                .isEqualTo(mappedFilesBefore + 1);
        assertThat(DiskFileSystem.liveMappedBytes()).isEqualTo(mappedBytesBefore + Files.size(p));
        assertThat(t.refCount()).isPositive();
    }

    private static String answer(TableReader.Entry e) {
        return e == null ? "none" : e.type() + " " + e.sequence() + " " + Arrays.toString(e.value());
    }

    private static String want(Version v) {
        return v == null
                ? "none"
                : v.type() + " " + v.seq() + " "
                        + Arrays.toString(v.type() == io.bloomkv.engine.internal.ValueType.DELETE ? null : v.value());
    }

    @Test
    void inPlaceReadsAnswerAsCopiedReads() throws IOException {
        for (int round = 0; round < 4; round++) {
            String ctx = "seed " + seed + " round " + round;
            Model m = TestTables.model(300 + rnd.nextInt(2000), rnd);
            Path p = dir.resolve("00000" + round + ".sst");
            int blockSize = 128 << rnd.nextInt(6);
            TestTables.write(
                    fs,
                    p,
                    m,
                    TableBuilderOptions.defaults()
                            .blockSize(blockSize)
                            .compression(round % 2 == 0 ? Compression.NONE : Compression.LZ4)
                            .bitsPerKey(round == 3 ? 0 : 10));
            List<byte[]> keys = new ArrayList<>(m.versions.keySet());
            long maxSeq = 0;
            for (List<Version> vs : m.versions.values()) {
                maxSeq = Math.max(maxSeq, vs.get(0).seq());
            }
            BlockCache cache = new BlockCache(1 << 20); // a mapped table of raw blocks does not use it
            ReadCounters mc = new ReadCounters();
            ReadCounters pc = new ReadCounters();
            try (TableReader mapped = TableReader.open(fs, p, 1, cache, mc, TableReadMode.MMAP);
                    TableReader pread = TableReader.open(fs, p, 2, null, pc, TableReadMode.PREAD)) {
                assertMapped(mapped, p);
                assertThat(OpenResources.tables()).isEqualTo(tablesBefore + 2);
                boolean raw = mapped.properties().dataBlocksCompressed() == 0;
                for (int pass = 0; pass < 3; pass++) {
                    for (int q = 0; q < 1500; q++) {
                        long id = rnd.nextInt(2 * keys.size() + 2); // odd ids: absent keys between present ones
                        byte[] uk = userKey(id);
                        long snap = rnd.nextInt(4) == 0 ? rnd.nextLong(maxSeq + 1) : InternalKey.MAX_SEQUENCE;
                        long h = Hashing.hash64(uk);
                        String got = answer(mapped.get(uk, h, snap));
                        assertThat(got)
                                .as(ctx + " pass " + pass + " key " + id)
                                .isEqualTo(answer(pread.get(uk, h, snap)));
                        assertThat(got).as(ctx).isEqualTo(want(m.visible(uk, snap)));
                    }
                }
                if (raw) {
                    assertThat(mc.blockReads.sum())
                            .as(ctx + ": every point read of a mapped raw block reads it")
                            .isEqualTo(pc.blockReads.sum());
                    assertThat(cache.blockCount())
                            .as(ctx + ": the mapping is the cache")
                            .isZero();
                }
            }
        }
    }

    /** The data blocks of table {@code p}, by index entry. */
    private List<BlockHandle> dataBlocks(Path p) throws IOException {
        List<BlockHandle> hs = new ArrayList<>();
        try (TableReader t = TableReader.open(fs, p, 9, null, null)) {
            for (TableReader.IndexEntry e : t.indexEntries()) {
                hs.add(e.handle());
            }
        }
        return hs;
    }

    private static void overwrite(Path p, long pos, byte[] b) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(b), pos);
        }
    }

    @Test
    void aDamagedBlockIsCorruptionAtEveryRead() throws IOException {
        Model m = TestTables.model(800, rnd);
        Path p = dir.resolve("000007.sst");
        TestTables.write(fs, p, m, TableBuilderOptions.defaults().blockSize(512));
        List<BlockHandle> blocks = dataBlocks(p);
        // The victim is a middle block whose last user key has no entry in the block before (a get of that key then
        // reads the victim first; one whose newer versions end the block before would be answered there).
        List<byte[]> lastKeys = new ArrayList<>();
        try (TableReader t = TableReader.open(fs, p, 9, null, null)) {
            for (TableReader.IndexEntry e : t.indexEntries()) {
                lastKeys.add(InternalKey.userKey(e.separator()));
            }
        }
        List<Integer> candidates = new ArrayList<>();
        for (int i = 1; i < blocks.size() - 1; i++) {
            if (!Arrays.equals(lastKeys.get(i - 1), lastKeys.get(i))) {
                candidates.add(i);
            }
        }
        int victim = candidates.get(rnd.nextInt(candidates.size()));
        BlockHandle h = blocks.get(victim);
        byte[] one = Files.readAllBytes(p);
        long pos = h.offset() + rnd.nextInt((int) h.size());
        overwrite(p, pos, new byte[] {(byte) (one[(int) pos] ^ 0x5a)});
        byte[] inVictim = lastKeys.get(victim); // a key of the damaged block, read there first
        try (TableReader t = TableReader.open(fs, p, 7, null, new ReadCounters(), TableReadMode.MMAP)) {
            assertMapped(t, p);
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> t.get(inVictim, Hashing.hash64(inVictim), InternalKey.MAX_SEQUENCE))
                        .as("seed %d read %d", seed, i)
                        .isInstanceOf(CorruptionException.class)
                        .hasMessageContaining("000007.sst")
                        .satisfies(e ->
                                assertThat(((CorruptionException) e).offset()).isEqualTo(h.offset()));
            }
            byte[] elsewhere = userKey(0);
            assertThat(answer(t.get(elsewhere, Hashing.hash64(elsewhere), InternalKey.MAX_SEQUENCE)))
                    .isEqualTo(want(m.visible(elsewhere, InternalKey.MAX_SEQUENCE)));
        }
    }

    /**
     * Bytes changed under the mapping after a block was read (the engine never writes a table file; here the test
     * does): the next point read of that block checks its checksum again and reports {@link CorruptionException}
     * naming the file and the block, never a value read from the changed bytes.
     */
    @Test
    void bytesChangedUnderTheMappingAreCaughtAtTheNextRead() throws IOException {
        Model m = TestTables.model(600, rnd);
        Path p = dir.resolve("000008.sst");
        TestTables.write(fs, p, m, TableBuilderOptions.defaults().blockSize(1024));
        List<BlockHandle> blocks = dataBlocks(p);
        byte[][] firstKeys = new byte[blocks.size()][];
        // Blocks whose last user key has no entry in the block before: a get of that key reads this block first (a
        // key whose newer versions end the block before would be answered there, without reading this one).
        List<Integer> readFirst = new ArrayList<>();
        try (TableReader t = TableReader.open(fs, p, 9, null, null)) {
            List<TableReader.IndexEntry> idx = t.indexEntries();
            for (int i = 0; i < idx.size(); i++) {
                firstKeys[i] = InternalKey.userKey(idx.get(i).separator()); // the block's last user key
                if (i == 0 || !Arrays.equals(firstKeys[i - 1], firstKeys[i])) {
                    readFirst.add(i);
                }
            }
        }
        byte[] original = Files.readAllBytes(p);
        try (TableReader t = TableReader.open(fs, p, 8, null, new ReadCounters(), TableReadMode.MMAP)) {
            assertMapped(t, p);
            for (int round = 0; round < 30; round++) {
                int b = readFirst.get(rnd.nextInt(readFirst.size()));
                BlockHandle h = blocks.get(b);
                byte[] uk = firstKeys[b];
                assertThat(answer(t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE)))
                        .isEqualTo(want(m.visible(uk, InternalKey.MAX_SEQUENCE)));
                long at = h.offset() + rnd.nextInt((int) h.size());
                overwrite(p, at, new byte[] {(byte) (original[(int) at] ^ (1 + rnd.nextInt(255)))});
                assertThatThrownBy(() -> t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE))
                        .as("seed %d round %d", seed, round)
                        .isInstanceOf(CorruptionException.class)
                        .hasMessageContaining("000008.sst")
                        .satisfies(e ->
                                assertThat(((CorruptionException) e).offset()).isEqualTo(h.offset()));
                overwrite(p, at, new byte[] {original[(int) at]});
            }
        }
    }
}
