package io.bloomkv.engine.internal.util;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The first 8 bytes of a key as one unsigned big-endian long, zero-padded when the key is shorter, so that two keys
 * whose prefixes differ compare as their prefixes do (unsigned): a get's search among the tables of a level compares
 * longs, and calls {@link Arrays#compareUnsigned(byte[], byte[])} only on a tie. Why that holds: at the first byte
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

    /**
     * 1 when {@code lo <= p <= hi} (unsigned), else 0: whether a key of prefix {@code p} may lie in a key range whose
     * bounds have prefixes {@code lo} and {@code hi} (where {@code p} equals a bound's prefix, only whole keys
     * decide). Computed without a branch, so that C2 keeps no untaken path of it: a key outside a table's range is
     * rare in a read's first thousands of calls, and a branch the profile never saw taken would be compiled as an
     * uncommon trap that deoptimizes the whole compiled read path the first time such a key comes.
     */
    public static int inRange(long p, long lo, long hi) {
        return 1 ^ (int) ((below(p, lo) | below(hi, p)) >>> 63);
    }

    /** 1 when {@code lo <= p} (unsigned), else 0, without a branch (see {@link #inRange}). */
    public static int atLeast(long p, long lo) {
        return 1 ^ (int) (below(p, lo) >>> 63);
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

    /** {@code Arrays.compareUnsigned(a, b)}'s sign, given {@code pa = of(a)} and {@code pb = of(b)}. */
    public static int compare(long pa, byte[] a, long pb, byte[] b) {
        return pa != pb ? Long.compareUnsigned(pa, pb) : Arrays.compareUnsigned(a, b);
    }
}
