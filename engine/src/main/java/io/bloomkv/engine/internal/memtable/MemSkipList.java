package io.bloomkv.engine.internal.memtable;

import io.bloomkv.engine.internal.InternalKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The memtable: LevelDB's skip list ({@code db/skiplist.h}) for one writer and any number of lock-free readers, laid
 * out flat in large arrays as RocksDB's {@code InlineSkipList} lays it out in its arena. An entry is one run of
 * 8-byte words: its forward links, its lengths, trailer, user key and value. No object per entry: a 16-byte key with
 * a 100-byte value takes about 147 bytes, where a node object, its link array and its key array took about 212 on
 * the heap, so a write buffer of a given size holds about 1.4 times as many entries, and young collections have
 * nothing of the memtable's to copy.
 *
 * <p>Layout. Chunks are {@code long[]}: links are array elements, read with acquire and set with release through
 * {@link MethodHandles#arrayElementVarHandle} (byte-array views do not offer those modes on every JVM: Java 25
 * refuses them). An entry is addressed by a {@code long}: its chunk's index in the high 32 bits, the index of its
 * header word in the low 32 (never 0: its links come first, so 0 is "none"). Around the header at {@code p}:
 * <pre>
 *   p - 1 - i         link of level i (i &lt; height): the next entry's address, 0 at the end of the level
 *   p                 user key length (high 32 bits), value length (low 32)
 *   p + 1             trailer (sequence &lt;&lt; 8 | type)
 *   p + 2 ...         user key, 8 bytes per word, big-endian, zero-padded; at least 2 words ({@link MemKey#word})
 *   then              value, 8 bytes per word, big-endian, zero-padded
 * </pre>
 * A compare reads the key's first two words as two loads whatever the key's length. Chunks start at
 * {@link #FIRST_CHUNK} bytes and double up to {@link #MAX_CHUNK}; an entry too large for a chunk of that size gets a
 * chunk of its own.
 *
 * <p>Publication: a new entry's words and links are written before it becomes reachable; each predecessor's link is
 * then set with release semantics, and readers load links with acquire semantics, so a reader that reaches an entry
 * sees all of its words. A new chunk is published (the volatile {@link #chunks}, a fresh array each time) before any
 * entry in it is linked. Entries are never removed or changed. {@link #insert} must not be called concurrently with
 * itself (the memtable's single writer).
 */
final class MemSkipList {
    /** LevelDB's: with branching 4, searches stay O(log n) up to ~16M entries, far above a memtable's. */
    static final int MAX_HEIGHT = 12;

    private static final int BRANCHING = 4;
    /**
     * Bytes of an array's object header (mark word, compressed class pointer, length). Chunk lengths are a power of
     * two minus this, so a chunk with its header is exactly a power of two: a 4 MiB chunk is a humongous object of
     * exactly 4 G1 regions of 1 MiB (2 of 2 MiB, 1 of 4 MiB), where 4 MiB of data would take a fifth region, 25% more
     * heap than the memtable counts.
     */
    static final int ARRAY_HEADER = 16;
    /** Bytes of the first chunk. */
    static final int FIRST_CHUNK = (64 << 10) - ARRAY_HEADER;
    /** Bytes of the largest regular chunk: a humongous object for G1 (at least half a region up to 8 GiB heaps), never copied. */
    static final int MAX_CHUNK = (4 << 20) - ARRAY_HEADER;
    /** Bytes of an entry's header: lengths and trailer. */
    static final int HEADER = 16;
    /** Bytes a key takes at least (zero-padded): the two words a compare reads. */
    static final int MIN_KEY_AREA = 16;
    /** Largest entry in bytes (links, header, key and value) a chunk can hold. */
    static final long MAX_ENTRY = 8L * (Integer.MAX_VALUE - 64);

    private static final VarHandle LINK = MethodHandles.arrayElementVarHandle(long[].class);
    /**
     * Words up to which {@link #pack} and {@link #unpack} move bytes with shifts, above which through a
     * {@code ByteBuffer} long view (one bulk {@code Unsafe.copySwapMemory}). The view allocates three buffers per call
     * and its checks cost more than the copy of a few words (a Kafka Streams counter is one word); the shifts run
     * fast in every tier of the JIT (a byte-array {@code VarHandle} ran slow in C1, where a short run spends much of
     * its time), and the bulk copy wins on large values.
     */
    static final int SHIFT_WORDS = 4;

    /** The chunks, by index; replaced (never changed) when one is added, so a reader's copy stays valid. */
    private volatile long[][] chunks;
    /** The head: an entry of MAX_HEIGHT links and an empty key, in chunk 0. */
    private final long head;

    // The writer's state.
    private long[] current;
    private int currentIndex;
    /** Words of the current chunk in use. */
    private int used;
    /** Bytes of the chunks before the current one (their unused ends included). */
    private long closedBytes;
    /** Bytes of the next regular chunk. */
    private int nextChunkSize;
    /** Levels in use (1..MAX_HEIGHT); readers may see a new height before the head links of those levels: 0 ends a level. */
    private volatile int height = 1;
    /** The writer's random state (xorshift64*); only {@link #insert} touches it. */
    private long random = 0x9E3779B97F4A7C15L;
    /** The writer's scratch: the predecessor of the new entry on each level. */
    private final long[] prev = new long[MAX_HEIGHT];

    MemSkipList() {
        current = new long[FIRST_CHUNK / 8];
        chunks = new long[][] {current};
        head = MAX_HEIGHT; // chunk 0, its links below it, an empty key; it is never compared
        used = MAX_HEIGHT + 2 + MIN_KEY_AREA / 8;
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
            throw new IllegalStateException(
                    "memtable already holds this internal key (sequence " + (trailer >>> 8) + ")");
        }
        int h = randomHeight();
        int keyWords = keyWords(userKey.length);
        long words = h + 2L + keyWords + ((valueLength + 7L) >>> 3);
        if (8 * words > MAX_ENTRY) {
            throw new IllegalArgumentException("entry of " + 8 * words + " bytes is too large for the memtable");
        }
        long before = bytesTaken();
        long x = allocate((int) words, h);
        long[] c = current;
        int p = (int) x;
        c[p] = ((long) userKey.length << 32) | (valueLength & 0xFFFFFFFFL);
        c[p + 1] = trailer;
        c[p + 2] = key.prefix0; // the key's first two words, as the lookup key already holds them
        c[p + 3] = key.prefix1;
        if (userKey.length > 16) {
            pack(userKey, 16, userKey.length - 16, c, p + 4);
        }
        pack(value, valueOffset, valueLength, c, p + 2 + keyWords);
        int cur = height;
        if (h > cur) {
            for (int i = cur; i < h; i++) {
                prev[i] = head;
            }
            height = h; // readers that see it before the head links below treat the new levels as empty
        }
        for (int i = 0; i < h; i++) {
            c[p - 1 - i] = next(prev[i], i); // plain: x is not reachable yet
        }
        for (int i = 0; i < h; i++) {
            long pr = prev[i];
            LINK.setRelease(chunk((int) (pr >>> 32)), (int) pr - 1 - i, x);
        }
        return bytesTaken() - before;
    }

    /** Bytes of the chunks up to the end of the last entry: every closed chunk whole, the current one as far as used. */
    long bytesTaken() {
        return closedBytes + 8L * used;
    }

    /** Room for an entry of {@code words} words whose header follows its {@code h} links; its address. */
    private long allocate(int words, int h) {
        if (current.length - used < words) {
            int length = 8L * words > MAX_CHUNK ? words : Math.max(nextChunkSize / 8, words);
            nextChunkSize = doubled(nextChunkSize);
            long[] fresh = new long[length];
            long[][] old = chunks;
            long[][] grown = Arrays.copyOf(old, old.length + 1);
            grown[old.length] = fresh;
            chunks = grown; // published before any entry in it is linked
            closedBytes += 8L * current.length;
            current = fresh;
            currentIndex = old.length;
            used = 0;
        }
        int p = used + h;
        used += words;
        return ((long) currentIndex << 32) | p;
    }

    /** Words a key of {@code length} bytes takes: at least the two a compare reads. */
    private static int keyWords(int length) {
        return Math.max(MIN_KEY_AREA / 8, (length + 7) >>> 3);
    }

    /** {@code bytes[off, off + len)} into words from {@code c[at]}, 8 bytes each, big-endian, the last zero-padded. */
    private static void pack(byte[] bytes, int off, int len, long[] c, int at) {
        int full = len >>> 3;
        if (full > SHIFT_WORDS) {
            ByteBuffer.wrap(bytes, off, 8 * full).slice().asLongBuffer().get(c, at, full);
        } else {
            for (int i = 0; i < full; i++) {
                int o = off + 8 * i;
                c[at + i] = (bytes[o] & 0xFFL) << 56
                        | (bytes[o + 1] & 0xFFL) << 48
                        | (bytes[o + 2] & 0xFFL) << 40
                        | (bytes[o + 3] & 0xFFL) << 32
                        | (bytes[o + 4] & 0xFFL) << 24
                        | (bytes[o + 5] & 0xFFL) << 16
                        | (bytes[o + 6] & 0xFFL) << 8
                        | (bytes[o + 7] & 0xFFL);
            }
        }
        int rest = len & 7;
        if (rest > 0) {
            long w = 0;
            for (int i = 0; i < rest; i++) {
                w |= (bytes[off + 8 * full + i] & 0xFFL) << (56 - 8 * i);
            }
            c[at + full] = w;
        }
    }

    /** The first {@code len} bytes of the words from {@code c[at]} into {@code out[off...]} ({@link #pack}'s inverse). */
    private static void unpack(long[] c, int at, int len, byte[] out, int off) {
        int full = len >>> 3;
        if (full > SHIFT_WORDS) {
            ByteBuffer.wrap(out, off, 8 * full).slice().asLongBuffer().put(c, at, full);
        } else {
            for (int i = 0; i < full; i++) {
                long w = c[at + i];
                int o = off + 8 * i;
                out[o] = (byte) (w >>> 56);
                out[o + 1] = (byte) (w >>> 48);
                out[o + 2] = (byte) (w >>> 40);
                out[o + 3] = (byte) (w >>> 32);
                out[o + 4] = (byte) (w >>> 24);
                out[o + 5] = (byte) (w >>> 16);
                out[o + 6] = (byte) (w >>> 8);
                out[o + 7] = (byte) w;
            }
        }
        int rest = len & 7;
        if (rest > 0) {
            long w = c[at + full];
            for (int i = 0; i < rest; i++) {
                out[off + 8 * full + i] = (byte) (w >>> (56 - 8 * i));
            }
        }
    }

    /** The chunk size after {@code size} bytes: twice the object (array and header), up to {@link #MAX_CHUNK}. */
    private static int doubled(int size) {
        return Math.min(MAX_CHUNK, 2 * (size + ARRAY_HEADER) - ARRAY_HEADER);
    }

    private long[] chunk(int index) {
        return chunks[index];
    }

    /** The next entry after {@code node} on {@code level}, or 0 (acquire: its words are visible). */
    long next(long node, int level) {
        return (long) LINK.getAcquire(chunk((int) (node >>> 32)), (int) node - 1 - level);
    }

    /** The next entry on level 0, or 0. */
    long next(long node) {
        return next(node, 0);
    }

    long trailer(long node) {
        return chunk((int) (node >>> 32))[(int) node + 1];
    }

    /** A copy of the entry's user key. */
    byte[] userKey(long node) {
        long[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        byte[] out = new byte[(int) (c[p] >>> 32)];
        unpack(c, p + 2, out.length, out, 0);
        return out;
    }

    /** True when the entry's user key is {@code key}'s. */
    boolean userKeyEquals(long node, MemKey key) {
        long[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        int len = (int) (c[p] >>> 32);
        byte[] k = key.userKey;
        if (len != k.length || c[p + 2] != key.prefix0 || c[p + 3] != key.prefix1) {
            return false;
        }
        for (int j = 2; j < keyWords(len); j++) {
            if (c[p + 2 + j] != key.wordAt(j)) {
                return false;
            }
        }
        return true;
    }

    /** A copy of the entry's value. */
    byte[] value(long node) {
        long[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        long lengths = c[p];
        byte[] out = new byte[(int) lengths];
        unpack(c, p + 2 + keyWords((int) (lengths >>> 32)), out.length, out, 0);
        return out;
    }

    /** The entry's encoded internal key (user key, then the trailer as fixed64), a fresh array. */
    byte[] encodedKey(long node) {
        return encodedKey(node, null);
    }

    /** {@link #encodedKey(long)} written into {@code reuse} when it has the key's length (else a fresh array). */
    byte[] encodedKey(long node, byte[] reuse) {
        long[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        int len = (int) (c[p] >>> 32);
        byte[] out = reuse != null && reuse.length == len + InternalKey.TRAILER_SIZE
                ? reuse
                : new byte[len + InternalKey.TRAILER_SIZE];
        unpack(c, p + 2, len, out, 0);
        long trailer = c[p + 1];
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
        long[] c = chunk((int) (node >>> 32));
        int p = (int) node;
        int r = Long.compareUnsigned(c[p + 2], key.prefix0);
        if (r != 0) {
            return r;
        }
        r = Long.compareUnsigned(c[p + 3], key.prefix1);
        if (r != 0) {
            return r;
        }
        // As MemKey.compare: the first 16 bytes agree (zero-padded), so a key of at most 16 bytes is a prefix of the
        // other; otherwise the words past 16 decide (zero-padded, big-endian: their unsigned order is the bytes'),
        // then the lengths.
        int len = (int) (c[p] >>> 32);
        byte[] k = key.userKey;
        if (len > 16 && k.length > 16) {
            int words = Math.min(keyWords(len), keyWords(k.length));
            for (int j = 2; j < words; j++) {
                r = Long.compareUnsigned(c[p + 2 + j], key.wordAt(j));
                if (r != 0) {
                    return r;
                }
            }
        }
        r = Integer.compare(len, k.length);
        if (r != 0) {
            return r;
        }
        return Long.compareUnsigned(key.trailer, c[p + 1]);
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
        for (long[] c : chunks) {
            sum += 8L * c.length;
        }
        return sum;
    }

    /** Bytes of chunk {@code index}. */
    long chunkLength(int index) {
        return 8L * chunks[index].length;
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
