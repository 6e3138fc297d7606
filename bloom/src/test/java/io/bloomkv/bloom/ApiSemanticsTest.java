package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user of Guava's {@link BloomFilter} expects, checked on this library: no false negatives ever, for every kind,
 * after a union or an intersection, after every wire round trip and after COUNTING removals; and the counts and rates
 * next to Guava's on the same workload ({@code approximateElementCount} against {@link Filter#approximateKeyCount()},
 * {@code expectedFpp} against {@link Filter#expectedFpp()}, {@code putAll} against {@link Filters#union}).
 * Randomized: the seed is printed; replay with {@code -Dbloomkv.seed=N}.
 */
@ExtendWith(OffHeapLeakCheck.class)
class ApiSemanticsTest {
    @TempDir
    Path dir;

    private static final FilterKind[] BLOOM_KINDS = {
        FilterKind.STANDARD, FilterKind.PARTITIONED, FilterKind.BLOCKED, FilterKind.COUNTING
    };

    private static long[] distinctHashes(SplittableRandom random, int n) {
        Set<Long> seen = new HashSet<>();
        long[] out = new long[n];
        for (int i = 0; i < n; ) {
            long h = random.nextLong();
            if (seen.add(h)) {
                out[i++] = h;
            }
        }
        return out;
    }

    /** The filter re-read every way there is: a copy, a ByteBuffer, a mapping and the compressed form. */
    private List<Filter> roundTrips(Filter f) throws IOException {
        byte[] bytes = f.toByteArray();
        Path file = Files.write(dir.resolve("f" + System.nanoTime()), bytes);
        ByteArrayOutputStream z = new ByteArrayOutputStream();
        f.writeCompressed(z);
        List<Filter> out = new ArrayList<>();
        out.add(Filters.read(bytes, 0, bytes.length));
        out.add(Filters.read(ByteBuffer.wrap(bytes)));
        out.add(Filters.map(file, 0, bytes.length));
        out.add(Filters.readCompressed(new ByteArrayInputStream(z.toByteArray())));
        return out;
    }

    private static void assertHoldsAll(Filter f, long[] hashes, int from, int to, String what) {
        for (int i = from; i < to; i++) {
            if (!f.mightContain(hashes[i])) {
                throw new AssertionError(what + ": lost hash #" + i + " (" + hashes[i] + ") of " + f);
            }
        }
        boolean[] results = new boolean[to - from];
        long[] slice = java.util.Arrays.copyOfRange(hashes, from, to);
        assertThat(f.mightContainAll(slice, slice.length, results)).as(what).isEqualTo(slice.length);
    }

    @Test
    void noFalseNegativesAfterUnionIntersectionRoundTripsAndRemovals() throws IOException {
        long seed = TestKeys.seed("bloomkv.seed");
        SplittableRandom random = new SplittableRandom(seed);
        for (int trial = 0; trial < 12; trial++) {
            // A = hashes[0, a), B = hashes[a - overlap, a - overlap + b): A ∩ B = [a - overlap, a)
            int a = 1 + random.nextInt(3000);
            int overlap = random.nextInt(a + 1);
            int b = overlap + random.nextInt(3000);
            long[] hashes = distinctHashes(random, a - overlap + b);
            double bitsPerKey = 1 + random.nextDouble() * 19;
            String what = String.format(
                    "seed %d trial %d: |A|=%d |B|=%d overlap %d b=%.3f", seed, trial, a, b, overlap, bitsPerKey);
            for (FilterKind kind : BLOOM_KINDS) {
                try (Filter fa = Filters.create(kind, Math.max(a, b), bitsPerKey);
                        Filter fb = Filters.create(kind, Math.max(a, b), bitsPerKey)) {
                    for (int i = 0; i < a; i++) {
                        fa.add(hashes[i]);
                    }
                    for (int i = a - overlap; i < a - overlap + b; i++) {
                        fb.add(hashes[i]);
                    }
                    try (Filter union = Filters.union(fa, fb);
                            Filter both = Filters.intersection(fa, fb)) {
                        assertHoldsAll(union, hashes, 0, hashes.length, what + " " + kind + " union");
                        assertHoldsAll(both, hashes, a - overlap, a, what + " " + kind + " intersection");
                        for (Filter copy : roundTrips(union)) {
                            try (copy) {
                                assertHoldsAll(copy, hashes, 0, hashes.length, what + " " + kind + " union copy");
                            }
                        }
                    }
                    if (fa instanceof CountingFilter c) {
                        // remove the part of A outside B; what B added is still there, in fb and in fa ∪ fb
                        for (int i = 0; i < a - overlap; i++) {
                            c.remove(hashes[i]);
                        }
                        assertHoldsAll(c, hashes, a - overlap, a, what + " counting after removals");
                        try (Filter union = Filters.union(c, fb)) {
                            assertHoldsAll(union, hashes, a - overlap, hashes.length, what + " counting union");
                        }
                    }
                }
            }
            try (Filter ribbon = Filters.build(FilterKind.RIBBON, hashes, bitsPerKey)) {
                assertHoldsAll(ribbon, hashes, 0, hashes.length, what + " RIBBON");
                for (Filter copy : roundTrips(ribbon)) {
                    try (copy) {
                        assertHoldsAll(copy, hashes, 0, hashes.length, what + " RIBBON copy");
                    }
                }
            }
        }
    }

    /**
     * One workload through Guava and through STANDARD filters of the same m and k: A and B of 20000 keys sharing 5000,
     * each filter sized for 20000 at 1%, then the union (Guava: {@code putAll}).
     */
    @Test
    void countsAndRatesSitNextToGuavasOnTheSameWorkload() {
        long seed = TestKeys.seed("bloomkv.seed");
        SplittableRandom random = new SplittableRandom(seed);
        int n = 20_000;
        int overlap = 5_000;
        long[] keys = new long[2 * n - overlap];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = random.nextLong();
        }
        BloomFilter<Long> ga = BloomFilter.create(Funnels.longFunnel(), n, 0.01);
        BloomFilter<Long> gb = BloomFilter.create(Funnels.longFunnel(), n, 0.01);
        try (Filter fa = Filters.createForFpp(FilterKind.STANDARD, n, 0.01);
                Filter fb = Filters.createForFpp(FilterKind.STANDARD, n, 0.01)) {
            for (int i = 0; i < n; i++) {
                ga.put(keys[i]);
                fa.add(TestKeys.longKey(keys[i]));
            }
            for (int i = n - overlap; i < keys.length; i++) {
                gb.put(keys[i]);
                fb.add(TestKeys.longKey(keys[i]));
            }
            // A alone: both estimates near n; our formula rate and Guava's bit-count rate near each other and 1%
            assertThat(ga.approximateElementCount()).isBetween((long) (0.97 * n), (long) (1.03 * n));
            assertThat(fa.approximateKeyCount()).isBetween((long) (0.97 * n), (long) (1.03 * n));
            assertThat(fa.keyCount()).isEqualTo(n);
            assertThat(fa.expectedFpp() / ga.expectedFpp()).as("seed %d", seed).isBetween(0.85, 1.18);
            assertThat(Math.pow(fa.fractionOfBitsSet(), fa.hashCount()) / ga.expectedFpp())
                    .as("Guava's expectedFpp is (fraction of bits set)^k")
                    .isBetween(0.85, 1.18);
            // the union
            ga.putAll(gb);
            try (Filter union = Filters.union(fa, fb)) {
                int distinct = keys.length;
                double se = FilterMath.approximateKeyCountStandardError(
                        FilterKind.STANDARD, union.bitSize(), union.hashCount(), distinct);
                // 5.5 standard errors: a fresh seed each run lands outside with probability about 4e-8 (4.5: 7e-6)
                assertThat((double) union.approximateKeyCount())
                        .as("seed %d", seed)
                        .isBetween(distinct - 5.5 * se, distinct + 5.5 * se);
                assertThat(ga.approximateElementCount()).isBetween((long) (0.95 * distinct), (long) (1.05 * distinct));
                // keyCount (and so expectedFpp) counts the adds: the 5000 shared keys twice (README, "Guava users")
                assertThat(union.keyCount()).isEqualTo(2L * n);
                assertThat(union.expectedFpp()).isGreaterThan(Math.pow(union.fractionOfBitsSet(), union.hashCount()));
                double fromBits = Math.pow(union.fractionOfBitsSet(), union.hashCount());
                assertThat(fromBits / ga.expectedFpp()).as("seed %d", seed).isBetween(0.8, 1.25);
                for (long k : keys) {
                    assertThat(ga.mightContain(k)).isTrue();
                    assertThat(union.mightContain(TestKeys.longKey(k))).isTrue();
                }
                // measured rates of both, on keys never added, near each one's bit-count rate
                int fpOurs = 0;
                int fpGuava = 0;
                int probes = 200_000;
                for (int i = 0; i < probes; i++) {
                    long k = random.nextLong();
                    fpOurs += union.mightContain(TestKeys.longKey(k)) ? 1 : 0;
                    fpGuava += ga.mightContain(k) ? 1 : 0;
                }
                assertThat((double) fpOurs / probes).as("seed %d", seed).isBetween(0.8 * fromBits, 1.25 * fromBits);
                assertThat((double) fpGuava / probes)
                        .as("seed %d", seed)
                        .isBetween(0.8 * ga.expectedFpp(), 1.25 * ga.expectedFpp());
            }
        }
    }
}
