package io.bloomkv.engine.internal.memtable;

import io.bloomkv.engine.internal.InternalKey;
import java.util.Arrays;
import java.util.Comparator;

/**
 * A memtable lookup key: the user key and the internal-key trailer kept apart (a lookup builds one
 * without copying the user key), plus the first 16 user-key bytes as two big-endian longs, so most
 * comparisons in the skip list are {@code long} compares that do not touch the key arrays.
 * Orders exactly as {@link InternalKey#COMPARATOR} orders the encoded internal keys.
 */
final class MemKey {
    /** User key ascending (unsigned), then trailer descending (newest first). */
    static final Comparator<MemKey> ORDER = MemKey::compare;

    // Not final: the skip list's writer points one MemKey at each key it inserts ({@link #set}), allocating none.
    byte[] userKey;
    long trailer;
    /** Key bytes [0, 8) and [8, 16) as {@link #word}s. */
    long prefix0;

    long prefix1;

    /**
     * Words 2.. of the key (bytes 16 onwards), computed on first use: a skip-list search compares one lookup key with
     * dozens of entries, and keys longer than 16 bytes that share their first 16 (a common prefix: a segment id, a
     * key format byte, a fixed-width name) reach these words in every compare. Not thread-safe; a MemKey belongs to
     * one lookup or insert at a time. Kept across {@link #set} (refilled when the key's word count matches).
     */
    private long[] rest;
    /** Whether {@link #rest} holds the words of the current key. */
    private boolean restValid;

    MemKey(byte[] userKey, long trailer) {
        set(userKey, trailer);
    }

    /**
     * Makes this the lookup key of {@code userKey} and {@code trailer} (the words past 16 are computed again on first
     * use, into the same array when it fits); returns it. For a MemKey its owner reuses, one key at a time.
     */
    MemKey set(byte[] userKey, long trailer) {
        this.userKey = userKey;
        this.trailer = trailer;
        this.prefix0 = word(userKey, 0);
        this.prefix1 = word(userKey, 8);
        this.restValid = false;
        return this;
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
        // One shift for every n: a long shift takes its distance mod 64, so n = 8 shifts by 0, and n = 0 (p = 0) by 0
        // too. No branch on n, which a compiled caller would otherwise trap on at the first key of a new length.
        return p << (8 * (8 - n));
    }

    /** Word {@code j} of the key ({@code word(userKey, 8 * j)}), cached. */
    long wordAt(int j) {
        if (j == 0) {
            return prefix0;
        }
        if (j == 1) {
            return prefix1;
        }
        long[] r = rest;
        if (!restValid) {
            int n = Math.max(0, ((userKey.length + 7) >>> 3) - 2);
            if (r == null || r.length != n) {
                r = new long[n];
            }
            for (int i = 0; i < n; i++) {
                r[i] = word(userKey, 8 * (i + 2));
            }
            rest = r;
            restValid = true;
        }
        return j - 2 < r.length ? r[j - 2] : 0;
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

    /** The key of an encoded internal key (copies its user-key part). */
    static MemKey of(byte[] internalKey) {
        return new MemKey(InternalKey.userKey(internalKey), InternalKey.trailer(internalKey));
    }
}
