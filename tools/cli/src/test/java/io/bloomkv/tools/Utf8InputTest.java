package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The line input of {@code put --input} and {@code sst write} ({@link Utf8LineReader}): split into lines as
 * {@link BufferedReader#readLine} splits them, and a line that is not valid UTF-8 refused with its number, from a file
 * and from stdin alike (stdin used to store U+FFFD in place of the bytes, a file to fail naming no line).
 */
class Utf8InputTest {
    @TempDir
    Path dir;

    private static final String[] PIECES = {
        "a", "key", "\t", "\n", "\r", "\r\n", "\n\n", "é", "日本", "\uD83D\uDE00", "\uFEFF", " ", "0123456789"
    };

    /**
     * Random valid UTF-8 inputs (every kind of line end, empty lines, no final end, multi-byte characters, a byte order
     * mark, lines longer than the reader's buffer, ends split across its refills): the same lines as a strict
     * {@code BufferedReader}, through a stream that returns few bytes per read.
     */
    @Test
    void validInputSplitsAsBufferedReaderSplitsIt() throws IOException {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("Utf8InputTest seed " + seed + " (replay: -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        for (int round = 0; round < 300; round++) {
            StringBuilder text = new StringBuilder();
            int pieces = rnd.nextInt(round < 290 ? 60 : 30_000);
            for (int i = 0; i < pieces; i++) {
                text.append(PIECES[rnd.nextInt(PIECES.length)]);
                if (rnd.nextInt(50) == 0) {
                    text.append("x".repeat(rnd.nextInt(70_000))); // past the reader's 64 KiB buffer
                }
            }
            byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
            List<String> expected = new ArrayList<>();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(
                    new ByteArrayInputStream(bytes),
                    StandardCharsets.UTF_8
                            .newDecoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)))) {
                for (String l = r.readLine(); l != null; l = r.readLine()) {
                    expected.add(l);
                }
            }
            List<String> got = new ArrayList<>();
            try (BufferedReader r = new Utf8LineReader(trickle(bytes, rnd.nextLong()), "in")) {
                for (String l = r.readLine(); l != null; l = r.readLine()) {
                    got.add(l);
                }
                assertThat(r.readLine()).as("after the end").isNull();
            }
            assertThat(got).as("seed %d round %d", seed, round).isEqualTo(expected);
        }
    }

    /**
     * Random bytes, valid UTF-8 or not (line ends, ASCII, lead and continuation bytes, 0xC0, 0xF8-0xFF, surrogate
     * encodings): the lines an independent split gives (bytes up to \n, \r or \r\n, each decoded strictly on its
     * own), up to the first line that does not decode, which is refused with its number.
     */
    @Test
    void anyBytesGiveTheLinesOfAByteSplitOrTheFirstBadLinesNumber() throws IOException {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("Utf8InputTest bytes seed " + seed + " (replay: -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        byte[] alphabet = {
            '\n',
            '\r',
            'a',
            '\t',
            0x00,
            0x7F,
            (byte) 0x80,
            (byte) 0xBF,
            (byte) 0xC0,
            (byte) 0xC3,
            (byte) 0xE2,
            (byte) 0xED,
            (byte) 0xA0,
            (byte) 0xF0,
            (byte) 0x9F,
            (byte) 0xF8,
            (byte) 0xFF
        };
        int refused = 0;
        for (int round = 0; round < 2000; round++) {
            byte[] bytes = new byte[rnd.nextInt(200)];
            for (int i = 0; i < bytes.length; i++) {
                // every fourth input ASCII only (always valid): both outcomes are covered whatever the seed
                bytes[i] = round % 4 == 0
                        ? alphabet[rnd.nextInt(4)]
                        : rnd.nextInt(3) == 0 ? (byte) rnd.nextInt(256) : alphabet[rnd.nextInt(alphabet.length)];
            }
            List<String> expected = new ArrayList<>();
            int badLine = splitAndDecode(bytes, expected);
            List<String> got = new ArrayList<>();
            String ctx = "seed " + seed + " round " + round;
            try (BufferedReader r = new Utf8LineReader(trickle(bytes, rnd.nextLong()), "in")) {
                if (badLine < 0) {
                    for (String l = r.readLine(); l != null; l = r.readLine()) {
                        got.add(l);
                    }
                    assertThat(got).as(ctx).isEqualTo(expected);
                } else {
                    refused++;
                    for (int i = 1; i < badLine; i++) {
                        assertThat(r.readLine()).as(ctx + " line " + i).isEqualTo(expected.get(i - 1));
                    }
                    assertThatThrownBy(r::readLine)
                            .as(ctx)
                            .isInstanceOf(CliException.class)
                            .hasMessageStartingWith("in:" + badLine + ": not valid UTF-8");
                }
            }
        }
        assertThat(refused).as("inputs with a bad line among 2000 random ones").isBetween(100, 1500);
    }

    /** The oracle: lines split on bytes, decoded strictly one by one; the 1-based number of the first bad one, or -1. */
    private static int splitAndDecode(byte[] bytes, List<String> lines) {
        int start = 0;
        int i = 0;
        while (i < bytes.length) {
            if (bytes[i] == '\n' || bytes[i] == '\r') {
                if (!decodeInto(bytes, start, i, lines)) {
                    return lines.size() + 1;
                }
                i += bytes[i] == '\r' && i + 1 < bytes.length && bytes[i + 1] == '\n' ? 2 : 1;
                start = i;
            } else {
                i++;
            }
        }
        if (start < bytes.length && !decodeInto(bytes, start, bytes.length, lines)) {
            return lines.size() + 1;
        }
        return -1;
    }

    private static boolean decodeInto(byte[] bytes, int from, int to, List<String> lines) {
        try {
            lines.add(StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes, from, to - from))
                    .toString());
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }

    @Test
    void aLineThatIsNotUtf8IsRefusedWithItsNumber() {
        byte[] bytes = lines("a\t1", "b\t2", "c\t\u0000", "d\t4").clone();
        bytes[bytes.length - 6] = (byte) 0xC3; // the NUL of line 3 becomes a truncated two-byte sequence
        assertThatThrownBy(() -> {
                    try (BufferedReader r = new Utf8LineReader(new ByteArrayInputStream(bytes), "f.tsv")) {
                        while (r.readLine() != null) {}
                    }
                })
                .isInstanceOf(CliException.class)
                .hasMessageStartingWith("f.tsv:3: not valid UTF-8");
    }

    /** put --input and sst write, from a file and from stdin: exit 2 naming the line, nothing stored in its place. */
    @Test
    void putAndSstWriteRefuseALineThatIsNotUtf8FromAFileAndFromStdin() throws IOException {
        byte[] bytes = badThirdLine();
        Path in = dir.resolve("bad.tsv");
        Files.write(in, bytes);
        Cli.Result put = Cli.run("put", dir.resolve("db1").toString(), "--create", "--input", in.toString());
        assertThat(put.exitCode()).as(put.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(put.err()).contains(in + ":3: not valid UTF-8");
        Cli.Result sst = Cli.run("sst", "write", dir.resolve("t.sst").toString(), "--input", in.toString());
        assertThat(sst.exitCode()).as(sst.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(sst.err()).contains(in + ":3: not valid UTF-8");
        InputStream saved = System.in;
        try {
            System.setIn(new ByteArrayInputStream(bytes));
            Cli.Result fromStdin = Cli.run("put", dir.resolve("db2").toString(), "--create", "--batch-size", "1");
            assertThat(fromStdin.exitCode()).as(fromStdin.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(fromStdin.err()).contains("-:3: not valid UTF-8");
        } finally {
            System.setIn(saved);
        }
        Cli.Result first = Cli.run("get", dir.resolve("db2").toString(), "a");
        assertThat(first.out().trim())
                .as("the lines before the bad one were stored")
                .isEqualTo("1");
        Cli.Result third = Cli.run("get", dir.resolve("db2").toString(), "c");
        assertThat(third.exitCode())
                .as("no U+FFFD value stored for line 3: " + third)
                .isNotEqualTo(ExitCodes.OK);
    }

    private static byte[] badThirdLine() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(lines("a\t1", "b\t2"));
        b.writeBytes("c\tv".getBytes(StandardCharsets.US_ASCII));
        b.write(0xFF); // never valid in UTF-8
        b.writeBytes(lines("", "d\t4"));
        return b.toByteArray();
    }

    private static byte[] lines(String... lines) {
        return (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** {@code bytes} through a stream whose reads return 1 to 100 bytes (or fill a larger request at times). */
    private static InputStream trickle(byte[] bytes, long seed) {
        Random rnd = new Random(seed);
        return new ByteArrayInputStream(bytes) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, rnd.nextInt(4) == 0 ? len : Math.min(len, 1 + rnd.nextInt(100)));
            }
        };
    }
}
