package io.bloomkv.engine.internal.util;

import java.io.ByteArrayOutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The one codec of the engine's integers (engine/FORMAT.md, "Integers"; LevelDB's util/coding.cc):
 * little-endian fixed widths and LEB128 varints, on arrays and streams. {@link ByteWriter} and
 * {@link ByteReader} are growable/bounded cursors over it. Decoders report malformed input through
 * {@link Reader#ok} (or ByteReader's exception); callers turn that into a
 * {@link io.bloomkv.engine.CorruptionException} naming their file and block.
 */
public final class Coding {
    private Coding() {}

    /**
     * Little-endian views of byte arrays: one bounds-checked 4- or 8-byte access where a loop of byte accesses would
     * not always be merged by the JIT (the trailer of every internal key is read and written through these).
     */
    private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private static final VarHandle LONG_LE =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    public static void putVarint32(ByteArrayOutputStream out, int v) {
        putVarint64(out, v & 0xffffffffL);
    }

    public static void putVarint64(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7fL) != 0) {
            out.write((int) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    /** Writes {@code v} (unsigned) as a varint32 at {@code b[off]}; returns the bytes written (1-5). */
    public static int putVarint32(byte[] b, int off, int v) {
        return putVarint64(b, off, v & 0xffffffffL);
    }

    /** Writes {@code v} (unsigned) as a varint64 at {@code b[off]}; returns the bytes written (1-10). */
    public static int putVarint64(byte[] b, int off, long v) {
        int i = off;
        while ((v & ~0x7fL) != 0) {
            b[i++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        b[i++] = (byte) v;
        return i - off;
    }

    public static int varintLength(long v) {
        int n = 1;
        while ((v & ~0x7fL) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    public static void putFixed32(ByteArrayOutputStream out, int v) {
        out.write(v);
        out.write(v >>> 8);
        out.write(v >>> 16);
        out.write(v >>> 24);
    }

    public static void putFixed64(ByteArrayOutputStream out, long v) {
        for (int i = 0; i < 8; i++) {
            out.write((int) (v >>> (8 * i)));
        }
    }

    public static void putFixed32(byte[] b, int off, int v) {
        INT_LE.set(b, off, v);
    }

    public static void putFixed64(byte[] b, int off, long v) {
        LONG_LE.set(b, off, v);
    }

    public static int getFixed32(byte[] b, int off) {
        return (int) INT_LE.get(b, off);
    }

    public static long getFixed64(byte[] b, int off) {
        return (long) LONG_LE.get(b, off);
    }

    /**
     * A cursor decoding varints from {@code b[pos..limit)}. After a malformed or truncated varint,
     * {@link #ok} is false and the value is meaningless.
     */
    public static final class Reader {
        public final byte[] b;
        public int pos;
        public final int limit;
        public boolean ok = true;

        public Reader(byte[] b, int pos, int limit) {
            this.b = b;
            this.pos = pos;
            this.limit = limit;
        }

        public long varint64() {
            long result = 0;
            for (int shift = 0; shift <= 63; shift += 7) {
                if (pos >= limit) {
                    ok = false;
                    return 0;
                }
                int x = b[pos++] & 0xff;
                result |= (long) (x & 0x7f) << shift;
                if ((x & 0x80) == 0) {
                    return result;
                }
            }
            ok = false;
            return 0;
        }

        /** A varint that must fit in 31 bits (a length or an offset inside a block). */
        public int varint31() {
            long v = varint64();
            if (v < 0 || v > Integer.MAX_VALUE) {
                ok = false;
                return 0;
            }
            return (int) v;
        }
    }
}
