package io.bloomkv.engine.internal.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RefCountTest {
    @Test
    void lastReleaseIsReportedOnceAndTheCountCannotBeRevived() {
        RefCount refs = new RefCount("table t.sst");
        assertThat(refs.get()).isEqualTo(1);
        assertThat(refs.tryRetain()).isTrue();
        assertThat(refs.get()).isEqualTo(2);
        assertThat(refs.release()).isFalse();
        assertThat(refs.release()).isTrue();
        assertThat(refs.get()).isZero();
        assertThat(refs.tryRetain()).isFalse();
        assertThat(refs.get()).isZero();
    }

    @Test
    void releasingMoreOftenThanRetainedNamesTheSubject() {
        RefCount refs = new RefCount("table t.sst");
        assertThat(refs.release()).isTrue();
        assertThatThrownBy(refs::release)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("table t.sst released more often than retained");
    }

    @Test
    void concurrentRetainsAndReleasesBalance() throws InterruptedException {
        RefCount refs = new RefCount("x");
        AtomicInteger wrong = new AtomicInteger();
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            threads[t] = new Thread(() -> {
                for (int i = 0; i < 10_000; i++) {
                    if (!refs.tryRetain() || refs.release()) {
                        wrong.incrementAndGet();
                    }
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(wrong.get()).as("failed retains or early last releases").isZero();
        assertThat(refs.get()).isEqualTo(1);
        assertThat(refs.release()).isTrue();
    }
}
