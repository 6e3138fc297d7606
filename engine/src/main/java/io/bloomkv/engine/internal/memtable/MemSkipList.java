package io.bloomkv.engine.internal.memtable;

import io.bloomkv.engine.internal.InternalKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;
import net.openhft.chronicle.core.UnsafeMemory;

/**
 * The memtable's entries: a skip list of user keys (LevelDB's {@code db/skiplist.h}, one writer, any number of
 * lock-free readers), each key node heading the chain of that key's versions, newest first, with an optional
 * {@link MemIndex} from a key's hash to its node. All of it laid out flat in large arrays as RocksDB's
 * {@code InlineSkipList} lays out its arena: no object per entry, and young collections have nothing of the
 * memtable's to copy.
 *
 * <p>Order. The skip list holds one node per user key, in unsigned-lexicographic order. A key's versions follow it
 * newest first: the key node carries the key's first version (its oldest: {@link #insert} requires each later version
 * of a key to be newer) and a link to the newest; each later version links to the next older one, the last of them to
 * the key node. Walking the key nodes in order and each one's chain from its newest version to the key node visits
 * the entries in {@link InternalKey#COMPARATOR} order (user key ascending, trailer descending). An update of a key
 * the memtable holds appends a version record (no key, no links) and moves one link: with the index, no search; a
 * search compares only distinct keys, however often the keys were updated.
 *
 * <p>Layout. Chunks are {@code long[]}: links are array elements, read with acquire and set with release through
 * {@link MethodHandles#arrayElementVarHandle} (byte-array views do not offer those modes on every JVM: Java 25
 * refuses them). A record is addressed by a {@code long}: its chunk's index in the high 32 bits, the index of its
 * header word in the low 32 (never 0 in chunk 0, which starts with the head, so 0 is "none"). Around the header at
 * {@code p}:
 * <pre>
 *   key node                                               version
 *   p - 1 - i     link of level i (i &lt; height)              (no links)
 *   p             key length (high 32), value length       VERSION (high 32), value length
 *                 (low 31), OUT_OF_LINE (bit 31)            (low 31), OUT_OF_LINE (bit 31)
 *   p + 1         trailer (sequence &lt;&lt; 8 | type)            trailer
 *   p + 2 ...     user key, 8 bytes per word, big-endian,  p + 2: older: the next older version, or the key node
 *                 zero-padded; kw &gt;= 2 words ({@link MemKey#word})
 *   p + 2 + kw    newest version, 0 while it is the node    p + 3 ...: value, or its address
 *   p + 3 + kw    value, or its address
 * </pre>
 * A value's words hold its bytes little-endian ({@link #VALUE_ORDER}), the last word zero-padded: a
 * value is only ever copied in and out whole, never compared, so its words are filled and emptied by a plain memory
 * copy ({@link #packValue}, {@link #value(long, LentValue)}), where the key's big-endian words (compared as unsigned
 * longs) would cost a byte swap per word of every value written and of every value a flush reads back.
 * A value of more than {@link #INLINE_VALUE_MAX} bytes is stored out of line: its words go to the value arena (chunks
 * of their own, {@link #valueChunks}, allocated as the records' chunks are) and the record holds its address (chunk
 * index high 32, word low 32) in one word, with {@code OUT_OF_LINE} set. So a key node with a large value is its links,
 * header and key only, and key nodes lie close together: a search for a new key steps through nodes packed a few to a
 * cache line and many to a page instead of one node per value's length. A small value stays next to its record (a
 * get reads it from the line it already holds).
 * A compare reads the key's first two words as two loads whatever the key's length, from the line of the node's
 * header and first link (the newest link comes after the key, where a search does not read). Chunks start at
 * {@link #FIRST_CHUNK} bytes and double up to {@link #STEADY_CHUNK}; from there each is about a quarter of the
 * arena's bytes so far, a power of two from {@link #STEADY_CHUNK} to {@link #MAX_CHUNK} ({@link #grown}), so that
 * the unused end of the chunk being filled, which the heap holds (a new array is zeroed, so its pages are touched)
 * but {@link #bytesTaken} does not count, stays under a quarter of the arena once it is past a few MiB, instead of up
 * to all of it; a record too large for a chunk of the largest size gets a chunk of its own.
 *
 * <p>Publication: a new record's words and links are written before it becomes reachable; then each predecessor's
 * link (a key node) or the key node's newest link (a version) is set with release semantics, and readers load those
 * with acquire semantics, so a reader that reaches a record sees all of its words, and those of every older version
 * of its key. A version's older link is never changed. A new chunk is published (the volatile {@link #chunks}, a
 * fresh array each time) before any record in it is linked. Records are never removed. {@link #insert} must not be
 * called concurrently with itself (the memtable's single writer).
 */
final class MemSkipList {
    /** LevelDB's: with branching 4, searches stay O(log n) up to ~16M keys, far above a memtable's. */
    static final int MAX_HEIGHT = 12;

    /** The lookup key {@link #insert} points at each key it inserts (insert has one caller at a time). */
    private final MemKey insertKey = new MemKey(new byte[0], 0);

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
    /**
     * Bytes of the chunk at which doubling stops: the chunks after it are at least this and at most about a quarter of
     * the arena's bytes ({@link #grown}). A humongous object for G1 up to 2 GiB heaps (regions of 1 MiB), so the
     * chunks that follow are not copied by young collections there either.
     */
    static final int STEADY_CHUNK = (1 << 20) - ARRAY_HEADER;
    /**
     * Most chunks a memtable may have: {@link MemIndex} packs a chunk's index into 16 bits. Regular chunks of 4 MiB
     * make that a memtable of about 256 GiB; an insert past it is refused.
     */
    static final int MAX_CHUNKS = 1 << 16;
    /** Bytes of a record's header: lengths, trailer and the chain link. */
    static final int HEADER = 24;
    /** Bytes a key takes at least (zero-padded): the two words a compare reads. */
    static final int MIN_KEY_AREA = 16;
    /** Largest record in bytes (links, header, key and value) a chunk can hold. */
    static final long MAX_ENTRY = 8L * (Integer.MAX_VALUE - 64);
    /** The high half of a version's first word, where a key node has its key's length (at most 2^31 - 1). */
    private static final long VERSION = 0xFFFF_FFFFL;
    /** Bytes of the largest value stored in its record; a larger one goes to the value arena. */
    static final int INLINE_VALUE_MAX = 64;
    /** In a record's first word: its value is in the value arena, at the address its value word holds. */
    private static final long OUT_OF_LINE = 1L << 31;
    /** The value length's bits in a record's first word. */
    private static final long VALUE_LENGTH = OUT_OF_LINE - 1;

    private static final VarHandle LINK = MethodHandles.arrayElementVarHandle(long[].class);
    /**
     * The value arena's chunk before its first: no room, so the first out-of-line value takes the same "chunk full"
     * path as every later chunk. A null there would be a branch taken once per memtable, the first time before the JIT
     * profiles it: C2 would compile the insert without it and throw the compiled write path away at the first value of
     * the next memtable.
     */
    private static final long[] NO_WORDS = new long[0];
    /** No array to reuse ({@link #encodedKey(long, long, byte[])}): shorter than every encoded key. */
    static final byte[] NO_BYTES = new byte[0];
    /**
     * Words up to which {@link #pack} and {@link #unpack} (keys) and {@link #packValue} and {@link #unpackValue}
     * (values) move bytes with shifts, above which with one bulk copy (keys: a swapping one through a
     * {@code ByteBuffer} long view, for their big-endian words; values: a plain memory copy). A bulk copy's setup and
     * checks cost more than the copy of a few words (a Kafka Streams counter is one word); the shifts run fast in
     * every tier of the JIT (a byte-array {@code VarHandle} ran slow in C1, where a short run spends much of its time),
     * and the bulk copy wins on large values.
     */
    static final int SHIFT_WORDS = 4;

    /**
     * The byte order of a value's words (byte {@code i} of a word at bits {@code 8i}): the order of the platforms the
     * engine runs on (x86-64, AArch64), so that a large value's words are its bytes as they lie in memory, moved by
     * one memory copy ({@link #VALUE_ORDER_IS_NATIVE}) instead of a byte swap per word.
     */
    static final ByteOrder VALUE_ORDER = ByteOrder.LITTLE_ENDIAN;

    /**
     * True where memory holds a long's bytes in {@link #VALUE_ORDER}: a value's words are then its bytes as they lie
     * in memory, and {@link #packValue} and {@link #unpackValue} move them with {@code Unsafe.copyMemory} (bounds
     * checked first), not through a {@code ByteBuffer} long view, whose buffers, slices and scoped-access checks made
     * the copy the larger part of the compiled insert (the write path's largest compile). Elsewhere the shifts move
     * every word.
     */
    private static final boolean VALUE_ORDER_IS_NATIVE = ByteOrder.nativeOrder() == VALUE_ORDER;

    private static final long BYTE_ARRAY_BASE = UnsafeMemory.UNSAFE.arrayBaseOffset(byte[].class);
    private static final long LONG_ARRAY_BASE = UnsafeMemory.UNSAFE.arrayBaseOffset(long[].class);

    /** The chunks, by index; replaced (never changed) when one is added, so a reader's copy stays valid. */
    private volatile long[][] chunks;
    /**
     * The value arena's chunks (out-of-line values), by index; replaced (never changed) when one is added, which
     * happens before the record holding the first value in it is linked. Empty until the first large value.
     */
    private volatile long[][] valueChunks = new long[0][];
    /**
     * The head: a key node of MAX_HEIGHT links and an empty key (length 0, key words zero), in chunk 0. Searches never
     * compare it; an insert's splice check does (it compares before every key but the empty one).
     */
    private final long head;
    /** The point index of the key nodes, or null (lookups search the skip list). */
    private final MemIndex index;

    // The writer's state.
    private long[] current;
    private int currentIndex;
    /** Words of the current chunk in use. */
    private int used;
    /** Bytes of the chunks before the current one (their unused ends included). */
    private long closedBytes;
    /** Bytes of the next regular chunk. */
    private int nextChunkSize;
    /**
     * The value arena's current chunk ({@link #NO_WORDS}, full at any size, before the first out-of-line value), its
     * index and words in use.
     */
    private long[] valueCurrent = NO_WORDS;

    private int valueCurrentIndex;
    private int valueUsed;
    /** Bytes of the value arena's chunks before its current one (their unused ends included). */
    private long valueClosedBytes;
    /** Bytes of the value arena's next regular chunk. */
    private int nextValueChunkSize = FIRST_CHUNK;
    /** Levels in use (1..MAX_HEIGHT); readers may see a new height before the head links of those levels: 0 ends a level. */
    private volatile int height = 1;
    /**
     * Highest level whose splice an insert tries before it searches from the head: nodes of level 3 lie some 64 key
     * nodes apart, so keys that arrive out of order by a few places (writers interleaved) search from near the splice,
     * and a key far from it (a random load) costs at most four compares more.
     */
    static final int SPLICE_REACH = 3;
    /** The writer's random state (xorshift64*); only {@link #insert} touches it. */
    private long random = 0x9E3779B97F4A7C15L;
    /**
     * The writer's scratch: the predecessor of the new key node on each level. Between inserts it is the splice of
     * RocksDB's InlineSkipList ({@code seq_splice_}): on each level i below {@link #height}, {@code prev[i]} is the last
     * key node of level i at or before {@code prev[0]} (a search leaves it so, and an insert of node n sets its levels
     * to n). A key after {@code prev[0]} and not after its level-0 successor then has exactly these predecessors on
     * every level (each level's successor of {@code prev[i]} lies past {@code prev[0]}, so at or past that one), and
     * an insert in key order checks two keys instead of searching.
     */
    private final long[] prev = new long[MAX_HEIGHT];

    /** A list without an index: lookups search the skip list. */
    MemSkipList() {
        this(false);
    }

    /** @param indexed whether key lookups go through a {@link MemIndex} (its memory: {@link #indexBytes}) */
    MemSkipList(boolean indexed) {
        current = new long[FIRST_CHUNK / 8];
        chunks = new long[][] {current};
        head = MAX_HEIGHT; // chunk 0, its links below it, an empty key
        Arrays.fill(prev, head); // the splice of the empty list: the head on every level
        used = MAX_HEIGHT + 3 + MIN_KEY_AREA / 8;
        nextChunkSize = doubled(FIRST_CHUNK);
        index = indexed ? new MemIndex(this) : null;
    }

    /** As {@link #insert(byte[], long, boolean, long, byte[], int, int)}, hashing the key when the list is indexed. */
    long insert(byte[] userKey, long trailer, byte[] value, int valueOffset, int valueLength) {
        long hash = index == null ? 0 : io.bloomkv.bloom.Hashing.hash64(userKey);
        return insert(userKey, hash, true, trailer, value, valueOffset, valueLength);
    }

    /** As {@link #insert(byte[], long, boolean, long, byte[], int, int)} for a key the list may hold. */
    long insert(byte[] userKey, long hash, long trailer, byte[] value, int valueOffset, int valueLength) {
        return insert(userKey, hash, true, trailer, value, valueOffset, valueLength);
    }

    /**
     * Copies an entry in: the user key, its trailer and {@code value[valueOffset, valueOffset + valueLength)}; a key
     * the list holds gets a version record in front of its chain (no key copy, no search with the index), a new one a
     * key node. Writer only. @param hash the key's {@link io.bloomkv.bloom.Hashing#hash64} (ignored without an index)
     * @param mayHold false when the caller knows the list holds no entry of the key (the memtable filter had some of
     *                its bits clear): the index is not asked
     * @return the bytes it took: links, header, key, value and padding, plus the unused end of the chunk it closed
     * when it did not fit there (so the sum is {@link #bytesTaken}), plus the index's growth when it grew (so the sum
     * of all is {@link #bytesTaken} + {@link #indexBytes}, what the memtable holds on the heap)
     * @throws IllegalStateException if the list holds an entry of the same user key with the same or a newer sequence
     *                               (a memtable receives a key's writes in sequence order; this is a caller's bug)
     * @throws IllegalArgumentException if the entry is too large for a chunk ({@link #MAX_ENTRY})
     */
    long insert(
            byte[] userKey, long hash, boolean mayHold, long trailer, byte[] value, int valueOffset, int valueLength) {
        MemKey key = insertKey.set(userKey, trailer); // the writer's one lookup key, reused: no allocation per insert
        long x;
        if (index != null) {
            x = mayHold ? index.find(hash, userKey) : 0;
            if (x == 0) {
                findForInsert(key);
            }
        } else {
            x = findForInsert(key);
            if (x != 0 && !keyEquals(x, key)) {
                x = 0;
            }
        }
        // One record layout for both cases, one allocate and one putValue call: C2 inlines a callee once per call
        // site, and a copy of the value copy (packValue) and of the allocation per case made the
        // compiled insert twice as large as it needs to be.
        long before = bytesTaken();
        boolean version = x != 0;
        long newest = 0;
        int h = 0;
        int keyWords = 0;
        if (version) {
            newest = newest(x);
            long newestTrailer = trailer(newest);
            if (Long.compareUnsigned(trailer >>> 8, newestTrailer >>> 8) <= 0) {
                throw notNewer(trailer, newestTrailer);
            }
        } else {
            h = randomHeight();
            keyWords = keyWords(userKey.length);
        }
        // a version record: header, trailer, next-older version, value; a key node: h links below its header,
        // trailer, key words, newest version (0: it is its key's newest), value
        long words = (version ? 3L : h + 3L + keyWords) + valueWords(valueLength);
        checkSize(words);
        long at = allocate((int) words, h);
        long[] c = current;
        int p = (int) at;
        int valueAt;
        c[p + 1] = trailer;
        if (version) {
            c[p] = (VERSION << 32) | lengthWord(valueLength);
            c[p + 2] = newest;
            valueAt = p + 3;
        } else {
            c[p] = ((long) userKey.length << 32) | lengthWord(valueLength);
            c[p + 2] = key.prefix0; // the key's first two words, as the lookup key already holds them
            c[p + 3] = key.prefix1;
            if (userKey.length > 16) {
                pack(userKey, 16, userKey.length - 16, c, p + 4);
            }
            c[p + 2 + keyWords] = 0; // it is its key's newest version
            valueAt = p + 3 + keyWords;
        }
        putValue(value, valueOffset, valueLength, c, valueAt);
        if (version) {
            LINK.setRelease(chunk((int) (x >>> 32)), newestWord(x), at); // the version in front of the chain
            return bytesTaken() - before;
        }
        int cur = height;
        if (h > cur) {
            for (int i = cur; i < h; i++) {
                prev[i] = head;
            }
            height = h; // readers that see it before the head links below treat the new levels as empty
        }
        for (int i = 0; i < h; i++) {
            c[p - 1 - i] = next(prev[i], i); // plain: the node is not reachable yet
        }
        for (int i = 0; i < h; i++) {
            long pr = prev[i];
            LINK.setRelease(chunk((int) (pr >>> 32)), (int) pr - 1 - i, at);
            prev[i] = at; // the splice after the new node (see prev)
        }
        long indexBefore = indexBytes();
        if (index != null) {
            index.add(hash, at);
        }
        return bytesTaken() - before + indexBytes() - indexBefore;
    }

    /** The exception for a version of a key not newer than the key's newest in the list (a caller's bug). */
    private static IllegalStateException notNewer(long trailer, long newestTrailer) {
        return new IllegalStateException("memtable already holds sequence " + (newestTrailer >>> 8)
                + " of this key, not older than sequence " + (trailer >>> 8));
    }

    /** Words a value of {@code length} bytes takes in its record: its own words, or one for its address. */
    private static long valueWords(int length) {
        return length > INLINE_VALUE_MAX ? 1 : (length + 7L) >>> 3;
    }

    /** The low half of a record's first word for a value of {@code length} bytes. */
    private static long lengthWord(int length) {
        return length > INLINE_VALUE_MAX ? OUT_OF_LINE | length : length;
    }

    /**
     * Writer only. Stores the value at word {@code at} of the record's chunk {@code c}: its words there, or (past
     * {@link #INLINE_VALUE_MAX}) its words in the value arena and their address there. Before the record is linked.
     */
    private void putValue(byte[] value, int off, int len, long[] c, int at) {
        if (len <= INLINE_VALUE_MAX) {
            packValue(value, off, len, c, at);
            return;
        }
        long words = (len + 7L) >>> 3;
        checkSize(words);
        long a = allocateValue((int) words);
        packValue(value, off, len, valueCurrent, (int) a);
        c[at] = a;
    }

    /** Room in the value arena for a value of {@code words} words; its address. */
    private long allocateValue(int words) {
        if (valueCurrent.length - valueUsed < words) {
            newValueChunk(words);
        }
        int p = valueUsed;
        valueUsed += words;
        return ((long) valueCurrentIndex << 32) | p;
    }

    /** Closes the value arena's current chunk and starts one with room for {@code words}; out of line as newChunk. */
    private void newValueChunk(int words) {
        long[][] old = valueChunks;
        int length = 8L * words > MAX_CHUNK ? words : Math.max(nextValueChunkSize / 8, words);
        nextValueChunkSize = grown(nextValueChunkSize, valueClosedBytes + 8L * valueCurrent.length + 8L * length);
        long[] fresh = new long[length];
        long[][] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = fresh;
        valueChunks = grown; // published before the record holding this value is linked
        valueClosedBytes += 8L * valueCurrent.length; // 0 for NO_WORDS
        valueCurrent = fresh;
        valueCurrentIndex = old.length;
        valueUsed = 0;
    }

    private static void checkSize(long words) {
        if (8 * words > MAX_ENTRY) {
            throw new IllegalArgumentException("entry of " + 8 * words + " bytes is too large for the memtable");
        }
    }

    /**
     * Writer only. Fills {@link #prev} with the predecessors of {@code key}'s user key and returns the first key node
     * not before it (0 for none), as {@link #findGreaterOrEqual} does, searching from the splice when the key lies near
     * it (RocksDB's {@code RecomputeSpliceLevels}). After the splice's node P = {@code prev[0]}, level i's splice is
     * still the key's predecessor when its successor there is not before the key; before P, when {@code prev[i]} is
     * before the key (its successor lies past P). Both hold from some level up (a higher level's node is not after a
     * lower one's, its successor not before): the search starts at the lowest such level, looked for up to
     * {@link #SPLICE_REACH}, else at the head. A load in key order costs two compares; two writers' interleaved keys a
     * short search.
     */
    private long findForInsert(MemKey key) {
        long p0 = prev[0];
        // No case of its own for the head (an empty list's splice): its key words are zero and its length 0, so it
        // compares before every key but the empty one, which searches from the head. A branch that only a fresh list
        // takes would be one the JIT compiles as never taken, and a new memtable would send the insert back to the
        // interpreter until it is compiled again.
        int c = compareKey(p0, key);
        int reach = Math.min(height - 1, SPLICE_REACH);
        long from = head;
        int level = height - 1;
        if (c < 0) {
            for (int i = 0; i <= reach; i++) {
                long n = next(prev[i], i);
                if (!before(n, key)) {
                    if (i == 0) {
                        return n;
                    }
                    from = prev[i];
                    level = i;
                    break;
                }
            }
        } else if (c > 0) {
            for (int i = 1; i <= reach; i++) {
                long p = prev[i];
                if (compareKey(p, key) < 0) { // the head too (see above)
                    from = p;
                    level = i;
                    break;
                }
            }
        }
        // one search call site, not one per case: the insert the JIT compiles holds one copy of the search
        return searchFrom(from, level, key, prev);
    }

    /**
     * Bytes of the chunks up to the end of the last record, in both arenas: every closed chunk whole, the current one as
     * far as used.
     */
    long bytesTaken() {
        return closedBytes + 8L * used + valueClosedBytes + 8L * valueUsed;
    }

    /** Heap bytes of the index (0 without one). */
    long indexBytes() {
        return index == null ? 0 : index.memoryBytes();
    }

    /** Room for a record of {@code words} words whose header follows its {@code h} links; its address. */
    private long allocate(int words, int h) {
        if (current.length - used < words) {
            newChunk(words);
        }
        int p = used + h;
        used += words;
        return ((long) currentIndex << 32) | p;
    }

    /**
     * Closes the current chunk and starts one with room for {@code words}. Out of line: taken once per chunk, it is
     * a call in the compiled insert rather than a copy of the growth code.
     */
    private void newChunk(int words) {
        long[][] old = chunks;
        if (old.length >= MAX_CHUNKS) {
            throw new IllegalStateException("memtable of " + MAX_CHUNKS + " chunks is full");
        }
        int length = 8L * words > MAX_CHUNK ? words : Math.max(nextChunkSize / 8, words);
        nextChunkSize = grown(nextChunkSize, closedBytes + 8L * current.length + 8L * length);
        long[] fresh = new long[length];
        long[][] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = fresh;
        chunks = grown; // published before any record in it is linked
        closedBytes += 8L * current.length;
        current = fresh;
        currentIndex = old.length;
        used = 0;
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

    /**
     * {@code bytes[off, off + len)} into value words from {@code c[at]} (see the class comment): 8 bytes per word,
     * little-endian ({@link #VALUE_ORDER}), the last zero-padded; above {@link #SHIFT_WORDS} words by a memory copy
     * ({@link #VALUE_ORDER_IS_NATIVE}).
     */
    private static void packValue(byte[] bytes, int off, int len, long[] c, int at) {
        int full = len >>> 3;
        if (full > SHIFT_WORDS && VALUE_ORDER_IS_NATIVE) {
            Objects.checkFromIndexSize(off, 8 * full, bytes.length);
            Objects.checkFromIndexSize(at, full, c.length);
            UnsafeMemory.UNSAFE.copyMemory(bytes, BYTE_ARRAY_BASE + off, c, LONG_ARRAY_BASE + 8L * at, 8L * full);
        } else {
            for (int i = 0; i < full; i++) {
                int o = off + 8 * i;
                c[at + i] = (bytes[o] & 0xFFL)
                        | (bytes[o + 1] & 0xFFL) << 8
                        | (bytes[o + 2] & 0xFFL) << 16
                        | (bytes[o + 3] & 0xFFL) << 24
                        | (bytes[o + 4] & 0xFFL) << 32
                        | (bytes[o + 5] & 0xFFL) << 40
                        | (bytes[o + 6] & 0xFFL) << 48
                        | (bytes[o + 7] & 0xFFL) << 56;
            }
        }
        int rest = len & 7;
        if (rest > 0) {
            long w = 0;
            for (int i = 0; i < rest; i++) {
                w |= (bytes[off + 8 * full + i] & 0xFFL) << (8 * i);
            }
            c[at + full] = w;
        }
    }

    /**
     * The first {@code len} bytes of the value words from {@code c[at]} into {@code out[off...]} ({@link #packValue}'s
     * inverse).
     */
    private static void unpackValue(long[] c, int at, int len, byte[] out, int off) {
        int full = len >>> 3;
        if (full > SHIFT_WORDS && VALUE_ORDER_IS_NATIVE) {
            Objects.checkFromIndexSize(at, full, c.length);
            Objects.checkFromIndexSize(off, 8 * full, out.length);
            UnsafeMemory.UNSAFE.copyMemory(c, LONG_ARRAY_BASE + 8L * at, out, BYTE_ARRAY_BASE + off, 8L * full);
        } else {
            for (int i = 0; i < full; i++) {
                long w = c[at + i];
                int o = off + 8 * i;
                out[o] = (byte) w;
                out[o + 1] = (byte) (w >>> 8);
                out[o + 2] = (byte) (w >>> 16);
                out[o + 3] = (byte) (w >>> 24);
                out[o + 4] = (byte) (w >>> 32);
                out[o + 5] = (byte) (w >>> 40);
                out[o + 6] = (byte) (w >>> 48);
                out[o + 7] = (byte) (w >>> 56);
            }
        }
        int rest = len & 7;
        if (rest > 0) {
            long w = c[at + full];
            for (int i = 0; i < rest; i++) {
                out[off + 8 * full + i] = (byte) (w >>> (8 * i));
            }
        }
    }

    /** The chunk size after {@code size} bytes: twice the object (array and header), up to {@link #MAX_CHUNK}. */
    private static int doubled(int size) {
        return Math.min(MAX_CHUNK, 2 * (size + ARRAY_HEADER) - ARRAY_HEADER);
    }

    /**
     * The size of the chunk after one of {@code size} bytes, when the arena's chunks (that one included, its unused end
     * too) take {@code arenaBytes}: doubled below {@link #STEADY_CHUNK}; from there the largest power of two (minus
     * the array header) at most a quarter of {@code arenaBytes}, from {@link #STEADY_CHUNK} to {@link #MAX_CHUNK}.
     * So the chunk being filled is at most a quarter of the arena, or {@link #STEADY_CHUNK}, whichever is more.
     */
    static int grown(int size, long arenaBytes) {
        if (size < STEADY_CHUNK) {
            return doubled(size);
        }
        long quarter = Long.highestOneBit(Math.max(1, arenaBytes / 4));
        return (int) Math.max(STEADY_CHUNK, Math.min(MAX_CHUNK, quarter - ARRAY_HEADER));
    }

    private long[] chunk(int index) {
        return chunks[index];
    }

    // ---- key nodes: the skip list ----

    /** The next key node after {@code node} on {@code level}, or 0 (acquire: its words are visible). */
    long next(long node, int level) {
        return (long) LINK.getAcquire(chunk((int) (node >>> 32)), (int) node - 1 - level);
    }

    /** The next key node, or 0. */
    long next(long node) {
        return next(node, 0);
    }

    /** Levels in use (tests walk each one). */
    int height() {
        return height;
    }

    /** The first key node on {@code level}, or 0 when that level is empty. */
    long first(int level) {
        return next(head, level);
    }

    /** The first key node, or 0 when empty. */
    long first() {
        return next(head, 0);
    }

    boolean isEmpty() {
        return first() == 0;
    }

    /** A copy of key node {@code x}'s user key. */
    byte[] userKey(long x) {
        long[] c = chunk((int) (x >>> 32));
        int p = (int) x;
        byte[] out = new byte[(int) (c[p] >>> 32)];
        unpack(c, p + 2, out.length, out, 0);
        return out;
    }

    /** Key node {@code x}'s user key, written into {@code reuse} when it has the key's length (else a new array). */
    byte[] userKey(long x, byte[] reuse) {
        long[] c = chunk((int) (x >>> 32));
        int p = (int) x;
        int length = (int) (c[p] >>> 32);
        byte[] out = reuse != null && reuse.length == length ? reuse : new byte[length];
        unpack(c, p + 2, length, out, 0);
        return out;
    }

    /** True when key node {@code x}'s user key is {@code key}'s. */
    boolean keyEquals(long x, MemKey key) {
        long[] c = chunk((int) (x >>> 32));
        int p = (int) x;
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

    /**
     * Zero when key node {@code x}'s user key is {@code k}, non-zero otherwise (words made on the fly: a point lookup
     * compares one node, and builds no lookup key). Every word is compared, with no early return: the index calls it
     * on a tag match, where a different key is so rare that a compiled caller would have never seen one, and an
     * early-return branch never taken is compiled as a trap that throws the caller's compiled code away (the whole
     * insert or get, recompiled) the first time a different key matches a tag. The caller's test of the result is
     * taken both ways as it probes past other tags.
     */
    long keyDifference(long x, byte[] k) {
        long[] c = chunk((int) (x >>> 32));
        int p = (int) x;
        int len = (int) (c[p] >>> 32);
        long difference = len ^ k.length;
        for (int j = 0; j < keyWords(len); j++) { // the node's words; MemKey.word pads a shorter k with zeros
            difference |= c[p + 2 + j] ^ MemKey.word(k, 8 * j);
        }
        return difference;
    }

    /** Key node {@code x}'s user key against {@code key}'s (unsigned lexicographic; trailers play no part). */
    int compareKey(long x, MemKey key) {
        long[] c = chunk((int) (x >>> 32));
        int p = (int) x;
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
        return Integer.compare(len, k.length);
    }

    /**
     * True when {@code n} is a key node (not 0, the end of a level) whose user key is before {@code key}'s. One method for
     * the search's step and the splice's check, so both share one branch profile: the search reaches the end of a level
     * often, the splice rarely (at the first insert into a memtable, before the JIT profiles it), and C2 compiles the
     * splice's check with the end of a level in it instead of deoptimizing the insert the first time it meets one.
     */
    private boolean before(long n, MemKey key) {
        return n != 0 && compareKey(n, key) < 0;
    }

    /** Key node {@code x}'s user key against key node {@code y}'s (no copy of either). */
    private int compareKeys(long x, long y) {
        long[] c = chunk((int) (x >>> 32));
        int p = (int) x;
        long[] d = chunk((int) (y >>> 32));
        int q = (int) y;
        int lx = (int) (c[p] >>> 32);
        int ly = (int) (d[q] >>> 32);
        int words = Math.min(keyWords(lx), keyWords(ly));
        for (int j = 0; j < words; j++) {
            int r = Long.compareUnsigned(c[p + 2 + j], d[q + 2 + j]);
            if (r != 0) {
                return r;
            }
        }
        return Integer.compare(lx, ly);
    }

    /** The key node of {@code userKey}, or 0: through the index ({@code hash} its hash64) or a search. */
    long findKey(byte[] userKey, long hash) {
        if (index != null) {
            return index.find(hash, userKey);
        }
        MemKey key = new MemKey(userKey, 0);
        long x = findGreaterOrEqual(key, null);
        return x != 0 && keyEquals(x, key) ? x : 0;
    }

    /** True when key lookups go through the index. */
    boolean indexed() {
        return index != null;
    }

    /**
     * The first key node whose user key is >= {@code key}'s, or 0; fills {@code prevOut} (when not null) with the
     * predecessors per level.
     */
    long findGreaterOrEqual(MemKey key, long[] prevOut) {
        return searchFrom(head, height - 1, key, prevOut);
    }

    /**
     * {@link #findGreaterOrEqual} starting at key node {@code x} (or the head) of {@code level}, which must lie before
     * the key: fills {@code prevOut[0..level]}.
     */
    private long searchFrom(long x, int level, MemKey key, long[] prevOut) {
        long touched = 0;
        while (true) {
            long n = next(x, level);
            if (level > 0) {
                // The node a step down from x compares first: load its first key word now, so its cache miss overlaps
                // the compare with n instead of following it (RocksDB's InlineSkipList prefetches the same way; Java
                // has no prefetch, and a load whose value is never used would be dropped by the JIT).
                long d = next(x, level - 1);
                if (d != n && d != 0) {
                    touched ^= chunk((int) (d >>> 32))[(int) d + 2];
                }
            }
            if (before(n, key)) {
                x = n;
            } else {
                if (prevOut != null) {
                    prevOut[level] = x;
                }
                if (level == 0) {
                    if (touched == TOUCHED_MARK) {
                        touchedMarks++; // keeps the loads above; harmless when it happens (a key word equal to the
                        // mark)
                    }
                    return n;
                }
                level--;
            }
        }
    }

    /** See {@link #findGreaterOrEqual}: a value the touched key words almost never sum to. */
    private static final long TOUCHED_MARK = 0x5DEE_CE66_D1CE_B00BL;
    /** Written only when {@link #TOUCHED_MARK} is met, so readers do not share a written line. */
    private static int touchedMarks;

    /** The last key node whose user key is < {@code key}'s, or 0. */
    long findLessThan(MemKey key) {
        return findLast(key, 0, false);
    }

    /** The last key node whose user key is <= {@code key}'s, or 0. */
    long findLessOrEqual(MemKey key) {
        return findLast(key, 0, true);
    }

    /** The last key node before key node {@code node}, or 0 (compares stored keys: nothing copied). */
    long findLessThan(long node) {
        return findLast(null, node, false);
    }

    /** The last key node, or 0 when empty. */
    long findLast() {
        return findLast(null, 0, false);
    }

    /**
     * The last key node < {@code key} (or <= with {@code orEqual}); with a null key, the last one before key node
     * {@code node} (none, 0: the last of all); or 0.
     */
    private long findLast(MemKey key, long node, boolean orEqual) {
        long x = head;
        int level = height - 1;
        while (true) {
            long n = next(x, level);
            int c = n == 0 ? 1 : key != null ? compareKey(n, key) : node != 0 ? compareKeys(n, node) : -1;
            if (c < 0 || (orEqual && c == 0)) {
                x = n;
            } else if (level == 0) {
                return x == head ? 0 : x;
            } else {
                level--;
            }
        }
    }

    // ---- versions: a key node's chain ----

    /** Key node {@code x}'s newest version (acquire: it and every older one are visible). */
    long newest(long x) {
        long v = (long) LINK.getAcquire(chunk((int) (x >>> 32)), newestWord(x));
        return v == 0 ? x : v;
    }

    /** Index in its chunk of key node {@code x}'s newest link: after its key. */
    private int newestWord(long x) {
        int p = (int) x;
        return p + 2 + keyWords((int) (chunk((int) (x >>> 32))[p] >>> 32));
    }

    /** The version after {@code v} in key node {@code x}'s chain (the next older one), or 0 after the key node. */
    long older(long x, long v) {
        return v == x ? 0 : chunk((int) (v >>> 32))[(int) v + 2];
    }

    /** The trailer of version {@code v} (a key node is its key's oldest version). */
    long trailer(long v) {
        return chunk((int) (v >>> 32))[(int) v + 1];
    }

    /** A copy of version {@code v}'s value. */
    byte[] value(long v) {
        long[] c = chunk((int) (v >>> 32));
        int p = (int) v;
        long first = c[p];
        long keyLength = first >>> 32;
        byte[] out = new byte[(int) (first & VALUE_LENGTH)];
        int at = keyLength == VERSION ? p + 3 : p + 3 + keyWords((int) keyLength);
        if ((first & OUT_OF_LINE) != 0) {
            long a = c[at]; // the value arena's chunk holding it was published before the record
            unpackValue(valueChunks[(int) (a >>> 32)], (int) a, out.length, out, 0);
        } else {
            unpackValue(c, at, out.length, out, 0);
        }
        return out;
    }

    /** An array {@link #value(long, LentValue)} refills while values keep its length. */
    static final class LentValue {
        /** Never null (a test for null would be a branch only a new iterator's first value takes; see NO_WORDS). */
        private byte[] bytes = new byte[0];
    }

    /**
     * Gives {@code lent} an array of version {@code v}'s value length unless it has one: an iterator does this when a
     * seek positions it, so its first {@code lendValue} finds the array as every later one does. Otherwise a new
     * iterator's first value would take the branch that allocates, which a flush takes once per memtable: compiled
     * code that never saw it deoptimizes there at every flush after the first.
     */
    void sizeLent(long v, LentValue lent) {
        int length = (int) (chunk((int) (v >>> 32))[(int) v] & VALUE_LENGTH);
        if (lent.bytes.length != length) {
            lent.bytes = new byte[length];
        }
    }

    /** The length of key node {@code x}'s user key. */
    int keyLength(long x) {
        return (int) (chunk((int) (x >>> 32))[(int) x] >>> 32);
    }

    /** {@link #value(long)} written into {@code lent}'s array when it has the value's length (else a fresh one). */
    byte[] value(long v, LentValue lent) {
        long[] c = chunk((int) (v >>> 32));
        int p = (int) v;
        long first = c[p];
        long keyLength = first >>> 32;
        int length = (int) (first & VALUE_LENGTH);
        if (lent.bytes.length != length) {
            lent.bytes = new byte[length];
        }
        byte[] out = lent.bytes;
        int at = keyLength == VERSION ? p + 3 : p + 3 + keyWords((int) keyLength);
        if ((first & OUT_OF_LINE) != 0) {
            long a = c[at]; // the value arena's chunk holding it was published before the record
            c = valueChunks[(int) (a >>> 32)];
            at = (int) a;
        }
        unpackValue(c, at, length, out, 0);
        return out;
    }

    /** The encoded internal key (user key, then the trailer as fixed64) of version {@code v} of key node {@code x}. */
    byte[] encodedKey(long x, long v) {
        return encodedKey(x, v, NO_BYTES);
    }

    /**
     * {@link #encodedKey(long, long)} written into {@code reuse} (not null: {@link #NO_BYTES} for none) when it has the
     * key's length (else a fresh array).
     */
    byte[] encodedKey(long x, long v, byte[] reuse) {
        long[] c = chunk((int) (x >>> 32));
        int p = (int) x;
        int len = (int) (c[p] >>> 32);
        byte[] out = reuse.length == len + InternalKey.TRAILER_SIZE ? reuse : new byte[len + InternalKey.TRAILER_SIZE];
        unpack(c, p + 2, len, out, 0);
        long trailer = trailer(v);
        for (int i = 0; i < 8; i++) {
            out[len + i] = (byte) (trailer >>> (8 * i));
        }
        return out;
    }

    /** Version {@code v} of key node {@code x} as a lookup key. */
    MemKey key(long x, long v) {
        return new MemKey(userKey(x), trailer(v));
    }

    /** Version {@code v} of key node {@code x} against {@code key}, in {@link MemKey#compare}'s order. */
    int compare(long x, long v, MemKey key) {
        int r = compareKey(x, key);
        return r != 0 ? r : Long.compareUnsigned(key.trailer, trailer(v));
    }

    // ---- memory ----

    /** Bytes of the chunks allocated so far in both arenas (the records' bytes plus the unused end of each chunk). */
    long chunkBytes() {
        long sum = 0;
        for (long[] c : chunks) {
            sum += 8L * c.length;
        }
        for (long[] c : valueChunks) {
            sum += 8L * c.length;
        }
        return sum;
    }

    /** Bytes of chunk {@code index}: the records' chunks first, then the value arena's. */
    long chunkLength(int index) {
        long[][] records = chunks;
        return 8L * (index < records.length ? records[index] : valueChunks[index - records.length]).length;
    }

    /** Number of chunks allocated so far in both arenas. */
    int chunkCount() {
        return chunks.length + valueChunks.length;
    }

    /** Number of the value arena's chunks allocated so far. */
    int valueChunkCount() {
        return valueChunks.length;
    }

    /** The index's packed form of record address {@code x}: 16 bits of chunk, 19 of word ({@link MemIndex}). */
    static long compact(long x) {
        return ((x >>> 32) << MemIndex.WORD_BITS) | (x & ((1L << MemIndex.WORD_BITS) - 1));
    }

    /** {@link #compact}'s inverse. */
    static long expand(long compact) {
        return ((compact >>> MemIndex.WORD_BITS) << 32) | (compact & ((1L << MemIndex.WORD_BITS) - 1));
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

    // ---- size estimates (MemTable#approximateBytesIn) ----

    /**
     * An estimate of the key nodes whose user key is below {@code key} (every key node when null), RocksDB's
     * {@code InlineSkipList::EstimateCount}: a search from the top level that counts the nodes it passes on each level,
     * multiplying the count by the branching factor at each step down. Visits some {@code BRANCHING} nodes per level
     * (no walk of the range); exact when the list has one level. Safe for readers while the writer inserts.
     */
    long estimateCountBelow(byte[] key) {
        MemKey k = key == null ? null : new MemKey(key, 0);
        long count = 0;
        long x = head;
        int level = height - 1;
        while (true) {
            long n = next(x, level);
            if (n == 0 || (k != null && compareKey(n, k) >= 0)) {
                if (level == 0) {
                    return count;
                }
                count *= BRANCHING;
                level--;
            } else {
                x = n;
                count++;
            }
        }
    }

    // ---- what a range tombstone hides (MemTable#addRangeTombstone) ----

    /**
     * Bytes that the versions of keys in {@code [begin, end)} with a sequence below {@code sequence} take, each counted
     * as its value's length plus {@code perEntry}, and each key node's key once more: an estimate of what a range
     * tombstone of sequence {@code sequence} over that range hides here (the memtable weighs it against its size to
     * decide on {@link MemTable#withoutHidden a rewrite}). Walks the range's key nodes and their chains; safe for the
     * writer and for readers (acquire loads, as a search).
     */
    long bytesBelow(byte[] begin, byte[] end, long sequence, int perEntry) {
        MemKey to = new MemKey(end, 0);
        long total = 0;
        for (long x = findGreaterOrEqual(new MemKey(begin, -1L), null); x != 0 && compareKey(x, to) < 0; x = next(x)) {
            boolean keyCounted = false;
            for (long v = newest(x); v != 0; v = older(x, v)) {
                long[] c = chunk((int) (v >>> 32));
                int p = (int) v;
                if (c[p + 1] >>> 8 < sequence) {
                    total += (c[p] & VALUE_LENGTH) + perEntry;
                    if (!keyCounted) {
                        long[] k = chunk((int) (x >>> 32));
                        total += k[(int) x] >>> 32;
                        keyCounted = true;
                    }
                }
            }
        }
        return total;
    }
}
