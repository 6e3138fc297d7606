package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomkv.bench.report.ReportWriter;
import io.bloomkv.bench.workload.PrefixLayout;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The seekprefix workload end to end on both engines, with and without filters: answers, counts and goals. */
class SeekPrefixRunTest {

    @Test
    void prefixSeeksAnswerRightAndTheFilterSkipsAbsentPrefixes(@TempDir Path tmp) throws Exception {
        Path report = tmp.resolve("report");
        int seeks = 2000;
        String out = BenchCli.runOk(
                "--num",
                "40000",
                "--seeks",
                String.valueOf(seeks),
                "--workloads",
                "readmissing,seekprefix",
                "--write-buffer-size",
                "262144",
                "--cache-size",
                "65536",
                "--warmup",
                "1000",
                "--phase-warmup",
                "200",
                "--report-dir",
                report.toString(),
                "--db-dir",
                tmp.resolve("db").toString(),
                "--no-progress",
                "--no-fpr-sweep");
        assertThat(out).contains("seekprefix-hit", "seekprefix-miss");

        JsonNode root =
                new ObjectMapper().readTree(report.resolve(ReportWriter.JSON).toFile());
        Map<String, JsonNode> byPhase = new HashMap<>();
        for (JsonNode p : root.path("phases")) {
            String what = p.path("phase").asText() + "/" + p.path("label").asText();
            byPhase.put(what, p);
            assertThat(p.path("wrongAnswers").asLong()).as(what).isZero();
        }
        for (String label : new String[] {"bloomkv", "rocksdb", "bloomkv-nofilter", "rocksdb-nofilter"}) {
            JsonNode hit = byPhase.get("seekprefix-hit/" + label);
            JsonNode miss = byPhase.get("seekprefix-miss/" + label);
            assertThat(hit).as(label).isNotNull();
            assertThat(hit.path("found").asLong())
                    .as(label + ": every hit iterates its prefix's keys")
                    .isEqualTo((long) seeks * PrefixLayout.KEYS_PER_PREFIX);
            assertThat(miss.path("found").asLong())
                    .as(label + ": absent prefixes hold nothing")
                    .isZero();
            assertThat(miss.path("notFound").asLong()).as(label).isEqualTo(seeks);
            assertThat(hit.path("tableEntries").asLong())
                    .as(label + ": the prefix layout's keys, stored once")
                    .isEqualTo(40000);
        }
        for (String engine : new String[] {"bloomkv", "rocksdb"}) {
            JsonNode with = byPhase.get("seekprefix-miss/" + engine);
            JsonNode without = byPhase.get("seekprefix-miss/" + engine + "-nofilter");
            assertThat(with.path("filterChecks").asLong())
                    .as(engine + ": absent-prefix seeks ask the prefix filters")
                    .isGreaterThanOrEqualTo(seeks);
            assertThat(with.path("filterUseful").asLong())
                    .as(engine + ": most probes rule a table out")
                    .isGreaterThan(with.path("filterChecks").asLong() * 9 / 10);
            assertThat(with.path("blockReadsPerOp").asDouble())
                    .as(engine + ": the filter saves block reads")
                    .isLessThan(without.path("blockReadsPerOp").asDouble());
        }
        assertThat(byPhase.get("seekprefix-miss/bloomkv")
                        .path("blockReadsPerOp")
                        .asDouble())
                .as("bloomkv reads almost no block for an absent prefix")
                .isLessThan(0.05);
        assertThat(root.path("goals").toString())
                .contains(
                        "seekprefix-hit ops/s",
                        "seekprefix-miss ops/s",
                        "block reads per seek",
                        "with prefix filters / without");
    }
}
