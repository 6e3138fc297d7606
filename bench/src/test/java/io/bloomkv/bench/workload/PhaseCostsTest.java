package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PhaseCostsTest {
    @Test
    void countsTheWorkersCpuAndTheProcesssAroundIt() {
        PhaseCosts.Snapshot start = PhaseCosts.snapshot();
        long cpu0 = PhaseCosts.threadCpuNanos();
        long wall0 = System.nanoTime();
        long sink = 0;
        while (PhaseCosts.threadCpuNanos() - cpu0 < 50_000_000L) { // 50 ms of this thread's CPU
            for (int i = 0; i < 10_000; i++) {
                sink += Long.rotateLeft(sink ^ i, 7) * 0x9E3779B97F4A7C15L;
            }
        }
        long worker = PhaseCosts.threadCpuNanos() - cpu0;
        PhaseCosts c = start.since(System.nanoTime() - wall0, 1000, new long[] {worker});
        assertThat(sink).isNotEqualTo(42);
        assertThat(c.workerCpuNanos()).isEqualTo(worker).isGreaterThanOrEqualTo(50_000_000L);
        // the process's CPU includes this thread's (the clocks tick at different grains: allow 20 ms)
        assertThat(c.processCpuNanos()).isGreaterThanOrEqualTo(worker - 20_000_000L);
        assertThat(c.wallNanos()).isPositive();
        assertThat(c.jitMillis()).isGreaterThanOrEqualTo(0);
        assertThat(c.gcCount()).isGreaterThanOrEqualTo(0);
        if (java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task"))) {
            // Linux: the compiler threads' CPU is read; it cannot exceed the process's
            assertThat(c.c1CpuNanos()).isGreaterThanOrEqualTo(0);
            assertThat(c.c2CpuNanos()).isGreaterThanOrEqualTo(0);
            assertThat(c.c1CpuNanos() + c.c2CpuNanos()).isLessThanOrEqualTo(c.processCpuNanos() + 20_000_000L);
            long[] total = PhaseCosts.compilerThreadsCpuNanos();
            assertThat(total[0] + total[1])
                    .as("this JVM has compiled something by now")
                    .isPositive();
        }
        assertThat(c.line("recordsread", "bloomkv"))
                .startsWith(PhaseCosts.LINE_PREFIX + " recordsread bloomkv wall ")
                .contains("worker CPU " + worker / 1000 + " ns/op");
    }

    @Test
    void aWorkerWithoutCpuAccountingMakesTheSumUnknown() {
        PhaseCosts c = PhaseCosts.snapshot().since(1_000_000, 10, new long[] {5_000, -1});
        assertThat(c.workerCpuNanos()).isEqualTo(-1);
        assertThat(c.line("recordsread", "rocksdb")).contains("worker CPU -1 ns/op");
    }
}
