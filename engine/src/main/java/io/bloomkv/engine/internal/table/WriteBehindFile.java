package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.fs.WritableFile;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * A {@link WritableFile} whose bytes reach the file on a second thread: the caller fills fixed-size chunks in memory and
 * hands each full one to a writer thread, which appends it to the underlying file and, every {@code bytesPerSync}
 * bytes, syncs the file. The caller goes on building the next blocks while the previous ones are written and synced,
 * so the sync at the end covers only the last {@code bytesPerSync} bytes instead of the whole file, and the write
 * system calls run on the other core.
 *
 * <p>RocksDB's counterpart is {@code bytes_per_sync} ({@code WritableFileWriter::RangeSync}: {@code sync_file_range}
 * of the bytes written since the last one, so the kernel writes a large file back while it is produced rather than
 * all at the final {@code fsync}). Java has no {@code sync_file_range}; a full {@code fdatasync} of a file whose earlier
 * bytes are already synced writes only the new ones, on the writer thread, off the caller's path.
 *
 * <p>Contract, the same as {@link WritableFile}'s: {@link #sync()} returns once every byte appended before it is
 * durable; {@link #close()} writes what is buffered, does not sync, and is idempotent. Only the owner thread calls
 * the methods (appends are serialized by the caller). An error of the writer thread is kept and thrown by the next
 * {@link #append}, {@link #flush}, {@link #sync} or {@link #close} (later chunks are discarded: a file that failed
 * once is abandoned by its owner). The underlying file is closed by the writer thread, so an interrupt of the owner
 * never closes its channel. At most {@code chunks} full chunks wait at a time: the caller blocks when the
 * writer falls that far behind. The writer thread is a daemon and ends at {@link #close()}.
 */
public final class WriteBehindFile implements WritableFile {
    /** A unit of work for the writer thread: a chunk of bytes, or a barrier. */
    private sealed interface Item permits Chunk, Barrier {}

    private record Chunk(byte[] bytes, int length) implements Item {}

    /** Runs after every earlier chunk: a flush or a sync of the file (or the end of the thread), then completes. */
    private record Barrier(Kind kind, CompletableFuture<Void> done) implements Item {}

    private enum Kind {
        FLUSH,
        SYNC,
        CLOSE
    }

    private final WritableFile file;
    private final long bytesPerSync;
    private final BlockingQueue<Item> queue;
    private final BlockingQueue<byte[]> free;
    private final Thread writer;

    /** The first error of the writer thread; written by it, read by the owner. */
    private volatile Throwable failure;

    private byte[] current;
    private int position;
    private long size;
    private boolean closed;

    /**
     * Wraps {@code file} (which it then owns: {@link #close()} closes it).
     *
     * @param chunkSize bytes handed to the writer thread at a time
     * @param chunks chunks that may wait for the writer thread (memory: {@code (chunks + 2) * chunkSize})
     * @param bytesPerSync sync the file after at least this many bytes were appended since the last sync; 0: never
     *     before {@link #sync()}
     */
    public WriteBehindFile(WritableFile file, int chunkSize, int chunks, long bytesPerSync) {
        this.file = Objects.requireNonNull(file, "file");
        if (chunkSize <= 0 || chunks <= 0 || bytesPerSync < 0) {
            throw new IllegalArgumentException(
                    "chunkSize " + chunkSize + ", chunks " + chunks + ", bytesPerSync " + bytesPerSync);
        }
        this.bytesPerSync = bytesPerSync;
        // One more slot than chunks, so that the barrier behind a full queue never waits for a chunk slot.
        this.queue = new ArrayBlockingQueue<>(chunks + 1);
        this.free = new ArrayBlockingQueue<>(chunks + 1);
        for (int i = 0; i < chunks + 1; i++) {
            free.add(new byte[chunkSize]);
        }
        this.current = new byte[chunkSize];
        this.size = file.size();
        this.writer =
                new Thread(this::run, "bloomkv-write-behind " + file.path().getFileName());
        writer.setDaemon(true);
        writer.start();
    }

    @Override
    public void append(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        Objects.checkFromIndexSize(off, len, b.length);
        throwIfFailed();
        int o = off;
        int remaining = len;
        while (remaining > 0) {
            int n = Math.min(remaining, current.length - position);
            System.arraycopy(b, o, current, position, n);
            position += n;
            o += n;
            remaining -= n;
            size += n;
            if (position == current.length) {
                handOff();
            }
        }
    }

    @Override
    public void flush() throws IOException {
        ensureOpen();
        barrier(Kind.FLUSH);
    }

    @Override
    public void sync() throws IOException {
        ensureOpen();
        barrier(Kind.SYNC);
    }

    /**
     * Starts a sync of every byte appended so far on the writer thread and returns at once: the caller goes on (with
     * CPU work such as building a filter) while the disk takes the bytes. Its error, if any, is thrown by a later call;
     * only a later {@link #sync()} promises durability. For a writer whose file is complete but for a small tail
     * ({@link TableWriter#finish()}: the data blocks are written, the filter is still to be built), so the final sync
     * covers the tail only.
     */
    public void startSync() throws IOException {
        ensureOpen();
        throwIfFailed();
        handOff();
        put(new Barrier(Kind.SYNC, new CompletableFuture<>()));
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public Path path() {
        return file.path();
    }

    /** Writes what is buffered (without syncing it), ends the writer thread and closes the file. Idempotent. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        barrier(Kind.CLOSE);
    }

    /** Hands the current chunk (if it holds bytes) to the writer thread and takes a free one. */
    private void handOff() throws IOException {
        if (position == 0) {
            return;
        }
        put(new Chunk(current, position));
        byte[] next;
        try {
            next = free.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing " + file.path());
        }
        current = next;
        position = 0;
        throwIfFailed();
    }

    /** Hands the current chunk over, then waits until the writer thread has done {@code kind} after it. */
    private void barrier(Kind kind) throws IOException {
        if (kind == Kind.CLOSE) {
            // Ends the thread of a writer that failed or was interrupted too: nothing here returns early.
            if (position > 0 && failure == null) {
                putUninterruptibly(new Chunk(current, position));
                position = 0; // no free chunk is taken: nothing is appended after close
            }
            putUninterruptibly(new Barrier(kind, new CompletableFuture<>()));
            joinUninterruptibly();
            throwIfFailed();
            return;
        }
        throwIfFailed();
        handOff();
        CompletableFuture<Void> done = new CompletableFuture<>();
        put(new Barrier(kind, done));
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    done.get();
                    return;
                } catch (InterruptedException e) {
                    // The barrier is queued: wait for it, so that the file is never used by two threads at once.
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw asIOException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void put(Item item) throws IOException {
        try {
            queue.put(item);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing " + file.path());
        }
    }

    private void putUninterruptibly(Item item) {
        boolean interrupted = false;
        while (true) {
            try {
                queue.put(item);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void joinUninterruptibly() {
        boolean interrupted = false;
        while (true) {
            try {
                writer.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The writer thread: appends chunks in order, syncs every bytesPerSync bytes, runs barriers; ends at CLOSE. */
    private void run() {
        long unsynced = 0;
        while (true) {
            Item item;
            try {
                item = queue.take();
            } catch (InterruptedException e) {
                // Nobody interrupts this thread but a JVM shutting down; keep the order of work.
                continue;
            }
            if (item instanceof Chunk c) {
                if (failure == null) {
                    try {
                        file.append(c.bytes, 0, c.length);
                        unsynced += c.length;
                        if (bytesPerSync > 0 && unsynced >= bytesPerSync) {
                            file.sync();
                            unsynced = 0;
                        }
                    } catch (Throwable t) {
                        failure = t;
                    }
                }
                free.offer(c.bytes);
            } else {
                Barrier b = (Barrier) item;
                if (b.kind == Kind.CLOSE) {
                    // Closed here, not by the owner: an interrupt of the owner must not close the channel
                    // (FileChannel closes itself when a thread blocked in it is interrupted).
                    try {
                        file.close();
                    } catch (Throwable t) {
                        if (failure == null) {
                            failure = t;
                        }
                    }
                    b.done.complete(null);
                    return;
                }
                if (failure == null) {
                    try {
                        if (b.kind == Kind.SYNC) {
                            file.sync();
                            unsynced = 0;
                        } else {
                            file.flush();
                        }
                    } catch (Throwable t) {
                        failure = t;
                    }
                }
                if (failure != null) {
                    b.done.completeExceptionally(failure);
                } else {
                    b.done.complete(null);
                }
            }
        }
    }

    private void throwIfFailed() throws IOException {
        Throwable t = failure;
        if (t != null) {
            throw asIOException(t);
        }
    }

    /** The writer thread's error as thrown to the owner (a new exception each time, with the original as cause). */
    private IOException asIOException(Throwable t) {
        if (t instanceof Error err) {
            throw err;
        }
        return new IOException("background write of " + file.path() + " failed: " + t, t);
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("file is closed: " + file.path());
        }
    }
}
