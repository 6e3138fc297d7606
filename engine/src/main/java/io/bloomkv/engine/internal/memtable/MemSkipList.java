package io.bloomkv.engine.internal.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The memtable's ordered index: LevelDB's skip list ({@code db/skiplist.h}) for one writer and any number of lock-free
 * readers. Each {@link Node} is the entry itself (a {@link MemKey} with its value's place and its forward links), so
 * a search step reads the next node and compares the key fields inside it: one dependent load per step, where
 * {@code ConcurrentSkipListMap} needs three (index, node, key object).
 *
 * <p>Publication: a new node's links are set before the node becomes reachable; each predecessor's link is then set
 * with release semantics, and readers load links with acquire semantics, so a reader that reaches a node sees all of
 * its fields. Entries are never removed or changed. {@link #insert} must not be called concurrently with itself (the
 * memtable's single writer).
 */
final class MemSkipList {
    /** LevelDB's: with branching 4, searches stay O(log n) up to ~16M entries, far above a memtable's. */
    static final int MAX_HEIGHT = 12;
    private static final int BRANCHING = 4;
    private static final VarHandle LINK = MethodHandles.arrayElementVarHandle(Node[].class);

    /** An entry: its key (the {@link MemKey} fields), the array holding its value, and its forward links. */
    static final class Node extends MemKey {
        /** The array the value lies in ({@link MemArena} chunk); null for the head. */
        final byte[] store;
        /** Forward links, level 0 first; elements are read and published through {@link #LINK}. */
        final Node[] next;

        Node(byte[] userKey, long trailer, byte[] store, int valueOffset, int valueLength, int height) {
            super(userKey, trailer, valueOffset, valueLength);
            this.store = store;
            this.next = new Node[height];
        }

        Node next(int level) {
            return (Node) LINK.getAcquire(next, level);
        }

        /** A copy of this entry's value. */
        byte[] value() {
            return value(store);
        }
    }

    private final Node head = new Node(new byte[0], 0, null, 0, 0, MAX_HEIGHT);
    /** Levels in use (1..MAX_HEIGHT); readers may see a new height before the head links of those levels: null ends a level. */
    private volatile int height = 1;
    /** The writer's random state (xorshift64*); only {@link #insert} touches it. */
    private long random = 0x9E3779B97F4A7C15L;
    /** The writer's scratch: the predecessor of the new node on each level. */
    private final Node[] prev = new Node[MAX_HEIGHT];

    /**
     * Adds an entry. Writer only. @throws IllegalStateException if an entry with the same user key and trailer is
     * already present (sequence numbers are unique, so this is a caller's bug)
     */
    void insert(byte[] userKey, long trailer, byte[] store, int valueOffset, int valueLength) {
        MemKey key = new MemKey(userKey, trailer);
        Node at = findGreaterOrEqual(key, prev);
        if (at != null && MemKey.compare(at, key) == 0) {
            throw new IllegalStateException("memtable already holds this internal key (sequence " + (trailer >>> 8) + ")");
        }
        int h = randomHeight();
        int current = height;
        if (h > current) {
            for (int i = current; i < h; i++) {
                prev[i] = head;
            }
            height = h; // readers that see it before the head links below treat the new levels as empty
        }
        Node x = new Node(userKey, trailer, store, valueOffset, valueLength, h);
        for (int i = 0; i < h; i++) {
            x.next[i] = prev[i].next(i); // plain: x is not reachable yet
        }
        for (int i = 0; i < h; i++) {
            LINK.setRelease(prev[i].next, i, x);
        }
    }

    /** The first entry >= {@code key}, or null; fills {@code prevOut} (when not null) with the predecessors per level. */
    Node findGreaterOrEqual(MemKey key, Node[] prevOut) {
        Node x = head;
        int level = height - 1;
        while (true) {
            Node n = x.next(level);
            if (n != null && MemKey.compare(n, key) < 0) {
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

    /** The last entry < {@code key}, or null. */
    Node findLessThan(MemKey key) {
        return findLast(key, false);
    }

    /** The last entry <= {@code key}, or null. */
    Node findLessOrEqual(MemKey key) {
        return findLast(key, true);
    }

    /** The last entry < {@code key} (or <= with {@code orEqual}; a null key: the last entry), or null. */
    private Node findLast(MemKey key, boolean orEqual) {
        Node x = head;
        int level = height - 1;
        while (true) {
            Node n = x.next(level);
            int c = n == null ? 1 : key == null ? -1 : MemKey.compare(n, key);
            if (c < 0 || (orEqual && c == 0)) {
                x = n;
            } else if (level == 0) {
                return x == head ? null : x;
            } else {
                level--;
            }
        }
    }

    /** The last entry, or null when empty. */
    Node findLast() {
        return findLast(null, false);
    }

    /** The first entry, or null when empty. */
    Node first() {
        return head.next(0);
    }

    boolean isEmpty() {
        return head.next(0) == null;
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
