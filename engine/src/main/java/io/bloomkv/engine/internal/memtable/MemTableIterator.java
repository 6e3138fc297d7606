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
    /** The current entry's address, 0 when not valid. */
    private long current;
    /** The array {@link #lendKey} refills while keys keep its length (a store's keys mostly share one length). */
    private byte[] lent;

    MemTableIterator(MemSkipList list) {
        this.list = list;
    }

    @Override
    public boolean valid() {
        return current != 0;
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
        current = list.next(node());
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
        current = list.findLessThan(list.key(node()));
    }

    /** The current node. @throws NoSuchElementException when the iterator is not valid */
    private long node() {
        long c = current;
        if (c == 0) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return c;
    }

    @Override
    public byte[] key() {
        return list.encodedKey(node());
    }

    @Override
    public byte[] lendKey() {
        byte[] k = list.encodedKey(node(), lent);
        lent = k;
        return k;
    }

    @Override
    public byte[] value() {
        return list.value(node());
    }

    @Override
    public void close() {
        current = 0;
    }
}
