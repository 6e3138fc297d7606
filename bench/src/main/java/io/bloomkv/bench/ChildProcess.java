package io.bloomkv.bench;

import io.bloomkv.bench.engine.EngineSpec;
import io.bloomkv.bench.workload.PhaseCosts;
import io.bloomkv.bench.workload.PhaseResult;
import io.bloomkv.bench.workload.Workload;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.jar.JarFile;

/**
 * The fresh processes of {@code bench --reopen}: each phase runs in a new JVM started with this JVM's flags (heap,
 * GC, {@code --add-opens}, system properties: whatever {@code getInputArguments} lists) and classpath, on the
 * database directory the previous phase left. When this JVM runs from the bench jar ({@code java -jar}), the child
 * does too, so the jar manifest's {@code Add-Opens} (pom.xml's chronicle.manifest.addOpens) apply to it as well.
 * The child writes its {@link PhaseResult}s with Java serialization to a file the parent reads back. A child that runs
 * longer than {@code --child-timeout} is killed with its descendants, and the parent waits for them to be gone (so
 * they hold no database lock) before it reports the timeout ({@link ChildTimeoutException}).
 */
final class ChildProcess {
    private ChildProcess() {}

    /** {@code --child-timeout}'s default in seconds: far longer than any phase, short of forever. */
    static final long DEFAULT_TIMEOUT_SECONDS = 4 * 3600;

    /** Seconds to wait for a killed child (and each descendant) to be gone before giving up on it. */
    private static final long KILL_WAIT_SECONDS = 60;

    /** A child that did not finish within {@code --child-timeout}: it was killed, the bench stops. */
    static final class ChildTimeoutException extends IOException {
        private static final long serialVersionUID = 1L;

        ChildTimeoutException(String message) {
            super(message);
        }
    }

    /**
     * Runs workload {@code w} of {@code spec} on {@code dir} in a fresh JVM, started with this JVM's flags and then
     * {@code jvmOptions} (the engine's {@code --child-jvm-option}s), and returns its phases. The child's
     * {@code phase-costs:} lines, and every line it wrote to its stderr (a warning of the JVM, a background thread's
     * failure), are repeated on {@code console}; a child that exits with another code than 0, or without writing its
     * results, is an IOException with the end of its stderr and stdout. A child still running after
     * {@code timeoutSeconds} (0: no limit) is killed with its descendants ({@link #kill}) and is a
     * {@link ChildTimeoutException}, with the same ends of its output.
     */
    static List<PhaseResult> run(
            List<String> parentArgs,
            List<String> jvmOptions,
            int valueSize,
            Workload w,
            EngineSpec spec,
            Path dir,
            int run,
            long timeoutSeconds,
            PrintWriter console)
            throws IOException {
        Path out = dir.resolveSibling(dir.getFileName() + "-" + w + ".phases");
        Path log = dir.resolveSibling(dir.getFileName() + "-" + w + ".log");
        Path errLog = dir.resolveSibling(dir.getFileName() + "-" + w + ".err");
        List<String> cmd = command(parentArgs, jvmOptions);
        cmd.addAll(List.of(
                "--child-db",
                dir.toString(),
                "--child-workload",
                w.dbBenchName(),
                "--child-engine",
                spec.engine(),
                "--child-filters=" + spec.filters(),
                "--child-run",
                Integer.toString(run),
                "--child-value-size",
                Integer.toString(valueSize),
                "--child-out",
                out.toString()));
        String which = w + " on " + spec.label() + ", run " + run;
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectOutput(log.toFile())
                    .redirectError(errLog.toFile())
                    .start();
            int exit;
            try {
                if (timeoutSeconds > 0 && !p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                    String killed = kill(p);
                    throw new ChildTimeoutException("the child process of " + which
                            + " did not finish within --child-timeout " + timeoutSeconds + " s: " + killed
                            + "; its stderr: " + tail(errLog) + "; its stdout: " + tail(log));
                }
                exit = p.waitFor();
            } catch (InterruptedException e) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while " + w + " ran in a child process", e);
            }
            if (exit != 0 || !Files.exists(out)) {
                throw new IOException("the child process of " + which + " exited with " + exit
                        + (Files.exists(out) ? "" : " without writing its results") + "; its stderr: "
                        + tail(errLog) + "; its stdout: " + tail(log));
            }
            lines(log).stream()
                    .filter(l -> l.startsWith(PhaseCosts.LINE_PREFIX))
                    .forEach(l -> console.println(l + " (run " + run + ")"));
            lines(errLog).stream()
                    .filter(l -> !l.isBlank() && SHOWN_STDERR.add(l))
                    .forEach(l -> console.println("child stderr (" + which + "): " + l));
            console.flush();
            return readResults(out);
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(log);
            Files.deleteIfExists(errLog);
        }
    }

    /**
     * Kills {@code p} and its descendants (destroyForcibly: SIGKILL, which no hung thread can stall) and waits until
     * every one has exited, so that none holds the database's lock any more; what it did, for the message.
     *
     * @throws IOException if one is still there after {@link #KILL_WAIT_SECONDS}
     */
    static String kill(Process p) throws IOException, InterruptedException {
        // The descendants before the child dies: once it is gone they are no longer listed as its descendants.
        List<ProcessHandle> tree = new ArrayList<>(p.descendants().toList());
        p.destroyForcibly();
        tree.forEach(ProcessHandle::destroyForcibly);
        tree.add(0, p.toHandle());
        for (ProcessHandle h : tree) {
            try {
                h.onExit().get(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (TimeoutException | ExecutionException e) {
                throw new IOException(
                        "process " + h.pid() + " (of a timed-out bench child) is still running " + KILL_WAIT_SECONDS
                                + " s after it was killed; its database may stay locked",
                        e);
            }
        }
        return "killed it" + (tree.size() == 1 ? "" : " and its " + (tree.size() - 1) + " descendant processes");
    }

    /** The lines of a child's output file (undecodable bytes replaced, not thrown); none when it is missing. */
    private static List<String> lines(Path file) throws IOException {
        return Files.exists(file)
                ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8)
                        .lines()
                        .toList()
                : List.of();
    }

    /** The last 4,000 characters of a child's output file. */
    private static String tail(Path file) throws IOException {
        String text = String.join("\n", lines(file));
        return text.isEmpty() ? "(empty)" : text.substring(Math.max(0, text.length() - 4000));
    }

    /**
     * {@code java [this JVM's flags] [jvmOptions] (-jar JAR | -cp CLASSPATH BenchMain) [parent's arguments]}: an option
     * of {@code jvmOptions} comes after the inherited flags, so where the JVM takes the last of a flag given twice, it
     * wins.
     */
    static List<String> command(List<String> parentArgs, List<String> jvmOptions) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-agentlib:jdwp") && !a.startsWith("-javaagent")) { // a debugger's port is taken
                cmd.add(a);
            }
        }
        cmd.addAll(jvmOptions);
        String cp = System.getProperty("java.class.path");
        if (isBenchJar(cp)) {
            cmd.add("-jar");
            cmd.add(cp);
        } else {
            cmd.add("-cp");
            cmd.add(cp);
            cmd.add(BenchMain.class.getName());
        }
        cmd.addAll(parentArgs);
        return cmd;
    }

    /**
     * {@code --child-jvm-option} values ({@code ENGINE:OPTION}, ENGINE bloomkv or rocksdb, OPTION a JVM option starting
     * with '-') grouped by engine in the order given.
     *
     * @throws IllegalArgumentException for a value of another form
     */
    static Map<String, List<String>> parseEngineJvmOptions(List<String> values) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (String v : values) {
            int colon = v.indexOf(':');
            String engine = colon < 0 ? "" : v.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String option = colon < 0 ? "" : v.substring(colon + 1).trim();
            if (!ENGINES.contains(engine) || !option.startsWith("-") || option.length() < 2) {
                throw new IllegalArgumentException("--child-jvm-option takes ENGINE:OPTION with ENGINE one of "
                        + ENGINES
                        + " and OPTION a JVM option starting with '-' (e.g. bloomkv:-XX:AOTCache=bloomkv.aot): '" + v
                        + "'");
            }
            out.computeIfAbsent(engine, k -> new ArrayList<>()).add(option);
        }
        return out;
    }

    private static final List<String> ENGINES = List.of("bloomkv", "rocksdb");

    /**
     * The stderr lines of children already repeated on the console: a line every child writes alike (a JVM's notice,
     * such as Java 25's about {@code sun.misc.Unsafe}) is shown once per run of the bench, not once per phase.
     */
    private static final Set<String> SHOWN_STDERR = ConcurrentHashMap.newKeySet();

    private static boolean isBenchJar(String classPath) {
        if (!classPath.endsWith(".jar") || classPath.contains(java.io.File.pathSeparator)) {
            return false;
        }
        try (JarFile jar = new JarFile(classPath)) {
            var m = jar.getManifest();
            return m != null
                    && BenchMain.class.getName().equals(m.getMainAttributes().getValue("Main-Class"));
        } catch (IOException e) {
            return false;
        }
    }

    static void writeResults(Path file, List<PhaseResult> phases) throws IOException {
        try (ObjectOutputStream o = new ObjectOutputStream(Files.newOutputStream(file))) {
            o.writeObject(new ArrayList<>(phases));
        }
    }

    @SuppressWarnings("unchecked")
    static List<PhaseResult> readResults(Path file) throws IOException {
        try (ObjectInputStream in = new ObjectInputStream(Files.newInputStream(file))) {
            return (List<PhaseResult>) in.readObject();
        } catch (ClassNotFoundException | ClassCastException e) {
            throw new IOException("unreadable child results " + file, e);
        }
    }
}
