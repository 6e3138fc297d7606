package io.bloomkv.engine.internal.version;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.InMemoryFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.record.LogWriter;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.util.ByteReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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
 * CURRENT naming that MANIFEST, in a fresh {@link InMemoryFileSystem} per input. Corpus:
 * src/test/resources/io/bloomkv/engine/internal/version/ManifestFuzzTestInputs (seeds from real MANIFESTs).
 */
class ManifestFuzzTest {
    /** The database directory of {@link #manifestReplay}, in its {@link InMemoryFileSystem}. */
    private static final Path DIR = Path.of("/fuzz/db");

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
        Path dir = DIR;
        FileSystem fs = new InMemoryFileSystem();
        fs.createDirectories(dir);
        try (LogWriter w = new LogWriter(fs.newWritableFile(dir.resolve("MANIFEST-000001")))) {
            for (byte[] r : records(data)) {
                w.addRecord(r);
            }
        }
        try (WritableFile current = fs.newWritableFile(dir.resolve("CURRENT"))) {
            current.append("MANIFEST-000001\n".getBytes(StandardCharsets.US_ASCII));
        }
        try (TableCache tables = new TableCache(fs, dir, null, new ReadCounters())) {
            VersionSet vs = new VersionSet(fs, dir, Options.defaults(), tables, () -> {});
            try {
                vs.recover();
                vs.current().toString();
                vs.liveFiles();
            } catch (CorruptionException expected) {
                // the documented failure
            } catch (io.bloomkv.engine.TtlMismatchException expected) {
                // documented too: a MANIFEST with the TTL flag (tag 8) opened without Options.ttl
            } finally {
                vs.close();
            }
        }
    }
}
