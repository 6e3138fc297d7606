package io.bloomkv.engine.internal.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The memtable's point index: a hash table from a user key's {@link io.bloomkv.bloom.Hashing#hash64} to its key node
 * in the {@link MemSkipList}, so a get or an update of a key the memtable holds costs a slot and the node (one or two
 * cache misses) instead of a skip-list search (RocksDB's hash-linked-list memtable does the same with a prefix hash).
 * Key nodes never move and a key has one node for the memtable's life, so a slot, once set, never changes.
 *
 * <p>Layout: open addressing with linear probing in a {@code long[]} whose length is a power of two. A slot is 0
 * (empty) or {@code tag << 35 | node}: {@code node} the key node's address packed into 35 bits (16 of chunk index,
 * {@link #WORD_BITS} of word: {@link MemSkipList#compact}), {@code tag} the top 29 bits of the key's hash. A key's
 * first slot is the top bits of {@code tag * φ}, so probing a table of any size needs only the tag: a lookup compares
 * tags before it reads a node (a node is read for 1 in 2^29 other keys), and growing rehashes the slots without
 * reading any node. The table grows (doubles) before it is more than {@link #MAX_LOAD} full.
 *
 * <p>Concurrency: one writer ({@link #add}, the memtable's single writer), any number of lock-free readers
 * ({@link #find}). The writer sets a slot with release semantics after the node is linked, and before the database
 * publishes the entry's sequence number; a reader loads slots with acquire semantics after it read that sequence
 * number. A grown table is filled completely before it is published (the volatile {@link #slots}); the writer adds to
 * the new table only. So a reader finds every key with a version at or below its sequence, whichever table it loaded
 * (a table is published before any key added after it; a reader loads the table after its sequence): "not found" is
 * an answer, not a cue to search. A key found may have no version old enough for the reader; the caller walks the
 * node's chain.
 */
final class MemIndex {
    /** Bits of a key node's word index within its chunk: chunks hold at most 2^19 words (MemSkipList.MAX_CHUNK). */
    static final int WORD_BITS = 19;

    private static final int NODE_BITS = 16 + WORD_BITS;
    private static final long NODE_MASK = (1L << NODE_BITS) - 1;
    /** Slots of a new index: small, as a memtable of a mostly idle store (a Kafka Streams segment) stays small. */
    static final int INITIAL_SLOTS = 64;
    /** Most slots: past this the table stops growing and only fills further (not reached by a heap-sized memtable). */
    private static final int MAX_SLOTS = 1 << 30;
    /** Fill (keys / slots) at which the table doubles: linear probing stays within a cache line or two. */
    static final double MAX_LOAD = 0.75;

    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final long PHI = 0x9E3779B97F4A7C15L;

    private final MemSkipList list;
    /** The table; replaced (never changed after) when it grows, so a reader's copy stays valid. */
    private volatile long[] slots = new long[INITIAL_SLOTS];
    /** Keys in the table (writer only). */
    private int count;

    MemIndex(MemSkipList list) {
        this.list = list;
    }

    /** The key node of {@code userKey} ({@code hash} its hash64), or 0 when the memtable has no entry of it. */
    long find(long hash, byte[] userKey) {
        long[] s = slots;
        int mask = s.length - 1;
        long tag = hash >>> NODE_BITS;
        int i = first(tag, s.length);
        while (true) {
            long e = (long) SLOT.getAcquire(s, i);
            if (e == 0) {
                return 0;
            }
            long difference = (e >>> NODE_BITS) ^ tag;
            long x = 0;
            if (difference == 0) {
                x = MemSkipList.expand(e & NODE_MASK);
                difference = list.keyDifference(x, userKey); // zero: the key; see keyDifference for the shape
            }
            if (difference == 0) {
                return x;
            }
            i = (i + 1) & mask;
        }
    }

    /** Adds key node {@code x} of a key ({@code hash} its hash64) the index does not hold. Writer only. */
    void add(long hash, long x) {
        long[] s = slots;
        if (count + 1 > MAX_LOAD * s.length && s.length < MAX_SLOTS) {
            s = grown(s);
            slots = s; // filled before it is published
        }
        if (count + 1 >= s.length) {
            throw new IllegalStateException("memtable index of " + s.length + " slots is full");
        }
        long compact = MemSkipList.compact(x);
        if (MemSkipList.expand(compact) != x) {
            throw new IllegalStateException("key node address " + Long.toHexString(x) + " does not fit the index");
        }
        long tag = hash >>> NODE_BITS;
        SLOT.setRelease(s, emptySlot(s, first(tag, s.length)), tag << NODE_BITS | compact);
        count++;
    }

    /** A table twice the size of {@code s} holding its slots (plain stores: it is not published yet). */
    private static long[] grown(long[] s) {
        long[] g = new long[2 * s.length];
        for (long e : s) {
            if (e != 0) {
                g[emptySlot(g, first(e >>> NODE_BITS, g.length))] = e;
            }
        }
        return g;
    }

    /** The first empty slot of {@code s} from {@code i} on (wrapping). */
    private static int emptySlot(long[] s, int i) {
        int mask = s.length - 1;
        while (s[i] != 0) {
            i = (i + 1) & mask;
        }
        return i;
    }

    /** The first slot a key of tag {@code tag} probes in a table of {@code length} slots (a power of two). */
    private static int first(long tag, int length) {
        return (int) ((tag * PHI) >>> (64 - Integer.numberOfTrailingZeros(length)));
    }

    /** Heap bytes of the table (array header included). */
    long memoryBytes() {
        return 16 + 8L * slots.length;
    }

    /** Keys in the index. Writer only (or after the writer stopped). */
    int count() {
        return count;
    }

    /** Slots of the current table. */
    int capacity() {
        return slots.length;
    }
}
