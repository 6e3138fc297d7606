package io.bloomkv.engine.internal.util;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A reference count that starts at one (the creator's reference) and, once it has dropped to zero,
 * can never be raised again. Thread-safe.
 */
public final class RefCount {
    private final AtomicInteger refs = new AtomicInteger(1);
    private final String subject;

    /** {@code subject} names the counted object in the over-release error, e.g. "table /db/000007.sst". */
    public RefCount(String subject) {
        this.subject = subject;
    }

    /** Adds a reference unless the count already reached zero; false (and no change) when it had. */
    public boolean tryRetain() {
        while (true) {
            int n = refs.get();
            if (n <= 0) {
                return false;
            }
            if (refs.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /**
     * Drops a reference.
     *
     * @return true when this dropped the last reference (the caller then frees what is counted)
     * @throws IllegalStateException when released more often than retained
     */
    public boolean release() {
        int n = refs.decrementAndGet();
        if (n < 0) {
            throw new IllegalStateException(subject + " released more often than retained");
        }
        return n == 0;
    }

    /** References held now; zero or less once the last was released. */
    public int get() {
        return refs.get();
    }
}
