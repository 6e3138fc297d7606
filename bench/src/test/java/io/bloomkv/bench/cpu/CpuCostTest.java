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

/** A tiny cpu-cost run: one line per engine with finite, positive costs. */
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
        assertThat(lines).hasSize(3); // header, bloomkv, rocksdb
        for (String line : lines.subList(1, 3)) {
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
        }
    }
}
