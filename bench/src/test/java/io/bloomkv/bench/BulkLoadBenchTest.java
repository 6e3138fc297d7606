package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomkv.bench.report.ReportWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bulkload workload on both engines: every key loaded through a table file + ingest (bloomkv's TableFileWriter
 * + Db.ingest, RocksDB's SstFileWriter + ingestExternalFile) reads back right after; the table file is gone.
 */
class BulkLoadBenchTest {
    @Test
    void bulkLoadThenReadsGiveRightAnswersOnBothEngines(@TempDir Path tmp) throws Exception {
        Path report = tmp.resolve("report");
        Path work = tmp.resolve("db");
        BenchCli.runOk(
                "--num",
                "3000",
                "--reads",
                "2000",
                "--workloads",
                "bulkload",
                "--filters",
                "on",
                "--report-dir",
                report.toString(),
                "--db-dir",
                work.toString(),
                "--no-progress",
                "--no-fpr-sweep");
        JsonNode root =
                new ObjectMapper().readTree(report.resolve(ReportWriter.JSON).toFile());
        Set<String> seen = new HashSet<>();
        for (JsonNode p : root.path("phases")) {
            String what = p.path("phase").asText() + "/" + p.path("label").asText();
            seen.add(what);
            assertThat(p.path("wrongAnswers").asLong()).as(what).isZero();
            switch (p.path("phase").asText()) {
                case "bulkload" -> {
                    assertThat(p.path("ops").asLong()).as(what).isEqualTo(3000);
                    assertThat(p.path("sstBytes").asLong()).as(what).isPositive();
                }
                case "bulkload-read" -> {
                    assertThat(p.path("found").asLong())
                            .as(what + ": every key present")
                            .isEqualTo(2000);
                    assertThat(p.path("notFound").asLong()).as(what).isZero();
                }
                default -> throw new AssertionError("unexpected phase " + what);
            }
        }
        assertThat(seen)
                .containsExactlyInAnyOrder(
                        "bulkload/bloomkv", "bulkload/rocksdb", "bulkload-read/bloomkv", "bulkload-read/rocksdb");
        if (Files.exists(work)) {
            try (var s = Files.list(work)) {
                assertThat(s.filter(f -> f.getFileName().toString().endsWith(".sst"))
                                .toList())
                        .isEmpty();
            }
        }
    }
}
