package io.bloomkv.bench.kafka;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * Where a process's resident memory is, read from inside it: the Java heap used and committed, the resident set split
 * as the kernel splits it ({@code RssAnon}: heap, malloc'd and Unsafe memory, thread stacks, RocksDB's native
 * memtables and block cache; {@code RssFile}: mapped files, the JDK's own and memory-mapped table files;
 * {@code RssShmem}) from {@code /proc/self/status}, and, when the JVM runs with
 * {@code -XX:NativeMemoryTracking=summary}, the committed bytes of each JVM category (Java Heap, Class, Thread, Code,
 * GC, Internal, Other = {@code Unsafe.allocateMemory} such as Chronicle's off-heap filters, ...) from the
 * {@code VM.native_memory summary} diagnostic command. Memory that no JVM category covers (RocksDB's own malloc
 * arenas) is RssAnon minus the NMT total.
 */
public record MemoryBreakdown(
        long heapUsedBytes,
        long heapCommittedBytes,
        long rssAnonBytes,
        long rssFileBytes,
        long rssShmemBytes,
        Map<String, Long> nmtCommittedBytes) {

    private static final Pattern NMT_LINE = Pattern.compile("^-\\s+(.+?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
    private static final Pattern NMT_TOTAL = Pattern.compile("^Total: reserved=(\\d+)KB, committed=(\\d+)KB");

    /** The breakdown now (the caller runs a GC first if it wants heap used after GC). */
    public static MemoryBreakdown now() {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        Map<String, Long> status = procStatus();
        return new MemoryBreakdown(
                heap.getUsed(),
                heap.getCommitted(),
                status.getOrDefault("RssAnon", 0L),
                status.getOrDefault("RssFile", 0L),
                status.getOrDefault("RssShmem", 0L),
                nmtSummary());
    }

    /** The kB lines of /proc/self/status in bytes (empty where /proc is absent). */
    static Map<String, Long> procStatus() {
        Map<String, Long> out = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.endsWith(" kB")) {
                    String v = line.substring(colon + 1, line.length() - 3).trim();
                    out.put(line.substring(0, colon), Long.parseLong(v) * 1024);
                }
            }
        } catch (IOException | NumberFormatException e) {
            return out;
        }
        return out;
    }

    /**
     * The first {@code lines} lines of the live-object histogram ({@code GC.class_histogram}: instances, bytes, class,
     * largest first), for finding what a store keeps on the heap; empty when the diagnostic command is unavailable.
     */
    static String heapHistogram(int lines) {
        try {
            String text = (String) ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "gcClassHistogram",
                            new Object[] {new String[0]},
                            new String[] {String[].class.getName()});
            String[] all = text.split("\n");
            return String.join("\n", java.util.Arrays.copyOf(all, Math.min(all.length, lines)));
        } catch (Exception e) {
            return "";
        }
    }

    /**
     * One line of where the resident set is now, without forcing a collection (a forced one would change G1's sizing,
     * the thing measured): VmRSS, RssAnon, RssFile, the heap used right after the most recent collection (young or
     * not: the live heap as of then, plus what survived it young), heap used now and committed, and each NMT
     * category's committed MiB when native memory is tracked.
     */
    static String periodLine() {
        Map<String, Long> status = procStatus();
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        // Heap used right after the most recent collection of any kind (young ones included): the live heap then.
        long afterGc = -1;
        long lastEnd = -1;
        for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof com.sun.management.GarbageCollectorMXBean g && g.getLastGcInfo() != null) {
                com.sun.management.GcInfo info = g.getLastGcInfo();
                if (info.getEndTime() > lastEnd) {
                    lastEnd = info.getEndTime();
                    afterGc = info.getMemoryUsageAfterGc().entrySet().stream()
                            .filter(e -> !e.getKey().contains("Metaspace")
                                    && !e.getKey().contains("Code")
                                    && !e.getKey().contains("Class"))
                            .mapToLong(e -> e.getValue().getUsed())
                            .sum();
                }
            }
        }
        return periodLine(status, afterGc, heap.getUsed(), heap.getCommitted(), nmtSummary());
    }

    /**
     * The line of {@link #periodLine()} for these figures, in MiB: {@code status} the kB lines of
     * {@code /proc/self/status} in bytes (a missing one reads 0), the heap figures in bytes, {@code nmt} each NMT
     * category's committed bytes in its order.
     */
    static String periodLine(
            Map<String, Long> status, long heapAfterGc, long heapUsed, long heapCommitted, Map<String, Long> nmt) {
        StringBuilder b = new StringBuilder(String.format(
                java.util.Locale.ROOT,
                "RSS %.1f RssAnon %.1f RssFile %.1f | heap after last GC %.1f used %.1f committed %.1f |",
                mib(status.getOrDefault("VmRSS", 0L)),
                mib(status.getOrDefault("RssAnon", 0L)),
                mib(status.getOrDefault("RssFile", 0L)),
                mib(heapAfterGc),
                mib(heapUsed),
                mib(heapCommitted)));
        for (Map.Entry<String, Long> e : nmt.entrySet()) {
            b.append(String.format(java.util.Locale.ROOT, " %s %.1f", e.getKey(), mib(e.getValue())));
        }
        return b.toString();
    }

    private static double mib(long bytes) {
        return bytes / (1024.0 * 1024.0);
    }

    /** Whether this JVM tracks native memory (-XX:NativeMemoryTracking=summary or detail). */
    static boolean nmtEnabled() {
        try {
            String v = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                    .getVMOption("NativeMemoryTracking")
                    .getValue();
            return v.equals("summary") || v.equals("detail");
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * The committed bytes of each NMT category and {@code Total}, in the order the JVM prints them; empty without
     * native memory tracking.
     */
    static Map<String, Long> nmtSummary() {
        Map<String, Long> out = new LinkedHashMap<>();
        if (!nmtEnabled()) {
            return out;
        }
        String text;
        try {
            text = (String) ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "vmNativeMemory",
                            new Object[] {new String[] {"summary", "scale=KB"}},
                            new String[] {String[].class.getName()});
        } catch (Exception e) {
            return out;
        }
        return parseNmt(text);
    }

    /** Parses the text of {@code VM.native_memory summary scale=KB}: category -> committed bytes, then Total. */
    static Map<String, Long> parseNmt(String text) {
        Map<String, Long> out = new LinkedHashMap<>();
        long total = -1;
        for (String raw : text.split("\n")) {
            String line = raw.trim();
            Matcher t = NMT_TOTAL.matcher(line);
            if (t.find()) {
                total = Long.parseLong(t.group(2)) * 1024;
                continue;
            }
            Matcher m = NMT_LINE.matcher(line);
            if (m.find()) {
                long committed = Long.parseLong(m.group(3)) * 1024;
                if (committed > 0) {
                    out.put(m.group(1).trim(), committed);
                }
            }
        }
        if (total >= 0) {
            out.put("Total", total);
        }
        return out;
    }
}
