package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomkv.bench.engine.EngineFactory;
import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.engine.MmapReads;
import io.bloomkv.bench.report.ReportWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** bench --mmap-reads: per-engine read modes (bloomkv, rocksdb, both, none), plain = both, and what the report says. */
class MmapReadsOptionTest {
    private static BenchConfig config(String... flags) {
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd).parseArgs(flags);
        return cmd.config(Path.of("unused"));
    }

    /** Whether the engine factory opens {@code engine} with mapped reads under {@code cfg}. */
    private static boolean opensMapped(BenchConfig cfg, String engine) {
        return EngineFactory.settings(new EngineSpec(engine, true), cfg).mmapReads();
    }

    @Test
    void eachValueMapsItsEnginesOnly() {
        BenchConfig none = config();
        assertThat(none.mmapReads()).isEqualTo(MmapReads.NONE);
        assertThat(none.readModes()).isEqualTo("bloomkv pread, rocksdb pread");

        BenchConfig bloomkv = config("--mmap-reads=bloomkv");
        assertThat(bloomkv.mmapReads()).isEqualTo(MmapReads.BLOOMKV);
        assertThat(bloomkv.readModes()).isEqualTo("bloomkv mmap, rocksdb pread");
        assertThat(opensMapped(bloomkv, "bloomkv")).isTrue();
        assertThat(opensMapped(bloomkv, "rocksdb")).isFalse();

        BenchConfig rocksdb = config("--mmap-reads", "RocksDB"); // a separate word, any case
        assertThat(rocksdb.mmapReads()).isEqualTo(MmapReads.ROCKSDB);
        assertThat(opensMapped(rocksdb, "bloomkv")).isFalse();
        assertThat(opensMapped(rocksdb, "rocksdb")).isTrue();

        BenchConfig both = config("--mmap-reads=both");
        assertThat(both.readModes()).isEqualTo("bloomkv mmap, rocksdb mmap");
        assertThat(opensMapped(both, "bloomkv")).isTrue();
        assertThat(opensMapped(both, "rocksdb")).isTrue();

        assertThat(config("--mmap-reads=none").mmapReads()).isEqualTo(MmapReads.NONE);
        assertThat(config("--no-mmap-reads").mmapReads()).isEqualTo(MmapReads.NONE);
    }

    /** Plain --mmap-reads keeps its meaning (both engines) and does not take the next option as its value. */
    @Test
    void plainFlagMeansBoth() {
        BenchConfig plain = config("--mmap-reads", "--num", "1000");
        assertThat(plain.mmapReads()).isEqualTo(MmapReads.BOTH);
        assertThat(plain.num()).isEqualTo(1000);
        assertThat(config("--num", "1000", "--mmap-reads").mmapReads()).isEqualTo(MmapReads.BOTH);
    }

    /** O_DIRECT excludes mappings on both engines; --defaults runs each engine in its own mode whatever the flag. */
    @Test
    void directAndOwnDefaultsDecideTheModes() {
        BenchConfig direct = config("--direct", "--mmap-reads=bloomkv");
        assertThat(direct.mmapReads()).isEqualTo(MmapReads.NONE);
        assertThat(direct.readModes()).isEqualTo("bloomkv O_DIRECT, rocksdb O_DIRECT");
        assertThat(opensMapped(direct, "bloomkv")).isFalse();
        assertThat(config("--defaults").readModes()).isEqualTo("bloomkv mmap, rocksdb pread");
    }

    @Test
    void anythingElseIsAUsageErrorNamingTheChoices() {
        for (String[] args : new String[][] {
            {"--mmap-reads=yes"},
            {"--mmap-reads=bloomkv,rocksdb"},
            {"--mmap-reads="},
            {"--no-mmap-reads", "--mmap-reads=both"}
        }) {
            StringWriter err = new StringWriter();
            CommandLine cl = new CommandLine(new BenchCommand());
            cl.setOut(new PrintWriter(new StringWriter()));
            cl.setErr(new PrintWriter(err));
            assertThat(cl.execute(args)).as(String.join(" ", args)).isEqualTo(2);
            assertThat(err.toString())
                    .as(String.join(" ", args))
                    .containsAnyOf(
                            "--mmap-reads: expected bloomkv, rocksdb, both or none",
                            "--no-mmap-reads contradicts --mmap-reads=both");
        }
    }

    /** A run with bloomkv mapped and RocksDB on pread says so on the console, in report.md and in results.json. */
    @Test
    void theReportNamesEachEnginesReadMode(@TempDir Path tmp) throws Exception {
        Path report = tmp.resolve("report");
        String out = BenchCli.runOk(
                "--num",
                "2000",
                "--reads",
                "500",
                "--workloads",
                "fillrandom,readmissing",
                "--filters",
                "on",
                "--mmap-reads=bloomkv",
                "--write-buffer-size",
                "262144",
                "--warmup",
                "0",
                "--phase-warmup",
                "0",
                "--no-fpr-sweep",
                "--no-progress",
                "--report-dir",
                report.toString(),
                "--db-dir",
                tmp.resolve("db").toString());
        assertThat(out).contains("table reads: bloomkv mmap, rocksdb pread");
        assertThat(Files.readString(report.resolve(ReportWriter.MARKDOWN)))
                .contains("reads through the page cache (bloomkv mmap, rocksdb pread)");
        JsonNode cfg = new ObjectMapper()
                .readTree(report.resolve(ReportWriter.JSON).toFile())
                .path("config");
        assertThat(cfg.path("mmapReads").asText()).isEqualTo("bloomkv");
        assertThat(cfg.path("readModes").path("bloomkv").asText()).isEqualTo("mmap");
        assertThat(cfg.path("readModes").path("rocksdb").asText()).isEqualTo("pread");
    }
}
