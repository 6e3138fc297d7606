package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

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
}
