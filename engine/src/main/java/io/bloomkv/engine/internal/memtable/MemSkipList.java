package io.bloomkv.engine.internal.memtable;

import io.bloomkv.engine.internal.InternalKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The memtable: LevelDB's skip list ({@code db/skiplist.h}) for one writer and any number of lock-free readers, laid
 * out flat in large byte arrays as RocksDB's {@code InlineSkipList} lays it out in its arena. An entry is one run of
 * bytes: its forward links, then its key lengths, trailer, user key and value. No object per entry: a 16-byte key
 * with a 100-byte value takes about 144 bytes, where a node object, its link array and its key array took about 210
 * on the heap, so a write buffer of a given size holds about half as many entries again, and young collections have
 * nothing of the memtable's to copy.
 *
 * <p>Layout. An entry is addressed by a {@code long}: its chunk's index in the high 32 bits, the offset of its header
 * in the low 32 (never 0: 0 is "none"). Around the header at {@code p} (8-byte aligned):
 * <pre>
 *   p - 8 * (i + 1)   link of level i (i &lt; height): the next entry's address, 0 at the end of the level
 *   p + 0             int   user key length
 *   p + 4             int   value length
 *   p + 8             long  trailer (sequence &lt;&lt; 8 | type)
 *   p + 16            user key, zero-padded to 16 bytes when shorter, then value
 * </pre>
 * The padding lets a compare read the key's first two 8-byte words ({@link MemKey#word}) as two loads whatever the
 * key's length.
 * The entry's size is rounded up to 8 bytes, so the next one's links are aligned. Chunks start at
 * {@link #FIRST_CHUNK} bytes and double up to {@link #MAX_CHUNK}; an entry too large for a chunk of that size gets a
 * chunk of its own.
 *
 * <p>Publication: a new entry's bytes and links are written before it becomes reachable; each predecessor's link is
 * then set with release semantics, and readers load links with acquire semantics, so a reader that reaches an entry
 * sees all of its bytes. A new chunk is published (the volatile {@link #chunks}, a fresh array each time) before any
 * entry in it is linked. Entries are never removed or changed. {@link #insert} must not be called concurrently with
 * itself (the memtable's single writer).
 */
final class MemSkipList {
    /** LevelDB's: with branching 4, searches stay O(log n) up to ~16M entries, far above a memtable's. */
    static final int MAX_HEIGHT = 12;
    private static final int BRANCHING = 4;
    /**
     * Bytes of a byte array's object header (mark word, compressed class pointer, length). Chunk lengths are a power
     * of two minus this, so a chunk with its header is exactly a power of two: a 4 MiB chunk is a humongous object
     * of exactly 4 G1 regions of 1 MiB (2 of 2 MiB, 1 of 4 MiB), where 4 MiB of data would take a fifth region, 25%
     * more heap than the memtable counts.
     */
    static final int ARRAY_HEADER = 16;
    static final int FIRST_CHUNK = (64 << 10) - ARRAY_HEADER;
    /** Chunks this large are humongous objects for G1 (at least half a region up to 8 GiB heaps): never copied. */
    static final int MAX_CHUNK = (4 << 20) - ARRAY_HEADER;
    /** Key length, value length, trailer. */
    static final int HEADER = 16;
    /** Bytes a key takes at least (zero-padded): the two words a compare reads. */
    static final int MIN_KEY_AREA = 16;
    /** Largest entry (links, header, key and value) a chunk can hold. */
    static final int MAX_ENTRY = Integer.MAX_VALUE - 64;

    private static final VarHandle LINK = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final VarHandle WORD = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** The chunks, by index; replaced (never changed) when one is added, so a reader's copy stays valid. */
    private volatile byte[][] chunks;
    /** The head: an entry of MAX_HEIGHT links and an empty key, in chunk 0. */
    private final long head;

    // The writer's state.
    private byte[] current;
    private int currentIndex;
    private int used;
    /** Lengths of the chunks before the current one (their unused ends included). */
    private long closedBytes;
    private int nextChunkSize = FIRST_CHUNK;
    /** Levels in use (1..MAX_HEIGHT); readers may see a new height before the head links of those levels: 0 ends a level. */
    private volatile int height = 1;
    /** The writer's random state (xorshift64*); only {@link #insert} touches it. */
    private long random = 0x9E3779B97F4A7C15L;
    /** The writer's scratch: the predecessor of the new entry on each level. */
    private final long[] prev = new long[MAX_HEIGHT];

    MemSkipList() {
        int headSize = 8 * MAX_HEIGHT + HEADER;
        current = new byte[Math.max(FIRST_CHUNK, headSize)];
        chunks = new byte[][] {current};
        head = 8 * MAX_HEIGHT; // chunk 0, links below it, an empty key; it is never compared
        used = headSize;
        nextChunkSize = doubled(FIRST_CHUNK);
    }

    /**
     * Copies an entry in: the user key, its trailer and {@code value[valueOffset, valueOffset + valueLength)}. Writer
     * only. @return the bytes it took: links, header, key, value and padding, plus the unused end of the chunk it
     * closed when it did not fit there (so the sum is {@link #bytesTaken}, what the memtable holds on the heap)
     * @throws IllegalStateException if an entry with the same user key and trailer is already present (sequence
     *                               numbers are unique, so this is a caller's bug)
     * @throws IllegalArgumentException if the entry is too large for a chunk ({@link #MAX_ENTRY})
     */
    long insert(byte[] userKey, long trailer, byte[] value, int valueOffset, int valueLength) {
        MemKey key = new MemKey(userKey, trailer);
        long at = findGreaterOrEqual(key, prev);
        if (at != 0 && compare(at, key) == 0) {
            throw new IllegalStateException("memtable already holds this internal key (sequence " + (trailer >>> 8) + ")");
        }
        int h = randomHeight();
        int keyArea = keyArea(userKey.length);
        long size = 8L * h + HEADER + keyArea + (long) valueLength;
        if (size > MAX_ENTRY) {
            throw new IllegalArgumentException("entry of " + size + " bytes is too large for the memtable");
        }
        int aligned = (int) ((size + 7) & ~7L);
        long before = bytesTaken();
        long x = allocate(aligned, h);
        byte[] c = current;
        int p = (int) x;
        INT.set(c, p, userKey.length);
        INT.set(c, p + 4, valueLength);
        LONG.set(c, p + 8, trailer);
        System.arraycopy(userKey, 0, c, p + HEADER, userKey.length);
        // a short key's padding stays zero: chunks are fresh arrays and their bytes are written once
        System.arraycopy(value, valueOffset, c, p + HEADER + keyArea, valueLength);
        int cur = height;
        if (h > cur) {
            for (int i = cur; i < h; i++) {
                prev[i] = head;
            }
            height = h; // readers that see it before the head links below treat the new levels as empty
        }
        for (int i = 0; i < h; i++) {
            LINK.set(c, p - 8 * (i + 1), next(prev[i], i)); // plain: x is not reachable yet
        }
        for (int i = 0; i < h; i++) {
            long pr = prev[i];
            LINK.setRelease(chunk((int) (pr >>> 32)), (int) pr - 8 * (i + 1), x);
        }
        return bytesTaken() - before;
    }

    /** Bytes of the chunks up to the end of the last entry: every closed chunk whole, the current one as far as used. */
    long bytesTaken() {
        return closedBytes + used;
    }

    /** Room for an entry of {@code size} bytes (a multiple of 8) whose header follows its {@code h} links. */
    private long allocate(int size, int h) {
        if (current.length - used < size) {
            int length = size > MAX_CHUNK ? size : Math.max(nextChunkSize, size);
            nextChunkSize = doubled(nextChunkSize);
            byte[] fresh = new byte[length];
            byte[][] old = chunks;
            byte[][] grown = Arrays.copyOf(old, old.length + 1);
            grown[old.length] = fresh;
            chunks = grown; // published before any entry in it is linked
            closedBytes += current.length;
            current = fresh;
            currentIndex = old.length;
            used = 0;
        }
        int p = used + 8 * h;
        used += size;
        return ((long) currentIndex << 32) | p;
    }

    /** Bytes a key of {@code length} takes in an entry. */
    private static int keyArea(int length) {
        return Math.max(MIN_KEY_AREA, length);
    }

    /** The chunk length after {@code length}: twice the object (array and header), up to {@link #MAX_CHUNK}. */
    private static int doubled(int length) {
        return Math.min(MAX_CHUNK, 2 * (length + ARRAY_HEADER) - ARRAY_HEADER);
    }

    private byte[] chunk(int index) {
        return chunks[index];
    }

    /** The next entry after {@code node} on {@code level}, or 0 (acquire: its bytes are visible). */
    long next(long node, int level) {
        return (long) LINK.getAcquire(chunk((int) (node >>> 32)), (int) node - 8 * (level + 1));
    }

    /** The next entry on level 0, or 0. */
    long next(long node) {
        return next(node, 0);
    }

    long trailer(long node) {
        return (long) LONG.get(chunk((int) (node >>> 32)), (int) node + 8);
    }

    /** A copy of the entry's user key. */
    byte[] userKey(long node) {
        byte[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        return Arrays.copyOfRange(c, p + HEADER, p + HEADER + (int) INT.get(c, p));
    }

    /** True when the entry's user key is {@code userKey}. */
    boolean userKeyEquals(long node, byte[] userKey) {
        byte[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        int len = (int) INT.get(c, p);
        return len == userKey.length && Arrays.equals(c, p + HEADER, p + HEADER + len, userKey, 0, len);
    }

    /** A copy of the entry's value. */
    byte[] value(long node) {
        byte[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        int from = p + HEADER + keyArea((int) INT.get(c, p));
        return Arrays.copyOfRange(c, from, from + (int) INT.get(c, p + 4));
    }

    /** The entry's encoded internal key (user key, then the trailer as fixed64), a fresh array. */
    byte[] encodedKey(long node) {
        byte[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        int len = (int) INT.get(c, p);
        byte[] out = Arrays.copyOfRange(c, p + HEADER, p + HEADER + len + InternalKey.TRAILER_SIZE);
        long trailer = (long) LONG.get(c, p + 8);
        for (int i = 0; i < 8; i++) {
            out[len + i] = (byte) (trailer >>> (8 * i));
        }
        return out;
    }

    /** The entry's key as a lookup key. */
    MemKey key(long node) {
        return new MemKey(userKey(node), trailer(node));
    }

    /** The entry at {@code node} against {@code key}, in {@link MemKey#compare}'s order. */
    int compare(long node, MemKey key) {
        byte[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        int len = (int) INT.get(c, p);
        int from = p + HEADER;
        int r = Long.compareUnsigned((long) WORD.get(c, from), key.prefix0); // zero-padded, so MemKey.word's value
        if (r != 0) {
            return r;
        }
        r = Long.compareUnsigned((long) WORD.get(c, from + 8), key.prefix1);
        if (r != 0) {
            return r;
        }
        // As MemKey.compare: the first 16 bytes agree (zero-padded), so a key shorter than 16 bytes is a prefix of
        // the other; otherwise the bytes past 16 decide.
        byte[] k = key.userKey;
        if (len < 16 || k.length < 16) {
            r = Integer.compare(len, k.length);
        } else {
            r = Arrays.compareUnsigned(c, from + 16, from + len, k, 16, k.length);
        }
        if (r != 0) {
            return r;
        }
        return Long.compareUnsigned(key.trailer, (long) LONG.get(c, p + 8));
    }

    /** The first entry >= {@code key}, or 0; fills {@code prevOut} (when not null) with the predecessors per level. */
    long findGreaterOrEqual(MemKey key, long[] prevOut) {
        long x = head;
        int level = height - 1;
        while (true) {
            long n = next(x, level);
            if (n != 0 && compare(n, key) < 0) {
                x = n;
            } else {
                if (prevOut != null) {
                    prevOut[level] = x;
                }
                if (level == 0) {
                    return n;
                }
                level--;
            }
        }
    }

    /** The last entry < {@code key}, or 0. */
    long findLessThan(MemKey key) {
        return findLast(key, false);
    }

    /** The last entry <= {@code key}, or 0. */
    long findLessOrEqual(MemKey key) {
        return findLast(key, true);
    }

    /** The last entry < {@code key} (or <= with {@code orEqual}; a null key: the last entry), or 0. */
    private long findLast(MemKey key, boolean orEqual) {
        long x = head;
        int level = height - 1;
        while (true) {
            long n = next(x, level);
            int c = n == 0 ? 1 : key == null ? -1 : compare(n, key);
            if (c < 0 || (orEqual && c == 0)) {
                x = n;
            } else if (level == 0) {
                return x == head ? 0 : x;
            } else {
                level--;
            }
        }
    }

    /** The last entry, or 0 when empty. */
    long findLast() {
        return findLast(null, false);
    }

    /** The first entry, or 0 when empty. */
    long first() {
        return next(head, 0);
    }

    boolean isEmpty() {
        return first() == 0;
    }

    /** Bytes of the chunks allocated so far (the entries' bytes plus the unused end of each chunk). */
    long chunkBytes() {
        long sum = 0;
        for (byte[] c : chunks) {
            sum += c.length;
        }
        return sum;
    }

    /** Length of chunk {@code index}. */
    int chunkLength(int index) {
        return chunks[index].length;
    }

    /** Number of chunks allocated so far. */
    int chunkCount() {
        return chunks.length;
    }

    /** 1 with probability 3/4, 2 with 3/16, ... (each level 1/BRANCHING of the one below), at most MAX_HEIGHT. */
    private int randomHeight() {
        long r = random;
        r ^= r >>> 12;
        r ^= r << 25;
        r ^= r >>> 27;
        random = r;
        long bits = r * 0x2545F4914F6CDD1DL;
        int h = 1;
        while (h < MAX_HEIGHT && (bits & (BRANCHING - 1)) == 0) {
            h++;
            bits >>>= 2;
        }
        return h;
    }
}
