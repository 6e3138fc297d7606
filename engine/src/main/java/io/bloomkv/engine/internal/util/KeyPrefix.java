package io.bloomkv.engine.internal.util;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The first 8 bytes of a key as one unsigned big-endian long, zero-padded when the key is shorter, so that two keys
 * whose prefixes differ compare as their prefixes do (unsigned): a get's search among a table's index entries compares
 * longs, and calls {@link Arrays#compareUnsigned(byte[], byte[])} only on a tie; among a version's tables it compares
 * the first 16 bytes ({@link #of}, {@link #second}) and lengths ({@link #precedes}). Why that holds: at the first byte
 * where the padded prefixes differ, at least one key has a real byte; if the other key has ended there, it is a
 * proper prefix of the first (all bytes before are equal) and so smaller, and its padding byte 0 is smaller too
 * (the real byte differs from it, so it is above 0).
 */
public final class KeyPrefix {
    private static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private KeyPrefix() {}

    /** The zero-padded big-endian first 8 bytes of {@code key}. */
    public static long of(byte[] key) {
        if (key.length >= 8) {
            return (long) LONG_BE.get(key, 0);
        }
        long p = 0;
        for (int i = 0; i < 8; i++) {
            p = (p << 8) | (i < key.length ? key[i] & 0xFF : 0);
        }
        return p;
    }

    /** 1 when {@code a == b}, else 0, without a branch. */
    public static int same(long a, long b) {
        long x = a ^ b;
        return 1 ^ (int) ((x | -x) >>> 63);
    }

    /** Sign bit set when {@code a < b} unsigned (Hacker's Delight 2-12), from arithmetic alone. */
    private static long below(long a, long b) {
        return (~a & b) | (~(a ^ b) & (a - b));
    }

    /** The zero-padded big-endian bytes 8-15 of {@code key} (0 for a key of up to 8 bytes). */
    public static long second(byte[] key) {
        if (key.length >= 16) {
            return (long) LONG_BE.get(key, 8);
        }
        long p = 0;
        for (int i = 8; i < 16; i++) {
            p = (p << 8) | (i < key.length ? key[i] & 0xFF : 0);
        }
        return p;
    }

    /** {@link #precedes}'s bit: a is before b. */
    public static final int BEFORE = 1;
    /** {@link #precedes}'s bit: the first 16 bytes are equal and both keys are longer: only whole keys decide. */
    public static final int UNDECIDED = 2;

    /**
     * Whether key a is before key b, from their first two words ({@link #of}, {@link #second}) and lengths, without a
     * branch: {@link #BEFORE}, 0 (a is not before b), or {@link #UNDECIDED}. The padded 16 bytes compare as the keys
     * do where they differ (the argument of the class comment, over 16 bytes); where they are equal and one key has
     * at most 16 bytes, that key is a prefix of the other (its padding matches the other's bytes), so the shorter is
     * before (equal lengths: equal keys). Only two keys longer than 16 bytes that agree on their first 16 are left to
     * {@link Arrays#compareUnsigned(byte[], byte[])}. Computed without a branch, so that C2 keeps no untaken path of
     * it: a key outside a table's range, or equal to a bound, is rare in a read's first thousands of calls, and a
     * branch the profile never saw taken would be compiled as an uncommon trap that deoptimizes the whole compiled
     * read path the first time such a key comes.
     */
    public static int precedes(long a0, long a1, int aLength, long b0, long b1, int bLength) {
        int eq = same(a0, b0) & same(a1, b1);
        int shortKey = (Math.min(aLength, bLength) - 17) >>> 31; // 1 when the shorter key has at most 16 bytes
        int before = bit(below(a0, b0))
                | same(a0, b0) & bit(below(a1, b1))
                | eq & shortKey & (aLength - bLength) >>> 31; // lengths are not negative: no overflow
        return before | (eq & (shortKey ^ 1)) << 1;
    }

    private static int bit(long signed) {
        return (int) (signed >>> 63);
    }
}
