package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bloomkv get|put|delete|scan}, and their errors. */
class DbCommandsTest {
    @TempDir
    Path tmp;

    private String db() {
        return tmp.resolve("db").toString();
    }

    /** A database in {@code dir} opened with {@code MergeOperators.stringAppend(',')}. */
    private static io.bloomkv.engine.Db stringAppendDb(Path dir) {
        return io.bloomkv.engine.Db.open(
                dir,
                io.bloomkv.engine.Options.defaults().mergeOperator(io.bloomkv.engine.MergeOperators.stringAppend(',')));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void aDatabaseWithMergeOperandsIsReadWithMergeOperator() {
        try (io.bloomkv.engine.Db d = stringAppendDb(Path.of(db()))) {
            d.merge(utf8("list"), utf8("a"));
            d.merge(utf8("list"), utf8("b"));
            d.deleteRange(utf8("m"), utf8("n"));
            d.put(utf8("m1"), utf8("x"));
            d.put(utf8("m0"), utf8("y"));
            d.deleteRange(utf8("m0"), utf8("m1"));
        }
        Cli.Result refused = Cli.run("get", db(), "list");
        assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(refused.err()).contains("merge operands", "--merge-operator");
        Cli.Result get = Cli.run("get", db(), "list", "--merge-operator=stringappend");
        assertThat(get.exitCode()).as(get.toString()).isZero();
        assertThat(get.out()).isEqualTo("a,b\n");
        Cli.Result scan = Cli.run("scan", db(), "--merge-operator=stringappend:,");
        assertThat(scan.exitCode()).as(scan.toString()).isZero();
        assertThat(scan.out()).contains("list").contains("m1").doesNotContain("m0");
        assertThat(Cli.run("get", db(), "list", "--merge-operator=nope").exitCode())
                .isEqualTo(ExitCodes.USAGE);
    }

    /** A command that reads a file it is given reports a missing one as exit code 3, before opening anything. */
    @Test
    void ingestOfAMissingFileIsExitCodeThree() {
        assertThat(Cli.run("put", db(), "--create", "k", "v").exitCode()).isZero();
        Cli.Result r = Cli.run("ingest", db(), tmp.resolve("nope.sst").toString());
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(r.err()).contains("no such file").contains("nope.sst");
    }

    /** Backup commands given a directory that is not a backup directory refuse it and create nothing in it. */
    @Test
    void backupCommandsLeaveADirectoryThatIsNotABackupAlone() throws java.io.IOException {
        Path empty = tmp.resolve("empty");
        java.nio.file.Files.createDirectories(empty);
        for (String[] args : new String[][] {
            {"backup", "list", empty.toString()},
            {"backup", "verify", empty.toString()},
            {"backup", "purge", empty.toString(), "--keep", "1"},
            {"backup", "gc", empty.toString()}
        }) {
            Cli.Result r = Cli.run(args);
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.IO_ERROR);
            assertThat(r.err()).contains("not a backup directory");
        }
        try (java.util.stream.Stream<Path> s = java.nio.file.Files.list(empty)) {
            assertThat(s).as("nothing created").isEmpty();
        }
    }

    /** {@code args} fail with exit code 2 and an error containing {@code errorParts}; with {@code option} added they run. */
    private static void refusedThenRunsWith(String[] args, String option, String... errorParts) {
        Cli.Result refused = Cli.run(args);
        assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(refused.err()).as(refused.toString()).contains(errorParts);
        String[] with = java.util.Arrays.copyOf(args, args.length + 1);
        with[args.length] = option;
        Cli.Result ok = Cli.run(with);
        assertThat(ok.exitCode()).as(ok.toString()).isZero();
    }

    /**
     * backup create, checkpoint and ingest open the database as get does: a database holding merge operands, or one
     * created with a TTL, is refused with the option to give named in the error, and opens with it.
     */
    @Test
    void backupCheckpointAndIngestTakeTheMergeOperatorAndTheTtl() throws Exception {
        Path merged = tmp.resolve("merged");
        try (io.bloomkv.engine.Db d = stringAppendDb(merged)) {
            d.merge(utf8("list"), utf8("a"));
            d.merge(utf8("list"), utf8("b"));
        }
        Path tsv = tmp.resolve("in.tsv");
        java.nio.file.Files.writeString(tsv, "zebra\tstriped\n");
        Path sst = tmp.resolve("z.sst");
        assertThat(Cli.run("sst", "write", sst.toString(), "--input", tsv.toString())
                        .exitCode())
                .isZero();
        String m = merged.toString();
        String backups = tmp.resolve("backups").toString();
        String checkpoint = tmp.resolve("checkpoint").toString();
        for (String[] args : new String[][] {
            {"backup", "create", m, backups}, {"checkpoint", m, checkpoint}, {"ingest", m, sst.toString()}
        }) {
            refusedThenRunsWith(args, "--merge-operator=stringappend", "merge operands", "--merge-operator");
        }
        assertThat(Cli.run("backup", "list", backups).out()).contains("1");
        assertThat(Cli.run("get", checkpoint, "list", "--merge-operator=stringappend")
                        .out())
                .isEqualTo("a,b\n");
        assertThat(Cli.run("get", m, "zebra", "--merge-operator=stringappend").out())
                .isEqualTo("striped\n");

        assertThat(Cli.run("put", db(), "--create", "--ttl=86400", "session", "alice")
                        .exitCode())
                .isZero();
        String ttlBackups = tmp.resolve("ttl-backups").toString();
        String ttlCheckpoint = tmp.resolve("ttl-checkpoint").toString();
        for (String[] args :
                new String[][] {{"backup", "create", db(), ttlBackups}, {"checkpoint", db(), ttlCheckpoint}}) {
            refusedThenRunsWith(args, "--ttl=86400", "created with a TTL", "--ttl");
        }
        assertThat(Cli.run("get", ttlCheckpoint, "session", "--ttl=86400").out())
                .isEqualTo("alice\n");
        Cli.Result ingest = Cli.run("ingest", db(), sst.toString(), "--ttl=86400");
        assertThat(ingest.exitCode()).as(ingest.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(ingest.err()).as(ingest.toString()).contains("TTL database");
        Cli.Result restored = Cli.run(
                "backup",
                "restore",
                ttlBackups,
                "1",
                tmp.resolve("ttl-restored").toString());
        assertThat(restored.exitCode()).as(restored.toString()).isZero();
        assertThat(Cli.run("get", tmp.resolve("ttl-restored").toString(), "session", "--ttl=86400")
                        .out())
                .isEqualTo("alice\n");
    }

    @Test
    void aTtlDatabaseIsReadAndWrittenWithTtl() {
        Cli.Result put = Cli.run("put", db(), "--create", "--ttl=86400", "session", "alice");
        assertThat(put.exitCode()).as(put.toString()).isZero();
        Cli.Result refused = Cli.run("get", db(), "session");
        assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(refused.err()).contains("created with a TTL", "--ttl");
        Cli.Result get = Cli.run("get", db(), "session", "--ttl=86400");
        assertThat(get.exitCode()).as(get.toString()).isZero();
        assertThat(get.out()).isEqualTo("alice\n"); // the user's bytes, without the write time
        Cli.Result scan = Cli.run("scan", db(), "--ttl=3600");
        assertThat(scan.exitCode()).as(scan.toString()).isZero();
        assertThat(scan.out()).contains("session").contains("alice");
        assertThat(Cli.run("get", db(), "session", "--ttl=0").exitCode()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void putGetDeleteRoundTrip() {
        Cli.Result put = Cli.run("put", db(), "--create", "apple", "red");
        assertThat(put.exitCode()).as(put.toString()).isZero();
        assertThat(put.err()).isEmpty();

        Cli.Result get = Cli.run("get", db(), "apple");
        assertThat(get.exitCode()).as(get.toString()).isZero();
        assertThat(get.out()).isEqualTo("red\n");

        Cli.Result overwrite = Cli.run("put", db(), "apple", "green");
        assertThat(overwrite.exitCode()).isZero();
        assertThat(Cli.run("get", db(), "apple").out()).isEqualTo("green\n");

        Cli.Result del = Cli.run("delete", db(), "apple");
        assertThat(del.exitCode()).as(del.toString()).isZero();
        Cli.Result gone = Cli.run("get", db(), "apple");
        assertThat(gone.exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(gone.out()).isEmpty();
        assertThat(gone.err()).isEqualTo("bloomkv get: key not found: apple\n");
    }

    @Test
    void flushWritesATable() throws IOException {
        assertThat(Cli.run("put", db(), "--create", "--flush", "k", "v").exitCode())
                .isZero();
        try (Stream<Path> files = Files.list(Path.of(db()))) {
            assertThat(files.map(p -> p.getFileName().toString())).anyMatch(n -> n.endsWith(".sst"));
        }
        assertThat(Cli.run("get", db(), "k").out()).isEqualTo("v\n");
    }

    @Test
    void hexInputAndOutput() {
        assertThat(Cli.run("put", db(), "--create", "--hex", "00ff", "0x0102").exitCode())
                .isZero();
        assertThat(Cli.run("get", db(), "--hex", "00FF").out()).isEqualTo("0102\n");
        // Without --value-hex the binary value is shown escaped.
        assertThat(Cli.run("get", db(), "--key-hex", "00ff").out()).isEqualTo("\\x01\\x02\n");
        assertThat(Cli.run("scan", db(), "--hex").out()).isEqualTo("00ff\t0102\n");
        assertThat(Cli.run("scan", db()).out()).isEqualTo("\\x00\\xff\t\\x01\\x02\n");
        assertThat(Cli.run("put", db(), "--value-hex", "text-key", "cafe").exitCode())
                .isZero();
        assertThat(Cli.run("get", db(), "--value-hex", "text-key").out()).isEqualTo("cafe\n");
    }

    /** delete has a key and no value: --hex and --key-hex make the key hex, --value-hex (which did nothing) is refused. */
    @Test
    void deleteTakesHexKeysAndRefusesValueHex() {
        assertThat(Cli.run("put", db(), "--create", "--hex", "00ff", "01").exitCode())
                .isZero();
        assertThat(Cli.run("put", db(), "--key-hex", "00fe", "02").exitCode()).isZero();
        Cli.Result valueHex = Cli.run("delete", db(), "--value-hex", "00ff");
        assertThat(valueHex.exitCode()).as(valueHex.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(valueHex.err()).startsWith("bloomkv delete: Unknown option: '--value-hex'");
        assertThat(valueHex.err().lines()).hasSize(1);
        assertThat(Cli.run("get", db(), "--hex", "00ff").out())
                .as("not deleted")
                .isEqualTo("01\n");

        assertThat(Cli.run("delete", db(), "--hex", "00FF").exitCode()).isZero();
        assertThat(Cli.run("delete", db(), "--key-hex", "0x00fe").exitCode()).isZero();
        assertThat(Cli.run("scan", db()).out()).isEmpty();
    }

    @Test
    void badHexIsAUsageError() {
        assertThat(Cli.run("put", db(), "--create", "k", "v").exitCode()).isZero();
        Cli.Result r = Cli.run("get", db(), "--hex", "xyz");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err())
                .isEqualTo("bloomkv get: KEY: hex input must have an even number of digits: 'xyz'"
                        + " (see 'bloomkv get --help')\n");
    }

    @Test
    void emptyKeyIsRejectedByTheEngine() {
        assertThat(Cli.run("put", db(), "--create", "k", "v").exitCode()).isZero();
        Cli.Result r = Cli.run("put", db(), "", "v");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).startsWith("bloomkv put: invalid argument: ");
        assertThat(r.err().lines()).hasSize(1);
    }

    @Test
    void scanWithRangeAndLimit() throws IOException {
        Path input = tmp.resolve("pairs.tsv");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            lines.add(String.format("key%04d\tvalue %d", i, i));
        }
        Files.write(input, lines, StandardCharsets.UTF_8);
        Cli.Result load = Cli.run("put", db(), "--create", "--input", input.toString(), "--batch-size", "64");
        assertThat(load.exitCode()).as(load.toString()).isZero();
        assertThat(load.out()).isEqualTo("put 500 pairs\n");

        Cli.Result all = Cli.run("scan", db());
        assertThat(all.exitCode()).isZero();
        assertThat(all.out().lines())
                .hasSize(500)
                .startsWith("key0000\tvalue 0")
                .endsWith("key0499\tvalue 499");

        Cli.Result range = Cli.run("scan", db(), "--from", "key0100", "--to", "key0103");
        assertThat(range.out().lines())
                .containsExactly("key0100\tvalue 100", "key0101\tvalue 101", "key0102\tvalue 102");

        Cli.Result limited = Cli.run("scan", db(), "--from", "key0250x", "--limit", "2", "--keys-only");
        assertThat(limited.out().lines()).containsExactly("key0251", "key0252");

        assertThat(Cli.run("delete", db(), "key0101").exitCode()).isZero();
        assertThat(Cli.run("scan", db(), "--from", "key0100", "--to", "key0103", "--keys-only")
                        .out()
                        .lines())
                .containsExactly("key0100", "key0102");

        // An empty --from starts at the first key and an empty --to ends before it, as RocksDB's Seek("") and an
        // empty upper bound: no key is below the empty key.
        Cli.Result emptyFrom = Cli.run("scan", db(), "--from", "", "--limit", "2", "--keys-only");
        assertThat(emptyFrom.exitCode()).as(emptyFrom.toString()).isZero();
        assertThat(emptyFrom.out().lines()).containsExactly("key0000", "key0001");
        Cli.Result emptyTo = Cli.run("scan", db(), "--to", "");
        assertThat(emptyTo.exitCode()).as(emptyTo.toString()).isZero();
        assertThat(emptyTo.out()).isEmpty();

        Cli.Result none = Cli.run("scan", db(), "--limit", "0");
        assertThat(none.exitCode()).isZero();
        assertThat(none.out()).isEmpty();
        assertThat(Cli.run("scan", db(), "--limit", "-1").exitCode()).isEqualTo(ExitCodes.USAGE);
    }

    /**
     * A key longer than Db.MAX_KEY_SIZE is read as RocksDB reads it: {@code scan --from} of one starts at the first key
     * above its first MAX_KEY_SIZE bytes, {@code scan --to} ends at or below them, and {@code get} finds nothing (exit
     * code 1); {@code put} and {@code delete} of one stay refused.
     */
    @Test
    void longKeysReadAsInRocksDb() {
        for (String k : List.of("key1", "key2", "key3")) {
            assertThat(Cli.run("put", db(), "--create", k, "v").exitCode()).isZero();
        }
        String longKey2 = "key2" + "x".repeat(Db.MAX_KEY_SIZE);
        Cli.Result from = Cli.run("scan", db(), "--from", longKey2, "--keys-only");
        assertThat(from.exitCode()).as(from.toString()).isZero();
        assertThat(from.out().lines()).containsExactly("key3");
        Cli.Result to = Cli.run("scan", db(), "--to", longKey2, "--keys-only");
        assertThat(to.exitCode()).as(to.toString()).isZero();
        assertThat(to.out().lines()).containsExactly("key1", "key2");
        Cli.Result get = Cli.run("get", db(), longKey2);
        assertThat(get.exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(get.err()).startsWith("bloomkv get: key not found: key2xxx");
        Cli.Result put = Cli.run("put", db(), longKey2, "v");
        assertThat(put.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(put.err()).startsWith("bloomkv put: invalid argument: ");
        Cli.Result delete = Cli.run("delete", db(), longKey2);
        assertThat(delete.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(delete.err()).startsWith("bloomkv delete: invalid argument: ");
    }

    /** {@code --keys-only} prints no value, so {@code --value-hex} would do nothing: refused, as a usage error. */
    @Test
    void scanRefusesValueHexWithKeysOnly() {
        assertThat(Cli.run("put", db(), "--create", "k", "v").exitCode()).isZero();
        Cli.Result r = Cli.run("scan", db(), "--keys-only", "--value-hex");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.out()).isEmpty();
        assertThat(r.err())
                .isEqualTo("bloomkv scan: --value-hex applies to values, which --keys-only leaves out"
                        + " (see 'bloomkv scan --help')\n");
        // --hex also formats the keys, so it still goes with --keys-only.
        Cli.Result hex = Cli.run("scan", db(), "--keys-only", "--hex");
        assertThat(hex.exitCode()).as(hex.toString()).isZero();
        assertThat(hex.out()).isEqualTo("6b\n");
    }

    @Test
    void putReadsPairsFromStdin() {
        InputStream saved = System.in;
        try {
            System.setIn(new ByteArrayInputStream("b\t2\na\t1\n\nc\tthree\tparts\n".getBytes(StandardCharsets.UTF_8)));
            Cli.Result r = Cli.run("put", db(), "--create", "--input", "-");
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.out()).isEqualTo("put 3 pairs\n");
        } finally {
            System.setIn(saved);
        }
        // Only the first tab separates: the value keeps the others.
        assertThat(Cli.run("scan", db()).out()).isEqualTo("a\t1\nb\t2\nc\tthree\\x09parts\n");
    }

    @Test
    void malformedInputLineNamesTheLine() throws IOException {
        Path input = tmp.resolve("bad.tsv");
        Files.writeString(input, "a\t1\nno-tab-here\n");
        Cli.Result r = Cli.run("put", db(), "--create", "--input", input.toString());
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).isEqualTo("bloomkv put: " + input + ":2: expected KEY<TAB>VALUE, found no tab\n");
    }

    /** Without KEY VALUE and without --input, put reads the lines from stdin, as sst write does. */
    @Test
    void putWithoutAPairReadsStdinAsSstWriteDoes() {
        InputStream saved = System.in;
        try {
            System.setIn(new ByteArrayInputStream("b\t2\na\t1\n".getBytes(StandardCharsets.UTF_8)));
            Cli.Result r = Cli.run("put", db(), "--create");
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.out()).isEqualTo("put 2 pairs\n");
            System.setIn(new ByteArrayInputStream("a\t1\n".getBytes(StandardCharsets.UTF_8)));
            assertThat(Cli.run("put", db()).out())
                    .as("one pair, in the singular")
                    .isEqualTo("put 1 pair\n");
            System.setIn(new ByteArrayInputStream("c\n".getBytes(StandardCharsets.UTF_8)));
            Cli.Result bad = Cli.run("put", db());
            assertThat(bad.exitCode()).as(bad.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(bad.err()).isEqualTo("bloomkv put: -:1: expected KEY<TAB>VALUE, found no tab\n");
        } finally {
            System.setIn(saved);
        }
        assertThat(Cli.run("scan", db()).out()).isEqualTo("a\t1\nb\t2\n");
    }

    @Test
    void putNeedsAPairOrAnInput() {
        assertThat(Cli.run("put", db(), "--create", "k").err()).contains("missing VALUE after KEY");
        Cli.Result both = Cli.run("put", db(), "--create", "k", "v", "--input", "x");
        assertThat(both.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(both.err()).contains("not both");
        // --batch-size sizes the batches of a load; with one pair it would do nothing, so it is refused.
        Cli.Result batch = Cli.run("put", db(), "--create", "k", "v", "--batch-size", "10");
        assertThat(batch.exitCode()).as(batch.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(batch.err()).contains("--batch-size applies to loading lines");
        assertThat(Path.of(db())).doesNotExist();
    }

    @Test
    void missingDirectoryIsOneLineAndExitThree() {
        for (String cmd : new String[] {"get", "delete"}) {
            Cli.Result r = Cli.run(cmd, db(), "k");
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.IO_ERROR);
            // A writing command names its option to create the database.
            String hint = cmd.equals("delete") ? " (give --create to create it)" : "";
            assertThat(r.err()).isEqualTo("bloomkv " + cmd + ": no such database directory: " + db() + hint + "\n");
        }
        assertThat(Cli.run("scan", db()).err()).isEqualTo("bloomkv scan: no such database directory: " + db() + "\n");
        assertThat(Cli.run("put", db(), "k", "v").exitCode()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(Files.exists(Path.of(db())))
                .as("put without --create creates nothing")
                .isFalse();
    }

    @Test
    void regularFileOrForeignDirectoryIsNotADatabase() throws IOException {
        Path file = Files.writeString(tmp.resolve("file.txt"), "hello");
        Cli.Result r = Cli.run("get", file.toString(), "k");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(r.err()).isEqualTo("bloomkv get: not a directory: " + file + "\n");

        Path foreign = Files.createDirectories(tmp.resolve("photos"));
        Files.writeString(foreign.resolve("cat.jpg"), "meow");
        Cli.Result f = Cli.run("scan", foreign.toString());
        assertThat(f.exitCode()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(f.err())
                .startsWith("bloomkv scan: ")
                .contains("is not a bloomkv database")
                .contains("cat.jpg");
        assertThat(f.err().lines()).hasSize(1);
    }

    @Test
    void writesToALockedDatabaseAreExitFiveWhileReadsGoOnReadOnly() {
        assertThat(Cli.run("put", db(), "--create", "k", "v").exitCode()).isZero();
        try (Db held = Db.open(Path.of(db()), Options.defaults())) {
            for (String[] args : new String[][] {{"put", db(), "k", "w"}, {"delete", db(), "k"}}) {
                Cli.Result r = Cli.run(args);
                assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.LOCKED);
                assertThat(r.err())
                        .startsWith("bloomkv " + args[0] + ": database ")
                        .contains("already open");
                assertThat(r.err().lines()).hasSize(1);
            }
            // get and scan open read-only: no LOCK, so they read a database another process holds.
            held.put("k2".getBytes(StandardCharsets.UTF_8), "v2".getBytes(StandardCharsets.UTF_8));
            Cli.Result get = Cli.run("get", db(), "k2");
            assertThat(get.exitCode()).as(get.toString()).isZero();
            assertThat(get.out()).isEqualTo("v2\n");
            Cli.Result scan = Cli.run("scan", db());
            assertThat(scan.exitCode()).as(scan.toString()).isZero();
            assertThat(scan.out()).isEqualTo("k\tv\nk2\tv2\n");
            assertThat(held.get("k".getBytes(StandardCharsets.UTF_8)))
                    .asString()
                    .isEqualTo("v");
        }
        assertThat(Cli.run("put", db(), "k", "w").exitCode())
                .as("writable again once the holder closed")
                .isZero();
    }

    @Test
    void verbosePrintsTheStackTraceOfAFailure() {
        assertThat(Cli.run("put", db(), "--create", "k", "v").exitCode()).isZero();
        try (Db held = Db.open(Path.of(db()), Options.defaults())) {
            Cli.Result r = Cli.run("put", "--verbose", db(), "k", "w");
            assertThat(r.exitCode()).isEqualTo(ExitCodes.LOCKED);
            assertThat(r.err()).contains("DbLockedException", "\tat io.bloomkv.engine.Db.open");
            Cli.Result quiet = Cli.run("put", db(), "k", "w");
            assertThat(quiet.err()).doesNotContain("\tat ");
            assertThat(held.get("k".getBytes(StandardCharsets.UTF_8)))
                    .asString()
                    .isEqualTo("v");
        }
    }

    @Test
    void readingADatabaseNeverChangesItsDirectory() throws Exception {
        assertThat(Cli.run("put", db(), "--create", "a", "1").exitCode()).isZero();
        try (Db db = Db.open(Path.of(db()), Options.defaults())) {
            for (int i = 0; i < 200; i++) {
                db.put(("key" + i).getBytes(StandardCharsets.UTF_8), ("v" + i).getBytes(StandardCharsets.UTF_8));
            }
            db.flush();
            db.put("unflushed".getBytes(StandardCharsets.UTF_8), "in the WAL".getBytes(StandardCharsets.UTF_8));
        }
        java.util.Map<String, String> before = TestDbs.contents(Path.of(db()));
        assertThat(before.keySet()).anyMatch(n -> n.endsWith(".log"));
        assertThat(Cli.run("get", db(), "unflushed").out()).isEqualTo("in the WAL\n");
        assertThat(Cli.run("scan", db(), "--keys-only").out().lines()).hasSize(202);
        assertThat(Cli.run("db", "stats", db(), "--probes", "200").exitCode()).isZero();
        assertThat(Cli.run("sst", "verify", db()).exitCode()).isZero();
        assertThat(TestDbs.contents(Path.of(db())))
                .as("file names and bytes after get, scan, db stats, sst verify")
                .isEqualTo(before);
    }
}
