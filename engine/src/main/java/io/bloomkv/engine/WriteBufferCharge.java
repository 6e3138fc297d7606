package io.bloomkv.engine;

import io.bloomkv.engine.internal.memtable.MemTable;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * What one database has charged to its {@link WriteBufferManager}: the bytes of its mutable memtable as
 * last measured, and those of each frozen memtable until its flush. Every method runs under the
 * database mutex (DbState's lock). With no manager every method does nothing.
 */
final class WriteBufferCharge {
    private final WriteBufferManager manager;
    private long mutableCharged;
    private final Map<MemTable, Long> frozen = new IdentityHashMap<>();

    WriteBufferCharge(WriteBufferManager manager) {
        this.manager = manager;
    }

    /**
     * Brings the charge of the mutable memtable {@code mem} up to date; true when the manager asks this
     * write to freeze it (the shared budget is exceeded and the memtable holds at least the manager's
     * {@link WriteBufferManager#minFreezeBytes()}).
     */
    boolean mustFreeze(MemTable mem) {
        if (manager == null) {
            return false;
        }
        long now = mem.approximateMemoryUsage();
        manager.chargeMutable(now - mutableCharged);
        mutableCharged = now;
        return now >= manager.minFreezeBytes() && manager.shouldFlush();
    }

    /** {@code mem} was frozen (it joined the immutable memtables); the new mutable memtable starts uncharged. */
    void frozen(MemTable mem) {
        if (manager == null) {
            return;
        }
        long now = mem.approximateMemoryUsage();
        manager.chargeMutable(now - mutableCharged);
        manager.freeze(now);
        frozen.put(mem, now);
        mutableCharged = 0;
    }

    /** The frozen memtable {@code mem} was written to a table and dropped. */
    void flushed(MemTable mem) {
        if (manager == null) {
            return;
        }
        Long bytes = frozen.remove(mem);
        if (bytes != null) {
            manager.releaseFrozen(bytes);
        }
    }

    /** The database closed: everything it charged is released (exactly once). */
    void releaseAll() {
        if (manager == null) {
            return;
        }
        manager.chargeMutable(-mutableCharged);
        mutableCharged = 0;
        for (long bytes : frozen.values()) {
            manager.releaseFrozen(bytes);
        }
        frozen.clear();
    }
}
