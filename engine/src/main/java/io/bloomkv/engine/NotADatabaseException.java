package io.bloomkv.engine;

import java.nio.file.Path;

/**
 * The path given to {@link Db#open} is not a bloomkv database: it is a regular file, or a directory
 * that holds other files but no CURRENT, or it does not exist and {@link Options#createIfMissing}
 * is false.
 */
public class NotADatabaseException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    private final transient Path path;

    public NotADatabaseException(Path path, String why) {
        super(path + " is not a bloomkv database: " + why);
        this.path = path;
    }

    public Path path() {
        return path;
    }
}
