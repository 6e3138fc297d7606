package io.bloomkv.kafka;

import java.util.NoSuchElementException;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;

/** An iterator with nothing in it (Kafka's {@code KeyValueIterators.emptyIterator()}); closing it is a no-op. */
final class EmptyKeyValueIterator<K, V> implements KeyValueIterator<K, V> {
    private static final EmptyKeyValueIterator<Object, Object> INSTANCE = new EmptyKeyValueIterator<>();

    @SuppressWarnings("unchecked")
    static <K, V> EmptyKeyValueIterator<K, V> instance() {
        return (EmptyKeyValueIterator<K, V>) INSTANCE;
    }

    @Override
    public boolean hasNext() {
        return false;
    }

    @Override
    public KeyValue<K, V> next() {
        throw new NoSuchElementException();
    }

    @Override
    public K peekNextKey() {
        throw new NoSuchElementException();
    }

    @Override
    public void close() {}
}
