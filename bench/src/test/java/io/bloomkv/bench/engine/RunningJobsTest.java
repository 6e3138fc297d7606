package io.bloomkv.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.BloomKvIOException;
import io.bloomkv.engine.EventListener;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The bench's count of running flushes and compactions ends a job at its completed event or at its failure. */
class RunningJobsTest {
    private static final Path DIR = Path.of("db");

    private static EventListener.BackgroundErrorInfo error(String operation) {
        return new EventListener.BackgroundErrorInfo(
                DIR, operation, new BloomKvIOException("injected", new IOException("disk full")), false);
    }

    private static EventListener.CompactionInfo compaction() {
        return new EventListener.CompactionInfo(DIR, 0, 1, List.of(7L), 100, false);
    }

    @Test
    void aFailedFlushOrCompactionEndsItsJob() {
        RunningJobs jobs = new RunningJobs();
        jobs.onFlushBegin(new EventListener.FlushInfo(DIR, 3, 10, 1000));
        jobs.onCompactionBegin(compaction());
        assertThat(jobs.running()).isEqualTo(2);
        assertThat(jobs.onBackgroundError(error("flush"))).isFalse();
        assertThat(jobs.running()).isEqualTo(1);
        jobs.onBackgroundError(error("compaction"));
        assertThat(jobs.running()).isZero();
    }

    @Test
    void anErrorEndsNoJobOfTheOtherKindAndNeverGoesNegative() {
        RunningJobs jobs = new RunningJobs();
        jobs.onCompactionBegin(compaction());
        jobs.onBackgroundError(error("flush")); // no flush began: the compaction still runs
        jobs.onBackgroundError(error("WAL sync")); // a foreground path: no job
        assertThat(jobs.running()).isEqualTo(1);
        jobs.onCompactionCompleted(
                new EventListener.CompactionCompletedInfo(DIR, 0, 1, List.of(7L), List.of(8L), 100, 100, false));
        jobs.onBackgroundError(error("compaction")); // failed before it began
        assertThat(jobs.running()).isZero();
        jobs.onFlushBegin(new EventListener.FlushInfo(DIR, 4, 10, 1000));
        assertThat(jobs.running()).as("a job after a surplus error is counted").isEqualTo(1);
        jobs.onFlushCompleted(new EventListener.FlushCompletedInfo(DIR, 4, 9, 100, 10));
        assertThat(jobs.running()).isZero();
    }
}
