package io.bloomkv.kafka;

import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Views of an iterator over stored composite keys (Kafka's {@code WindowStoreIteratorWrapper} and
 * {@code WrappedSessionStoreIterator}): the timestamps of one key's windows, or windowed keys. Closing a
 * view closes the iterator under it.
 */
final class WindowedIterators {
    private WindowedIterators() {}

    /** The window start timestamps and values of one key's windows. */
    static WindowStoreIterator<byte[]> values(KeyValueIterator<Bytes, byte[]> bytes) {
        return new WindowStoreIterator<>() {
            @Override
            public Long peekNextKey() {
                return WindowKeyLayout.extractTimestamp(bytes.peekNextKey().get());
            }

            @Override
            public boolean hasNext() {
                return bytes.hasNext();
            }

            @Override
            public KeyValue<Long, byte[]> next() {
                KeyValue<Bytes, byte[]> next = bytes.next();
                return KeyValue.pair(WindowKeyLayout.extractTimestamp(next.key.get()), next.value);
            }

            @Override
            public void close() {
                bytes.close();
            }
        };
    }

    /** Windowed keys of a window store: window [start, start + windowSize). */
    static KeyValueIterator<Windowed<Bytes>, byte[]> windows(KeyValueIterator<Bytes, byte[]> bytes, long windowSize) {
        return windowed(bytes, k -> WindowKeyLayout.windowedKey(k, windowSize));
    }

    /** Windowed keys of a session store: session [start, end]. */
    static KeyValueIterator<Windowed<Bytes>, byte[]> sessions(KeyValueIterator<Bytes, byte[]> bytes) {
        return windowed(bytes, SessionKeyLayout::windowedKey);
    }

    private static KeyValueIterator<Windowed<Bytes>, byte[]> windowed(
            KeyValueIterator<Bytes, byte[]> bytes, Function<byte[], Windowed<Bytes>> decode) {
        return new KeyValueIterator<>() {
            @Override
            public Windowed<Bytes> peekNextKey() {
                return decode.apply(bytes.peekNextKey().get());
            }

            @Override
            public boolean hasNext() {
                return bytes.hasNext();
            }

            @Override
            public KeyValue<Windowed<Bytes>, byte[]> next() {
                KeyValue<Bytes, byte[]> next = bytes.next();
                return KeyValue.pair(decode.apply(next.key.get()), next.value);
            }

            @Override
            public void close() {
                bytes.close();
            }
        };
    }
}
