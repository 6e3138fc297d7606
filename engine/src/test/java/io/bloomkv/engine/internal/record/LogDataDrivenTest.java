package io.bloomkv.engine.internal.record;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.FileSystem;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Data-driven log tests (src/test/resources/testdata/wal/*): the fragment layout is decoded here
 * independently of {@link LogReader}, pinning the format of engine/FORMAT.md byte by byte.
 *
 * <p>Commands: {@code write} (one record per input line: text, {@code size=N} for N bytes
 * {@code a..z} repeating, or {@code empty}) prints the fragments; {@code truncate N},
 * {@code flip OFFSET}, {@code append-zeros N} damage the file; {@code read} prints what
 * {@link LogReader} returns.
 */
class LogDataDrivenTest {
    @TempDir
    Path dir;

    private byte[] file = new byte[0];

    @Test
    void basic() throws Exception {
        DataDriven.run(DataDriven.testdata("wal/basic"), this::handle);
    }

    @Test
    void recovery() throws Exception {
        DataDriven.run(DataDriven.testdata("wal/recovery"), this::handle);
    }

    private String handle(DataDriven.Case c) throws Exception {
        switch (c.command) {
            case "write": {
                Path p = dir.resolve("w.log");
                try (LogWriter w = new LogWriter(FileSystem.disk().newWritableFile(p))) {
                    for (String line : c.input) {
                        w.addRecord(record(line));
                    }
                    w.sync();
                }
                file = Files.readAllBytes(p);
                return describe(file);
            }
            case "truncate":
                file = Arrays.copyOf(file, Integer.parseInt(c.arg(0)));
                return "size " + file.length;
            case "append-zeros":
                file = Arrays.copyOf(file, file.length + Integer.parseInt(c.arg(0)));
                return "size " + file.length;
            case "flip":
                file[Integer.parseInt(c.arg(0))] ^=
                        (byte) Integer.decode(c.get("xor", "0x01")).intValue();
                return "size " + file.length;
            case "read":
                return read();
            default:
                throw new IllegalArgumentException("unknown command " + c.command);
        }
    }

    private static byte[] record(String spec) {
        if (spec.equals("empty")) {
            return new byte[0];
        }
        if (spec.startsWith("size=")) {
            byte[] b = new byte[Integer.parseInt(spec.substring(5))];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) ('a' + i % 26);
            }
            return b;
        }
        return spec.getBytes(StandardCharsets.UTF_8);
    }

    /** Decodes the fragments from raw bytes, independently of LogReader. */
    private static String describe(byte[] b) {
        List<String> out = new ArrayList<>();
        String[] types = {"ZERO", "FULL", "FIRST", "MIDDLE", "LAST"};
        int pos = 0;
        while (pos < b.length) {
            int inBlock = 32768 - pos % 32768;
            if (inBlock < 7) {
                boolean zeros = true;
                for (int i = 0; i < Math.min(inBlock, b.length - pos); i++) {
                    zeros &= b[pos + i] == 0;
                }
                out.add("@" + pos + " pad " + inBlock + (zeros ? " zeros" : " NOT ZERO"));
                pos += inBlock;
                continue;
            }
            int crc =
                    (b[pos] & 0xff) | (b[pos + 1] & 0xff) << 8 | (b[pos + 2] & 0xff) << 16 | (b[pos + 3] & 0xff) << 24;
            int len = (b[pos + 4] & 0xff) | (b[pos + 5] & 0xff) << 8;
            int type = b[pos + 6] & 0xff;
            out.add(String.format(
                    "@%d %s len=%d crc=0x%08x", pos, type < types.length ? types[type] : "?" + type, len, crc));
            pos += 7 + len;
        }
        out.add("size " + b.length);
        return String.join("\n", out);
    }

    private String read() throws Exception {
        Path p = dir.resolve("r.log");
        Files.write(p, file);
        List<String> out = new ArrayList<>();
        try (LogReader r = new LogReader(FileSystem.disk().newReadableFile(p))) {
            byte[] rec;
            while ((rec = r.readRecord()) != null) {
                String text = new String(rec, 0, Math.min(rec.length, 12), StandardCharsets.UTF_8);
                out.add("record @" + r.lastRecordOffset() + " len=" + rec.length + " " + text
                        + (rec.length > 12 ? "..." : ""));
            }
            out.add(
                    r.tailDropped()
                            ? "torn tail dropped at " + r.lastGoodOffset() + " (" + r.droppedBytes() + " bytes)"
                            : "end at " + r.lastGoodOffset());
        } catch (CorruptionException e) {
            out.add("corruption at " + e.offset() + ": " + e.getMessage().replaceAll(" \\(file .*", ""));
        }
        return String.join("\n", out);
    }
}
