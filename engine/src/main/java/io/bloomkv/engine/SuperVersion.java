package io.bloomkv.engine;

import io.bloomkv.engine.memtable.MemTable;
import io.bloomkv.engine.version.Version;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Everything a reader needs, captured at once: the mutable memtable, the immutable memtables
 * (newest first) and the current {@link Version}. Reference-counted; the database holds one
 * reference of the installed one, each get or iterator one more while it reads.
 */
final class SuperVersion {
    final MemTable mem;
    final List<MemTable> imms;
    final Version version;
    private final AtomicInteger refs = new AtomicInteger(1);

    /** Takes over one reference of {@code version}. */
    SuperVersion(MemTable mem, List<MemTable> imms, Version version) {
        this.mem = mem;
        this.imms = List.copyOf(imms);
        this.version = version;
    }

    boolean tryRetain() {
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

    void release() {
        int n = refs.decrementAndGet();
        if (n == 0) {
            version.release();
        } else if (n < 0) {
            throw new IllegalStateException("super version released more often than retained");
        }
    }
}
