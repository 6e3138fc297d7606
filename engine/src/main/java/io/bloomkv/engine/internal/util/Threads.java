package io.bloomkv.engine.internal.util;

/** Thread helpers shared by the database's background workers. */
public final class Threads {
    private Threads() {}

    /**
     * Waits until {@code t} has ended. Does nothing when {@code t} is null or is the calling thread. An
     * interrupt while waiting does not stop the wait; the caller's interrupt status is restored afterwards.
     */
    public static void joinUninterruptibly(Thread t) {
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        boolean interrupted = false;
        while (t.isAlive()) {
            try {
                t.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
