package io.bloomkv.engine.fs;

import io.bloomkv.bloom.JvmEnvironment;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import net.openhft.chronicle.core.UnsafeMemory;

/**
 * The real file system, on {@link FileChannel}s: positional reads, {@code force(false)} (fdatasync,
 * which also persists the file size) for {@link WritableFile#sync()}, an fsync of the directory for
 * {@link #syncDirectory}, and locks that refuse a second holder whether it is another process
 * ({@link FileChannel#tryLock()}) or this JVM (a set of held paths, since OS locks are per process).
 */
public final class DiskFileSystem implements FileSystem {
    static {
        // Before Chronicle's Unsafe is first used here (a file system used without Db.open: a bulk-load file, an
        // inspected table): see JvmEnvironment.
        JvmEnvironment.ensureInitialized();
    }

    static final DiskFileSystem INSTANCE = new DiskFileSystem();

    /**
     * User-space buffer of a new {@link WritableFile}. A file whose appends fill it (a table being written) gets one
     * twice as large at each fill, up to {@link #MAX_WRITE_BUFFER_SIZE}: a few large writes instead of many small ones,
     * so the write path stays cold (the JIT does not compile the channel's write path into the table writer while a
     * flush or compaction runs) and costs fewer system calls. A file flushed before its buffer fills (a WAL or
     * MANIFEST between syncs) keeps the small one, so an open database holds no large buffer.
     */
    static final int WRITE_BUFFER_SIZE = 64 * 1024;

    /** Largest user-space buffer of a {@link WritableFile} (see {@link #WRITE_BUFFER_SIZE}). */
    static final int MAX_WRITE_BUFFER_SIZE = 1 << 20;

    private static final Set<Path> LOCKED_IN_THIS_JVM = ConcurrentHashMap.newKeySet();

    private DiskFileSystem() {}

    @Override
    public WritableFile newWritableFile(Path p) throws IOException {
        FileChannel ch = FileChannel.open(
                p, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        return new DiskWritableFile(p, ch);
    }

    /** {@link #newWritableFile}'s file over an open {@code channel}: for tests, whose channel may fail a write. */
    static WritableFile writableFileOver(Path p, FileChannel channel) {
        return new DiskWritableFile(p, channel);
    }

    @Override
    public ReadableFile newReadableFile(Path p) throws IOException {
        FileChannel ch = FileChannel.open(p, StandardOpenOption.READ);
        makeUninterruptible(ch);
        return new DiskReadableFile(p, ch);
    }

    /** Buffer of a {@link DirectWritableFile}: the size of each direct write. */
    static final int DIRECT_WRITE_BUFFER_SIZE = 1 << 20;

    /**
     * Creates {@code p} for appends with O_DIRECT ({@link DirectWritableFile}, writes of
     * {@link #DIRECT_WRITE_BUFFER_SIZE} bytes); refuses, naming the path, where the file system does not support it.
     */
    @Override
    public WritableFile newDirectWritableFile(Path p) throws IOException {
        return DirectWritableFile.open(p, DIRECT_WRITE_BUFFER_SIZE);
    }

    /** Opens {@code p} with O_DIRECT ({@link DirectReadableFile}); refuses, naming the path, where the file system does not support it. */
    @Override
    public ReadableFile newDirectReadableFile(Path p) throws IOException {
        return DirectReadableFile.open(p);
    }

    /** Maps {@code p} read-only ({@link MappedReadableFile}); refuses, naming the path, where it cannot be mapped. */
    @Override
    public ReadableFile newMappedReadableFile(Path p) throws IOException {
        return MappedReadableFile.open(p);
    }

    /** True on Linux with native access (Chronicle's posix binding), where logs can be written through mappings. */
    @Override
    public boolean supportsMappedWrites() {
        return MappedWritableFile.supported();
    }

    /** Creates {@code p} for appends through mappings ({@link MappedWritableFile}); refuses where not supported. */
    @Override
    public WritableFile newMappedWritableFile(Path p) throws IOException {
        return MappedWritableFile.open(p);
    }

    /**
     * Mappings of files written through {@link #newMappedWritableFile} (one region of each open file that has had an
     * append) that are not unmapped yet, in this process (for leak checks).
     */
    public static long liveMappedWritableRegions() {
        return MappedWritableFile.liveMappings();
    }

    /** Files mapped by {@link #newMappedReadableFile} and not yet closed, in this process (for leak checks). */
    public static long liveMappedFiles() {
        return MappedReadableFile.liveMappings();
    }

    /** Bytes of the mappings counted by {@link #liveMappedFiles}. */
    public static long liveMappedBytes() {
        return MappedReadableFile.liveMappedBytes();
    }

    @Override
    public boolean exists(Path p) {
        return Files.exists(p);
    }

    @Override
    public long size(Path p) throws IOException {
        return Files.size(p);
    }

    @Override
    public void delete(Path p) throws IOException {
        Files.deleteIfExists(p);
    }

    @Override
    public void rename(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** {@link Files#createLink}; fails (an IOException) where the file system or the device pair has no hard links. */
    @Override
    public void link(Path existing, Path link) throws IOException {
        try {
            Files.createLink(link, existing);
        } catch (UnsupportedOperationException e) {
            throw new IOException("hard links are not supported here: " + existing + " -> " + link, e);
        }
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> out = new ArrayList<>();
            s.sorted().forEach(out::add);
            return out;
        }
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        Files.createDirectories(dir);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new NoSuchFileException(dir.toString(), null, "not a directory");
        }
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    @Override
    public Optional<Closeable> tryLock(Path lockFile) throws IOException {
        Path key = lockFile.toAbsolutePath().normalize();
        if (!LOCKED_IN_THIS_JVM.add(key)) {
            return Optional.empty();
        }
        FileChannel ch = null;
        try {
            ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                ch.close();
                LOCKED_IN_THIS_JVM.remove(key);
                return Optional.empty();
            }
            return Optional.of(new HeldLock(key, ch, lock));
        } catch (IOException | RuntimeException e) {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            LOCKED_IN_THIS_JVM.remove(key);
            throw e;
        }
    }

    /**
     * An interrupt during a blocking read closes a plain FileChannel for every thread sharing it; the
     * JDK's internal {@code setUninterruptible} prevents that. Best effort: without the
     * {@code sun.nio.ch} export (the Chronicle flags include it) the channel stays interruptible.
     */
    static void makeUninterruptible(FileChannel ch) {
        try {
            ch.getClass().getMethod("setUninterruptible").invoke(ch);
        } catch (ReflectiveOperationException | RuntimeException ignored) {
            // not exported: keep the default behaviour
        }
    }

    private static final class HeldLock implements Closeable {
        private final Path key;
        private final FileChannel channel;
        private final FileLock lock;
        private final AtomicBoolean released = new AtomicBoolean();

        HeldLock(Path key, FileChannel channel, FileLock lock) {
            this.key = key;
            this.channel = channel;
            this.lock = lock;
        }

        @Override
        public void close() throws IOException {
            if (!released.compareAndSet(false, true)) {
                return;
            }
            try {
                lock.release();
            } finally {
                try {
                    channel.close();
                } finally {
                    LOCKED_IN_THIS_JVM.remove(key);
                }
            }
        }
    }

    /**
     * Appends gather in a direct buffer, written with {@code write(2)} when it fills or on flush: the channel writes a
     * direct buffer as it is, where a heap one is first copied into a temporary direct buffer of the JDK's (one more
     * copy of every table byte a flush or compaction writes). Its memory is freed at close, or when a larger buffer
     * replaces it, never left for the collector; nothing touches it after that.
     */
    private static final class DiskWritableFile implements WritableFile {
        private final Path path;
        private final FileChannel channel;
        private ByteBuffer buffer = ByteBuffer.allocateDirect(WRITE_BUFFER_SIZE);
        private long size;
        private boolean closed;

        DiskWritableFile(Path path, FileChannel channel) {
            this.path = path;
            this.channel = channel;
        }

        @Override
        public void append(byte[] b, int off, int len) throws IOException {
            ensureOpen();
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            if (len > buffer.remaining()) {
                flushBuffer();
                if (buffer.capacity() < MAX_WRITE_BUFFER_SIZE) {
                    ByteBuffer old = buffer;
                    buffer = ByteBuffer.allocateDirect(2 * old.capacity()); // it filled: see WRITE_BUFFER_SIZE
                    UnsafeMemory.UNSAFE.invokeCleaner(old); // empty, and no longer reachable from this file
                }
            }
            if (len >= buffer.capacity()) {
                writeAll(ByteBuffer.wrap(b, off, len));
            } else {
                buffer.put(b, off, len);
            }
            size += len;
        }

        @Override
        public void flush() throws IOException {
            ensureOpen();
            flushBuffer();
        }

        @Override
        public void sync() throws IOException {
            ensureOpen();
            flushBuffer();
            channel.force(false);
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public Path path() {
            return path;
        }

        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            try {
                flushBuffer();
            } finally {
                try {
                    channel.close();
                } finally {
                    UnsafeMemory.UNSAFE.invokeCleaner(buffer); // closed: no append or flush reaches it again
                }
            }
        }

        @Override
        public void closeWithoutFlush() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            try {
                channel.close();
            } finally {
                UnsafeMemory.UNSAFE.invokeCleaner(buffer); // closed: no append or flush reaches it again
            }
        }

        /**
         * Writes the buffered bytes. A write that fails part-way (a short write, then ENOSPC) leaves in the buffer,
         * ready for appends again, exactly the bytes not written: a later flush or close writes them once, after the
         * ones already in the file, never those a second time.
         */
        private void flushBuffer() throws IOException {
            if (buffer.position() > 0) {
                buffer.flip();
                try {
                    writeAll(buffer);
                } finally {
                    buffer.compact(); // empty after a whole write
                }
            }
        }

        private void writeAll(ByteBuffer src) throws IOException {
            while (src.hasRemaining()) {
                channel.write(src);
            }
        }

        private void ensureOpen() throws IOException {
            if (closed) {
                throw new IOException("file is closed: " + path);
            }
        }
    }

    private static final class DiskReadableFile implements ReadableFile {
        private final Path path;
        private final FileChannel channel;

        DiskReadableFile(Path path, FileChannel channel) {
            this.path = path;
            this.channel = channel;
        }

        @Override
        public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
            FileArgs.checkRead(pos, dst, off, len);
            ByteBuffer bb = ByteBuffer.wrap(dst, off, len);
            long p = pos;
            while (bb.hasRemaining()) {
                int n = channel.read(bb, p);
                if (n < 0) {
                    throw new EOFException("read of " + len + " bytes at " + pos + " past the end of " + path
                            + " (size " + channel.size() + ")");
                }
                p += n;
            }
        }

        @Override
        public long size() throws IOException {
            return channel.size();
        }

        @Override
        public Path path() {
            return path;
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }
}
