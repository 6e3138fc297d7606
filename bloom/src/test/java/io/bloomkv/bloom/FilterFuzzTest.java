package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fuzz targets for every decoder of serialized filters (bloom/FORMAT.md): {@link FilterHeader#parse},
 * {@link Filters#read} and {@link Filters#map}. Invariant: the only exception that escapes is the
 * documented {@link FilterFormatException}; a filter that decodes answers probes without touching
 * memory outside its region, and its three probe paths (the lone {@code mightContain}, the read path's
 * {@code touch} + {@code mightContainTouched}, the batch's {@code mightContainAll}) give the same answers (every access of {@link OffHeapRegion} is bounds-checked and would throw),
 * no length field makes it allocate more than the input holds, and it is released exactly once
 * ({@link OffHeapLeakCheck} checks it).
 *
 * <p>Input layout: byte 0 holds flags, the rest is the serialized filter. Flag bit 0 "re-signs" the
 * input (writes the magic and a correct CRC32C) so the fuzzer reaches the checks behind the
 * checksum, which it could not forge by mutation. Plain test runs replay the corpus in
 * src/test/resources/io/bloomkv/bloom/FilterFuzzTestInputs (seeds written by the real serializer through
 * {@link FilterFuzzSeedWriter}, plus every input that once found a bug); docs/reliability.md gives the fuzzing command.
 */
@ExtendWith(OffHeapLeakCheck.class)
class FilterFuzzTest {
    /** tmpfs where there is one (Linux): {@link #filtersMap} rewrites its file per input, which on a disk costs a journaled truncate. */
    private static final Path SHM = Path.of("/dev/shm");

    private static Path tempDir;
    /** The file {@link #filtersMap} maps, and a channel kept open on it to rewrite it. */
    private static Path mapFile;

    private static FileChannel mapChannel;

    private static byte[] body(byte[] data) {
        byte[] b = new byte[Math.max(0, data.length - 1)];
        System.arraycopy(data, Math.min(1, data.length), b, 0, b.length);
        if (data.length > 0 && (data[0] & 1) != 0) {
            resign(b);
        }
        return b;
    }

    /** Writes the magic and the CRC32C of header (bytes 0..60) and body into {@code b}, when it is long enough. */
    static void resign(byte[] b) {
        if (b.length < FilterHeader.HEADER_SIZE) {
            return;
        }
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        bb.putInt(FilterHeader.OFF_MAGIC, FilterHeader.MAGIC);
        CRC32C crc = new CRC32C();
        crc.update(b, 0, FilterHeader.OFF_CRC);
        crc.update(b, FilterHeader.HEADER_SIZE, b.length - FilterHeader.HEADER_SIZE);
        bb.putInt(FilterHeader.OFF_CRC, (int) crc.getValue());
    }

    /** Probes a decoded filter with hashes drawn from the input, checks its sizes against the input, and closes it. */
    private static void exercise(Filter f, byte[] serialized) {
        try {
            assertThat(f.serializedSize()).as("serialized size").isEqualTo(serialized.length);
            assertThat(f.sizeInBytes()).as("off-heap bytes within the input").isLessThanOrEqualTo(serialized.length);
            long h = 0x9E3779B97F4A7C15L;
            long[] hashes = new long[64];
            boolean[] lone = new boolean[hashes.length];
            int positives = 0;
            for (int i = 0; i < hashes.length; i++) {
                h = h * 6364136223846793005L + (i < serialized.length ? serialized[i] : i);
                hashes[i] = h;
                lone[i] = f.mightContain(h);
                positives += lone[i] ? 1 : 0;
                // The read path's probe (Db.get: touch the line, then test without the early exit) must agree.
                f.touch(h);
                assertThat(f.mightContainTouched(h))
                        .as("touched probe of hash %d agrees with the lone probe", i)
                        .isEqualTo(lone[i]);
            }
            boolean[] batch = new boolean[hashes.length];
            assertThat(f.mightContainAll(hashes, hashes.length, batch))
                    .as("batch positives")
                    .isEqualTo(positives);
            assertThat(batch)
                    .as("batch probe (multiGet) agrees with the lone probes")
                    .isEqualTo(lone);
            f.mightContain(serialized);
            f.fractionOfBitsSet();
        } finally {
            f.close();
        }
    }

    /** FilterHeader.parse: throws only {@link FilterFormatException}; a header it accepts describes exactly the input. */
    @FuzzTest(maxDuration = "5m")
    void filterHeader(byte[] data) {
        byte[] b = body(data);
        try {
            FilterHeader h = FilterHeader.parse(ByteBuffer.wrap(b), b.length);
            assertThat(FilterHeader.HEADER_SIZE + FilterHeader.bodyLength(h.kind, h.hashCount, h.bits, h.upperBlocks))
                    .isEqualTo(b.length);
        } catch (FilterFormatException expected) {
            // the documented failure
        }
    }

    /** Filters.read (byte array and ByteBuffer forms): throws only {@link FilterFormatException}. */
    @FuzzTest(maxDuration = "5m")
    void filtersRead(byte[] data) {
        byte[] b = body(data);
        try {
            exercise(Filters.read(b, 0, b.length), b);
        } catch (FilterFormatException expected) {
            // the documented failure
        }
        try {
            exercise(Filters.read(ByteBuffer.wrap(b)), b);
        } catch (FilterFormatException expected) {
            // the documented failure
        }
    }

    /**
     * Filters.map on the input written to a file (at an offset): throws only {@link FilterFormatException}.
     * One file (on tmpfs where there is one) is rewritten through a channel kept open and cut to exactly
     * the input's length, so the region check against the file's end stays exact; {@code Files.write} of
     * a fresh file per input made this target spend most of its time in open(O_TRUNC).
     */
    @FuzzTest(maxDuration = "5m")
    void filtersMap(byte[] data) throws IOException {
        byte[] b = body(data);
        int prefix = data.length > 0 ? (data[0] >>> 1) & 0x3f : 0;
        byte[] file = new byte[prefix + b.length];
        System.arraycopy(b, 0, file, prefix, b.length);
        Path p = writeMapFile(file);
        try {
            exercise(Filters.map(p, prefix, b.length), b);
        } catch (FilterFormatException expected) {
            // the documented failure
        }
    }

    /** Makes the map file hold exactly {@code contents} (no mapping of it is alive: every filter was closed). */
    private static synchronized Path writeMapFile(byte[] contents) throws IOException {
        if (mapChannel == null) {
            Path parent = Files.isDirectory(SHM) && Files.isWritable(SHM)
                    ? SHM
                    : Path.of(System.getProperty("java.io.tmpdir"));
            tempDir = Files.createTempDirectory(parent, "bloomkv-filter-fuzz");
            mapFile = tempDir.resolve("filter.bin");
            mapChannel = FileChannel.open(
                    mapFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
        }
        ByteBuffer src = ByteBuffer.wrap(contents);
        while (src.hasRemaining()) {
            mapChannel.write(src, src.position());
        }
        mapChannel.truncate(
                contents.length); // drops what a longer earlier input left: the file ends where the input does
        return mapFile;
    }

    @AfterAll
    static synchronized void cleanUp() throws IOException {
        if (mapChannel != null) {
            mapChannel.close();
            mapChannel = null;
        }
        if (tempDir != null) {
            Files.deleteIfExists(mapFile);
            Files.deleteIfExists(tempDir);
            tempDir = null;
        }
    }
}
