package io.bloomkv.tools;

import com.sun.nio.file.ExtendedOpenOption;
import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.Db;
import io.bloomkv.tools.stress.ExpectedState;
import io.bloomkv.tools.stress.StressVerifier;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv crashtest DB_DIR --rounds N}: RocksDB db_crashtest for bloomkv. Each round starts
 * {@code bloomkv stress} in a child JVM (the same java, class path and JVM flags), lets it run for a
 * random time once it has verified the database and started its threads, kills it with kill -9
 * ({@link Process#destroyForcibly()}), then reopens the database in this process and checks every key
 * and a full scan against the expected-state file: nothing acknowledged lost, no batch half applied.
 * Reports rounds, operations, acknowledged writes, lost writes, failed opens and wrong answers; exit
 * code 1 when any of the last three is not 0.
 *
 * <p>Stdout carries the results only (the settings, a line per round, the summary), which scripts and tests read. The
 * check after each kill shows the keys it has checked on stderr ({@link Progress}, {@code crashtest: round N check:
 * ...}; off with {@code --no-progress}). The children run with {@code --no-progress}: what they print is read only for
 * {@code stress: running} and, when a child fails, shown as its last lines, which then hold its results and errors
 * alone.
 */
@Command(
        name = "crashtest",
        mixinStandardHelpOptions = true,
        description = {
            "Kill -9 a 'bloomkv stress' child at random moments, then reopen and verify.",
            "The database is verified after each kill; exit code 1 on any lost write,",
            "failed open or wrong answer. The check's progress goes to stderr, the results",
            "to stdout."
        })
final class CrashTestCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DB_DIR", description = "The database directory (created if missing).")
    Path dir;

    @Option(
            names = "--rounds",
            paramLabel = "N",
            defaultValue = "10",
            description = "Kill rounds (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(
            names = "--duration",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description = "Start no new round after this many seconds, 0 = no limit (default: ${DEFAULT-VALUE}).")
    long durationSeconds;

    @Option(
            names = "--seed",
            paramLabel = "SEED",
            description = "Seed of the kill times and of the children's seeds (default: time based).")
    Long seed;

    @Option(
            names = "--threads",
            paramLabel = "N",
            defaultValue = "4",
            description = "Threads of each stress child (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(
            names = "--kill-min-ms",
            paramLabel = "MS",
            defaultValue = "100",
            description =
                    "Shortest run of a child before the kill, after it started its threads (default: ${DEFAULT-VALUE}).")
    int killMinMs;

    @Option(
            names = "--kill-max-ms",
            paramLabel = "MS",
            defaultValue = "3000",
            description = "Longest run of a child before the kill (default: ${DEFAULT-VALUE}).")
    int killMaxMs;

    @Option(
            names = "--vary-options",
            description =
                    "Each round's child (and the reopen after its kill) writes and reads tables with a compression, "
                            + "filter kind and read mode drawn from the seed, as db_crashtest varies its options, so one database "
                            + "holds tables of every codec and filter kind (O_DIRECT only where the file system supports it). "
                            + "An option given on the command line (--compression, --filter-kind, --read-mode, "
                            + "--range-filter-bits, --filter-budget, --ttl, --periodic-compaction) stays as given, as in "
                            + "db_crashtest.")
    boolean varyOptions;

    /** The options --vary-options draws per round (or per run, for a new database's TTL) unless they are given. */
    static final List<String> VARIED_OPTIONS = List.of(
            "--compression",
            "--filter-kind",
            "--read-mode",
            "--range-filter-bits",
            "--filter-budget",
            "--ttl",
            "--periodic-compaction");

    @Mixin
    StressOptions stress;

    /** The progress of the check after each kill; the children's own is always off (see {@link #childCommand}). */
    @Mixin
    ProgressOption progress;

    /**
     * The main class of the stress children when this process does not run from the CLI jar. Not an option: a test
     * creates the command line with a factory that sets a class of its own on the same class path, as
     * {@link ProgressOption#clock}.
     */
    String childMainClass = BloomKvCli.class.getName();

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (rounds < 1 || killMinMs < 0 || killMaxMs < killMinMs) {
            throw new CliException(ExitCodes.USAGE, "need --rounds >= 1 and 0 <= --kill-min-ms <= --kill-max-ms");
        }
        // What the stress children would refuse is refused here, as a usage error, before any child starts (a child
        // that exits at once is counted as a failed child, exit code 1, as if the database had lost writes).
        stress.checkThreads(threads);
        DbOpener.requireDirectory(dir, true); // a file given as DB_DIR: exit code 3, not a failed child per round
        if (durationSeconds < 0) {
            throw new CliException(ExitCodes.USAGE, "--duration must not be negative: " + durationSeconds);
        }
        long s = seed != null ? seed : System.nanoTime();
        Random rnd = new Random(s);
        List<String> pinned =
                varyOptions ? VARIED_OPTIONS.stream().filter(this::given).toList() : List.of();
        PrintWriter out = spec.commandLine().getOut();
        Path expected = stress.expectedFile(dir);
        StressOptions.Tables fixed =
                stress.tables(); // refuses a filter kind no table can carry before any child starts
        stress.toOptions(fixed); // and settings the engine refuses (a range filter's bits per key, a short TTL)
        List<StressOptions.ReadMode> readModes = new ArrayList<>(List.of(StressOptions.ReadMode.values()));
        if (varyOptions && !directReadsSupported(dir)) {
            readModes.remove(StressOptions.ReadMode.DIRECT);
        }
        StressCommand.checkExpectedBelongsTo(dir, expected, stress.keys); // refused before the banner
        out.println("crashtest: seed " + s + " (replay with --seed " + s + "), " + rounds + " rounds, sync "
                + stress.sync + ", "
                + stress.keys + " keys, " + threads + " threads, kill after " + killMinMs + "-" + killMaxMs + " ms, "
                + (varyOptions
                        ? "options varied per round (read modes " + readModes + ")"
                                + (pinned.isEmpty() ? "" : ", except those given: " + String.join(", ", pinned))
                        : fixed)
                + ", expected state " + expected);
        out.flush();
        // A TTL database stays one: on or off for the whole run (drawn from the seed for a new database when varied),
        // the duration and periodic compaction varied per round (a TTL may change on reopen, as in RocksDB).
        long ttl = stress.ttlSeconds;
        if (varyOptions && ttl == 0 && !given("--ttl")) {
            ttl = Files.exists(dir.resolve("CURRENT"))
                    ? (isTtlDatabase(dir, fixed) ? 86_400 : 0)
                    : rnd.nextBoolean() ? 86_400 : 0;
        }
        StressOptions.withExpiry(
                io.bloomkv.engine.Options.defaults(), ttl, stress.periodicCompactionSeconds); // checks them
        if (ttl > 0 || stress.periodicCompactionSeconds > 0 || varyOptions) {
            out.println("crashtest: "
                    + (ttl > 0
                            ? "a TTL database (ttl " + ttl + " s"
                                    + (varyOptions && !given("--ttl") ? " or twice that" : "")
                                    + "; no value expires within the run, so the expected-state rules are unchanged)"
                            : "no TTL")
                    + (varyOptions && !given("--periodic-compaction")
                            ? ", periodic compaction varied per round"
                            : stress.periodicCompactionSeconds > 0
                                    ? ", periodic compaction " + stress.periodicCompactionSeconds + " s"
                                    : ""));
            out.flush();
        }
        long ops0;
        long acked0;
        long ranges0;
        long rewrites0;
        try (ExpectedState es = StressCommand.openExpected(expected, stress.keys)) {
            ops0 = es.totalOps();
            acked0 = es.totalAcked();
            ranges0 = es.totalKeyRangeDeletions();
            rewrites0 = es.totalMemtableRewrites();
        }
        long t0 = System.nanoTime();
        int done = 0;
        long lost = 0;
        long wrong = 0;
        long failedOpens = 0;
        long childFailures = 0;
        long deadline = durationSeconds > 0 ? t0 + TimeUnit.SECONDS.toNanos(durationSeconds) : Long.MAX_VALUE;
        for (int round = 0; round < rounds && System.nanoTime() < deadline; round++) {
            long childSeed = rnd.nextLong();
            // Every draw is made, given options or not, so that a seed draws the same for the options that vary.
            StressOptions.Tables ro = varyOptions
                    ? new StressOptions.Tables(
                            keep(
                                    "--compression",
                                    fixed.compression(),
                                    Compression.values()[rnd.nextInt(Compression.values().length)]),
                            keep(
                                    "--filter-kind",
                                    fixed.filterKind(),
                                    StressOptions.TABLE_FILTER_KINDS[
                                            rnd.nextInt(StressOptions.TABLE_FILTER_KINDS.length)]),
                            keep("--read-mode", fixed.readMode(), readModes.get(rnd.nextInt(readModes.size()))),
                            keep(
                                    "--range-filter-bits",
                                    fixed.rangeFilterBits(),
                                    StressOptions.RANGE_FILTER_BITS[
                                            rnd.nextInt(StressOptions.RANGE_FILTER_BITS.length)]),
                            keep(
                                    "--filter-budget",
                                    fixed.filterBudget(),
                                    StressOptions.FILTER_BUDGETS[rnd.nextInt(StressOptions.FILTER_BUDGETS.length)]))
                    : fixed;
            long roundTtl = varyOptions && ttl > 0 ? keep("--ttl", ttl, ttl * (1 + rnd.nextInt(2))) : ttl;
            long periodic = varyOptions
                    ? keep(
                            "--periodic-compaction",
                            stress.periodicCompactionSeconds,
                            StressOptions.PERIODIC_COMPACTION_SECONDS[
                                    rnd.nextInt(StressOptions.PERIODIC_COMPACTION_SECONDS.length)])
                    : stress.periodicCompactionSeconds;
            if (roundTtl > 0 || periodic > 0) {
                out.println("crashtest: round " + round + ": ttl " + roundTtl + " s, periodic compaction " + periodic
                        + " s");
                out.flush();
            }
            Process p = new ProcessBuilder(childCommand(childSeed, ro, roundTtl, periodic))
                    .redirectErrorStream(true)
                    .start();
            ArrayDeque<String> tail = new ArrayDeque<>();
            long[] runningAt = {0};
            Thread reader = new Thread(() -> readChild(p, tail, runningAt), "crashtest-child-output");
            reader.start();
            long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
            while (runningAt[0] == 0 && p.isAlive() && System.nanoTime() < waitUntil) {
                Thread.sleep(5);
            }
            boolean running;
            synchronized (tail) {
                running = runningAt[0] != 0;
            }
            int killAfter = killMinMs + rnd.nextInt(killMaxMs - killMinMs + 1);
            if (running) {
                // Returns early when the child exits by itself: that is a failure, reported below without the wait.
                p.waitFor(killAfter, TimeUnit.MILLISECONDS);
            }
            boolean aliveAtKill = p.isAlive();
            p.destroyForcibly();
            p.waitFor(60, TimeUnit.SECONDS);
            reader.join(10_000);
            if (!running || !aliveAtKill) {
                childFailures++;
                out.println("crashtest: round " + round + " (" + ro + "): the stress child "
                        + (running ? "exited by itself (exit " + p.exitValue() + ")" : "did not start its threads")
                        + "; its last output:");
                synchronized (tail) {
                    tail.forEach(l -> out.println("  | " + l));
                }
                out.flush();
                break;
            }
            // Reopen and verify, as the next child would, but in this process.
            StressVerifier.Result r;
            try (ExpectedState es = StressCommand.openExpected(expected, stress.keys);
                    Db db = DbOpener.open(
                            dir,
                            StressOptions.withExpiry(stress.toOptions(ro), roundTtl, 0)
                                    .autoCompaction(false),
                            true)) {
                // Every expected key is read: on a large key space this takes a while, so its progress is shown on
                // stderr, as stress shows its check at open; stdout's round line below is its result.
                try (Progress checking = progress.start(spec, "crashtest: round " + round + " check", "keys")
                        .itemsOnly()) {
                    checking.total(es.keys(), -1);
                    r = StressVerifier.verifyAndResolve(db, es, checked -> checking.set(checked, 0));
                    checking.done();
                }
            } catch (BloomKvException e) {
                failedOpens++;
                out.println("crashtest: round " + round + " (" + ro + "): reopen failed: " + e);
                out.flush();
                break;
            }
            lost += r.lost();
            wrong += r.wrong();
            done++;
            out.println("crashtest: round " + round + (varyOptions ? " (" + ro + ")" : "") + ": killed after "
                    + killAfter + " ms; " + r);
            out.flush();
            if (!r.ok()) {
                break;
            }
        }
        long seconds = (System.nanoTime() - t0) / 1_000_000_000L;
        long ops;
        long acked;
        long ranges;
        long rewrites;
        try (ExpectedState es = StressCommand.openExpected(expected, stress.keys)) {
            ops = es.totalOps() - ops0;
            acked = es.totalAcked() - acked0;
            ranges = es.totalKeyRangeDeletions() - ranges0;
            rewrites = es.totalMemtableRewrites() - rewrites0; // as the children last recorded them (every 200 ms)
        }
        out.println("crashtest: " + done + " rounds in " + seconds + " s, " + ops + " operations, " + acked
                + " acknowledged writes, " + ranges + " key-range deletions, " + rewrites + " memtable rewrites; lost "
                + lost + ", failed opens " + failedOpens + ", wrong answers " + wrong
                + ", children that failed " + childFailures);
        out.flush();
        return lost == 0 && failedOpens == 0 && wrong == 0 && childFailures == 0 ? ExitCodes.OK : ExitCodes.NOT_FOUND;
    }

    /** Whether {@code option} was given on the command line. */
    private boolean given(String option) {
        return spec.commandLine().getParseResult().hasMatchedOption(option);
    }

    /** {@code given} when {@code option} was given on the command line (--vary-options keeps it), else {@code drawn}. */
    private <T> T keep(String option, T given, T drawn) {
        return given(option) ? given : drawn;
    }

    private static void readChild(Process p, ArrayDeque<String> tail, long[] runningAt) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (tail) {
                    tail.addLast(line);
                    if (tail.size() > 20) {
                        tail.removeFirst();
                    }
                    if (line.equals("stress: running")) {
                        runningAt[0] = System.nanoTime();
                    }
                }
            }
        } catch (IOException e) {
            // the child was killed
        }
    }

    /** True when {@code classPath} is one jar whose manifest runs {@link BloomKvCli} (the shaded CLI jar). */
    private static boolean isCliJar(String classPath) {
        if (!classPath.endsWith(".jar") || classPath.contains(java.io.File.pathSeparator)) {
            return false;
        }
        try (java.util.jar.JarFile jar = new java.util.jar.JarFile(classPath)) {
            java.util.jar.Manifest m = jar.getManifest();
            return m != null
                    && BloomKvCli.class.getName().equals(m.getMainAttributes().getValue("Main-Class"));
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * {@code java [JVM flags] -jar JAR stress ...} when this process runs from the CLI jar (its manifest
     * carries the Chronicle flags), else {@code java [this JVM's --add-opens/--add-exports flags] -cp
     * CLASSPATH io.bloomkv.tools.BloomKvCli stress ...}; always with {@code --no-progress}.
     */
    private List<String> childCommand(long childSeed, StressOptions.Tables ro, long ttlSeconds, long periodicSeconds) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-opens") || a.startsWith("--add-exports") || a.startsWith("-Dchronicle")) {
                cmd.add(a);
            }
        }
        cmd.add("-Xmx512m");
        String cp = System.getProperty("java.class.path");
        if (isCliJar(cp)) {
            cmd.add("-jar");
            cmd.add(cp);
        } else {
            cmd.add("-cp");
            cmd.add(cp);
            cmd.add(childMainClass);
        }
        cmd.add("stress");
        cmd.add(dir.toString());
        cmd.add("--expected=" + stress.expectedFile(dir));
        cmd.add("--keys=" + stress.keys);
        cmd.add("--sync=" + stress.sync);
        cmd.add("--threads=" + threads);
        cmd.add("--ops=0");
        cmd.add("--duration=86400");
        cmd.add("--seed=" + childSeed);
        cmd.add("--compression=" + ro.compression());
        cmd.add("--filter-kind=" + ro.filterKind());
        cmd.add("--read-mode=" + ro.readMode());
        cmd.add("--range-filter-bits=" + ro.rangeFilterBits());
        cmd.add("--filter-budget=" + ro.filterBudget());
        cmd.add("--ttl=" + ttlSeconds);
        cmd.add("--periodic-compaction=" + periodicSeconds);
        // The child's output is read, not shown: its progress lines would only fill the last lines shown when it fails
        // and push its results and errors out of them.
        cmd.add("--no-progress");
        return cmd;
    }

    /** Whether the existing database in {@code dir} is a TTL database (a read-only open with a TTL is refused if not). */
    private boolean isTtlDatabase(Path dir, StressOptions.Tables tables) {
        try (Db db = Db.open(
                dir,
                StressOptions.withExpiry(stress.toOptions(tables), StressOptions.MIN_TTL_SECONDS, 0)
                        .readOnly(true))) {
            return true;
        } catch (io.bloomkv.engine.TtlMismatchException e) {
            return false;
        }
    }

    /**
     * Whether files beside {@code dir} can be opened with O_DIRECT (tmpfs cannot), checked on a scratch file in the
     * database's directory (created if missing), which is then deleted.
     */
    private static boolean directReadsSupported(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path probe = Files.createTempFile(dir, "direct-probe", ".tmp");
        try (FileChannel ch = FileChannel.open(probe, StandardOpenOption.READ, ExtendedOpenOption.DIRECT)) {
            return ch.isOpen();
        } catch (IOException | UnsupportedOperationException e) {
            // EINVAL from open(2) (tmpfs, some network file systems) or no O_DIRECT on this platform: the answer,
            // not an error
            return false;
        } finally {
            Files.deleteIfExists(probe);
        }
    }
}
