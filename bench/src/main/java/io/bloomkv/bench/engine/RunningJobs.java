package io.bloomkv.bench.engine;

import io.bloomkv.engine.EventListener;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts bloomkv's flushes and compactions between their begin event and their end: the completed event, or the
 * {@link EventListener#onBackgroundError} of a job of that kind that failed (a failed job never completes; the engine
 * delivers its begin event before the error). The error names the operation, not the job, so a failure is charged to
 * some running job of that kind, and to none when none has begun (a compaction that failed before it began): a count
 * never goes negative, and one job's failure never ends a job of the other kind.
 */
final class RunningJobs implements EventListener {
    private final AtomicInteger flushes = new AtomicInteger();
    private final AtomicInteger compactions = new AtomicInteger();

    /** Flushes and compactions running now. */
    int running() {
        return flushes.get() + compactions.get();
    }

    @Override
    public void onFlushBegin(FlushInfo info) {
        flushes.incrementAndGet();
    }

    @Override
    public void onFlushCompleted(FlushCompletedInfo info) {
        ended(flushes);
    }

    @Override
    public void onCompactionBegin(CompactionInfo info) {
        compactions.incrementAndGet();
    }

    @Override
    public void onCompactionCompleted(CompactionCompletedInfo info) {
        ended(compactions);
    }

    /** A failed flush or compaction ended; errors of foreground paths ({@code WAL sync}, ...) end no job. */
    @Override
    public boolean onBackgroundError(BackgroundErrorInfo info) {
        switch (info.operation()) {
            case "flush" -> ended(flushes);
            case "compaction" -> ended(compactions);
            default -> {}
        }
        return false; // the bench only watches: the error stops writes as it would without it
    }

    private static void ended(AtomicInteger count) {
        count.updateAndGet(n -> Math.max(0, n - 1));
    }
}
