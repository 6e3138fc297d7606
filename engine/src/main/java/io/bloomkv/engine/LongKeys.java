package io.bloomkv.engine;

import java.util.Arrays;

/**
 * Keys longer than {@link Db#MAX_KEY_SIZE} where they are no key to store: seek targets, iterator bounds, point-read
 * keys and the bounds of range operations, which RocksDB accepts at any length. bloomkv stores no such key, but takes
 * them as RocksDB does, by reducing each to a key of at most {@code MAX} bytes at the API, so the engine below it
 * (internal keys, key buffers, the memtable's and the tables' filters, prefix extraction, range filters, table
 * skipping, the write-ahead log, range tombstones) never sees a longer key.
 *
 * <p>Why the reduction is exact. Every stored key has at most {@code MAX} bytes: put, merge, delete, write batches and
 * {@link TableFileWriter} (the only writer of files {@link Db#ingest} takes) refuse longer ones. Let {@code t} be
 * longer than {@code MAX} and {@code t'} its first {@code MAX} bytes, and {@code k} a stored key. If {@code k <= t'}
 * then {@code k < t} ({@code t'} is a proper prefix of {@code t}). If {@code k > t'}, {@code k} is not an extension of
 * {@code t'} (it is no longer), so the two differ at a first position {@code i < MAX} where {@code k}'s byte is
 * larger; {@code t} has {@code t'}'s byte there, so {@code k > t}. Hence {@code k >= t} iff {@code k > t'}, and
 * {@code k <= t} iff {@code k <= t'} ({@code k} never equals {@code t}). And the keys above {@code t'} are exactly the
 * keys at or above {@link #leastAbove}{@code (t)}, the smallest string of at most {@code MAX} bytes above {@code t'},
 * when there is one; when there is none ({@code t'} is {@code MAX} bytes of 0xFF) no key is above {@code t'}. So:
 * <ul>
 *   <li>{@code seek(t)} (the first key {@code >= t}) is {@code seek(leastAbove(t))}, or no key;
 *   <li>{@code seekForPrev(t)} (the last key {@code <= t}) is {@code seekForPrev(t')};
 *   <li>a lower bound {@code L} (keys {@code >= L}) is the lower bound {@code leastAbove(L)}, or admits no key;
 *   <li>an exclusive upper bound {@code U} (keys {@code < U}, that is {@code <= U'}) is the upper bound
 *       {@code leastAbove(U)} (no key lies between {@code U'} and it), or no bound at all (every key is
 *       {@code <= U'});
 *   <li>a get of {@code t} finds nothing, without asking any memtable, filter or table.
 * </ul>
 * With prefix seeks, a long target's prefix is its first {@link Options#prefixLength} bytes, which are {@code t'}'s
 * (the prefix length is at most {@code MAX}): the iterator takes it from {@code t'}.
 *
 * <p>The range operations take long bounds too, as RocksDB does: {@link Db#deleteRange},
 * {@link WriteBatch#deleteRange}, {@link TableFileWriter#deleteRange}, {@link Db#deleteFilesInRange}
 * ({@link #halfOpen}) and {@link Db#compactRange} ({@link #closed}), each reduced the same way before anything is
 * written or looked up:
 * <ul>
 *   <li>an inclusive lower bound {@code B} (keys {@code >= B}) becomes {@code leastAbove(B)}; when there is none the
 *       range admits no key;
 *   <li>an exclusive upper bound {@code E} (keys {@code < E}, that is {@code <= E'}, the greatest of which may be
 *       {@code E'} itself) becomes {@code leastAbove(E)}, the smallest key above {@code E'} (no key lies between
 *       the two); when there is none every key is {@code <= E'}: the range is open above. A range deletion open
 *       above is written as the range deletion up to {@link #LARGEST} (the greatest key bloomkv stores, {@code MAX}
 *       bytes of 0xFF) and a point delete of {@code LARGEST}: {@code LARGEST || 0x00}, the exclusive end that
 *       would cover it, is longer than {@code MAX};
 *   <li>an inclusive upper bound {@code T} (keys {@code <= T}) becomes {@code T'}.
 * </ul>
 * A reduced range may be empty where the given one was not ([t||'a', t||'b') for a {@code t} of {@code MAX} bytes
 * holds no key of at most {@code MAX} bytes): it then admits no stored key, and the operation writes or does
 * nothing. Bounds in order reduce to bounds in order, or to such an empty range; the operations refuse bounds out of
 * order as they were given, as for short keys.
 */
final class LongKeys {
    private LongKeys() {}

    /** The greatest key bloomkv stores: {@link Db#MAX_KEY_SIZE} bytes of 0xFF. Never handed out to be changed. */
    static final byte[] LARGEST = allOnes();

    private static byte[] allOnes() {
        byte[] k = new byte[Db.MAX_KEY_SIZE];
        Arrays.fill(k, (byte) 0xFF);
        return k;
    }

    /** True when {@code key} (not null) is longer than {@link Db#MAX_KEY_SIZE}: no stored key equals it. */
    static boolean tooLong(byte[] key) {
        return key.length > Db.MAX_KEY_SIZE;
    }

    /**
     * Checks the key of a point read ({@link Db#get}, {@link Db#multiGet}): null and empty are refused as
     * {@link WriteBatch#checkKey} refuses them; false for a key longer than {@link Db#MAX_KEY_SIZE}, which the read
     * answers as absent without asking any memtable, filter or table (RocksDB reads any length, and finds nothing).
     *
     * @throws InvalidArgumentException when {@code key} is null or empty
     */
    static boolean mayBeStored(byte[] key) {
        if (key != null && tooLong(key)) {
            return false;
        }
        WriteBatch.checkKey(key);
        return true;
    }

    /** The first {@link Db#MAX_KEY_SIZE} bytes of {@code key} (a copy); {@code key} itself when it is no longer. */
    static byte[] head(byte[] key) {
        return tooLong(key) ? Arrays.copyOf(key, Db.MAX_KEY_SIZE) : key;
    }

    /**
     * The smallest string of at most {@link Db#MAX_KEY_SIZE} bytes above the first {@code MAX} bytes {@code t'} of
     * {@code key} (which has at least {@code MAX} bytes), or null when there is none ({@code t'} is all 0xFF). Such a
     * string cannot extend {@code t'}, so it agrees with {@code t'} up to a position {@code i} where its byte is
     * larger; the smallest takes the last {@code i} where {@code t'} has a byte below 0xFF, that byte plus one, and
     * nothing after it.
     */
    static byte[] leastAbove(byte[] key) {
        for (int i = Db.MAX_KEY_SIZE - 1; i >= 0; i--) {
            if (key[i] != (byte) 0xFF) {
                byte[] out = Arrays.copyOf(key, i + 1);
                out[i]++;
                return out;
            }
        }
        return null;
    }

    /**
     * Checks a bound of a range operation: null and empty are refused as {@link WriteBatch#checkKey} refuses them;
     * any length is taken (RocksDB takes any).
     *
     * @throws InvalidArgumentException when {@code bound} is null or empty
     */
    static void checkBound(byte[] bound) {
        if (bound == null || !tooLong(bound)) {
            WriteBatch.checkKey(bound);
        }
    }

    /**
     * A key range reduced to bounds of at most {@link Db#MAX_KEY_SIZE} bytes that admits the same stored keys as the
     * range it came from: [{@code begin}, {@code end}) from {@link #halfOpen}, [{@code begin}, {@code end}] from
     * {@link #closed}; a null bound is open. A bound of at most {@code MAX} bytes given is returned as the same array.
     */
    record Range(byte[] begin, byte[] end) {}

    /**
     * The range [{@code begin}, {@code end}) (null: open) reduced as the class comment says: a long {@code begin} by
     * {@link #leastAbove}, or to no range when none is above it; a long {@code end} by {@link #leastAbove}, or to an
     * open end when none is above it. Null when the reduced range admits no key ({@code begin >= end} once reduced).
     * The bounds are taken as they are (not checked, nor compared with each other).
     */
    static Range halfOpen(byte[] begin, byte[] end) {
        byte[] lo = begin;
        if (lo != null && tooLong(lo)) {
            lo = leastAbove(lo);
            if (lo == null) {
                return null; // no key of at most MAX bytes is above begin's first MAX bytes (all 0xFF)
            }
        }
        byte[] hi = end != null && tooLong(end) ? leastAbove(end) : end; // null: every key is below end
        if (lo != null && hi != null && Arrays.compareUnsigned(lo, hi) >= 0) {
            return null;
        }
        return new Range(lo, hi);
    }

    /**
     * The range [{@code from}, {@code to}] (both inclusive; null: open) reduced as the class comment says: a long
     * {@code from} by {@link #leastAbove}, or to no range when none is above it; a long {@code to} to its first
     * {@code MAX} bytes. Null when the reduced range admits no key ({@code from > to} once reduced). The bounds are
     * taken as they are (not checked, nor compared with each other).
     */
    static Range closed(byte[] from, byte[] to) {
        byte[] lo = from;
        if (lo != null && tooLong(lo)) {
            lo = leastAbove(lo);
            if (lo == null) {
                return null;
            }
        }
        byte[] hi = to == null ? null : head(to);
        if (lo != null && hi != null && Arrays.compareUnsigned(lo, hi) > 0) {
            return null;
        }
        return new Range(lo, hi);
    }

    /**
     * An iterator's inclusive lower and exclusive upper bounds (null: open) as it applies them: each bound longer
     * than {@link Db#MAX_KEY_SIZE} replaced by {@link #leastAbove} of it (see the class comment); a long upper bound
     * with none above it by no bound; a long lower bound with none above it, which admits no key, by the empty range
     * [t', t'). Bounds of at most {@code MAX} bytes are returned as they are. Returns {lower, upper}.
     */
    static byte[][] iteratorBounds(byte[] lower, byte[] upper) {
        byte[] lo = lower;
        byte[] hi = upper;
        if (hi != null && tooLong(hi)) {
            hi = leastAbove(hi);
        }
        if (lo != null && tooLong(lo)) {
            lo = leastAbove(lo);
            if (lo == null) {
                byte[] allOnes = head(lower);
                return new byte[][] {allOnes, allOnes};
            }
        }
        return new byte[][] {lo, hi};
    }
}
