package io.bloomkv.engine.fs;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The disk is full: what the JDK reports for {@code ENOSPC} ("No space left on device"), raised by a
 * {@link FaultInjectingFileSystem} whose {@linkplain FaultInjectingFileSystem#setFreeSpace free space}
 * ran out. As with a real full disk, the bytes that still fitted may have been written before it.
 */
public final class NoSpaceLeftException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Path path;

    public NoSpaceLeftException(Path path, long requested, long written) {
        super("No space left on device (ENOSPC): " + requested + " bytes to append to " + path + ", " + written
                + " fitted");
        this.path = path;
    }

    public Path path() {
        return path;
    }
}
