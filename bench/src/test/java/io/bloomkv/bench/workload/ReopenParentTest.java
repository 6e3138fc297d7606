package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.BenchConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The parent of a --reopen run measures nothing itself: it preloads (untimed) and launches a fresh process per phase,
 * so it runs no JIT warm-up of its own (docs/bench.md: --warmup warms the JIT once per engine unless --reopen).
 */
class ReopenParentTest {
    @Test
    void theParentOfAReopenRunDoesNoWarmUp(@TempDir Path dir) throws Exception {
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd)
                .parseArgs(
                        "--num",
                        "500",
                        "--reads",
                        "100",
                        "--workloads",
                        "readrandom",
                        "--filters",
                        "on",
                        "--warmup",
                        "300",
                        "--reopen",
                        "--write-buffer-size",
                        "65536",
                        "--fpr-sweep=false",
                        "--progress=false",
                        "--report-dir",
                        dir.resolve("report").toString());
        BenchConfig cfg = cmd.config(dir.resolve("work"));
        CountingProgress progress = new CountingProgress();
        List<String> launched = new ArrayList<>();
        new BenchRunner(cfg, progress, null, (w, spec, db, run) -> {
                    assertThat(Files.isDirectory(db))
                            .as("the preloaded database")
                            .isTrue();
                    launched.add(w + " " + spec.label());
                    return List.of();
                })
                .run();
        assertThat(launched).containsExactly("readrandom bloomkv", "readrandom rocksdb");
        assertThat(progress.tasks()).as(progress.log()).noneMatch(t -> t.contains("warm-up"));
        assertThat(progress.tasks()).as(progress.log()).anyMatch(t -> t.contains("preload"));
    }
}
