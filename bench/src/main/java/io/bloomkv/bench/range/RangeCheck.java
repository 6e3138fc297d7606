package io.bloomkv.bench.range;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;

/**
 * The check of a {@code rangeseek} answer: the entries a bounded seek over ids {@code [lo, hi)} handed out must be,
 * byte for byte and in key order, the keys {@link RangeSeekBench#load} wrote in that range, each with the value it
 * wrote for it ({@link RangeSeekBench#value}), and nothing else.
 *
 * <p>No key set is held: {@link RangeSeekBench#loadedId} is strictly increasing in the load index and key order is id
 * order, so the loaded keys in {@code [lo, hi)} are those of load index {@link #firstLoadedIndex firstLoadedIndex(lo)}
 * and the ones after it, while their id is below {@code hi} (and the index below {@code num}). The check assumes the
 * database holds exactly the load, which it does: {@code rangeseek} writes each engine's database once, then only
 * reads it.
 *
 * <p>The right answer costs, per entry, one comparison of the 12 key bytes and one of the 100 value bytes, and
 * allocates nothing; only a wrong answer builds its description.
 */
final class RangeCheck {
    private static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final byte[] TAG = Arrays.copyOf(RangeSeekBench.key(0), 4);
    private static final byte[] ZEROS = new byte[RangeSeekBench.VALUE_SIZE];

    private RangeCheck() {}

    /** The first load index whose id is at or after {@code id} (id >= 0). */
    static long firstLoadedIndex(long id) {
        long block = id >>> 8;
        long offset = id & 255;
        return offset >= 2 * RangeSeekBench.PER_BLOCK
                ? (block + 1) * RangeSeekBench.PER_BLOCK
                : block * RangeSeekBench.PER_BLOCK + (offset + 1) / 2;
    }

    /** How many of the first {@code num} loaded keys lie in ids {@code [lo, hi)}. */
    static long expectedCount(long lo, long hi, long num) {
        long j = firstLoadedIndex(lo);
        long n = 0;
        while (j + n < num && RangeSeekBench.loadedId(j + n) < hi) {
            n++;
        }
        return n;
    }

    /**
     * What is wrong with a bounded seek's answer, or null when it is right: the seek over ids {@code [lo, hi)} of a
     * database loaded with {@code num} keys handed out {@code seen} entries, entry {@code i} in {@code ks[i]},
     * {@code vs[i]}. Allocates nothing when the answer is right.
     */
    static String wrong(byte[][] ks, byte[][] vs, int seen, long lo, long hi, long num) {
        long j = firstLoadedIndex(lo);
        for (int i = 0; i < seen; i++) {
            byte[] k = ks[i];
            long id = j < num ? RangeSeekBench.loadedId(j) : Long.MAX_VALUE;
            if (id >= hi) {
                return "entry " + i + " is " + describe(k, lo, hi) + ", past the " + i + " keys the range holds";
            }
            if (!isKey(k, id)) {
                return "entry " + i + " is " + describe(k, lo, hi) + ", expected id " + id;
            }
            byte[] v = vs[i];
            if (!isValue(v, id)) {
                return "entry " + i + " (id " + id + ") has " + describeValue(v, id);
            }
            j++;
        }
        if (j < num && RangeSeekBench.loadedId(j) < hi) {
            return "the range holds " + expectedCount(lo, hi, num) + " keys, the engine handed out " + seen + ": id "
                    + RangeSeekBench.loadedId(j) + " is missing";
        }
        return null;
    }

    /** {@code k} is {@link RangeSeekBench#key key(id)}, every byte of it. */
    static boolean isKey(byte[] k, long id) {
        return k != null
                && k.length == RangeSeekBench.KEY_SIZE
                && Arrays.equals(k, 0, TAG.length, TAG, 0, TAG.length)
                && (long) LONG_BE.get(k, TAG.length) == id;
    }

    /** {@code v} is {@link RangeSeekBench#value value(id)}, every byte of it. */
    static boolean isValue(byte[] v, long id) {
        return v != null
                && v.length == RangeSeekBench.VALUE_SIZE
                && v[0] == (byte) id
                && Arrays.equals(v, 1, v.length, ZEROS, 1, ZEROS.length);
    }

    /** A key for a message: its id when it has the layout's shape, else its bytes; and whether it lies in the range. */
    private static String describe(byte[] k, long lo, long hi) {
        if (k == null) {
            return "no key (null)";
        }
        String where = Arrays.compareUnsigned(k, RangeSeekBench.bound(lo)) < 0
                        || Arrays.compareUnsigned(k, RangeSeekBench.bound(hi)) >= 0
                ? " (outside [" + lo + ", " + hi + "))"
                : "";
        if (k.length == RangeSeekBench.KEY_SIZE && Arrays.equals(k, 0, TAG.length, TAG, 0, TAG.length)) {
            return "key id " + (long) LONG_BE.get(k, TAG.length) + where;
        }
        return "key " + HexFormat.of().formatHex(k) + where;
    }

    /** How a wrong value differs from the one loaded for {@code id}. */
    private static String describeValue(byte[] v, long id) {
        if (v == null) {
            return "no value (null)";
        }
        byte[] loaded = RangeSeekBench.value(id);
        if (v.length != loaded.length) {
            return "a value of " + v.length + " bytes, the load wrote " + loaded.length;
        }
        int at = Arrays.mismatch(v, loaded);
        return String.format(
                Locale.ROOT,
                "a value whose byte %d is 0x%02x, the load wrote 0x%02x",
                at,
                v[at] & 0xFF,
                loaded[at] & 0xFF);
    }
}
