package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomkv.bench.report.Charts;
import io.bloomkv.bench.report.ReportWriter;
import io.bloomkv.bench.report.ValueSizeSweep;
import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** A tiny run of the whole command: both engines, filters on and off, the report's files and counts. */
class EndToEndTest {

    @Test
    void tinyRunWritesAConsistentReport(@TempDir Path tmp) throws Exception {
        Path report = tmp.resolve("report");
        String out = BenchCli.runOk(
                "--num",
                "10000",
                "--reads",
                "4000",
                "--seeks",
                "300",
                "--workloads",
                "fillrandom,readrandom,readmissing,seekrandom,deleterandom",
                "--write-buffer-size",
                "262144",
                "--cache-size",
                "131072",
                "--cold",
                "--report-dir",
                report.toString(),
                "--db-dir",
                tmp.resolve("db").toString(),
                "--no-progress",
                "--fpr-sweep-keys",
                "2000",
                "--fpr-sweep-probes",
                "20000");
        String console = out;
        assertThat(console).contains("readmissing", "bloomkv/rocksdb", "useful (lookups avoided)", "goals");

        for (String f : new String[] {
            ReportWriter.JSON,
            ReportWriter.MARKDOWN,
            Charts.FPR,
            Charts.LOOKUPS,
            Charts.THROUGHPUT,
            Charts.READ_AMP,
            Charts.RATIOS
        }) {
            assertThat(report.resolve(f)).as(f).exists();
            assertThat(Files.size(report.resolve(f))).as(f).isPositive();
            if (f.endsWith(".png")) {
                BufferedImage img = ImageIO.read(report.resolve(f).toFile());
                assertThat(img).as(f + " is a readable PNG").isNotNull();
                assertThat(img.getWidth()).isGreaterThan(500);
            }
        }
        String md = Files.readString(report.resolve(ReportWriter.MARKDOWN));
        assertThat(md).contains("## Goals", "### readmissing", "![" + Charts.FPR + "]", "Where cold mode falls short");
        assertThat(md).as("the report speaks of goals, not of issue numbers").doesNotContainPattern("(?i)issue \\d");

        JsonNode root =
                new ObjectMapper().readTree(report.resolve(ReportWriter.JSON).toFile());
        assertThat(root.path("config").path("num").asLong()).isEqualTo(10000);
        JsonNode phases = root.path("phases");
        // 5 workloads -> 7 phases (seekrandom-10/-100, deleterandom + deleterandom-read), x 4 engine columns
        assertThat(phases.size()).isEqualTo(7 * 4);
        Set<String> labels = new HashSet<>();
        for (JsonNode p : phases) {
            String what = p.path("phase").asText() + "/" + p.path("label").asText();
            labels.add(p.path("label").asText());
            assertThat(p.path("wrongAnswers").asLong()).as(what).isZero();
            long checks = p.path("filterChecks").asLong();
            assertThat(p.path("filterUseful").asLong()
                            + p.path("filterPositive").asLong())
                    .as(what)
                    .isEqualTo(checks);
            assertThat(p.path("filterTruePositive").asLong())
                    .as(what)
                    .isLessThanOrEqualTo(p.path("filterPositive").asLong());
            assertThat(p.path("opsPerSec").asDouble()).as(what).isPositive();
            if (!p.path("filters").asBoolean()) {
                assertThat(checks).as(what + ": no filter, no checks").isZero();
            }
            if (p.path("kind").asText().equals("read")) {
                assertThat(p.path("ops").asLong()).as(what).isPositive();
                assertThat(p.path("found").asLong() + p.path("notFound").asLong())
                        .as(what + ": every get answered once")
                        .isEqualTo(p.path("ops").asLong());
            }
            switch (p.path("phase").asText()) {
                case "readrandom" -> {
                    assertThat(p.path("found").asLong()).as(what).isEqualTo(4000);
                    assertThat(p.path("tableEntries").asLong())
                            .as(what + ": each loaded key stored once")
                            .isEqualTo(10000);
                    assertThat(p.path("cold").asText()).as(what).isNotEqualTo("off");
                }
                case "readmissing" -> {
                    assertThat(p.path("found").asLong()).as(what).isZero();
                    assertThat(p.path("notFound").asLong()).as(what).isEqualTo(4000);
                    if (p.path("filters").asBoolean()) {
                        assertThat(p.path("filterTruePositive").asLong())
                                .as(what)
                                .isZero();
                        assertThat(checks)
                                .as(what + ": every absent get checks at least one table")
                                .isGreaterThanOrEqualTo(4000);
                        assertThat(p.path("predictedChecks").asDouble())
                                .as(what + ": checks the key ranges predict")
                                .isEqualTo((double) checks);
                        assertThat(p.path("usefulVsTheory").asDouble()).as(what).isBetween(0.95, 1.05);
                        assertThat(p.path("theoreticalFpr").asDouble()).as(what).isBetween(0.001, 0.05);
                    }
                }
                case "fillrandom" -> {
                    assertThat(p.path("writeAmplification").asDouble()).as(what).isGreaterThanOrEqualTo(0.5);
                    assertThat(p.path("sstBytes").asLong()).as(what).isPositive();
                }
                case "deleterandom-read" ->
                    assertThat(p.path("found").asLong()).as(what).isZero();
                default -> {}
            }
        }
        assertThat(labels).containsExactlyInAnyOrder("bloomkv", "rocksdb", "bloomkv-nofilter", "rocksdb-nofilter");
        assertThat(root.path("goals").size()).isEqualTo(5);
        assertThat(root.path("fprSweep").size()).isGreaterThan(10);
        for (JsonNode p : root.path("fprSweep")) {
            assertThat(p.path("theoreticalFpr").asDouble()).isBetween(0.0, 1.0);
        }
    }

    @Test
    void repeatedRunsReportMediansAndSpreads(@TempDir Path tmp) throws Exception {
        Path report = tmp.resolve("report");
        String out = BenchCli.runOk(
                "--num",
                "5000",
                "--reads",
                "2000",
                "--workloads",
                "readmissing",
                "--repeat",
                "2",
                "--warmup",
                "1000",
                "--phase-warmup",
                "500",
                "--report-dir",
                report.toString(),
                "--db-dir",
                tmp.resolve("db").toString(),
                "--no-progress",
                "--no-fpr-sweep");
        JsonNode root =
                new ObjectMapper().readTree(report.resolve(ReportWriter.JSON).toFile());
        assertThat(root.path("phases").size()).isEqualTo(2 * 4);
        Set<Integer> runs = new HashSet<>();
        for (JsonNode p : root.path("phases")) {
            runs.add(p.path("run").asInt());
        }
        assertThat(runs).containsExactlyInAnyOrder(0, 1);
        assertThat(root.path("summary").size()).isEqualTo(4);
        for (JsonNode s : root.path("summary")) {
            assertThat(s.path("runs").asInt()).isEqualTo(2);
            assertThat(s.path("minOpsPerSec").asDouble())
                    .isLessThanOrEqualTo(s.path("medianOpsPerSec").asDouble());
            assertThat(s.path("medianOpsPerSec").asDouble())
                    .isLessThanOrEqualTo(s.path("maxOpsPerSec").asDouble());
        }
        JsonNode goal = root.path("goals").get(0);
        assertThat(goal.path("name").asText()).startsWith("readmissing");
        assertThat(goal.path("detail").asText()).contains("median of 2 runs");
        assertThat(out).contains("ops/s min-max (2 runs)");
        assertThat(Files.readString(report.resolve(ReportWriter.MARKDOWN))).contains("ran 2 times");
    }

    /** multigetrandom / multigetmissing on all four columns: every key answered right, batches of 32 (RocksDB: multiGetAsList). */
    @Test
    void multiGetWorkloadsGiveRightAnswers(@TempDir Path tmp) throws Exception {
        Path report = tmp.resolve("report");
        String out = BenchCli.runOk(
                "--num",
                "4000",
                "--reads",
                "2000",
                "--workloads",
                "multigetrandom,multigetmissing",
                "--report-dir",
                report.toString(),
                "--db-dir",
                tmp.resolve("db").toString(),
                "--no-progress",
                "--no-fpr-sweep");
        JsonNode root =
                new ObjectMapper().readTree(report.resolve(ReportWriter.JSON).toFile());
        assertThat(root.path("phases").size()).isEqualTo(2 * 4);
        for (JsonNode p : root.path("phases")) {
            String what = p.path("phase").asText() + "/" + p.path("label").asText();
            assertThat(p.path("wrongAnswers").asLong()).as(what).isZero();
            assertThat(p.path("ops").asLong()).as(what).isEqualTo(2000 / 32 * 32);
            if (p.path("phase").asText().equals("multigetrandom")) {
                assertThat(p.path("found").asLong()).as(what).isEqualTo(2000 / 32 * 32);
            } else {
                assertThat(p.path("notFound").asLong()).as(what).isEqualTo(2000 / 32 * 32);
            }
        }
    }

    /** The two workloads the first run leaves out; how many writes the concurrent writer gets in is not asserted (timing). */
    @Test
    void overwriteAndReadWhileWritingGiveRightAnswers(@TempDir Path tmp) throws Exception {
        Path report = tmp.resolve("report");
        String out = BenchCli.runOk(
                "--num",
                "3000",
                "--reads",
                "2000",
                "--workloads",
                "overwrite,readwhilewriting",
                "--write-buffer-size",
                "131072",
                "--report-dir",
                report.toString(),
                "--db-dir",
                tmp.resolve("db").toString(),
                "--no-progress",
                "--no-fpr-sweep");
        JsonNode root =
                new ObjectMapper().readTree(report.resolve(ReportWriter.JSON).toFile());
        assertThat(root.path("phases").size()).isEqualTo(3 * 4);
        Set<String> seen = new HashSet<>();
        long[] readsOf = new long[2]; // readwhilewriting's reads, and those of them during background work
        for (JsonNode p : root.path("phases")) {
            String what = p.path("phase").asText() + "/" + p.path("label").asText();
            seen.add(what);
            assertThat(p.path("wrongAnswers").asLong()).as(what).isZero();
            switch (p.path("phase").asText()) {
                case "overwrite" -> {
                    assertThat(p.path("ops").asLong()).as(what).isEqualTo(3000);
                    assertThat(p.path("sstBytes").asLong()).as(what).isPositive();
                }
                case "readwhilewriting" -> {
                    assertThat(p.path("ops").asLong()).as(what).isEqualTo(2000);
                    assertThat(p.path("found").asLong())
                            .as(what + ": every key stays present")
                            .isEqualTo(2000);
                    assertThat(p.path("notFound").asLong()).as(what).isZero();
                    readsOf[0] += p.path("ops").asLong();
                }
                case "readwhilewriting-bg" -> {
                    // The reads that started while a flush or compaction ran: a subset of the phase's reads.
                    assertThat(p.path("ops").asLong()).as(what).isBetween(0L, 2000L);
                    assertThat(p.path("seconds").asDouble())
                            .as(what + ": time background work ran")
                            .isGreaterThanOrEqualTo(0);
                    readsOf[1] += p.path("ops").asLong();
                }
                default -> throw new AssertionError("unexpected phase " + what);
            }
        }
        assertThat(seen)
                .hasSize(12)
                .contains(
                        "overwrite/bloomkv",
                        "readwhilewriting/rocksdb-nofilter",
                        "readwhilewriting-bg/bloomkv",
                        "readwhilewriting-bg/rocksdb");
        assertThat(readsOf[1]).isLessThanOrEqualTo(readsOf[0]);
    }

    /**
     * readupdate and readheavy on two threads with Zipfian keys, in the --value-size list mode: right
     * answers, every operation accounted for (gets + blind updates), and the ratio summary over sizes.
     */
    @Test
    void mixedWorkloadsOnTwoThreadsOverValueSizes(@TempDir Path tmp) throws Exception {
        Path report = tmp.resolve("report");
        String out = BenchCli.runOk(
                "--num",
                "2000",
                "--reads",
                "4000",
                "--workloads",
                "readupdate,readheavy",
                "--threads",
                "2",
                "--distribution",
                "zipfian",
                "--value-size",
                "100,700",
                "--filters",
                "on",
                "--warmup",
                "1000",
                "--phase-warmup",
                "500",
                "--write-buffer-size",
                "131072",
                "--report-dir",
                report.toString(),
                "--db-dir",
                tmp.resolve("db").toString(),
                "--no-progress",
                "--no-fpr-sweep");
        for (int size : new int[] {100, 700}) {
            Path dir = report.resolve("value-size-" + size);
            JsonNode root =
                    new ObjectMapper().readTree(dir.resolve(ReportWriter.JSON).toFile());
            assertThat(root.path("config").path("valueSize").asInt()).isEqualTo(size);
            assertThat(root.path("config").path("threads").asInt()).isEqualTo(2);
            assertThat(root.path("config").path("distribution").asText()).isEqualTo("zipfian");
            assertThat(root.path("phases").size()).isEqualTo(2 * 2);
            for (JsonNode p : root.path("phases")) {
                String what = size + "/" + p.path("phase").asText() + "/"
                        + p.path("label").asText();
                assertThat(p.path("kind").asText()).isEqualTo("mixed");
                assertThat(p.path("ops").asLong()).as(what).isEqualTo(4000);
                assertThat(p.path("wrongAnswers").asLong()).as(what).isZero();
                assertThat(p.path("notFound").asLong())
                        .as(what + ": every key stays present")
                        .isZero();
                long gets = p.path("found").asLong();
                long updates = p.path("backgroundWrites").asLong();
                switch (p.path("phase").asText()) {
                    case "readupdate" -> {
                        assertThat(gets).as(what + ": every operation reads").isEqualTo(4000);
                        assertThat(updates)
                                .as(what + ": half read-modify-write (sd 32)")
                                .isBetween(1800L, 2200L);
                    }
                    case "readheavy" -> {
                        assertThat(gets + updates)
                                .as(what + ": a get or a blind update each")
                                .isEqualTo(4000);
                        assertThat(updates).as(what + ": 5%% updates (sd 14)").isBetween(130L, 270L);
                    }
                    default -> throw new AssertionError("unexpected phase " + what);
                }
            }
            assertThat(root.path("goals").toString()).contains("readupdate ops/s", "readheavy ops/s");
        }
        JsonNode points =
                new ObjectMapper().readTree(report.resolve(ValueSizeSweep.JSON).toFile());
        assertThat(points.size()).isEqualTo(2 * 2);
        for (JsonNode p : points) {
            assertThat(p.path("ratioMedian").asDouble()).isPositive();
        }
        BufferedImage img =
                ImageIO.read(report.resolve(Charts.RATIO_VS_VALUE_SIZE).toFile());
        assertThat(img).isNotNull();
        assertThat(Files.readString(report.resolve(ValueSizeSweep.MARKDOWN)))
                .contains("| readupdate |", "100 B", "700 B");
        assertThat(out).contains("bloomkv / rocksdb ops/s against value size");
    }

    @Test
    void compressedDirectReadRunsGiveRightAnswersAndSmallerTables(@TempDir Path tmp) throws Exception {
        long[] sst = new long[2];
        int i = 0;
        for (String compression : new String[] {"none", "zstd"}) {
            Path report = tmp.resolve("report-" + compression);
            String out = BenchCli.runOk(
                    "--num",
                    "5000",
                    "--reads",
                    "2000",
                    "--workloads",
                    "fillrandom,readrandom,readmissing",
                    "--compression",
                    compression,
                    "--value-compressibility",
                    "0.5",
                    "--direct",
                    "--filters",
                    "on",
                    "--cache-size",
                    "65536",
                    "--warmup",
                    "1000",
                    "--phase-warmup",
                    "500",
                    "--report-dir",
                    report.toString(),
                    "--db-dir",
                    tmp.resolve("db-" + compression).toString(),
                    "--no-progress",
                    "--no-fpr-sweep");
            JsonNode root = new ObjectMapper()
                    .readTree(report.resolve(ReportWriter.JSON).toFile());
            assertThat(root.path("config").path("directReads").asBoolean()).isTrue();
            assertThat(root.path("config").path("compression").asText()).isEqualTo(compression);
            long[] perEngine = new long[2];
            for (JsonNode p : root.path("phases")) {
                String what = compression + " " + p.path("phase").asText() + "/"
                        + p.path("label").asText();
                assertThat(p.path("wrongAnswers").asLong()).as(what).isZero();
                if (p.path("phase").asText().equals("readrandom")) {
                    assertThat(p.path("found").asLong()).as(what).isEqualTo(2000);
                    perEngine[p.path("label").asText().equals("bloomkv") ? 0 : 1] =
                            p.path("sstBytes").asLong();
                }
            }
            assertThat(perEngine[0]).as(compression).isPositive();
            assertThat(perEngine[1]).as(compression).isPositive();
            sst[i++] = perEngine[0] + perEngine[1];
            if (compression.equals("zstd")) {
                // values compress to about half on both engines: both engines' tables shrink by well over 1/4
                assertThat((double) perEngine[0]).isLessThan(0.75 * 5000 * 116);
                assertThat((double) perEngine[1]).isLessThan(0.75 * 5000 * 116);
            }
        }
        assertThat(sst[1]).isLessThan(sst[0]);
    }

    @Test
    void badFlagsAreRejectedWithAClearMessage() {
        for (String[] args : new String[][] {
            {"--compression", "snappy"}, {"--value-compressibility", "0"}, {"--value-compressibility", "1.5"},
            {"--key-size", "4"}, {"--engines", "leveldb"}, {"--filters", "maybe"},
            {"--workloads", "readsometimes"}, {"--filter-kind", "COUNTING"}, {"--threads", "0"},
            {"--distribution", "gaussian"}, {"--value-size", "100,0"}, {"--value-size", "100,100"}
        }) {
            StringWriter err = new StringWriter();
            CommandLine cl = new CommandLine(new BenchCommand());
            cl.setErr(new PrintWriter(err));
            cl.setOut(new PrintWriter(new StringWriter()));
            int exit = cl.execute(args);
            assertThat(exit).as(String.join(" ", args)).isEqualTo(2);
            assertThat(err.toString()).as(String.join(" ", args)).contains(args[0].substring(2));
        }
    }
}
