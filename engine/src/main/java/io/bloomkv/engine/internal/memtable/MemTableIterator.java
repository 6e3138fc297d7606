package io.bloomkv.engine.internal.memtable;

import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.NoSuchElementException;

/**
 * {@link InternalIterator} over a memtable's {@link MemSkipList} (weakly consistent: entries added after the iterator
 * was made may or may not be seen; callers filter by sequence). Returns copies. A forward step follows the current
 * node's level-0 link; a backward step is a search for the last entry before the current key (O(log n)), as in
 * LevelDB's memtable iterator.
 */
final class MemTableIterator implements InternalIterator {
    private final MemSkipList list;
    private MemSkipList.Node current;

    MemTableIterator(MemSkipList list) {
        this.list = list;
    }

    @Override
    public boolean valid() {
        return current != null;
    }

    @Override
    public void seekToFirst() {
        current = list.first();
    }

    @Override
    public void seek(byte[] target) {
        current = list.findGreaterOrEqual(MemKey.of(target), null);
    }

    @Override
    public void next() {
        current = node().next(0);
    }

    @Override
    public void seekToLast() {
        current = list.findLast();
    }

    @Override
    public void seekForPrev(byte[] target) {
        current = list.findLessOrEqual(MemKey.of(target));
    }

    @Override
    public void prev() {
        current = list.findLessThan(node());
    }

    /** The current node. @throws NoSuchElementException when the iterator is not valid */
    private MemSkipList.Node node() {
        MemSkipList.Node c = current;
        if (c == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return c;
    }

    @Override
    public byte[] key() {
        return node().encode();
    }

    @Override
    public byte[] value() {
        return node().value();
    }

    @Override
    public void close() {
        current = null;
    }
}
