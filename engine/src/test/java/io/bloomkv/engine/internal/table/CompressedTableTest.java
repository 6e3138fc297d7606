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
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.TestTables.Model;
import io.bloomkv.engine.internal.table.TestTables.Version;
import io.bloomkv.engine.internal.util.Coding;
import io.bloomkv.engine.internal.util.Crc32c;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Tables with LZ4 and ZSTD blocks: round trip, the 1/8 rule, and damaged compressed data (engine/FORMAT.md). */
class CompressedTableTest {
    @TempDir
    Path dir;

    private final FileSystem fs = FileSystem.disk();
    private long seed;
    private Random rnd;

    @BeforeEach
    void seed() {
        seed = TestSeeds.seed("CompressedTableTest", "table.seed");
        rnd = new Random(seed);
    }

    /** A model whose values compress to about half: random bytes of half the length, repeated (db_bench's generator). */
    private Model compressibleModel(int n) {
        Model m = TestTables.model(n, rnd);
        Model out = new Model();
        for (Map.Entry<byte[], List<Version>> e : m.versions.entrySet()) {
            List<Version> vs = new ArrayList<>();
            for (Version v : e.getValue()) {
                byte[] value = v.type() == ValueType.DELETE ? new byte[0] : halfCompressible(100);
                vs.add(new Version(v.seq(), v.type(), value));
            }
            out.versions.put(e.getKey(), vs);
            for (Version v : vs) {
                out.entries.add(new byte[][] {InternalKey.encode(e.getKey(), v.seq(), v.type()), v.value()});
            }
        }
        return out;
    }

    private byte[] halfCompressible(int len) {
        byte[] r = new byte[len / 2];
        rnd.nextBytes(r);
        byte[] v = new byte[len];
        for (int i = 0; i < len; i++) {
            v[i] = r[i % r.length];
        }
        return v;
    }

    private void checkAll(TableReader t, Model m, Path p, String ctx) throws IOException {
        for (Map.Entry<byte[], List<Version>> e : m.versions.entrySet()) {
            byte[] uk = e.getKey();
            Version want = e.getValue().get(0);
            TableReader.Entry got = t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE);
            assertThat(got).as(ctx).isNotNull();
            assertThat(got.sequence()).as(ctx).isEqualTo(want.seq());
            if (want.type() == ValueType.PUT) {
                assertThat(got.value()).as(ctx).isEqualTo(want.value());
            }
        }
        for (int i = 0; i < 200; i++) {
            byte[] absent = userKey(2L * rnd.nextInt(m.versions.size()) + 1);
            assertThat(t.get(absent, Hashing.hash64(absent), InternalKey.MAX_SEQUENCE))
                    .as(ctx)
                    .isNull();
        }
        try (InternalIterator it = t.iterator()) {
            int i = 0;
            for (it.seekToFirst(); it.valid(); it.next(), i++) {
                assertThat(it.key()).as(ctx).isEqualTo(m.entries.get(i)[0]);
                assertThat(it.value()).as(ctx).isEqualTo(m.entries.get(i)[1]);
            }
            assertThat(i).as(ctx).isEqualTo(m.entries.size());
        }
        assertThat(t.verifyChecksums()).as(ctx).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void roundTripStoresCompressedBlocksAndCachesThemUncompressed(Compression c) throws IOException {
        Model m = compressibleModel(2000);
        Path p = dir.resolve("000009.sst");
        TableProperties w = TestTables.write(
                fs, p, m, TableBuilderOptions.defaults().blockSize(1024).compression(c));
        String ctx = c + " seed " + seed;
        BlockCache cache = new BlockCache(64 << 20);
        ReadCounters counters = new ReadCounters();
        try (TableReader t = TableReader.open(fs, p, 9, cache, counters)) {
            TableProperties props = t.properties();
            assertThat(props.compression()).isEqualTo(c);
            assertThat(props.dataUncompressedSize()).isEqualTo(w.dataUncompressedSize());
            if (c == Compression.NONE) {
                assertThat(props.dataBlocksCompressed()).isZero();
                assertThat(props.dataSize()).isEqualTo(props.dataUncompressedSize());
            } else {
                // values compress to ~1/2 and keys share prefixes: every full block saves well over 1/8 (the
                // last block may hold a few bytes, e.g. one tombstone, and not shrink enough)
                assertThat(props.dataBlocksCompressed()).as(ctx).isBetween(props.dataBlocks() - 1, props.dataBlocks());
                assertThat((double) props.dataSize()).as(ctx).isLessThan(0.8 * props.dataUncompressedSize());
            }
            checkAll(t, m, p, ctx);
            // blockReadBytes counts stored bytes; the cache holds the (larger) uncompressed blocks
            assertThat(counters.blockReads.sum()).isEqualTo(props.dataBlocks());
            assertThat(counters.blockReadBytes.sum()).isEqualTo(props.dataSize());
            long uncompressedContents =
                    props.dataUncompressedSize() - props.dataBlocks() * TableFormat.BLOCK_TRAILER_SIZE;
            assertThat(cache.usedBytes())
                    .isEqualTo(uncompressedContents + props.dataBlocks() * BlockCache.PER_BLOCK_OVERHEAD);
        }
        assertThat(cache.blockCount()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void directReadsReturnTheSameAnswers(Compression c) throws IOException {
        Model m = compressibleModel(2000);
        Path p = dir.resolve("000011.sst");
        TestTables.write(
                fs, p, m, TableBuilderOptions.defaults().blockSize(1000).compression(c)); // unaligned blocks
        ReadCounters counters = new ReadCounters();
        try (TableReader t = TableReader.open(fs, p, 11, null, counters, TableReadMode.DIRECT)) {
            assertThat(t.filterMemoryBytes())
                    .as("the filter is loaded off-heap at open")
                    .isPositive();
            checkAll(t, m, p, c + " direct, seed " + seed);
            // the last data block of the file, alone
            TableReader.IndexEntry last = t.indexEntries().get(t.indexEntries().size() - 1);
            byte[] uk = InternalKey.userKey(last.separator());
            long readsBefore = counters.blockReads.sum();
            assertThat(t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE)).isNotNull();
            assertThat(counters.blockReads.sum() - readsBefore).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Compression.class,
            names = {"LZ4", "ZSTD"})
    void blocksThatSaveLessThanAnEighthAreStoredAsIs(Compression c) throws IOException {
        Model m = TestTables.model(1500, rnd);
        // Random (incompressible) values in the first half of the keys, compressible ones in the second.
        Model mixed = new Model();
        int i = 0;
        for (Map.Entry<byte[], List<Version>> e : m.versions.entrySet()) {
            List<Version> vs = new ArrayList<>();
            for (Version v : e.getValue()) {
                byte[] value = new byte[200];
                if (i < 750) {
                    rnd.nextBytes(value);
                } else {
                    value = halfCompressible(200);
                }
                vs.add(new Version(v.seq(), ValueType.PUT, value));
            }
            i++;
            mixed.versions.put(e.getKey(), vs);
            for (Version v : vs) {
                mixed.entries.add(new byte[][] {InternalKey.encode(e.getKey(), v.seq(), ValueType.PUT), v.value()});
            }
        }
        Path p = dir.resolve("000010.sst");
        TableProperties w = TestTables.write(
                fs, p, mixed, TableBuilderOptions.defaults().blockSize(2048).compression(c));
        assertThat(w.dataBlocksCompressed()).as("seed %d", seed).isPositive().isLessThan(w.dataBlocks());
        byte[] bytes = Files.readAllBytes(p);
        int stored = 0;
        try (TableReader t = TableReader.open(fs, p, 10, null, null)) {
            for (TableReader.IndexEntry ie : t.indexEntries()) {
                int type = bytes[(int) (ie.handle().offset() + ie.handle().size())] & 0xff;
                assertThat(type).isIn(TableFormat.NO_COMPRESSION, c.code());
                stored += type == c.code() ? 1 : 0;
            }
            assertThat(stored).isEqualTo(w.dataBlocksCompressed());
            checkAll(t, mixed, p, c + " seed " + seed);
        }
    }

    // ----- damaged compressed blocks

    /** Writes a small compressed table and returns its bytes and data-block handles. */
    private record Written(Path path, byte[] bytes, List<BlockHandle> data, Model model) {}

    private Written writeSmall(Compression c) throws IOException {
        Model m = compressibleModel(300);
        Path p = dir.resolve("small-" + c + ".sst");
        TestTables.write(fs, p, m, TableBuilderOptions.defaults().blockSize(512).compression(c));
        List<BlockHandle> data = new ArrayList<>();
        try (TableReader t = TableReader.open(fs, p, 1, null, null)) {
            for (TableReader.IndexEntry ie : t.indexEntries()) {
                data.add(ie.handle());
            }
        }
        return new Written(p, Files.readAllBytes(p), data, m);
    }

    /** Recomputes the trailer checksum of block {@code h} in {@code b}, so the damage reaches the decompressor. */
    private static void fixCrc(byte[] b, BlockHandle h) {
        int n = (int) h.size();
        int off = (int) h.offset();
        CRC32C crc = new CRC32C();
        crc.update(b, off, n);
        crc.update(b[off + n] & 0xff);
        Coding.putFixed32(b, off + n + 1, Crc32c.mask((int) crc.getValue()));
    }

    /**
     * Every get and a full scan of {@code bytes}: each answer is the model's, or a CorruptionException
     * naming the file and a data block's offset. {@code mayDiffer}: the damage was re-checksummed, so a
     * codec may legitimately decode other bytes; then an answer may differ but nothing else may happen
     * (no other exception, no crash, no huge allocation). Returns the number of CorruptionExceptions.
     */
    private int readDamaged(byte[] bytes, Written w, boolean mayDiffer, String ctx) throws IOException {
        Path p = dir.resolve("damaged.sst");
        Files.write(p, bytes);
        int threw = 0;
        try (TableReader t = TableReader.open(fs, p, 2, null, null)) {
            for (Map.Entry<byte[], List<Version>> e : w.model().versions.entrySet()) {
                byte[] uk = e.getKey();
                try {
                    TableReader.Entry got = t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE);
                    Version want = e.getValue().get(0);
                    if (!mayDiffer) {
                        assertThat(got).as(ctx).isNotNull();
                        if (want.type() == ValueType.PUT) {
                            assertThat(got.value())
                                    .as("never a wrong value: " + ctx)
                                    .isEqualTo(want.value());
                        }
                    }
                } catch (CorruptionException ex) {
                    assertThat(ex.file()).as(ctx).isEqualTo(p);
                    assertThat(w.data().stream().map(BlockHandle::offset))
                            .as(ctx)
                            .contains(ex.offset());
                    threw++;
                }
            }
            // The scan reads every data block, also one that holds only older versions, which no get reads.
            try (InternalIterator it = t.iterator()) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    it.key();
                }
            } catch (CorruptionException ex) {
                assertThat(ex.file()).as(ctx).isEqualTo(p);
                assertThat(w.data().stream().map(BlockHandle::offset)).as(ctx).contains(ex.offset());
                threw++;
            }
        }
        return threw;
    }

    @ParameterizedTest
    @EnumSource(
            value = Compression.class,
            names = {"LZ4", "ZSTD"})
    void flippedBytesInCompressedBlocksAreCorruptionWithOrWithoutAFixedChecksum(Compression c) throws IOException {
        Written w = writeSmall(c);
        String base = c + " seed " + seed;
        int codecRejected = 0;
        // The flips are fresh on every build, and most land in literals: 40 of them all landing there was rare but
        // not negligible for a check run on every push; 80 all doing so is the square of that chance.
        for (int round = 0; round < 80; round++) {
            BlockHandle h = w.data().get(rnd.nextInt(w.data().size()));
            int pos = (int) (h.offset() + rnd.nextInt((int) h.size()));
            byte[] b = w.bytes().clone();
            b[pos] ^= (byte) (1 + rnd.nextInt(255));
            String ctx = base + " byte " + pos;
            // checksum not fixed: the CRC catches it, the block is never decompressed
            assertThat(readDamaged(b, w, false, ctx)).as(ctx).isPositive();
            // checksum fixed: only the decompressor and the block parser stand between the damage and the reader
            fixCrc(b, h);
            codecRejected += readDamaged(b, w, true, ctx + " (crc fixed)") > 0 ? 1 : 0;
        }
        // A flip in a literal decodes to other bytes of the same length (that is what the CRC is for); a flip
        // in the stream's structure is rejected by the codec or the length check: some of 80 random flips are.
        assertThat(codecRejected).as(base).isPositive();
    }

    @ParameterizedTest
    @EnumSource(
            value = Compression.class,
            names = {"LZ4", "ZSTD"})
    void badLengthsWrongCodecAndTruncationAreCorruption(Compression c) throws IOException {
        Written w = writeSmall(c);
        BlockHandle h = w.data().get(w.data().size() / 2);
        int off = (int) h.offset();
        int n = (int) h.size();
        String ctx = c + " seed " + seed;
        int declared = (int) new Coding.Reader(w.bytes(), off, off + n).varint64();

        // the uncompressed-length header: too large (would allocate 2 GiB), one more, one less, zero
        for (long bad :
                new long[] {0xffffffffL, TableFormat.MAX_UNCOMPRESSED_BLOCK_SIZE + 1L, declared + 1L, declared - 1L, 0
                }) {
            byte[] stored = withDeclaredLength(w.bytes(), off, n, bad);
            assertThatThrownBy(
                            () -> BlockCodec.decompress(c.code(), stored, stored.length, w.path(), h.offset(), "data"))
                    .as("declared %d, %s", bad, ctx)
                    .isInstanceOfSatisfying(
                            CorruptionException.class,
                            e -> assertThat(e.offset()).isEqualTo(h.offset()));
        }
        // a truncated stream, at every length
        byte[] whole = java.util.Arrays.copyOfRange(w.bytes(), off, off + n);
        assertThat(BlockCodec.decompress(c.code(), whole, n, w.path(), h.offset(), "data"))
                .hasSize(declared);
        for (int len = 0; len < n; len++) {
            int l = len;
            assertThatThrownBy(() -> BlockCodec.decompress(c.code(), whole, l, w.path(), h.offset(), "data"))
                    .as("truncated to %d, %s", len, ctx)
                    .isInstanceOf(CorruptionException.class);
        }
        // the other codec's byte, and an unknown one, with the checksum fixed up
        Compression other = c == Compression.LZ4 ? Compression.ZSTD : Compression.LZ4;
        for (int type : new int[] {other.code(), 1, 99, 255}) {
            byte[] b = w.bytes().clone();
            b[off + n] = (byte) type;
            fixCrc(b, h);
            assertThat(readDamaged(b, w, false, ctx + " type " + type)).isPositive();
        }
        // type NONE with the checksum fixed: the compressed bytes are parsed as a raw block
        byte[] b = w.bytes().clone();
        b[off + n] = (byte) TableFormat.NO_COMPRESSION;
        fixCrc(b, h);
        readDamaged(b, w, true, ctx + " type 0");
    }

    /** The block at {@code off} with its length header replaced by {@code declared} (same codec payload). */
    private static byte[] withDeclaredLength(byte[] file, int off, int n, long declared) {
        Coding.Reader r = new Coding.Reader(file, off, off + n);
        r.varint64();
        int payload = r.pos;
        byte[] header = new byte[5];
        int h = Coding.putVarint32(header, 0, (int) declared);
        byte[] out = new byte[h + (off + n - payload)];
        System.arraycopy(header, 0, out, 0, h);
        System.arraycopy(file, payload, out, h, off + n - payload);
        return out;
    }

    @ParameterizedTest
    @EnumSource(
            value = Compression.class,
            names = {"LZ4", "ZSTD"})
    void randomGarbageNeverEscapesAsAnythingButCorruption(Compression c) {
        Path p = dir.resolve("garbage.sst");
        for (int i = 0; i < 1500; i++) {
            byte[] garbage = new byte[1 + rnd.nextInt(600)];
            rnd.nextBytes(garbage);
            if (rnd.nextBoolean()) { // a plausible length header, so the codec itself runs
                Coding.putVarint32(garbage, 0, rnd.nextInt(5000) & 0x7f);
            }
            try {
                byte[] out = BlockCodec.decompress(c.code(), garbage, garbage.length, p, 77, "data");
                assertThat(out.length).isLessThanOrEqualTo(TableFormat.MAX_UNCOMPRESSED_BLOCK_SIZE);
            } catch (CorruptionException e) {
                assertThat(e.offset()).isEqualTo(77);
                assertThat(e.file()).isEqualTo(p);
            }
        }
    }

    @Test
    void filterAndPropertiesBlocksAreNeverCompressed() throws IOException {
        Written w = writeSmall(Compression.ZSTD);
        try (TableReader t = TableReader.open(fs, w.path(), 1, null, null)) {
            Footer f = t.footer();
            assertThat(w.bytes()[(int) (f.filter().offset() + f.filter().size())])
                    .isEqualTo((byte) 0);
            assertThat(w.bytes()[(int) (f.properties().offset() + f.properties().size())])
                    .isEqualTo((byte) 0);
            assertThat(w.bytes()[(int) (f.index().offset() + f.index().size())])
                    .isEqualTo((byte) Compression.ZSTD.code());
            // a filter block claiming compression (checksum fixed) is a broken filter: read without it
            byte[] b = w.bytes().clone();
            b[(int) (f.filter().offset() + f.filter().size())] = (byte) Compression.LZ4.code();
            fixCrc(b, f.filter());
            Path p = dir.resolve("filter.sst");
            Files.write(p, b);
            try (TableReader bad = TableReader.open(fs, p, 3, null, null)) {
                assertThat(bad.filterBroken()).isTrue();
                assertThat(bad.filterProblem()).contains("compression type");
            }
        }
    }

    @Test
    void compressionCodesAreExplicit() {
        assertThat(Compression.NONE.code()).isZero();
        assertThat(Compression.LZ4.code()).isEqualTo(4);
        assertThat(Compression.ZSTD.code()).isEqualTo(7);
        for (Compression c : Compression.values()) {
            assertThat(Compression.fromCode(c.code())).isEqualTo(c);
        }
        assertThatThrownBy(() -> Compression.fromCode(1)).isInstanceOf(IllegalArgumentException.class);
    }
}
