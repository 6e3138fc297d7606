package io.bloomkv.engine.internal.util;

import java.util.Arrays;

/** A growable little-endian byte buffer with LevelDB's varint encodings. Not thread-safe. */
public final class ByteWriter {
    private byte[] buf;
    private int size;

    public ByteWriter(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    /**
     * Makes room for {@code extra} more bytes, so that a caller writing a record of known maximal size checks capacity
     * once and then writes into {@link #array()} from {@link #size()}, ending with {@link #advance}.
     */
    public void ensure(int extra) {
        long need = (long) size + extra;
        if (need > buf.length) {
            if (need > Integer.MAX_VALUE - 16) {
                throw new IllegalStateException("buffer over 2 GiB");
            }
            buf = Arrays.copyOf(buf, (int) Math.max(need, Math.min((long) buf.length * 2, Integer.MAX_VALUE - 16)));
        }
    }

    public ByteWriter putByte(int b) {
        ensure(1);
        buf[size++] = (byte) b;
        return this;
    }

    public ByteWriter putFixed32(int v) {
        ensure(4);
        Coding.putFixed32(buf, size, v);
        size += 4;
        return this;
    }

    public ByteWriter putFixed64(long v) {
        ensure(8);
        Coding.putFixed64(buf, size, v);
        size += 8;
        return this;
    }

    /** Unsigned LEB128: 7 bits per byte, low group first, high bit set on every byte but the last. */
    public ByteWriter putVarint64(long v) {
        ensure(10);
        size += Coding.putVarint64(buf, size, v);
        return this;
    }

    public ByteWriter putVarint32(int v) {
        return putVarint64(v & 0xFFFFFFFFL);
    }

    public ByteWriter putBytes(byte[] b) {
        return putBytes(b, 0, b.length);
    }

    public ByteWriter putBytes(byte[] b, int off, int len) {
        ensure(len);
        System.arraycopy(b, off, buf, size, len);
        size += len;
        return this;
    }

    /** varint32 length, then the bytes. */
    public ByteWriter putLengthPrefixed(byte[] b) {
        putVarint32(b.length);
        return putBytes(b);
    }

    /** Overwrites 4 bytes at {@code pos} with {@code v}, little-endian. */
    public void setFixed32(int pos, int v) {
        if (pos < 0 || pos + 4 > size) {
            throw new IndexOutOfBoundsException("setFixed32 at " + pos + ", size " + size);
        }
        for (int i = 0; i < 4; i++) {
            buf[pos + i] = (byte) (v >>> (8 * i));
        }
    }

    /** Overwrites 8 bytes at {@code pos} with {@code v}, little-endian. */
    public void setFixed64(int pos, long v) {
        if (pos < 0 || pos + 8 > size) {
            throw new IndexOutOfBoundsException("setFixed64 at " + pos + ", size " + size);
        }
        for (int i = 0; i < 8; i++) {
            buf[pos + i] = (byte) (v >>> (8 * i));
        }
    }

    public int size() {
        return size;
    }

    /** Counts {@code n} bytes the caller wrote into {@link #array()} at {@link #size()} (after {@link #ensure}). */
    public void advance(int n) {
        if (n < 0 || n > buf.length - size) {
            throw new IndexOutOfBoundsException("advance by " + n + ", size " + size + ", capacity " + buf.length);
        }
        size += n;
    }

    /** Drops everything after the first {@code newSize} bytes. */
    public void truncate(int newSize) {
        if (newSize < 0 || newSize > size) {
            throw new IndexOutOfBoundsException("truncate to " + newSize + ", size " + size);
        }
        size = newSize;
    }

    /** The internal array; only the first {@link #size()} bytes are meaningful. */
    public byte[] array() {
        return buf;
    }

    public byte[] toByteArray() {
        return Arrays.copyOf(buf, size);
    }
}
