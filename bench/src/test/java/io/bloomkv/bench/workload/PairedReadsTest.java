package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.BenchConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import picocli.CommandLine;

/**
 * {@code --paired-reads}: both engines' databases stay open through a session and the readrandom/readmissing phases
 * run on them in interleaved slices. Each engine must still do exactly {@code --reads} gets per phase with right
 * answers, the loads and the other workloads must run on each engine as without pairing, the progress bar must add up
 * to its plan, and every database directory must be gone afterwards.
 */
class PairedReadsTest {

    private static BenchConfig config(Path dir, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--num",
                "4000",
                "--reads",
                "3001",
                "--seeks",
                "200",
                "--write-buffer-size",
                "131072",
                "--warmup",
                "300",
                "--phase-warmup",
                "2000",
                "--fpr-sweep=false",
                "--progress=false",
                "--report-dir",
                dir.resolve("report").toString()));
        args.addAll(List.of(extra));
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd).parseArgs(args.toArray(String[]::new));
        return cmd.config(dir.resolve("work"));
    }

    @ParameterizedTest(name = "threads={0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {1, 2}) // not the bench's ValueSource
    void bothEnginesGetEveryKeyRightAndTheBarAddsUp(int threads, @TempDir Path dir) throws Exception {
        BenchConfig cfg = config(
                dir,
                "--paired-reads",
                "--threads",
                String.valueOf(threads),
                "--filters",
                "on,off",
                "--workloads",
                "fillrandom,readrandom,readmissing,seekrandom");
        CountingProgress counting = new CountingProgress();
        List<PhaseResult> results = new BenchRunner(cfg, counting, null).run();

        assertThat(counting.steps()).as(counting.log()).isEqualTo(BenchRunner.plannedOps(cfg));
        // 4 columns (2 engines x filters on/off), each: fillrandom, readrandom, readmissing, seekrandom-10, -100
        assertThat(results).hasSize(4 * 5);
        assertThat(results)
                .allSatisfy(r -> assertThat(r.wrongAnswers())
                        .as(r.phase() + "/" + r.label())
                        .isZero());
        for (String label : List.of("bloomkv", "rocksdb", "bloomkv-nofilter", "rocksdb-nofilter")) {
            assertThat(results)
                    .filteredOn(r -> r.label().equals(label) && r.phase().equals("readrandom"))
                    .as(label)
                    .singleElement()
                    .satisfies(r -> {
                        assertThat(r.found()).isEqualTo(3001);
                        assertThat(r.ops()).isEqualTo(3001);
                        assertThat(r.opsPerSec()).isPositive();
                    });
            assertThat(results)
                    .filteredOn(r -> r.label().equals(label) && r.phase().equals("readmissing"))
                    .as(label)
                    .singleElement()
                    .satisfies(r -> {
                        assertThat(r.notFound()).isEqualTo(3001);
                        assertThat(r.found()).isZero();
                    });
        }
        // the filters-on columns read through their filters: absent gets were mostly rejected by them
        assertThat(results)
                .filteredOn(r -> r.label().equals("bloomkv") && r.phase().equals("readmissing"))
                .singleElement()
                .satisfies(r -> assertThat(r.counters().filterUseful()).isGreaterThan(2000));
        // loads ran one engine after the other; each paired phase is one task after both engines' warm-ups
        assertThat(counting.tasks())
                .containsSubsequence(
                        "bloomkv fillrandom",
                        "rocksdb fillrandom",
                        "bloomkv readrandom warm-up",
                        "rocksdb readrandom warm-up",
                        "paired readrandom",
                        "paired readmissing",
                        "bloomkv seekrandom",
                        "rocksdb seekrandom");
        try (Stream<Path> left = Files.list(dir.resolve("work"))) {
            assertThat(left).as("database directories are deleted").isEmpty();
        }
    }

    @Test
    void slicesAlternateTheEnginesOrder() {
        assertThat(BenchRunner.pairedOrder(0, 2)).containsExactly(0, 1);
        assertThat(BenchRunner.pairedOrder(1, 2)).containsExactly(1, 0);
        assertThat(BenchRunner.pairedOrder(2, 2)).containsExactly(0, 1);
        assertThat(BenchRunner.pairedOrder(3, 3)).containsExactly(2, 1, 0);
    }

    @Test
    void oneEngineIsRejected(@TempDir Path dir) {
        assertThatThrownBy(() -> config(dir, "--paired-reads", "--engines", "bloomkv"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("--paired-reads");
    }
}
