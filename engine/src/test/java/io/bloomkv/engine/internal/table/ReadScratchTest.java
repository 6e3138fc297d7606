package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link ReadScratch}: one holder at a time per thread, its own buffers per thread, growth up to the limit. */
class ReadScratchTest {

    @Test
    void aThreadsBuffersGoToOneReadAtATime() throws Exception {
        ReadScratch s = ReadScratch.acquire();
        assertThat(s).isNotNull();
        assertThat(ReadScratch.acquire())
                .as("a nested read of the same thread allocates")
                .isNull();
        AtomicReference<ReadScratch> other = new AtomicReference<>();
        Thread t = new Thread(() -> {
            ReadScratch o = ReadScratch.acquire();
            other.set(o);
            o.release();
        });
        t.start();
        t.join();
        assertThat(other.get()).as("another thread has its own").isNotNull().isNotSameAs(s);
        s.release();
        assertThat(ReadScratch.acquire()).as("released: the same buffers again").isSameAs(s);
        s.release();
    }

    @Test
    void buffersGrowToTheLargestBlockUpToTheLimit() {
        ReadScratch s = ReadScratch.acquire();
        try {
            byte[] a = s.stored(100);
            assertThat(a.length).isGreaterThanOrEqualTo(100);
            assertThat(s.stored(50)).isSameAs(a);
            byte[] big = s.stored(100_000);
            assertThat(big.length).isGreaterThanOrEqualTo(100_000).isLessThanOrEqualTo(ReadScratch.MAX_BYTES);
            assertThat(s.contents(ReadScratch.MAX_BYTES)).hasSize(ReadScratch.MAX_BYTES);
            assertThat(s.contents(ReadScratch.MAX_BYTES + 1))
                    .as("above the limit: the caller allocates")
                    .isNull();
            assertThat(s.stored(ReadScratch.MAX_BYTES + 1)).isNull();
            assertThat(s.stored(10)).as("kept").isSameAs(big);
            assertThat(s.contents(10)).isNotSameAs(s.stored(10)).as("two distinct buffers");
        } finally {
            s.release();
        }
    }
}
