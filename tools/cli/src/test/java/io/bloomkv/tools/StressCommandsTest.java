package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.tools.stress.ExpectedState;
import io.bloomkv.tools.stress.StressRun;
import io.bloomkv.tools.stress.StressValue;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bloomkv stress} and {@code bloomkv crashtest}: a stress run answers everything right and
 * leaves an expected state the next run verifies; a write made behind the expected state's back is
 * reported as lost (exit 1), so the checks can fail; a short crash test (kill -9 of a child JVM, 4
 * rounds) loses nothing. Seeds are printed by the commands; replay with -Dbloomkv.tools.seed=N.
 */
class StressCommandsTest {
    @TempDir
    Path tmp;

    /** The seed of a randomized stress test (also {@link StressRangeDeletionTest}'s), printed with how to replay it. */
    static long seed(String test) {
        long seed = Long.getLong("bloomkv.tools.seed", Long.getLong("bloomkv.seed", System.nanoTime()));
        System.out.println(test + " seed " + seed + " (replay with -Dbloomkv.tools.seed=" + seed + ")");
        return seed;
    }

    /**
     * The first run's mix must hold every kind of operation, whatever the seed: a range drop is 3 operations in 1000,
     * a pause of the background work 3 and an ingestion 4, so 6000 operations miss one with probability about 1.5e-8
     * (3000 missed a range drop with probability 1.2e-4).
     */
    @Test
    void stressRunsAreRightAndTheNextRunVerifiesTheirState() {
        long seed = seed("StressCommandsTest.stress");
        Path db = tmp.resolve("db");
        Cli.Result first =
                Cli.run("stress", db.toString(), "--ops=6000", "--threads=3", "--keys=600", "--seed=" + seed);
        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(first.out())
                .contains("stress: running")
                .contains("wrong answers 0")
                .contains("6000 ops")
                .containsPattern("gets [1-9][0-9]*, multiGets [1-9][0-9]*, iterators [1-9]")
                .containsPattern("keyMayExist/keyExists [1-9]") // checked against the expected state too
                .containsPattern("ingestions [1-9]") // external table files joined the mix
                .containsPattern("range drops [1-9]") // and deleteFilesInRange
                .containsPattern("background pauses [1-9]"); // and pauseBackgroundWork with reads, then continue
        Cli.Result second = Cli.run(
                "stress",
                db.toString(),
                "--ops=1000",
                "--threads=2",
                "--keys=600",
                "--seed=" + (seed + 1),
                "--sync=GROUP_COMMIT");
        assertThat(second.exitCode()).as(second.toString()).isZero();
        assertThat(second.out())
                .contains("600 keys verified: lost 0, wrong 0")
                .contains("expected-state totals over every run: 7000 ops");
    }

    /**
     * {@code --ops N} runs exactly N operations, as db_stress and db_bench do, whatever the threads: the first
     * {@code N % threads} threads make one more than the others (fewer operations than threads leaves some threads
     * none). Counted from the summary, the expected state's totals and its per-thread counters, and the progress total.
     */
    @Test
    void aRunMakesExactlyTheOperationsAskedFor() throws IOException {
        long seed = seed("StressCommandsTest.exactOps");
        for (long[] c : new long[][] {{10, 3, 4, 3, 3}, {2, 4, 1, 1, 0, 0}, {9, 3, 3, 3, 3}, {7, 1, 7}}) {
            long ops = c[0];
            int threads = (int) c[1];
            Path db = tmp.resolve("ops-" + ops + "-" + threads);
            Cli.Result r = Cli.run(
                    new ProgressCommandsTest.Shown(ProgressCommandsTest.Mode.LINES),
                    "stress",
                    db.toString(),
                    "--ops=" + ops,
                    "--threads=" + threads,
                    "--keys=600",
                    "--seed=" + seed);
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.out())
                    .as(r.toString())
                    .contains("stress: done: " + ops + " ops in ")
                    .contains("wrong answers 0")
                    .contains("expected-state totals over every run: " + ops + " ops,");
            List<String> err = r.err().lines().toList();
            assertThat(err.get(err.size() - 1))
                    .as(r.toString())
                    .startsWith("stress: done: " + ops + " of " + ops + " ops (100%), ");
            try (ExpectedState es = ExpectedState.open(tmp.resolve(db.getFileName() + ".expected"), 600)) {
                for (int t = 0; t < threads; t++) {
                    assertThat(es.threadOps(t)).as("thread %d of %s", t, r).isEqualTo(c[2 + t]);
                    assertThat(StressRun.share(ops, threads, t)).isEqualTo(c[2 + t]);
                }
            }
        }
        // The shares add up to the operations asked for, the first threads' one more than the others'.
        for (long ops : new long[] {0, 1, 5, 63, 64, 65, 100_000, 1_000_003}) {
            for (int threads = 1; threads <= 64; threads++) {
                long sum = 0;
                long before = Long.MAX_VALUE;
                for (int t = 0; t < threads; t++) {
                    long share = StressRun.share(ops, threads, t);
                    assertThat(share - ops / threads).isBetween(0L, 1L);
                    assertThat(share).isLessThanOrEqualTo(before);
                    before = share;
                    sum += share;
                }
                assertThat(sum).as("%d ops, %d threads", ops, threads).isEqualTo(ops);
            }
        }
    }

    /** A negative --ops or --duration is a usage error, not a run without end or a run of nothing. */
    @Test
    void negativeOpsOrDurationAreRefused() {
        Path db = tmp.resolve("neg");
        for (String bad : new String[] {"--ops=-1", "--duration=-5"}) {
            Cli.Result r = Cli.run("stress", db.toString(), bad, "--keys=100");
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err()).contains("must not be negative");
        }
    }

    @Test
    void aWriteBehindTheExpectedStatesBackIsReported() throws IOException {
        long seed = seed("StressCommandsTest.tamper");
        Path db = tmp.resolve("db");
        Cli.Result run = Cli.run("stress", db.toString(), "--ops=1500", "--threads=2", "--keys=200", "--seed=" + seed);
        assertThat(run.exitCode()).as(run.toString()).isZero();
        int victim;
        try (ExpectedState es = ExpectedState.open(tmp.resolve("db.expected"), 200)) {
            victim = 0;
            while (!ExpectedState.exists(es.committed(victim))) {
                victim++;
            }
        }
        try (Db d =
                Db.open(db, Options.defaults().mergeOperator(StressValue.MERGE_OPERATOR))) { // stress runs write merges
            d.delete(StressValue.key(victim)); // an acknowledged write "lost"
        }
        Cli.Result check = Cli.run("stress", db.toString(), "--ops=10", "--threads=1", "--keys=200", "--seed=" + seed);
        assertThat(check.exitCode()).as(check.toString()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(check.out())
                .contains("lost 1")
                .contains("key " + victim + ":")
                .doesNotContain("stress: running");
    }

    @Test
    void stressWritesAndReadsTablesAsItsOptionsSay() throws IOException {
        long seed = seed("StressCommandsTest.options");
        Path db = tmp.resolve("db");
        Cli.Result run = Cli.run(
                "stress",
                db.toString(),
                "--ops=4000",
                "--threads=2",
                "--keys=800",
                "--seed=" + seed,
                "--compression=ZSTD",
                "--filter-kind=RIBBON",
                "--read-mode=PREAD");
        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.out())
                .contains("compression ZSTD, RIBBON filters, pread reads")
                .contains("wrong answers 0")
                .doesNotContain("merges 0,")
                .doesNotContain("range deletions 0,");
        try (Db d = Db.open(
                db,
                Options.defaults()
                        .readOnly(true)
                        .mergeOperator(StressValue.MERGE_OPERATOR))) { // read-only: no table written
            assertThat(d.tables()).as("the run flushed tables").isNotEmpty().allSatisfy(t -> {
                assertThat(t.compression()).isEqualTo(Compression.ZSTD);
                assertThat(t.filterKind()).isEqualTo(FilterKind.RIBBON);
            });
        }
        Cli.Result lz4 = Cli.run(
                "stress",
                db.toString(),
                "--ops=1000",
                "--threads=2",
                "--keys=800",
                "--seed=" + (seed + 1),
                "--compression=LZ4",
                "--filter-kind=PARTITIONED");
        assertThat(lz4.exitCode()).as(lz4.toString()).isZero();
        assertThat(lz4.out())
                .contains("800 keys verified: lost 0, wrong 0")
                .contains("compression LZ4, PARTITIONED filters, mmap reads");
        Cli.Result budget = Cli.run(
                "stress",
                db.toString(),
                "--ops=2000",
                "--threads=2",
                "--keys=800",
                "--seed=" + (seed + 2),
                "--filter-budget=2048");
        assertThat(budget.exitCode()).as(budget.toString()).isZero();
        assertThat(budget.out())
                .contains("800 keys verified: lost 0, wrong 0")
                .contains("filter budget 2048 bytes, mmap reads")
                .contains("wrong answers 0");
    }

    @Test
    void argumentsAreChecked() throws IOException {
        Cli.Result counting = Cli.run("stress", tmp.resolve("c").toString(), "--ops=10", "--filter-kind=COUNTING");
        assertThat(counting.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(counting.err()).contains("COUNTING is for mutable sets");
        assertThat(Cli.run("crashtest", tmp.resolve("c").toString(), "--filter-kind=COUNTING")
                        .exitCode())
                .isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("stress", tmp.resolve("d").toString(), "--ops=0").exitCode())
                .isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("stress", tmp.resolve("d").toString(), "--threads=0").exitCode())
                .isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("crashtest", tmp.resolve("d").toString(), "--rounds=0")
                        .exitCode())
                .isEqualTo(ExitCodes.USAGE);
        // What a stress child would refuse, crashtest refuses before starting one (not a failed child, exit 1).
        for (String[] bad : new String[][] {
            {"--threads=0"},
            {"--threads=65"},
            {"--keys=2", "--threads=4"},
            {"--duration=-1"},
            {"--range-filter-bits=-1"}
        }) {
            List<String> args = new java.util.ArrayList<>(
                    List.of("crashtest", tmp.resolve("g").toString(), "--rounds=1"));
            args.addAll(List.of(bad));
            Cli.Result r = Cli.run(args.toArray(String[]::new));
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.out()).as(r.toString()).doesNotContain("stress child");
            assertThat(r.err().lines()).as(r.toString()).hasSize(1);
        }
        assertThat(tmp.resolve("g")).doesNotExist();
        // An earlier run's expected state beside a directory that no longer holds a database: refused, not checked
        // (which would report every acknowledged key lost).
        Cli.Result earlier = Cli.run("stress", tmp.resolve("f").toString(), "--ops=50", "--keys=100");
        assertThat(earlier.exitCode()).as(earlier.toString()).isZero();
        deleteTree(tmp.resolve("f"));
        for (String command : List.of("stress", "crashtest")) {
            Cli.Result stale = "stress".equals(command)
                    ? Cli.run("stress", tmp.resolve("f").toString(), "--ops=10", "--keys=100")
                    : Cli.run("crashtest", tmp.resolve("f").toString(), "--rounds=1", "--keys=100");
            assertThat(stale.exitCode()).as(stale.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(stale.err()).contains("f.expected").contains("holds no database");
            assertThat(tmp.resolve("f").resolve("CURRENT")).doesNotExist();
        }
        Cli.Result first = Cli.run("stress", tmp.resolve("e").toString(), "--ops=10", "--keys=100");
        assertThat(first.exitCode()).as(first.toString()).isZero();
        Cli.Result other = Cli.run("stress", tmp.resolve("e").toString(), "--ops=10", "--keys=300");
        assertThat(other.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(other.err()).contains("expected state of 100 keys, not 300");
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void shortCrashTestLosesNothing() {
        Cli.Result r = crashTestLosingNothing(tmp.resolve("db"), "StressCommandsTest.crashtest", 4, 1000, 50, 700);
        assertThat(r.out()).containsPattern("[1-9][0-9]* acknowledged writes");
    }

    /**
     * Runs {@code bloomkv crashtest} on {@code db} (2 threads, the seed of {@code seedName}, {@link #seed}) and checks
     * that it exits 0 after {@code rounds} rounds with nothing lost, no failed open, no wrong answer and no failed
     * child. Returns the result for the caller's own checks.
     */
    static Cli.Result crashTestLosingNothing(
            Path db, String seedName, int rounds, int keys, int killMinMs, int killMaxMs) {
        long seed = seed(seedName);
        Cli.Result r = Cli.run(
                "crashtest",
                db.toString(),
                "--rounds=" + rounds,
                "--keys=" + keys,
                "--threads=2",
                "--kill-min-ms=" + killMinMs,
                "--kill-max-ms=" + killMaxMs,
                "--seed=" + seed);
        System.out.println(r.out());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains("crashtest: " + rounds + " rounds")
                .contains("lost 0, failed opens 0, wrong answers 0, children that failed 0");
        return r;
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void crashTestOfATtlDatabaseWithPeriodicCompactionLosesNothing() {
        long seed = seed("StressCommandsTest.crashtestTtl");
        Path db = tmp.resolve("ttl");
        Cli.Result r = Cli.run(
                "crashtest",
                db.toString(),
                "--rounds=3",
                "--keys=1000",
                "--threads=2",
                "--kill-min-ms=300",
                "--kill-max-ms=1200",
                "--ttl=86400",
                "--periodic-compaction=1",
                "--seed=" + seed);
        System.out.println(r.out());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains("a TTL database (ttl 86400 s")
                .contains("crashtest: round 2: ttl 86400 s, periodic compaction 1 s")
                .contains("crashtest: 3 rounds")
                .contains("lost 0, failed opens 0, wrong answers 0, children that failed 0");
        // The database stays a TTL database: a varied run on it keeps the TTL on, and a run without one is refused.
        Cli.Result varied = Cli.run(
                "crashtest",
                db.toString(),
                "--rounds=1",
                "--keys=1000",
                "--threads=2",
                "--kill-min-ms=100",
                "--kill-max-ms=300",
                "--vary-options",
                "--seed=" + seed);
        assertThat(varied.exitCode()).as(varied.toString()).isZero();
        assertThat(varied.out()).contains("a TTL database (ttl 86400 s or twice that");
        assertThat(Cli.run("crashtest", db.toString(), "--rounds=1", "--ttl=60").exitCode())
                .isEqualTo(ExitCodes.USAGE);
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void crashTestVaryingTheTablesOptionsLosesNothing() {
        long seed = seed("StressCommandsTest.crashtestVaried");
        Cli.Result r = Cli.run(
                "crashtest",
                tmp.resolve("db").toString(),
                "--rounds=4",
                "--keys=1000",
                "--threads=2",
                "--kill-min-ms=50",
                "--kill-max-ms=700",
                "--vary-options",
                "--seed=" + seed);
        System.out.println(r.out());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains("options varied per round")
                .contains("crashtest: 4 rounds")
                .contains("lost 0, failed opens 0, wrong answers 0, children that failed 0");
        for (int round = 0; round < 4; round++) {
            assertThat(r.out())
                    .as("round %d names its options", round)
                    .containsPattern(
                            "crashtest: round " + round
                                    + " \\(compression (NONE|LZ4|ZSTD), (BLOCKED|STANDARD|PARTITIONED|RIBBON) filters, (range filters at (10|16).0 bits/key, )?(filter budget (4096|65536) bytes, )?(mmap|pread|direct) reads\\): killed");
        }
    }

    /** With --vary-options, the options given on the command line stay as given (db_crashtest's rule); the rest vary. */
    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void crashTestVaryingOptionsKeepsThoseGiven() {
        long seed = seed("StressCommandsTest.crashtestVariedPinned");
        Cli.Result r = Cli.run(
                "crashtest",
                tmp.resolve("db").toString(),
                "--rounds=2",
                "--keys=500",
                "--threads=2",
                "--kill-min-ms=50",
                "--kill-max-ms=300",
                "--vary-options",
                "--compression=LZ4",
                "--filter-kind=RIBBON",
                "--read-mode=PREAD",
                "--ttl=0",
                "--periodic-compaction=5",
                "--seed=" + seed);
        System.out.println(r.out());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        for (int round = 0; round < 2; round++) {
            assertThat(r.out())
                    .as("round %d keeps the options given", round)
                    .contains("crashtest: round " + round + ": ttl 0 s, periodic compaction 5 s")
                    .containsPattern("crashtest: round " + round
                            + " \\(compression LZ4, RIBBON filters, (range filters at (10|16).0 bits/key, )?"
                            + "(filter budget (4096|65536) bytes, )?pread reads\\): killed");
        }
        assertThat(r.out())
                .contains("options varied per round (read modes ")
                .contains("except those given: --compression, --filter-kind, --read-mode, --ttl, --periodic-compaction")
                .contains("crashtest: no TTL")
                .doesNotContain("periodic compaction varied")
                .contains("crashtest: 2 rounds")
                .contains("lost 0, failed opens 0, wrong answers 0, children that failed 0");
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var paths = java.nio.file.Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.delete(p);
            }
        }
    }
}
