package io.bloomkv.engine.internal.util;

import java.util.Arrays;

/**
 * Reads what {@link ByteWriter} writes, checking every length against the end of the input. A read
 * past the end or a malformed varint throws {@link MalformedInputException}; callers that parse
 * stored bytes turn it into a {@link io.bloomkv.engine.CorruptionException} naming the file.
 */
public final class ByteReader {
    /** Stored bytes do not parse. */
    public static final class MalformedInputException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final int position;

        public MalformedInputException(String message, int position) {
            super(message + " at byte " + position);
            this.position = position;
        }

        public int position() {
            return position;
        }
    }

    private final byte[] buf;
    private final int end;
    private int pos;

    public ByteReader(byte[] buf) {
        this(buf, 0, buf.length);
    }

    public ByteReader(byte[] buf, int off, int len) {
        if (off < 0 || len < 0 || off + len > buf.length) {
            throw new IndexOutOfBoundsException("range " + off + "+" + len + " of " + buf.length);
        }
        this.buf = buf;
        this.pos = off;
        this.end = off + len;
    }

    public int position() {
        return pos;
    }

    public boolean hasRemaining() {
        return pos < end;
    }

    public int remaining() {
        return end - pos;
    }

    private void need(int n) {
        if (n < 0 || end - pos < n) {
            throw new MalformedInputException("truncated input: need " + n + " bytes, have " + (end - pos), pos);
        }
    }

    public int getByte() {
        need(1);
        return buf[pos++] & 0xFF;
    }

    public int getFixed32() {
        need(4);
        int v = Coding.getFixed32(buf, pos);
        pos += 4;
        return v;
    }

    public long getFixed64() {
        need(8);
        long v = Coding.getFixed64(buf, pos);
        pos += 8;
        return v;
    }

    public long getVarint64() {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int b = getByte();
            v |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return v;
            }
        }
        throw new MalformedInputException("varint64 longer than 10 bytes", pos);
    }

    public int getVarint32() {
        int start = pos;
        long v = getVarint64();
        if ((v >>> 32) != 0) {
            throw new MalformedInputException("varint32 out of range: " + v, start);
        }
        return (int) v;
    }

    /** A varint32 that must lie in [0, max]. */
    public int getLength(int max) {
        int start = pos;
        int v = getVarint32();
        if (v < 0 || v > max) {
            throw new MalformedInputException("length out of range: " + Integer.toUnsignedString(v), start);
        }
        return v;
    }

    public byte[] getBytes(int len) {
        need(len);
        byte[] out = Arrays.copyOfRange(buf, pos, pos + len);
        pos += len;
        return out;
    }

    /** Copies the next {@code len} bytes (which must be there) into {@code out[0, len)}. */
    public void getBytes(byte[] out, int len) {
        need(len);
        System.arraycopy(buf, pos, out, 0, len);
        pos += len;
    }

    /** Steps over {@code len} bytes (which must be there). */
    public void skip(int len) {
        need(len);
        pos += len;
    }

    /** varint32 length, then that many bytes. */
    public byte[] getLengthPrefixed() {
        return getBytes(getLength(end - pos));
    }
}
