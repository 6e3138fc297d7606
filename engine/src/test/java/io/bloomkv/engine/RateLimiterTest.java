package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;

/**
 * {@link RateLimiter}'s token bucket on a fake clock, its rate changed while writes wait
 * ({@link RateLimiter#setBytesPerSecond}, RocksDB's {@code SetBytesPerSecond}), and {@link Options#rateLimiter} on a
 * database's table writes. The waits are the bucket's own accounting (nanoseconds on its clock); the tests that
 * block on the real clock bound only how long a hang may take to show.
 */
class RateLimiterTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    /** Takes {@code bytes} now and answers how long the write must wait at the current rate. */
    private static long take(RateLimiter r, long bytes) {
        return r.waitNanos(r.reserve(bytes));
    }

    @Test
    void bucketRefillsAtTheRateAndCapsAtOneSecond() {
        AtomicLong clock = new AtomicLong(0);
        RateLimiter r = new RateLimiter(1000, clock::get);
        assertThat(take(r, 1000)).as("a full bucket at start").isZero();
        assertThat(take(r, 500)).as("500 bytes of debt at 1000 B/s").isEqualTo(500_000_000L);
        clock.addAndGet(500_000_000L); // the debt is paid
        assertThat(take(r, 0)).isZero();
        clock.addAndGet(10_000_000_000L); // ten idle seconds bank only one second of tokens
        assertThat(take(r, 1000)).isZero();
        assertThat(take(r, 1)).isEqualTo(1_000_000L);
        assertThat(r.totalBytes()).isEqualTo(2501);
        assertThatThrownBy(() -> new RateLimiter(0)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> Options.defaults().rateLimiter(-1)).isInstanceOf(InvalidArgumentException.class);
        assertThat(Options.defaults().rateLimiter(5).copy().rateLimiter()).isEqualTo(5);
    }

    /**
     * The tokens refilled before a change count at the old rate, the debt left is paid at the new one, and the bucket
     * banks one second of the new rate: the bytes a write may take over a span of the fake clock follow the rate set.
     */
    @Test
    void aNewRateAppliesFromItsMomentToTheDebtAndTheBurst() {
        AtomicLong clock = new AtomicLong(0);
        RateLimiter r = new RateLimiter(1000, clock::get);
        assertThat(r.getBytesPerSecond()).isEqualTo(1000);
        long first = r.reserve(3000); // 2000 bytes of debt: 2 s at 1000 B/s
        assertThat(r.waitNanos(first)).isEqualTo(2_000_000_000L);
        clock.addAndGet(500_000_000L); // 500 bytes paid at the old rate
        assertThat(r.waitNanos(first)).isEqualTo(1_500_000_000L);
        r.setBytesPerSecond(3000);
        assertThat(r.getBytesPerSecond()).isEqualTo(3000);
        assertThat(r.waitNanos(first)).as("the 1500 bytes left, at 3000 B/s").isEqualTo(500_000_000L);
        long second = r.reserve(3000); // behind the first: served after it
        assertThat(r.waitNanos(second)).isEqualTo(1_500_000_000L);
        clock.addAndGet(500_000_000L);
        assertThat(r.waitNanos(first)).isZero();
        assertThat(r.waitNanos(second)).isEqualTo(1_000_000_000L);
        clock.addAndGet(1_000_000_000L);
        assertThat(r.waitNanos(second)).isZero();

        clock.addAndGet(10_000_000_000L); // idle: the bucket banks one second at the raised rate
        assertThat(take(r, 3000)).isZero();
        assertThat(take(r, 3)).isEqualTo(1_000_000L);
        r.setBytesPerSecond(100); // lowered while 3 bytes are owed
        assertThat(take(r, 0)).as("the debt left, at the lowered rate").isEqualTo(30_000_000L);
        clock.addAndGet(10_000_000_000L); // and the bucket banks one second of the lowered rate only
        assertThat(take(r, 100)).isZero();
        assertThat(take(r, 1)).isEqualTo(10_000_000L);
        assertThat(r.totalBytes()).isEqualTo(9104);
    }

    @Test
    void aRateThatIsNotPositiveIsRejectedAndChangesNothing() {
        RateLimiter r = new RateLimiter(1000);
        for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
            assertThatThrownBy(() -> r.setBytesPerSecond(bad))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining(Long.toString(bad));
            assertThatThrownBy(() -> new RateLimiter(bad)).isInstanceOf(InvalidArgumentException.class);
        }
        assertThat(r.getBytesPerSecond()).isEqualTo(1000);
        r.setBytesPerSecond(Long.MAX_VALUE); // the way to lift the limit
        assertThat(r.getBytesPerSecond()).isEqualTo(Long.MAX_VALUE);
        r.acquire(1L << 40);
        assertThat(r.waitingWrites()).isZero();
    }

    /** Options.toString names the limiter, shared (with its rate now) or the database's own, and none when unset. */
    @Test
    void optionsShowTheRateLimiter() {
        RateLimiter shared = new RateLimiter(1000);
        Options o = Options.defaults().rateLimiter(shared);
        assertThat(o.toString()).contains("rateLimiter=shared 1000 B/s");
        shared.setBytesPerSecond(2000);
        assertThat(o.toString()).contains("rateLimiter=shared 2000 B/s");
        assertThat(Options.defaults().rateLimiter(5000L).toString()).contains("rateLimiter=5000 B/s");
        assertThat(Options.defaults().toString()).doesNotContain("rateLimiter");
    }

    /**
     * A write owing a million seconds at 1 B/s is released once the rate is raised, without waiting out the wait it
     * was given. Without the change being seen by waiting writes, the latch would time out.
     */
    @Test
    void raisingTheRateReleasesAWaitingWrite() throws Exception {
        RateLimiter r = new RateLimiter(1);
        r.acquire(1); // the bucket's one token
        CountDownLatch released = new CountDownLatch(1);
        Thread writer = new Thread(() -> {
            r.acquire(1_000_000);
            released.countDown();
        });
        writer.setDaemon(true);
        writer.start();
        awaitWaiting(r, 1);
        assertThat(released.getCount()).as("waits at 1 B/s").isEqualTo(1);
        r.setBytesPerSecond(1L << 40);
        assertThat(released.await(60, TimeUnit.SECONDS))
                .as("released after the raise")
                .isTrue();
        writer.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(r.waitingWrites()).isZero();
        assertThat(r.waitedMicros()).isPositive();
    }

    private static void awaitWaiting(RateLimiter r, int writes) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int waiting;
        while ((waiting = r.waitingWrites()) < writes && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(waiting).as("writes waiting for tokens").isGreaterThanOrEqualTo(writes);
    }

    /**
     * Writers on several threads take tokens while another thread keeps changing the rate, low and high: every write
     * returns (no lost wake-up, no deadlock), and the bucket counts every byte taken exactly once.
     */
    @Test
    void concurrentWritesAndRateChangesLoseNothing() throws Exception {
        RateLimiter r = new RateLimiter(1 << 16);
        int writers = 4;
        int writes = 300;
        int bytes = 1000;
        ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                done.add(pool.submit(() -> {
                    for (int i = 0; i < writes; i++) {
                        r.acquire(bytes);
                    }
                }));
            }
            awaitWaiting(r, 1); // a second's tokens banked, then every write owes: the changes meet waiting writes
            Future<?> setter = pool.submit(() -> {
                for (int i = 0; i < 2000; i++) {
                    r.setBytesPerSecond(i % 2 == 0 ? 1 << 12 : 1L << 34);
                    assertThat(r.getBytesPerSecond()).isPositive();
                }
                r.setBytesPerSecond(1L << 40); // the debt left is paid at once
            });
            setter.get(60, TimeUnit.SECONDS);
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(r.totalBytes()).isEqualTo((long) writers * writes * bytes);
        assertThat(r.waitingWrites()).isZero();
        assertThat(r.getBytesPerSecond()).isEqualTo(1L << 40);
    }

    /**
     * One limiter passed to two databases is one budget: both flushes wait on it at a low rate, and raising its rate
     * while they wait lets both finish, without waiting out the minutes their next block was given (RocksDB's shared
     * {@code rate_limiter}, changed with {@code SetBytesPerSecond}).
     */
    @Test
    void aSharedLimiterRaisedWhileTwoDatabasesFlushReleasesBoth() throws Exception {
        RateLimiter limiter = new RateLimiter(16); // a table block alone takes minutes
        Options opts = Options.defaults()
                .compression(Compression.NONE)
                .autoCompaction(false)
                .syncMode(SyncMode.NONE)
                .rateLimiter(64L << 20) // ignored: the limiter below is used
                .rateLimiter(limiter);
        assertThat(opts.copy().sharedRateLimiter()).isSameAs(limiter);
        ExecutorService flushers = Executors.newFixedThreadPool(2);
        try (Db a = Db.open(dir.resolve("a"), opts);
                Db b = Db.open(dir.resolve("b"), opts.copy())) {
            assertThat(a.rateLimiterForTests()).isSameAs(limiter);
            assertThat(b.rateLimiterForTests()).isSameAs(limiter);
            for (int i = 0; i < 2500; i++) {
                a.put(TestKeys.key(i), new byte[100]);
                b.put(TestKeys.key(i), new byte[100]);
            }
            Future<?> flushA = flushers.submit(() -> a.flush());
            Future<?> flushB = flushers.submit(() -> b.flush());
            awaitWaiting(limiter, 2);
            limiter.setBytesPerSecond(1L << 40);
            flushA.get(60, TimeUnit.SECONDS);
            flushB.get(60, TimeUnit.SECONDS);
            assertThat(a.stats().tableBytes() + b.stats().tableBytes()).isPositive();
            assertThat(limiter.totalBytes())
                    .isEqualTo(a.stats().tableBytes() + b.stats().tableBytes());
            assertThat(a.get(TestKeys.key(7))).hasSize(100);
        } finally {
            flushers.shutdownNow();
        }
    }

    /**
     * rocksdbjni, the oracle of the semantics above: {@code getBytesPerSecond} answers the rate set, the single burst
     * (one refill period's bytes) follows it, and a flush waiting at a low rate finishes once the rate is raised.
     * (RocksDB requires a rate &gt; 0 without checking it: rocksdbjni's {@code setBytesPerSecond(0)} divides by zero in
     * native code, and a negative rate is taken as is. bloomkv throws {@link InvalidArgumentException} instead.)
     */
    @Test
    void rocksDbReleasesAWaitingFlushWhenTheRateIsRaised() throws Exception {
        ExecutorService flusher = Executors.newSingleThreadExecutor();
        try (org.rocksdb.RateLimiter limiter = new org.rocksdb.RateLimiter(1000);
                org.rocksdb.Options ro = new org.rocksdb.Options()
                        .setCreateIfMissing(true)
                        .setCompressionType(org.rocksdb.CompressionType.NO_COMPRESSION)
                        .setRateLimiter(limiter);
                RocksDB rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            assertThat(limiter.getSingleBurstBytes()).isEqualTo(100); // 1000 B/s over 100 ms refills
            for (int i = 0; i < 2500; i++) {
                rocks.put(TestKeys.key(i), new byte[100]);
            }
            Future<?> flush = flusher.submit(() -> {
                rocks.flush(fo);
                return null;
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (limiter.getTotalBytesThrough() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(limiter.getTotalBytesThrough()).isPositive();
            assertThat(flush.isDone())
                    .as("hundreds of seconds of bytes at 1000 B/s")
                    .isFalse();
            limiter.setBytesPerSecond(1L << 30);
            assertThat(limiter.getBytesPerSecond()).isEqualTo(1L << 30);
            assertThat(limiter.getSingleBurstBytes()).isEqualTo((1L << 30) / 10);
            flush.get(60, TimeUnit.SECONDS);
        } finally {
            flusher.shutdownNow();
        }
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
            int waiting;
            while ((waiting = limiter.waitingWrites()) == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(waiting).as("the compaction waits for tokens").isPositive();
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
