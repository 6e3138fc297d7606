package io.bloomkv.kafka;

import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;

/** Waits for a thread to block on a given monitor, for tests of what a writer holds while it waits (lock order). */
final class MonitorWaits {
    private MonitorWaits() {}

    /**
     * Returns once {@code t} is blocked entering {@code monitor}'s monitor; fails the test if {@code t} ends, or is
     * not blocked on it within 30 s (a writer that never waits for the monitor).
     */
    static void awaitBlockedOn(Thread t, Object monitor) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(t.getId());
            if (info != null && info.getThreadState() == Thread.State.BLOCKED) {
                LockInfo lock = info.getLockInfo();
                if (lock != null && lock.getIdentityHashCode() == System.identityHashCode(monitor)) {
                    return;
                }
            }
            if (!t.isAlive()) {
                throw new AssertionError(t.getName() + " finished without waiting for " + monitor.getClass());
            }
            Thread.sleep(1);
        }
        throw new AssertionError(t.getName() + " did not block on " + monitor.getClass() + " within 30 s");
    }
}
