package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fuzz target for the compressed-filter decoder ({@link Filters#readCompressed}, bloom/FORMAT.md "Compressed form").
 * Invariant: the only exception that escapes is {@link FilterFormatException}; the decoder allocates no more than its
 * body limit (1 MiB here), reads no byte past the record, and a record it accepts re-encodes to a record that decodes to
 * the same filter; every filter it decodes is released exactly once ({@link OffHeapLeakCheck} checks it). Byte 0 of
 * the input holds flags; bit 0 "re-signs" the rest (writes the magic and the record's CRC32C) so the fuzzer reaches the
 * gap decoder behind the checksum. The embedded filter header's CRC covers the uncompressed body, which the fuzzer
 * cannot forge either: a mutated payload is still decoded in full before that check rejects it. Plain runs replay
 * src/test/resources/io/bloomkv/bloom/CompressedFilterFuzzTestInputs (its seeds written by
 * {@link FilterFuzzSeedWriter}); JAZZER_FUZZ=1 fuzzes.
 */
@ExtendWith(OffHeapLeakCheck.class)
class CompressedFilterFuzzTest {
    private static final long MAX_BODY = 1 << 20;

    /** Writes the magic and the trailing CRC32C over everything before it. */
    static void resign(byte[] b) {
        if (b.length < CompressedFilterCodec.PREFIX_SIZE + CompressedFilterCodec.CRC_SIZE) {
            return;
        }
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        bb.putInt(CompressedFilterCodec.OFF_MAGIC, CompressedFilterCodec.MAGIC);
        CRC32C crc = new CRC32C();
        crc.update(b, 0, b.length - CompressedFilterCodec.CRC_SIZE);
        bb.putInt(b.length - CompressedFilterCodec.CRC_SIZE, (int) crc.getValue());
    }

    @FuzzTest(maxDuration = "5m")
    void readCompressed(byte[] data) throws IOException {
        byte[] b = new byte[Math.max(0, data.length - 1)];
        System.arraycopy(data, Math.min(1, data.length), b, 0, b.length);
        if (data.length > 0 && (data[0] & 1) != 0) {
            resign(b);
        }
        ByteArrayInputStream in = new ByteArrayInputStream(b);
        Filter f;
        try {
            f = Filters.readCompressed(in, MAX_BODY);
        } catch (FilterFormatException expected) {
            return; // the documented failure
        }
        try (f) {
            assertThat(b.length - in.available()).as("bytes consumed").isLessThanOrEqualTo(b.length);
            assertThat(f.sizeInBytes()).isLessThanOrEqualTo(MAX_BODY + 64);
            ByteArrayOutputStream again = new ByteArrayOutputStream();
            f.writeCompressed(again);
            try (Filter back = Filters.readCompressed(new ByteArrayInputStream(again.toByteArray()))) {
                assertThat(back.toByteArray()).isEqualTo(f.toByteArray());
            }
            f.mightContain(b);
            f.approximateKeyCount();
        }
    }
}
