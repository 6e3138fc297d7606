package io.bloomkv.kafka;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.DbIterator;
import java.util.NoSuchElementException;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * A {@link KeyValueIterator} over a bloomkv {@link DbIterator}, forward or backward within the bounds
 * the iterator was opened with. It reads the store as of its creation (a consistent view: later
 * writes are not seen and never cause a {@code ConcurrentModificationException}). It must be closed;
 * closing the store closes it, after which every call but {@link #close()} throws
 * {@link InvalidStateStoreException}.
 */
final class BloomKvIterator implements KeyValueIterator<Bytes, byte[]> {
    private final BloomKvStore store;
    private final DbIterator it;
    private final boolean forward;
    private volatile boolean closed;

    /** Takes ownership of {@code it} and positions it at the first entry of the direction. */
    BloomKvIterator(BloomKvStore store, DbIterator it, boolean forward) {
        this.store = store;
        this.it = it;
        this.forward = forward;
        try {
            if (forward) {
                it.seekToFirst();
            } else {
                it.seekToLast();
            }
        } catch (BloomKvException e) {
            it.close();
            throw new ProcessorStateException("store " + store.name() + ": iterator failed", e);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new InvalidStateStoreException("bloomkv iterator for store " + store.name() + " has closed");
        }
    }

    @Override
    public boolean hasNext() {
        checkOpen();
        try {
            return it.valid();
        } catch (BloomKvException e) {
            throw translate(e);
        }
    }

    @Override
    public KeyValue<Bytes, byte[]> next() {
        checkOpen();
        try {
            if (!it.valid()) {
                throw new NoSuchElementException("no more entries in store " + store.name());
            }
            KeyValue<Bytes, byte[]> kv = KeyValue.pair(StoreKeys.decode(it.key()), it.value());
            if (forward) {
                it.next();
            } else {
                it.prev();
            }
            return kv;
        } catch (BloomKvException e) {
            throw translate(e);
        }
    }

    @Override
    public Bytes peekNextKey() {
        checkOpen();
        try {
            if (!it.valid()) {
                throw new NoSuchElementException("no more entries in store " + store.name());
            }
            return StoreKeys.decode(it.key());
        } catch (BloomKvException e) {
            throw translate(e);
        }
    }

    private RuntimeException translate(BloomKvException e) {
        if (closed || !store.isOpen()) {
            return new InvalidStateStoreException("bloomkv iterator for store " + store.name() + " has closed");
        }
        return new ProcessorStateException("store " + store.name() + ": iterator failed", e);
    }

    /** Idempotent; also after the store closed. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            it.close();
        } finally {
            store.iteratorClosed(this);
        }
    }
}
