package io.bloomkv.engine.fs;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * A file system that forwards every call to another one (Guava's {@code Forwarding*} idiom):
 * subclasses override only the calls they change, such as counting bytes, dropping fsyncs or
 * refusing direct reads.
 *
 * <p>Two kinds of writable file are not forwarded by default, because a subclass that changes what
 * {@link #newWritableFile} returns (counting, dropping fsyncs) would otherwise be bypassed by them:
 * {@link #newDirectWritableFile} (TableFileWriter's O_DIRECT file) refuses, so writers fall back to
 * {@link #newWritableFile}, and mapped writes ({@link #supportsMappedWrites} is false here) leave the write-ahead log
 * on {@link #newWritableFile}. A subclass that wants either forwards it ({@link #delegateDirectWritableFile}; or
 * overrides {@link #supportsMappedWrites} and {@link #newMappedWritableFile}), wrapping the delegate's file as it
 * wraps its other writable files.
 */
public abstract class ForwardingFileSystem implements FileSystem {
    private final FileSystem delegate;

    protected ForwardingFileSystem(FileSystem delegate) {
        this.delegate = delegate;
    }

    /** The file system every call goes to. */
    protected final FileSystem delegate() {
        return delegate;
    }

    @Override
    public WritableFile newWritableFile(Path p) throws IOException {
        return delegate.newWritableFile(p);
    }

    @Override
    public ReadableFile newReadableFile(Path p) throws IOException {
        return delegate.newReadableFile(p);
    }

    /** The delegate's {@link FileSystem#newDirectWritableFile}, for subclasses that forward direct writes. */
    protected final WritableFile delegateDirectWritableFile(Path p) throws IOException {
        return delegate.newDirectWritableFile(p);
    }

    @Override
    public ReadableFile newDirectReadableFile(Path p) throws IOException {
        return delegate.newDirectReadableFile(p);
    }

    @Override
    public ReadableFile newMappedReadableFile(Path p) throws IOException {
        return delegate.newMappedReadableFile(p);
    }

    @Override
    public boolean exists(Path p) {
        return delegate.exists(p);
    }

    @Override
    public long size(Path p) throws IOException {
        return delegate.size(p);
    }

    @Override
    public void delete(Path p) throws IOException {
        delegate.delete(p);
    }

    @Override
    public void rename(Path from, Path to) throws IOException {
        delegate.rename(from, to);
    }

    @Override
    public void link(Path existing, Path link) throws IOException {
        delegate.link(existing, link);
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        return delegate.list(dir);
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        delegate.createDirectories(dir);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        delegate.syncDirectory(dir);
    }

    @Override
    public Optional<Closeable> tryLock(Path lockFile) throws IOException {
        return delegate.tryLock(lockFile);
    }

    /** A writable file that forwards every call to another one; subclasses override what they change. */
    public abstract static class ForwardingWritableFile implements WritableFile {
        private final WritableFile delegate;

        protected ForwardingWritableFile(WritableFile delegate) {
            this.delegate = delegate;
        }

        @Override
        public void append(byte[] b, int off, int len) throws IOException {
            delegate.append(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            delegate.flush();
        }

        @Override
        public void sync() throws IOException {
            delegate.sync();
        }

        @Override
        public long size() {
            return delegate.size();
        }

        @Override
        public Path path() {
            return delegate.path();
        }

        @Override
        public void close() throws IOException {
            delegate.close();
        }

        @Override
        public void closeWithoutFlush() throws IOException {
            delegate.closeWithoutFlush();
        }
    }

    /** A readable file that forwards every call to another one; subclasses override what they change. */
    public abstract static class ForwardingReadableFile implements ReadableFile {
        private final ReadableFile delegate;

        protected ForwardingReadableFile(ReadableFile delegate) {
            this.delegate = delegate;
        }

        @Override
        public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
            delegate.readFully(pos, dst, off, len);
        }

        @Override
        public long size() throws IOException {
            return delegate.size();
        }

        @Override
        public Path path() {
            return delegate.path();
        }

        @Override
        public void close() throws IOException {
            delegate.close();
        }
    }
}
