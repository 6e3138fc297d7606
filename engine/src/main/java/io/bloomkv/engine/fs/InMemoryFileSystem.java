package io.bloomkv.engine.fs;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A file system held entirely in memory, in the manner of LevelDB's memenv and Pebble's
 * {@code vfs.NewMem}: for tests and fuzzing that want the engine's file handling without a disk.
 * Nothing touches the real file system; paths only name entries of this instance (they are made
 * absolute against the working directory and normalized, so {@code a/./b} and {@code a/b} are one
 * entry). Thread-safe.
 *
 * <ul>
 *   <li><b>Files</b> are growable byte arrays of at most {@link #MAX_FILE_SIZE} bytes. A {@link
 *       ReadableFile} reads the current bytes of the file it opened: it sees later appends, and keeps
 *       reading a file that was deleted or replaced by a rename after it was opened, as a POSIX
 *       descriptor does. {@link #newWritableFile} of an existing file truncates it in place (as
 *       {@code O_TRUNC} does), so readers opened before see it shrink. {@link WritableFile#flush} and
 *       {@link WritableFile#sync} only check that the file is open: every appended byte is at once
 *       visible and as durable as this file system gets (it has no crash model; wrap it in a
 *       {@code FaultInjectingFileSystem} of {@code bloomkv-testing} for one). A reader or writer throws an {@link IOException}
 *       once closed; closing again does nothing.
 *   <li><b>Directories</b> are explicit, as on disk: a file can only be created in a directory that
 *       exists ({@link #createDirectories}; a root such as {@code /} always exists), {@link #list}
 *       returns files and subdirectories, {@link #delete} refuses a non-empty directory, and
 *       {@link #syncDirectory} does nothing but check that the directory exists. {@link #size} of a
 *       directory is 0. {@link #rename} moves files only.
 *   <li><b>Locks</b> ({@link #tryLock}) are exclusive per path within this instance; the lock file is
 *       created if missing.
 *   <li><b>Direct reads</b> ({@link #newDirectReadableFile}) are refused, as the interface's default
 *       does: there is no page cache to bypass. So are <b>mapped reads</b> ({@link #newMappedReadableFile}):
 *       the engine then reads with {@link #newReadableFile}.
 * </ul>
 *
 * <p>Errors are those of {@link DiskFileSystem} on Linux: {@link NoSuchFileException} for a missing
 * file or parent directory, {@link NotDirectoryException} when listing a file, {@link
 * DirectoryNotEmptyException}, {@link FileAlreadyExistsException} when a directory to create is a
 * file, {@link EOFException} for a read past the end, and a {@link FileSystemException} naming the
 * path for the rest (a file operation on a directory).
 */
public final class InMemoryFileSystem implements FileSystem {
    /** Largest file, in bytes: about the largest Java array. */
    public static final int MAX_FILE_SIZE = Integer.MAX_VALUE - 8;

    private static final byte[] EMPTY = new byte[0];

    /** Files by normalized absolute path; guarded by {@code this}. */
    private final Map<Path, Data> files = new HashMap<>();
    /** Directories by normalized absolute path, each with the names of its entries; roots are added on first use. Guarded by {@code this}. */
    private final Map<Path, TreeSet<String>> dirs = new HashMap<>();
    /** Paths whose lock is held; guarded by {@code this}. */
    private final Set<Path> locked = new HashSet<>();

    /** An empty file system (only its roots exist). */
    public InMemoryFileSystem() {}

    @Override
    public WritableFile newWritableFile(Path p) throws IOException {
        Path key = key(p);
        Data d;
        synchronized (this) {
            d = files.get(key);
            if (d != null) {
                d.truncate();
            } else {
                d = create(p, key);
            }
        }
        return new MemWritableFile(p, d);
    }

    @Override
    public ReadableFile newReadableFile(Path p) throws IOException {
        Path key = key(p);
        Data d;
        synchronized (this) {
            d = files.get(key);
            if (d == null) {
                throw isDirectory(key)
                        ? new FileSystemException(p.toString(), null, "Is a directory")
                        : new NoSuchFileException(p.toString());
            }
        }
        return new MemReadableFile(p, d);
    }

    @Override
    public synchronized boolean exists(Path p) {
        Path key = key(p);
        return files.containsKey(key) || isDirectory(key);
    }

    /** Size of the file {@code p}; 0 for a directory. */
    @Override
    public long size(Path p) throws IOException {
        Path key = key(p);
        Data d;
        synchronized (this) {
            d = files.get(key);
            if (d == null) {
                if (isDirectory(key)) {
                    return 0;
                }
                throw new NoSuchFileException(p.toString());
            }
        }
        return d.size();
    }

    /** Deletes the file or empty directory {@code p}; no error if it does not exist. Open readers and writers of a file keep working on its bytes. */
    @Override
    public synchronized void delete(Path p) throws IOException {
        Path key = key(p);
        if (files.remove(key) != null) {
            entries(key.getParent()).remove(name(key));
            return;
        }
        if (key.getParent() == null) {
            throw new FileSystemException(p.toString(), null, "cannot delete a root directory");
        }
        TreeSet<String> children = dirs.get(key);
        if (children == null) {
            return;
        }
        if (!children.isEmpty()) {
            throw new DirectoryNotEmptyException(p.toString());
        }
        dirs.remove(key);
        entries(key.getParent()).remove(name(key));
    }

    /** Renames the file {@code from} to {@code to}, replacing a file {@code to}; directories cannot be renamed. */
    @Override
    public synchronized void rename(Path from, Path to) throws IOException {
        Path src = key(from);
        Path dst = key(to);
        Data d = files.get(src);
        if (d == null) {
            if (isDirectory(src)) {
                throw new FileSystemException(from.toString(), to.toString(), "renaming a directory is not supported");
            }
            throw new NoSuchFileException(from.toString());
        }
        if (isDirectory(dst)) {
            throw new FileSystemException(from.toString(), to.toString(), "Is a directory");
        }
        TreeSet<String> target = parentEntries(to, dst);
        if (src.equals(dst)) {
            return;
        }
        files.remove(src);
        entries(src.getParent()).remove(name(src));
        files.put(dst, d);
        target.add(name(dst));
    }

    /** Makes {@code link} a second name of the bytes of {@code existing} (a write through either name shows in both). */
    @Override
    public synchronized void link(Path existing, Path link) throws IOException {
        Path src = key(existing);
        Path dst = key(link);
        Data d = files.get(src);
        if (d == null) {
            throw isDirectory(src)
                    ? new FileSystemException(existing.toString(), link.toString(), "Is a directory")
                    : new NoSuchFileException(existing.toString());
        }
        if (files.containsKey(dst) || isDirectory(dst)) {
            throw new FileAlreadyExistsException(link.toString());
        }
        TreeSet<String> target = parentEntries(link, dst);
        files.put(dst, d);
        target.add(name(dst));
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        Path key = key(dir);
        List<Path> out;
        synchronized (this) {
            TreeSet<String> children = entries(key);
            if (children == null) {
                throw files.containsKey(key)
                        ? new NotDirectoryException(dir.toString())
                        : new NoSuchFileException(dir.toString());
            }
            out = new ArrayList<>(children.size());
            for (String name : children) {
                out.add(dir.resolve(name));
            }
        }
        out.sort(null);
        return out;
    }

    @Override
    public synchronized void createDirectories(Path dir) throws IOException {
        Path key = key(dir);
        Path root = key.getRoot();
        Path at = root;
        entries(root);
        for (int i = 0; i < key.getNameCount(); i++) {
            Path next = at.resolve(key.getName(i));
            if (files.containsKey(next)) {
                throw new FileAlreadyExistsException(next.toString(), null, "exists but is not a directory");
            }
            if (!dirs.containsKey(next)) {
                dirs.put(next, new TreeSet<>());
                entries(at).add(name(next));
            }
            at = next;
        }
    }

    /** Does nothing but check that {@code dir} is a directory: entries are durable at once. */
    @Override
    public synchronized void syncDirectory(Path dir) throws IOException {
        if (!isDirectory(key(dir))) {
            throw new NoSuchFileException(dir.toString(), null, "not a directory");
        }
    }

    @Override
    public Optional<Closeable> tryLock(Path lockFile) throws IOException {
        Path key = key(lockFile);
        synchronized (this) {
            if (!files.containsKey(key)) {
                create(lockFile, key);
            }
            if (!locked.add(key)) {
                return Optional.empty();
            }
        }
        AtomicBoolean released = new AtomicBoolean();
        return Optional.of(() -> {
            if (released.compareAndSet(false, true)) {
                synchronized (InMemoryFileSystem.this) {
                    locked.remove(key);
                }
            }
        });
    }

    @Override
    public synchronized String toString() {
        return "InMemoryFileSystem[" + files.size() + " files, " + dirs.size() + " directories]";
    }

    private static Path key(Path p) {
        return Objects.requireNonNull(p, "path").toAbsolutePath().normalize();
    }

    private static String name(Path key) {
        return key.getFileName().toString();
    }

    /** Whether {@code key} is a directory (a root always is). Caller holds {@code this}. */
    private boolean isDirectory(Path key) {
        return key.getParent() == null || dirs.containsKey(key);
    }

    /** The entry names of directory {@code key}, or null when it is not one. Caller holds {@code this}. */
    private TreeSet<String> entries(Path key) {
        TreeSet<String> e = dirs.get(key);
        if (e == null && key.getParent() == null) {
            e = new TreeSet<>();
            dirs.put(key, e);
        }
        return e;
    }

    /** The entries of the directory that is to hold {@code key}; fails as creating a file there would. Caller holds {@code this}. */
    private TreeSet<String> parentEntries(Path p, Path key) throws IOException {
        if (key.getParent() == null) {
            throw new FileSystemException(p.toString(), null, "Is a directory");
        }
        TreeSet<String> parent = entries(key.getParent());
        if (parent == null) {
            if (files.containsKey(key.getParent())) {
                throw new FileSystemException(p.toString(), null, "Not a directory");
            }
            throw new NoSuchFileException(p.toString());
        }
        return parent;
    }

    /** Creates the empty file {@code key}, which does not exist as a file. Caller holds {@code this}. */
    private Data create(Path p, Path key) throws IOException {
        if (isDirectory(key)) {
            throw new FileSystemException(p.toString(), null, "Is a directory");
        }
        TreeSet<String> parent = parentEntries(p, key);
        Data d = new Data();
        files.put(key, d);
        parent.add(name(key));
        return d;
    }

    /** The bytes of one file, shared by its readers and writers. */
    private static final class Data {
        private byte[] bytes = EMPTY;
        private int size;

        synchronized void append(Path path, byte[] b, int off, int len) throws IOException {
            if (len > MAX_FILE_SIZE - size) {
                throw new FileSystemException(
                        path.toString(),
                        null,
                        "file would exceed " + MAX_FILE_SIZE + " bytes, the largest an in-memory file holds (size "
                                + size + ", append of " + len + ")");
            }
            int need = size + len;
            if (need > bytes.length) {
                int cap = (int) Math.min(MAX_FILE_SIZE, Math.max(need, Math.max(64, 2L * bytes.length)));
                bytes = Arrays.copyOf(bytes, cap);
            }
            System.arraycopy(b, off, bytes, size, len);
            size = need;
        }

        synchronized void read(Path path, long pos, byte[] dst, int off, int len) throws EOFException {
            if (pos > size - (long) len) {
                throw new EOFException(
                        "read of " + len + " bytes at " + pos + " past the end of " + path + " (size " + size + ")");
            }
            System.arraycopy(bytes, (int) pos, dst, off, len);
        }

        synchronized int size() {
            return size;
        }

        synchronized void truncate() {
            bytes = EMPTY;
            size = 0;
        }
    }

    /** What a reader and a writer share: the path, and IOException after close. */
    private abstract static class MemHandle {
        final Path path;
        private volatile boolean closed;

        MemHandle(Path path) {
            this.path = path;
        }

        public Path path() {
            return path;
        }

        public void close() {
            closed = true;
        }

        final void ensureOpen() throws IOException {
            if (closed) {
                throw new IOException("file is closed: " + path);
            }
        }
    }

    private static final class MemWritableFile extends MemHandle implements WritableFile {
        private final Data data;
        private long size;

        MemWritableFile(Path path, Data data) {
            super(path);
            this.data = data;
        }

        @Override
        public void append(byte[] b, int off, int len) throws IOException {
            ensureOpen();
            Objects.checkFromIndexSize(off, len, b.length);
            data.append(path, b, off, len);
            size += len;
        }

        @Override
        public void flush() throws IOException {
            ensureOpen();
        }

        @Override
        public void sync() throws IOException {
            ensureOpen();
        }

        @Override
        public long size() {
            return size;
        }
    }

    private static final class MemReadableFile extends MemHandle implements ReadableFile {
        private final Data data;

        MemReadableFile(Path path, Data data) {
            super(path);
            this.data = data;
        }

        @Override
        public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
            ensureOpen();
            FileArgs.checkRead(pos, dst, off, len);
            data.read(path, pos, dst, off, len);
        }

        @Override
        public long size() throws IOException {
            ensureOpen();
            return data.size();
        }
    }
}
