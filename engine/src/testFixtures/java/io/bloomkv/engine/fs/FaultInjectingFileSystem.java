package io.bloomkv.engine.fs;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps another {@link FileSystem} to test failure handling, in the manner of Pebble's
 * {@code errorfs}:
 *
 * <ul>
 *   <li><b>Injected errors.</b> {@link #inject}, {@link #injectNth} and {@link #injectFromNth} make the
 *       operations matching a {@link FaultPredicate} on (operation, path) throw an
 *       {@link InjectedIOException} before they touch the wrapped file system, e.g. "fail the 3rd write
 *       to *.log": {@code injectNth(on(Op.WRITE, "*.log"), 3)}.
 *   <li><b>Crashes.</b> The bytes of every file written through this file system are tracked. {@link
 *       #crash()} simulates a power loss: every such file is cut back to the bytes that had been
 *       {@link WritableFile#sync() synced}; a file that was created (or truncated) and <em>never
 *       synced vanishes</em>. {@link #crash(Random)} keeps, in addition, a random prefix of each file's
 *       unsynced bytes, and may keep never-synced files with a random prefix (a torn write). Open
 *       handles and locks die with the crash (any further use throws an {@link IOException}); the file
 *       system itself can be used at once to reopen the database.
 *   <li><b>Disk full.</b> {@link #setFreeSpace} gives the file system a number of free bytes: appends
 *       consume them, deletes, truncations and replacing renames give back the bytes of the files
 *       they drop. An append that does not fit writes the bytes that still fit and throws a {@link
 *       NoSpaceLeftException} ({@code ENOSPC}, "No space left on device"), as a real full disk does.
 * </ul>
 *
 * <p>Simplifications, documented as contract: deletes and renames are durable as soon as they
 * return ({@link #syncDirectory} is not needed for them to survive a crash); a rename carries the
 * synced length of its file. Files that existed before they were first written through this file
 * system are untouched by a crash. Thread-safe.
 */
public final class FaultInjectingFileSystem implements FileSystem {

    /** The operations a fault can target. */
    public enum Op {
        /** {@link FileSystem#newWritableFile}, {@link FileSystem#newMappedWritableFile}. */
        CREATE,
        /** {@link FileSystem#newReadableFile}. */
        OPEN,
        /** {@link WritableFile#append}. */
        WRITE,
        /** {@link WritableFile#flush}. */
        FLUSH,
        /** {@link WritableFile#sync}. */
        SYNC,
        /** {@link ReadableFile#readFully} and {@link ReadableFile#size}. */
        READ,
        /** {@link WritableFile#close} and {@link ReadableFile#close}. */
        CLOSE,
        DELETE,
        /** {@link FileSystem#rename}; the predicate is tested with the source and with the target path. */
        RENAME,
        /** {@link FileSystem#link}; the predicate is tested with the existing and with the new path. */
        LINK,
        LIST,
        /** {@link FileSystem#size}. */
        SIZE,
        MKDIRS,
        SYNC_DIR,
        LOCK
    }

    /** Selects the operations a fault applies to. */
    @FunctionalInterface
    public interface FaultPredicate {
        boolean test(Op op, Path path);

        default FaultPredicate and(FaultPredicate other) {
            return (op, path) -> test(op, path) && other.test(op, path);
        }

        default FaultPredicate or(FaultPredicate other) {
            return (op, path) -> test(op, path) || other.test(op, path);
        }
    }

    /** Matches {@code op} on files whose name matches {@code glob} (e.g. {@code "*.log"}). */
    public static FaultPredicate on(Op op, String glob) {
        PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + glob);
        return (o, p) -> o == op && p != null && p.getFileName() != null && m.matches(p.getFileName());
    }

    /** Matches {@code op} on any path. */
    public static FaultPredicate on(Op op) {
        return (o, p) -> o == op;
    }

    /** Matches every operation on files whose name matches {@code glob}. */
    public static FaultPredicate anyOp(String glob) {
        PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + glob);
        return (o, p) -> p != null && p.getFileName() != null && m.matches(p.getFileName());
    }

    /** An installed fault. */
    public final class Fault {
        private final FaultPredicate predicate;
        private final int firstFailing;
        private final boolean onlyOnce;
        private final AtomicInteger matches = new AtomicInteger();
        private final AtomicInteger fired = new AtomicInteger();

        private Fault(FaultPredicate predicate, int firstFailing, boolean onlyOnce) {
            this.predicate = predicate;
            this.firstFailing = firstFailing;
            this.onlyOnce = onlyOnce;
        }

        boolean shouldFail(Op op, Path path) {
            if (!predicate.test(op, path)) {
                return false;
            }
            int n = matches.incrementAndGet();
            boolean fail = onlyOnce ? n == firstFailing : n >= firstFailing;
            if (fail) {
                fired.incrementAndGet();
            }
            return fail;
        }

        /** Operations that matched the predicate so far. */
        public int matches() {
            return matches.get();
        }

        /** Errors this fault has thrown. */
        public int fired() {
            return fired.get();
        }

        public void remove() {
            faults.remove(this);
        }
    }

    private static final class FileState {
        long syncedSize;
        boolean everSynced;
    }

    private final FileSystem inner;
    private final List<Fault> faults = new CopyOnWriteArrayList<>();
    private final AtomicLong injected = new AtomicLong();
    /** Files written through this file system since the last crash, by normalized absolute path. */
    private final Map<Path, FileState> tracked = new HashMap<>();

    private final Set<Handle> openHandles = ConcurrentHashMap.newKeySet();
    private final Set<Closeable> heldLocks = ConcurrentHashMap.newKeySet();
    private final AtomicInteger crashes = new AtomicInteger();
    /** Free bytes left when {@link #quotaActive}; guarded by {@code this}. */
    private long freeSpace;

    private boolean quotaActive;

    public FaultInjectingFileSystem(FileSystem inner) {
        this.inner = Objects.requireNonNull(inner, "inner");
    }

    /** A fault injecting file system over the real disk. */
    public static FaultInjectingFileSystem overDisk() {
        return new FaultInjectingFileSystem(FileSystem.disk());
    }

    /** Every operation matching {@code p} fails until the fault is removed. */
    public Fault inject(FaultPredicate p) {
        return add(new Fault(p, 1, false));
    }

    /** Only the {@code n}-th (1-based) operation matching {@code p} fails. */
    public Fault injectNth(FaultPredicate p, int n) {
        checkN(n);
        return add(new Fault(p, n, true));
    }

    /** The {@code n}-th (1-based) operation matching {@code p} and every later one fail. */
    public Fault injectFromNth(FaultPredicate p, int n) {
        checkN(n);
        return add(new Fault(p, n, false));
    }

    public void clearFaults() {
        faults.clear();
    }

    /**
     * From now on the file system has {@code bytes} of free space (see the class comment); appends
     * beyond it fail with a {@link NoSpaceLeftException}.
     */
    public synchronized void setFreeSpace(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("free space must be >= 0: " + bytes);
        }
        freeSpace = bytes;
        quotaActive = true;
    }

    /** Removes the limit of {@link #setFreeSpace}: the disk is no longer full. */
    public synchronized void clearFreeSpaceLimit() {
        quotaActive = false;
    }

    /** Free bytes left, or {@link Long#MAX_VALUE} when there is no limit. */
    public synchronized long freeSpace() {
        return quotaActive ? freeSpace : Long.MAX_VALUE;
    }

    /** Bytes of {@code len} that fit in the free space, taken from it. */
    private synchronized long reserve(long len) {
        if (!quotaActive) {
            return len;
        }
        long granted = Math.min(len, freeSpace);
        freeSpace -= granted;
        return granted;
    }

    /** Gives back the bytes of {@code p} (about to be deleted, truncated or replaced) when a limit is set. */
    private void release(Path p) {
        synchronized (this) {
            if (!quotaActive) {
                return;
            }
        }
        long size;
        try {
            size = inner.exists(p) ? inner.size(p) : 0;
        } catch (IOException e) {
            size = 0;
        }
        synchronized (this) {
            if (quotaActive) {
                freeSpace += size;
            }
        }
    }

    /** Errors injected since this file system was created. */
    public long injectedErrors() {
        return injected.get();
    }

    /** Crashes simulated so far. */
    public int crashCount() {
        return crashes.get();
    }

    /** Bytes of {@code p} that would survive a {@link #crash()} now, or -1 if {@code p} would vanish or is not tracked. */
    public synchronized long durableSize(Path p) {
        FileState s = tracked.get(key(p));
        return s == null || !s.everSynced ? -1 : s.syncedSize;
    }

    /** Simulates a power loss that keeps exactly the synced bytes (see the class comment). */
    public void crash() throws IOException {
        crash(null);
    }

    /**
     * Simulates a power loss that keeps the synced bytes of every file plus, when {@code torn} is not
     * null, a random prefix of its unsynced bytes. With {@code torn}, a file that was never synced
     * either vanishes or keeps a random prefix.
     */
    public synchronized void crash(Random torn) throws IOException {
        crashes.incrementAndGet();
        // The process dies: its handles and locks go with it.
        for (Handle h : new ArrayList<>(openHandles)) {
            h.kill(torn != null);
        }
        openHandles.clear();
        for (Closeable lock : new ArrayList<>(heldLocks)) {
            try {
                lock.close();
            } catch (IOException ignored) {
                // the lock dies with the process either way
            }
        }
        heldLocks.clear();
        IOException first = null;
        for (Map.Entry<Path, FileState> e : tracked.entrySet()) {
            try {
                cutBack(e.getKey(), e.getValue(), torn);
            } catch (IOException ex) {
                if (first == null) {
                    first = ex;
                } else {
                    first.addSuppressed(ex);
                }
            }
        }
        tracked.clear();
        if (first != null) {
            throw first;
        }
    }

    private void cutBack(Path p, FileState s, Random torn) throws IOException {
        if (!inner.exists(p)) {
            return;
        }
        long current = inner.size(p);
        long keep;
        if (torn == null) {
            keep = s.everSynced ? Math.min(s.syncedSize, current) : -1;
        } else {
            long base = s.everSynced ? Math.min(s.syncedSize, current) : 0;
            boolean vanish = !s.everSynced && torn.nextBoolean();
            keep = vanish ? -1 : base + (long) (torn.nextDouble() * (current - base + 1));
            keep = Math.min(keep, current);
        }
        if (keep < 0) {
            inner.delete(p);
            return;
        }
        if (keep == current) {
            return;
        }
        byte[] prefix = new byte[Math.toIntExact(keep)];
        try (ReadableFile r = inner.newReadableFile(p)) {
            r.readFully(0, prefix, 0, prefix.length);
        }
        try (WritableFile w = inner.newWritableFile(p)) {
            w.append(prefix);
            w.sync();
        }
    }

    @Override
    public WritableFile newWritableFile(Path p) throws IOException {
        return openWritable(p, inner::newWritableFile);
    }

    /**
     * As {@link #newWritableFile}, over the inner file system's direct-write file (same faults, same crash semantics:
     * only synced bytes survive). Refused, like the inner file system's refusal, when it has no direct writes.
     */
    @Override
    public WritableFile newDirectWritableFile(Path p) throws IOException {
        return openWritable(p, inner::newDirectWritableFile);
    }

    /** As the wrapped file system's (the engine's write-ahead logs then go through {@link #newMappedWritableFile}). */
    @Override
    public boolean supportsMappedWrites() {
        return inner.supportsMappedWrites();
    }

    /** As {@link #newWritableFile}, over the inner file system's mapped file (same faults, crashes and quota apply). */
    @Override
    public WritableFile newMappedWritableFile(Path p) throws IOException {
        return openWritable(p, inner::newMappedWritableFile);
    }

    private interface WritableOpener {
        WritableFile open(Path p) throws IOException;
    }

    /** Checks CREATE, then tracks and wraps what {@code opener} creates of the inner file system. */
    private WritableFile openWritable(Path p, WritableOpener opener) throws IOException {
        check(Op.CREATE, p);
        release(p);
        WritableFile f = opener.open(p);
        FileState s = new FileState();
        synchronized (this) {
            tracked.put(key(p), s);
        }
        WritableHandle h = new WritableHandle(f, s);
        openHandles.add(h);
        return h;
    }

    @Override
    public ReadableFile newReadableFile(Path p) throws IOException {
        return openReadable(p, inner::newReadableFile);
    }

    private interface Opener {
        ReadableFile open(Path p) throws IOException;
    }

    /** Checks OPEN, then wraps what {@code opener} opens of the inner file system (reads then face the faults). */
    private ReadableFile openReadable(Path p, Opener opener) throws IOException {
        check(Op.OPEN, p);
        ReadableHandle h = new ReadableHandle(opener.open(p));
        openHandles.add(h);
        return h;
    }

    /** As {@link #newReadableFile}, over the inner file system's direct-read file (same faults apply). */
    @Override
    public ReadableFile newDirectReadableFile(Path p) throws IOException {
        return openReadable(p, inner::newDirectReadableFile);
    }

    /** As {@link #newReadableFile}, over the inner file system's mapped file (same faults apply). */
    @Override
    public ReadableFile newMappedReadableFile(Path p) throws IOException {
        return openReadable(p, inner::newMappedReadableFile);
    }

    @Override
    public boolean exists(Path p) {
        return inner.exists(p);
    }

    @Override
    public long size(Path p) throws IOException {
        check(Op.SIZE, p);
        return inner.size(p);
    }

    @Override
    public void delete(Path p) throws IOException {
        check(Op.DELETE, p);
        release(p);
        inner.delete(p);
        synchronized (this) {
            tracked.remove(key(p));
        }
    }

    @Override
    public void rename(Path from, Path to) throws IOException {
        check(Op.RENAME, from);
        check(Op.RENAME, to);
        release(to);
        synchronized (this) {
            inner.rename(from, to);
            FileState s = tracked.remove(key(from));
            if (s != null) {
                tracked.put(key(to), s);
            } else {
                tracked.remove(key(to));
            }
        }
    }

    /**
     * A hard link, durable as soon as it returns (as deletes and renames are here). The new name shares the crash
     * state of the file it names: a crash cuts back their common bytes once.
     */
    @Override
    public void link(Path existing, Path link) throws IOException {
        check(Op.LINK, existing);
        check(Op.LINK, link);
        synchronized (this) {
            inner.link(existing, link);
            FileState s = tracked.get(key(existing));
            if (s != null) {
                tracked.put(key(link), s);
            }
        }
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        check(Op.LIST, dir);
        return inner.list(dir);
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        check(Op.MKDIRS, dir);
        inner.createDirectories(dir);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        check(Op.SYNC_DIR, dir);
        inner.syncDirectory(dir);
    }

    @Override
    public Optional<Closeable> tryLock(Path lockFile) throws IOException {
        check(Op.LOCK, lockFile);
        Optional<Closeable> lock = inner.tryLock(lockFile);
        if (lock.isEmpty()) {
            return lock;
        }
        Closeable innerLock = lock.get();
        heldLocks.add(innerLock);
        return Optional.of(() -> {
            if (heldLocks.remove(innerLock)) {
                innerLock.close();
            }
        });
    }

    private Fault add(Fault f) {
        faults.add(f);
        return f;
    }

    private static void checkN(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("n must be >= 1: " + n);
        }
    }

    private void check(Op op, Path p) throws InjectedIOException {
        for (Fault f : faults) {
            if (f.shouldFail(op, p)) {
                injected.incrementAndGet();
                throw new InjectedIOException(op, p);
            }
        }
    }

    private static Path key(Path p) {
        return p.toAbsolutePath().normalize();
    }

    private abstract class Handle {
        private volatile boolean dead;

        /** Closes the wrapped handle as a dying process would; {@code flushFirst} hands buffered bytes to the OS. */
        abstract void kill(boolean flushFirst);

        void markDead() {
            dead = true;
        }

        void ensureAlive(Path p) throws IOException {
            if (dead) {
                throw new IOException("file system crashed; handle of " + p + " is dead");
            }
        }
    }

    private final class WritableHandle extends Handle implements WritableFile {
        private final WritableFile f;
        private final FileState state;
        private boolean closed;

        WritableHandle(WritableFile f, FileState state) {
            this.f = f;
            this.state = state;
        }

        @Override
        public void append(byte[] b, int off, int len) throws IOException {
            ensureAlive(f.path());
            check(Op.WRITE, f.path());
            long fits = reserve(len);
            if (fits < len) {
                f.append(b, off, (int) fits);
                throw new NoSpaceLeftException(f.path(), len, fits);
            }
            f.append(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            ensureAlive(f.path());
            check(Op.FLUSH, f.path());
            f.flush();
        }

        @Override
        public void sync() throws IOException {
            ensureAlive(f.path());
            check(Op.SYNC, f.path());
            f.sync();
            long size = f.size();
            synchronized (FaultInjectingFileSystem.this) {
                state.syncedSize = size;
                state.everSynced = true;
            }
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
            close(false);
        }

        @Override
        public void closeWithoutFlush() throws IOException {
            close(true);
        }

        private void close(boolean withoutFlush) throws IOException {
            if (closed) {
                return;
            }
            ensureAlive(f.path());
            closed = true;
            openHandles.remove(this);
            try {
                check(Op.CLOSE, f.path());
            } finally {
                // the descriptor is released even when close reports an error
                if (withoutFlush) {
                    f.closeWithoutFlush();
                } else {
                    f.close();
                }
            }
        }

        @Override
        void kill(boolean flushFirst) {
            markDead();
            try {
                if (flushFirst) {
                    f.flush();
                }
            } catch (IOException ignored) {
                // unflushed bytes are lost with the process
            }
            try {
                f.close();
            } catch (IOException ignored) {
                // the process is gone
            }
        }
    }

    private final class ReadableHandle extends Handle implements ReadableFile {
        private final ReadableFile f;
        private boolean closed;

        ReadableHandle(ReadableFile f) {
            this.f = f;
        }

        @Override
        public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
            ensureAlive(f.path());
            check(Op.READ, f.path());
            f.readFully(pos, dst, off, len);
        }

        @Override
        public long size() throws IOException {
            ensureAlive(f.path());
            check(Op.READ, f.path());
            return f.size();
        }

        @Override
        public Path path() {
            return f.path();
        }

        @Override
        public void close() throws IOException {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            openHandles.remove(this);
            try {
                check(Op.CLOSE, f.path());
            } finally {
                f.close();
            }
        }

        @Override
        void kill(boolean flushFirst) {
            markDead();
            try {
                f.close();
            } catch (IOException ignored) {
                // the process is gone
            }
        }
    }
}
