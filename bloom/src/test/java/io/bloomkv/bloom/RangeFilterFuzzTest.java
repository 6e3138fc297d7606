package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fuzz target for the range-filter decoder ({@link RangeFilter#read}, bloom/FORMAT.md "Range filter"). Invariant: the
 * only exception that escapes is {@link FilterFormatException}; a filter that decodes answers range queries (drawn from
 * the input) without reading outside its memory (every off-heap read is bounds-checked and would throw), re-serializes
 * to the same bytes, and is released exactly once ({@link OffHeapLeakCheck} checks it). Byte 0 holds flags; bit 0
 * re-signs the rest (magic and CRC32C) so the fuzzer reaches the directory and Elias–Fano checks behind the checksum.
 * Plain runs replay src/test/resources/io/bloomkv/bloom/RangeFilterFuzzTestInputs (its seeds written by
 * {@link FilterFuzzSeedWriter}); JAZZER_FUZZ=1 fuzzes.
 */
@ExtendWith(OffHeapLeakCheck.class)
class RangeFilterFuzzTest {
    static void resign(byte[] b) {
        if (b.length < RangeFilter.HEADER_SIZE) {
            return;
        }
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        bb.putInt(RangeFilter.OFF_MAGIC, RangeFilter.MAGIC);
        CRC32C crc = new CRC32C();
        crc.update(b, 0, RangeFilter.OFF_CRC);
        crc.update(b, RangeFilter.HEADER_SIZE, b.length - RangeFilter.HEADER_SIZE);
        bb.putInt(RangeFilter.OFF_CRC, (int) crc.getValue());
    }

    @FuzzTest(maxDuration = "5m")
    void readRangeFilter(byte[] data) {
        byte[] b = new byte[Math.max(0, data.length - 1)];
        System.arraycopy(data, Math.min(1, data.length), b, 0, b.length);
        if (data.length > 0 && (data[0] & 1) != 0) {
            resign(b);
        }
        RangeFilter f;
        try {
            f = RangeFilter.read(b, 0, b.length);
        } catch (FilterFormatException expected) {
            return;
        }
        try (f) {
            assertThat(f.toByteArray()).isEqualTo(b);
            SplittableRandom rnd = new SplittableRandom(Arrays.hashCode(b));
            for (int i = 0; i < 32; i++) {
                byte[] lo = new byte[rnd.nextInt(12)];
                byte[] hi = new byte[rnd.nextInt(12)];
                for (int j = 0; j < lo.length; j++) {
                    lo[j] = b[rnd.nextInt(b.length)];
                }
                for (int j = 0; j < hi.length; j++) {
                    hi[j] = b[rnd.nextInt(b.length)];
                }
                f.mightContainRange(lo, hi);
                f.mightContainRange(null, hi);
                f.mightContainRange(lo, null);
                f.mightContainRange(lo, hi, false);
                f.mightContainRange(null, hi, false);
            }
        }
    }
}
