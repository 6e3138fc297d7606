package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.engine.BenchEngine;
import io.bloomkv.bench.engine.EngineFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * recordsscan checks every record each scan returns, on both engines: the records family run in one process with two
 * threads (scans while inserts run, after recordslatest inserted and the update workloads updated) answers every scan
 * right; a database changed before the phase (by an in-process stand-in for the --reopen child, as in
 * SeekCheckRunTest) gives wrong answers that a count alone would not show.
 */
class RecordsScanCheckRunTest {
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
                "--warmup",
                "1000",
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

    @Test
    void bothEnginesAnswerEveryScanRightWhileInsertsRun(@TempDir Path dir) throws Exception {
        List<PhaseResult> results = new BenchRunner(config(dir, "records", false), ProgressSink.NONE, null).run();
        assertThat(results)
                .hasSize(2 * Workload.RECORDS.size())
                .allSatisfy(r -> assertThat(r.wrongAnswers())
                        .as(r.phase() + "/" + r.label())
                        .isZero());
        assertThat(results)
                .filteredOn(r -> r.phase().equals("recordsscan"))
                .hasSize(2)
                .allSatisfy(r -> assertThat(r.found()).as(r.label()).isGreaterThan(READS * 20L));
    }

    /**
     * recordsscan alone under --reopen, its child first deleting every tenth loaded record (some scans skip one) and
     * putting a record under an absent id after every loaded one (every scan of two records or more sees one).
     */
    @Test
    void aChangedDatabaseGivesWrongAnswers(@TempDir Path dir) throws Exception {
        BenchConfig cfg = config(dir, "recordsscan", true);
        KeySpace keys = new KeySpace(cfg.num(), cfg.keySize());
        RecordSource records = new RecordSource(cfg.seed(), cfg.valueCompressibility());
        List<PhaseResult> results = new BenchRunner(cfg, ProgressSink.NONE, null, (w, spec, db, run) -> {
                    try (BenchEngine e = EngineFactory.open(spec, db, cfg)) {
                        for (long j = 0; j < keys.num(); j++) {
                            long id = keys.loadedId(j);
                            if (j % 10 == 9) {
                                e.delete(keys.key(id));
                            }
                            e.put(keys.key(id + 1), records.value(id + 1, 0));
                        }
                    }
                    return new BenchRunner(cfg.coldChild(), ProgressSink.NONE, null).runChildPhase(w, spec, db, run);
                })
                .run();
        assertThat(results)
                .hasSize(2)
                .allSatisfy(r -> assertThat(r.wrongAnswers()).as(r.label()).isGreaterThan(READS / 2));
    }
}
