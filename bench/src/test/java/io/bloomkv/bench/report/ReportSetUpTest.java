package io.bloomkv.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.engine.BenchEngine;
import io.bloomkv.bench.engine.EngineFactory;
import io.bloomkv.bench.engine.EngineSettings;
import io.bloomkv.bench.engine.FilterBudgetSpec;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The report's set-up says how the figures were measured: a --reopen run's phases ran in fresh processes without any
 * warm-up (unsettled figures), a --no-settle run's first pass before settling, the records family with its own values
 * and key choice; results.json records those flags and the warm-ups the measured phases really had.
 */
class ReportSetUpTest {

    private static BenchConfig config(String... flags) {
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd).parseArgs(flags);
        return cmd.config(Path.of("unused"));
    }

    private static BenchReport report(BenchConfig cfg) {
        return new BenchReport(
                Instant.EPOCH, 1, Machine.current(), cfg, Map.of(), null, List.of(), List.of(), List.of());
    }

    private static String markdown(BenchConfig cfg) {
        return ReportWriter.markdown(report(cfg), List.of(), List.of());
    }

    private static JsonNode config(BenchConfig cfg) {
        return new ObjectMapper().valueToTree(ReportWriter.toJson(report(cfg))).path("config");
    }

    @Test
    void aReopenRunSaysItsPhasesRanInFreshProcessesWithoutWarmUp() {
        BenchConfig cfg = config("--reopen", "--workloads", "records", "--filters", "on");
        String md = markdown(cfg);
        assertThat(md)
                .contains("fresh JVM (--reopen)", "no warm-up of any kind", "unsettled")
                .doesNotContain("(JIT warm-up)")
                .contains("records of 1,090 bytes", "scrambled Zipfian");
        JsonNode c = config(cfg);
        assertThat(c.path("reopen").asBoolean()).isTrue();
        assertThat(c.path("noSettle").asBoolean()).isFalse();
        assertThat(c.path("warmup").asLong()).isZero();
        assertThat(c.path("phaseWarmup").asLong()).isZero();
    }

    @Test
    void aSettledRunSaysItsWarmUpsAndSettling() {
        BenchConfig cfg = config("--workloads", "readrandom");
        String md = markdown(cfg);
        assertThat(md)
                .contains("200,000 untimed operations (JIT warm-up)", "flushes and waits for compactions")
                .doesNotContain("--reopen", "--no-settle", "records of");
        JsonNode c = config(cfg);
        assertThat(c.path("reopen").asBoolean()).isFalse();
        assertThat(c.path("warmup").asLong()).isEqualTo(200_000);
        assertThat(c.path("phaseWarmup").asLong()).isEqualTo(100_000);
        assertThat(c.path("rateLimit").asLong()).isZero();
        assertThat(c.path("filterBudget").asText()).isEmpty();
    }

    @Test
    void aNoSettleRunSaysWhichPhasesRanBeforeSettling() {
        BenchConfig cfg = config(
                "--no-settle",
                "--workloads",
                "fillrandom,readrandom",
                "--rate-limit",
                "1048576",
                "--filter-budget",
                "25%");
        String md = markdown(cfg);
        assertThat(md)
                .contains("with --no-settle", "<phase>-unsettled", "no flush, no wait for compactions")
                .doesNotContain("flushes and waits for compactions before it measures")
                .contains("limited to 1,048,576 bytes per second (--rate-limit)")
                .contains("Filter memory budget (--filter-budget): 25.0%");
        JsonNode c = config(cfg);
        assertThat(c.path("noSettle").asBoolean()).isTrue();
        assertThat(c.path("rateLimit").asLong()).isEqualTo(1_048_576);
        assertThat(c.path("filterBudget").asText()).isEqualTo("25.0%");
    }

    /** On their own defaults RocksDB gets no filter budget (its budgeted set-up is the matched one's): the report says so. */
    @Test
    void aFilterBudgetOnTheEnginesOwnDefaultsIsSaidToBeBloomkvsAlone() {
        assertThat(markdown(config("--defaults", "--filter-budget", "25%", "--workloads", "readmissing")))
                .contains("Filter memory budget (--filter-budget): 25.0% for bloomkv only")
                .doesNotContain("each engine's set-up below says how it spends it")
                .contains("each engine its own way (bloomkv mapped, RocksDB pread)");
    }

    /** bloomkv's description names its rate limit and filter budget, as RocksDB's does. */
    @Test
    void bloomkvsDescriptionNamesItsRateLimitAndFilterBudget(@TempDir Path dir) throws Exception {
        EngineSettings plain = new EngineSettings(true, 10, "BLOCKED", 4096, 64 * 1024, 64L << 20, false);
        try (BenchEngine e = EngineFactory.open(
                "bloomkv",
                dir.resolve("a"),
                plain.withRateLimit(1 << 20).withFilterBudget(FilterBudgetSpec.parse("2m")))) {
            assertThat(e.describe()).contains("rate limit 1048576 B/s", "filter memory budget 2097152 B");
        }
        try (BenchEngine e = EngineFactory.open("bloomkv", dir.resolve("b"), plain)) {
            assertThat(e.describe()).doesNotContain("rate limit", "filter memory budget");
        }
    }
}
