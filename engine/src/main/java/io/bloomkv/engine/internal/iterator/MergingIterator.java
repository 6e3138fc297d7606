package io.bloomkv.engine.internal.iterator;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.Comparator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;

/**
 * Merges sorted {@link InternalIterator}s into one, in {@link InternalKey#COMPARATOR} order, in both
 * directions. Equal internal keys (which a consistent database never holds) come from the child
 * listed first going forward. Closing it closes every child.
 *
 * <p>Direction switches as in LevelDB's {@code MergingIterator}: going forward every child is at its
 * first entry after the current key (a min-heap picks the smallest); going backward, at its last
 * entry before it (a max-heap picks the largest). A switch re-seeks every child but the current one.
 *
 * <p>Made with {@link #lendingKeys}, it takes each child's key with {@link InternalIterator#lendKey()}: a child's key
 * is then only valid until that child moves, which is safe inside the merge (a child in the heap does not move; the
 * current one leaves the heap before it moves), and {@link #keyNoCopy()} is valid until this iterator's next move
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

    private static final Comparator<Child> MIN_FIRST = (a, b) -> {
        int c = InternalKey.COMPARATOR.compare(a.key, b.key);
        return c != 0 ? c : Integer.compare(a.index, b.index);
    };
    private static final Comparator<Child> MAX_FIRST = (a, b) -> {
        int c = InternalKey.COMPARATOR.compare(b.key, a.key);
        return c != 0 ? c : Integer.compare(b.index, a.index);
    };

    /** An array, not a list: the loops over the children (every seek) allocate no iterator. */
    private final Child[] children;

    private final PriorityQueue<Child> minHeap;
    /** Made on the first backward move: most scans (a store's fetch) never take one. */
    private PriorityQueue<Child> maxHeap;
    /** The heap of the current direction: {@link #minHeap} forward, {@link #maxHeap} backward. */
    private PriorityQueue<Child> heap;

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
        minHeap = new PriorityQueue<>(Math.max(1, children.length), MIN_FIRST);
        heap = minHeap;
    }

    /** Loads every child except {@code skip} into the heap of the direction given. */
    private void fillHeap(boolean forwardDirection, Child skip) {
        forward = forwardDirection;
        minHeap.clear();
        if (maxHeap != null) {
            maxHeap.clear();
        } else if (!forwardDirection) {
            maxHeap = new PriorityQueue<>(Math.max(1, children.length), MAX_FIRST);
        }
        heap = forwardDirection ? minHeap : maxHeap;
        for (Child c : children) {
            if (c == skip) {
                continue;
            }
            c.load();
            if (c.key != null) {
                heap.add(c);
            }
        }
    }

    private void rebuild(boolean forwardDirection) {
        fillHeap(forwardDirection, null);
        current = heap.poll();
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
        if (current.key != null) {
            heap.add(current);
        }
        current = heap.poll();
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
        if (current.key != null) {
            heap.add(current);
        }
        current = heap.poll();
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
     * the next move or seek only; otherwise it is never reused.
     */
    public byte[] keyNoCopy() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return current.key;
    }

    @Override
    public byte[] value() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return current.it.value();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        current = null;
        minHeap.clear();
        if (maxHeap != null) {
            maxHeap.clear();
        }
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
