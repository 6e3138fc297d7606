package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Sizing, kind codes, argument checks and the counting filter's remove semantics. */
@ExtendWith(OffHeapLeakCheck.class)
class FiltersTest {

    @Test
    void sizingFromBitsPerKey() {
        try (Filter s = Filters.create(FilterKind.STANDARD, 1000, 10);
                Filter p = Filters.create(FilterKind.PARTITIONED, 1000, 10);
                Filter b = Filters.create(FilterKind.BLOCKED, 1000, 10);
                Filter c = Filters.create(FilterKind.COUNTING, 1000, 10)) {
            assertThat(s.bitSize()).isEqualTo(10_048); // 10,000 rounded up to 64
            assertThat(s.hashCount()).isEqualTo(7);
            assertThat(p.bitSize()).isEqualTo(7 * 1472); // rows of ceil(10,000 / 7) = 1429 -> 1472 bits
            assertThat(p.hashCount()).isEqualTo(7);
            assertThat(b.bitSize()).isEqualTo(20 * 512);
            assertThat(b.hashCount())
                    .as("k from the requested 10 bits/key, not the rounded-up 10.24")
                    .isEqualTo(FilterMath.optimalBlockedK(10))
                    .isEqualTo(6);
            assertThat(c.bitSize()).isEqualTo(10_000);
            assertThat(c.sizeInBytes()).isGreaterThanOrEqualTo(5_000); // 4 bits per counter
            for (Filter f : new Filter[] {s, p, b, c}) {
                assertThat(f.expectedKeys()).isEqualTo(1000);
                assertThat(f.keyCount()).isZero();
                assertThat(f.expectedFpp()).isZero();
                assertThat(f.fractionOfBitsSet()).isZero();
            }
        }
    }

    @Test
    void tinyBlockedFilterChoosesKFromTheRequestedBitsPerKey() {
        // 1..4 keys round up to one 512-bit block (128..512 bits per key); k must not follow that.
        for (int n = 1; n <= 4; n++) {
            try (Filter f = Filters.create(FilterKind.BLOCKED, n, 10)) {
                assertThat(f.bitSize()).isEqualTo(512);
                assertThat(f.hashCount()).as("n=%d", n).isEqualTo(6);
                for (int i = 0; i < n; i++) {
                    f.add(TestKeys.longKey(i));
                }
                // the expected rate still uses the actual geometry: n keys in one 512-bit block, 6 probes
                assertThat(f.expectedFpp())
                        .as("n=%d", n)
                        .isEqualTo(FilterMath.blockedFpp(512, 6, n))
                        .isLessThan(1e-4);
            }
        }
        try (Filter f = Filters.create(FilterKind.BLOCKED, 3, 4)) {
            assertThat(f.hashCount()).isEqualTo(FilterMath.optimalBlockedK(4)).isEqualTo(3);
        }
    }

    @Test
    void sizingFromTargetRate() {
        for (FilterKind kind : FilterKind.values()) {
            if (kind.isStatic()) {
                continue; // RibbonFilterTest
            }
            try (Filter f = Filters.createForFpp(kind, 50_000, 0.01)) {
                for (int i = 0; i < 50_000; i++) {
                    f.add(TestKeys.longKey(i));
                }
                assertThat(f.expectedFpp())
                        .as(kind.toString())
                        .isLessThanOrEqualTo(0.0101)
                        .isGreaterThan(0.008);
                // at the optimum about half the bits are set
                assertThat(f.fractionOfBitsSet()).as(kind.toString()).isCloseTo(0.5, within(0.05));
            }
        }
    }

    @Test
    void zeroExpectedKeysStillGivesAWorkingFilter() {
        for (FilterKind kind : FilterKind.values()) {
            if (kind.isStatic()) {
                continue; // RibbonFilterTest: an empty RIBBON is built, not created
            }
            try (Filter f = Filters.create(kind, 0, 10)) {
                f.add(TestKeys.longKey(3));
                assertThat(f.mightContain(TestKeys.longKey(3))).isTrue();
            }
        }
    }

    @Test
    void kindCodesAreStable() {
        assertThat(FilterKind.STANDARD.code()).isEqualTo(1);
        assertThat(FilterKind.PARTITIONED.code()).isEqualTo(2);
        assertThat(FilterKind.BLOCKED.code()).isEqualTo(3);
        assertThat(FilterKind.COUNTING.code()).isEqualTo(4);
        assertThat(FilterKind.RIBBON.code()).isEqualTo(5);
        for (FilterKind kind : FilterKind.values()) {
            assertThat(FilterKind.fromCode(kind.code())).isEqualTo(kind);
        }
        assertThatThrownBy(() -> FilterKind.fromCode(0)).isInstanceOf(FilterFormatException.class);
    }

    @Test
    void rejectsBadArguments() {
        assertThatThrownBy(() -> Filters.create(FilterKind.STANDARD, -1, 10))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Filters.create(FilterKind.STANDARD, 10, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Filters.create(FilterKind.STANDARD, 10, Double.NaN))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Filters.create(FilterKind.STANDARD, Long.MAX_VALUE / 2, 10))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Filters.createForFpp(FilterKind.BLOCKED, 10, 1.5))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Filters.create(null, 10, 10)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void countingRemoveUndoesAdd() {
        try (CountingFilter f = Filters.createCounting(100, 10)) {
            byte[] key = TestKeys.longKey(99);
            f.add(key);
            f.add(key);
            f.remove(key);
            assertThat(f.mightContain(key)).isTrue();
            f.remove(key);
            assertThat(f.mightContain(key)).isFalse();
            assertThat(f.keyCount()).isZero();
            assertThat(f.fractionOfBitsSet()).isZero();
            assertThatThrownBy(() -> f.remove(key))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("never added");
            assertThat(f.keyCount()).isZero();
        }
    }

    @Test
    void saturatedCountersNeverGoDown() {
        try (CountingFilter f = Filters.createCounting(100, 10)) {
            byte[] key = TestKeys.longKey(5);
            for (int i = 0; i < 20; i++) {
                f.add(key);
            }
            CountingBloomFilter impl = (CountingBloomFilter) f;
            assertThat(impl.saturatedCounters()).isPositive();
            for (int i = 0; i < 20; i++) {
                f.remove(key);
            }
            // the true count (20) was lost at 15; the cells stay set: a residual positive, never a false negative
            assertThat(f.keyCount()).isZero();
            assertThat(f.mightContain(key)).isTrue();
            assertThat(impl.saturatedCounters()).isPositive();
        }
    }

    /**
     * The batched build (a buffer's first {@code count} hashes, BLOCKED's lines requested a batch at a time) sets
     * exactly the bits, counts and header of {@code create} plus one {@code add} per hash: the serialized forms are
     * equal byte for byte, for counts around the batch size and a buffer longer than the count.
     */
    @ParameterizedTest
    @EnumSource(
            value = FilterKind.class,
            names = {"STANDARD", "PARTITIONED", "BLOCKED", "COUNTING"})
    void buildOfABufferPrefixEqualsAddingEachHash(FilterKind kind) {
        long seed = TestKeys.seed("bloomkv.test.buildSeed");
        SplittableRandom random = new SplittableRandom(seed);
        for (int count : new int[] {0, 1, 63, 64, 65, 1000, 4097}) {
            long[] buffer = new long[count + 17];
            for (int i = 0; i < buffer.length; i++) {
                buffer[i] = random.nextLong();
            }
            try (Filter built = Filters.build(kind, buffer, count, 10);
                    Filter added = Filters.create(kind, count, 10);
                    Filter whole = Filters.build(kind, Arrays.copyOf(buffer, count), 10)) {
                for (int i = 0; i < count; i++) {
                    added.add(buffer[i]);
                }
                assertThat(built.keyCount()).isEqualTo(count);
                assertThat(built.toByteArray())
                        .as("seed %d, %s, %d hashes", seed, kind, count)
                        .isEqualTo(added.toByteArray())
                        .isEqualTo(whole.toByteArray());
            }
        }
    }

    @Test
    void buildRefusesACountOutsideTheBuffer() {
        long[] hashes = new long[4];
        assertThatThrownBy(() -> Filters.build(FilterKind.BLOCKED, hashes, 5, 10))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Filters.build(FilterKind.RIBBON, hashes, -1, 10))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }
}
