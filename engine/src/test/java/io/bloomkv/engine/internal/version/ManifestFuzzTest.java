package io.bloomkv.engine.internal.version;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.util.ByteReader;
import io.bloomkv.engine.internal.record.LogWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzz targets for the MANIFEST (engine/FORMAT.md, "MANIFEST and VersionEdit"): {@link
 * VersionEdit#decode} of one record, and the replay of a whole MANIFEST by {@link VersionSet#recover}.
 * Invariants: decode throws only its documented {@link ByteReader.MalformedInputException}, and an
 * edit it accepts encodes and decodes again; recover throws only {@link CorruptionException} (a
 * MANIFEST naming tables that do not exist is one), never another exception, a hang or an
 * allocation sized by a fuzzed field.
 *
 * <p>Input of {@code manifestReplay}: records, each a 2-byte little-endian length and that many
 * bytes, written through the real {@link LogWriter} (framing is fuzzed by LogFuzzTest), then
 * CURRENT naming that MANIFEST. Corpus:
 * src/test/resources/io/bloomkv/engine/internal/version/ManifestFuzzTestInputs (seeds from real MANIFESTs).
 */
class ManifestFuzzTest {
    private static Path tempDir;

    @FuzzTest(maxDuration = "5m")
    void versionEditDecode(byte[] record) {
        VersionEdit e;
        try {
            e = VersionEdit.decode(record);
        } catch (ByteReader.MalformedInputException expected) {
            return;
        }
        VersionEdit again = VersionEdit.decode(e.encode());
        if (!again.toString().equals(e.toString())) {
            throw new AssertionError("decode(encode(e)) != e: " + e + " vs " + again);
        }
    }

    /** Splits the input into records: 2-byte little-endian length, then that many bytes (cut at the end). */
    static List<byte[]> records(byte[] data) {
        List<byte[]> out = new ArrayList<>();
        int pos = 0;
        while (pos + 2 <= data.length) {
            int len = (data[pos] & 0xff) | (data[pos + 1] & 0xff) << 8;
            pos += 2;
            int end = Math.min(data.length, pos + len);
            out.add(Arrays.copyOfRange(data, pos, end));
            pos = end;
        }
        return out;
    }

    @FuzzTest(maxDuration = "5m")
    void manifestReplay(byte[] data) throws IOException {
        Path dir = dir();
        FileSystem fs = FileSystem.disk();
        try (LogWriter w = new LogWriter(fs.newWritableFile(dir.resolve("MANIFEST-000001")))) {
            for (byte[] r : records(data)) {
                w.addRecord(r);
            }
        }
        Files.write(dir.resolve("CURRENT"), "MANIFEST-000001\n".getBytes(StandardCharsets.US_ASCII));
        try (TableCache tables = new TableCache(fs, dir, null, new ReadCounters())) {
            VersionSet vs = new VersionSet(fs, dir, Options.defaults(), tables, () -> { });
            try {
                vs.recover();
                vs.current().toString();
                vs.liveFiles();
            } catch (CorruptionException expected) {
                // the documented failure
            } finally {
                vs.close();
            }
        }
    }

    private static synchronized Path dir() {
        try {
            if (tempDir == null) {
                tempDir = Files.createTempDirectory("bloomkv-manifest-fuzz");
            }
            return tempDir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterAll
    static void cleanUp() throws IOException {
        if (tempDir != null) {
            try (Stream<Path> s = Files.list(tempDir)) {
                for (Path p : s.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(tempDir);
            tempDir = null;
        }
    }
}
