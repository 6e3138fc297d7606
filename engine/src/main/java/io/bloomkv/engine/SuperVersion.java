package io.bloomkv.engine;

import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.util.RefCount;
import io.bloomkv.engine.internal.version.Version;
import java.util.List;

/**
 * Everything a reader needs, captured at once: the mutable memtable, the immutable memtables
 * (newest first) and the current {@link Version}. Reference-counted; the database holds one
 * reference of the installed one, each get or iterator one more while it reads.
 */
final class SuperVersion {
    final MemTable mem;
    final List<MemTable> imms;
    final Version version;
    private final RefCount refs = new RefCount("super version");

    /** Takes over one reference of {@code version}. */
    SuperVersion(MemTable mem, List<MemTable> imms, Version version) {
        this.mem = mem;
        this.imms = List.copyOf(imms);
        this.version = version;
    }

    boolean tryRetain() {
        return refs.tryRetain();
    }

    void release() {
        if (refs.release()) {
            version.release();
        }
    }
}
