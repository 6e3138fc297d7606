package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.engine.BenchEngine;
import io.bloomkv.bench.engine.EngineFactory;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * mergerandom-read checks each counter it reads against the increments mergerandom and mergerandom-rmw gave its key:
 * right counts pass, a count one too high (an extra operand under every key, merged in between the preload and the
 * phase by an in-process stand-in for the --reopen child) is a wrong answer, as is a counter where the loaded value
 * should be.
 */
class MergeRandomCheckTest {
    private static final byte[] ONE = {1, 0, 0, 0, 0, 0, 0, 0};

    private static BenchConfig config(Path dir, int valueSize) {
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd)
                .parseArgs(
                        "--num",
                        "500",
                        "--reads",
                        "300",
                        "--value-size",
                        Integer.toString(valueSize),
                        "--workloads",
                        "mergerandom",
                        "--engines",
                        "bloomkv",
                        "--filters",
                        "on",
                        "--reopen",
                        "--write-buffer-size",
                        "65536",
                        "--fpr-sweep=false",
                        "--progress=false",
                        "--report-dir",
                        dir.resolve("report").toString());
        return cmd.config(dir.resolve("work"));
    }

    /** The mergerandom-read phase of a run whose child first merges {@code extra} operands of 1 under every key. */
    private static PhaseResult read(BenchConfig cfg, int extra) throws Exception {
        KeySpace keys = new KeySpace(cfg.num(), cfg.keySize());
        List<PhaseResult> results = new BenchRunner(cfg, ProgressSink.NONE, null, (w, spec, db, run) -> {
                    try (BenchEngine e = EngineFactory.open(spec, db, cfg)) {
                        for (int n = 0; n < extra; n++) {
                            for (long j = 0; j < keys.num(); j++) {
                                e.merge(keys.key(keys.loadedId(j)), ONE);
                            }
                        }
                    }
                    return new BenchRunner(cfg.coldChild(), ProgressSink.NONE, null).runChildPhase(w, spec, db, run);
                })
                .run();
        return results.stream()
                .filter(r -> r.phase().equals("mergerandom-read"))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void rightCountsPassAndACountOneTooHighIsWrong(@TempDir Path dir) throws Exception {
        BenchConfig cfg = config(dir, 100);
        PhaseResult right = read(cfg, 0);
        assertThat(right.found()).isEqualTo(300);
        assertThat(right.wrongAnswers()).isZero();
        // every key one too high: keys merged before read a counter too high, keys never merged a counter of 1
        PhaseResult wrong = read(cfg, 1);
        assertThat(wrong.found()).isEqualTo(300);
        assertThat(wrong.wrongAnswers()).isEqualTo(300);
    }

    /** With 8-byte values the loaded value is itself a counter (the add operators add to it): still checked. */
    @Test
    void eightByteValuesAreCountedOn(@TempDir Path dir) throws Exception {
        BenchConfig cfg = config(dir, 8);
        assertThat(read(cfg, 0).wrongAnswers()).isZero();
        assertThat(read(cfg, 1).wrongAnswers()).isEqualTo(300);
    }

    /** Both engines' add operators, in one process, with 2 reading threads: every counter reads as its increments. */
    @Test
    void bothEnginesReadTheirCountsRight(@TempDir Path dir) throws Exception {
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd)
                .parseArgs(
                        "--num",
                        "500",
                        "--reads",
                        "300",
                        "--threads",
                        "2",
                        "--workloads",
                        "mergerandom",
                        "--filters",
                        "on",
                        "--write-buffer-size",
                        "65536",
                        "--fpr-sweep=false",
                        "--progress=false",
                        "--report-dir",
                        dir.resolve("report").toString());
        List<PhaseResult> results = new BenchRunner(cmd.config(dir.resolve("work")), ProgressSink.NONE, null).run();
        assertThat(results)
                .filteredOn(r -> r.phase().equals("mergerandom-read"))
                .hasSize(2)
                .allSatisfy(r -> {
                    assertThat(r.found()).as(r.label()).isEqualTo(300);
                    assertThat(r.wrongAnswers()).as(r.label()).isZero();
                });
    }

    @Test
    void countersAreLittleEndianAndOnlyEightBytesLong() {
        assertThat(BenchRunner.counter(new byte[] {2, 1, 0, 0, 0, 0, 0, 0})).isEqualTo(258);
        assertThat(BenchRunner.counter(new byte[] {2, 1})).isZero();
        assertThat(BenchRunner.counter(BenchRunner.addOne(new byte[] {(byte) 0xff, 0, 0, 0, 0, 0, 0, 0})))
                .isEqualTo(256);
    }
}
