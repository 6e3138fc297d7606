package io.bloomkv.engine.fs;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A file system that supports everything but direct reads, standing in for one that rejects
 * O_DIRECT: on this machine's kernel even tmpfs accepts it.
 */
public final class FileSystemWithoutDirectReads extends ForwardingFileSystem {
    public FileSystemWithoutDirectReads(FileSystem inner) {
        super(inner);
    }

    @Override
    public ReadableFile newDirectReadableFile(Path p) throws IOException {
        throw new IOException(getClass().getSimpleName() + " does not support direct reads (O_DIRECT): " + p);
    }
}
