package io.bloomkv.engine;

/** When a write's WAL record is forced to stable storage. */
public enum SyncMode {
    /**
     * The record is handed to the operating system before the write returns, never fsynced by the
     * write: a process crash loses nothing, a machine crash may lose the latest writes (a suffix:
     * recovery stops at the first WAL that came back shorter than it was written, engine/FORMAT.md,
     * "Log-start record"). {@link Db#syncWal()} makes every earlier write durable.
     */
    NONE,
    /** Every write is fsynced on its own before it returns. Nothing acknowledged is ever lost. */
    EVERY_WRITE,
    /**
     * Concurrent writers are batched behind one leader that appends all their records and fsyncs
     * once for the group; every write still returns only after its record is fsynced.
     */
    GROUP_COMMIT
}
