package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.DiskFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.InMemoryFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.util.Coding;
import io.bloomkv.engine.internal.util.Crc32c;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzz targets for every decoder of table bytes (engine/FORMAT.md, "Table"): the footer, data and
 * index blocks, the properties block, block decompression (LZ4, ZSTD), and {@link TableReader#open} on a whole fuzzed file read
 * through the engine's {@link FileSystem}, here an {@link InMemoryFileSystem} (then every entry iterated, every key
 * looked up, every checksum verified), and the same through a memory mapping of a real file (the default read path),
 * which must answer exactly as {@code pread} does. Invariant: the only exception that escapes is the documented {@link
 * CorruptionException}; never another exception, a hang, an {@link OutOfMemoryError} from a length
 * field, or a table left unreleased.
 *
 * <p>Input layout: byte 0 holds flags, the rest is the bytes under test. Flag bit 0 "re-signs" the
 * input (writes the magic and correct CRC32Cs of the footer and of every block its handles reach), so
 * the fuzzer gets past the checksums, which it could not forge by mutation. Plain test runs replay the
 * corpus in src/test/resources/io/bloomkv/engine/internal/table/TableFuzzTestInputs (seeds cut from tables the
 * real TableWriter wrote, plus every input that once found a bug); docs/reliability.md gives the
 * fuzzing command.
 */
class TableFuzzTest {
    /** Where {@link #tableOpen} writes its table, in a fresh {@link InMemoryFileSystem} per input. */
    private static final Path TABLE = Path.of("/fuzz/000001.sst");

    /** The directory of the real file {@link #tableOpenMapped} maps. */
    private static Path mapDir;

    static byte[] payload(byte[] data) {
        return data.length == 0 ? data : Arrays.copyOfRange(data, 1, data.length);
    }

    static boolean resign(byte[] data) {
        return data.length > 0 && (data[0] & 1) != 0;
    }

    /** Fixes the footer's magic and CRC, then the trailer CRC of each block its handles name that fits in the file. */
    static void resignFile(byte[] file) {
        int n = file.length;
        if (n < TableFormat.FOOTER_SIZE) {
            return;
        }
        int at = n - TableFormat.FOOTER_SIZE;
        Coding.putFixed64(file, at + Footer.OFF_MAGIC, TableFormat.MAGIC);
        Coding.putFixed32(file, at + Footer.OFF_CRC, Crc32c.maskedCrc32c(file, at, Footer.OFF_CRC));
        for (int off : new int[] {Footer.OFF_FILTER, Footer.OFF_INDEX, Footer.OFF_PROPERTIES}) {
            resignBlock(file, Coding.getFixed64(file, at + off), Coding.getFixed64(file, at + off + 8));
        }
    }

    /** Writes a known compression type (the one there if known, else none) and the right CRC into the trailer of block {@code offset+size}, if it lies in the file. */
    static void resignBlock(byte[] file, long offset, long size) {
        if (offset < 0
                || size < 0
                || offset > file.length
                || size > file.length - offset - TableFormat.BLOCK_TRAILER_SIZE) {
            return;
        }
        int o = (int) offset;
        int s = (int) size;
        int type = file[o + s] & 0xff;
        if (type != Compression.LZ4.code() && type != Compression.ZSTD.code()) {
            type = TableFormat.NO_COMPRESSION; // keep a compressed block compressed, so decompression is reached
        }
        file[o + s] = (byte) type;
        Coding.putFixed32(file, o + s + 1, TableWriter.blockChecksum(file, o, s, type));
    }

    /** Footer.decode: only {@link CorruptionException}; an accepted footer's handles lie before the footer. */
    @FuzzTest(maxDuration = "5m")
    void footer(byte[] data) {
        byte[] file = payload(data);
        if (resign(data)) {
            resignFile(file);
        }
        byte[] fb = new byte[TableFormat.FOOTER_SIZE];
        System.arraycopy(file, Math.max(0, file.length - fb.length), fb, 0, Math.min(fb.length, file.length));
        try {
            Footer f = Footer.decode(fb, Path.of("fuzz.sst"), file.length);
            for (BlockHandle h : List.of(f.filter(), f.index(), f.properties())) {
                assertThat(h.offset() + h.size() + TableFormat.BLOCK_TRAILER_SIZE)
                        .as("handle " + h + " within the file")
                        .isLessThanOrEqualTo(file.length - TableFormat.FOOTER_SIZE);
            }
        } catch (CorruptionException expected) {
            // the documented failure
        }
    }

    /** A data or index block (Block and its iterator, with seeks): only {@link CorruptionException}. */
    @FuzzTest(maxDuration = "5m")
    void block(byte[] data) {
        byte[] contents = payload(data);
        try {
            Block b = new Block(contents, Path.of("fuzz.sst"), 0);
            List<byte[]> keys = new ArrayList<>();
            BlockIterator it = b.iterator(InternalKey.COMPARATOR);
            for (it.seekToFirst(); it.valid() && keys.size() < 100_000; it.next()) {
                keys.add(it.key());
                it.value();
                // an index block's values are block handles
                BlockHandle.decode(it.value());
            }
            // Targets are internal keys, as the engine's are (a key read back is one: parseNext checks it).
            for (int i = 0; i < keys.size(); i += 1 + keys.size() / 8) {
                it.seek(keys.get(i));
            }
            it.seek(InternalKey.encode(contents, 1, io.bloomkv.engine.internal.ValueType.PUT));
            if (it.valid()) {
                it.key();
                it.value();
            }
        } catch (CorruptionException expected) {
            // the documented failure
        }
    }

    /** The properties block: Block, readRaw and decode: only {@link CorruptionException}. */
    @FuzzTest(maxDuration = "5m")
    void properties(byte[] data) {
        byte[] contents = payload(data);
        try {
            Block b = new Block(contents, Path.of("fuzz.sst"), 0);
            Map<String, byte[]> raw = TableProperties.readRaw(b);
            TableProperties p =
                    TableProperties.decode(raw, contents.length, TableFormat.FORMAT_VERSION, Path.of("fuzz.sst"), 0);
            p.toString();
            p.smallestUserKey();
            p.largestUserKey();
            p.userKeyInRange(contents);
        } catch (CorruptionException expected) {
            // the documented failure
        }
    }

    /**
     * Block decompression (engine/FORMAT.md, "Block compression"): byte 0 picks the trailer's type (LZ4, ZSTD,
     * or the byte itself), the rest is the stored block. Only {@link CorruptionException}; never an allocation
     * beyond the format's limit from the declared length; what it returns parses as a block or is corruption.
     */
    @FuzzTest(maxDuration = "5m")
    void blockDecompress(byte[] data) {
        if (data.length == 0) {
            return;
        }
        int type = (data[0] & 3) == 0
                ? Compression.LZ4.code()
                : (data[0] & 3) == 1 ? Compression.ZSTD.code() : data[0] & 0xff;
        byte[] stored = payload(data);
        try {
            byte[] contents = BlockCodec.decompress(type, stored, stored.length, Path.of("fuzz.sst"), 0, "data");
            assertThat(contents.length).isLessThanOrEqualTo(TableFormat.MAX_UNCOMPRESSED_BLOCK_SIZE);
            BlockIterator it = new Block(contents, Path.of("fuzz.sst"), 0).iterator(InternalKey.COMPARATOR);
            int n = 0;
            for (it.seekToFirst(); it.valid() && n < 100_000; it.next()) {
                it.key();
                it.value();
                n++;
            }
        } catch (CorruptionException expected) {
            // the documented failure
        }
    }

    /**
     * TableReader.open on the input as a whole table file, through the engine's FileSystem (an
     * {@link InMemoryFileSystem}: a file written and opened on disk per input made this target disk
     * bound); then every entry iterated and looked up, and every checksum verified. Only {@link
     * CorruptionException}. Re-signing also signs the data blocks the index names (a second open), so
     * entries are reached.
     */
    @FuzzTest(maxDuration = "5m")
    void tableOpen(byte[] data) throws IOException {
        byte[] file = tableFile(data);
        long live = TableReader.liveTables();
        readAll(inMemory(file), TABLE, TableReadMode.PREAD, file);
        assertThat(TableReader.liveTables()).as("the table is released").isEqualTo(live);
    }

    /**
     * The default read path ({@code Options.useMmapReads}): the same table file written to a real file (on tmpfs where
     * there is one) and read through a read-only mapping ({@link TableReadMode#MMAP}), where a read past the mapping
     * would crash the JVM rather than throw. Only {@link CorruptionException}, the mapping released, and every answer
     * (entries, gets, bad blocks, where it fails) the same as through {@code pread} of the same bytes.
     */
    @FuzzTest(maxDuration = "5m")
    void tableOpenMapped(byte[] data) throws IOException {
        byte[] file = tableFile(data);
        long live = TableReader.liveTables();
        long mappings = DiskFileSystem.liveMappedFiles();
        List<String> mapped = readAll(FileSystem.disk(), writeMapFile(file), TableReadMode.MMAP, file);
        assertThat(DiskFileSystem.liveMappedFiles())
                .as("the mapping is released")
                .isEqualTo(mappings);
        List<String> pread = readAll(inMemory(file), TABLE, TableReadMode.PREAD, file);
        assertThat(mapped).as("mapped reads answer as pread does").isEqualTo(pread);
        assertThat(TableReader.liveTables()).as("the tables are released").isEqualTo(live);
    }

    /** The input's table file; re-signed (footer, the blocks it names, then the data blocks its index names) when flagged. */
    private static byte[] tableFile(byte[] data) throws IOException {
        byte[] file = payload(data);
        if (resign(data)) {
            resignFile(file);
            try (TableReader r = TableReader.open(inMemory(file), TABLE, 1, null, null)) {
                for (TableReader.IndexEntry e : r.indexEntries()) {
                    resignBlock(file, e.handle().offset(), e.handle().size());
                }
            } catch (CorruptionException notSignable) {
                // read as it is
            }
        }
        return file;
    }

    /** A fresh in-memory file system holding {@code file} at {@link #TABLE}. */
    private static FileSystem inMemory(byte[] file) throws IOException {
        FileSystem fs = new InMemoryFileSystem();
        fs.createDirectories(TABLE.getParent());
        write(fs, TABLE, file);
        return fs;
    }

    /**
     * Opens table {@code p} as {@code mode} says, reads its properties, verifies its checksums, iterates every entry and
     * looks up every sixteenth key and one absent key; returns what it saw, up to the {@link CorruptionException} that
     * ended it (the only exception allowed), which is recorded too.
     */
    private static List<String> readAll(FileSystem fs, Path p, TableReadMode mode, byte[] file) throws IOException {
        List<String> seen = new ArrayList<>();
        try (TableReader r = TableReader.open(fs, p, 1, null, null, mode)) {
            seen.add("properties " + r.properties());
            for (TableReader.BadBlock bad : r.verifyChecksums()) {
                seen.add("bad " + bad.kind() + " " + bad.offset() + " " + bad.size());
            }
            List<byte[]> userKeys = new ArrayList<>();
            try (InternalIterator it = r.iterator()) {
                for (it.seekToFirst(); it.valid() && userKeys.size() < 100_000; it.next()) {
                    if (it.key().length >= InternalKey.TRAILER_SIZE) {
                        userKeys.add(InternalKey.userKey(it.key()));
                    }
                    seen.add("entry " + HexFormat.of().formatHex(it.key()) + " "
                            + HexFormat.of().formatHex(it.value()));
                }
                it.seek(InternalKey.encode(file, InternalKey.MAX_SEQUENCE, io.bloomkv.engine.internal.ValueType.PUT));
                seen.add("seek " + it.valid());
            }
            List<byte[]> lookups = new ArrayList<>();
            for (int i = 0; i < userKeys.size(); i += 1 + userKeys.size() / 16) {
                lookups.add(userKeys.get(i));
            }
            lookups.add(Arrays.copyOf(file, Math.min(file.length, 24)));
            // twice: the second pass reads the same blocks again through the thread's reused buffers (ReadScratch)
            List<byte[]> twice = new ArrayList<>(lookups);
            twice.addAll(lookups);
            for (byte[] k : twice) {
                TableReader.Entry e = r.get(k, Hashing.hash64(k), InternalKey.MAX_SEQUENCE);
                seen.add("get " + HexFormat.of().formatHex(k) + " "
                        + (e == null
                                ? "none"
                                : e.type() + " " + e.sequence() + " "
                                        + (e.value() == null
                                                ? "-"
                                                : HexFormat.of().formatHex(e.value()))));
            }
        } catch (CorruptionException expected) {
            seen.add("corrupt"); // the documented failure (its message names the file, which differs between the two)
        }
        return seen;
    }

    /**
     * Writes {@code contents} as the mapped target's file (no mapping of it is alive: each table was closed), in a
     * directory made once on tmpfs where there is one, where rewriting a file per input costs no journaled truncate.
     */
    private static synchronized Path writeMapFile(byte[] contents) throws IOException {
        if (mapDir == null) {
            Path shm = Path.of("/dev/shm");
            Path parent = Files.isDirectory(shm) && Files.isWritable(shm)
                    ? shm
                    : Path.of(System.getProperty("java.io.tmpdir"));
            mapDir = Files.createTempDirectory(parent, "bloomkv-table-fuzz");
        }
        Path p = mapDir.resolve(TABLE.getFileName().toString());
        write(FileSystem.disk(), p, contents);
        return p;
    }

    @AfterAll
    static synchronized void cleanUp() throws IOException {
        if (mapDir != null) {
            Files.deleteIfExists(mapDir.resolve(TABLE.getFileName().toString()));
            Files.deleteIfExists(mapDir);
            mapDir = null;
        }
    }

    private static void write(FileSystem fs, Path p, byte[] contents) throws IOException {
        try (WritableFile w = fs.newWritableFile(p)) {
            w.append(contents);
        }
    }
}
