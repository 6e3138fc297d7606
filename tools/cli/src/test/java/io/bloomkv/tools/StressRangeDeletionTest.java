package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.tools.stress.ExpectedState;
import io.bloomkv.tools.stress.StressValue;
import io.bloomkv.tools.stress.StressVerifier;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Key-range deletions in {@code bloomkv stress} and {@code bloomkv crashtest} (db_stress's TestDeleteRange): a run on
 * a small key space deletes ranges and its tombstones hide enough of a memtable that the engine rewrites it; a crash
 * test with them loses nothing; a range deletion acknowledged but missing from the database is reported lost, and one
 * in flight at a kill is accepted all in or all out but not half applied. Seeds are printed; replay with
 * -Dbloomkv.tools.seed=N.
 */
class StressRangeDeletionTest {
    @TempDir
    Path tmp;

    private static long seed(String test) {
        return StressCommandsTest.seed(test);
    }

    private static long count(String out, String regex) {
        Matcher m = Pattern.compile(regex).matcher(out);
        assertThat(m.find()).as(regex + " in\n" + out).isTrue();
        return Long.parseLong(m.group(1));
    }

    /**
     * 400 keys, 2 threads: stripes of 200 keys, wide ranges of 50-200 of them, a sixth of the key space on average, so
     * their tombstones pass half of a memtable between the run's flushes (with the default 10000 keys they rarely do).
     * Whether one does depends on the seed and on how the threads interleave: 4000 operations rewrote a memtable a few
     * times on most runs but now and then not once (a fresh seed on every build). 12000 operations are three such runs
     * back to back: all three without a rewrite is about the cube of that chance, negligible.
     */
    @Test
    void aStressRunDeletesKeyRangesAndItsTombstonesRewriteMemtables() {
        long seed = seed("StressRangeDeletionTest.stress");
        Path db = tmp.resolve("db");
        Cli.Result run = Cli.run("stress", db.toString(), "--ops=12000", "--threads=2", "--keys=400", "--seed=" + seed);
        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.out()).contains("wrong answers 0");
        assertThat(count(run.out(), "key-range deletions (\\d+) \\("))
                .as(run.out())
                .isPositive();
        assertThat(count(run.out(), "memtable rewrites (\\d+);")).as(run.out()).isPositive();
        Cli.Result next =
                Cli.run("stress", db.toString(), "--ops=1000", "--threads=1", "--keys=400", "--seed=" + (seed + 1));
        assertThat(next.exitCode()).as(next.toString()).isZero();
        assertThat(next.out()).contains("400 keys verified: lost 0, wrong 0").contains("wrong answers 0");
        assertThat(count(next.out(), "totals over every run: .* (\\d+) memtable rewrites"))
                .as("the expected state sums the runs' rewrites")
                .isGreaterThanOrEqualTo(count(run.out(), "memtable rewrites (\\d+);"));
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aCrashTestWithKeyRangeDeletionsLosesNothing() {
        Cli.Result r = StressCommandsTest.crashTestLosingNothing(
                tmp.resolve("db"), "StressRangeDeletionTest.crashtest", 3, 400, 300, 1200);
        assertThat(count(r.out(), "acknowledged writes, (\\d+) key-range deletions, \\d+ memtable rewrites; lost"))
                .as(r.out())
                .isPositive();
    }

    /** Opens the stress database of {@code dir} as the stress runs do (they write merges). */
    private static Db open(Path dir) {
        return Db.open(dir, Options.defaults().mergeOperator(StressValue.MERGE_OPERATOR));
    }

    @Test
    void aLostKeyRangeDeletionIsReported() throws IOException {
        long seed = seed("StressRangeDeletionTest.lost");
        Path db = tmp.resolve("db");
        Cli.Result run = Cli.run("stress", db.toString(), "--ops=1500", "--threads=1", "--keys=200", "--seed=" + seed);
        assertThat(run.exitCode()).as(run.toString()).isZero();
        // The expected state learns of a range deletion over three keys that exist; the database never gets it.
        int from = -1;
        try (ExpectedState es = ExpectedState.open(tmp.resolve("db.expected"), 200)) {
            for (int k = 0; k + 3 <= 200 && from < 0; k++) {
                if (ExpectedState.exists(es.committed(k))
                        && ExpectedState.exists(es.committed(k + 1))
                        && ExpectedState.exists(es.committed(k + 2))) {
                    from = k;
                }
            }
            assertThat(from).as("three existing keys in a row after the run").isNotNegative();
            for (int k = from; k < from + 3; k++) {
                es.commit(k, ExpectedState.state(ExpectedState.version(es.committed(k)) + 1, false));
            }
        }
        Cli.Result check = Cli.run("stress", db.toString(), "--ops=10", "--threads=1", "--keys=200", "--seed=" + seed);
        assertThat(check.exitCode()).as(check.toString()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(check.out())
                .contains("lost 3")
                .contains("key " + from + ": expected state absent")
                .doesNotContain("stress: running");
    }

    @Test
    void aKeyRangeDeletionInFlightIsAcceptedAllInOrAllOutButNotHalfApplied() throws IOException {
        for (int applied : new int[] {0, 8, 3}) {
            Path dir = tmp.resolve("applied" + applied);
            try (ExpectedState es = ExpectedState.open(tmp.resolve("applied" + applied + ".expected"), 20);
                    Db db = open(dir)) {
                for (int k = 0; k < 20; k++) {
                    db.put(StressValue.key(k), StressValue.of(k, 1));
                    es.commit(k, ExpectedState.state(1, true));
                }
                // Keys 4..11 pending under one write id, as StressRun.deleteKeyRange marks them before Db.deleteRange.
                for (int k = 4; k < 12; k++) {
                    es.setPending(k, ExpectedState.state(2, false), 7L);
                }
                // What reached the database before the kill: none of the range, all of it, or (wrongly) a part.
                if (applied > 0) {
                    db.deleteRange(StressValue.key(4), StressValue.key(4 + applied));
                }
                StressVerifier.Result r = StressVerifier.verifyAndResolve(db, es);
                if (applied == 3) {
                    assertThat(r.ok()).as(r.toString()).isFalse();
                    assertThat(r.problems()).as(r.toString()).anyMatch(p -> p.contains("half applied"));
                } else {
                    assertThat(r.ok()).as(r.toString()).isTrue();
                    assertThat(applied == 0 ? r.pendingDropped() : r.pendingLanded())
                            .as(r.toString())
                            .isEqualTo(8);
                    for (int k = 4; k < 12; k++) {
                        assertThat(es.pending(k)).isEqualTo(-1);
                        assertThat(ExpectedState.exists(es.committed(k))).isEqualTo(applied == 0);
                    }
                }
            }
        }
    }
}
