package io.bloomkv.engine.fs;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The real disk without fsync: {@link WritableFile#sync()} only flushes and {@link #syncDirectory}
 * does nothing. For tests under a {@link FaultInjectingFileSystem}, whose {@link
 * FaultInjectingFileSystem#crash()} decides what survives from its own record of syncs, so the
 * device's durability is irrelevant and thousands of runs stay fast.
 */
public final class NoFsyncFileSystem implements FileSystem {
    private final FileSystem disk = FileSystem.disk();

    @Override
    public WritableFile newWritableFile(Path p) throws IOException {
        WritableFile f = disk.newWritableFile(p);
        return new WritableFile() {
            @Override
            public void append(byte[] b, int off, int len) throws IOException {
                f.append(b, off, len);
            }

            @Override
            public void flush() throws IOException {
                f.flush();
            }

            @Override
            public void sync() throws IOException {
                f.flush();
            }

            @Override
            public long size() {
                return f.size();
            }

            @Override
            public Path path() {
                return f.path();
            }

            @Override
            public void close() throws IOException {
                f.close();
            }
        };
    }

    @Override
    public ReadableFile newReadableFile(Path p) throws IOException {
        return disk.newReadableFile(p);
    }

    @Override
    public boolean exists(Path p) {
        return disk.exists(p);
    }

    @Override
    public long size(Path p) throws IOException {
        return disk.size(p);
    }

    @Override
    public void delete(Path p) throws IOException {
        disk.delete(p);
    }

    @Override
    public void rename(Path from, Path to) throws IOException {
        disk.rename(from, to);
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        return disk.list(dir);
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        disk.createDirectories(dir);
    }

    @Override
    public void syncDirectory(Path dir) {
        // durability is simulated by the FaultInjectingFileSystem above
    }

    @Override
    public Optional<Closeable> tryLock(Path lockFile) throws IOException {
        return disk.tryLock(lockFile);
    }
}
