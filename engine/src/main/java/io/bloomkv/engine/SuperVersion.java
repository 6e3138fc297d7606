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
    private final boolean immsOrVersionHaveTombstones;

    /** Takes over one reference of {@code version}. */
    SuperVersion(MemTable mem, List<MemTable> imms, Version version) {
        this.mem = mem;
        this.imms = List.copyOf(imms);
        this.version = version;
        boolean ts = version.hasRangeTombstones();
        for (MemTable m : this.imms) {
            ts |= m.hasRangeTombstones();
        }
        this.immsOrVersionHaveTombstones = ts;
    }

    /**
     * True when a range tombstone may affect a read: in the memtable (checked live, it may gain one), an immutable
     * memtable or a table. Point reads then take {@link PointLookup}, which weighs tombstones against entries.
     */
    boolean hasRangeTombstones() {
        if (immsOrVersionHaveTombstones || mem.hasRangeTombstones()) {
            return true;
        }
        return false;
    }

    /** All range tombstones visible at {@code sequence}, fragmented (for an iterator). */
    io.bloomkv.engine.internal.rangedel.RangeTombstoneList rangeTombstones(long sequence) {
        if (!hasRangeTombstones()) {
            return io.bloomkv.engine.internal.rangedel.RangeTombstoneList.EMPTY;
        }
        List<io.bloomkv.engine.internal.rangedel.RangeTombstone> all = new java.util.ArrayList<>();
        all.addAll(mem.rangeTombstones());
        for (MemTable m : imms) {
            all.addAll(m.rangeTombstones());
        }
        all.addAll(version.rangeTombstones());
        all.removeIf(t -> t.sequence() > sequence);
        return io.bloomkv.engine.internal.rangedel.RangeTombstoneList.of(all);
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
