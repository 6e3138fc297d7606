package io.bloomkv.engine.fs;

import java.io.IOException;
import java.nio.file.Path;

/** An I/O error raised on purpose by a {@link FaultInjectingFileSystem}. */
public final class InjectedIOException extends IOException {
    private static final long serialVersionUID = 1L;

    private final FaultInjectingFileSystem.Op op;
    private final transient Path path;

    public InjectedIOException(FaultInjectingFileSystem.Op op, Path path) {
        super("injected " + op + " error on " + path);
        this.op = op;
        this.path = path;
    }

    public FaultInjectingFileSystem.Op op() {
        return op;
    }

    public Path path() {
        return path;
    }
}
