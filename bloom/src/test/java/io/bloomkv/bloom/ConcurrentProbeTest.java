package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Concurrent mightContain on a built filter gives every thread the single-threaded answers. */
class ConcurrentProbeTest {
    static final int N = 20_000;
    static final int THREADS = 4;

    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void concurrentReadersAgree(FilterKind kind) throws Exception {
        long[] even = new long[N];
        for (int i = 0; i < N; i++) {
            even[i] = i * 2L;
        }
        try (Filter f = TestKeys.filled(kind, even, 8)) {
            long expectedPositives = 0;
            for (int i = 0; i < 2 * N; i++) {
                if (f.mightContain(TestKeys.longKey(i))) {
                    expectedPositives++;
                }
            }
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            CountDownLatch start = new CountDownLatch(1);
            try {
                List<Future<long[]>> results = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    results.add(pool.submit(() -> {
                        start.await();
                        long positives = 0;
                        long missed = 0;
                        for (int round = 0; round < 5; round++) {
                            for (int i = 0; i < 2 * N; i++) {
                                boolean hit = f.mightContain(Hashing.hash64(TestKeys.longKey(i)));
                                positives += hit ? 1 : 0;
                                missed += (i % 2 == 0 && !hit) ? 1 : 0;
                            }
                        }
                        return new long[] {positives, missed};
                    }));
                }
                start.countDown();
                for (Future<long[]> r : results) {
                    long[] got = r.get();
                    assertThat(got[1]).as("false negatives").isZero();
                    assertThat(got[0]).isEqualTo(5 * expectedPositives);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
