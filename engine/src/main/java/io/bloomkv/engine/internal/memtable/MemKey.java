package io.bloomkv.engine.internal.memtable;

import io.bloomkv.engine.internal.InternalKey;
import java.util.Arrays;
import java.util.Comparator;

/**
 * A memtable key: the user key and the internal-key trailer kept apart (a lookup builds one
 * without copying the user key), plus the first 16 user-key bytes as two big-endian longs, so most
 * comparisons in the skip list are {@code long} compares that do not touch the key arrays.
 * Orders exactly as {@link InternalKey#COMPARATOR} orders the encoded internal keys.
 */
final class MemKey {
    /** User key ascending (unsigned), then trailer descending (newest first). */
    static final Comparator<MemKey> ORDER = MemKey::compare;

    final byte[] userKey;
    final long trailer;
    private final long prefix0;
    private final long prefix1;

    MemKey(byte[] userKey, long trailer) {
        this.userKey = userKey;
        this.trailer = trailer;
        this.prefix0 = word(userKey, 0);
        this.prefix1 = word(userKey, 8);
    }

    /**
     * Bytes {@code [from, from + 8)} of the key, big-endian, zero-padded past its end. Where the
     * words of two keys differ, their unsigned order is the unsigned lexicographic order of the keys.
     */
    static long word(byte[] key, int from) {
        long p = 0;
        int n = Math.max(0, Math.min(8, key.length - from));
        for (int i = 0; i < n; i++) {
            p = (p << 8) | (key[from + i] & 0xFFL);
        }
        return n == 8 ? p : n == 0 ? 0 : p << (8 * (8 - n));
    }

    static int compare(MemKey a, MemKey b) {
        int c = Long.compareUnsigned(a.prefix0, b.prefix0);
        if (c != 0) {
            return c;
        }
        c = Long.compareUnsigned(a.prefix1, b.prefix1);
        if (c != 0) {
            return c;
        }
        c = Arrays.compareUnsigned(a.userKey, b.userKey);
        if (c != 0) {
            return c;
        }
        return Long.compareUnsigned(b.trailer, a.trailer);
    }

    /** The encoded internal key, a fresh array. */
    byte[] encode() {
        byte[] out = Arrays.copyOf(userKey, userKey.length + InternalKey.TRAILER_SIZE);
        for (int i = 0; i < 8; i++) {
            out[userKey.length + i] = (byte) (trailer >>> (8 * i));
        }
        return out;
    }

    /** The key of an encoded internal key (copies its user-key part). */
    static MemKey of(byte[] internalKey) {
        return new MemKey(InternalKey.userKey(internalKey), InternalKey.trailer(internalKey));
    }
}
