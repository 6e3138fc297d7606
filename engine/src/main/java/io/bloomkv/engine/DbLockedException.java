package io.bloomkv.engine;

import java.nio.file.Path;

/** The database directory's LOCK file is held by another process or another open {@link Db} in this JVM. */
public class DbLockedException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    private final transient Path directory;

    public DbLockedException(Path directory) {
        super("database " + directory + " is already open (LOCK held by another process or Db instance)");
        this.directory = directory;
    }

    public Path directory() {
        return directory;
    }
}
