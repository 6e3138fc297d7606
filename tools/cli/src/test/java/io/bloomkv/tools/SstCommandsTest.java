package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.inspect.Region;
import io.bloomkv.engine.inspect.TableDump;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bloomkv sst dump} and {@code bloomkv sst verify}, on real tables, sound and damaged. */
class SstCommandsTest {
    @TempDir
    Path tmp;

    private Path table() throws IOException {
        Path db = tmp.resolve("db");
        TestDbs.loadEven(tmp, db, 2000);
        List<Path> tables = TestDbs.tables(db);
        assertThat(tables).hasSize(1);
        return tables.get(0);
    }

    /** The data blocks of {@code table}, from its index. */
    private static List<Region> dataBlocks(Path table) throws IOException {
        try (TableDump t = TableDump.open(table)) {
            return t.index().stream().map(TableDump.IndexEntry::block).toList();
        }
    }

    @Test
    void dumpListsRangeDeletionsAndTheirBlock() throws IOException {
        Path db = tmp.resolve("rd");
        try (io.bloomkv.engine.Db d = io.bloomkv.engine.Db.open(db, io.bloomkv.engine.Options.defaults())) {
            // A table below whose keys span [a0, d1]: a flush writes only the tombstone fragments that may hide
            // something in a table below it (and drops what its own tombstones hide), so the ranges need a target.
            d.put("a0".getBytes(StandardCharsets.UTF_8), "x".getBytes(StandardCharsets.UTF_8));
            d.put("d1".getBytes(StandardCharsets.UTF_8), "x".getBytes(StandardCharsets.UTF_8));
            d.flush();
            d.put("a1".getBytes(StandardCharsets.UTF_8), "x".getBytes(StandardCharsets.UTF_8));
            d.deleteRange("a".getBytes(StandardCharsets.UTF_8), "c".getBytes(StandardCharsets.UTF_8));
            d.deleteRange("b".getBytes(StandardCharsets.UTF_8), "e".getBytes(StandardCharsets.UTF_8));
            d.flush();
        }
        List<Path> tables = TestDbs.tables(db);
        assertThat(tables).hasSize(2);
        Path newest = tables.get(1); // file numbers grow: the second flush's table
        Cli.Result r = Cli.run("sst", "dump", newest.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains(
                        "range deletions   offset",
                        "range deletion block",
                        "range deletions (3 fragments",
                        "[a, b) @4",
                        "[b, c) @5", // [b, c) @4 is hidden by it from every reader: the flush leaves it out
                        "[c, e) @5");
        assertThat(r.out()).doesNotContain("[b, c) @4");
        Cli.Result v = Cli.run("sst", "verify", newest.toString());
        assertThat(v.exitCode()).as(v.toString()).isZero();
    }

    @Test
    void dumpShowsFooterPropertiesLayoutIndexAndFilter() throws IOException {
        Path table = table();
        int blocks = dataBlocks(table).size();
        Cli.Result r = Cli.run("sst", "dump", table.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.err()).isEmpty();
        String out = r.out();
        assertThat(out).contains("file: " + table, "format version 1", "magic 0x31766b6d6f6f6c62");
        assertThat(out).contains("entries           2,000 (0 deletions)");
        assertThat(out).contains("smallest key      key000000 @1 PUT", "largest key       key003998 @2000 PUT");
        assertThat(out).contains("sequence range    1 .. 2000");
        assertThat(out)
                .contains("data blocks (" + blocks + ")", "filter block", "index block", "properties block", "footer");
        assertThat(out).contains("index (" + blocks + " data blocks");
        // The layout's regions tile the file: each ends where the next starts, the footer at the end.
        List<String[]> regions = out.lines()
                .dropWhile(l -> !l.startsWith("layout"))
                .skip(2)
                .takeWhile(l -> l.startsWith("  "))
                .map(l -> l.trim().split("\\s{2,}"))
                .toList();
        assertThat(regions).hasSize(5);
        assertThat(regions.get(0)[1]).isEqualTo("0");
        for (int i = 1; i < regions.size(); i++) {
            assertThat(regions.get(i)[1]).as("start of " + regions.get(i)[0]).isEqualTo(regions.get(i - 1)[2]);
        }
        assertThat(regions.get(4)[2].replace(",", "")).isEqualTo(Long.toString(Files.size(table)));
        assertThat(out.lines().filter(l -> l.trim().matches("#\\d+ .*"))).hasSize(blocks);
        assertThat(out)
                .contains(
                        "kind              BLOCKED",
                        "probes (k)",
                        "bits per key      10.",
                        "bits set",
                        "expected FPR",
                        "off-heap memory");
        assertThat(out).doesNotContain("entries:");
    }

    @Test
    void dumpEntriesWithLimitAndTombstones() throws IOException {
        Path db = tmp.resolve("db");
        TestDbs.loadEven(tmp, db, 10);
        assertThat(Cli.run("delete", db.toString(), "key000004", "--flush").exitCode())
                .isZero();
        List<Path> tables = TestDbs.tables(db);
        assertThat(tables).hasSize(2);
        Cli.Result r = Cli.run("sst", "dump", tables.get(1).toString(), "--entries");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("entries:\n  key000004 @11 DEL\n");
        Cli.Result first = Cli.run("sst", "dump", tables.get(0).toString(), "--entries", "--limit", "2", "--hex");
        assertThat(first.out())
                .contains("entries:\n  6b6579303030303030 @1 PUT\t76616c75652030\n"
                        + "  6b6579303030303032 @2 PUT\t76616c75652032\n");
        assertThat(first.out().lines().filter(l -> l.contains(" PUT\t"))).hasSize(2);
    }

    /** {@code --limit N} alone prints the first N entries: it implies --entries rather than being ignored. */
    @Test
    void dumpLimitImpliesEntries() throws IOException {
        Path db = tmp.resolve("db");
        TestDbs.loadEven(tmp, db, 10);
        String table = TestDbs.tables(db).get(0).toString();
        Cli.Result r = Cli.run("sst", "dump", table, "--limit", "3");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains("entries:\n  key000000 @1 PUT\tvalue 0\n  key000002 @2 PUT\tvalue 2\n"
                        + "  key000004 @3 PUT\tvalue 4\n");
        assertThat(r.out().lines().filter(l -> l.contains(" PUT\t"))).hasSize(3);
        Cli.Result none = Cli.run("sst", "dump", table, "--limit", "0");
        assertThat(none.exitCode()).as(none.toString()).isZero();
        assertThat(none.out()).endsWith("entries:\n");
        assertThat(Cli.run("sst", "dump", table, "--limit", "-1").exitCode()).isEqualTo(ExitCodes.USAGE);
    }

    /**
     * {@code --value-hex} formats only the entries' values: alone it implies --entries, as --limit does, rather than
     * being ignored; {@code --key-hex} formats the other parts' keys too, and implies nothing.
     */
    @Test
    void dumpValueHexImpliesEntries() throws IOException {
        Path db = tmp.resolve("db");
        TestDbs.loadEven(tmp, db, 10);
        String table = TestDbs.tables(db).get(0).toString();
        Cli.Result r = Cli.run("sst", "dump", table, "--value-hex");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("entries:\n  key000000 @1 PUT\t76616c75652030\n");
        assertThat(r.out().lines().filter(l -> l.contains(" PUT\t"))).hasSize(10);
        Cli.Result limited = Cli.run("sst", "dump", table, "--value-hex", "--limit", "1");
        assertThat(limited.out().lines().filter(l -> l.contains(" PUT\t"))).hasSize(1);
        Cli.Result keyHex = Cli.run("sst", "dump", table, "--key-hex");
        assertThat(keyHex.exitCode()).as(keyHex.toString()).isZero();
        assertThat(keyHex.out())
                .contains("smallest key      6b6579303030303030 @1 PUT")
                .doesNotContain("entries:");
    }

    @Test
    void dumpShowsTheCompressionOfItsBlocks() throws IOException {
        Path db = tmp.resolve("db-lz4");
        try (io.bloomkv.engine.Db d = io.bloomkv.engine.Db.open(
                db, io.bloomkv.engine.Options.defaults().compression(io.bloomkv.engine.Compression.LZ4))) {
            for (int i = 0; i < 2000; i++) {
                d.put(
                        String.format("key%06d", i).getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                        ("value " + i + " value " + i + " value " + i)
                                .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            }
            d.flush();
        }
        Path table = TestDbs.tables(db).get(0);
        int blocks = dataBlocks(table).size();
        Cli.Result r = Cli.run("sst", "dump", table.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("compression       LZ4: " + blocks + " of " + blocks + " data blocks compressed");
        Path plainDb = tmp.resolve("db-none"); // Options.defaults() compresses with LZ4: ask for none
        try (io.bloomkv.engine.Db d = io.bloomkv.engine.Db.open(
                plainDb, io.bloomkv.engine.Options.defaults().compression(io.bloomkv.engine.Compression.NONE))) {
            d.put(
                    "key".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                    "value value value value".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            d.flush();
        }
        Cli.Result plain = Cli.run("sst", "dump", TestDbs.tables(plainDb).get(0).toString());
        assertThat(plain.out()).contains("compression       NONE\n");
    }

    @Test
    void dumpOfATableWithoutFilter() throws IOException {
        Path db = tmp.resolve("db");
        TestDbs.loadEven(tmp, db, 100, "--bits-per-key", "0");
        Cli.Result r = Cli.run("sst", "dump", TestDbs.tables(db).get(0).toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("(no filter)", "filter            none", "filter: none");
    }

    @Test
    void dumpShowsEachFilterKind() throws IOException {
        for (String kind : new String[] {"standard", "partitioned", "blocked"}) {
            Path db = tmp.resolve("db-" + kind);
            TestDbs.loadEven(tmp, db, 500, "--filter-kind", kind, "--bits-per-key", "12");
            Cli.Result r = Cli.run("sst", "dump", TestDbs.tables(db).get(0).toString());
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.out()).contains("kind              " + kind.toUpperCase());
        }
        // The engine builds no table with a counting filter: a clear usage error, nothing written.
        Cli.Result counting = Cli.run(
                "put", tmp.resolve("db-counting").toString(), "--create", "--filter-kind", "counting", "k", "v");
        assertThat(counting.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(counting.err()).startsWith("bloomkv put: invalid argument: ").contains("COUNTING");
    }

    /** put and delete offer (help and completion) only the filter kinds a table accepts: no COUNTING. */
    @Test
    void writeCommandsOfferOnlyTableFilterKinds() {
        for (String command : new String[] {"put", "delete"}) {
            String help = Cli.run(command, "--help").out().replaceAll("\\s+", " ");
            assertThat(help)
                    .as("%s --help", command)
                    .contains("Filter of tables written by this run: BLOCKED, STANDARD, PARTITIONED, RIBBON "
                            + "(default: BLOCKED).")
                    .doesNotContain("COUNTING");
            Iterable<String> candidates = BloomKvCli.newCommandLine()
                    .getSubcommands()
                    .get(command)
                    .getCommandSpec()
                    .findOption("--filter-kind")
                    .completionCandidates();
            assertThat(candidates).containsExactly("BLOCKED", "STANDARD", "PARTITIONED", "RIBBON");
        }
    }

    @Test
    void verifyGoodTableAndDirectory() throws IOException {
        Path table = table();
        Cli.Result file = Cli.run("sst", "verify", table.toString());
        assertThat(file.exitCode()).as(file.toString()).isZero();
        assertThat(file.out()).startsWith("OK   " + table).endsWith("verified 1 file: all checksums good\n");
        assertThat(file.err()).isEmpty();

        Cli.Result dir = Cli.run("sst", "verify", table.getParent().toString());
        assertThat(dir.exitCode()).as(dir.toString()).isZero();
        assertThat(dir.out())
                .contains("OK   " + table, ": WAL, ", ": MANIFEST, ")
                .contains("all checksums good");
    }

    /** A log of one record is counted as "1 record", not "1 records". */
    @Test
    void verifyCountsOneLogRecordInTheSingular() {
        Path db = tmp.resolve("one-record");
        try (Db d = Db.open(db, Options.defaults())) {
            d.put("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
        }
        Cli.Result r = Cli.run("sst", "verify", db.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).containsPattern(": WAL, 1 record\n").doesNotContain(" 1 records");
    }

    @Test
    void flippedDataByteIsNamedByVerifyAndStopsReads() throws IOException {
        Path table = table();
        List<Region> blocks = dataBlocks(table);
        Region second = blocks.get(1);
        TestDbs.flipByte(table, second.offset() + 17);

        Cli.Result r = Cli.run("sst", "verify", table.toString());
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(r.out())
                .contains("BAD  " + table + ": 1 of " + (blocks.size() + 2 + 1) + " blocks bad")
                .contains("data block at offset " + second.offset() + " (size " + second.size() + "): ")
                .contains("checksum mismatch");
        assertThat(r.err()).isEqualTo("bloomkv sst verify: 1 bad block in 1 of 1 file (listed on stdout)\n");

        Cli.Result dir = Cli.run("sst", "verify", table.getParent().toString());
        assertThat(dir.exitCode()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(dir.out()).contains("data block at offset " + second.offset());

        // A key stored in the damaged block: the read fails with a corruption naming file and offset.
        String key = firstKeyOfBlock(table, 1);
        Cli.Result get = Cli.run("get", table.getParent().toString(), key);
        assertThat(get.exitCode()).as(get.toString()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(get.err())
                .startsWith("bloomkv get: corruption: ")
                .contains(table.getFileName().toString())
                .contains("offset " + second.offset());
        assertThat(get.err().lines()).hasSize(1);

        Cli.Result dump = Cli.run("sst", "dump", table.toString(), "--entries");
        assertThat(dump.exitCode()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(dump.err().lines()).hasSize(1);
    }

    @Test
    void flippedFilterByteFailsOpen() throws IOException {
        Path table = table();
        long filterOffset;
        try (TableDump t = TableDump.open(table)) {
            filterOffset = t.filterBlock().offset();
        }
        TestDbs.flipByte(table, filterOffset + 100);
        Cli.Result verify = Cli.run("sst", "verify", table.toString());
        assertThat(verify.exitCode()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(verify.out()).contains("filter block at offset " + filterOffset);
        Cli.Result dump = Cli.run("sst", "dump", table.toString());
        assertThat(dump.exitCode()).as(dump.toString()).isZero();
        assertThat(dump.out()).contains("filter: UNUSABLE");
        // Reads stay correct without the filter.
        assertThat(Cli.run("get", table.getParent().toString(), "key001000").out())
                .isEqualTo("value 1000\n");
        assertThat(Cli.run("get", table.getParent().toString(), "key001001").exitCode())
                .isEqualTo(ExitCodes.NOT_FOUND);
    }

    @Test
    void damagedFooterCannotBeOpened() throws IOException {
        Path table = table();
        TestDbs.flipByte(table, Files.size(table) - 3); // in the magic number
        Cli.Result verify = Cli.run("sst", "verify", table.toString());
        assertThat(verify.exitCode()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(verify.out()).contains("BAD  " + table + ": cannot open: ").contains("magic");
        Cli.Result dump = Cli.run("sst", "dump", table.toString());
        assertThat(dump.exitCode()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(dump.err()).startsWith("bloomkv sst dump: corruption: ").contains("magic");
        assertThat(dump.err().lines()).hasSize(1);
        assertThat(dump.out()).isEmpty();
    }

    @Test
    void missingOrWrongPaths() throws IOException {
        Path nope = tmp.resolve("nope.sst");
        Cli.Result dump = Cli.run("sst", "dump", nope.toString());
        assertThat(dump.exitCode()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(dump.err()).isEqualTo("bloomkv sst dump: no such file: " + nope + "\n");
        Cli.Result verify = Cli.run("sst", "verify", nope.toString());
        assertThat(verify.exitCode()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(Cli.run("sst", "dump", tmp.toString()).err()).contains("is a directory, not a table file");
        Cli.Result empty = Cli.run(
                "sst", "verify", Files.createDirectories(tmp.resolve("empty")).toString());
        assertThat(empty.exitCode()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(empty.err()).contains("holds no table, WAL or MANIFEST file");
        Path shortFile = Files.write(tmp.resolve("000009.sst"), new byte[TableDump.FOOTER_SIZE - 1]);
        Cli.Result tooShort = Cli.run("sst", "dump", shortFile.toString());
        assertThat(tooShort.exitCode()).isEqualTo(ExitCodes.CORRUPTION);
        assertThat(tooShort.err()).contains("too short");
    }

    /** The first user key stored in data block {@code index} of {@code table}. */
    private static String firstKeyOfBlock(Path table, int index) throws IOException {
        try (TableDump t = TableDump.open(table)) {
            byte[] prev = t.index().get(index - 1).separator().userKey();
            // Keys are key%06d of even ids; the separator is the last key of the previous block.
            String last = new String(prev, StandardCharsets.UTF_8);
            int id = Integer.parseInt(last.substring(3)) + 2;
            return String.format("key%06d", id);
        }
    }
}
