package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Friction a new user met walking through README.md, docs/cli.md and docs/operations.md: each test is one step of that
 * walk that went wrong (a documented example that failed, an error message in API terms, a refused command that still
 * changed a directory, an exit code that differed from the other commands').
 */
class WalkthroughFixesTest {
    @TempDir
    Path tmp;

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private Path fruitTable() throws IOException {
        Path tsv = Files.writeString(tmp.resolve("fruit.tsv"), "apple\tgreen\nbanana\tyellow\n");
        Path sst = tmp.resolve("fruit.sst");
        Cli.Result w = Cli.run("sst", "write", sst.toString(), "--input", tsv.toString());
        assertThat(w.exitCode()).as(w.toString()).isZero();
        return sst;
    }

    /**
     * cli.md's bulk-load example ingests into a database that does not exist yet: {@code ingest} takes {@code
     * --create} as {@code put} does, and without it the refusal names the option.
     */
    @Test
    void ingestCreatesAMissingDatabaseWithCreate() throws IOException {
        Path sst = fruitTable();
        String db = tmp.resolve("db").toString();
        Cli.Result missing = Cli.run("ingest", db, sst.toString());
        assertThat(missing.exitCode()).as(missing.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(missing.err()).contains("no such database directory").contains("give --create");

        Cli.Result created = Cli.run("ingest", db, sst.toString(), "--move", "--create");
        assertThat(created.exitCode()).as(created.toString()).isZero();
        assertThat(created.out()).isEqualTo("ingested 1 file into " + db + "\n");
        assertThat(Cli.run("get", db, "banana").out()).isEqualTo("yellow\n");
    }

    /**
     * {@code put} into an empty directory without {@code --create} said "createIfMissing is false" (the API's name)
     * and left a LOCK file, so the directory was no longer empty (a checkpoint or restore target then refused it).
     */
    @Test
    void writeToAnEmptyDirectoryWithoutCreateNamesTheOptionAndLeavesItEmpty() throws IOException {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        for (String command : List.of("put", "delete")) {
            Cli.Result r = command.equals("put")
                    ? Cli.run("put", empty.toString(), "k", "v")
                    : Cli.run("delete", empty.toString(), "k");
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.IO_ERROR);
            assertThat(r.err())
                    .isEqualTo("bloomkv " + command + ": " + empty
                            + " is not a bloomkv database: the directory is empty (give --create to create one)\n");
            assertThat(names(empty)).as("left in the directory by " + command).isEmpty();
        }
        assertThat(Cli.run("put", tmp.resolve("missing").toString(), "k", "v").err())
                .contains("no such database directory")
                .contains("(give --create to create it)");
    }

    /** A directory given to {@code ingest} as a table file was reported as "no such file". */
    @Test
    void ingestOfADirectorySaysItIsADirectory() throws IOException {
        String db = tmp.resolve("db").toString();
        assertThat(Cli.run("put", db, "--create", "k", "v").exitCode()).isZero();
        Path dir = Files.createDirectories(tmp.resolve("tables"));
        Cli.Result r = Cli.run("ingest", db, dir.toString());
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(r.err()).isEqualTo("bloomkv ingest: " + dir + " is a directory, not a table file\n");
    }

    /**
     * A checkpoint into a file was exit code 2 (every other command says "not a directory", exit code 3), and a
     * checkpoint or backup refused for its target had first opened the source, writing its WAL to a table.
     */
    @Test
    void checkpointAndBackupTargetsAreCheckedBeforeTheSourceIsOpened() throws IOException {
        Path db = tmp.resolve("db");
        assertThat(Cli.run("put", db.toString(), "--create", "--no-sync", "k", "v")
                        .exitCode())
                .isZero();
        List<String> before = names(db);
        assertThat(before).as("the put leaves its WAL").anyMatch(n -> n.endsWith(".log"));
        Path file = Files.writeString(tmp.resolve("afile"), "x");

        Cli.Result toFile = Cli.run("checkpoint", db.toString(), file.toString());
        assertThat(toFile.exitCode()).as(toFile.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(toFile.err()).isEqualTo("bloomkv checkpoint: not a directory: " + file + "\n");

        Path full = Files.createDirectories(tmp.resolve("full"));
        Files.writeString(full.resolve("x"), "x");
        Cli.Result toFull = Cli.run("checkpoint", db.toString(), full.toString());
        assertThat(toFull.exitCode()).as(toFull.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(toFull.err()).contains("is not empty").doesNotContain("checkpoint: checkpoint:");

        Cli.Result backupToFile = Cli.run("backup", "create", db.toString(), file.toString());
        assertThat(backupToFile.exitCode()).as(backupToFile.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(backupToFile.err()).isEqualTo("bloomkv backup create: not a directory: " + file + "\n");

        assertThat(names(db)).as("the source after the refusals").isEqualTo(before);
    }

    /** {@code stress FILE} created {@code FILE.expected} inside the database directory before refusing the file. */
    @Test
    void stressAndCrashtestRefuseAFileBeforeWritingBesideIt() throws IOException {
        Path file = Files.writeString(tmp.resolve("notadir"), "x");
        Cli.Result r = Cli.run("stress", file.toString(), "--ops=10", "--threads=1", "--keys=10");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(r.err()).isEqualTo("bloomkv stress: not a directory: " + file + "\n");
        assertThat(Files.exists(tmp.resolve("notadir.expected"))).isFalse();

        Cli.Result c = Cli.run("crashtest", file.toString(), "--rounds=1", "--threads=1", "--keys=10");
        assertThat(c.exitCode()).as(c.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(c.err()).isEqualTo("bloomkv crashtest: not a directory: " + file + "\n");
        assertThat(c.out()).as("no round ran").isEmpty();
    }

    /**
     * An ldb user's {@code bloomkv get --db=DIR KEY} was answered "Missing required parameter: 'KEY'" (picocli checks
     * the parameters before it reports an unknown option): the unknown option is named, with the positional form.
     */
    @Test
    void ldbStyleDbOptionIsNamed() {
        Cli.Result r = Cli.run("get", "--db=/data/db", "k");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err())
                .isEqualTo("bloomkv get: Unknown option: '--db=/data/db'; DB_DIR is the first argument, not an"
                        + " option as ldb's --db: 'bloomkv get DB_DIR ...' (see 'bloomkv get --help')\n");

        Cli.Result other = Cli.run("scan", "--max-keys=3");
        assertThat(other.err()).isEqualTo("bloomkv scan: Unknown option: '--max-keys=3' (see 'bloomkv scan --help')\n");

        Cli.Result missing = Cli.run("get", "db");
        assertThat(missing.err())
                .as("a parameter really missing")
                .isEqualTo("bloomkv get: Missing required parameter: 'KEY' (see 'bloomkv get --help')\n");
    }

    /** After "--" every argument is positional: one that starts with "--" is not an unknown option. */
    @Test
    void argumentsAfterEndOfOptionsAreNotUnknownOptions() {
        Cli.Result r = Cli.run("get", "--", "--odd-dir");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).isEqualTo("bloomkv get: Missing required parameter: 'KEY' (see 'bloomkv get --help')\n");
    }

    /**
     * {@code sst verify DB_DIR} checks WALs and MANIFESTs, but {@code sst verify} of one healthy WAL or MANIFEST read it
     * as a table: "BAD ... too short to be a table", exit code 4; {@code sst dump} of one said "corruption", exit 4.
     */
    @Test
    void walAndManifestGivenAloneAreNotReportedCorrupt() throws IOException {
        Path db = tmp.resolve("db");
        assertThat(Cli.run("put", db.toString(), "--create", "--no-sync", "k", "v")
                        .exitCode())
                .isZero();
        Path wal = null;
        Path manifest = null;
        for (String n : names(db)) {
            if (n.endsWith(".log")) {
                wal = db.resolve(n);
            } else if (n.startsWith("MANIFEST-")) {
                manifest = db.resolve(n);
            }
        }
        assertThat(wal).isNotNull();
        assertThat(manifest).isNotNull();

        Cli.Result verifyWal = Cli.run("sst", "verify", wal.toString());
        assertThat(verifyWal.exitCode()).as(verifyWal.toString()).isZero();
        assertThat(verifyWal.out())
                .startsWith("OK   " + wal + ": WAL, 1 record")
                .contains("all checksums good");
        Cli.Result verifyManifest = Cli.run("sst", "verify", manifest.toString());
        assertThat(verifyManifest.exitCode()).as(verifyManifest.toString()).isZero();
        assertThat(verifyManifest.out()).startsWith("OK   " + manifest + ": MANIFEST, ");

        Cli.Result dumpWal = Cli.run("sst", "dump", wal.toString());
        assertThat(dumpWal.exitCode()).as(dumpWal.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(dumpWal.err())
                .isEqualTo("bloomkv sst dump: " + wal + " is a WAL file, not a table file ('bloomkv sst verify " + wal
                        + "' checks its records)\n");
        Cli.Result dumpManifest = Cli.run("sst", "dump", manifest.toString());
        assertThat(dumpManifest.exitCode()).as(dumpManifest.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(dumpManifest.err()).contains("is a MANIFEST file, not a table file");
    }

    /**
     * {@code java -jar tools/cli/target/bloomkv.jar bench ...} (the CLI jar holds no bench) said "Unmatched arguments
     * from index 0: 'bench', ..." and its help listed no bench: the command is listed and names the launcher.
     */
    @Test
    void benchOutsideTheBenchJarNamesTheLauncher() {
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        picocli.CommandLine cl = BloomKvCli.newCommandLine(picocli.CommandLine.defaultFactory(), null);
        cl.setOut(new java.io.PrintWriter(out, true));
        cl.setErr(new java.io.PrintWriter(err, true));
        int code = cl.execute("bench", "--num", "1000", "--help");
        assertThat(code).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString())
                .isEqualTo("bloomkv bench: the bench harness is not in this jar: run 'tools/bloomkv bench ...' (it runs"
                        + " bench/target/bloomkv-bench.jar, built by mvn package) or 'java -jar"
                        + " bench/target/bloomkv-bench.jar ...'\n");
        assertThat(out.toString()).isEmpty();

        java.io.StringWriter help = new java.io.StringWriter();
        cl.setOut(new java.io.PrintWriter(help, true));
        assertThat(cl.execute("--help")).isZero();
        assertThat(help.toString()).contains("bench ").contains("tools/bloomkv bench");
    }

    /**
     * A damaged backup file (its whole-file checksum fails) was reported with "offset -1": an offset the engine does
     * not know is left out of the message.
     */
    @Test
    void damagedBackupFileIsNamedWithoutAnUnknownOffset() throws IOException {
        Path db = tmp.resolve("db");
        assertThat(Cli.run("put", db.toString(), "--create", "--flush", "k", "v")
                        .exitCode())
                .isZero();
        Path backups = tmp.resolve("backups");
        assertThat(Cli.run("backup", "create", db.toString(), backups.toString())
                        .exitCode())
                .isZero();
        Path shared;
        try (Stream<Path> s = Files.list(backups.resolve("shared"))) {
            shared = s.filter(p -> p.toString().endsWith(".sst")).findFirst().orElseThrow();
        }
        byte[] bytes = Files.readAllBytes(shared);
        bytes[10] ^= 1;
        Files.write(shared, bytes);
        Cli.Result r = Cli.run("backup", "verify", backups.toString());
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(r.err())
                .startsWith("bloomkv backup verify: corruption: backup 1: checksum ")
                .endsWith("(file " + shared.toAbsolutePath() + ")\n")
                .doesNotContain("offset");
    }

    /**
     * {@code stress} on an application's database (one it did not write) answered "wrong 2 ... foreign key", exit code
     * 1, as if the engine had lost data, and left {@code DB_DIR.expected} beside it: it is refused as a usage error.
     */
    @Test
    void stressAndCrashtestRefuseADatabaseTheyDidNotWrite() throws IOException {
        Path app = tmp.resolve("app");
        assertThat(Cli.run("put", app.toString(), "--create", "--flush", "fruit", "apple")
                        .exitCode())
                .isZero();
        List<String> before = names(app);
        for (String command : List.of("stress", "crashtest")) {
            Cli.Result r = command.equals("stress")
                    ? Cli.run("stress", app.toString(), "--ops=10", "--threads=1", "--keys=10")
                    : Cli.run("crashtest", app.toString(), "--rounds=1", "--threads=1", "--keys=10");
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err())
                    .isEqualTo("bloomkv " + command + ": " + app + " holds a database but there is no expected-state"
                            + " file " + tmp.resolve("app.expected") + ": stress runs on a database of its own; give"
                            + " a new directory (or --expected the file of the runs that wrote this one)\n");
            assertThat(Files.exists(tmp.resolve("app.expected"))).as(command).isFalse();
            assertThat(r.out())
                    .as(command + ": no banner for a run refused before it starts")
                    .isEmpty();
        }
        assertThat(names(app)).isEqualTo(before);
        assertThat(Cli.run("scan", app.toString()).out()).isEqualTo("fruit\tapple\n");
    }

    /** {@code bloom calc --keys N} without a sizing said "bloomkv bloom calc: Error: Missing required argument ...". */
    @Test
    void missingArgumentGroupIsOneLineWithoutAnErrorPrefix() {
        Cli.Result r = Cli.run("bloom", "calc", "--keys", "1000");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err())
                .isEqualTo("bloomkv bloom calc: Missing required argument (specify one of these):"
                        + " (--fpp=P | --bits-per-key=B) (see 'bloomkv bloom calc --help')\n");
    }

    /**
     * {@code backup create BACKUP_DIR DB_DIR}, the arguments swapped, said "... is not a bloomkv database: no CURRENT
     * file, but it holds [meta, private, shared, tmp]": the backup directory is named as one, with the order.
     */
    @Test
    void backupCreateWithSwappedArgumentsSaysSo() throws IOException {
        Path db = tmp.resolve("db");
        Path backups = tmp.resolve("backups");
        assertThat(Cli.run("put", db.toString(), "--create", "--flush", "k", "v")
                        .exitCode())
                .isZero();
        assertThat(Cli.run("backup", "create", db.toString(), backups.toString())
                        .exitCode())
                .isZero();
        List<String> dbBefore = names(db);
        Cli.Result r = Cli.run("backup", "create", backups.toString(), db.toString());
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(r.err())
                .isEqualTo("bloomkv backup create: " + backups + " is a backup directory, not a database (the order"
                        + " is: backup create DB_DIR BACKUP_DIR)\n");
        assertThat(names(db)).isEqualTo(dbBefore);
    }
}
