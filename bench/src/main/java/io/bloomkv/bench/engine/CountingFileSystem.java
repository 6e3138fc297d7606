package io.bloomkv.bench.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.fs.WritableFile;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * Delegates to another {@link FileSystem} and counts the bytes appended to WAL files ({@code *.log})
 * and to table files ({@code *.sst}), so the harness can measure bloomkv's write volume itself.
 */
final class CountingFileSystem implements FileSystem {
    private final FileSystem inner;
    final LongAdder walBytes = new LongAdder();
    final LongAdder tableBytes = new LongAdder();

    CountingFileSystem(FileSystem inner) {
        this.inner = inner;
    }

    @Override
    public WritableFile newWritableFile(Path p) throws IOException {
        WritableFile f = inner.newWritableFile(p);
        String name = p.getFileName().toString();
        LongAdder counter = name.endsWith(".log") ? walBytes : name.endsWith(".sst") ? tableBytes : null;
        return counter == null ? f : new Counted(f, counter);
    }

    @Override
    public ReadableFile newDirectReadableFile(Path p) throws IOException {
        return inner.newDirectReadableFile(p);
    }

    private record Counted(WritableFile inner, LongAdder counter) implements WritableFile {
        @Override
        public void append(byte[] b, int off, int len) throws IOException {
            inner.append(b, off, len);
            counter.add(len);
        }

        @Override
        public void flush() throws IOException {
            inner.flush();
        }

        @Override
        public void sync() throws IOException {
            inner.sync();
        }

        @Override
        public long size() {
            return inner.size();
        }

        @Override
        public Path path() {
            return inner.path();
        }

        @Override
        public void close() throws IOException {
            inner.close();
        }
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
