package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.workload.Workload;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --child-timeout}: a {@code --reopen} child that hangs is killed with its descendants after the timeout, the
 * run stops with exit code 1 and a message naming the phase, and the killed child holds no database lock.
 */
class ChildTimeoutTest {
    /** A JVM option that stops the child before its main: it waits for a debugger that never comes. */
    private static final String HANG = "-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0";

    private static final List<String> SMALL = List.of(
            "--num",
            "500",
            "--reads",
            "200",
            "--filters",
            "on",
            "--no-progress",
            "--no-fpr-sweep",
            "--write-buffer-size",
            "65536",
            "--cache-size",
            "65536");

    @Test
    void aHungChildIsKilledAndTheRunStops(@TempDir Path tmp) {
        List<String> args = new ArrayList<>(List.of(
                "--reopen",
                "--engines",
                "bloomkv",
                "--workloads",
                "recordsload,recordsread",
                "--child-timeout",
                "1",
                "--child-jvm-option",
                "bloomkv:" + HANG));
        args.addAll(SMALL);
        long t0 = System.nanoTime();
        BenchRun r = BenchRun.of(tmp, args);
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
        assertThat(r.err())
                .startsWith("ERROR: the child process of recordsload on bloomkv, run 0 did not finish within "
                        + "--child-timeout 1 s: killed it")
                .contains("Listening for transport dt_socket"); // the end of its stdout
        assertThat(r.err().lines()).hasSize(1);
        assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(60));
        assertThat(ProcessHandle.current()
                        .descendants()
                        .filter(h ->
                                h.isAlive() && h.info().commandLine().orElse("").contains("--child-db")))
                .as("no child left running")
                .isEmpty();
        // the run stopped at the first phase: no second child, no report
        assertThat(r.out()).doesNotContain("recordsread");
        assertThat(tmp.resolve("report").resolve(io.bloomkv.bench.report.ReportWriter.JSON))
                .doesNotExist();
    }

    @Test
    void theTimeoutIsCheckedAndNeedsReopen(@TempDir Path tmp) {
        List<String> args = new ArrayList<>(List.of("--child-timeout", "5"));
        args.addAll(SMALL);
        BenchRun noReopen = BenchRun.of(tmp, args);
        assertThat(noReopen.exit()).isEqualTo(2);
        assertThat(noReopen.err()).contains("--child-timeout applies to the child processes of --reopen only");
        args = new ArrayList<>(List.of("--reopen", "--child-timeout", "-1"));
        args.addAll(SMALL);
        BenchRun negative = BenchRun.of(tmp, args);
        assertThat(negative.exit()).isEqualTo(2);
        assertThat(negative.err()).contains("--child-timeout must not be negative");
    }

    /**
     * A child that hangs holding the database's lock (it took the lock, then blocks reading CURRENT, a FIFO nobody
     * writes): once the timeout has killed it, the lock is free and the database opens.
     */
    @Test
    void aKilledChildLeavesTheDatabaseUnlocked(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("db");
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
        }
        Path current = dir.resolve("CURRENT");
        byte[] saved = Files.readAllBytes(current);
        Files.delete(current);
        Process mkfifo = new ProcessBuilder("mkfifo", current.toString()).start();
        assertThat(mkfifo.waitFor()).isZero();
        String inode = ":" + Files.getAttribute(dir.resolve("LOCK"), "unix:ino") + " ";

        List<String> parentArgs = new ArrayList<>(List.of("--workloads", "recordsread"));
        parentArgs.addAll(SMALL);
        StringWriter console = new StringWriter();
        CompletableFuture<Void> child = CompletableFuture.runAsync(() -> {
            try {
                ChildProcess.run(
                        parentArgs,
                        List.of(),
                        100,
                        Workload.RECORDSREAD,
                        new EngineSpec("bloomkv", true),
                        dir,
                        0,
                        5,
                        new PrintWriter(console));
            } catch (java.io.IOException e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        boolean seenLocked = false;
        while (!child.isDone() && !seenLocked) {
            seenLocked = locked(inode);
            Thread.sleep(50);
        }
        assertThat(seenLocked).as("the child held the lock while it hung").isTrue();
        assertThatThrownBy(() -> child.get(60, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(ChildProcess.ChildTimeoutException.class)
                .hasMessageContaining("the child process of recordsread on bloomkv, run 0 did not finish within "
                        + "--child-timeout 5 s: killed it");
        assertThat(locked(inode))
                .as("the lock is released once the call returns")
                .isFalse();
        Files.delete(current);
        Files.write(current, saved);
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(db.get("k".getBytes(StandardCharsets.UTF_8))).isEqualTo("v".getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Whether /proc/locks lists a lock on the file with inode {@code inode} (":INODE "). */
    private static boolean locked(String inode) throws java.io.IOException {
        try (Stream<String> lines = Files.lines(Path.of("/proc/locks"))) {
            return lines.anyMatch(l -> l.contains(inode));
        }
    }
}
