package io.bloomkv.bench.report;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The machine a run was measured on (named beside every figure). */
public record Machine(String cpu, int cores, long memoryBytes, String os, String java, String jvm) {

    public static Machine current() {
        String cpu = "unknown";
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            for (String l : lines) {
                if (l.startsWith("model name")) {
                    cpu = l.substring(l.indexOf(':') + 1).trim();
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            cpu = System.getProperty("os.arch");
        }
        long mem = -1;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            mem = os.getTotalMemorySize();
        }
        return new Machine(
                cpu,
                Runtime.getRuntime().availableProcessors(),
                mem,
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch"),
                System.getProperty("java.version"),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    }

    public String summary() {
        return String.format(
                "%s, %d cores, %.1f GiB RAM, %s, Java %s", cpu, cores, memoryBytes / 1073741824.0, os, java);
    }
}
