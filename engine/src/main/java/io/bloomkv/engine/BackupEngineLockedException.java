package io.bloomkv.engine;

import java.nio.file.Path;

/**
 * The backup directory's LOCK file is held by another writable {@link BackupEngine}, of another process or of this
 * JVM: one writable engine per backup directory at a time ({@link BackupEngine#open}), since a second one's garbage
 * collection would remove the files of a backup the first is creating. {@link BackupEngine#openReadOnly} takes no lock.
 */
public class BackupEngineLockedException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    private final transient Path directory;

    public BackupEngineLockedException(Path directory) {
        super("backup directory " + directory
                + " is already open for writing (LOCK held by another process or BackupEngine)");
        this.directory = directory;
    }

    /** The backup directory (absolute). */
    public Path directory() {
        return directory;
    }
}
