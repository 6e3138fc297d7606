package io.bloomkv.bench.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** A tiny {@code bench kafka-streams} run: both stores process and restore (counts verified inside), the report is written. */
class KafkaStreamsBenchTest {
    @TempDir
    Path dir;

    @Test
    void tinyRunOnBothStoresWritesTheReport() throws Exception {
        Path report = dir.resolve("report");
        int exit = new CommandLine(new KafkaStreamsBench()).execute("--records", "3000", "--words", "300", "--commit-every", "500",
                "--rounds", "2", "--report-dir", report.toString(), "--db-dir", dir.resolve("db").toString());
        assertThat(exit).isZero();
        assertThat(report.resolve("kafka-streams.md")).exists();
        assertThat(report.resolve("kafka-streams.png")).exists();
        JsonNode json = new ObjectMapper().readTree(report.resolve("kafka-streams.json").toFile());
        assertThat(json.get("runs")).hasSize(4);
        for (JsonNode run : json.get("runs")) {
            assertThat(run.get("processRecordsPerSec").asDouble()).isPositive();
            assertThat(run.get("restoreRecordsPerSec").asDouble()).isPositive();
            assertThat(run.get("restoredEntries").asLong()).as("restored words checked").isPositive();
        }
        assertThat(json.get("runs").get(0).get("engine").asText()).isEqualTo("rocksdb");
        assertThat(json.get("runs").get(1).get("engine").asText()).as("alternating").isEqualTo("bloomkv");
        JsonNode bloomkv = json.get("runs").get(1);
        assertThat(bloomkv.get("offHeapWhat").asText()).isEqualTo("filters");
        assertThat(Files.readString(report.resolve("kafka-streams.md"))).contains("| rocksdb |", "| bloomkv |", "Goal (median of the per-round ratios", "processing >= 1.0x");
        assertThat(json.get("summary").get("ratios").get("process").asDouble()).isPositive();
        assertThat(json.get("summary").get("ratios").get("restorePerRound").size()).as("one ratio per round")
                .isEqualTo(json.get("runs").size() / 2);
    }
}
