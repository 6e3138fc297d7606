package io.bloomkv.engine;

import java.nio.file.Path;

/** A call that would write to a backup directory opened with {@link BackupEngine#openReadOnly}. */
public class BackupReadOnlyException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    private final transient Path directory;

    public BackupReadOnlyException(Path directory, String operation) {
        super(operation + " refused: backup directory " + directory + " is open read-only");
        this.directory = directory;
    }

    /** The backup directory (absolute). */
    public Path directory() {
        return directory;
    }
}
