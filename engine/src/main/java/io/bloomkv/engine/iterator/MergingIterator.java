package io.bloomkv.engine.iterator;

import io.bloomkv.engine.InternalKey;
import io.bloomkv.engine.table.InternalIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;

/**
 * Merges sorted {@link InternalIterator}s into one, in {@link InternalKey#COMPARATOR} order. Equal
 * internal keys (which a consistent database never holds) come from the child listed first.
 * Closing it closes every child.
 */
public final class MergingIterator implements InternalIterator {
    private static final class Child {
        final InternalIterator it;
        final int index;
        byte[] key;

        Child(InternalIterator it, int index) {
            this.it = it;
            this.index = index;
        }

        void load() {
            key = it.valid() ? it.key() : null;
        }
    }

    private final List<Child> children = new ArrayList<>();
    private final PriorityQueue<Child> heap;
    private Child current;
    private boolean closed;

    public MergingIterator(List<? extends InternalIterator> iterators) {
        for (InternalIterator it : iterators) {
            children.add(new Child(it, children.size()));
        }
        heap = new PriorityQueue<>(Math.max(1, children.size()), (a, b) -> {
            int c = InternalKey.COMPARATOR.compare(a.key, b.key);
            return c != 0 ? c : Integer.compare(a.index, b.index);
        });
    }

    private void rebuild() {
        heap.clear();
        for (Child c : children) {
            c.load();
            if (c.key != null) {
                heap.add(c);
            }
        }
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
        rebuild();
    }

    @Override
    public void seek(byte[] target) {
        checkOpen();
        for (Child c : children) {
            c.it.seek(target);
        }
        rebuild();
    }

    @Override
    public void next() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        current.it.next();
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

    /** The current key without a copy; the caller must not modify it. */
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
        heap.clear();
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
