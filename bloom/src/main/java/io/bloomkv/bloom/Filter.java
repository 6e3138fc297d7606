package io.bloomkv.bloom;

import java.io.IOException;
import java.io.OutputStream;

/**
 * An approximate set membership filter whose bits live off the Java heap (Chronicle Bytes).
 *
 * <p>{@link #mightContain} never answers {@code false} for a key that was added (no false negatives);
 * it answers {@code true} for a key never added with a probability close to {@link #expectedFpp()}.
 *
 * <p>Every key is hashed once with {@link Hashing#hash64(byte[])}; all probes are derived from that
 * 64-bit value. {@code add(key)} is exactly {@code add(Hashing.hash64(key))}, so a caller that asks many
 * filters about one key hashes it once and passes the hash.
 *
 * <p>Thread safety: concurrent {@code mightContain} calls on a filter that is no longer being modified
 * are safe. {@code add} (and {@code remove}) need external synchronization against each other and
 * against readers. {@link #close()} must not race with other calls: the caller (for example a
 * reference-counted table) guarantees that no probe is in flight when it closes the filter.
 *
 * <p>Lifecycle: a filter owns its off-heap memory and releases it exactly once on {@link #close()}, which
 * is idempotent. Any other method called after close throws {@link IllegalStateException}.
 * Filters obtained from {@link Filters#map} are read-only: {@code add} throws {@link IllegalStateException}.
 */
public interface Filter extends AutoCloseable {

    FilterKind kind();

    /** Adds a key; same as {@code add(Hashing.hash64(key))}. */
    void add(byte[] key);

    /** Adds a key given its {@link Hashing#hash64(byte[])} value. */
    void add(long hash);

    /** {@code false} means the key was certainly never added. */
    boolean mightContain(byte[] key);

    /** As {@link #mightContain(byte[])} for a key whose {@link Hashing#hash64(byte[])} is {@code hash}. */
    boolean mightContain(long hash);

    /**
     * Asks about {@code count} hashes at once: {@code results[i] = mightContain(hashes[i])} for i &lt; count; returns how
     * many are true. A filter may first touch every hash's cache line(s), then test, so that the memory loads of the
     * batch overlap instead of running one after another (useful when the filter is out of cache).
     *
     * @throws IllegalArgumentException if {@code count} is negative
     */
    default int mightContainAll(long[] hashes, int count, boolean[] results) {
        if (count < 0) {
            throw new IllegalArgumentException("count must not be negative: " + count);
        }
        int positives = 0;
        for (int i = 0; i < count; i++) {
            boolean r = mightContain(hashes[i]);
            results[i] = r;
            if (r) {
                positives++;
            }
        }
        return positives;
    }

    /**
     * Loads a word of the cache line(s) a probe of {@code hash} reads first and returns it, without testing anything:
     * a caller about to probe several filters for one key touches them all first, so their memory loads overlap
     * (fold the results into a value that is used, so the loads are not optimized away). The default touches nothing.
     */
    default long touch(long hash) {
        return 0;
    }

    /**
     * {@link #mightContain(long)}'s answer, for a hash whose cache lines {@link #touch} has already requested (a get
     * that asks several filters touches them all first, so their cache misses overlap). BLOCKED and RIBBON then test
     * every bit (every column group) without a branch on the bits read: from the cache that costs less than the
     * mispredicted early exit of {@link #mightContain(long)}, which in turn is faster for a lone probe out of the cache
     * (its fewer instructions let the CPU start the next probe's miss sooner).
     */
    default boolean mightContainTouched(long hash) {
        return mightContain(hash);
    }

    /** Number of probes per key (k). */
    int hashCount();

    /** Number of bits (for {@link FilterKind#COUNTING}: number of 4-bit counters), m. */
    long bitSize();

    /** The number of keys this filter was sized for. */
    long expectedKeys();

    /** Number of {@code add} calls so far (duplicates counted), minus removals for a counting filter. */
    long keyCount();

    /** The false-positive rate this kind's formula ({@link FilterMath#expectedFpp}) predicts for {@link #keyCount()} keys. */
    double expectedFpp();

    /** Share of bits (counters) that are non-zero, in [0, 1]. */
    double fractionOfBitsSet();

    /** Off-heap bytes held by this filter (including alignment padding; the mapped length for a mapped filter). */
    long sizeInBytes();

    /** Length in bytes of {@link #writeTo}'s output: header plus body (see bloom/FORMAT.md). */
    long serializedSize();

    /** Writes the self-describing serialized form (bloom/FORMAT.md). */
    void writeTo(OutputStream out) throws IOException;

    /** The serialized form as an array; {@link IllegalStateException} if it exceeds the largest array. */
    byte[] toByteArray();

    /**
     * An estimate of how many DISTINCT keys the filter holds, from its bits alone (Guava's
     * {@code approximateElementCount}); unlike {@link #keyCount()} it counts a key added twice once, and it is what
     * the bits say after a {@link Filters#union} or {@link Filters#intersection}. Per kind:
     * <ul>
     *   <li>STANDARD: Swamidass–Baldi, n ≈ -(m/k) ln(1 - X/m) for X bits set ({@link FilterMath#estimateKeys});</li>
     *   <li>PARTITIONED: the same per row of m/k bits (one probe per key per row, so k = 1 in the formula), averaged
     *       over the k rows;</li>
     *   <li>BLOCKED: the same per 512-bit block, summed over blocks (a key's probes all fall in one block);</li>
     *   <li>COUNTING: the sum of the counters divided by k: exact while no counter has saturated, a lower bound after;</li>
     *   <li>RIBBON: {@link #keyCount()} (a Ribbon solution's bits carry no count; the count it was built from is exact).</li>
     * </ul>
     * Its standard error is {@link FilterMath#approximateKeyCountStandardError}. Reads the whole body.
     */
    long approximateKeyCount();

    /**
     * Writes the filter in the compressed wire form of bloom/FORMAT.md ("Compressed form"): the set (or, when most are
     * set, the clear) bits of the body as Rice-coded gaps, or the raw body when coding would not make it smaller, so the
     * bytes sent approach the entropy bound m·H(p) of the body's fraction p of set bits. A filter at the optimal k has
     * p ≈ 1/2 and does not compress; a larger filter with fewer probes at the same false-positive rate is sparser and
     * ships fewer bytes ({@link FilterMath#bitsPerKeyForFpp(double, int)}). Read back with {@link Filters#readCompressed}.
     */
    void writeCompressed(OutputStream out) throws IOException;

    /** Releases the off-heap memory (unmaps a mapped filter). Idempotent. */
    @Override
    void close();
}
