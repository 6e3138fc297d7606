package io.bloomkv.engine.internal.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** Concurrent updates from more threads than stripes (some share one) all land in the sum. */
class StripedCounterTest {

    @Test
    void concurrentUpdatesSumExactly() throws InterruptedException {
        StripedCounter c = new StripedCounter();
        int threads = 2 * Runtime.getRuntime().availableProcessors() * 2 + 3;
        int perThread = 20_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    if ((i & 1) == 0) {
                        c.increment();
                    } else {
                        c.add(id + 1);
                    }
                }
            });
            th.start();
            ts.add(th);
        }
        start.countDown();
        for (Thread th : ts) {
            th.join();
        }
        long expected = 0;
        for (int t = 0; t < threads; t++) {
            expected += perThread / 2 + (long) (perThread / 2) * (t + 1);
        }
        assertThat(c.sum()).isEqualTo(expected);
        assertThat(c).hasToString(Long.toString(expected));
    }

    @Test
    void startsAtZeroAndTakesNegativeAdds() {
        StripedCounter c = new StripedCounter();
        assertThat(c.sum()).isZero();
        c.add(5);
        c.add(-7);
        c.increment();
        assertThat(c.sum()).isEqualTo(-1);
        c.reset();
        assertThat(c.sum()).isZero();
    }
}
