package io.bloomkv.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.engine.EngineCounters;
import io.bloomkv.bench.engine.TableSummary;
import io.bloomkv.bench.workload.PhaseResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The goals a report judges a run by: the default job's below 10M keys, the scale goals of the run's mode from 10M. */
class GoalTest {
    private static final TableSummary TABLES =
            new TableSummary(20, 10_000_000, 12_500_000, 1_200_000_000L, 0.01, List.of());

    private static BenchConfig config(String... flags) {
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd).parseArgs(flags);
        return cmd.config(Path.of("unused"));
    }

    /** A phase of one run: ops/s, and for readmissing 4 filters per get with 0.04 block reads (0.04 predicted). */
    private static PhaseResult phase(
            String name, String engine, int run, double opsPerSec, double blockReadsPerGet, long tableBytesWritten) {
        return phase(name, engine, run, opsPerSec, blockReadsPerGet, tableBytesWritten, TABLES);
    }

    private static PhaseResult phase(
            String name,
            String engine,
            int run,
            double opsPerSec,
            double blockReadsPerGet,
            long tableBytesWritten,
            TableSummary tables) {
        long ops = 200_000;
        boolean fill = name.equals("fillrandom");
        EngineCounters c = new EngineCounters(
                fill ? 0 : 4 * ops,
                fill ? 0 : 4 * ops - 8_000,
                fill ? 0 : 8_000,
                0,
                Math.round(blockReadsPerGet * ops),
                0,
                tableBytesWritten,
                0);
        return new PhaseResult(
                name,
                name,
                engine,
                true,
                engine + " (filters on)",
                fill ? "write" : "read",
                ops,
                ops / opsPerSec,
                opsPerSec,
                0.5,
                2.0,
                5.0,
                9.0,
                0,
                ops,
                0,
                0,
                c,
                tables,
                fill ? 1_000_000_000L : 0,
                "off",
                run,
                fill ? Double.NaN : 4.0 * ops,
                fill ? Double.NaN : 4.0 * ops - 8_000,
                0);
    }

    /**
     * Three runs whose per-run bloomkv / RocksDB ratios are the given ones (their median is the middle one), for
     * fillrandom, readrandom and readmissing; bloomkv's absent gets at {@code missingOps} ops/s.
     */
    private static List<PhaseResult> runs(
            double fill,
            double random,
            double missing,
            double missingOps,
            double blockReadsPerGet,
            long bloomkvWritten,
            long rocksdbWritten) {
        List<PhaseResult> out = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            double spread = 1 + 0.1 * (run - 1); // 0.9, 1.0, 1.1 times the ratio: the median is the ratio itself
            out.add(phase("fillrandom", "bloomkv", run, 100_000 * fill * spread, 0, bloomkvWritten));
            out.add(phase("fillrandom", "rocksdb", run, 100_000, 0, rocksdbWritten));
            out.add(phase("readrandom", "bloomkv", run, 100_000 * random * spread, 1, 0));
            out.add(phase("readrandom", "rocksdb", run, 100_000, 1, 0));
            out.add(phase("readmissing", "bloomkv", run, missingOps * spread, blockReadsPerGet, 0));
            out.add(phase("readmissing", "rocksdb", run, missingOps / missing, 0.04, 0));
        }
        return out;
    }

    private static Map<String, Goal> byName(List<Goal> goals) {
        return goals.stream().collect(Collectors.toMap(Goal::name, Function.identity()));
    }

    @Test
    void belowTenMillionKeysTheDefaultJobsGoals() {
        List<Goal> goals = Goal.evaluate(runs(1.1, 1.25, 2.5, 1_000_000, 0.04, 3, 3), config("--num", "1000000"));
        Map<String, Goal> g = byName(goals);
        assertThat(g)
                .containsKeys(
                        "readmissing ops/s bloomkv / rocksdb >= 2.0x",
                        "readrandom ops/s bloomkv / rocksdb >= 1.2x",
                        "fillrandom ops/s bloomkv / rocksdb >= 1.0x");
        assertThat(goals).allMatch(Goal::met);
        assertThat(goals).noneMatch(x -> x.name().contains("absent get"));
    }

    @Test
    void tenMillionMatchedKeysAreJudgedByTheScaleGoals() {
        // readmissing 2.9x meets the default job's 2x but not the scale goal's 3x; 2 µs per absent get is over budget
        List<Goal> goals = Goal.evaluate(runs(1.25, 1.35, 2.9, 500_000, 0.04, 3, 3), config("--num", "10000000"));
        Map<String, Goal> g = byName(goals);
        assertThat(g.get("fillrandom ops/s bloomkv / rocksdb >= 1.2x").met()).isTrue();
        assertThat(g.get("readrandom ops/s bloomkv / rocksdb >= 1.3x").met()).isTrue();
        Goal missing = g.get("readmissing ops/s bloomkv / rocksdb >= 3.0x");
        assertThat(missing.measured()).isCloseTo(2.9, within(1e-9));
        assertThat(missing.met()).isFalse();
        Goal budget = g.get("readmissing: bloomkv mean absent get (µs) <= filters asked x 100 ns + 150 ns");
        assertThat(budget.target()).as("4 filters per get: 4 x 100 + 150 ns").isCloseTo(0.55, within(1e-9));
        assertThat(budget.measured()).as("the median run's 500,000 gets/s").isCloseTo(2.0, within(1e-9));
        assertThat(budget.met()).isFalse();
        assertThat(g).doesNotContainKey("readmissing ops/s bloomkv / rocksdb >= 2.0x");
        // a faster absent get (2.5M/s = 0.4 µs) is inside the budget
        Goal fast = byName(Goal.evaluate(runs(1.25, 1.35, 3.1, 2_500_000, 0.04, 3, 3), config("--num", "10000000")))
                .get("readmissing: bloomkv mean absent get (µs) <= filters asked x 100 ns + 150 ns");
        assertThat(fast.met()).isTrue();
    }

    @Test
    void fiftyMillionKeysAllowTheRatiosTenPercent() {
        Map<String, Goal> g =
                byName(Goal.evaluate(runs(1.1, 1.2, 2.8, 500_000, 0.04, 3, 3), config("--num", "50000000")));
        assertThat(g.get("fillrandom ops/s bloomkv / rocksdb >= 1.08x").met()).isTrue();
        assertThat(g.get("readrandom ops/s bloomkv / rocksdb >= 1.17x").met()).isTrue();
        assertThat(g.get("readmissing ops/s bloomkv / rocksdb >= 2.7x").met()).isTrue();
        Map<String, Goal> low =
                byName(Goal.evaluate(runs(1.05, 1.2, 2.8, 500_000, 0.04, 3, 3), config("--num", "50000000")));
        assertThat(low.get("fillrandom ops/s bloomkv / rocksdb >= 1.08x").met()).isFalse();
    }

    @Test
    void ownDefaultsCompareWriteAmplification() {
        Map<String, Goal> g = byName(Goal.evaluate(
                runs(1.05, 1.1, 2.0, 1_000_000, 0.04, 2_240_000_000L, 3_430_000_000L),
                config("--num", "10000000", "--defaults")));
        assertThat(g.get("fillrandom ops/s bloomkv / rocksdb >= 1.0x").met()).isTrue();
        assertThat(g.get("readmissing ops/s bloomkv / rocksdb >= 1.0x").met()).isTrue();
        Goal wa = g.get("fillrandom: bloomkv write amplification <= RocksDB's");
        assertThat(wa.measured()).isCloseTo(2.24, within(1e-9));
        assertThat(wa.target()).isCloseTo(3.43, within(1e-9));
        assertThat(wa.met()).isTrue();
        Goal worse = byName(Goal.evaluate(
                        runs(1.05, 1.1, 2.0, 1_000_000, 0.04, 3_500_000_000L, 3_430_000_000L),
                        config("--num", "10000000", "--defaults")))
                .get("fillrandom: bloomkv write amplification <= RocksDB's");
        assertThat(worse.met()).isFalse();
        // at 50M within 10%: 3.5 <= 1.1 x 3.43
        Goal large = byName(Goal.evaluate(
                        runs(1.05, 1.1, 2.0, 1_000_000, 0.04, 3_500_000_000L, 3_430_000_000L),
                        config("--num", "50000000", "--defaults")))
                .get("fillrandom: bloomkv write amplification <= 1.1x RocksDB's");
        assertThat(large.met()).isTrue();
    }

    /**
     * {@code runs(...)} plus the unsettled pass of {@code --no-settle}: per-run ratios around {@code random} and
     * {@code missing}; RocksDB's tables after the fill take {@code rocksdbSst} bytes (bloomkv's 1.2 GB).
     */
    private static List<PhaseResult> unsettledRuns(double fill, double random, double missing, long rocksdbSst) {
        TableSummary rocks = new TableSummary(20, 10_000_000, 12_500_000, rocksdbSst, 0.01, List.of());
        List<PhaseResult> out = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            double spread = 1 + 0.1 * (run - 1);
            out.add(phase("fillrandom", "bloomkv", run, 100_000 * fill * spread, 0, 3));
            out.add(phase("fillrandom", "rocksdb", run, 100_000, 0, 3, rocks));
            out.add(phase("readrandom-unsettled", "bloomkv", run, 100_000 * random * spread, 1, 0));
            out.add(phase("readrandom-unsettled", "rocksdb", run, 100_000, 1, 0));
            out.add(phase("readmissing-unsettled", "bloomkv", run, 100_000 * missing * spread, 0.04, 0));
            out.add(phase("readmissing-unsettled", "rocksdb", run, 100_000, 0.04, 0));
        }
        return out;
    }

    @Test
    void noSettleRunsAreJudgedOnTheReadsTimedRightAfterTheLoad() {
        Map<String, Goal> g = byName(Goal.evaluate(
                unsettledRuns(1.25, 1.28, 2.6, 1_200_000_000L), config("--num", "10000000", "--no-settle")));
        Goal random = g.get("readrandom-unsettled ops/s bloomkv / rocksdb >= 1.3x");
        assertThat(random.measured()).isCloseTo(1.28, within(1e-9));
        assertThat(random.met()).isFalse();
        assertThat(g.get("readmissing-unsettled ops/s bloomkv / rocksdb >= 2.5x")
                        .met())
                .isTrue();
        assertThat(g.get("fillrandom ops/s bloomkv / rocksdb >= 1.2x").met()).isTrue();

        // own defaults: each >= 1.2x (the fill's goal raised from 1x) and the disk <= 1.1x RocksDB's
        Map<String, Goal> d = byName(Goal.evaluate(
                unsettledRuns(1.15, 1.28, 2.6, 1_000_000_000L),
                config("--num", "10000000", "--defaults", "--no-settle")));
        assertThat(d.get("fillrandom ops/s bloomkv / rocksdb >= 1.2x").met()).isFalse();
        assertThat(d).doesNotContainKey("fillrandom ops/s bloomkv / rocksdb >= 1.0x");
        assertThat(d.get("readrandom-unsettled ops/s bloomkv / rocksdb >= 1.2x").met())
                .isTrue();
        assertThat(d.get("readmissing-unsettled ops/s bloomkv / rocksdb >= 1.2x")
                        .met())
                .isTrue();
        Goal disk = d.get("fillrandom: bloomkv disk after the load <= 1.1x RocksDB's");
        assertThat(disk.measured()).isCloseTo(1.2, within(1e-9));
        assertThat(disk.met()).isFalse();
        Goal close = byName(Goal.evaluate(
                        unsettledRuns(1.25, 1.28, 2.6, 1_150_000_000L),
                        config("--num", "10000000", "--defaults", "--no-settle")))
                .get("fillrandom: bloomkv disk after the load <= 1.1x RocksDB's");
        assertThat(close.met()).isTrue();
        // a settled run keeps the 1x fill goal of own defaults and has no unsettled goals
        Map<String, Goal> settled = byName(
                Goal.evaluate(runs(1.05, 1.1, 2.0, 1_000_000, 0.04, 3, 3), config("--num", "10000000", "--defaults")));
        assertThat(settled).containsKey("fillrandom ops/s bloomkv / rocksdb >= 1.0x");
        assertThat(settled.keySet()).noneMatch(k -> k.contains("unsettled") || k.contains("disk after"));
    }

    @Test
    void directReadsCompareDeviceReadsWithTheFiltersTheory() {
        // 8,000 predicted false positives in 200,000 gets: 0.04 per get
        Map<String, Goal> g = byName(
                Goal.evaluate(runs(1.0, 1.1, 3.2, 600_000, 0.042, 3, 3), config("--num", "10000000", "--direct")));
        assertThat(g.get("readrandom ops/s bloomkv / rocksdb >= 1.0x").met()).isTrue();
        assertThat(g.get("readmissing ops/s bloomkv / rocksdb >= 3.0x").met()).isTrue();
        assertThat(g).doesNotContainKey("fillrandom ops/s bloomkv / rocksdb >= 1.2x");
        Goal device = g.get("readmissing: bloomkv device reads per absent get within 10% of the filters' theory");
        assertThat(device.measured()).isCloseTo(1.05, within(1e-9));
        assertThat(device.met()).isTrue();
        Goal off = byName(Goal.evaluate(
                        runs(1.0, 1.1, 3.2, 600_000, 0.05, 3, 3), config("--num", "10000000", "--direct")))
                .get("readmissing: bloomkv device reads per absent get within 10% of the filters' theory");
        assertThat(off.measured()).isCloseTo(1.25, within(1e-9));
        assertThat(off.met()).isFalse();
    }

    @Test
    void theHeadingNamesTheScaleAndItsMode() {
        assertThat(Goal.title(config("--num", "1000000"))).isEqualTo("Goals");
        assertThat(Goal.title(config("--num", "10000000")))
                .isEqualTo("Goals at scale (10,000,000 keys, matched options)");
        assertThat(Goal.title(config("--num", "50000000", "--defaults")))
                .isEqualTo("Goals at scale (50,000,000 keys, each engine on its own defaults)");
        assertThat(Goal.title(config("--num", "10000000", "--direct")))
                .isEqualTo("Goals at scale (10,000,000 keys, O_DIRECT table reads on both)");
        assertThat(Goal.title(config("--num", "10000000", "--mmap-reads=bloomkv")))
                .isEqualTo(
                        "Goals at scale (10,000,000 keys, matched options, table reads bloomkv mmap, rocksdb pread)");
        assertThat(Goal.title(config("--num", "10000000", "--mmap-reads")))
                .isEqualTo("Goals at scale (10,000,000 keys, matched options)");
    }
}
