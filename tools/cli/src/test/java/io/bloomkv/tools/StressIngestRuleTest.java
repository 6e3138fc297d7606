package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.IngestOptions;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.TableFileWriter;
import io.bloomkv.tools.stress.ExpectedState;
import io.bloomkv.tools.stress.StressValue;
import io.bloomkv.tools.stress.StressVerifier;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The expected-state rule of an ingestion in flight when the stress process is killed (StressRun's ingest op): its
 * keys are pending under one write id, so the verifier accepts the file fully in or fully absent, and reports a file
 * half in as a half-applied write.
 */
class StressIngestRuleTest {
    @TempDir
    Path tmp;

    private static final int KEYS = 20;
    private static final int[] FILE = {3, 7, 11};

    /** Marks the file's keys pending (version 1) under one write id, as StressRun.ingest does before Db.ingest. */
    private static void pending(ExpectedState es) {
        for (int k : FILE) {
            es.setPending(k, ExpectedState.state(1, true), 42L);
        }
    }

    private Path file(Db db) {
        Path f = tmp.resolve("in.sst");
        try (TableFileWriter w = TableFileWriter.create(f, db.options())) {
            for (int k : FILE) {
                w.put(StressValue.key(k), StressValue.of(k, 1));
            }
            w.finish();
        }
        return f;
    }

    private StressVerifier.Result run(String name, int keysIn) throws Exception {
        Options o = Options.defaults().mergeOperator(StressValue.MERGE_OPERATOR);
        try (ExpectedState es = ExpectedState.open(tmp.resolve(name + ".expected"), KEYS);
                Db db = Db.open(tmp.resolve(name), o)) {
            pending(es);
            if (keysIn == FILE.length) {
                db.ingest(List.of(file(db)), IngestOptions.defaults().moveFiles(true));
            } else {
                for (int i = 0; i < keysIn; i++) {
                    db.put(StressValue.key(FILE[i]), StressValue.of(FILE[i], 1));
                }
            }
            return StressVerifier.verifyAndResolve(db, es);
        }
    }

    @Test
    void anIngestionInFlightIsAcceptedFullyInOrFullyOutButNotHalfIn() throws Exception {
        StressVerifier.Result in = run("in", FILE.length);
        assertThat(in.ok()).as(in.toString()).isTrue();
        assertThat(in.pendingLanded()).as(in.toString()).isEqualTo(FILE.length);

        StressVerifier.Result out = run("out", 0);
        assertThat(out.ok()).as(out.toString()).isTrue();
        assertThat(out.pendingDropped()).as(out.toString()).isEqualTo(FILE.length);

        StressVerifier.Result half = run("half", 1);
        assertThat(half.ok()).as(half.toString()).isFalse();
        assertThat(half.problems()).anyMatch(p -> p.contains("half applied"));
    }
}
