package io.bloomkv.engine.fs;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;

/**
 * The JVM's pool of direct buffers ({@link BufferPoolMXBean} "direct"): how many are allocated and not yet freed, and
 * their bytes. A buffer freed explicitly ({@code invokeCleaner}) leaves the pool at once; one dropped is counted until
 * a collection finds it. Leak checks of the files that hold direct buffers compare these around what they open.
 */
final class DirectMemory {
    private static final BufferPoolMXBean DIRECT = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
            .filter(b -> b.getName().equals("direct"))
            .findFirst()
            .orElseThrow();

    private DirectMemory() {}

    /** Direct buffers allocated and not yet freed, in this JVM. */
    static long count() {
        return DIRECT.getCount();
    }

    /** Bytes of those buffers (their capacities). */
    static long bytes() {
        return DIRECT.getTotalCapacity();
    }
}
