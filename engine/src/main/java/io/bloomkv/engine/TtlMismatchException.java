package io.bloomkv.engine;

import java.nio.file.Path;

/**
 * {@link Db#open} of a TTL database without {@link Options#ttl}, or of a database created without TTL with one. Its
 * values carry a write time (or do not), so reading it the other way would return wrong values: the open is refused
 * before anything is replayed (RocksDB leaves this to the caller; bloomkv records the TTL flag in the MANIFEST,
 * engine/FORMAT.md). The TTL duration itself may change from one open to the next.
 */
public class TtlMismatchException extends InvalidArgumentException {
    private static final long serialVersionUID = 1L;

    private final boolean ttlDatabase;

    public TtlMismatchException(Path dir, boolean ttlDatabase) {
        super(
                ttlDatabase
                        ? "database " + dir
                                + " was created with a TTL (Options.ttl): open it with Options.ttl(duration)"
                        : "database " + dir + " was created without a TTL: open it without Options.ttl");
        this.ttlDatabase = ttlDatabase;
    }

    /** True when the database is a TTL database (it was opened without a TTL). */
    public boolean ttlDatabase() {
        return ttlDatabase;
    }
}
