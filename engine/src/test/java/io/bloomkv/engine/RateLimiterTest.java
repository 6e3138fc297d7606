package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link RateLimiter}'s token bucket on a fake clock, and {@link Options#rateLimiter} on a database's table writes. */
class RateLimiterTest {
    @TempDir
    Path dir;

    @Test
    void bucketRefillsAtTheRateAndCapsAtOneSecond() {
        AtomicLong clock = new AtomicLong(0);
        RateLimiter r = new RateLimiter(1000, clock::get);
        assertThat(r.reserve(1000)).as("a full bucket at start").isZero();
        assertThat(r.reserve(500)).as("500 bytes of debt at 1000 B/s").isEqualTo(500_000_000L);
        clock.addAndGet(500_000_000L); // the debt is paid
        assertThat(r.reserve(0)).isZero();
        clock.addAndGet(10_000_000_000L); // ten idle seconds bank only one second of tokens
        assertThat(r.reserve(1000)).isZero();
        assertThat(r.reserve(1)).isEqualTo(1_000_000L);
        assertThat(r.waitedMicros()).isEqualTo(501_000L);
        assertThatThrownBy(() -> new RateLimiter(0)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> Options.defaults().rateLimiter(-1)).isInstanceOf(InvalidArgumentException.class);
        assertThat(Options.defaults().rateLimiter(5).copy().rateLimiter()).isEqualTo(5);
    }

    @Test
    void flushesDrawFromTheBucket() {
        long rate = 100 << 10;
        // zero values compress to nothing under the default LZ4: NONE keeps the flushed bytes above two seconds' worth
        Options opts = Options.defaults()
                .compression(Compression.NONE)
                .writeBufferSize(64 << 10)
                .autoCompaction(false)
                .syncMode(SyncMode.NONE)
                .rateLimiter(rate);
        try (Db db = Db.open(dir, opts)) {
            for (int i = 0; i < 2500; i++) {
                db.put(TestKeys.key(i), new byte[100]);
            }
            db.flush();
            long tableBytes = db.stats().tableBytes();
            assertThat(tableBytes).isGreaterThan(2 * rate);
            RateLimiter limiter = db.rateLimiterForTests();
            // the first second's bytes were banked; the rest had to wait for tokens
            assertThat(limiter.waitedMicros()).isPositive();
        }
        try (Db db = Db.open(dir.resolve("unlimited"), Options.defaults())) {
            assertThat(db.rateLimiterForTests()).isNull();
        }
    }
}
