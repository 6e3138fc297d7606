package io.bloomkv.engine.internal.table;

/**
 * One thread's buffers for the data blocks a point read uses once and drops: a block read from the file and not
 * kept by the block cache (a table without a cache, such as a mapped table of uncompressed blocks, or a miss the
 * cache's door refuses) is read, verified, decompressed and searched in these, so such a read allocates nothing but
 * the value it returns. RocksDB reads such blocks into a stack buffer for the same reason.
 *
 * <p>Contract: a block built over {@link #stored} or {@link #contents} is used by one point read, on this thread, and
 * dropped before the next block of that read is read (each block's value is copied out before the search moves on);
 * it is never cached or handed out. {@link #acquire} gives the buffers to one read at a time: a read started while
 * another holds them on the same thread (a merge operator calling back into the database) gets null and allocates.
 * Buffers grow to the largest block seen, up to {@link #MAX_BYTES}; larger blocks are read into arrays of their own.
 */
final class ReadScratch {
    /** The largest buffer a thread keeps between reads. */
    static final int MAX_BYTES = 256 << 10;

    private static final ThreadLocal<ReadScratch> LOCAL = ThreadLocal.withInitial(ReadScratch::new);

    private byte[] stored = new byte[8 << 10];
    private byte[] contents = new byte[8 << 10];
    private boolean busy;

    private ReadScratch() {}

    /** This thread's buffers, held until {@link #release}, or null while another read of this thread holds them. */
    static ReadScratch acquire() {
        ReadScratch s = LOCAL.get();
        if (s.busy) {
            return null;
        }
        s.busy = true;
        return s;
    }

    void release() {
        busy = false;
    }

    /** A buffer of at least {@code n} bytes for a block as stored (contents and trailer), or null above the limit. */
    byte[] stored(int n) {
        if (n > MAX_BYTES) {
            return null;
        }
        if (stored.length < n) {
            stored = new byte[Math.min(MAX_BYTES, Math.max(n, 2 * stored.length))];
        }
        return stored;
    }

    /** A buffer of at least {@code n} bytes for a block's uncompressed contents, or null above the limit. */
    byte[] contents(int n) {
        if (n > MAX_BYTES) {
            return null;
        }
        if (contents.length < n) {
            contents = new byte[Math.min(MAX_BYTES, Math.max(n, 2 * contents.length))];
        }
        return contents;
    }
}
