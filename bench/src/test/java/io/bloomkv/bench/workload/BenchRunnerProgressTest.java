package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.BenchConfig;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import picocli.CommandLine;

/**
 * The progress bar's plan: every phase's steps add up to {@link BenchRunner#plannedOps}, on one thread or several
 * (each ticks its own slice), multiGet batches included. The phases' warm-ups run through the phases' own timed loops,
 * so they must not step it (they are not in the plan).
 */
class BenchRunnerProgressTest {
    @ParameterizedTest(name = "threads={0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {1, 2}) // not the bench's ValueSource
    void stepsAddUpToThePlanWithWarmUpsThroughThePhasesLoops(int threads, @TempDir Path dir) throws Exception {
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd)
                .parseArgs(
                        "--num",
                        "3000",
                        "--reads",
                        "4010",
                        "--seeks",
                        "700",
                        "--engines",
                        "bloomkv",
                        "--workloads",
                        "fillrandom,readrandom,readmissing,multigetmissing,seekrandom,readwhilewriting,readupdate",
                        "--filters",
                        "on",
                        "--threads",
                        String.valueOf(threads),
                        "--warmup",
                        "500",
                        "--phase-warmup",
                        "5000",
                        "--write-buffer-size",
                        "131072",
                        "--fpr-sweep=false",
                        "--progress=false",
                        "--report-dir",
                        dir.resolve("report").toString());
        BenchConfig cfg = cmd.config(dir.resolve("work"));
        CountingProgress counting = new CountingProgress();
        List<PhaseResult> results = new BenchRunner(cfg, counting, null).run();

        assertThat(counting.steps()).as(counting.log()).isEqualTo(BenchRunner.plannedOps(cfg));
        assertThat(results)
                .allSatisfy(r -> assertThat(r.wrongAnswers()).as(r.phase()).isZero());
        // the warm-ups' gets are not counted in the phases: each read phase did exactly --reads gets (multiGet: whole
        // batches of 32)
        assertThat(results)
                .filteredOn(r -> r.phase().equals("readmissing"))
                .singleElement()
                .satisfies(r -> {
                    assertThat(r.notFound()).isEqualTo(4010);
                    assertThat(r.found()).isZero();
                });
        assertThat(results)
                .filteredOn(r -> r.phase().equals("readrandom"))
                .singleElement()
                .satisfies(r -> assertThat(r.found()).isEqualTo(4010));
        assertThat(results)
                .filteredOn(r -> r.phase().equals("multigetmissing"))
                .singleElement()
                .satisfies(r -> assertThat(r.notFound()).isEqualTo(4000));
    }
}
