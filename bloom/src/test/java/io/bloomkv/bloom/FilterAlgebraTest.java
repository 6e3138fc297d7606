package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link Filters#union} and {@link Filters#intersection} on random key sets: the union is bit for bit the filter of the
 * union; the intersection holds every common key, is a subset of each operand's bits and a superset of the filter of
 * the intersection (so its false-positive rate lies between the two, key by key); mismatched or unsound operands throw
 * {@link IncompatibleFiltersException}.
 */
@ExtendWith(OffHeapLeakCheck.class)
class FilterAlgebraTest {
    private static final FilterKind[] BLOOM_KINDS = {FilterKind.STANDARD, FilterKind.PARTITIONED, FilterKind.BLOCKED};

    /** Random 8-byte keys; A and B share {@code common} of them. */
    private static long[][] keySets(SplittableRandom rnd, int each, int common) {
        Set<Long> seen = new HashSet<>();
        long[] all = new long[2 * each - common];
        for (int i = 0; i < all.length; ) {
            long v = rnd.nextLong();
            if (seen.add(v)) {
                all[i++] = v;
            }
        }
        long[] a = Arrays.copyOfRange(all, 0, each);
        long[] b = Arrays.copyOfRange(all, each - common, 2 * each - common);
        long[] both = Arrays.copyOfRange(all, each - common, each);
        return new long[][] {a, b, both, all};
    }

    private static Filter filter(FilterKind kind, long[] keys) {
        Filter f = Filters.create(
                kind, 5_000, 10); // full at 5,000 keys: the union is over-full, the AND visibly above A ∩ B
        for (long k : keys) {
            f.add(TestKeys.longKey(k));
        }
        return f;
    }

    private static byte[] body(Filter f) {
        byte[] s = f.toByteArray();
        return Arrays.copyOfRange(s, FilterHeader.HEADER_SIZE, s.length);
    }

    @Test
    void unionIsTheFilterOfTheUnionBitForBit() {
        SplittableRandom rnd = new SplittableRandom(TestKeys.seed("bloomkv.test.algebraSeed"));
        for (FilterKind kind : BLOOM_KINDS) {
            long[][] sets = keySets(rnd, 5_000, 1_000);
            try (Filter a = filter(kind, sets[0]);
                    Filter b = filter(kind, sets[1]);
                    Filter all = filter(kind, sets[3]);
                    Filter u = Filters.union(a, b)) {
                assertThat(u.kind()).isEqualTo(kind);
                assertThat(body(u))
                        .as(kind + ": union body equals the filter of A ∪ B")
                        .isEqualTo(body(all));
                assertThat(u.keyCount()).isEqualTo(10_000);
                for (long k : sets[3]) {
                    assertThat(u.mightContain(TestKeys.longKey(k))).isTrue();
                }
                // operands untouched and still usable
                assertThat(a.keyCount()).isEqualTo(5_000);
                assertThat(a.mightContain(TestKeys.longKey(sets[0][0]))).isTrue();
            }
        }
    }

    @Test
    void intersectionLiesBetweenTheFilterOfTheIntersectionAndEachOperand() {
        SplittableRandom rnd = new SplittableRandom(TestKeys.seed("bloomkv.test.algebraSeed"));
        for (FilterKind kind : BLOOM_KINDS) {
            long[][] sets = keySets(rnd, 5_000, 1_000);
            try (Filter a = filter(kind, sets[0]);
                    Filter b = filter(kind, sets[1]);
                    Filter both = filter(kind, sets[2]);
                    Filter i = Filters.intersection(a, b);
                    Filter u = Filters.union(a, b)) {
                for (long k : sets[2]) {
                    assertThat(i.mightContain(TestKeys.longKey(k)))
                            .as(kind + ": common key")
                            .isTrue();
                }
                byte[] bi = body(i);
                byte[] ba = body(a);
                byte[] bb = body(b);
                byte[] bBoth = body(both);
                for (int j = 0; j < bi.length; j++) {
                    assertThat(bi[j] & ~ba[j] & 0xFF).isZero();
                    assertThat(bi[j] & ~bb[j] & 0xFF).isZero();
                    assertThat(bBoth[j] & ~bi[j] & 0xFF)
                            .as("the filter of A ∩ B is a subset")
                            .isZero();
                }
                // Key by key, on unseen keys: positive in A∩B's filter => positive in the intersection
                // => positive in a.
                long fpBoth = 0;
                long fpI = 0;
                long fpA = 0;
                int probes = 200_000;
                for (int q = 0; q < probes; q++) {
                    byte[] key = TestKeys.longKey(rnd.nextLong());
                    boolean pb = both.mightContain(key);
                    boolean pi = i.mightContain(key);
                    boolean pa = a.mightContain(key);
                    assertThat(!pb || pi).isTrue();
                    assertThat(!pi || pa).isTrue();
                    fpBoth += pb ? 1 : 0;
                    fpI += pi ? 1 : 0;
                    fpA += pa ? 1 : 0;
                }
                System.out.printf(
                        "%s intersection FPR on unseen keys: filter(A∩B) %.5f <= A AND B %.5f <= A %.5f%n",
                        kind, (double) fpBoth / probes, (double) fpI / probes, (double) fpA / probes);
                assertThat(fpI)
                        .as("the AND keeps bits of A\\B and B\\A that collide: strictly above the filter of A ∩ B")
                        .isGreaterThan(fpBoth);
                // |A ∩ B| by inclusion-exclusion of three Swamidass-Baldi estimates
                double se = Math.sqrt(2
                                * Math.pow(
                                        FilterMath.approximateKeyCountStandardError(
                                                kind, a.bitSize(), a.hashCount(), 5_000),
                                        2)
                        + Math.pow(
                                FilterMath.approximateKeyCountStandardError(kind, a.bitSize(), a.hashCount(), 9_000),
                                2));
                long est = a.approximateKeyCount() + b.approximateKeyCount() - u.approximateKeyCount();
                assertThat((double) est)
                        .as(kind + ": |A ∩ B| estimate (SE %.1f)", se)
                        .isBetween(1_000 - 5 * se, 1_000 + 5 * se);
                assertThat(i.keyCount()).isEqualTo(5_000);
            }
        }
    }

    @Test
    void countingUnionAddsCountersAndIntersectionTakesTheMinimum() {
        SplittableRandom rnd = new SplittableRandom(TestKeys.seed("bloomkv.test.algebraSeed"));
        long[][] sets = keySets(rnd, 2_000, 500);
        try (Filter a = filter(FilterKind.COUNTING, sets[0]);
                Filter b = filter(FilterKind.COUNTING, sets[1]);
                Filter sum = Filters.create(FilterKind.COUNTING, 5_000, 10)) {
            for (long k : sets[0]) {
                sum.add(TestKeys.longKey(k));
            }
            for (long k : sets[1]) {
                sum.add(TestKeys.longKey(k));
            }
            try (CountingFilter u = (CountingFilter) Filters.union(a, b);
                    Filter i = Filters.intersection(a, b)) {
                assertThat(body(u)).as("counters of the multiset sum").isEqualTo(body(sum));
                assertThat(u.approximateKeyCount()).isEqualTo(4_000);
                for (long k : sets[1]) {
                    u.remove(TestKeys.longKey(k)); // sound: every key of B went into the union
                }
                for (long k : sets[0]) {
                    assertThat(u.mightContain(TestKeys.longKey(k))).isTrue();
                }
                for (long k : sets[2]) {
                    assertThat(i.mightContain(TestKeys.longKey(k))).isTrue();
                }
            }
        }
        assertThat(FilterAlgebra.saturatingNibbleAdd(0xF9L, 0x18L))
                .as("15 stays 15, 9 + 8 saturates")
                .isEqualTo(0xFFL);
        assertThat(FilterAlgebra.nibbleMin(0xF9L, 0x18L)).isEqualTo(0x18L);
    }

    @Test
    void mismatchedOrUnsoundOperandsThrowATypedException() {
        try (Filter a = Filters.create(FilterKind.STANDARD, 1000, 10);
                Filter bigger = Filters.create(FilterKind.STANDARD, 2000, 10);
                Filter otherK = Filters.create(FilterKind.STANDARD, 1000, 10, 3);
                Filter blocked = Filters.create(FilterKind.BLOCKED, 1000, 10);
                Filter r1 = Filters.build(FilterKind.RIBBON, new long[] {1, 2, 3}, 10);
                Filter r2 = Filters.build(FilterKind.RIBBON, new long[] {1, 2, 3}, 10)) {
            assertThatThrownBy(() -> Filters.union(a, bigger))
                    .isInstanceOf(IncompatibleFiltersException.class)
                    .hasMessageContaining("m=");
            assertThatThrownBy(() -> Filters.intersection(a, otherK))
                    .isInstanceOf(IncompatibleFiltersException.class)
                    .hasMessageContaining("k=");
            assertThatThrownBy(() -> Filters.union(a, blocked))
                    .isInstanceOf(IncompatibleFiltersException.class)
                    .hasMessageContaining("BLOCKED");
            assertThatThrownBy(() -> Filters.union(r1, r2))
                    .isInstanceOf(IncompatibleFiltersException.class)
                    .hasMessageContaining("RIBBON");
            assertThatThrownBy(() -> Filters.union(a, null)).isInstanceOf(NullPointerException.class);
        }
        Filter closed = Filters.create(FilterKind.STANDARD, 1000, 10);
        closed.close();
        try (Filter a = Filters.create(FilterKind.STANDARD, 1000, 10)) {
            assertThatThrownBy(() -> Filters.union(a, closed)).isInstanceOf(IllegalStateException.class);
        }
    }
}
