package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.fs.ReadableFile;
import java.io.IOException;

/**
 * A window of a table file for one sequential pass (a compaction's input): a read outside the window refills it
 * with one read of {@code size} bytes starting at the requested block (aligned down to 4 KiB, so a direct-read file
 * reads whole device blocks, through a pooled buffer of the window's size), and the blocks after it are then copied
 * from the window.
 * Not thread-safe: one iterator owns it.
 */
final class Readahead {
    /** Window starts are aligned to this (the device block size of direct reads). */
    static final int ALIGNMENT = 4096;

    private final ReadableFile file;
    private final long fileSize;
    private final int size;
    private byte[] window;
    private long windowStart;
    private int windowLength;

    /**
     * @param file     the table file
     * @param fileSize its size (no window reaches past it)
     * @param size     bytes per window read, at least {@link #ALIGNMENT}
     */
    Readahead(ReadableFile file, long fileSize, int size) {
        if (size < ALIGNMENT) {
            throw new IllegalArgumentException("readahead must be at least " + ALIGNMENT + " bytes: " + size);
        }
        this.file = file;
        this.fileSize = fileSize;
        // A small table's window is the table (rounded up to whole device blocks), not a full window.
        this.size = (int) Math.min(size, Math.max(ALIGNMENT, (fileSize + ALIGNMENT - 1) & -(long) ALIGNMENT));
    }

    /** Reads {@code dst.length} bytes at {@code pos} into {@code dst}, from the window when it holds them. */
    void read(long pos, byte[] dst) throws IOException {
        int len = dst.length;
        if (window != null && pos >= windowStart && pos + len <= windowStart + windowLength) {
            System.arraycopy(window, (int) (pos - windowStart), dst, 0, len);
            return;
        }
        long start = pos & -(long) ALIGNMENT;
        if (pos + len - start > size) {
            // A block larger than a window: read it alone.
            file.readFully(pos, dst, 0, len);
            return;
        }
        int n = (int) Math.min(size, fileSize - start);
        if (window == null) {
            window = new byte[size];
        }
        windowLength = 0; // a failed read leaves no window behind
        file.readFully(start, window, 0, n);
        windowStart = start;
        windowLength = n;
        System.arraycopy(window, (int) (pos - start), dst, 0, len);
    }

    /** Bytes of one window: the requested size, or less for a table smaller than that. */
    int windowSize() {
        return size;
    }

    /** Drops the window (the iterator is closed). */
    void release() {
        window = null;
        windowLength = 0;
    }
}
