package io.bloomkv.engine.internal.table;

import static io.bloomkv.engine.internal.table.TestTables.userKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.fs.FileSystem;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Point reads of a mapped table of uncompressed blocks (docs/operations.md, "Mapped reads"): a block is copied and
 * verified at its first read after the table opened, then searched where it lies in the mapping. Both give the same
 * answers as {@code pread} of the same file and as the model, on random tables (seeded); a damaged block is a
 * {@link CorruptionException} naming the file and the block at every read and is never searched in place; bytes
 * changed under the mapping after the verification give values or corruption, never a read outside the block.
 */
class MappedTableTest {
    @TempDir
    Path dir;

    private final FileSystem fs = FileSystem.disk();
    private long seed;
    private Random rnd;

    @BeforeEach
    void seed() {
        seed = TestSeeds.seed("MappedTableTest", "table.seed");
        rnd = new Random(seed);
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
                boolean raw = mapped.properties().dataBlocksCompressed() == 0;
                assertThat(mapped.blocksVerifiedInMapping()).as(ctx).isEqualTo(raw ? 0 : -1);
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
                    assertThat(mapped.blocksVerifiedInMapping())
                            .as(ctx + ": blocks read since open are searched in place")
                            .isGreaterThan(0)
                            .isLessThanOrEqualTo((int) mapped.properties().dataBlocks());
                    assertThat(mc.blockReads.sum())
                            .as(ctx + ": in-place reads count as block reads")
                            .isEqualTo(pc.blockReads.sum());
                    assertThat(cache.blockCount()).isZero();
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
    void aDamagedBlockIsCorruptionAtEveryReadAndNeverSearchedInPlace() throws IOException {
        Model m = TestTables.model(800, rnd);
        Path p = dir.resolve("000007.sst");
        TestTables.write(fs, p, m, TableBuilderOptions.defaults().blockSize(512));
        List<BlockHandle> blocks = dataBlocks(p);
        int victim = 1 + rnd.nextInt(blocks.size() - 2);
        BlockHandle h = blocks.get(victim);
        byte[] one = Files.readAllBytes(p);
        long pos = h.offset() + rnd.nextInt((int) h.size());
        overwrite(p, pos, new byte[] {(byte) (one[(int) pos] ^ 0x5a)});
        // a key of the damaged block: the first user key after the previous block's last
        byte[] inVictim;
        try (TableReader t = TableReader.open(fs, p, 9, null, null)) {
            inVictim = InternalKey.userKey(t.indexEntries().get(victim).separator());
        }
        try (TableReader t = TableReader.open(fs, p, 7, null, new ReadCounters(), TableReadMode.MMAP)) {
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> t.get(inVictim, Hashing.hash64(inVictim), InternalKey.MAX_SEQUENCE))
                        .as("seed %d read %d", seed, i)
                        .isInstanceOf(CorruptionException.class)
                        .hasMessageContaining("000007.sst")
                        .satisfies(e ->
                                assertThat(((CorruptionException) e).offset()).isEqualTo(h.offset()));
            }
            assertThat(t.blocksVerifiedInMapping()).isZero();
            byte[] elsewhere = userKey(0);
            assertThat(answer(t.get(elsewhere, Hashing.hash64(elsewhere), InternalKey.MAX_SEQUENCE)))
                    .isEqualTo(want(m.visible(elsewhere, InternalKey.MAX_SEQUENCE)));
            assertThat(t.blocksVerifiedInMapping()).isEqualTo(1);
        }
    }

    /**
     * The trade-off of searching in place (docs/operations.md, "Mapped reads"): a verified block is not verified again,
     * so bytes changed under the mapping afterwards (the engine never writes a table file; here the test does) are
     * read as they are. The search stays inside the block whatever they say: each get gives a value, none, or a
     * {@link CorruptionException} naming the file and block, and never another exception or a JVM crash.
     */
    @Test
    void bytesChangedUnderTheMappingAfterVerificationStayInsideTheBlock() throws IOException {
        Model m = TestTables.model(600, rnd);
        Path p = dir.resolve("000008.sst");
        TestTables.write(fs, p, m, TableBuilderOptions.defaults().blockSize(1024));
        List<BlockHandle> blocks = dataBlocks(p);
        List<byte[]> keys = new ArrayList<>(m.versions.keySet());
        try (TableReader t = TableReader.open(fs, p, 8, null, new ReadCounters(), TableReadMode.MMAP)) {
            for (byte[] uk : keys) {
                t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE);
            }
            assertThat(t.blocksVerifiedInMapping()).isEqualTo(blocks.size());
            for (int round = 0; round < 200; round++) {
                BlockHandle h = blocks.get(rnd.nextInt(blocks.size()));
                byte[] garbage = new byte[1 + rnd.nextInt(8)];
                rnd.nextBytes(garbage);
                long at = h.offset() + rnd.nextInt((int) h.size());
                overwrite(p, at, garbage); // MAP_SHARED: the mapping sees the new bytes
                for (int q = 0; q < 10; q++) {
                    byte[] uk = userKey(rnd.nextInt(2 * keys.size()));
                    try {
                        t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE);
                    } catch (CorruptionException e) {
                        assertThat(e).as("seed %d round %d", seed, round).hasMessageContaining("000008.sst");
                    }
                }
            }
        }
    }
}
