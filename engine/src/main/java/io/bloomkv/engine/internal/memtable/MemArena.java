package io.bloomkv.engine.internal.memtable;

/**
 * Where a memtable keeps its values: copied back to back into large chunks (RocksDB's memtable
 * arena), not one array per value. A 1 KiB value held as its own array survives young
 * collections and is copied by each of them until the memtable is flushed; chunks are few, and
 * once they reach {@link #MAX_CHUNK} bytes G1 allocates them outside the young generation
 * ("humongous" objects: at least half a heap region, 1-4 MiB for heaps up to 8 GiB) where they are
 * never copied. Chunks start at {@link #FIRST_CHUNK} bytes and double, so small memtables stay small.
 *
 * <p>Single writer (the memtable's writer); readers see a value's bytes once the entry naming them
 * is published by the skip list (its put happens-before any get that finds the entry). Written
 * bytes are never changed.
 */
final class MemArena {
    static final int FIRST_CHUNK = 64 << 10;
    static final int MAX_CHUNK = 4 << 20;
    /** Values at least this large get an array of their own (no chunk space wasted at a chunk's end). */
    static final int OWN_ARRAY = 128 << 10;
    private static final byte[] EMPTY = new byte[0];

    private byte[] chunk = EMPTY;
    private int used;
    private int nextChunkSize = FIRST_CHUNK;
    private byte[] lastArray = EMPTY;

    /**
     * Copies {@code value[off, off + len)} into the arena; returns its offset in {@link #lastArray()}.
     */
    int copy(byte[] value, int off, int len) {
        if (len == 0) {
            lastArray = EMPTY;
            return 0;
        }
        if (len >= OWN_ARRAY) {
            byte[] own = new byte[len];
            System.arraycopy(value, off, own, 0, len);
            lastArray = own;
            return 0;
        }
        if (chunk.length - used < len) {
            chunk = new byte[Math.max(nextChunkSize, len)];
            used = 0;
            nextChunkSize = Math.min(MAX_CHUNK, nextChunkSize * 2);
        }
        int at = used;
        System.arraycopy(value, off, chunk, at, len);
        used += len;
        lastArray = chunk;
        return at;
    }

    /** The array the last {@link #copy} wrote into. */
    byte[] lastArray() {
        return lastArray;
    }
}
