package io.bloomkv.engine.internal.memtable;

import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentNavigableMap;

/**
 * {@link InternalIterator} over a memtable's skip list (weakly consistent). Returns copies. Forward
 * steps use a skip-list cursor; a backward step is a {@code lowerEntry} search (O(log n)), after
 * which the next forward step re-opens the cursor after the current key.
 */
final class MemTableIterator implements InternalIterator {
    private final ConcurrentNavigableMap<MemKey, byte[]> map;
    /** The forward cursor just past {@link #current}, or null when it must be re-opened there. */
    private Iterator<Map.Entry<MemKey, byte[]>> it;
    private Map.Entry<MemKey, byte[]> current;

    MemTableIterator(ConcurrentNavigableMap<MemKey, byte[]> map) {
        this.map = map;
    }

    @Override
    public boolean valid() {
        return current != null;
    }

    @Override
    public void seekToFirst() {
        it = map.entrySet().iterator();
        advance();
    }

    @Override
    public void seek(byte[] target) {
        it = map.tailMap(MemKey.of(target), true).entrySet().iterator();
        advance();
    }

    @Override
    public void next() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        if (it == null) {
            it = map.tailMap(current.getKey(), false).entrySet().iterator();
        }
        advance();
    }

    @Override
    public void seekToLast() {
        current = map.lastEntry();
        it = null;
    }

    @Override
    public void seekForPrev(byte[] target) {
        current = map.floorEntry(MemKey.of(target));
        it = null;
    }

    @Override
    public void prev() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        current = map.lowerEntry(current.getKey());
        it = null;
    }

    private void advance() {
        current = it.hasNext() ? it.next() : null;
    }

    @Override
    public byte[] key() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return current.getKey().encode();
    }

    @Override
    public byte[] value() {
        if (current == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return current.getKey().value(current.getValue());
    }

    @Override
    public void close() {
        current = null;
        it = null;
    }
}
