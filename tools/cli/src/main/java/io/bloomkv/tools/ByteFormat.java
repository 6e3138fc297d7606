package io.bloomkv.tools;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Locale;

/**
 * How keys and values are typed on the command line and shown in output.
 *
 * <ul>
 *   <li>{@link #UTF8}: input is taken literally as UTF-8 bytes. Output is the UTF-8 text when the
 *       bytes are valid UTF-8; control characters, a backslash and bytes that are not valid UTF-8
 *       are shown as {@code \xHH} (a backslash as {@code \\}), so every line of output stays one
 *       line and binary data stays visible.</li>
 *   <li>{@link #HEX}: lowercase hex pairs on output; on input hex pairs in either case, with an
 *       optional {@code 0x} prefix.</li>
 * </ul>
 */
public enum ByteFormat {
    UTF8,
    HEX;

    private static final HexFormat HEX_FORMAT = HexFormat.of();

    /** Parses a command-line argument into bytes. @throws IllegalArgumentException for malformed hex */
    public byte[] parse(String text) {
        if (this == UTF8) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        String digits = text.startsWith("0x") || text.startsWith("0X") ? text.substring(2) : text;
        if (digits.length() % 2 != 0) {
            throw new IllegalArgumentException("hex input must have an even number of digits: '" + text + "'");
        }
        try {
            return HEX_FORMAT.parseHex(digits);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a hex string: '" + text + "'", e);
        }
    }

    /** Renders bytes for output as described in the class comment. */
    public String format(byte[] bytes) {
        return this == HEX ? HEX_FORMAT.formatHex(bytes) : formatUtf8(bytes);
    }

    private static String formatUtf8(byte[] bytes) {
        CharsetDecoder decoder = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        StringBuilder out = new StringBuilder(bytes.length + 8);
        try {
            CharBuffer chars = decoder.decode(ByteBuffer.wrap(bytes));
            for (int i = 0; i < chars.length(); i++) {
                char c = chars.charAt(i);
                if (c == '\\') {
                    out.append("\\\\");
                } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
                    // Control characters (C0, DEL, C1): show the UTF-8 bytes that encode them.
                    for (byte b : String.valueOf(c).getBytes(StandardCharsets.UTF_8)) {
                        appendEscaped(out, b);
                    }
                } else {
                    out.append(c);
                }
            }
        } catch (CharacterCodingException e) {
            out.setLength(0);
            for (byte b : bytes) {
                int u = b & 0xff;
                if (u == '\\') {
                    out.append("\\\\");
                } else if (u >= 0x20 && u < 0x7f) {
                    out.append((char) u);
                } else {
                    appendEscaped(out, b);
                }
            }
        }
        return out.toString();
    }

    private static void appendEscaped(StringBuilder out, byte b) {
        out.append("\\x").append(String.format(Locale.ROOT, "%02x", b & 0xff));
    }
}
