package io.bloomkv.engine;

import java.nio.file.Path;

/**
 * A {@link BackupEngine} was used after {@link BackupEngine#close()}: a writable engine's lock on its backup directory
 * is released then, so another engine may be working there.
 */
public class BackupEngineClosedException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    private final transient Path directory;

    public BackupEngineClosedException(Path directory, String operation) {
        super(operation + " refused: the BackupEngine on " + directory + " is closed");
        this.directory = directory;
    }

    /** The backup directory (absolute). */
    public Path directory() {
        return directory;
    }
}
