package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.util.Coding;
import io.bloomkv.engine.internal.util.KeyPrefix;
import java.util.Arrays;

/**
 * Point-lookup search of a table's index block (restart interval 1: every entry is a restart
 * point). At open it keeps, per entry, the first 8 bytes of the separator's user key as a
 * big-endian {@code long}; a lookup binary-searches that dense array (a few cache lines instead of
 * one restart-array read and one entry decode per step of the block's own search) and compares
 * whole keys only among entries whose first 8 bytes equal the target's. The answer is the same
 * entry {@link BlockIterator#seekInternal} finds.
 *
 * <p>It also keeps each entry's block handle, packed into a {@code long} ({@link #handle}), so a get
 * reads the data block's position from the same dense arrays: it does not decode the index entry,
 * whose bytes are a cache miss of their own in an index block of hundreds of KiB (one per get, about
 * 7% of a present get's time with {@code pread} at 10M keys).
 */
final class IndexSearch {
    /** Bits of a packed handle that hold the block's size; the offset takes the 40 above them. */
    private static final int SIZE_BITS = 24;

    private static final long SIZE_MASK = (1L << SIZE_BITS) - 1;
    /** A handle that does not pack (offset >= 512 GiB, size >= 16 MiB, or malformed): decode the entry instead. */
    static final long NOT_PACKED = -1;

    private final Block index;
    private final long[] prefixes;
    private final long[] handles;

    private IndexSearch(Block index, long[] prefixes, long[] handles) {
        this.index = index;
        this.prefixes = prefixes;
        this.handles = handles;
    }

    /**
     * The search over {@code index}, or null when the block does not have one entry per restart
     * point (written with another restart interval), in which case callers use the block's own search.
     * {@code dataEnd}: where the table's data blocks end (a handle reaching past it is not packed).
     *
     * @throws io.bloomkv.engine.CorruptionException if an entry is malformed
     */
    static IndexSearch of(Block index, long dataEnd) {
        int n = index.restartCount();
        long[] prefixes = new long[n];
        long[] handles = new long[n];
        BlockIterator it = index.iterator(InternalKey.COMPARATOR);
        int i = 0;
        for (it.seekToFirst(); it.valid(); it.next()) {
            if (i == n || it.currentOffset() != index.restartPoint(i)) {
                return null;
            }
            if (it.keyLength() < InternalKey.TRAILER_SIZE) {
                throw index.corruption("internal key shorter than its trailer", it.currentOffset());
            }
            prefixes[i] = it.userKeyPrefix();
            handles[i++] = pack(BlockHandle.decode(it.valueArray(), it.valueOffset(), it.valueLength()), dataEnd);
        }
        return i == n ? new IndexSearch(index, prefixes, handles) : null;
    }

    /**
     * {@code h} packed as {@code offset << 24 | size}, or {@link #NOT_PACKED} when it is null, too large, or ends
     * beyond {@code dataEnd} (damage, which the decode path then reports): a packed handle is checked once, here.
     */
    static long pack(BlockHandle h, long dataEnd) {
        if (h == null || h.size() > SIZE_MASK || h.offset() >= 1L << (63 - SIZE_BITS) || h.end() > dataEnd) {
            return NOT_PACKED;
        }
        return h.offset() << SIZE_BITS | h.size();
    }

    /**
     * The block handle of entry {@code i} (as the entry's value decodes), packed: offset {@code >>> 24}, size
     * {@code & 0xFFFFFF}; {@link #NOT_PACKED} when the caller must decode the entry itself (its errors are reported
     * there).
     */
    long handle(int i) {
        return handles[i];
    }

    static long offsetOf(long packed) {
        return packed >>> SIZE_BITS;
    }

    static long sizeOf(long packed) {
        return packed & SIZE_MASK;
    }

    /**
     * The restart point (= entry number) of the first entry whose internal key is {@code >=}
     * {@code userKey[0, userLen) || trailer}, or the entry count when there is none.
     */
    int find(byte[] userKey, int userLen, long trailer) {
        long target = word(userKey, userLen);
        // first entry whose prefix is >= the target's (unsigned)
        int lo = 0;
        int hi = prefixes.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(prefixes[mid], target) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo == prefixes.length || prefixes[lo] != target) {
            return lo; // every earlier entry is smaller, this one (if any) is larger: decided by the prefixes
        }
        // entries [lo, hi) share the target's first 8 bytes (hi: the first larger prefix, found by
        // galloping then bisecting, as equal runs are usually short); the first one >= the target by whole keys
        int known = lo; // prefixes[known] == target
        int step = 1;
        int last = prefixes.length - 1;
        hi = lo + 1;
        // The loop's test has no branch of its own for "hi ran past the last entry" (hi <= last as a sign bit, the
        // load clamped by Math.min, an intrinsic): a run reaching the index's last entry is rare, and as a branch C2
        // would compile its untaken side as an uncommon trap that deoptimizes the compiled read path when it comes.
        while ((((hi - last - 1) >>> 31) & KeyPrefix.same(prefixes[Math.min(hi, last)], target)) != 0) {
            known = hi;
            hi = Math.min(prefixes.length, hi + step);
            step <<= 1;
        }
        int a = known + 1;
        while (a < hi) { // first index in (known, hi] whose prefix is not the target's
            int mid = (a + hi) >>> 1;
            if (prefixes[mid] == target) {
                a = mid + 1;
            } else {
                hi = mid;
            }
        }
        hi = a;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (compareEntry(mid, userKey, userLen, trailer) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    int entries() {
        return prefixes.length;
    }

    /** Internal-key order of entry {@code i} against the target. */
    private int compareEntry(int i, byte[] userKey, int userLen, long trailer) {
        byte[] data = index.data();
        int p = index.restartPoint(i);
        Coding.Reader r = new Coding.Reader(data, p, index.restartsOffset());
        int shared = r.varint31();
        int unshared = r.varint31();
        r.varint31();
        if (!r.ok || shared != 0 || unshared < InternalKey.TRAILER_SIZE || unshared > index.restartsOffset() - r.pos) {
            throw index.corruption("malformed index entry", p);
        }
        int ul = unshared - InternalKey.TRAILER_SIZE;
        int c = Arrays.compareUnsigned(data, r.pos, r.pos + ul, userKey, 0, userLen);
        if (c != 0) {
            return c;
        }
        return Long.compareUnsigned(trailer, Coding.getFixed64(data, r.pos + ul)); // newer (higher trailer) first
    }

    /**
     * Bytes {@code [0, 8)} of {@code key[0, len)}, big-endian, zero-padded past its end. Where the
     * words of two keys differ, their unsigned order is the unsigned lexicographic order of the keys.
     */
    static long word(byte[] key, int len) {
        int n = Math.min(8, len);
        long p = 0;
        for (int i = 0; i < n; i++) {
            p = (p << 8) | (key[i] & 0xFFL);
        }
        return n == 8 ? p : n == 0 ? 0 : p << (8 * (8 - n));
    }
}
