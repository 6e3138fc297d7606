package io.bloomkv.engine.fs;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * A file system that supports everything but direct reads (it keeps {@link FileSystem}'s refusing
 * default), standing in for one that rejects O_DIRECT: on this machine's kernel even tmpfs accepts it.
 */
public final class FileSystemWithoutDirectReads implements FileSystem {
    private final FileSystem inner;

    public FileSystemWithoutDirectReads(FileSystem inner) {
        this.inner = inner;
    }

    @Override
    public WritableFile newWritableFile(Path p) throws IOException {
        return inner.newWritableFile(p);
    }

    @Override
    public ReadableFile newReadableFile(Path p) throws IOException {
        return inner.newReadableFile(p);
    }

    @Override
    public boolean exists(Path p) {
        return inner.exists(p);
    }

    @Override
    public long size(Path p) throws IOException {
        return inner.size(p);
    }

    @Override
    public void delete(Path p) throws IOException {
        inner.delete(p);
    }

    @Override
    public void rename(Path from, Path to) throws IOException {
        inner.rename(from, to);
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        return inner.list(dir);
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        inner.createDirectories(dir);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        inner.syncDirectory(dir);
    }

    @Override
    public Optional<Closeable> tryLock(Path lockFile) throws IOException {
        return inner.tryLock(lockFile);
    }
}
