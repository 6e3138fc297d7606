package io.bloomkv.engine.internal.memtable;

import io.bloomkv.bloom.FilterMath;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A whole-key Bloom filter over the user keys of one memtable (RocksDB's
 * {@code memtable_whole_key_filtering}), so a get for an absent key skips the skip-list search.
 * Same cache-local layout and probe derivation as the bloom module's BLOCKED filter: 512-bit blocks
 * (one cache line), chosen by the low 32 bits of {@link io.bloomkv.bloom.Hashing#hash64} by
 * multiply-shift; probes are 9-bit slices of fmix64(h). A probe touches one cache line, and the
 * key's hash is the one the tables' filters use, computed once per get.
 *
 * <p>Why on the heap: the filter lives exactly as long as its memtable, which readers reach through
 * reference-counted SuperVersions and iterators; an off-heap filter would need its own release-once
 * bookkeeping tied to the last reader of the memtable. On the heap the garbage collector frees it
 * with the memtable, and its size (bits per key times the entries a full write buffer can hold) is
 * small beside the memtable itself (about 1% of it at 10 bits per key and 100-byte values).
 *
 * <p>Concurrency: one writer ({@link #add}, called by the memtable's single writer) and any number of
 * readers ({@link #mightContain}). The writer sets a word with release semantics before the entry is
 * inserted into the skip list and before the database publishes the entry's sequence number; a reader
 * reads words with acquire semantics after it read that sequence number (a volatile read). So a reader
 * that may see an entry also sees its bits: no false negative. A word is only ever OR-ed, by the one
 * writer, so no update is lost.
 */
final class MemTableFilter {
    /** Seven 9-bit probe positions fit in one 64-bit word. */
    private static final int PROBES_PER_WORD = 7;

    private static final int WORDS_PER_BLOCK = FilterMath.BLOCK_BITS / 64;

    private final AtomicLongArray words;
    private final long blocks;
    private final int k;

    /**
     * @param expectedKeys keys the filter is sized for (more may be added, at a higher false-positive rate)
     * @param bitsPerKey   bits per expected key, > 0
     */
    MemTableFilter(long expectedKeys, double bitsPerKey) {
        long bits = (long) Math.ceil(Math.max(1, expectedKeys) * bitsPerKey);
        long blocks = Math.max(1, (bits + FilterMath.BLOCK_BITS - 1) / FilterMath.BLOCK_BITS);
        if (blocks * WORDS_PER_BLOCK > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("memtable filter too large: " + blocks + " blocks");
        }
        this.blocks = blocks;
        this.words = new AtomicLongArray((int) (blocks * WORDS_PER_BLOCK));
        this.k = Math.max(1, FilterMath.optimalBlockedK(bitsPerKey));
    }

    /**
     * Adds the key of hash {@code hash}. Single writer only. @return false when no key of hash {@code hash} was added
     * before (some of its bits were clear): the writer may skip looking for the key in the memtable
     */
    boolean add(long hash) {
        return visit(hash, true);
    }

    /** False only when no key of hash {@code hash} was added. */
    boolean mightContain(long hash) {
        return visit(hash, false);
    }

    /**
     * The k probe bits of {@code hash} in its block (9 bits of a mixed word each, 7 per word): with {@code set}, sets
     * them (single writer: a plain read, a release write when a bit changes) and returns whether all were set before;
     * otherwise returns whether all are set (acquire reads).
     */
    private boolean visit(long hash, boolean set) {
        boolean all = true;
        int block = (int) (((hash & 0xFFFF_FFFFL) * blocks) >>> 32) * WORDS_PER_BLOCK;
        long word = fmix64(hash);
        long x = word;
        for (int i = 0; i < k; i++) {
            if (i > 0 && i % PROBES_PER_WORD == 0) {
                word = fmix64(word);
                x = word;
            }
            int bit = (int) (x >>> 55);
            int index = block + (bit >>> 6);
            if (set) {
                long old = words.getPlain(index); // only this writer changes the words
                long updated = old | (1L << bit);
                if (updated != old) {
                    words.setRelease(index, updated);
                    all = false;
                }
            } else if ((words.getAcquire(index) & (1L << bit)) == 0) {
                return false;
            }
            x <<= 9;
        }
        return all;
    }

    /** Heap bytes of the bit array. */
    long memoryBytes() {
        return (long) words.length() * Long.BYTES;
    }

    /** MurmurHash3's fmix64 (a bijection), as the bloom module derives probes. */
    private static long fmix64(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }
}
