package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomkv.bench.report.ReportWriter;
import io.bloomkv.bench.workload.RecordSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tiny runs of --no-settle, --reopen and the records family: their phases, counts and answers. */
class UnsettledModesTest {
    private static final String[] TINY = {
        "--write-buffer-size",
        "65536",
        "--cache-size",
        "65536",
        "--no-progress",
        "--no-fpr-sweep",
        "--warmup",
        "0",
        "--phase-warmup",
        "100",
        "--filters",
        "on"
    };

    private static JsonNode run(Path tmp, String... args) throws Exception {
        Path report = tmp.resolve("report");
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of(TINY));
        all.addAll(List.of(
                "--report-dir", report.toString(), "--db-dir", tmp.resolve("db").toString()));
        BenchCli.runOk(all.toArray(String[]::new));
        return new ObjectMapper()
                .readTree(report.resolve(ReportWriter.JSON).toFile())
                .path("phases");
    }

    private static Map<String, JsonNode> byPhaseAndEngine(JsonNode phases) {
        Map<String, JsonNode> out = new HashMap<>();
        for (JsonNode p : phases) {
            assertThat(p.path("wrongAnswers").asLong())
                    .as(p.path("phase") + "/" + p.path("label"))
                    .isZero();
            out.put(p.path("phase").asText() + "/" + p.path("engine").asText(), p);
        }
        return out;
    }

    @Test
    void noSettleMeasuresEachReadPhaseUnsettledThenSettled(@TempDir Path tmp) throws Exception {
        JsonNode phases = run(
                tmp,
                "--num",
                "6000",
                "--reads",
                "2000",
                "--no-settle",
                "--workloads",
                "fillrandom,readrandom,readmissing");
        Map<String, JsonNode> p = byPhaseAndEngine(phases);
        // fillrandom + (readrandom, readmissing) x (unsettled, settled), on both engines
        assertThat(phases.size()).isEqualTo(5 * 2);
        for (String e : List.of("bloomkv", "rocksdb")) {
            assertThat(p.get("readrandom-unsettled/" + e).path("found").asLong())
                    .isEqualTo(2000);
            assertThat(p.get("readrandom/" + e).path("found").asLong()).isEqualTo(2000);
            assertThat(p.get("readmissing-unsettled/" + e).path("notFound").asLong())
                    .isEqualTo(2000);
            assertThat(p.get("readmissing/" + e).path("notFound").asLong()).isEqualTo(2000);
        }
    }

    @Test
    void recordsFamilyRunsEveryMixOnTheDatabaseTheLoadLeft(@TempDir Path tmp) throws Exception {
        JsonNode phases = run(
                tmp,
                "--num",
                "3000",
                "--reads",
                "1500",
                "--threads",
                "2",
                "--value-compressibility",
                "0.5",
                "--workloads",
                "records");
        Map<String, JsonNode> p = byPhaseAndEngine(phases);
        assertThat(phases.size()).isEqualTo(7 * 2);
        for (String e : List.of("bloomkv", "rocksdb")) {
            JsonNode load = p.get("recordsload/" + e);
            assertThat(load.path("ops").asLong()).isEqualTo(3000);
            assertThat(load.path("tableEntries").asLong())
                    .as("every record flushed once")
                    .isEqualTo(3000);
            assertThat(p.get("recordsread/" + e).path("found").asLong()).isEqualTo(1500);
            // ~5% inserts of fresh records, the rest reads that all find their record
            JsonNode latest = p.get("recordslatest/" + e);
            assertThat(latest.path("found").asLong()
                            + latest.path("backgroundWrites").asLong())
                    .isEqualTo(1500);
            assertThat(latest.path("backgroundWrites").asLong()).isBetween(30L, 150L);
            JsonNode rmw = p.get("recordsrmw/" + e);
            assertThat(rmw.path("found").asLong())
                    .as("a read-modify-write reads too")
                    .isEqualTo(1500);
            assertThat(rmw.path("backgroundWrites").asLong()).isBetween(600L, 900L);
            JsonNode scan = p.get("recordsscan/" + e);
            assertThat(scan.path("found").asLong())
                    .as("entries seen by ~1425 scans of 1-100 records")
                    .isBetween(1425L * 30, 1425L * 70);
        }
    }

    @Test
    void reopenRunsEachPhaseInAFreshProcessOnTheDatabaseLeft(@TempDir Path tmp) throws Exception {
        JsonNode phases = run(
                tmp,
                "--num",
                "2000",
                "--reads",
                "500",
                "--reopen",
                "--no-settle",
                "--engines",
                "bloomkv,rocksdb",
                "--workloads",
                "recordsload,recordsupdate,recordsread");
        Map<String, JsonNode> p = byPhaseAndEngine(phases);
        assertThat(phases.size()).isEqualTo(3 * 2);
        for (String e : List.of("bloomkv", "rocksdb")) {
            assertThat(p.get("recordsload/" + e).path("ops").asLong()).isEqualTo(2000);
            // the read phase's process sees the updates the previous process wrote (its WAL replayed or flushed)
            assertThat(p.get("recordsupdate-unsettled/" + e)
                            .path("backgroundWrites")
                            .asLong())
                    .isPositive();
            assertThat(p.get("recordsread-unsettled/" + e).path("found").asLong())
                    .isEqualTo(500);
        }
    }

    @Test
    void recordsAreTenNamedFieldsOfAbout1KbAndCheckThemselves() {
        RecordSource r = new RecordSource(7, 0.5);
        byte[] v = r.value(42, 0);
        assertThat(v).hasSize(RecordSource.RECORD_BYTES);
        assertThat(new String(v, 1, 6, java.nio.charset.StandardCharsets.US_ASCII))
                .isEqualTo("field0");
        assertThat(r.matches(v, 42, 0)).isTrue();
        assertThat(r.matches(v, 42, 3)).isFalse();
        assertThat(r.matches(v, 43, 0)).isFalse();
        v[500] ^= 1;
        assertThat(r.matches(v, 42, 0)).isFalse();
    }
}
