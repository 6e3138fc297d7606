package io.bloomkv.engine.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.BytesReadableFile;
import io.bloomkv.engine.internal.util.Crc32c;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Fuzz target for {@link LogReader} (the WAL and MANIFEST framing, engine/FORMAT.md "Write-ahead
 * log"): the input is a whole log file. Invariant: the only exception that escapes is the documented
 * {@link CorruptionException} (damage followed by valid data); a torn tail is dropped quietly; never
 * another exception, a hang, or an allocation larger than the file from a length field; the records
 * returned never hold more bytes than the file.
 *
 * <p>Input layout: byte 0 holds flags, the rest is the file. Flag bit 0 "re-signs" every fragment
 * whose header and payload fit its block (correct masked CRC32C), so the fuzzer reaches the fragment
 * assembly behind the checksum. Corpus: src/test/resources/io/bloomkv/engine/internal/record/LogFuzzTestInputs.
 */
class LogFuzzTest {

    /** Writes the right CRC into every fragment header that fits, walking the file as LogReader does. */
    static void resign(byte[] f) {
        int pos = 0;
        while (pos < f.length) {
            int blockEnd = Math.min(f.length, (pos / LogFormat.BLOCK_SIZE + 1) * LogFormat.BLOCK_SIZE);
            if (blockEnd - pos < LogFormat.HEADER_SIZE) {
                pos = blockEnd;
                continue;
            }
            int len = (f[pos + 4] & 0xff) | (f[pos + 5] & 0xff) << 8;
            if (pos + LogFormat.HEADER_SIZE + len > blockEnd) {
                pos = blockEnd;
                continue;
            }
            int crc = Crc32c.maskedCrc32c(f, pos + 6, 1 + len);
            f[pos] = (byte) crc;
            f[pos + 1] = (byte) (crc >>> 8);
            f[pos + 2] = (byte) (crc >>> 16);
            f[pos + 3] = (byte) (crc >>> 24);
            pos += LogFormat.HEADER_SIZE + len;
        }
    }

    @FuzzTest(maxDuration = "5m")
    void logReader(byte[] data) throws IOException {
        byte[] file = data.length == 0 ? data : Arrays.copyOfRange(data, 1, data.length);
        if (data.length > 0 && (data[0] & 1) != 0) {
            resign(file);
        }
        long total = 0;
        try (LogReader r = new LogReader(new BytesReadableFile(file, Path.of("000001.log")))) {
            byte[] rec;
            while ((rec = r.readRecord()) != null) {
                total += rec.length;
                assertThat(total).as("record bytes within the file").isLessThanOrEqualTo(file.length);
                assertThat(r.lastGoodOffset()).isBetween(0L, (long) file.length);
            }
            assertThat(r.lastGoodOffset()).isBetween(0L, (long) file.length);
        } catch (CorruptionException expected) {
            // the documented failure
        }
    }
}
