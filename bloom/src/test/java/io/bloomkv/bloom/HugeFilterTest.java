package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Filters of more than 2^31 bits (50M keys at 43 bits per key, ~270 MB off-heap each): bit and word
 * indices past Integer.MAX_VALUE are computed in long arithmetic, probes reach the top of the array, and
 * nothing added is lost. COUNTING is left out (the same size would need 1 GiB); it shares STANDARD's
 * index arithmetic. Replay with {@code -Dbloom.huge.seed=N}.
 */
class HugeFilterTest {
    static final long EXPECTED_KEYS = 50_000_000;
    static final double BITS_PER_KEY = 43;
    static final int ADDED = 200_000;

    @ParameterizedTest
    @EnumSource(
            value = FilterKind.class,
            names = {"STANDARD", "PARTITIONED", "BLOCKED"})
    void moreThan2To31BitsWorkEndToEnd(FilterKind kind) {
        long seed = TestKeys.seed("bloom.huge.seed");
        try (Filter f = Filters.create(kind, EXPECTED_KEYS, BITS_PER_KEY)) {
            assertThat(f.bitSize()).isGreaterThan(1L << 31);
            OffHeapRegion body = ((OffHeapFilter) f).body;
            assertThat(body.length()).isEqualTo(f.bitSize() / 8);
            SplittableRandom random = new SplittableRandom(seed);
            long[] hashes = new long[ADDED];
            for (int i = 0; i < ADDED; i++) {
                hashes[i] = random.nextLong();
                f.add(hashes[i]);
            }
            for (int i = 0; i < ADDED; i++) {
                assertThat(f.mightContain(hashes[i]))
                        .as("key %d, seed %d", i, seed)
                        .isTrue();
            }
            // set bits beyond bit 2^31 (the words from byte 2^28 on): the probes cover the whole array
            long setHigh = 0;
            for (long off = (1L << 28); off < body.length(); off += 8) {
                setHigh += Long.bitCount(body.readLong(off));
            }
            double highShare = (double) (f.bitSize() - (1L << 31)) / f.bitSize();
            long setTotal = Math.round(f.fractionOfBitsSet() * f.bitSize());
            assertThat(setHigh)
                    .as("bits set past 2^31, seed %d", seed)
                    .isBetween(Math.round(setTotal * highShare * 0.5), Math.round(setTotal * highShare * 1.5) + 50);
            assertThat(f.expectedFpp()).isLessThan(1e-12);
        }
    }
}
