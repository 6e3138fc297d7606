package io.bloomkv.engine.fs;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Every file operation of the engine goes through this interface, so tests can substitute a
 * {@code FaultInjectingFileSystem} (injected I/O errors, simulated crashes; in the test-support artifact
 * {@code io.bloomkv:bloomkv-testing}, as Pebble keeps {@code vfs/errorfs} and RocksDB its
 * {@code FaultInjectionTestFS} apart from the store) for the real {@link DiskFileSystem}. Implementations are
 * thread-safe.
 */
public interface FileSystem {

    /** The real file system (a shared {@link DiskFileSystem}). */
    static FileSystem disk() {
        return DiskFileSystem.INSTANCE;
    }

    /** Creates {@code p}, or truncates it if it exists, and opens it for appending. */
    WritableFile newWritableFile(Path p) throws IOException;

    /** Opens an existing file for positional reads. */
    ReadableFile newReadableFile(Path p) throws IOException;

    /**
     * Creates {@code p}, or truncates it if it exists, and opens it for appending with O_DIRECT: appended bytes go to
     * the device without passing through the OS page cache (so writing a large file neither fills the cache nor leaves
     * the final {@link WritableFile#sync()} a backlog of dirty pages), and are durable, as with
     * {@link #newWritableFile}, only once synced. Used by {@code TableFileWriter}. The default refuses: a file system
     * that supports it overrides this, and callers then use {@link #newWritableFile}. A refusal leaves no file behind
     * that was not there before.
     *
     * @throws IOException naming {@code p} when direct writes are not supported here
     */
    default WritableFile newDirectWritableFile(Path p) throws IOException {
        throw new IOException(getClass().getSimpleName() + " does not support direct writes (O_DIRECT): " + p);
    }

    /**
     * Opens an existing file for positional reads that bypass the OS page cache (O_DIRECT), so each
     * read is a device read. The default refuses: a file system that supports it overrides this.
     *
     * @throws IOException naming {@code p} when direct reads are not supported here
     */
    default ReadableFile newDirectReadableFile(Path p) throws IOException {
        throw new IOException(getClass().getSimpleName() + " does not support direct reads (O_DIRECT): " + p);
    }

    /**
     * Opens an existing file for positional reads from a read-only memory mapping of it (no system call per read;
     * see {@code Options.useMmapReads}). The default refuses: a file system that supports it overrides this, and the
     * engine then reads with {@link #newReadableFile}.
     *
     * @throws IOException naming {@code p} when mapped reads are not supported here or the file cannot be mapped
     */
    default ReadableFile newMappedReadableFile(Path p) throws IOException {
        throw new IOException(getClass().getSimpleName() + " does not support memory-mapped reads: " + p);
    }

    /**
     * Whether {@link #newMappedWritableFile} is supported here (see {@code Options.useMmapWal}). Default false: the
     * engine then writes its logs with {@link #newWritableFile}.
     */
    default boolean supportsMappedWrites() {
        return false;
    }

    /**
     * Creates {@code p}, or truncates it if it exists, for appends written through a shared memory mapping instead of
     * a system call per {@link WritableFile#flush() flush} (RocksDB's {@code allow_mmap_writes}; the engine's
     * write-ahead logs, {@code Options.useMmapWal}). The file keeps {@link WritableFile}'s contract, with bytes handed
     * to the operating system as soon as they are appended; after a crash it may end in zero bytes past what was
     * appended (space allocated ahead of the appends). The default refuses: a file system whose
     * {@link #supportsMappedWrites} is true overrides this.
     *
     * @throws IOException naming {@code p} when mapped writes are not supported here or the file cannot be created
     */
    default WritableFile newMappedWritableFile(Path p) throws IOException {
        throw new IOException(getClass().getSimpleName() + " does not support memory-mapped writes: " + p);
    }

    boolean exists(Path p);

    /** Size in bytes of an existing file. */
    long size(Path p) throws IOException;

    /** Deletes {@code p}; no error if it does not exist. */
    void delete(Path p) throws IOException;

    /** Renames {@code from} to {@code to} atomically, replacing {@code to} if it exists. */
    void rename(Path from, Path to) throws IOException;

    /**
     * Creates {@code link} as a hard link to the existing file {@code existing} (POSIX link(2)): both names then
     * reach the same bytes, and deleting one leaves the other. Used by checkpoints and ingestion to share an
     * immutable table without copying it (RocksDB's {@code Env::LinkFile}, Pebble's {@code vfs.FS.Link}). The
     * default refuses: a file system that supports links overrides this, and callers then copy the file instead.
     *
     * @throws java.nio.file.FileAlreadyExistsException if {@code link} exists
     * @throws IOException naming the paths when links are not supported here (for instance across devices)
     */
    default void link(Path existing, Path link) throws IOException {
        throw new IOException(getClass().getSimpleName() + " does not support hard links: " + existing + " -> " + link);
    }

    /** The entries of {@code dir}, sorted by name. */
    List<Path> list(Path dir) throws IOException;

    void createDirectories(Path dir) throws IOException;

    /** Makes the creations, renames and deletions of entries of {@code dir} durable. */
    void syncDirectory(Path dir) throws IOException;

    /**
     * Takes an exclusive lock on {@code lockFile} (created if missing). Empty when another process or
     * another open of this JVM holds it. Closing the returned handle releases the lock.
     */
    Optional<Closeable> tryLock(Path lockFile) throws IOException;
}
