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
 * The stored entries of a fetch, segment after segment (oldest first forward, newest first backward),
 * each segment scanned over [{@code from}, {@code to}] (composite keys, within the segment's key range of the
 * store's database) in its key order and filtered by the schema
 * (Kafka's {@code SegmentIterator} + {@code HasNextCondition}). A segment's scan opens when the iterator
 * reaches it and reads the segment as of that moment. A segment dropped by expiry meanwhile is skipped,
 * as Kafka skips a closed segment. Closing the store closes the iterator; then every call but
 * {@link #close()} throws {@link InvalidStateStoreException}.
 */
final class SegmentIterator implements KeyValueIterator<Bytes, byte[]> {
    /** What a scan keeps: the fetch's key and time bounds. */
    interface Filter {
        boolean matches(byte[] storeKey);
    }

    private final SegmentedStore store;
    private final Segment[] segments;
    private int nextSegment;
    /**
     * The bounds as stored keys, {@code from} and {@code to + 0x00} (exclusive) behind room for the segment prefix,
     * made once per fetch: each segment's scan fills in its prefix ({@link Segment#iteratorStored}); null is open.
     */
    private final byte[] fromStored;

    private final byte[] toStoredExclusive;
    private final boolean forward;
    private final Filter filter;
    private Segment currentSegment;
    private DbIterator current;
    /** The composite key (prefix removed) of {@link #current}'s position, set by {@link #advance()}. */
    private byte[] currentKey;

    private volatile boolean closed;

    /** {@code segments} in the order to scan (the iterator owns the array); {@code from}, {@code to}: composite keys. */
    SegmentIterator(SegmentedStore store, Segment[] segments, byte[] from, byte[] to, boolean forward, Filter filter) {
        this.store = store;
        this.segments = segments;
        this.fromStored = from == null ? null : Segment.storedBound(from, 0);
        this.toStoredExclusive = to == null ? null : Segment.storedBound(to, 1);
        this.forward = forward;
        this.filter = filter;
    }

    private void checkOpen() {
        if (closed) {
            throw new InvalidStateStoreException("bloomkv iterator for store " + store.name() + " has closed");
        }
    }

    /** Positions {@link #current} on the next matching entry, moving across segments; false at the end. */
    private boolean advance() {
        while (true) {
            if (current != null) {
                try {
                    // A segment dropped by expiry meanwhile is skipped from here on, as Kafka skips a closed segment.
                    while (currentSegment.isOpen() && current.valid()) {
                        if (currentKey == null) {
                            byte[] stored = current.key();
                            if (Segment.isMarker(stored)) {
                                step();
                                continue;
                            }
                            currentKey = Segment.strip(stored);
                        }
                        if (filter.matches(currentKey)) {
                            return true;
                        }
                        step();
                    }
                } catch (BloomKvException e) {
                    if (currentSegment.isOpen() && store.isOpen()) {
                        throw new ProcessorStateException("store " + store.name() + ": iterator failed", e);
                    }
                    // The segment was dropped (expired) under the iterator: skip the rest of it, as Kafka does.
                }
                closeCurrent();
            }
            if (nextSegment == segments.length) {
                return false;
            }
            currentSegment = segments[nextSegment++];
            if (!currentSegment.isOpen()) {
                continue;
            }
            try {
                current = currentSegment.iteratorStored(fromStored, toStoredExclusive);
                if (forward) {
                    current.seekToFirst();
                } else {
                    current.seekToLast();
                }
            } catch (InvalidStateStoreException | BloomKvException e) {
                if (currentSegment.isOpen() && store.isOpen()) {
                    throw e instanceof BloomKvException be
                            ? new ProcessorStateException("store " + store.name() + ": iterator failed", be)
                            : (RuntimeException) e;
                }
                closeCurrent();
            }
        }
    }

    private void step() {
        currentKey = null;
        if (forward) {
            current.next();
        } else {
            current.prev();
        }
    }

    private void closeCurrent() {
        currentKey = null;
        if (current != null) {
            current.close();
            current = null;
        }
    }

    @Override
    public synchronized boolean hasNext() {
        checkOpen();
        return advance();
    }

    @Override
    public synchronized KeyValue<Bytes, byte[]> next() {
        checkOpen();
        if (!advance()) {
            throw new NoSuchElementException();
        }
        try {
            KeyValue<Bytes, byte[]> kv = KeyValue.pair(Bytes.wrap(currentKey), current.value());
            step();
            return kv;
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + store.name() + ": iterator failed", e);
        }
    }

    @Override
    public synchronized Bytes peekNextKey() {
        checkOpen();
        if (!advance()) {
            throw new NoSuchElementException();
        }
        try {
            return Bytes.wrap(currentKey);
        } catch (BloomKvException e) {
            throw new ProcessorStateException("store " + store.name() + ": iterator failed", e);
        }
    }

    /** Idempotent; also after the store closed. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            closeCurrent();
        } finally {
            store.iteratorClosed(this);
        }
    }
}
