package io.bloomkv.engine;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;

/**
 * Bits per key of a new table's filter given its kind ({@link Options#filterKindForLevel}) and its Bloom budget
 * (Options#bitsPerKey, or the level's MONKEY share). Bloom kinds spend the budget as is. RIBBON gets the bits per key at
 * which it reaches the rate BLOCKED reaches with the budget (RocksDB's "Bloom-equivalent bits per key"): the same
 * false-positive rate for about 30% less memory, fractional as the budget may be. Under {@link FilterBudget#MEMORY}
 * every kind spends the budget as is, RIBBON included (the same memory for a lower rate).
 */
final class LevelFilterPolicy {
    private LevelFilterPolicy() {
    }

    static double bitsPerKey(FilterKind kind, FilterBudget budget, double bloomBitsPerKey, long expectedKeys) {
        if (kind != FilterKind.RIBBON || budget == FilterBudget.MEMORY || bloomBitsPerKey <= 0) {
            return bloomBitsPerKey;
        }
        return ribbonBitsForBloomBudget(bloomBitsPerKey, Math.max(1, expectedKeys));
    }

    /** Bits per key of a RIBBON of {@code keys} keys at the rate of BLOCKED at {@code bloomBitsPerKey}. */
    static double ribbonBitsForBloomBudget(double bloomBitsPerKey, long keys) {
        int k = FilterMath.optimalBlockedK(bloomBitsPerKey);
        double rate = FilterMath.blockedFppForLoad(FilterMath.BLOCK_BITS / bloomBitsPerKey, k, FilterMath.BLOCK_BITS);
        if (!(rate > 0 && rate < 1)) {
            return bloomBitsPerKey;
        }
        // a table of fewer than ~128 keys still spends a whole 128-slot block: more bits per key than Bloom, same rate
        return FilterMath.ribbonBitsPerKeyForFpp(keys, rate);
    }
}
