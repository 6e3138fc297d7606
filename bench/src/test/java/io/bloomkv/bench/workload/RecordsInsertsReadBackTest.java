package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.engine.BenchEngine;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import picocli.CommandLine;

/**
 * recordslatest and recordsscan read back every record they inserted once their threads have ended: on both engines, in
 * one process and
 * in a {@code --reopen} child, every insert is found with the bytes it was written with (0 wrong answers); records
 * deleted or changed after the phase's threads end (through {@link BenchRunner#beforeInsertsReadBack}, standing in for
 * an engine that lost or garbled them) are each one wrong answer of the phase, and the phase's timed figures do not
 * count the read-back.
 */
class RecordsInsertsReadBackTest {
    private static final int NUM = 2000;
    private static final int READS = 2000;

    private static BenchConfig config(Path dir, String workloads, boolean reopen) {
        List<String> args = new ArrayList<>(List.of(
                "--num",
                Integer.toString(NUM),
                "--reads",
                Integer.toString(READS),
                "--threads",
                "2",
                "--workloads",
                workloads,
                "--engines",
                "bloomkv,rocksdb",
                "--filters",
                "on",
                "--write-buffer-size",
                "262144",
                "--fpr-sweep=false",
                "--progress=false",
                "--report-dir",
                dir.resolve("report").toString()));
        if (reopen) {
            args.add("--reopen");
        }
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd).parseArgs(args.toArray(String[]::new));
        return cmd.config(dir.resolve("work"));
    }

    /** The ids {@code w} inserted that {@code engine} holds (the rest of its id span is empty). */
    private static List<Long> insertedIds(BenchEngine engine, KeySpace keys, Workload w) throws java.io.IOException {
        long base = BenchRunner.insertBase(w);
        List<Long> out = new ArrayList<>();
        for (long k = 0; k < READS; k++) {
            if (engine.get(keys.key(base + k)) != null) {
                out.add(base + k);
            }
        }
        return out;
    }

    /** The row of {@code phase} and {@code label} in {@code results}. */
    private static PhaseResult row(List<PhaseResult> results, String phase, String label) {
        return results.stream()
                .filter(r -> r.phase().equals(phase) && r.label().equals(label))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void everyInsertIsReadBackRightInOneProcess(@TempDir Path dir) throws Exception {
        BenchConfig cfg = config(dir, "recordsload,recordslatest", false);
        KeySpace keys = new KeySpace(cfg.num(), cfg.keySize());
        Map<String, Integer> inserted = new ConcurrentHashMap<>();
        BenchRunner runner = new BenchRunner(cfg, ProgressSink.NONE, null);
        List<String> order = new ArrayList<>();
        runner.beforeInsertsReadBack = e -> {
            order.add(e.name());
            inserted.put(e.name(), insertedIds(e, keys, Workload.RECORDSLATEST).size());
        };
        List<PhaseResult> results = runner.run();
        assertThat(results)
                .hasSize(4)
                .allSatisfy(r -> assertThat(r.wrongAnswers())
                        .as(r.phase() + "/" + r.label())
                        .isZero());
        assertThat(order)
                .as("the read-back ran once per engine, after recordslatest only")
                .hasSize(2);
        assertThat(inserted.values())
                .allSatisfy(n -> assertThat(n).as("inserts").isBetween(READS / 40, READS / 10));
    }

    @ParameterizedTest
    @EnumSource(
            value = Workload.class,
            names = {"RECORDSLATEST", "RECORDSSCAN"})
    void everyInsertIsReadBackRightInAReopenChild(Workload w, @TempDir Path dir) throws Exception {
        BenchConfig cfg = config(dir, w.dbBenchName(), true);
        List<String> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<PhaseResult> results = new BenchRunner(cfg, ProgressSink.NONE, null, (cw, spec, db, run) -> {
                    BenchRunner child = new BenchRunner(cfg.coldChild(), ProgressSink.NONE, null);
                    child.beforeInsertsReadBack = e -> ran.add(e.name());
                    return child.runChildPhase(cw, spec, db, run);
                })
                .run();
        assertThat(results)
                .hasSize(2)
                .allSatisfy(r -> assertThat(r.wrongAnswers()).as(r.label()).isZero());
        assertThat(ran).as("the read-back ran once per engine").hasSize(2);
    }

    /**
     * A --reopen child whose hook, after the phase's threads end, deletes every inserted record with an id divisible
     * by 7 and rewrites those one past such an id with another version: each of them, and no other, is a wrong answer.
     */
    @ParameterizedTest
    @EnumSource(
            value = Workload.class,
            names = {"RECORDSLATEST", "RECORDSSCAN"})
    void droppedOrChangedInsertsAreCountedWrong(Workload w, @TempDir Path dir) throws Exception {
        BenchConfig cfg = config(dir, w.dbBenchName(), true);
        KeySpace keys = new KeySpace(cfg.num(), cfg.keySize());
        RecordSource records = new RecordSource(cfg.seed(), cfg.valueCompressibility());
        Map<String, Integer> spoiled = new ConcurrentHashMap<>();
        Map<String, Integer> inserted = new ConcurrentHashMap<>();
        List<PhaseResult> results = new BenchRunner(cfg, ProgressSink.NONE, null, (cw, spec, db, run) -> {
                    BenchRunner child = new BenchRunner(cfg.coldChild(), ProgressSink.NONE, null);
                    child.beforeInsertsReadBack = e -> {
                        List<Long> ids = insertedIds(e, keys, w);
                        int n = 0;
                        for (long id : ids) {
                            if (id % 7 == 0) {
                                e.delete(keys.key(id));
                                n++;
                            } else if (id % 7 == 1) {
                                e.put(keys.key(id), records.value(id, 1));
                                n++;
                            }
                        }
                        inserted.put(spec.label(), ids.size());
                        spoiled.put(spec.label(), n);
                    };
                    return child.runChildPhase(cw, spec, db, run);
                })
                .run();
        assertThat(results).hasSize(2);
        for (PhaseResult r : results) {
            int n = spoiled.get(r.label());
            assertThat(n).as(r.label()).isGreaterThan(inserted.get(r.label()) / 5);
            assertThat(r.wrongAnswers()).as(r.label()).isEqualTo((long) n);
            // the phase's own figures: every operation, every insert (the read-back is not counted in them)
            assertThat(r.ops()).isEqualTo(READS);
            assertThat(r.backgroundWrites()).as(r.label()).isEqualTo((long) inserted.get(r.label()));
            if (w == Workload.RECORDSLATEST) { // every read found
                assertThat(r.notFound()).as(r.label()).isZero();
                assertThat(r.found() + r.backgroundWrites()).as(r.label()).isEqualTo(READS);
            }
        }
        assertThat(row(results, w.dbBenchName(), "bloomkv").wrongAnswers()).isPositive();
        assertThat(row(results, w.dbBenchName(), "rocksdb").wrongAnswers()).isPositive();
    }
}
