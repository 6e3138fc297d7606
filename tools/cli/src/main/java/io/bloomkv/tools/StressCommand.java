package io.bloomkv.tools;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.tools.stress.ExpectedState;
import io.bloomkv.tools.stress.StressRun;
import io.bloomkv.tools.stress.StressVerifier;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv stress DB_DIR}: RocksDB db_stress for bloomkv. Opens (or creates) the database, checks
 * every key and a full scan against the expected-state file left by earlier runs (an in-flight write
 * of a killed run may or may not have landed, all or nothing; its progress, keys checked, on stderr), then runs
 * exactly {@code --ops} operations (fewer if {@code --duration} ends first) in threads of random puts,
 * deletes, range deletions, batches, gets, iterators and snapshots, each answer checked against the expected state.
 * Exit code 0 when every answer was right, 1 on any wrong answer or lost write.
 */
@Command(
        name = "stress",
        mixinStandardHelpOptions = true,
        description = {
            "Stress the database with random operations checked against an expected state.",
            "The expected-state file survives the process; exit code 1 on any wrong answer.",
            "Prints 'stress: running' once the verification passed, as its threads start;",
            "its progress goes to stderr, its results to stdout."
        })
final class StressCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory (created if missing).")
    Path dir;

    @Option(names = "--seed", paramLabel = "SEED", description = "Seed of the random operations (default: time based).")
    Long seed;

    @Option(
            names = "--threads",
            paramLabel = "N",
            defaultValue = "4",
            description = "Threads (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(
            names = "--ops",
            paramLabel = "N",
            defaultValue = "100000",
            description = "Operations in all, 0 = until --duration ends (default: ${DEFAULT-VALUE}).")
    long ops;

    @Option(
            names = "--duration",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description = "Stop after this many seconds, 0 = no limit (default: ${DEFAULT-VALUE}).")
    long durationSeconds;

    @Mixin
    StressOptions stress;

    @Mixin
    ProgressOption progress;

    @Override
    public Integer call() throws IOException, InterruptedException {
        stress.checkThreads(threads);
        if (ops < 0 || durationSeconds < 0) {
            throw new CliException(ExitCodes.USAGE, "--ops and --duration must not be negative");
        }
        if (ops == 0 && durationSeconds == 0) {
            throw new CliException(ExitCodes.USAGE, "give --ops or --duration (or both)");
        }
        // Refused before the banner and before the expected-state file is created beside a file given as DB_DIR.
        DbOpener.requireDirectory(dir, true);
        checkExpectedBelongsTo(dir, stress.expectedFile(dir), stress.keys);
        long s = seed != null ? seed : System.nanoTime();
        PrintWriter out = spec.commandLine().getOut();
        StressOptions.Tables tables = stress.tables();
        Options options = stress.toOptions(tables);
        out.println("stress: seed " + s + " (replay with --seed " + s + "), " + threads + " threads, " + stress.keys
                + " keys, sync " + stress.sync + ", " + tables + ", expected state " + stress.expectedFile(dir));
        out.flush();
        try (ExpectedState es = openExpected(stress.expectedFile(dir), stress.keys);
                Db db = DbOpener.open(dir, options, true)) {
            // The check at open reads every key: on a large key space it takes a while, so it shows its progress on
            // stderr as the run does, under its own prefix (stdout's 'stress: open: ' line is its result).
            StressVerifier.Result verified;
            try (Progress checking =
                    progress.start(spec, "stress: open check", "keys").itemsOnly()) {
                checking.total(es.keys(), -1);
                verified = StressVerifier.verifyAndResolve(db, es, checked -> checking.set(checked, 0));
                checking.done();
            }
            out.println("stress: open: " + verified);
            if (!verified.ok()) {
                out.flush();
                return ExitCodes.NOT_FOUND;
            }
            StressRun.prepareIngestDirectory(db);
            out.println("stress: running");
            out.flush();
            StressRun run = new StressRun(db, es, new StressRun.Config(threads, ops, durationSeconds * 1000, s));
            StressRun.Summary summary;
            // The progress is stderr's, as every long command's; stdout keeps the lines above and the results below,
            // which crashtest ('stress: running') and scripts read.
            StressRun.Counts[] now = {new StressRun.Counts(0, 0, 0, 0, 0)};
            try (Progress shown = progress.start(spec, "stress", "ops").itemsOnly()) {
                shown.total(run.opsLimit(), -1);
                shown.detail(() -> Fmt.count(now[0].acknowledgedWrites()) + " acknowledged writes, "
                        + Fmt.count(now[0].wrongAnswers()) + " wrong, " + Fmt.count(now[0].keyRangeDeletions())
                        + " key-range deletions, " + Fmt.count(now[0].memtableRewrites()) + " memtable rewrites");
                summary = run.run(counts -> {
                    now[0] = counts;
                    shown.set(counts.ops(), 0);
                });
                shown.done();
            }
            out.println("stress: done: " + summary);
            out.println("stress: expected-state totals over every run: " + es.totalOps() + " ops, " + es.totalAcked()
                    + " acknowledged writes, " + es.totalKeyRangeDeletions() + " key-range deletions, "
                    + es.totalMemtableRewrites() + " memtable rewrites");
            out.flush();
            if (run.failure() != null) {
                // One line, as every error of the CLI; the stack trace with --verbose.
                PrintWriter err = spec.commandLine().getErr();
                err.println("stress: a worker failed: " + run.failure());
                if (spec.root().userObject() instanceof BloomKvCli root && root.verbose) {
                    run.failure().printStackTrace(err);
                }
                err.flush();
            }
            return summary.wrongAnswers() == 0 ? ExitCodes.OK : ExitCodes.NOT_FOUND;
        }
    }

    /**
     * Refuses a database without its expected-state file, and an expected-state file that records acknowledged writes
     * beside a directory that holds no database: the file
     * is an earlier run's whose database is gone (removed, or another directory of the same name), and checking a new,
     * empty database against it would report every key it records as lost.
     */
    static void checkExpectedBelongsTo(Path dir, Path file, int keys) throws IOException {
        if (Files.exists(dir.resolve("CURRENT")) && !Files.exists(file)) {
            // A database stress did not write (an application's, or one whose expected state was deleted): every key
            // in it would be counted as a wrong answer, and the run would write the stress keys into it.
            throw new CliException(
                    ExitCodes.USAGE,
                    dir + " holds a database but there is no expected-state file " + file + ": stress runs on a"
                            + " database of its own; give a new directory (or --expected the file of the runs that"
                            + " wrote this one)");
        }
        if (Files.exists(dir.resolve("CURRENT")) || !Files.exists(file)) {
            return;
        }
        try (ExpectedState es = openExpected(file, keys)) {
            if (es.totalAcked() > 0) {
                throw new CliException(
                        ExitCodes.USAGE,
                        file + " records " + es.totalAcked() + " acknowledged writes, but " + dir
                                + " holds no database: the file is an earlier run's; delete it, or give --expected a"
                                + " new file");
            }
        }
    }

    static ExpectedState openExpected(Path file, int keys) throws IOException {
        try {
            return ExpectedState.open(file, keys);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        }
    }
}
