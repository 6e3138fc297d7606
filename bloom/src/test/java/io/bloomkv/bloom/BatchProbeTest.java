package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Filter.mightContainAll (touch pass, then probes) answers exactly as mightContain on each hash, for every kind, after touches. */
class BatchProbeTest {
    @Test
    void batchAnswersEqualSingleAnswers() {
        long seed = TestKeys.seed("bloom.batch.seed");
        SplittableRandom random = new SplittableRandom(seed);
        long[] keys = new long[20_000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = random.nextLong();
        }
        for (FilterKind kind : FilterKind.values()) {
            for (double bits : new double[] {3, 7.5, 12}) {
                try (Filter f = TestKeys.filled(kind, keys, bits)) {
                    long[] batch = new long[64];
                    boolean[] results = new boolean[64];
                    for (int round = 0; round < 300; round++) {
                        int count = random.nextInt(65);
                        for (int i = 0; i < count; i++) {
                            batch[i] = random.nextBoolean()
                                    ? Hashing.hash64(TestKeys.longKey(keys[random.nextInt(keys.length)]))
                                    : random.nextLong();
                        }
                        for (int i = 0; i < count; i++) {
                            f.touch(batch[i]); // touching first changes no answer below
                        }
                        int positives = f.mightContainAll(batch, count, results);
                        int expected = 0;
                        for (int i = 0; i < count; i++) {
                            assertThat(results[i])
                                    .as("%s b=%s seed %d", kind, bits, seed)
                                    .isEqualTo(f.mightContain(batch[i]));
                            expected += results[i] ? 1 : 0;
                        }
                        assertThat(positives).isEqualTo(expected);
                    }
                }
            }
        }
        try (Filter empty = Filters.build(FilterKind.RIBBON, new long[0], 7)) {
            assertThat(empty.mightContainAll(new long[] {1, 2, 3}, 3, new boolean[3]))
                    .isZero();
        }
    }
}
