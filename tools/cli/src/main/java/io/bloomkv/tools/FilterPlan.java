package io.bloomkv.tools;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;

/**
 * The size and probe count {@link io.bloomkv.bloom.Filters#create} gives a filter, computed without
 * allocating it, so {@code bloomkv bloom calc} can size filters of any key count. It follows the
 * sizing rules written in {@code Filters}' class comment; {@code BloomCommandsTest.planMatchesRealFilters} checks it against
 * real filters so the two cannot drift apart.
 *
 * For RIBBON it is the plan of {@code Filters.build(RIBBON, hashes of keys, bitsPerKey)}.
 *
 * @param bits bits of the filter (4-bit counters for COUNTING; the solution bits for RIBBON, hashCount = its r)
 * @param bytes memory of the bit array (counters) in bytes
 */
record FilterPlan(FilterKind kind, long keys, double requestedBitsPerKey, long bits, int hashCount, long bytes) {

    /** The plan of {@code Filters.create(kind, keys, bitsPerKey)}. */
    static FilterPlan of(FilterKind kind, long keys, double bitsPerKey) {
        if (keys < 0) {
            throw new IllegalArgumentException("keys must not be negative: " + keys);
        }
        if (!(bitsPerKey > 0) || Double.isInfinite(bitsPerKey)) {
            throw new IllegalArgumentException("bits per key must be positive and finite: " + bitsPerKey);
        }
        long n = Math.max(1, keys);
        long m = (long) Math.ceil(n * bitsPerKey);
        switch (kind) {
            case STANDARD: {
                long bits = roundUp(m, 64);
                return new FilterPlan(kind, keys, bitsPerKey, bits, FilterMath.optimalK(bitsPerKey), bits / 8);
            }
            case PARTITIONED: {
                int k = FilterMath.optimalK(bitsPerKey);
                long bits = roundUp((m + k - 1) / k, 64) * k;
                return new FilterPlan(kind, keys, bitsPerKey, bits, k, bits / 8);
            }
            case BLOCKED: {
                long bits = roundUp(m, FilterMath.BLOCK_BITS);
                return new FilterPlan(kind, keys, bitsPerKey, bits, FilterMath.optimalBlockedK(bitsPerKey), bits / 8);
            }
            case COUNTING: {
                long counters = roundUp(m, 16);
                return new FilterPlan(kind, keys, bitsPerKey, counters, FilterMath.optimalK(bitsPerKey), counters / 2);
            }
            case RIBBON: {
                long bits = FilterMath.ribbonSolutionBits(keys, bitsPerKey);
                return new FilterPlan(
                        kind, keys, bitsPerKey, bits, FilterMath.ribbonResultBits(keys, bitsPerKey), bits / 8);
            }
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    /** The plan of {@code Filters.createForFpp(kind, keys, fpp)}. */
    static FilterPlan forFpp(FilterKind kind, long keys, double fpp) {
        double bitsPerKey = kind == FilterKind.BLOCKED
                ? FilterMath.blockedBitsPerKeyForFpp(fpp)
                : kind == FilterKind.RIBBON
                        ? FilterMath.ribbonBitsPerKeyForFpp(keys, fpp)
                        : FilterMath.bitsPerKeyForFpp(fpp);
        return of(kind, keys, bitsPerKey);
    }

    /** Bits (counters) per key after rounding. */
    double bitsPerKey() {
        return (double) bits / Math.max(1, keys);
    }

    /** Memory bits per key: equals {@link #bitsPerKey()} except for COUNTING (4 bits per counter). */
    double memoryBitsPerKey() {
        return bytes * 8.0 / Math.max(1, keys);
    }

    /** The kind's own formula ({@link FilterMath#expectedFpp}) for {@code keys} keys. */
    double expectedFpp() {
        if (kind == FilterKind.RIBBON) {
            return FilterMath.ribbonFppForBitsPerKey(keys, requestedBitsPerKey);
        }
        return FilterMath.expectedFpp(kind, bits, hashCount, keys);
    }

    private static long roundUp(long x, long multiple) {
        return ((Math.max(1, x) + multiple - 1) / multiple) * multiple;
    }
}
