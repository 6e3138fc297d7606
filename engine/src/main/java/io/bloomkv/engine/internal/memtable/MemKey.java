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
class MemKey {
    /** User key ascending (unsigned), then trailer descending (newest first). */
    static final Comparator<MemKey> ORDER = MemKey::compare;

    final byte[] userKey;
    final long trailer;
    private final long prefix0;
    private final long prefix1;
    /** Where the entry's value lies in the array the memtable maps this key to ({@link MemArena}); 0, 0 for lookups. */
    final int valueOffset;
    final int valueLength;

    /** A key to look up (no value). */
    MemKey(byte[] userKey, long trailer) {
        this(userKey, trailer, 0, 0);
    }

    /** A stored key whose value is {@code [valueOffset, valueOffset + valueLength)} of its mapped array. */
    MemKey(byte[] userKey, long trailer, int valueOffset, int valueLength) {
        this.userKey = userKey;
        this.trailer = trailer;
        this.prefix0 = word(userKey, 0);
        this.prefix1 = word(userKey, 8);
        this.valueOffset = valueOffset;
        this.valueLength = valueLength;
    }

    /** A copy of this entry's value out of {@code store}, the array the memtable maps this key to. */
    byte[] value(byte[] store) {
        return java.util.Arrays.copyOfRange(store, valueOffset, valueOffset + valueLength);
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
        // The first 16 bytes agree (zero-padded). A key shorter than 16 bytes is then a prefix of the other key
        // (the other's bytes past its end are the zeros of its padding): the shorter key sorts first. Otherwise
        // both are at least 16 bytes long and only the rest decides (a hot key's versions end here, not in a scan).
        byte[] ka = a.userKey;
        byte[] kb = b.userKey;
        if (ka.length < 16 || kb.length < 16) {
            c = Integer.compare(ka.length, kb.length);
        } else {
            c = Arrays.compareUnsigned(ka, 16, ka.length, kb, 16, kb.length);
        }
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
