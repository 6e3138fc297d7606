package io.bloomkv.bench.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Tiny {@code bench kafka-streams} runs: every topology on both engines at two partition counts (in this JVM), the
 * restored stores checked inside, the report written; and one forked run (a child JVM per measurement).
 */
class KafkaStreamsBenchTest {
    @TempDir
    Path dir;

    /** Runs the command with tiny sizes; {@code overrides} are flag, value pairs replacing the defaults of this test. */
    private JsonNode run(String topology, String... overrides) throws Exception {
        Path report = dir.resolve("report-" + topology);
        java.util.Map<String, String> flags = new java.util.LinkedHashMap<>();
        String[] base = {
            "--topology",
            topology,
            "--records",
            "2000",
            "--words",
            "300",
            "--keys",
            "200",
            "--commit-every",
            "500",
            "--event-hours",
            "0.5",
            "--retention-minutes",
            "20",
            "--rounds",
            "1",
            "--partitions",
            "1,2",
            "--report-dir",
            report.toString(),
            "--db-dir",
            dir.resolve("db-" + topology).toString()
        };
        for (int i = 0; i < base.length; i += 2) {
            flags.put(base[i], base[i + 1]);
        }
        for (int i = 0; i < overrides.length; i += 2) {
            flags.put(overrides[i], overrides[i + 1]);
        }
        java.util.List<String> args = new java.util.ArrayList<>();
        flags.forEach((k, v) -> {
            args.add(k);
            args.add(v);
        });
        int exit = new CommandLine(new KafkaStreamsBench()).execute(args.toArray(new String[0]));
        assertThat(exit).isZero();
        assertThat(report.resolve("kafka-streams-" + topology + ".md")).exists();
        assertThat(report.resolve("kafka-streams-" + topology + ".png")).exists();
        return new ObjectMapper()
                .readTree(report.resolve("kafka-streams-" + topology + ".json").toFile());
    }

    @Test
    void everyTopologyRunsOnBothEnginesAndWritesTheReport() throws Exception {
        for (String topology : new String[] {"kv", "window", "session", "versioned"}) {
            JsonNode json = run(topology, "--fork", "false", "--warmup", "false");
            assertThat(json.get("runs")).as(topology).hasSize(2 * 2);
            for (JsonNode r : json.get("runs")) {
                assertThat(r.get("topology").asText()).isEqualTo(topology);
                assertThat(r.get("processRecordsPerSec").asDouble()).isPositive();
                assertThat(r.get("restoreRecordsPerSec").asDouble()).isPositive();
                assertThat(r.get("changelogRecords").asLong())
                        .as("changelog records restored")
                        .isGreaterThanOrEqualTo(2000);
                assertThat(r.get("rssBytes").asLong()).isPositive();
                JsonNode m = r.get("memory");
                assertThat(m.get("heapCommittedBytes").asLong())
                        .isGreaterThanOrEqualTo(m.get("heapUsedBytes").asLong())
                        .isPositive();
                assertThat(m.get("rssAnonBytes").asLong()
                                + m.get("rssFileBytes").asLong())
                        .as("RssAnon + RssFile")
                        .isPositive()
                        .isLessThanOrEqualTo(r.get("rssBytes").asLong() + (64L << 20));
                // 30 minutes of event time, 20 minutes of retention: one sample, after the first period.
                assertThat(r.get("periods")).as("samples per retention period").hasSize(1);
                assertThat(r.get("periods").get(0).get("diskBytes").asLong()).isPositive();
                // Process CPU time moves in clock ticks (10 ms on Linux): the test's short phases can measure none, so
                // zero is valid here; a negative or missing figure is not.
                assertThat(r.get("processCpuNanosPerRecord").asDouble()).isNotNegative();
                assertThat(r.get("restoreCpuNanosPerRecord").asDouble()).isNotNegative();
                assertThat(r.get("processThreadCpuNanosPerRecord").asDouble())
                        .as("stream-thread CPU per record (a nanosecond clock: the records cost some)")
                        .isPositive();
                assertThat(r.get("restoreThreadCpuNanosPerRecord").asDouble()).isPositive();
                assertThat(r.get("processAllocBytesPerRecord").asDouble()).isPositive();
                assertThat(r.get("restoreAllocBytesPerRecord").asDouble()).isPositive();
                assertThat(r.get("processWrittenBytesPerRecord").asDouble())
                        .as("bytes written per record (none for a store without a log whose memtable never fills)")
                        .isGreaterThanOrEqualTo(0);
                if (topology.equals("kv") || topology.equals("window") || topology.equals("versioned")) {
                    assertThat(r.get("verifiedReads").asLong())
                            .as("restored reads checked")
                            .isPositive();
                }
            }
            assertThat(json.get("runs").get(0).get("engine").asText()).isEqualTo("rocksdb");
            assertThat(json.get("runs").get(1).get("engine").asText())
                    .as("alternating")
                    .isEqualTo("bloomkv");
            assertThat(json.get("runs").get(0).get("partitions").asInt()).isEqualTo(1);
            assertThat(json.get("runs").get(2).get("partitions").asInt()).isEqualTo(2);
            assertThat(json.get("summary")
                            .get("p2")
                            .get("ratios")
                            .get("restorePerRound")
                            .size())
                    .as("one ratio per round")
                    .isEqualTo(1);
            assertThat(Files.readString(dir.resolve("report-" + topology).resolve("kafka-streams-" + topology + ".md")))
                    .contains(
                            "| rocksdb |",
                            "| bloomkv |",
                            "Ratios bloomkv / rocksdb per round",
                            "## 2 partitions",
                            "| store | heap used | heap committed | RssAnon | RssFile |",
                            "After each retention period of event time",
                            "| store | process CPU ns | stream-thread CPU ns | process alloc B | written B |");
        }
    }

    @Test
    void forkedRunsMeasureEachEngineInItsOwnJvm() throws Exception {
        JsonNode json = run("versioned", "--partitions", "2");
        assertThat(json.get("fork").asBoolean()).isTrue();
        assertThat(json.get("runs")).hasSize(2);
        for (JsonNode r : json.get("runs")) {
            assertThat(r.get("rssPeakBytes").asLong())
                    .isGreaterThanOrEqualTo(r.get("rssBytes").asLong())
                    .isPositive();
        }
    }

    @Test
    void theNativeMemorySummaryIsParsedIntoCommittedBytesPerCategory() {
        String text = "\nNative Memory Tracking:\n\n(Omitting categories weighting less than 1KB)\n\n"
                + "Total: reserved=2637013KB, committed=256721KB\n"
                + "       malloc: 31035KB #115219\n"
                + "-                 Java Heap (reserved=2097152KB, committed=131072KB)\n"
                + "                            (mmap: reserved=2097152KB, committed=131072KB)\n"
                + "-                    Thread (reserved=4224KB, committed=4608KB)\n"
                + "-                     Other (reserved=310KB, committed=310KB)\n"
                + "-                 Tracing (reserved=0KB, committed=0KB)\n";
        java.util.Map<String, Long> m = MemoryBreakdown.parseNmt(text);
        assertThat(m)
                .containsEntry("Java Heap", 131072L * 1024)
                .containsEntry("Thread", 4608L * 1024)
                .containsEntry("Other", 310L * 1024)
                .containsEntry("Total", 256721L * 1024)
                .doesNotContainKey("Tracing");
    }

    @Test
    void thePeriodLineShowsTheResidentSetTheHeapAndEachNativeCategoryInMiB() {
        java.util.Map<String, Long> status = new java.util.LinkedHashMap<>();
        status.put("VmRSS", 300L << 20);
        status.put("RssAnon", 200L << 20);
        status.put("RssFile", (100L << 20) + (512L << 10));
        status.put("RssShmem", 1L << 20);
        java.util.Map<String, Long> nmt = new java.util.LinkedHashMap<>();
        nmt.put("Java Heap", 128L << 20);
        nmt.put("Other", 3L << 19);
        nmt.put("Total", 250L << 20);
        assertThat(MemoryBreakdown.periodLine(status, 48L << 20, (64L << 20) + (300L << 10), 128L << 20, nmt))
                .isEqualTo("RSS 300.0 RssAnon 200.0 RssFile 100.5 | heap after last GC 48.0 used 64.3 committed 128.0"
                        + " | Java Heap 128.0 Other 1.5 Total 250.0");
        assertThat(MemoryBreakdown.periodLine(java.util.Map.of(), 0, 0, 0, java.util.Map.of()))
                .as("no /proc, no native memory tracking: zeros and no categories")
                .isEqualTo("RSS 0.0 RssAnon 0.0 RssFile 0.0 | heap after last GC 0.0 used 0.0 committed 0.0 |");
        // The live line has that shape; its figures are measurements, which the benchmark reports and no test bounds.
        String line = MemoryBreakdown.periodLine();
        assertThat(line)
                .as(line)
                .matches("RSS [0-9.]+ RssAnon [0-9.]+ RssFile [0-9.]+ \\| heap after last GC -?[0-9.]+ used [0-9.]+ "
                        + "committed [0-9.]+ \\|( [^|]+ [0-9.]+)*");
    }

    @Test
    void anUnknownTopologyIsRejected() {
        int exit = new CommandLine(new KafkaStreamsBench())
                .execute("--topology", "tree", "--db-dir", dir.resolve("x").toString());
        assertThat(exit).isNotZero();
    }
}
