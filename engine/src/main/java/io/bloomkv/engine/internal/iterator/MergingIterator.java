package io.bloomkv.engine.internal.iterator;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Merges sorted {@link InternalIterator}s into one, in {@link InternalKey#COMPARATOR} order, in both
 * directions. Equal internal keys (which a consistent database never holds) come from the child
 * listed first going forward. Closing it closes every child.
 *
 * <p>Direction switches as in LevelDB's {@code MergingIterator}: going forward every child is at its
 * first entry after the current key (a min-heap picks the smallest); going backward, at its last
 * entry before it (a max-heap picks the largest). A switch re-seeks every child but the current one.
 *
 * <p>The current child is kept out of the heap (RocksDB's {@code MergingIterator} keeps it at the top and replaces
 * it): a step advances it and compares its new key with the heap's top once; only when the top now comes first do the
 * two trade places, with one sift down. A run of entries from one child (a compaction's input that holds most of the
 * keys, a flush's single memtable) then costs one comparison per entry, where a general priority queue's re-insert
 * and removal cost two sifts.
 *
 * <p>Made with {@link #lendingKeys}, it takes each child's key with {@link InternalIterator#lendKey()}: a child's key
 * is then only valid until that child moves, which is safe inside the merge (a child in the heap does not move; the
 * current one is out of the heap when it moves), and {@link #keyNoCopy()} is valid until this iterator's next move
 * or seek. A scan past many entries (tombstones) then allocates no key per entry where the children lend theirs.
 */
public final class MergingIterator implements InternalIterator {
    private static final class Child {
        final InternalIterator it;
        final int index;
        final boolean lend;
        byte[] key;

        Child(InternalIterator it, int index, boolean lend) {
            this.it = it;
            this.index = index;
            this.lend = lend;
        }

        void load() {
            key = !it.valid() ? null : lend ? it.lendKey() : it.key();
        }

        /** The child's current key for a comparison that does not keep it. */
        byte[] peekKey() {
            return lend ? it.lendKey() : it.key();
        }
    }

    private final Child[] children;
    /** The heap of the children other than {@link #current} with a key: {@code heap[0, size)}, ordered by {@link #before}. */
    private final Child[] heap;

    private int size;
    /** The heap's direction: forward (a min-heap) or backward (a max-heap). */
    private boolean forward = true;

    private Child current;
    private boolean closed;

    /** Each child's keys are copies ({@link InternalIterator#key()}), and so is every key {@link #keyNoCopy()} gives. */
    public MergingIterator(List<? extends InternalIterator> iterators) {
        this(iterators, false);
    }

    /**
     * A merging iterator that borrows its children's keys ({@link InternalIterator#lendKey()}): {@link #keyNoCopy()}
     * is only valid until the next move or seek, so the caller copies whatever key it keeps beyond that.
     */
    public static MergingIterator lendingKeys(List<? extends InternalIterator> iterators) {
        return new MergingIterator(iterators, true);
    }

    private MergingIterator(List<? extends InternalIterator> iterators, boolean lend) {
        children = new Child[iterators.size()];
        for (int i = 0; i < children.length; i++) {
            children[i] = new Child(iterators.get(i), i, lend);
        }
        heap = new Child[children.length];
    }

    /**
     * Whether {@code a} comes out before {@code b} in the current direction: the smaller key forward, the larger
     * backward; on equal keys the child listed first forward, the one listed last backward.
     */
    private boolean before(Child a, Child b) {
        int c = InternalKey.compare(a.key, b.key);
        if (c == 0) {
            c = Integer.compare(a.index, b.index);
        }
        return forward ? c < 0 : c > 0;
    }

    private void push(Child c) {
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Child p = heap[parent];
            if (!before(c, p)) {
                break;
            }
            heap[i] = p;
            i = parent;
        }
        heap[i] = c;
    }

    /** Puts {@code c} at the root and sifts it down to its place. */
    private void siftDownFromRoot(Child c) {
        int i = 0;
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            Child smallest = heap[child];
            int right = child + 1;
            if (right < size && before(heap[right], smallest)) {
                child = right;
                smallest = heap[right];
            }
            if (!before(smallest, c)) {
                break;
            }
            heap[i] = smallest;
            i = child;
        }
        heap[i] = c;
    }

    /** Removes and returns the heap's top, or null when it is empty. */
    private Child pop() {
        if (size == 0) {
            return null;
        }
        Child top = heap[0];
        Child last = heap[--size];
        heap[size] = null;
        if (size > 0) {
            siftDownFromRoot(last);
        }
        return top;
    }

    /**
     * The child that comes next after {@link #current} moved and reloaded its key: it stays current while it still
     * comes before the heap's top (one comparison), else the top takes its place and it goes into the heap.
     */
    private void advanceCurrent() {
        Child c = current;
        if (c.key == null) {
            current = pop();
        } else if (size > 0 && before(heap[0], c)) {
            current = heap[0];
            siftDownFromRoot(c);
        }
    }

    private void clearHeap() {
        Arrays.fill(heap, 0, size, null);
        size = 0;
    }

    /** Loads every child except {@code skip} into the heap of the direction given. */
    private void fillHeap(boolean forwardDirection, Child skip) {
        clearHeap();
        forward = forwardDirection;
        for (Child c : children) {
            if (c == skip) {
                continue;
            }
            c.load();
            if (c.key != null) {
                push(c);
            }
        }
    }

    private void rebuild(boolean forwardDirection) {
        fillHeap(forwardDirection, null);
        current = pop();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("iterator is closed");
        }
    }

    @Override
    public boolean valid() {
        return current != null;
    }

    @Override
    public void seekToFirst() {
        checkOpen();
        for (Child c : children) {
            c.it.seekToFirst();
        }
        rebuild(true);
    }

    @Override
    public void seek(byte[] target) {
        checkOpen();
        for (Child c : children) {
            c.it.seek(target);
        }
        rebuild(true);
    }

    @Override
    public void seekToLast() {
        checkOpen();
        for (Child c : children) {
            c.it.seekToLast();
        }
        rebuild(false);
    }

    @Override
    public void seekForPrev(byte[] target) {
        checkOpen();
        for (Child c : children) {
            c.it.seekForPrev(target);
        }
        rebuild(false);
    }

    @Override
    public void next() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        if (!forward) {
            // Every other child is before the current key: put each at its first entry after it.
            byte[] k = current.key;
            for (Child c : children) {
                if (c != current) {
                    c.it.seek(k);
                    if (c.it.valid() && InternalKey.COMPARATOR.compare(c.peekKey(), k) == 0) {
                        c.it.next();
                    }
                }
            }
            fillHeap(true, current);
        }
        current.it.next();
        current.load();
        advanceCurrent();
    }

    @Override
    public void prev() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        if (forward) {
            // Every other child is after the current key: put each at its last entry before it.
            byte[] k = current.key;
            for (Child c : children) {
                if (c != current) {
                    c.it.seek(k);
                    if (c.it.valid()) {
                        c.it.prev();
                    } else {
                        c.it.seekToLast();
                    }
                }
            }
            fillHeap(false, current);
        }
        current.it.prev();
        current.load();
        advanceCurrent();
    }

    @Override
    public byte[] key() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return current.key.clone();
    }

    /**
     * The current key without a copy; the caller must not modify it. Made with {@link #lendingKeys}, it is valid until
     * the next move or seek only. Otherwise this iterator never reuses or changes the array (each is a child's
     * {@link InternalIterator#key()}, which belongs to it), so the caller may keep it after moving on: a compaction
     * hands it to the table writer as the entry's own key.
     */
    public byte[] keyNoCopy() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return current.key;
    }

    /** {@link #keyNoCopy()}: the current key without a copy, valid at least until this iterator's next move or seek. */
    @Override
    public byte[] lendKey() {
        return keyNoCopy();
    }

    @Override
    public byte[] value() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return current.it.value();
    }

    /** The current child's {@link InternalIterator#lendValue()}: valid until this iterator's next move or seek. */
    @Override
    public byte[] lendValue() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return current.it.lendValue();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        current = null;
        clearHeap();
        RuntimeException first = null;
        for (Child c : children) {
            try {
                c.it.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
