package io.bloomkv.engine;

import java.nio.file.Path;

/** A call that would write to a database opened with {@link Options#readOnly(boolean) readOnly(true)}. */
public class DbReadOnlyException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    private final transient Path directory;

    public DbReadOnlyException(Path directory, String operation) {
        super(operation + " refused: database " + directory + " is open read-only");
        this.directory = directory;
    }

    public Path directory() {
        return directory;
    }
}
