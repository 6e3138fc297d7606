package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Fixed seed, exact counts: any change to hashing, probe derivation or sizing changes these numbers (and
 * then the serialized format's hash version must change too).
 */
class ExactCountRegressionTest {
    static final long SEED = 20261121L;
    static final int N = 10_000;
    static final int ABSENT = 100_000;

    private static long[] falsePositives(FilterKind kind) {
        SplittableRandom random = new SplittableRandom(SEED);
        try (Filter f = Filters.create(kind, N, 10)) {
            for (int i = 0; i < N; i++) {
                f.add(TestKeys.longKey(random.nextLong()));
            }
            long fp = 0;
            for (int i = 0; i < ABSENT; i++) {
                if (f.mightContain(TestKeys.longKey(random.nextLong()))) {
                    fp++;
                }
            }
            long setBits = Math.round(f.fractionOfBitsSet() * f.bitSize());
            return new long[] {f.bitSize(), f.hashCount(), setBits, fp};
        }
    }

    @Test
    void pinnedCounts() {
        assertThat(falsePositives(FilterKind.STANDARD))
                .as("STANDARD m, k, set, fp")
                .containsExactly(PINNED_STANDARD);
        assertThat(falsePositives(FilterKind.PARTITIONED))
                .as("PARTITIONED m, k, set, fp")
                .containsExactly(PINNED_PARTITIONED);
        assertThat(falsePositives(FilterKind.BLOCKED))
                .as("BLOCKED m, k, set, fp")
                .containsExactly(PINNED_BLOCKED);
        assertThat(falsePositives(FilterKind.COUNTING))
                .as("COUNTING m, k, set, fp")
                .containsExactly(PINNED_COUNTING);
    }

    static final long[] PINNED_STANDARD = {100032, 7, 50284, 850};
    static final long[] PINNED_PARTITIONED = {100352, 7, 50273, 732};
    static final long[] PINNED_BLOCKED = {100352, 6, 45029, 998};
    static final long[] PINNED_COUNTING = {100000, 7, 50285, 788};
}
