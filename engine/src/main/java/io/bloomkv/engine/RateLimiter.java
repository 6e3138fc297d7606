package io.bloomkv.engine;

import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * A cap on the bytes per second that flushes and compactions write to table files (RocksDB's {@code RateLimiter}
 * from {@code NewGenericRateLimiter}), so background work leaves the device's bandwidth to foreground reads. A
 * database gets its own from {@link Options#rateLimiter(long)}; one created here and passed to
 * {@link Options#rateLimiter(RateLimiter)} is shared by every database given it (one budget for all of them), and its
 * rate can be changed while they run: {@link #setBytesPerSecond(long)} (RocksDB's {@code SetBytesPerSecond}).
 *
 * <p>A token bucket: tokens (bytes) refill continuously at the rate, up to one second's worth banked. A write takes its
 * bytes at once, going into debt if need be, and waits until the debt is paid: a large write waits in proportion to
 * its size and the writes behind it wait for it (first come, first served), so the long-run rate never exceeds the
 * limit. A new rate applies from the moment it is set, to the debt still unpaid too: raising it wakes the waiting
 * writes, which then wait only for what the new rate still needs. Thread-safe; writes wait without holding the
 * bucket's lock (and outside every engine lock: table writes happen outside the database mutex). Nothing to release.
 */
public final class RateLimiter {
    private final LongSupplier nanoClock;
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when the rate changes: waiting writes recompute their wait. */
    private final Condition rateChanged = lock.newCondition();

    // All guarded by lock.
    private long bytesPerSecond;
    /** Negative while writes are in debt; at most one second's worth (the burst) at the current rate. */
    private double tokens;

    private long lastRefill;
    /** Bytes taken by every write so far: a write's total after its own bytes is its place in line. */
    private long reservedBytes;

    private long waitedNanos;
    /** Writes waiting for tokens now. */
    private int waiting;

    /**
     * A bucket at {@code bytesPerSecond}, full (one second's worth) at start, as RocksDB's first refill.
     *
     * @throws InvalidArgumentException if {@code bytesPerSecond <= 0} (no limit is {@code Options.rateLimiter(0)},
     *     or no limiter at all)
     */
    public RateLimiter(long bytesPerSecond) {
        this(bytesPerSecond, System::nanoTime);
    }

    RateLimiter(long bytesPerSecond, LongSupplier nanoClock) {
        checkRate(bytesPerSecond);
        this.bytesPerSecond = bytesPerSecond;
        this.nanoClock = nanoClock;
        this.lastRefill = nanoClock.getAsLong();
        this.tokens = bytesPerSecond;
    }

    private static void checkRate(long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new InvalidArgumentException("rate limit must be > 0 bytes per second, got " + bytesPerSecond);
        }
    }

    /**
     * Changes the rate, for every database sharing this limiter, from now on (RocksDB's {@code SetBytesPerSecond}):
     * the tokens refilled so far count at the old rate, the debt still unpaid is paid at the new one, and the bucket
     * holds at most one second's worth of the new rate. Writes waiting for tokens recompute their wait at once, so
     * raising the rate releases them as soon as the new rate has paid for them. Thread-safe.
     *
     * @throws InvalidArgumentException if {@code bytesPerSecond <= 0}, as the constructor (RocksDB requires
     *     {@code > 0} too); to lift the limit, set a rate above what the device sustains, such as
     *     {@code Long.MAX_VALUE}
     */
    public void setBytesPerSecond(long bytesPerSecond) {
        checkRate(bytesPerSecond);
        lock.lock();
        try {
            refill(nanoClock.getAsLong());
            this.bytesPerSecond = bytesPerSecond;
            tokens = Math.min(tokens, bytesPerSecond);
            rateChanged.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The bytes per second now (RocksDB's {@code GetBytesPerSecond}). */
    public long getBytesPerSecond() {
        lock.lock();
        try {
            return bytesPerSecond;
        } finally {
            lock.unlock();
        }
    }

    /** Adds the tokens refilled at the current rate since the last refill, up to one second's worth. */
    private void refill(long now) {
        tokens = Math.min(bytesPerSecond, tokens + (now - lastRefill) * (double) bytesPerSecond / 1e9);
        lastRefill = now;
    }

    /** Takes {@code bytes} tokens now, into debt if need be; answers the write's place in line ({@link #waitNanos}). */
    long reserve(long bytes) {
        lock.lock();
        try {
            refill(nanoClock.getAsLong());
            tokens -= bytes;
            reservedBytes += bytes;
            return reservedBytes;
        } finally {
            lock.unlock();
        }
    }

    /** How long the write at {@code place} must still wait at the current rate; 0 once its debt is paid. */
    long waitNanos(long place) {
        lock.lock();
        try {
            refill(nanoClock.getAsLong());
            // the bucket as it would be without the writes behind this one: they took their tokens after it
            double covered = tokens + (reservedBytes - place);
            return covered >= 0 ? 0 : (long) Math.ceil(-covered * 1e9 / bytesPerSecond);
        } finally {
            lock.unlock();
        }
    }

    /** Takes {@code bytes} tokens, waiting (uninterruptibly) while the bucket is in debt for them. */
    void acquire(long bytes) {
        boolean interrupted = false;
        lock.lock();
        try {
            long place = reserve(bytes);
            long wait = waitNanos(place);
            if (wait == 0) {
                return;
            }
            long start = nanoClock.getAsLong();
            waiting++;
            try {
                while (wait > 0) {
                    try {
                        rateChanged.awaitNanos(wait);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                    wait = waitNanos(place);
                }
            } finally {
                waiting--;
                waitedNanos += nanoClock.getAsLong() - start;
            }
        } finally {
            lock.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Time writes waited for tokens so far, in microseconds. */
    long waitedMicros() {
        lock.lock();
        try {
            return TimeUnit.NANOSECONDS.toMicros(waitedNanos);
        } finally {
            lock.unlock();
        }
    }

    /** Writes waiting for tokens now. */
    int waitingWrites() {
        lock.lock();
        try {
            return waiting;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes every write has taken so far (RocksDB's {@code GetTotalBytesThrough}, counted when taken). */
    long totalBytes() {
        lock.lock();
        try {
            return reservedBytes;
        } finally {
            lock.unlock();
        }
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

    @Override
    public String toString() {
        return "RateLimiter[" + getBytesPerSecond() + " B/s]";
    }
}
