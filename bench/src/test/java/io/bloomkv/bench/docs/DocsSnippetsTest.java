package io.bloomkv.bench.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ```java} block of README.md and docs/*.md compiles against the project's classes, and runs
 * (docs/README.md, "Java snippets", documents the two forms). The quickstart can never rot: a block that does not
 * compile or throws fails this test, named by file and line. The surefire JVM already has Chronicle's flags, so a
 * snippet's main runs in this JVM, from a child class loader over the compiled class.
 */
class DocsSnippetsTest {
    /** The first line that turns a block into the body of a generated main method. */
    static final String BODY_MARKER = "// snippet: body";

    /** The imports a body snippet gets (docs/README.md lists them: keep the two in step). */
    static final List<String> BODY_IMPORTS = List.of(
            "import io.bloomkv.bloom.*;",
            "import io.bloomkv.engine.*;",
            "import io.bloomkv.engine.inspect.*;",
            "import java.nio.charset.StandardCharsets;",
            "import java.nio.file.*;",
            "import java.util.*;",
            "import static java.nio.charset.StandardCharsets.UTF_8;");

    private static final Pattern TYPE_NAME = Pattern.compile(
            "^\\s*public\\s+(?:final\\s+|abstract\\s+)*(?:class|record|interface|enum)\\s+(\\w+)", Pattern.MULTILINE);
    private static final Pattern MAIN = Pattern.compile("public\\s+static\\s+void\\s+main\\s*\\(\\s*String\\s*"
            + "(?:\\[\\s*]\\s*\\w+|\\w+\\s*\\[\\s*]|\\.\\.\\.\\s*\\w+)\\s*\\)");

    /** One fenced Java block: where it is, and its text. */
    record Snippet(String file, int line, String code) {
        String where() {
            return file + ":" + line;
        }

        boolean isBody() {
            return code.lines().findFirst().map(String::strip).orElse("").equals(BODY_MARKER);
        }
    }

    /** The Java blocks of one markdown text; {@code line} is the 1-based line of the opening fence. */
    static List<Snippet> javaBlocks(String file, String markdown) {
        List<Snippet> out = new ArrayList<>();
        String[] lines = markdown.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String t = lines[i].strip();
            if (!t.startsWith("```")) {
                continue;
            }
            String info = t.substring(3).strip().toLowerCase(Locale.ROOT);
            int open = i;
            StringBuilder code = new StringBuilder();
            for (i++; i < lines.length && !lines[i].strip().startsWith("```"); i++) {
                code.append(lines[i]).append('\n');
            }
            if (i >= lines.length) {
                throw new AssertionError(file + ":" + (open + 1) + ": code fence never closed");
            }
            if (info.equals("java") || info.startsWith("java ")) {
                out.add(new Snippet(file, open + 1, code.toString()));
            }
        }
        return out;
    }

    /** The compilation unit for a snippet and its public class's name. */
    record Unit(String className, String source, int headerLines) {}

    static Unit unitOf(Snippet s) {
        if (s.isBody()) {
            String name = "Snippet_" + s.file().replaceAll("[^A-Za-z0-9]", "_") + "_" + s.line();
            StringBuilder src = new StringBuilder();
            for (String imp : BODY_IMPORTS) {
                src.append(imp).append('\n');
            }
            src.append("public class ")
                    .append(name)
                    .append(" {\n")
                    .append("public static void main(String[] args) throws Exception {\n");
            int header = BODY_IMPORTS.size() + 2;
            src.append(s.code()).append("}\n}\n");
            return new Unit(name, src.toString(), header);
        }
        Matcher m = TYPE_NAME.matcher(s.code());
        if (!m.find()) {
            throw new AssertionError(s.where() + ": a Java block must declare a public class, or start with '"
                    + BODY_MARKER + "' (docs/README.md, \"Java snippets\")");
        }
        return new Unit(m.group(1), s.code(), 0);
    }

    /**
     * A snippet that opens a database on disk does so in a fresh temporary directory and removes it (docs/README.md,
     * "Java snippets"); one that makes a temporary file deletes it. Null when the snippet follows that, else why not.
     */
    static String cleanupProblem(Snippet s) {
        String code = s.code();
        if (code.contains("Db.open(")
                && !code.contains("InMemoryFileSystem")
                && !(code.contains("Files.createTempDirectory(") && code.contains("Db.destroy("))) {
            return s.where() + ": a snippet that opens a database must use Files.createTempDirectory and end with "
                    + "Db.destroy";
        }
        if (code.contains("Files.createTempFile(") && !code.contains("Files.delete(")) {
            return s.where() + ": a snippet that makes a temporary file must delete it";
        }
        return null;
    }

    /**
     * Compiles the snippets together, in one javac task, into {@code workDir}/classes (one task opens the class path
     * once: a task per snippet would take seconds each). Returns each snippet's problem, if it has one: not a unit,
     * a class name another block already uses, or its compile errors, each with its file and line in the page. When
     * some snippets fail, the others are compiled again without them, since javac writes no class after an error.
     */
    static Map<Snippet, String> compile(List<Snippet> snippets, Path workDir) throws IOException {
        Map<Snippet, String> problems = new LinkedHashMap<>();
        Map<Snippet, Unit> units = new LinkedHashMap<>();
        Map<String, Snippet> byClass = new HashMap<>();
        Path srcDir = Files.createDirectories(workDir.resolve("src"));
        Path classes = Files.createDirectories(workDir.resolve("classes"));
        Map<String, Snippet> bySourceName = new HashMap<>();
        for (Snippet s : snippets) {
            Unit unit;
            try {
                unit = unitOf(s);
            } catch (AssertionError e) {
                problems.put(s, e.getMessage());
                continue;
            }
            Snippet other = byClass.putIfAbsent(unit.className(), s);
            if (other != null) {
                problems.put(
                        s,
                        s.where() + ": class " + unit.className() + " is already declared by the block at "
                                + other.where() + "; give this one another name");
                continue;
            }
            Path source = srcDir.resolve(unit.className() + ".java");
            Files.writeString(source, unit.source());
            units.put(s, unit);
            bySourceName.put(source.toFile().getName(), s);
        }
        List<Snippet> toCompile = new ArrayList<>(units.keySet());
        for (int round = 0; round < 2 && !toCompile.isEmpty(); round++) {
            Map<Snippet, String> errors = javac(toCompile, units, bySourceName, srcDir, classes);
            if (errors.isEmpty()) {
                break;
            }
            problems.putAll(errors);
            toCompile.removeAll(errors.keySet());
        }
        return problems;
    }

    private static Map<Snippet, String> javac(
            List<Snippet> snippets,
            Map<Snippet, Unit> units,
            Map<String, Snippet> bySourceName,
            Path srcDir,
            Path classes)
            throws IOException {
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        boolean ok;
        synchronized (DocsSnippetsTest.class) {
            StandardJavaFileManager fm = fileManager();
            fm.setLocation(StandardLocation.CLASS_OUTPUT, List.of(classes.toFile()));
            List<String> options = List.of("-proc:none", "-encoding", "UTF-8", "-Xlint:none", "-nowarn");
            List<File> files = snippets.stream()
                    .map(s -> srcDir.resolve(units.get(s).className() + ".java").toFile())
                    .toList();
            Iterable<? extends JavaFileObject> sources = fm.getJavaFileObjectsFromFiles(files);
            ok = compiler()
                    .getTask(null, fm, diagnostics, options, null, sources)
                    .call();
        }
        Map<Snippet, StringBuilder> messages = new LinkedHashMap<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            Snippet s = d.getSource() == null
                    ? null
                    : bySourceName.get(new File(d.getSource().getName()).getName());
            List<Snippet> owners = s == null ? snippets : List.of(s);
            for (Snippet o : owners) {
                // the block's first code line is the fence's line + 1; a body's code starts after the generated header
                long docLine = o.line() + d.getLineNumber() - units.get(o).headerLines();
                messages.computeIfAbsent(o, k -> new StringBuilder(k.where() + ": the snippet does not compile:"))
                        .append("\n  ")
                        .append(o.file())
                        .append(':')
                        .append(s == null ? o.line() : docLine)
                        .append(": ")
                        .append(d.getMessage(Locale.ROOT));
            }
        }
        if (!ok && messages.isEmpty()) {
            for (Snippet o : snippets) {
                messages.put(o, new StringBuilder(o.where() + ": javac failed without an error message"));
            }
        }
        Map<Snippet, String> out = new LinkedHashMap<>();
        messages.forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    /** Runs the compiled snippet's main, if it has one: null when it ran (or has none), else what it threw. */
    static String runCompiled(Snippet s, Path workDir) throws IOException {
        if (!s.isBody() && !MAIN.matcher(s.code()).find()) {
            return null; // a compile-only unit: compiled, nothing to run
        }
        return run(s, unitOf(s), workDir.resolve("classes"));
    }

    /** Compiles one snippet into {@code workDir} and runs it: null when both worked, else what went wrong. */
    static String compileAndRun(Snippet s, Path workDir) throws IOException {
        String problem = compile(List.of(s), workDir).get(s);
        return problem != null ? problem : runCompiled(s, workDir);
    }

    private static String run(Snippet s, Unit unit, Path classes) throws IOException {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (URLClassLoader loader =
                new URLClassLoader(new URL[] {classes.toUri().toURL()}, DocsSnippetsTest.class.getClassLoader())) {
            Class<?> c = Class.forName(unit.className(), true, loader);
            Method main = c.getMethod("main", String[].class);
            if (!Modifier.isStatic(main.getModifiers())) {
                return s.where() + ": main is not static";
            }
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) new String[0]);
            return null;
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            java.io.StringWriter trace = new java.io.StringWriter();
            cause.printStackTrace(new java.io.PrintWriter(trace));
            return s.where() + ": the snippet threw " + cause + "\n" + trace + "output so far:\n"
                    + captured.toString(StandardCharsets.UTF_8);
        } catch (ReflectiveOperationException e) {
            return s.where() + ": cannot run the snippet's main: " + e;
        } finally {
            System.setOut(out);
        }
    }

    private static JavaCompiler compiler;
    private static StandardJavaFileManager fileManager;

    private static JavaCompiler compiler() {
        if (compiler == null) {
            compiler = ToolProvider.getSystemJavaCompiler();
            assertThat(compiler).as("a JDK's compiler (javax.tools)").isNotNull();
        }
        return compiler;
    }

    /** One file manager for every snippet: it opens the class path's jars once, not once per snippet. */
    private static StandardJavaFileManager fileManager() throws IOException {
        if (fileManager == null) {
            StandardJavaFileManager fm = compiler().getStandardFileManager(null, Locale.ROOT, StandardCharsets.UTF_8);
            fm.setLocation(StandardLocation.CLASS_PATH, classPath());
            fileManager = fm;
        }
        return fileManager;
    }

    /** The compiled snippets' directories, removed after the class. */
    private static final List<Path> workDirs = new ArrayList<>();

    @AfterAll
    static void cleanUp() throws IOException {
        if (fileManager != null) {
            fileManager.close();
            fileManager = null;
        }
        for (Path dir : workDirs) {
            deleteTree(dir);
        }
        workDirs.clear();
    }

    /** The test class path: surefire's (its booter jar may stand for it in java.class.path) and the JVM's. */
    private static List<File> classPath() {
        Set<String> entries = new LinkedHashSet<>();
        for (String prop : List.of("surefire.test.class.path", "java.class.path")) {
            String v = System.getProperty(prop);
            if (v != null && !v.isBlank()) {
                entries.addAll(List.of(v.split(File.pathSeparator)));
            }
        }
        return entries.stream().filter(e -> !e.isBlank()).map(File::new).toList();
    }

    @TestFactory
    Stream<DynamicTest> everyJavaBlockCompilesAndRuns() {
        Path root = DocsFiles.repoRoot();
        List<Snippet> snippets = new ArrayList<>();
        for (Path page : DocsFiles.pagesWithSnippets(root)) {
            snippets.addAll(javaBlocks(DocsFiles.name(root, page), DocsFiles.read(page)));
        }
        assertThat(snippets).as("Java blocks in README.md and docs/").isNotEmpty();
        Path work;
        Map<Snippet, String> compileProblems;
        try {
            work = Files.createTempDirectory("bloomkv-doc-snippets");
            workDirs.add(work);
            compileProblems = compile(snippets, work);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return snippets.stream()
                .map(s -> DynamicTest.dynamicTest(s.where(), () -> {
                    String cleanup = cleanupProblem(s);
                    if (cleanup != null) {
                        fail(cleanup);
                    }
                    String problem = compileProblems.get(s);
                    if (problem == null) {
                        problem = runCompiled(s, work);
                    }
                    if (problem != null) {
                        fail(problem);
                    }
                }));
    }

    /** The front page's quickstart is one of the snippets that run. */
    @Test
    void theReadmeHasARunnableQuickstart() {
        Path root = DocsFiles.repoRoot();
        List<Snippet> readme = javaBlocks("README.md", DocsFiles.read(root.resolve("README.md")));
        assertThat(readme)
                .as("README.md's Java blocks")
                .anyMatch(s -> s.isBody() || MAIN.matcher(s.code()).find());
        assertThat(readme).anyMatch(s -> s.code().contains("Db.open"));
    }

    /** The checker fails a block that does not compile and one that throws, naming file and line. */
    @Test
    void aBrokenSnippetIsReportedWithItsFileAndLine(@TempDir Path tmp) throws IOException {
        String page = "text\n\n```java\n" + BODY_MARKER + "\nint x = \"not an int\";\n```\n\n```java\n" + BODY_MARKER
                + "\nthrow new IllegalStateException(\"boom\");\n```\n\n```java\nclass NotPublic {}\n```\n\n"
                + "```java\npublic class Twice { public static void main(String[] a) { } }\n```\n\n"
                + "```java\npublic class Twice { }\n```\n";
        List<Snippet> blocks = javaBlocks("docs/example.md", page);
        assertThat(blocks).extracting(Snippet::line).containsExactly(3, 8, 13, 17, 21);
        // compiled together, as the docs are: the good blocks still compile beside the broken ones
        Map<Snippet, String> problems = compile(blocks, tmp.resolve("together"));
        assertThat(problems).containsOnlyKeys(blocks.get(0), blocks.get(2), blocks.get(4));
        assertThat(problems.get(blocks.get(0)))
                .startsWith("docs/example.md:3: the snippet does not compile")
                .contains("docs/example.md:5:");
        assertThat(problems.get(blocks.get(2))).startsWith("docs/example.md:13: a Java block must");
        assertThat(problems.get(blocks.get(4)))
                .startsWith("docs/example.md:21: class Twice is already declared by the block at docs/example.md:17");
        assertThat(runCompiled(blocks.get(1), tmp.resolve("together")))
                .startsWith("docs/example.md:8: the snippet threw java.lang.IllegalStateException: boom");
        assertThat(runCompiled(blocks.get(3), tmp.resolve("together"))).isNull();
        // one by one
        assertThat(compileAndRun(blocks.get(0), tmp.resolve("a"))).startsWith("docs/example.md:3: the snippet");
        Snippet leaky = javaBlocks(
                        "docs/leak.md",
                        "```java\n" + BODY_MARKER
                                + "\ntry (Db db = Db.open(Path.of(\"/tmp/x\"), Options.defaults())) { }\n```\n")
                .get(0);
        assertThat(cleanupProblem(leaky)).startsWith("docs/leak.md:1: a snippet that opens a database");
        String good = "```java\n" + BODY_MARKER + "\nSystem.out.println(UTF_8.name() + Db.MAX_KEY_SIZE);\n```\n";
        assertThat(compileAndRun(javaBlocks("x.md", good).get(0), tmp.resolve("d")))
                .isNull();
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }
}
