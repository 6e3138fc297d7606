package io.bloomkv.engine.memtable;

import io.bloomkv.engine.table.InternalIterator;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentNavigableMap;

/** {@link InternalIterator} over a memtable's skip list (weakly consistent). Returns copies. */
final class MemTableIterator implements InternalIterator {
    private final ConcurrentNavigableMap<MemKey, byte[]> map;
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
        advance();
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
