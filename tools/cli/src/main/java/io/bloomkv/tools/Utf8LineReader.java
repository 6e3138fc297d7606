package io.bloomkv.tools;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The lines of a UTF-8 input (a file, or stdin) split as {@link BufferedReader#readLine} splits them (ended by
 * {@code \n}, {@code \r} or {@code \r\n}; the last line needs no end; a byte order mark stays part of the first line),
 * each decoded on its own, strictly: a line that is not valid UTF-8 is refused with its number (exit code 2). A
 * reader that decodes ahead ({@code InputStreamReader}) fails up to a buffer's worth of lines early, naming no line,
 * or, where it replaces bad bytes, stores U+FFFD in place of the input's bytes. Not thread-safe.
 */
final class Utf8LineReader extends BufferedReader {
    private final InputStream in;
    private final String name;
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    private final byte[] buf = new byte[1 << 16];
    private int pos;
    private int limit;
    private byte[] line = new byte[256];
    private long lineNo;
    /** The input ended. */
    private boolean eof;

    /** Lines of {@code in}, named {@code name} (a path, or "-" for stdin) in the error for a line that is not UTF-8. */
    Utf8LineReader(InputStream in, String name) {
        super(Reader.nullReader());
        this.in = in;
        this.name = name;
    }

    @Override
    public String readLine() throws IOException {
        int b = next();
        if (b < 0) {
            return null;
        }
        int len = 0;
        while (b >= 0 && b != '\n' && b != '\r') {
            if (len == line.length) {
                line = java.util.Arrays.copyOf(line, 2 * len);
            }
            line[len++] = (byte) b;
            b = next();
        }
        if (b == '\r' && peek() == '\n') {
            pos++;
        }
        lineNo++;
        try {
            return utf8.decode(ByteBuffer.wrap(line, 0, len)).toString();
        } catch (CharacterCodingException e) {
            throw new CliException(
                    ExitCodes.USAGE,
                    name + ":" + lineNo + ": not valid UTF-8 (give bytes that are not text in hex: --hex, --key-hex or"
                            + " --value-hex)");
        }
    }

    /** The next byte, or -1 at the end of the input. */
    private int next() throws IOException {
        return pos < limit || fill() ? buf[pos++] & 0xFF : -1;
    }

    /** The next byte without taking it, or -1 at the end of the input. */
    private int peek() throws IOException {
        return pos < limit || fill() ? buf[pos] & 0xFF : -1;
    }

    private boolean fill() throws IOException {
        while (!eof) {
            int n = in.read(buf, 0, buf.length);
            if (n < 0) {
                eof = true;
            } else if (n > 0) {
                pos = 0;
                limit = n;
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
