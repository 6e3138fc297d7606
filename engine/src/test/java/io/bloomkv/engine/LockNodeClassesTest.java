package io.bloomkv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opening a database loads every AbstractQueuedSynchronizer queue-node class before its write path runs (see
 * {@link DbState#loadLockNodeClasses}), checked in a fresh JVM, where none of the lazily loaded ones is loaded yet: the
 * JVM's own class hierarchy (the VM.class_hierarchy diagnostic command) before and after {@link Db#open}.
 */
class LockNodeClassesTest {
    private static final String NODE = "java.util.concurrent.locks.AbstractQueuedSynchronizer$Node";
    private static final List<String> KINDS = List.of("ExclusiveNode", "SharedNode", "ConditionNode");

    @TempDir
    Path tmp;

    @Test
    void thisJdkHasTheThreeNodeClasses() {
        assertEquals(3, DbState.loadLockNodeClasses(), "a JDK whose lock classes changed: revisit the preload");
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void openingADatabaseLoadsEveryNodeClass() throws Exception {
        List<String> cmd = ChildJvm.command(
                "128m", LockNodeClassesTest.class, tmp.resolve("db").toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                lines.add(line);
            }
        }
        assertEquals(0, p.waitFor(), "child failed:\n" + String.join("\n", lines));
        String before = value(lines, "before ");
        String after = value(lines, "after ");
        Assumptions.assumeTrue(
                KINDS.stream().anyMatch(k -> !before.contains(k)),
                "every node class was already loaded at the child's start: nothing to check (" + before + ")");
        for (String k : KINDS) {
            assertTrue(after.contains(k), k + " not loaded after Db.open: " + after + "\n" + String.join("\n", lines));
        }
    }

    private static String value(List<String> lines, String prefix) {
        return lines.stream()
                .filter(l -> l.startsWith(prefix))
                .map(l -> l.substring(prefix.length()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no '" + prefix + "' line in:\n" + String.join("\n", lines)));
    }

    /** The loaded subclasses of AQS$Node, by simple name, from the JVM's class hierarchy. */
    static String loadedNodeClasses() throws Exception {
        String h = (String) ManagementFactory.getPlatformMBeanServer()
                .invoke(
                        new ObjectName("com.sun.management:type=DiagnosticCommand"),
                        "vmClassHierarchy",
                        new Object[] {new String[] {NODE, "-s"}},
                        new String[] {String[].class.getName()});
        StringBuilder found = new StringBuilder("[");
        for (String k : KINDS) {
            if (h.contains("AbstractQueuedSynchronizer$" + k + "/")) {
                found.append(found.length() > 1 ? " " : "").append(k);
            }
        }
        return found.append(']').toString();
    }

    /** The child: the node classes loaded before and after opening a database and writing to it. */
    public static void main(String[] args) throws Exception {
        System.out.println("before " + loadedNodeClasses());
        try (Db db = Db.open(Path.of(args[0]), Options.defaults())) {
            db.put(new byte[] {1}, new byte[] {2});
        }
        System.out.println("after " + loadedNodeClasses());
    }
}
