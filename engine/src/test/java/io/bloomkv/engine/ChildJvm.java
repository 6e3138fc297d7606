package io.bloomkv.engine;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Tests that need a second process (a crash, a lock held elsewhere, a fresh class loader) start one from here. */
final class ChildJvm {
    private ChildJvm() {}

    /**
     * The command that runs {@code main}'s {@code main(args)} in a fresh JVM: this JVM's java and class path, the JVM
     * flags Chronicle needs (the build passes them as {@code bloomkv.chronicle.jvm.flags}), and {@code -Xmx}{@code
     * maxHeap}. Callers may add arguments to the list.
     */
    static List<String> command(String maxHeap, Class<?> main, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String flags = System.getProperty("bloomkv.chronicle.jvm.flags", "").trim();
        if (!flags.isEmpty()) {
            cmd.addAll(Arrays.asList(flags.split("\\s+")));
        }
        cmd.add("-Xmx" + maxHeap);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(Arrays.asList(args));
        return cmd;
    }
}
