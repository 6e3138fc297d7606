package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Db;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bloomkv sst write} and {@code bloomkv ingest}: a table written from sorted lines is ingested and read back,
 * its values winning over older ones; unsorted input and overlapping files are refused with exit code 2.
 */
class IngestCommandTest {
    @TempDir
    Path tmp;

    @Test
    void writeThenIngest() throws Exception {
        String db = tmp.resolve("db").toString();
        assertThat(Cli.run("put", db, "--create", "--flush", "apple", "red").exitCode())
                .isZero();
        Path tsv = tmp.resolve("in.tsv");
        Files.writeString(tsv, "apple\tgreen\nbanana\tyellow\ncherry\tdark red\n");
        Path sst = tmp.resolve("fruit.sst");
        Cli.Result w = Cli.run("sst", "write", sst.toString(), "--input", tsv.toString());
        assertThat(w.exitCode()).as(w.toString()).isZero();
        assertThat(w.out()).contains("wrote 3 pairs");

        Cli.Result r = Cli.run("ingest", db, sst.toString(), "--move");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("ingested 1 file");
        assertThat(Files.exists(sst)).isFalse();
        assertThat(Cli.run("get", db, "apple").out()).isEqualTo("green\n");
        assertThat(Cli.run("get", db, "cherry").out()).isEqualTo("dark red\n");

        Files.writeString(tsv, "b\t1\na\t2\n");
        Path bad = tmp.resolve("bad.sst");
        Cli.Result unsorted = Cli.run("sst", "write", bad.toString(), "--input", tsv.toString());
        assertThat(unsorted.exitCode()).as(unsorted.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(unsorted.err()).contains("increasing order");
        assertThat(Files.exists(bad)).isFalse();

        Files.writeString(tsv, "k1\t1\nk5\t5\n");
        Path f1 = tmp.resolve("1.sst");
        Path f2 = tmp.resolve("2.sst");
        assertThat(Cli.run("sst", "write", f1.toString(), "--input", tsv.toString())
                        .exitCode())
                .isZero();
        Files.writeString(tsv, "k3\t3\nk9\t9\n");
        assertThat(Cli.run("sst", "write", f2.toString(), "--input", tsv.toString())
                        .exitCode())
                .isZero();
        Cli.Result overlap = Cli.run("ingest", db, f1.toString(), f2.toString());
        assertThat(overlap.exitCode()).as(overlap.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(overlap.err()).contains("overlap");
        assertThat(Cli.run("get", db, "k1").exitCode()).isEqualTo(1);
    }

    /**
     * {@code sst write --ops} writes every kind of entry TableFileWriter takes: ingested into a database, the puts
     * replace, the merge operand merges with the older value, the delete and the range deletion hide older keys.
     */
    @Test
    void writeOperationsThenIngest() throws Exception {
        String db = tmp.resolve("db").toString();
        Path older = tmp.resolve("older.tsv");
        Files.writeString(older, "apple\tred\nb1\tx\nb2\ty\ncherry\tc0\ndate\td\n");
        assertThat(Cli.run("put", db, "--create", "--flush", "--input", older.toString())
                        .exitCode())
                .isZero();
        Path ops = tmp.resolve("in.ops");
        Files.writeString(
                ops,
                "put\tapple\tgreen\n"
                        + "delete-range\tb\tc\n" // any place among the keys
                        + "merge\tcherry\tc1\n"
                        + "\n"
                        + "delete\tdate\n"
                        + "put\telder\tberry\twith a tab\n" // the value is the rest of the line, as for pairs
                        + "delete-range\tzz\tzz\n"); // empty: adds nothing
        Path sst = tmp.resolve("ops.sst");
        Cli.Result w = Cli.run("sst", "write", sst.toString(), "--ops", "--input", ops.toString());
        assertThat(w.exitCode()).as(w.toString()).isZero();
        assertThat(w.out()).isEqualTo("wrote 2 puts, 1 merge, 1 delete, 1 range deletion to " + sst + "\n");
        Cli.Result dump = Cli.run("sst", "dump", sst.toString(), "--entries");
        assertThat(dump.out()).contains("[b, c) @0", "cherry @0 MERGE", "date @0 DEL");

        Cli.Result noOperator = Cli.run("ingest", db, sst.toString());
        assertThat(noOperator.exitCode()).as(noOperator.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(noOperator.err()).contains("merge operand").contains("(give --merge-operator)");
        Cli.Result r = Cli.run("ingest", db, sst.toString(), "--merge-operator", "stringappend");
        assertThat(r.exitCode()).as(r.toString()).isZero();

        String op = "--merge-operator=stringappend";
        assertThat(Cli.run("get", db, "apple", op).out()).isEqualTo("green\n");
        assertThat(Cli.run("get", db, "cherry", op).out()).isEqualTo("c0,c1\n");
        assertThat(Cli.run("get", db, "b1", op).exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(Cli.run("get", db, "date", op).exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(Cli.run("scan", db, op).out())
                .isEqualTo("apple\tgreen\ncherry\tc0,c1\nelder\tberry\\x09with a tab\n");
    }

    /**
     * {@code delete-range} lines take bounds longer than {@code Db.MAX_KEY_SIZE}, as the writer does (RocksDB takes any
     * length): an END whose first MAX_KEY_SIZE bytes are a stored key deletes that key, a range whose bounds extend the
     * same MAX_KEY_SIZE bytes holds no key and adds nothing.
     */
    @Test
    void writeOperationsTakeLongRangeBounds() throws Exception {
        String db = tmp.resolve("db").toString();
        String stored = "b" + "x".repeat(Db.MAX_KEY_SIZE - 1); // a key of MAX_KEY_SIZE bytes
        Path older = tmp.resolve("older.tsv");
        Files.writeString(older, "b1\t1\n" + stored + "\t2\nby\t3\n");
        assertThat(Cli.run("put", db, "--create", "--flush", "--input", older.toString())
                        .exitCode())
                .isZero();
        String c = "c".repeat(Db.MAX_KEY_SIZE);
        Path ops = tmp.resolve("in.ops");
        Files.writeString(
                ops,
                "put\tapple\tgreen\n"
                        + "delete-range\tb\t" + stored + "z\n" // through the stored key, not past it
                        + "delete-range\t" + c + "a\t" + c + "b\n"); // holds no key: adds nothing
        Path sst = tmp.resolve("ops.sst");
        Cli.Result w = Cli.run("sst", "write", sst.toString(), "--ops", "--input", ops.toString());
        assertThat(w.exitCode()).as(w.toString()).isZero();
        assertThat(w.out()).isEqualTo("wrote 1 put, 0 merges, 0 deletes, 1 range deletion to " + sst + "\n");
        Cli.Result r = Cli.run("ingest", db, sst.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(Cli.run("get", db, "b1").exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(Cli.run("get", db, stored).exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(Cli.run("get", db, "by").out()).isEqualTo("3\n");
        assertThat(Cli.run("get", db, "apple").out()).isEqualTo("green\n");
    }

    /** Malformed operation lines and the writer's order rules are usage errors naming the line; no file is left. */
    @Test
    void writeOperationsRefusesBadLinesNamingThem() throws Exception {
        Path ops = tmp.resolve("in.ops");
        Path sst = tmp.resolve("bad.sst");
        String[][] cases = {
            {"put\ta\t1\nupsert\tb\t2\n", "2: unknown operation 'upsert': expected put, merge, delete or delete-range"},
            {"put\ta\n", "1: expected put<TAB>KEY<TAB>VALUE, found no tab after the key"},
            {"merge\n", "1: expected merge<TAB>KEY<TAB>OPERAND, found no tab"},
            {"delete\ta\tx\n", "1: expected delete<TAB>KEY, found a tab after the key"},
            {"delete-range\ta\n", "1: expected delete-range<TAB>BEGIN<TAB>END, found no tab after BEGIN"},
            {"delete-range\tz\ta\n", "1: delete-range BEGIN z sorts after END a"},
            {
                "put\tb\t1\ndelete-range\ta\tc\nmerge\ta\t2\n",
                "3: key a sorts before the key of line 1: keys must be in strictly increasing order"
            },
            {"put\tb\t1\ndelete\tb\n", "2: key b repeats the key of line 1"},
            {"delete\t\n", "1: key is empty"},
            {"delete-range\ta\tb\nput\t\t1\n", "2: key is empty"},
        };
        for (String[] c : cases) {
            Files.writeString(ops, c[0]);
            Cli.Result r = Cli.run("sst", "write", sst.toString(), "--ops", "--input", ops.toString());
            assertThat(r.exitCode()).as(c[0] + "\n" + r).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err()).as(c[0]).startsWith("bloomkv sst write: " + ops + ":" + c[1]);
            assertThat(r.err().lines()).as(c[0]).hasSize(1);
            assertThat(Files.exists(sst)).as(c[0]).isFalse();
        }
        Files.writeString(ops, "delete\tzz\n");
        Cli.Result hex = Cli.run("sst", "write", sst.toString(), "--ops", "--hex", "--input", ops.toString());
        assertThat(hex.err()).isEqualTo("bloomkv sst write: " + ops + ":1: bad key: not a hex string: 'zz'\n");
    }

    /**
     * Input with nothing to write (no lines, blank lines, or only empty range deletions) is a one-line usage error
     * naming the input, in the command line's words rather than the writer class's; no file is left.
     */
    @Test
    void writeOfEmptyInputIsAUsageError() throws Exception {
        Path in = tmp.resolve("empty.tsv");
        Path sst = tmp.resolve("empty.sst");
        String[][] cases = {{"", ""}, {"\n\n", ""}, {"delete-range\tzz\tzz\n", "--ops"}};
        for (String[] c : cases) {
            Files.writeString(in, c[0]);
            Cli.Result r = c[1].isEmpty()
                    ? Cli.run("sst", "write", sst.toString(), "--input", in.toString())
                    : Cli.run("sst", "write", sst.toString(), c[1], "--input", in.toString());
            assertThat(r.exitCode()).as(c[0] + "\n" + r).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err())
                    .as(c[0])
                    .isEqualTo("bloomkv sst write: no entries in " + in
                            + ": a table file needs at least one entry or range deletion\n");
            assertThat(Files.exists(sst)).as(c[0]).isFalse();
        }
    }
}
