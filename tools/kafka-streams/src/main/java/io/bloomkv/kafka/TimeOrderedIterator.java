package io.bloomkv.kafka;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * The entries of a time-range scan in time order (Kafka's time-ordered window and session stores, which the
 * DSL's emit-on-window-close aggregations use): segment after segment, and within a segment by the
 * time-first key Kafka's time-ordered schema stores (windows: {@code [start][key][seqnum]}; sessions: {@code [end][start][key]}), compared as bytes. Each
 * segment's matching entries are read and sorted when the iterator reaches it, so memory is one segment's
 * share of the range (an emit-on-window-close fetch asks for the windows closed since the last emission).
 */
final class TimeOrderedIterator implements KeyValueIterator<Bytes, byte[]> {
    private final SegmentedStore store;
    private final Iterator<Segment> segments;
    private final SegmentIterator.Filter filter;
    private final Function<byte[], byte[]> timeFirstKey;
    private final boolean forward;
    private List<KeyValue<Bytes, byte[]>> current = List.of();
    private int index;
    private boolean closed;

    /** {@code timeFirstKey}: a stored key rewritten time first, whose byte order is the order wanted. */
    TimeOrderedIterator(
            SegmentedStore store,
            List<Segment> segments,
            SegmentIterator.Filter filter,
            Function<byte[], byte[]> timeFirstKey,
            boolean forward) {
        this.store = store;
        this.segments = segments.iterator();
        this.filter = filter;
        this.timeFirstKey = timeFirstKey;
        this.forward = forward;
    }

    private boolean advance() {
        if (closed || !store.isOpen()) {
            throw new InvalidStateStoreException("bloomkv iterator for store " + store.name() + " has closed");
        }
        while (index >= current.size()) {
            if (!segments.hasNext()) {
                return false;
            }
            Segment segment = segments.next();
            if (!segment.isOpen()) {
                continue;
            }
            List<byte[][]> sorted = new ArrayList<>();
            try (SegmentIterator it = store.scan(segment, filter)) {
                while (it.hasNext()) {
                    KeyValue<Bytes, byte[]> kv = it.next();
                    sorted.add(new byte[][] {timeFirstKey.apply(kv.key.get()), kv.key.get(), kv.value});
                }
            }
            Comparator<byte[][]> order = (a, b) -> Arrays.compareUnsigned(a[0], b[0]);
            sorted.sort(forward ? order : order.reversed());
            List<KeyValue<Bytes, byte[]>> next = new ArrayList<>(sorted.size());
            for (byte[][] e : sorted) {
                next.add(KeyValue.pair(Bytes.wrap(e[1]), e[2]));
            }
            current = next;
            index = 0;
        }
        return true;
    }

    @Override
    public boolean hasNext() {
        return advance();
    }

    @Override
    public KeyValue<Bytes, byte[]> next() {
        if (!advance()) {
            throw new NoSuchElementException();
        }
        return current.get(index++);
    }

    @Override
    public Bytes peekNextKey() {
        if (!advance()) {
            throw new NoSuchElementException();
        }
        return current.get(index).key;
    }

    @Override
    public void close() {
        closed = true;
        current = List.of();
    }
}
