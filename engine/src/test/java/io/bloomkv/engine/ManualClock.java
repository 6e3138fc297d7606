package io.bloomkv.engine;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand ({@link Options#clock}): TTL and periodic-compaction tests never sleep. */
final class ManualClock extends Clock {
    private final AtomicLong millis;

    ManualClock(long startSeconds) {
        this.millis = new AtomicLong(startSeconds * 1000);
    }

    void advanceSeconds(long seconds) {
        millis.addAndGet(seconds * 1000);
    }

    long seconds() {
        return Math.floorDiv(millis.get(), 1000L);
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
