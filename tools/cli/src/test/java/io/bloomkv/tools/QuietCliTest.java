package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every command prints only its answer: no JDK notice, no Chronicle warning, no SLF4J notice, on any Java (run the
 * suite on 17 and on 25). The child JVM gets the CLI's runtime class path and no JVM flags at all, which is harsher
 * than {@code java -jar bloomkv.jar} (whose manifest adds Chronicle's opens and Enable-Native-Access); the jar
 * itself is built after the tests, so it is checked by hand (see docs/cli.md) rather than here.
 */
class QuietCliTest {
    @TempDir
    Path work;

    @Test
    void commandsPrintOnlyTheirAnswer() throws Exception {
        String db = work.resolve("db").toString();
        assertThat(cli("put", "--create", "--flush", db, "k", "v")).isEmpty();
        assertThat(cli("get", db, "k")).containsExactly("v");
        assertThat(cli("scan", db)).containsExactly("k\tv");
    }

    /** Runs one command in a fresh JVM; asserts exit code 0 and an empty stderr; returns stdout's lines. */
    private List<String> cli(String... args) throws Exception {
        Path deps = Path.of("target", "runtime-classpath.txt");
        assertThat(deps)
                .as("written by maven-dependency-plugin (generate-test-resources)")
                .exists();
        String cp = Path.of("target", "classes").toAbsolutePath()
                + File.pathSeparator
                + Files.readString(deps).trim();
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-cp");
        cmd.add(cp);
        cmd.add(BloomKvCli.class.getName());
        cmd.addAll(List.of(args));
        Path out = work.resolve("stdout.txt");
        Path err = work.resolve("stderr.txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.environment().remove("JDK_JAVA_OPTIONS");
        pb.environment().remove("_JAVA_OPTIONS");
        Process p = pb.start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS))
                .as("bloomkv %s finished", List.of(args))
                .isTrue();
        assertThat(Files.readAllLines(err))
                .as("stderr of bloomkv %s", List.of(args))
                .isEmpty();
        assertThat(p.exitValue()).as("exit code of bloomkv %s", List.of(args)).isZero();
        return Files.readAllLines(out);
    }
}
