package io.bloomkv.bloom;

/**
 * A counting Bloom filter: every cell is a 4-bit counter, incremented by {@code add} and decremented by
 * {@code remove}, so keys can be deleted.
 *
 * <p>Counters saturate: a counter that reached 15 is never incremented nor decremented again. This
 * prevents the false negatives a wrapping counter would cause, at a price: the keys that hashed to a
 * saturated cell can never clear it, so after many removals the filter keeps answering "might contain"
 * for keys whose only evidence is that cell, and the false-positive rate does not fall back to what a
 * freshly built filter with the remaining keys would have. With k near (m/n) ln 2 a counter reaches 15
 * with probability about {@link FilterMath#counterSaturationProbability} (around 1e-15 per cell at the
 * optimum), so in practice this is rare.
 *
 * <p>Removing a key that was never added is a caller error that can create false negatives for other
 * keys; when the filter can tell (some counter of the key is zero) {@code remove} throws
 * {@link IllegalArgumentException} and changes nothing.
 */
public interface CountingFilter extends Filter {

    /** Removes one occurrence of a previously added key; same as {@code remove(Hashing.hash64(key))}. */
    void remove(byte[] key);

    /** Removes one occurrence of a previously added key given its hash. */
    void remove(long hash);
}
