package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The progress display of the long commands ({@code put --input}, {@code sst write} with and without {@code --ops},
 * {@code backup create}, {@code stress}): stdout is the same with it on, off and on a terminal (stress: the same
 * result lines, whose figures vary from run to run); {@code --no-progress} leaves stderr
 * empty; the plain lines (stderr not a terminal) count up to the run's totals, ending in a {@code done} line; and a
 * failure midway ends stderr with its error line alone, nothing of the progress left on it. A {@link Shown} factory
 * gives the commands a clock that jumps 10 s at each reading, so every reading shows progress however short the run.
 */
class ProgressCommandsTest {
    @TempDir
    Path tmp;

    /** How the display runs: a plain line per reading of the clock, or a terminal's redrawn line. */
    enum Mode {
        LINES,
        TERMINAL
    }

    /**
     * Creates the commands with a {@link ProgressOption} whose clock moves 10 s at each reading (past both intervals);
     * after {@code failAfter} readings it throws an I/O error instead (a failure midway, where no input line can be
     * made to fail: a backup).
     */
    static final class Shown implements CommandLine.IFactory {
        final Mode mode;
        final int failAfter;
        int readings;
        int installed;

        Shown(Mode mode) {
            this(mode, Integer.MAX_VALUE);
        }

        Shown(Mode mode, int failAfter) {
            this.mode = mode;
            this.failAfter = failAfter;
        }

        @Override
        public <K> K create(Class<K> type) throws Exception {
            K created = CommandLine.defaultFactory().create(type);
            if (created instanceof ProgressOption p) {
                p.terminal = mode == Mode.TERMINAL;
                p.clock = () -> {
                    if (++readings > failAfter) {
                        throw new UncheckedIOException(new IOException("No space left on device"));
                    }
                    return readings * 10_000_000_000L;
                };
                installed++;
            }
            return created;
        }
    }

    private static Cli.Result run(Shown shown, String... args) {
        Cli.Result r = Cli.run(shown, args);
        assertThat(shown.installed).as("the factory made the --progress mixins").isPositive();
        return r;
    }

    /** What a terminal shows of {@code err}: {@code \r} returns to the line's start, later characters overwrite. */
    static List<String> screen(String err) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        int col = 0;
        for (char c : err.toCharArray()) {
            if (c == '\r') {
                col = 0;
            } else if (c == '\n') {
                lines.add(line.toString().stripTrailing());
                line.setLength(0);
                col = 0;
            } else {
                if (col < line.length()) {
                    line.setCharAt(col, c);
                } else {
                    line.append(c);
                }
                col++;
            }
        }
        if (!line.toString().isBlank()) {
            lines.add(line.toString().stripTrailing());
        }
        return lines;
    }

    /** {@code n} sorted {@code kNNNNN<TAB>vNNNNN} lines. */
    private Path pairs(String name, int n, String... tail) throws IOException {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append(String.format("k%05d\tv%05d\n", i, i));
        }
        for (String t : tail) {
            s.append(t).append('\n');
        }
        return Files.writeString(tmp.resolve(name), s);
    }

    /**
     * The plain lines of {@code err}: every one {@code TASK: COUNT UNIT, ...}, the counts never going down, at least
     * two before the last, which is {@code TASK: done: } and {@code doneCounts}.
     */
    private static void assertCountsUpTo(String err, String task, String unit, String doneCounts) {
        assertThat(err)
                .as("whole lines, no terminal control")
                .doesNotContain("\r")
                .endsWith("\n");
        List<String> lines = err.lines().toList();
        assertThat(lines).hasSizeGreaterThan(2).last().isEqualTo(task + ": done: " + doneCounts);
        Pattern progress =
                Pattern.compile(Pattern.quote(task) + ": ([0-9,]+)( of [0-9,]+)? " + unit + "( \\([0-9]+%\\))?, .+");
        long before = -1;
        for (String line : lines.subList(0, lines.size() - 1)) {
            Matcher m = progress.matcher(line);
            assertThat(m.matches()).as("a progress line: %s", line).isTrue();
            long count = Long.parseLong(m.group(1).replace(",", ""));
            assertThat(count).as("counts go up: %s", line).isGreaterThanOrEqualTo(before);
            before = count;
        }
    }

    /** {@code N lines, SIZE of SIZE (100%)}: the done counts of reading all of {@code input}. */
    private static String allOf(long lines, Path input) throws IOException {
        String size = Fmt.bytes(Files.size(input));
        return Fmt.count(lines) + " lines, " + size + " of " + size + " (100%)";
    }

    // ------------------------------------------------------------------ put --input

    @Test
    void putPrintsTheSameStdoutWithProgressOnOffAndOnATerminal() throws IOException {
        Path tsv = pairs("in.tsv", 3000);
        List<String> outs = new ArrayList<>();
        int i = 0;
        for (Shown shown : List.of(new Shown(Mode.LINES), new Shown(Mode.TERMINAL))) {
            Cli.Result r = run(shown, "put", tmp.resolve("db" + i++).toString(), "--create", "--input", tsv.toString());
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.err()).as("progress was shown (on stderr)").contains("put: ");
            outs.add(r.out());
        }
        Cli.Result off = Cli.run("put", tmp.resolve("db-off").toString(), "--create", "--input", tsv.toString());
        assertThat(off.err()).isEmpty();
        outs.add(off.out());
        assertThat(outs).containsOnly("put 3000 pairs\n");
    }

    @Test
    void putWithNoProgressPrintsNothingOnStderr() throws IOException {
        Path tsv = pairs("in.tsv", 3000);
        for (Mode mode : Mode.values()) {
            Cli.Result r = run(
                    new Shown(mode),
                    "put",
                    tmp.resolve("db-" + mode).toString(),
                    "--create",
                    "--input",
                    tsv.toString(),
                    "--no-progress");
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.out()).isEqualTo("put 3000 pairs\n");
            assertThat(r.err()).as(mode.toString()).isEmpty();
        }
    }

    @Test
    void putProgressLinesCountTheInputsLinesAndBytes() throws IOException {
        Path tsv = pairs("in.tsv", 3000, "", "k99999\tlast"); // an empty line is a line read too
        Cli.Result r =
                run(new Shown(Mode.LINES), "put", tmp.resolve("db").toString(), "--create", "--input", tsv.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).isEqualTo("put 3001 pairs\n");
        assertCountsUpTo(r.err(), "put", "lines", allOf(3002, tsv));
    }

    @Test
    void putFailingMidwayEndsStderrWithItsErrorLineAlone() throws IOException {
        Path tsv = pairs("in.tsv", 3000, "no tab on this line");
        String error = "bloomkv put: " + tsv + ":3001: expected KEY<TAB>VALUE, found no tab";
        Cli.Result lines =
                run(new Shown(Mode.LINES), "put", tmp.resolve("a").toString(), "--create", "--input", tsv.toString());
        assertThat(lines.exitCode()).as(lines.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(lines.out()).isEmpty();
        assertThat(lines.err()).as("whole lines").doesNotContain("\r").endsWith("\n");
        List<String> errLines = lines.err().lines().toList();
        assertThat(errLines).hasSizeGreaterThan(1).last().isEqualTo(error);
        assertThat(errLines).noneMatch(l -> l.contains("done"));

        Cli.Result tty = run(
                new Shown(Mode.TERMINAL), "put", tmp.resolve("b").toString(), "--create", "--input", tsv.toString());
        assertThat(tty.exitCode()).as(tty.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(tty.err()).as("the line was drawn").contains("\rput: ");
        assertThat(screen(tty.err())).as("what the terminal shows").containsExactly(error);
    }

    // ------------------------------------------------------------------ sst write

    /** {@code n} operation lines: puts, every tenth key a delete, and two range deletions. */
    private Path ops(String name, int n, String... tail) throws IOException {
        StringBuilder s = new StringBuilder("delete-range\ta\tb\n");
        for (int i = 0; i < n; i++) {
            s.append(i % 10 == 0 ? String.format("delete\tk%05d\n", i) : String.format("put\tk%05d\tv%05d\n", i, i));
        }
        s.append("delete-range\tx\ty\n");
        for (String t : tail) {
            s.append(t).append('\n');
        }
        return Files.writeString(tmp.resolve(name), s);
    }

    @Test
    void sstWritePrintsTheSameStdoutWithProgressOnOffAndOnATerminal() throws IOException {
        Path tsv = pairs("in.tsv", 3000);
        Path opsFile = ops("in.ops", 3000);
        for (boolean withOps : new boolean[] {false, true}) {
            Path sst = tmp.resolve(withOps ? "ops.sst" : "pairs.sst");
            List<String> args = new ArrayList<>(
                    List.of("sst", "write", sst.toString(), "--input", (withOps ? opsFile : tsv).toString()));
            if (withOps) {
                args.add("--ops");
            }
            List<String> outs = new ArrayList<>();
            for (Shown shown : List.of(new Shown(Mode.LINES), new Shown(Mode.TERMINAL))) {
                Cli.Result r = run(shown, args.toArray(String[]::new));
                assertThat(r.exitCode()).as(r.toString()).isZero();
                assertThat(r.err()).as("progress was shown (on stderr)").contains("sst write: ");
                outs.add(r.out());
            }
            Cli.Result off = Cli.run(args.toArray(String[]::new));
            assertThat(off.err()).isEmpty();
            outs.add(off.out());
            assertThat(outs)
                    .containsOnly(
                            withOps
                                    ? "wrote 2700 puts, 0 merges, 300 deletes, 2 range deletions to " + sst + "\n"
                                    : "wrote 3000 pairs to " + sst + "\n");
        }
    }

    @Test
    void sstWriteWithNoProgressPrintsNothingOnStderr() throws IOException {
        Path tsv = pairs("in.tsv", 3000);
        Path opsFile = ops("in.ops", 3000);
        for (Mode mode : Mode.values()) {
            Cli.Result r = run(
                    new Shown(mode),
                    "sst",
                    "write",
                    tmp.resolve("p.sst").toString(),
                    "--input",
                    tsv.toString(),
                    "--no-progress");
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.err()).as(mode.toString()).isEmpty();
            Cli.Result o = run(
                    new Shown(mode),
                    "sst",
                    "write",
                    tmp.resolve("o.sst").toString(),
                    "--ops",
                    "--input",
                    opsFile.toString(),
                    "--no-progress");
            assertThat(o.exitCode()).as(o.toString()).isZero();
            assertThat(o.err()).as(mode + " --ops").isEmpty();
        }
    }

    @Test
    void sstWriteProgressLinesCountTheInputsLinesAndBytes() throws IOException {
        Path tsv = pairs("in.tsv", 3000);
        Cli.Result r =
                run(new Shown(Mode.LINES), "sst", "write", tmp.resolve("p.sst").toString(), "--input", tsv.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertCountsUpTo(r.err(), "sst write", "lines", allOf(3000, tsv));

        Path opsFile = ops("in.ops", 3000);
        Cli.Result o = run(
                new Shown(Mode.LINES),
                "sst",
                "write",
                tmp.resolve("o.sst").toString(),
                "--ops",
                "--input",
                opsFile.toString());
        assertThat(o.exitCode()).as(o.toString()).isZero();
        assertCountsUpTo(o.err(), "sst write", "lines", allOf(3002, opsFile));
    }

    @Test
    void sstWriteFailingMidwayEndsStderrWithItsErrorLineAloneAndLeavesNoFile() throws IOException {
        Path tsv = pairs("in.tsv", 3000, "k00000\trepeated");
        Path opsFile = ops("in.ops", 3000, "frobnicate\tk99999");
        String pairsError = "bloomkv sst write: " + tsv + ":3001: key k00000 sorts before the key of line 3000: keys"
                + " must be in strictly increasing order (byte order), one entry per key";
        String opsError = "bloomkv sst write: " + opsFile
                + ":3003: unknown operation 'frobnicate': expected put, merge," + " delete or delete-range";
        for (Mode mode : Mode.values()) {
            Path sst = tmp.resolve("out-" + mode + ".sst");
            Cli.Result p = run(new Shown(mode), "sst", "write", sst.toString(), "--input", tsv.toString());
            Cli.Result o = run(new Shown(mode), "sst", "write", sst.toString(), "--ops", "--input", opsFile.toString());
            for (Cli.Result r : List.of(p, o)) {
                String error = r == p ? pairsError : opsError;
                assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
                assertThat(r.out()).isEmpty();
                if (mode == Mode.LINES) {
                    assertThat(r.err()).as("whole lines").doesNotContain("\r").endsWith("\n");
                    assertThat(r.err().lines().toList())
                            .hasSizeGreaterThan(1)
                            .last()
                            .isEqualTo(error);
                    assertThat(r.err()).doesNotContain("done");
                } else {
                    assertThat(r.err()).as("the line was drawn").contains("\rsst write: ");
                    assertThat(screen(r.err())).as("what the terminal shows").containsExactly(error);
                }
            }
            assertThat(sst).doesNotExist();
        }
    }

    // ------------------------------------------------------------------ backup create

    /** A database of 3000 flushed pairs and one more in its WAL, copied to {@code copies} directories. */
    private List<Path> databases(int copies) throws IOException {
        Path db = tmp.resolve("db");
        Path tsv = pairs("db.tsv", 3000);
        assertThat(Cli.run("put", db.toString(), "--create", "--flush", "--input", tsv.toString())
                        .exitCode())
                .isZero();
        assertThat(Cli.run("put", db.toString(), "late", "write").exitCode()).isZero();
        List<Path> dbs = new ArrayList<>();
        for (int i = 0; i < copies; i++) {
            Path copy = tmp.resolve("db" + i);
            Files.createDirectories(copy);
            try (Stream<Path> files = Files.list(db)) {
                for (Path f : files.toList()) {
                    if (!f.getFileName().toString().equals("LOCK")) {
                        Files.copy(f, copy.resolve(f.getFileName()));
                    }
                }
            }
            dbs.add(copy);
        }
        return dbs;
    }

    private static final Pattern BACKUP_OUT = Pattern.compile("backup 1: ([0-9]+) files, ([0-9]+) bytes\n");

    @Test
    void backupCreatePrintsTheSameStdoutWithProgressOnOffAndOnATerminal() throws IOException {
        List<Path> dbs = databases(3);
        List<String> outs = new ArrayList<>();
        int i = 0;
        for (Shown shown : List.of(new Shown(Mode.LINES), new Shown(Mode.TERMINAL))) {
            Path db = dbs.get(i++);
            Cli.Result r = run(
                    shown,
                    "backup",
                    "create",
                    db.toString(),
                    tmp.resolve("b" + i).toString());
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.err()).as("progress was shown (on stderr)").contains("backup: ");
            outs.add(r.out());
        }
        Cli.Result off = Cli.run(
                "backup", "create", dbs.get(2).toString(), tmp.resolve("b3").toString());
        assertThat(off.err()).isEmpty();
        outs.add(off.out());
        assertThat(outs.get(2)).matches(BACKUP_OUT);
        assertThat(outs).containsOnly(outs.get(2));
    }

    @Test
    void backupCreateWithNoProgressPrintsNothingOnStderr() throws IOException {
        List<Path> dbs = databases(2);
        int i = 0;
        for (Mode mode : Mode.values()) {
            Cli.Result r = run(
                    new Shown(mode),
                    "backup",
                    "create",
                    dbs.get(i).toString(),
                    tmp.resolve("b" + i++).toString(),
                    "--no-progress");
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.out()).matches(BACKUP_OUT);
            assertThat(r.err()).as(mode.toString()).isEmpty();
        }
    }

    @Test
    void backupCreateProgressLinesCountTheBackupsFilesAndBytes() throws IOException {
        Path db = databases(1).get(0);
        Cli.Result r = run(
                new Shown(Mode.LINES),
                "backup",
                "create",
                db.toString(),
                tmp.resolve("b").toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        Matcher out = BACKUP_OUT.matcher(r.out());
        assertThat(out.matches()).as(r.out()).isTrue();
        String files = out.group(1);
        String bytes = Fmt.bytes(Long.parseLong(out.group(2)));
        assertCountsUpTo(
                r.err(), "backup", "files", files + " of " + files + " files, " + bytes + " of " + bytes + " (100%)");
    }

    /**
     * A backup has no input line to break, so the failure is an I/O error thrown from the middle of it (the test
     * clock's third reading, after the line was shown): the error line stands alone and no backup is left.
     */
    @Test
    void backupCreateFailingMidwayEndsStderrWithItsErrorLineAloneAndLeavesNoBackup() throws IOException {
        List<Path> dbs = databases(2);
        String error = "bloomkv backup create: I/O error: java.io.IOException: No space left on device";
        int i = 0;
        for (Mode mode : Mode.values()) {
            Path backups = tmp.resolve("b" + i);
            Cli.Result r =
                    run(new Shown(mode, 2), "backup", "create", dbs.get(i++).toString(), backups.toString());
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.IO_ERROR);
            assertThat(r.out()).isEmpty();
            if (mode == Mode.LINES) {
                assertThat(r.err()).as("whole lines").doesNotContain("\r").endsWith("\n");
                assertThat(r.err().lines().toList()).hasSize(2).last().isEqualTo(error);
                assertThat(r.err().lines().toList().get(0)).startsWith("backup: 0 of ");
            } else {
                assertThat(r.err()).as("the line was drawn").contains("\rbackup: ");
                assertThat(screen(r.err())).as("what the terminal shows").containsExactly(error);
            }
            assertThat(Cli.run("backup", "list", backups.toString()).out())
                    .as("no backup")
                    .isEqualTo("id  created                   files  bytes\n");
        }
    }

    /**
     * A backup directory on another file system than the database (here /dev/shm, a tmpfs, when the temporary
     * directory is not on one): hard links fail, the checkpoint copies every table, and the progress counts the copy
     * against the total, which is then the backup's bytes plus its tables' bytes, the lines never going down.
     */
    @Test
    void backupCreateToAnotherFileSystemCountsTheCheckpointsCopy() throws IOException {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "no /dev/shm");
        assumeFalse(
                Files.getFileStore(shm).equals(Files.getFileStore(tmp)),
                "/dev/shm and the temporary directory are one");
        Path db = databases(1).get(0);
        Path backups = Files.createTempDirectory(shm, "bloomkv-progress-");
        try {
            Cli.Result r = run(new Shown(Mode.LINES), "backup", "create", db.toString(), backups.toString());
            assertThat(r.exitCode()).as(r.toString()).isZero();
            Matcher out = BACKUP_OUT.matcher(r.out());
            assertThat(out.matches()).as(r.out()).isTrue();
            long tables;
            try (Stream<Path> shared = Files.list(backups.resolve("shared"))) {
                tables = shared.mapToLong(p -> p.toFile().length()).sum();
            }
            assertThat(tables).as("tables were copied into the backup").isPositive();
            String files = out.group(1);
            String total = Fmt.bytes(Long.parseLong(out.group(2)) + tables);
            assertCountsUpTo(
                    r.err(),
                    "backup",
                    "files",
                    files + " of " + files + " files, " + total + " of " + total + " (100%)");
            List<Double> bytes = r.err()
                    .lines()
                    .map(l -> l.replaceFirst("^backup: (done: )?[0-9,]+ of [0-9,]+ files, ", ""))
                    .map(ProgressCommandsTest::bytesOf)
                    .toList();
            assertThat(bytes).as(r.err()).isSorted();
            double copied = bytesOf(Fmt.bytes(tables));
            assertThat(r.err().lines().filter(l -> l.startsWith("backup: 0 of ")))
                    .as("the copy reported before any file was stored (the checksums count past it)")
                    .anyMatch(l -> bytesOf(l.replaceFirst("^backup: 0 of [0-9,]+ files, ", "")) <= copied);
        } finally {
            try (Stream<Path> all = Files.walk(backups)) {
                for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    /** The first figure of {@code counts} ({@code 1.5 KiB of ...}), in bytes. */
    private static double bytesOf(String counts) {
        Matcher m = Pattern.compile("([0-9.]+) (B|KiB|MiB|GiB)\\b.*").matcher(counts);
        assertThat(m.matches()).as(counts).isTrue();
        int shift = List.of("B", "KiB", "MiB", "GiB").indexOf(m.group(2)) * 10;
        return Double.parseDouble(m.group(1)) * (1L << shift);
    }

    // ------------------------------------------------------------------ stress

    /**
     * Stdout of a stress run: the banner, the verification at open, {@code stress: running} (what crashtest waits for),
     * the summary and the expected state's totals, and nothing else (no progress line).
     */
    private static void assertStressResultsOnly(Cli.Result r) {
        assertThat(r.exitCode()).as(r.toString()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines).as(r.toString()).hasSize(5);
        assertThat(lines.get(0)).startsWith("stress: seed ");
        assertThat(lines.get(1)).startsWith("stress: open: ");
        assertThat(lines.get(2)).isEqualTo("stress: running");
        assertThat(lines.get(3)).startsWith("stress: done: ").contains("wrong answers 0");
        assertThat(lines.get(4)).startsWith("stress: expected-state totals over every run: ");
    }

    private List<String> stress(String db, String... more) {
        List<String> args = new ArrayList<>(
                List.of("stress", tmp.resolve(db).toString(), "--ops=3000", "--threads=2", "--keys=600", "--seed=42"));
        args.addAll(List.of(more));
        return args;
    }

    @Test
    void stressPrintsOnlyItsResultsOnStdoutWithProgressOnOffAndOnATerminal() {
        for (Shown shown : List.of(new Shown(Mode.LINES), new Shown(Mode.TERMINAL))) {
            Cli.Result r = run(shown, stress("db-" + shown.mode).toArray(String[]::new));
            assertStressResultsOnly(r);
            assertThat(r.err()).as("progress was shown (on stderr)").contains("stress: ");
            if (shown.mode == Mode.TERMINAL) {
                assertThat(r.err()).contains("\rstress: ");
                assertThat(screen(r.err())).as("the line is erased at the end").isEmpty();
            }
        }
        Cli.Result real = Cli.run(stress("db-real").toArray(String[]::new));
        assertStressResultsOnly(real);
        assertThat(real.err().lines())
                .as("stderr not a terminal: progress lines only, on a run long enough")
                .allMatch(l -> l.startsWith("stress: "));
    }

    @Test
    void stressWithNoProgressPrintsNothingOnStderr() {
        for (Mode mode : Mode.values()) {
            Cli.Result r =
                    run(new Shown(mode), stress("db-" + mode, "--no-progress").toArray(String[]::new));
            assertStressResultsOnly(r);
            assertThat(r.err()).as(mode.toString()).isEmpty();
        }
    }

    /** The lines of {@code err} that begin with {@code prefix} ({@code keep}) or the others, each ending in \n. */
    private static String linesOf(String err, String prefix, boolean keep) {
        return err.lines()
                .filter(l -> l.startsWith(prefix) == keep)
                .map(l -> l + "\n")
                .collect(Collectors.joining());
    }

    /** The prefix of the progress lines of stress's check at open. */
    private static final String OPEN_CHECK = "stress: open check: ";

    /**
     * The plain lines count the operations up to those asked for, each with the acknowledged writes, wrong answers,
     * key-range deletions and memtable rewrites so far; the done line holds the run's final figures, those of its
     * summary on stdout. With {@code --ops 0} (a run limited by {@code --duration} only) there is no total. The check
     * at open (of a new database here) shows its lines first, under its own prefix.
     */
    @Test
    void stressProgressLinesCountTheOperations() {
        Cli.Result r = run(new Shown(Mode.LINES), stress("db").toArray(String[]::new));
        assertStressResultsOnly(r);
        String err = r.err();
        assertThat(linesOf(err, OPEN_CHECK, true))
                .as("a new database: the check at open reads its keys, none there, then the run begins")
                .isEqualTo(OPEN_CHECK + "0 of 600 keys (0%)\n" + OPEN_CHECK + "600 of 600 keys (100%)\n" + OPEN_CHECK
                        + "done: 600 of 600 keys (100%)\n");
        assertThat(err).as("the check's lines come first").startsWith(linesOf(err, OPEN_CHECK, true));
        r = new Cli.Result(r.exitCode(), r.out(), linesOf(err, OPEN_CHECK, false));
        Matcher summary = Pattern.compile(
                        "stress: done: 3000 ops in .*, key-range deletions ([0-9]+) \\(.*memtable rewrites ([0-9]+);"
                                + " acknowledged writes ([0-9]+); wrong answers 0\n")
                .matcher(r.out().lines().toList().get(3) + "\n");
        assertThat(summary.matches()).as(r.out()).isTrue();
        assertCountsUpTo(
                r.err(),
                "stress",
                "ops",
                "3,000 of 3,000 ops (100%), " + Fmt.count(Long.parseLong(summary.group(3)))
                        + " acknowledged writes, 0 wrong, " + Fmt.count(Long.parseLong(summary.group(1)))
                        + " key-range deletions, " + Fmt.count(Long.parseLong(summary.group(2)))
                        + " memtable rewrites");
        assertThat(r.err().lines().toList().get(0))
                .matches("stress: [0-9,]+ of 3,000 ops \\([0-9]+%\\), [0-9,]+ acknowledged writes, 0 wrong, [0-9,]+"
                        + " key-range deletions, [0-9,]+ memtable rewrites");

        Cli.Result timed = run(
                new Shown(Mode.LINES),
                "stress",
                tmp.resolve("timed").toString(),
                "--ops=0",
                "--duration=1",
                "--threads=2",
                "--keys=600",
                "--seed=43");
        assertStressResultsOnly(timed);
        List<String> lines = linesOf(timed.err(), OPEN_CHECK, false).lines().toList();
        assertThat(lines).as("a line at each reading of the test's clock").hasSizeGreaterThan(3);
        assertThat(lines.get(0)).matches("stress: [0-9,]+ ops, [0-9,]+ acknowledged writes, 0 wrong, .*");
        assertThat(lines.get(lines.size() - 1)).startsWith("stress: done: ").doesNotContain(" of ");
    }

    /**
     * The check of every key when stress opens an existing database shows its progress on stderr before the run's:
     * the keys checked of all the expected state's keys, from 0 to all of them and a done line (stderr not a
     * terminal); a line redrawn and erased on a terminal; nothing with {@code --no-progress}. Stdout keeps its result
     * lines alone, the check's ({@code stress: open: ... keys verified}) among them.
     */
    @Test
    void stressCheckAtOpenShowsTheKeysCheckedOnStderr() {
        for (Mode mode : Mode.values()) {
            String db = tmp.resolve("open-" + mode).toString();
            String[] first = {"stress", db, "--ops=3000", "--threads=2", "--keys=3000", "--seed=42", "--no-progress"};
            assertStressResultsOnly(run(new Shown(mode), first));

            Cli.Result r = run(new Shown(mode), "stress", db, "--ops=1000", "--threads=2", "--keys=3000", "--seed=43");
            assertStressResultsOnly(r);
            assertThat(r.out()).contains("stress: open: 3000 keys verified: lost 0, wrong 0");
            if (mode == Mode.TERMINAL) {
                assertThat(r.err()).contains("\r" + OPEN_CHECK + "0 of 3,000 keys (0%)");
                assertThat(r.err()).contains("\r" + OPEN_CHECK + "3,000 of 3,000 keys (100%)");
                assertThat(screen(r.err()))
                        .as("the lines are erased at the end")
                        .isEmpty();
            } else {
                String check = linesOf(r.err(), OPEN_CHECK, true);
                assertThat(r.err())
                        .as("the check's lines come first, then the run's")
                        .startsWith(check);
                assertThat(check.lines())
                        .as("a report before the first key, every 1024 keys and after the last, then the done line")
                        .containsExactly(
                                OPEN_CHECK + "0 of 3,000 keys (0%)",
                                OPEN_CHECK + "1,024 of 3,000 keys (34%)",
                                OPEN_CHECK + "2,048 of 3,000 keys (68%)",
                                OPEN_CHECK + "3,000 of 3,000 keys (100%)",
                                OPEN_CHECK + "done: 3,000 of 3,000 keys (100%)");
            }

            Cli.Result quiet = run(
                    new Shown(mode),
                    "stress",
                    db,
                    "--ops=1000",
                    "--threads=2",
                    "--keys=3000",
                    "--seed=44",
                    "--no-progress");
            assertStressResultsOnly(quiet);
            assertThat(quiet.out()).contains("stress: open: 3000 keys verified: lost 0, wrong 0");
            assertThat(quiet.err()).as("--no-progress: nothing on stderr").isEmpty();
        }
    }

    @Test
    void theTerminalScreenOfARedrawnLineIsItsLastState() {
        assertThat(screen("\rput: 10 lines\rput: 2 lines  \r             \rbloomkv put: bad\n"))
                .containsExactly("bloomkv put: bad");
        assertThat(screen("\rput: 10 lines")).containsExactly("put: 10 lines");
    }
}
