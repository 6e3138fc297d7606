package io.bloomkv.engine;

import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * {@link Options#rateLimiter(long)}: a token bucket that the table writes of flushes and compactions draw from, so
 * background work leaves the device's bandwidth to foreground reads (RocksDB's {@code GenericRateLimiter}). Tokens
 * (bytes) refill continuously at the rate, up to one second's worth banked. A write takes its bytes at once, going
 * into debt if need be, and sleeps until the debt is paid: a large write waits in proportion to its size and the
 * writes behind it wait for it (first come, first served), so the long-run rate never exceeds the limit.
 * Thread-safe; the sleeping is done outside the bucket's lock (and outside every engine lock: table writes happen
 * outside the database mutex).
 */
final class RateLimiter {
    private final long bytesPerSecond;
    private final LongSupplier nanoClock;
    /** Guarded by this; negative while writes are in debt. */
    private double tokens;

    private long lastRefill;
    private long waitedNanos;

    RateLimiter(long bytesPerSecond) {
        this(bytesPerSecond, System::nanoTime);
    }

    RateLimiter(long bytesPerSecond, LongSupplier nanoClock) {
        if (bytesPerSecond <= 0) {
            throw new InvalidArgumentException("rate limit must be > 0 bytes per second, got " + bytesPerSecond);
        }
        this.bytesPerSecond = bytesPerSecond;
        this.nanoClock = nanoClock;
        this.lastRefill = nanoClock.getAsLong();
        this.tokens = bytesPerSecond; // a full bucket at start, as RocksDB's first refill
    }

    /** How long a write of {@code bytes} must wait now (taking its tokens); 0 when the bucket covers it. */
    synchronized long reserve(long bytes) {
        long now = nanoClock.getAsLong();
        tokens = Math.min(bytesPerSecond, tokens + (now - lastRefill) * (double) bytesPerSecond / 1e9);
        lastRefill = now;
        tokens -= bytes;
        long wait = tokens >= 0 ? 0 : (long) Math.ceil(-tokens * 1e9 / bytesPerSecond);
        waitedNanos += wait;
        return wait;
    }

    /** Takes {@code bytes} tokens, sleeping (uninterruptibly) while the bucket is in debt. */
    void acquire(long bytes) {
        long wait = reserve(bytes);
        long deadline = System.nanoTime() + wait;
        while (wait > 0) {
            LockSupport.parkNanos(wait);
            wait = deadline - System.nanoTime();
        }
    }

    long bytesPerSecond() {
        return bytesPerSecond;
    }

    /** Time writes were told to wait so far, in microseconds. */
    synchronized long waitedMicros() {
        return TimeUnit.NANOSECONDS.toMicros(waitedNanos);
    }

    /** {@code file} with every append drawing from this bucket first. */
    WritableFile limit(WritableFile file) {
        return new ForwardingFileSystem.ForwardingWritableFile(file) {
            @Override
            public void append(byte[] b, int off, int len) throws IOException {
                acquire(len);
                super.append(b, off, len);
            }
        };
    }
}
