package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --child-jvm-option ENGINE:OPTION}: JVM options for one engine's {@code --reopen} children only. */
class ChildJvmOptionTest {

    @Test
    void valuesAreGroupedByEngineInTheOrderGiven() {
        Map<String, List<String>> m = ChildProcess.parseEngineJvmOptions(
                List.of("bloomkv:-XX:AOTCache=b.aot", "rocksdb:-Xss2m", "BloomKV: -Dx=1"));
        assertThat(m).containsOnlyKeys("bloomkv", "rocksdb");
        assertThat(m.get("bloomkv")).containsExactly("-XX:AOTCache=b.aot", "-Dx=1");
        assertThat(m.get("rocksdb")).containsExactly("-Xss2m");
        assertThat(ChildProcess.parseEngineJvmOptions(List.of())).isEmpty();
    }

    @Test
    void otherFormsAreRefused() {
        for (String bad : List.of("-Xss2m", "leveldb:-Xss2m", "bloomkv:Xss2m", "bloomkv:", "bloomkv:-", ":-Xss2m")) {
            assertThatThrownBy(() -> ChildProcess.parseEngineJvmOptions(List.of(bad)))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("ENGINE:OPTION");
        }
    }

    @Test
    void theEnginesOptionsFollowTheInheritedFlagsAndPrecedeTheMainClass() {
        List<String> inherited = ManagementFactory.getRuntimeMXBean().getInputArguments();
        List<String> cmd = ChildProcess.command(List.of("--num", "10"), List.of("-Dchild.only=1", "-Xss2m"));
        int extra = cmd.indexOf("-Dchild.only=1");
        assertThat(extra).isPositive();
        assertThat(cmd.get(extra + 1)).isEqualTo("-Xss2m");
        int main = Math.max(cmd.indexOf("-jar"), cmd.indexOf("-cp"));
        assertThat(main).isGreaterThan(extra + 1);
        assertThat(cmd.subList(1, extra))
                .containsExactlyElementsOf(inherited.stream()
                        .filter(a -> !a.startsWith("-agentlib:jdwp") && !a.startsWith("-javaagent"))
                        .toList());
        assertThat(cmd.subList(cmd.size() - 2, cmd.size())).containsExactly("--num", "10");
    }

    @Test
    void itIsRefusedWithoutReopenOrInAnotherForm(@TempDir Path tmp) {
        assertThat(exec(tmp, "--child-jvm-option", "bloomkv:-Xss2m").exit()).isEqualTo(2);
        BenchRun bad = exec(tmp, "--reopen", "--child-jvm-option", "bloomkv=-Xss2m");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("ENGINE:OPTION");
    }

    /**
     * An option no JVM accepts, given to RocksDB's children: a bloomkv-only run does not see it, a RocksDB run's first
     * child fails to start with it.
     */
    @Test
    void onlyTheNamedEnginesChildrenGetTheOption(@TempDir Path tmp) throws Exception {
        String bogus = "rocksdb:-XX:+NoSuchOptionForThisTest";
        BenchRun bloomkv = exec(
                tmp.resolve("a"),
                "--reopen",
                "--engines",
                "bloomkv",
                "--child-jvm-option",
                bogus,
                "--child-jvm-option",
                "bloomkv:-Dbench.child.marker=1");
        assertThat(bloomkv.exit()).as(bloomkv.err()).isZero();
        assertThat(bloomkv.out()).contains("child JVM options, rocksdb: [-XX:+NoSuchOptionForThisTest]");
        // results.json records how the engine's children were started
        String engines = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(tmp.resolve("a")
                        .resolve("report")
                        .resolve(io.bloomkv.bench.report.ReportWriter.JSON)
                        .toFile())
                .path("engines")
                .toString();
        assertThat(engines)
                .contains("child JVM options [-Dbench.child.marker=1]")
                .doesNotContain("NoSuchOption");
        BenchRun rocksdb = exec(tmp.resolve("b"), "--reopen", "--engines", "rocksdb", "--child-jvm-option", bogus);
        assertThat(rocksdb.exit()).isNotZero();
        assertThat(rocksdb.out() + rocksdb.err()).contains("NoSuchOptionForThisTest");
    }

    /**
     * A child that succeeds but writes to its stderr (here the JVM's GC log, asked of bloomkv's children only): the
     * parent repeats those lines on its console, named by phase, engine and run, with the children's phase-costs lines.
     */
    @Test
    void aChildsStderrIsRepeatedOnTheConsole(@TempDir Path tmp) {
        // decorated with the uptime in nanoseconds: no two children write the same line
        BenchRun r = exec(tmp, "--reopen", "--child-jvm-option", "bloomkv:-Xlog:gc:stderr:uptimenanos");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("child stderr (recordsload on bloomkv, run 0): ")
                .contains("child stderr (recordsread on bloomkv, run 0): ")
                .contains("Using G1")
                .doesNotContain("child stderr (recordsload on rocksdb")
                .contains("phase-costs: recordsload rocksdb");
    }

    @Test
    void aLineEveryChildWritesIsShownOnce(@TempDir Path tmp) {
        // undecorated: every bloomkv child writes the same "Using G1" line
        BenchRun r = exec(tmp, "--reopen", "--child-jvm-option", "bloomkv:-Xlog:gc:stderr:none");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("phase-costs: recordsread bloomkv");
        assertThat(r.out().lines().filter(l -> l.startsWith("child stderr (") && l.endsWith("Using G1")))
                .as(r.out())
                .hasSize(1);
    }

    private static BenchRun exec(Path tmp, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of(
                "--num",
                "500",
                "--reads",
                "200",
                "--workloads",
                "recordsload,recordsread",
                "--filters",
                "on",
                "--no-progress",
                "--no-fpr-sweep",
                "--write-buffer-size",
                "65536",
                "--cache-size",
                "65536"));
        return BenchRun.of(tmp, all);
    }
}
