package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A program with only bloomkv-engine and its runtime dependencies on the class path prints at most one line of its
 * own besides its answers when the JVM has none of Chronicle's flags (Java 24+: the line naming the flags, from
 * {@link io.bloomkv.bloom.JvmEnvironment}; before 24: nothing), and nothing with the flags. The child runs on the
 * JDK of the test JVM, so running the suite on Java 17 and on Java 25 covers both. SLF4J's three-line "no providers"
 * notice belongs to an application without a logging binding (the ecosystem's convention) and is left out.
 */
class QuietEmbeddingTest {
    @TempDir
    Path dir;

    /** The embedding program: put, flush (a table with its filter), get, reopen, get. */
    public static final class Program {
        public static void main(String[] args) {
            Path dir = Path.of(args[0]);
            try (Db db = Db.open(dir, Options.defaults())) {
                for (int i = 0; i < 1000; i++) {
                    db.put(("k" + i).getBytes(StandardCharsets.UTF_8), ("v" + i).getBytes(StandardCharsets.UTF_8));
                }
                db.flush();
                db.waitForBackgroundWork();
                System.out.println(new String(db.get("k7".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8));
            }
            try (Db db = Db.open(dir, Options.defaults())) {
                System.out.println(new String(db.get("k8".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8));
            }
        }
    }

    /**
     * A bulk-load file begun and abandoned, with no database opened: the writer's direct buffer is freed through
     * {@code Unsafe.invokeCleaner}, so the file system's classes must have set up {@link io.bloomkv.bloom.JvmEnvironment}
     * before (on Java 24+ the JDK's four-line notice came out in place of bloomkv's one line). Prints whether it was.
     */
    public static final class AbandonedFileProgram {
        public static void main(String[] args) throws Exception {
            try (TableFileWriter w = TableFileWriter.create(Path.of(args[0]), Options.defaults())) {
                System.out.println("created " + w.getClass().getSimpleName()); // no entry (as `sst write` of no input)
            } // not finished: the partial file is deleted and its buffer freed
            java.lang.reflect.Field f = io.bloomkv.bloom.JvmEnvironment.class.getDeclaredField("initialized");
            f.setAccessible(true);
            System.out.println("jvm environment initialized " + f.getBoolean(null));
        }
    }

    @Test
    void anAbandonedBulkLoadFileWithoutADatabaseSetsUpTheEnvironmentFirst() throws Exception {
        String flags = System.getProperty("bloomkv.chronicle.jvm.flags", "").trim();
        for (List<String> jvmFlags : List.of(List.<String>of(), Arrays.asList(flags.split("\\s+")))) {
            Output out = runJava(
                    jvmFlags,
                    classPath(),
                    AbandonedFileProgram.class.getName(),
                    List.of(dir.resolve("abandoned.sst").toString()),
                    dir);
            assertThat(out.stdout)
                    .as(jvmFlags.toString())
                    .containsExactly("created TableFileWriter", "jvm environment initialized true");
            if (Runtime.version().feature() >= 24 && jvmFlags.isEmpty()) {
                assertThat(out.stderr).hasSize(1);
                assertThat(out.stderr.get(0)).startsWith("bloomkv: ");
            } else {
                assertThat(out.stderr).as(jvmFlags.toString()).isEmpty();
            }
        }
    }

    @Test
    void withoutFlagsAtMostTheOneLineNamingThem() throws Exception {
        Output out = run(List.of());
        assertThat(out.stdout).containsExactly("v7", "v8");
        if (Runtime.version().feature() >= 24) {
            assertThat(out.stderr).hasSize(1);
            assertThat(out.stderr.get(0))
                    .startsWith("bloomkv: ")
                    .contains("--sun-misc-unsafe-memory-access=allow", "--enable-native-access=ALL-UNNAMED");
        } else {
            assertThat(out.stderr)
                    .as("what the flags change on Java < 24: nothing bloomkv uses")
                    .isEmpty();
        }
    }

    @Test
    void withTheFlagsNothing() throws Exception {
        String flags = System.getProperty("bloomkv.chronicle.jvm.flags", "").trim();
        assertThat(flags)
                .as("surefire passes the parent pom's chronicle.jvm.flags")
                .isNotEmpty();
        Output out = run(Arrays.asList(flags.split("\\s+")));
        assertThat(out.stdout).containsExactly("v7", "v8");
        assertThat(out.stderr).isEmpty();
    }

    private Output run(List<String> jvmFlags) throws Exception {
        return runJava(
                jvmFlags,
                classPath(),
                Program.class.getName(),
                List.of(dir.resolve("db").toString()),
                dir);
    }

    /** This module's classes, its test classes (for {@link Program}) and its runtime dependencies: nothing else. */
    private static String classPath() throws Exception {
        Path deps = Path.of("target", "runtime-classpath.txt");
        assertThat(deps)
                .as("written by maven-dependency-plugin (generate-test-resources)")
                .exists();
        String runtime = Files.readString(deps).trim();
        return String.join(
                File.pathSeparator,
                Path.of("target", "classes").toAbsolutePath().toString(),
                Path.of("target", "test-classes").toAbsolutePath().toString(),
                runtime);
    }

    /** stdout and stderr lines of a finished child JVM, SLF4J's no-provider notice taken out of stderr. */
    record Output(List<String> stdout, List<String> stderr) {}

    static Output runJava(List<String> jvmFlags, String classPath, String mainClass, List<String> args, Path work)
            throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags);
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(mainClass);
        cmd.addAll(args);
        Path stdout = work.resolve("stdout.txt");
        Path stderr = work.resolve("stderr.txt");
        ProcessBuilder pb =
                new ProcessBuilder(cmd).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
        // Options from the environment would be flags too (and the launcher prints "Picked up ...").
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.environment().remove("JDK_JAVA_OPTIONS");
        pb.environment().remove("_JAVA_OPTIONS");
        Process p = pb.start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("child JVM finished").isTrue();
        List<String> err = new ArrayList<>(Files.readAllLines(stderr));
        List<String> outLines = Files.readAllLines(stdout);
        assertThat(p.exitValue()).as("exit code; stderr: %s", err).isZero();
        err.removeIf(line -> line.startsWith("SLF4J(W): ")
                && (line.contains("No SLF4J providers")
                        || line.contains("Defaulting to no-operation")
                        || line.contains("codes.html#noProviders")));
        return new Output(outLines, err);
    }
}
