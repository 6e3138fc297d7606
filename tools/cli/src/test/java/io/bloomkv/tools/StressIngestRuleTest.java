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

    /**
     * The same rule for a file of each kind of entry StressRun.ingest writes, over keys that hold version 1: a put and
     * a merge (version 2), a delete and a range deletion of exactly the key (deleted at version 2).
     */
    @Test
    void anIngestionOfMergesAndDeletesInFlightIsFullyInOrFullyOut() throws Exception {
        for (int keysIn : new int[] {4, 0, 1}) {
            int[] ks = {3, 7, 11, 15};
            String name = "kinds" + keysIn;
            Options o = Options.defaults().mergeOperator(StressValue.MERGE_OPERATOR);
            StressVerifier.Result r;
            try (ExpectedState es = ExpectedState.open(tmp.resolve(name + ".expected"), KEYS);
                    Db db = Db.open(tmp.resolve(name), o)) {
                for (int k : ks) {
                    es.setPending(k, ExpectedState.state(1, true), 41L);
                    db.put(StressValue.key(k), StressValue.of(k, 1));
                    es.commit(k, ExpectedState.state(1, true));
                }
                db.flush();
                for (int j = 0; j < ks.length; j++) {
                    es.setPending(ks[j], ExpectedState.state(2, j < 2), 42L);
                }
                if (keysIn == ks.length) {
                    Path f = tmp.resolve(name + ".sst");
                    try (TableFileWriter w = TableFileWriter.create(f, db.options())) {
                        w.deleteRange(StressValue.key(15), StressValue.rangeEnd(15));
                        w.put(StressValue.key(3), StressValue.of(3, 2));
                        w.merge(StressValue.key(7), StressValue.of(7, 2));
                        w.delete(StressValue.key(11));
                        w.finish();
                    }
                    db.ingest(List.of(f), IngestOptions.defaults().moveFiles(true));
                } else if (keysIn == 1) {
                    db.put(StressValue.key(3), StressValue.of(3, 2));
                }
                r = StressVerifier.verifyAndResolve(db, es);
            }
            if (keysIn == 1) {
                assertThat(r.ok()).as(r.toString()).isFalse();
                assertThat(r.problems()).anyMatch(p -> p.contains("half applied"));
            } else {
                assertThat(r.ok()).as(r.toString()).isTrue();
                assertThat(keysIn == 0 ? r.pendingDropped() : r.pendingLanded())
                        .as(r.toString())
                        .isEqualTo(ks.length);
            }
        }
    }
}
