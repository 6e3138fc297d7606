package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The arithmetic and the line of {@link PhaseCosts} on fixed counters; of a live pass only what holds whatever the
 * machine measured (counters that never run backwards, -1 only where unavailable, the line's shape). How much CPU a
 * pass took is the benchmark's to report, not a unit test's to bound.
 */
class PhaseCostsTest {
    private static final PhaseCosts.Snapshot START = new PhaseCosts.Snapshot(
            1_000_000_000L, // process CPU
            400, // JIT ms
            3, // collections
            20, // GC ms
            5_000_000L, // C1 CPU
            9_000_000L); // C2 CPU

    @Test
    void theCostsAreTheDifferencesOfTheCountersAndTheWorkersSum() {
        PhaseCosts.Snapshot end = new PhaseCosts.Snapshot(1_600_000_000L, 450, 7, 35, 8_000_000L, 4_000_000L);
        PhaseCosts c = START.until(end, 2_500_000_000L, 1000, new long[] {200_000_000L, 150_000_000L});
        assertThat(c)
                .isEqualTo(new PhaseCosts(
                        2_500_000_000L,
                        1000,
                        350_000_000L,
                        600_000_000L,
                        50,
                        4,
                        15,
                        3_000_000L,
                        0)); // C2's threads exited during the pass and took their time with them: 0, not negative
        assertThat(c.line("recordsread", "bloomkv"))
                .isEqualTo(PhaseCosts.LINE_PREFIX + " recordsread bloomkv wall 2.500 s, worker CPU 350000 ns/op,"
                        + " process CPU 600000 ns/op (0.600 s), JIT 50 ms, GC 4 (15 ms), JIT CPU C1 3 ms C2 0 ms");
    }

    @Test
    void unavailableCountersStayUnknown() {
        PhaseCosts.Snapshot none = new PhaseCosts.Snapshot(-1, -1, 3, 20, -1, -1);
        PhaseCosts c = none.until(none, 1_000_000L, 0, new long[0]);
        assertThat(c.workerCpuNanos()).as("no workers: nothing spent").isZero();
        assertThat(c.processCpuNanos()).isEqualTo(-1);
        assertThat(c.jitMillis()).isEqualTo(-1);
        assertThat(c.c1CpuNanos()).isEqualTo(-1);
        assertThat(c.c2CpuNanos()).isEqualTo(-1);
        assertThat(START.until(none, 1_000_000L, 1, new long[] {1}).processCpuNanos())
                .as("unknown at the end of the pass")
                .isEqualTo(-1);
        assertThat(c.line("recordsread", "rocksdb"))
                .as("0 operations: per-operation figures divide by 1")
                .startsWith(PhaseCosts.LINE_PREFIX + " recordsread rocksdb wall 0.001 s, worker CPU 0 ns/op,"
                        + " process CPU -1 ns/op")
                .endsWith("JIT -1 ms, GC 0 (0 ms), JIT CPU C1 -1 ms C2 -1 ms");
    }

    @Test
    void aWorkerWithoutCpuAccountingMakesTheSumUnknown() {
        PhaseCosts c = PhaseCosts.snapshot().since(1_000_000, 10, new long[] {5_000, -1});
        assertThat(c.workerCpuNanos()).isEqualTo(-1);
        assertThat(c.line("recordsread", "rocksdb")).contains("worker CPU -1 ns/op");
    }

    @Test
    void aLivePassHasCountersThatNeverRunBackwards() {
        PhaseCosts.Snapshot start = PhaseCosts.snapshot();
        long cpu0 = PhaseCosts.threadCpuNanos();
        long[] compilers = PhaseCosts.compilerThreadsCpuNanos();
        PhaseCosts c = start.since(1_000_000L, 10, new long[] {Math.max(0, PhaseCosts.threadCpuNanos() - cpu0)});
        assertThat(c.workerCpuNanos()).isNotNegative();
        assertThat(c.processCpuNanos()).isGreaterThanOrEqualTo(-1);
        assertThat(c.jitMillis()).isGreaterThanOrEqualTo(-1);
        assertThat(c.gcCount()).isNotNegative();
        assertThat(c.gcMillis()).isNotNegative();
        assertThat(c.c1CpuNanos()).isGreaterThanOrEqualTo(-1);
        assertThat(c.c2CpuNanos()).isGreaterThanOrEqualTo(-1);
        if (java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task"))) {
            assertThat(compilers[0]).as("Linux: C1 read from schedstat").isNotNegative();
            assertThat(compilers[1]).as("Linux: C2 read from schedstat").isNotNegative();
        } else {
            assertThat(compilers).containsExactly(-1L, -1L);
        }
        assertThat(c.line("recordsread", "bloomkv"))
                .matches(java.util.regex.Pattern.quote(PhaseCosts.LINE_PREFIX)
                        + " recordsread bloomkv wall 0\\.001 s, worker CPU \\d+ ns/op, process CPU -?\\d+ ns/op"
                        + " \\(-?\\d+\\.\\d{3} s\\), JIT -?\\d+ ms, GC \\d+ \\(\\d+ ms\\),"
                        + " JIT CPU C1 -?\\d+ ms C2 -?\\d+ ms");
    }
}
