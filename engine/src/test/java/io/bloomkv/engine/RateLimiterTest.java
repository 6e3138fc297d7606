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

    /**
     * Closing while a compaction sleeps in the limiter returns: the compaction is abandoned at its next entry, so
     * close waits for one write's tokens, not for the compaction (here minutes of bytes at the rate). A hang would show
     * as the generous bound passing.
     */
    @Test
    void closeDoesNotWaitForARateLimitedCompaction() throws Exception {
        Options load = Options.defaults()
                .compression(Compression.NONE)
                .writeBufferSize(64 << 10)
                .targetFileSize(32 << 10)
                .autoCompaction(false)
                .syncMode(SyncMode.NONE);
        long seed = TestKeys.seed("RateLimiterTest.close");
        java.util.Random rnd = new java.util.Random(seed);
        try (Db db = Db.open(dir, load)) {
            for (int i = 0; i < 20_000; i++) {
                db.put(TestKeys.key(rnd.nextInt(20_000)), TestKeys.value(rnd, 100));
            }
            db.put(TestKeys.key(42), TestKeys.bytes("kept"));
            db.flush();
            assertThat(db.stats().levelTables(0)).as("seed " + seed).isGreaterThan(20);
        }
        long rate = 8 << 10; // the level-0 tables (megabytes) would take minutes at this rate
        java.util.concurrent.ExecutorService closer = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            Db db = Db.open(
                    dir, load.copy().autoCompaction(true).l0CompactionTrigger(4).rateLimiter(rate));
            RateLimiter limiter = db.rateLimiterForTests();
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
            while (limiter.waitedMicros() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(limiter.waitedMicros())
                    .as("the compaction waits for tokens")
                    .isPositive();
            java.util.concurrent.Future<?> closed = closer.submit(db::close);
            closed.get(60, java.util.concurrent.TimeUnit.SECONDS);
        } finally {
            closer.shutdownNow();
        }
        try (Db db = Db.open(dir, load)) {
            assertThat(db.get(TestKeys.key(42))).isEqualTo(TestKeys.bytes("kept"));
        }
    }
}
