package io.bloomkv.bench.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.BenchCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Tiny cpu-cost runs: one line per engine with finite, positive costs. */
class CpuCostTest {

    @Test
    void printsCostsPerOperationForEachEngine(@TempDir Path tmp) throws Exception {
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd)
                .parseArgs(
                        "--num",
                        "3000",
                        "--reads",
                        "2000",
                        "--threads",
                        "2",
                        "--workloads",
                        "records",
                        "--write-buffer-size",
                        "262144",
                        "--filters",
                        "on");
        StringWriter text = new StringWriter();
        CpuCost.run(cmd.config(tmp), new PrintWriter(text));
        List<String> lines = text.toString().lines().toList();
        assertThat(lines).hasSize(4); // order, header, bloomkv, rocksdb
        assertThat(lines.get(0)).isEqualTo("puts in key order");
        for (String line : lines.subList(2, 4)) {
            String[] f = line.trim().split("\\s+");
            assertThat(f[0]).isIn("bloomkv", "rocksdb");
            double putAlloc = Double.parseDouble(f[3]);
            assertThat(putAlloc).as(line).isGreaterThan(1000); // at least the ~1 KB record the harness builds
            assertThat(Double.parseDouble(f[2])).as(line).isPositive();
            assertThat(Double.parseDouble(f[5]))
                    .as("table MiB written: " + line)
                    .isGreaterThan(3000 * 1000 / 1048576.0);
            assertThat(Double.parseDouble(f[7])).as("get cpu ns: " + line).isPositive();
            assertThat(Double.parseDouble(f[8])).as("get alloc B: " + line).isGreaterThan(1000); // the record returned
            assertThat(Double.parseDouble(f[9])).as("miss cpu ns: " + line).isPositive();
            assertThat(Double.parseDouble(f[10])).as("miss alloc B: " + line).isPositive(); // at least the key built
            assertThat(Double.parseDouble(f[11])).as("filter KiB: " + line).isPositive();
            assertThat(Double.parseDouble(f[12])).as("stall ms: " + line).isNotNegative();
            assertThat(Double.parseDouble(f[13]))
                    .as("process cpu per put: " + line)
                    .isPositive();
        }
    }

    @Test
    void readsFollowTheDistributionFlag(@TempDir Path tmp) throws Exception {
        java.util.Map<String, Integer> hottest = new java.util.HashMap<>();
        for (String dist : new String[] {"uniform", "zipfian", "latest"}) {
            BenchCommand cmd = new BenchCommand();
            new CommandLine(cmd).parseArgs("--num", "10000", "--reads", "20000", "--distribution", dist);
            io.bloomkv.bench.BenchConfig cfg = cmd.config(tmp);
            io.bloomkv.bench.workload.KeySpace keys = new io.bloomkv.bench.workload.KeySpace(cfg.num(), cfg.keySize());
            long[] ids = CpuCost.readIds(cfg, keys, null);
            assertThat(ids).hasSize(20000);
            assertThat(java.util.Arrays.stream(ids).allMatch(keys::isLoaded)).isTrue();
            assertThat(CpuCost.readIds(cfg, keys, null)).as("seeded").isEqualTo(ids);
            java.util.Map<Long, Integer> counts = new java.util.HashMap<>();
            for (long id : ids) {
                counts.merge(id, 1, Integer::sum);
            }
            hottest.put(dist, java.util.Collections.max(counts.values()));
            if (dist.equals("latest")) {
                long late = java.util.Arrays.stream(ids)
                        .filter(id -> id >= 2 * 9000)
                        .count();
                assertThat(late)
                        .as("latest: the last tenth of the load is read most")
                        .isGreaterThan(ids.length / 2);
            }
        }
        // 2 reads per key on average: uniform's hottest key is read a handful of times, Zipfian's hundreds
        assertThat(hottest.get("uniform")).isLessThan(20);
        assertThat(hottest.get("zipfian")).isGreaterThan(200);
    }

    /** With fillrandom (and no fillseq) named, the puts go in the fillrandom order, every key once. */
    @Test
    void fillrandomPutsInTheShuffledOrder(@TempDir Path tmp) throws Exception {
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd)
                .parseArgs(
                        "--num",
                        "5000",
                        "--reads",
                        "5000",
                        "--engines",
                        "bloomkv",
                        "--workloads",
                        "fillrandom",
                        "--write-buffer-size",
                        "65536",
                        "--filters",
                        "on");
        StringWriter text = new StringWriter();
        CpuCost.run(cmd.config(tmp), new PrintWriter(text));
        List<String> lines = text.toString().lines().toList();
        assertThat(lines).hasSize(3); // order, header, bloomkv
        assertThat(lines.get(0)).isEqualTo("puts in fillrandom order");
        String[] f = lines.get(2).trim().split("\\s+");
        assertThat(f[0]).isEqualTo("bloomkv");
        // the gets of loaded keys found every key (a missing one fails the run); the small write buffer made tables
        assertThat(Double.parseDouble(f[5])).as("table MiB written").isGreaterThan(5000 * 100 / 1048576.0);
        assertThat(Double.parseDouble(f[12])).as("stall ms").isNotNegative();
    }
}
