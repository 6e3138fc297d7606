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

    /** A check that may be run again. */
    interface Check {
        void run() throws Exception;
    }

    /**
     * Runs {@code check}, which compares these counts exactly, again when it fails and a garbage collection ran during
     * it (a collection frees dead direct buffers of other code and moves the counts under the check); at most five
     * runs. A failure with no collection during it is the check's own and is thrown at once.
     */
    static void withoutCollection(Check check) throws Exception {
        for (int attempt = 1; ; attempt++) {
            long before = collections();
            try {
                check.run();
                return;
            } catch (AssertionError e) {
                if (collections() == before || attempt == 5) {
                    throw e;
                }
            }
        }
    }

    private static long collections() {
        long n = 0;
        for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
        }
        return n;
    }
}
