package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.InternalKey;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import net.openhft.chronicle.core.UnsafeMemory;
import sun.misc.Unsafe;

/**
 * A point read's search of one uncompressed data block where it lies in its table's mapping: the same positions and
 * answers as {@link BlockIterator#seekInternal}, {@link BlockIterator#seekToFirst} and {@link BlockIterator#next}
 * over a {@link Block} of the same bytes, without copying the block. The entries' keys are rebuilt in a reused
 * buffer, as {@link BlockIterator} rebuilds them; a value is copied out only when asked ({@link #value()}).
 *
 * <p>What the caller guarantees: the block's bytes were verified (trailer checksum and type, restart array) since
 * the table was opened ({@code TableReader}'s verified-block bits), and the mapping stays valid for the whole search
 * (the point read holds the table). What this class guarantees whatever the bytes now say: every read lies inside the
 * block's {@code size} bytes, so bytes changed under the mapping (the engine never changes a table file) can only
 * give a {@link CorruptionException} naming the file and the block, never a read outside the mapping. A page that
 * cannot be read in raises the JVM's {@link InternalError} for mapped memory, as every mapped read may.
 *
 * <p>Not thread-safe: one per point read (a thread's {@link ReadScratch} keeps one), {@link #reset} per block.
 */
final class InPlaceBlock implements BlockCursor {
    private static final Unsafe U = UnsafeMemory.UNSAFE;
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private long base;
    private int size;
    private int restartsOffset;
    private int restartCount;
    private Path file;
    private long offset;

    /** Offset of the current entry; {@code restartsOffset} when not valid. */
    private int current;

    private int nextOffset;
    private byte[] keyBuf = new byte[32];
    private int keyLen;
    private int valueOff;
    private int valueLen;

    /**
     * Positions this cursor on the block of {@code size} bytes at {@code address} (the block at {@code offset} of
     * {@code file}), at no entry.
     *
     * @throws CorruptionException if its restart array does not fit it
     */
    InPlaceBlock reset(long address, int size, Path file, long offset) {
        this.base = address;
        this.size = size;
        this.file = file;
        this.offset = offset;
        if (size < 4) {
            throw corruption("block of " + size + " bytes is too short", -1);
        }
        int n = fixed32(size - 4);
        if (n < 0 || n > (size - 4) / 4 || (n == 0 && size > 4)) {
            throw corruption("restart count " + Integer.toUnsignedString(n) + " does not fit the block", size - 4);
        }
        this.restartCount = n;
        this.restartsOffset = size - 4 - 4 * n;
        this.current = restartsOffset;
        this.nextOffset = restartsOffset;
        this.keyLen = 0;
        return this;
    }

    @Override
    public boolean valid() {
        return current < restartsOffset;
    }

    @Override
    public void seekToFirst() {
        keyLen = 0;
        nextOffset = 0;
        parseNext();
    }

    @Override
    public void seekInternal(byte[] userKey, int userLen, long trailer) {
        int n = restartCount;
        if (n == 0) {
            current = restartsOffset;
            return;
        }
        // Last restart point whose key is < target (or 0), as BlockIterator.seekInternal.
        int lo = 0;
        int hi = n - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            int p = restartPoint(mid);
            int at = p;
            long shared = varint(at);
            at = (int) (shared >>> 32);
            long unshared = varint(at);
            at = (int) (unshared >>> 32);
            long vlen = varint(at);
            at = (int) (vlen >>> 32);
            int u = (int) unshared;
            int v = (int) vlen;
            if ((int) shared != 0 || u < 0 || v < 0 || u > restartsOffset - at || v > restartsOffset - at - u) {
                throw corruption("malformed entry at restart point " + mid, p);
            }
            if (compareInternalInBlock(at, u, p, userKey, userLen, trailer) < 0) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        keyLen = 0;
        nextOffset = restartPoint(lo);
        parseNext();
        while (valid() && compareInternal(keyBuf, keyLen, current, userKey, userLen, trailer) < 0) {
            parseNext();
        }
    }

    @Override
    public void next() {
        parseNext();
    }

    @Override
    public int keyLength() {
        return keyLen;
    }

    @Override
    public int compareCurrentUserKey(byte[] userKey) {
        return Arrays.compareUnsigned(keyBuf, 0, keyLen - InternalKey.TRAILER_SIZE, userKey, 0, userKey.length);
    }

    @Override
    public long currentTrailer() {
        return io.bloomkv.engine.internal.util.Coding.getFixed64(keyBuf, keyLen - InternalKey.TRAILER_SIZE);
    }

    @Override
    public byte[] value() {
        byte[] v = new byte[valueLen];
        U.copyMemory(null, base + valueOff, v, Unsafe.ARRAY_BYTE_BASE_OFFSET, valueLen);
        return v;
    }

    /** Block offset of the current value (for tests: it lies inside the block's entries). */
    int valueOffset() {
        return valueOff;
    }

    int valueLength() {
        return valueLen;
    }

    private int restartPoint(int i) {
        int r = fixed32(restartsOffset + 4 * i);
        if (r < 0 || r >= Math.max(restartsOffset, 1)) { // an empty block has one restart point, 0
            throw corruption("restart point " + i + " = " + r + " out of range", restartsOffset + 4 * i);
        }
        return r;
    }

    /** Decodes the entry at {@code nextOffset}, sharing a prefix with the current key ({@code keyLen} = 0 after a reset). */
    private void parseNext() {
        current = nextOffset;
        if (current >= restartsOffset) {
            current = restartsOffset;
            return;
        }
        int at = current;
        long shared = varint(at);
        at = (int) (shared >>> 32);
        long unshared = varint(at);
        at = (int) (unshared >>> 32);
        long vlen = varint(at);
        at = (int) (vlen >>> 32);
        int s = (int) shared;
        int u = (int) unshared;
        int v = (int) vlen;
        if (s < 0 || u < 0 || v < 0 || s > keyLen || u > restartsOffset - at || v > restartsOffset - at - u) {
            int bad = current;
            current = restartsOffset;
            throw corruption("malformed entry", bad);
        }
        int len = s + u;
        if (len < InternalKey.TRAILER_SIZE) {
            int bad = current;
            current = restartsOffset;
            throw corruption("internal key of " + len + " bytes is shorter than its trailer", bad);
        }
        if (len > keyBuf.length) {
            keyBuf = Arrays.copyOf(keyBuf, Math.max(len, 2 * keyBuf.length));
        }
        copyIn(base + at, keyBuf, s, u);
        keyLen = len;
        valueOff = at + u;
        valueLen = v;
        nextOffset = valueOff + v;
    }

    /**
     * A varint31 at block offset {@code at}, read no further than the restart array, as {@code Coding.Reader}'s
     * {@code varint31} reads it: the value in the low 32 bits (-1 when malformed, past the end or above 31 bits) and
     * the offset after it in the high 32 bits.
     */
    private long varint(int at) {
        long result = 0;
        for (int shift = 0; shift <= 63; shift += 7) {
            if (at >= restartsOffset) {
                return 0xffffffffL | (long) at << 32;
            }
            int x = U.getByte(base + at) & 0xff;
            at++;
            result |= (long) (x & 0x7f) << shift;
            if ((x & 0x80) == 0) {
                return result < 0 || result > Integer.MAX_VALUE
                        ? 0xffffffffL | (long) at << 32
                        : result | (long) at << 32;
            }
        }
        return 0xffffffffL | (long) at << 32;
    }

    /**
     * Copies {@code len} bytes at address {@code src} into {@code dst[off, off + len)}: 8 bytes at a time, then byte by
     * byte (a key's few bytes cost less so than through {@code Unsafe.copyMemory}'s call). Reads only
     * {@code [src, src + len)}.
     */
    private static void copyIn(long src, byte[] dst, int off, int len) {
        long d = Unsafe.ARRAY_BYTE_BASE_OFFSET + off;
        int i = 0;
        for (; i + 8 <= len; i += 8) {
            U.putLong(dst, d + i, U.getLong(src + i));
        }
        for (; i < len; i++) {
            U.putByte(dst, d + i, U.getByte(src + i));
        }
    }

    private int fixed32(int at) {
        int v = U.getInt(base + at);
        return LITTLE_ENDIAN ? v : Integer.reverseBytes(v);
    }

    /** InternalKey order of the restart key at block offset {@code off} ({@code len} bytes) against the target. */
    private int compareInternalInBlock(int off, int len, int at, byte[] userKey, int userLen, long trailer) {
        if (len < InternalKey.TRAILER_SIZE) {
            throw corruption("internal key shorter than its trailer", at);
        }
        int ul = len - InternalKey.TRAILER_SIZE;
        int n = Math.min(ul, userLen);
        long p = base + off;
        int i = 0;
        for (; i + 8 <= n; i += 8) { // 8 bytes at a time, compared as big-endian words
            long a = U.getLong(p + i);
            long b = U.getLong(userKey, (long) Unsafe.ARRAY_BYTE_BASE_OFFSET + i);
            if (a != b) {
                return LITTLE_ENDIAN
                        ? Long.compareUnsigned(Long.reverseBytes(a), Long.reverseBytes(b))
                        : Long.compareUnsigned(a, b);
            }
        }
        for (; i < n; i++) {
            int a = U.getByte(p + i) & 0xff;
            int b = userKey[i] & 0xff;
            if (a != b) {
                return a - b;
            }
        }
        if (ul != userLen) {
            return ul - userLen;
        }
        long t = U.getLong(p + ul);
        return Long.compareUnsigned(trailer, LITTLE_ENDIAN ? t : Long.reverseBytes(t));
    }

    /** InternalKey order of the rebuilt key {@code k[0, len)} against the target, as BlockIterator's. */
    private int compareInternal(byte[] k, int len, int at, byte[] userKey, int userLen, long trailer) {
        if (len < InternalKey.TRAILER_SIZE) {
            throw corruption("internal key shorter than its trailer", at);
        }
        int ul = len - InternalKey.TRAILER_SIZE;
        int c = Arrays.compareUnsigned(k, 0, ul, userKey, 0, userLen);
        if (c != 0) {
            return c;
        }
        return Long.compareUnsigned(trailer, io.bloomkv.engine.internal.util.Coding.getFixed64(k, ul));
    }

    private CorruptionException corruption(String what, int posInBlock) {
        String where = posInBlock >= 0 ? " at byte " + posInBlock + " of the block" : "";
        return new CorruptionException("corrupt block: " + what + where, file, offset);
    }
}
