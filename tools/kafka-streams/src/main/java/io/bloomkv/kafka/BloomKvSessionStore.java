package io.bloomkv.kafka;

import io.bloomkv.engine.Options;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.SessionStore;

/**
 * A persistent {@code SessionStore<Bytes, byte[]>} on bloomkv, the counterpart of Kafka Streams'
 * built-in persistent session store (made by {@link BloomKvStores#persistentSessionStore}): sessions are stored
 * under {@link SessionKeyLayout} keys in time {@link Segments} by their end time, all segments key ranges of one
 * bloomkv database; expired segments are dropped whole by one range tombstone.
 *
 * <p>Contract, as {@link SessionStore} documents it and Kafka's store behaves: {@code findSessions(key,
 * earliestSessionEndTime, latestSessionStartTime)} returns the sessions with end >= earliestSessionEndTime
 * and start <= latestSessionStartTime, segment by segment (oldest end first), each in stored key order;
 * {@code fetchSession(key, start, end)} the aggregate of exactly that session; a null aggregate on put
 * deletes; {@code remove} deletes (without creating a segment); sessions ending before observed stream time
 * minus retention are never returned and their puts are dropped (counted in {@code dropped-records});
 * {@code findSessions(earliestSessionEndTime, latestSessionEndTime)} (the DSL's emit-on-window-close) returns
 * every session ending in that range in end-time order. IQv2: {@code WindowRangeQuery.withKey}.
 * Use after close throws {@link InvalidStateStoreException}.
 */
public class BloomKvSessionStore extends SegmentedBytesStoreBase implements SessionStore<Bytes, byte[]> {
    /** The metrics scope of session stores (Kafka's is {@code rocksdb-session}). */
    static final String METRICS_SCOPE = "bloomkv-session";

    /** The array of the last put or remove's stored key ({@link #writeKey(Windowed)}). */
    private byte[] writeKey;

    BloomKvSessionStore(String name, long retentionPeriod, long segmentInterval, Options options) {
        super(new SegmentedStore(
                name, METRICS_SCOPE, retentionPeriod, segmentInterval, SessionKeyLayout.INSTANCE, options));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(
            Bytes key, long earliestSessionEndTime, long latestSessionStartTime) {
        Objects.requireNonNull(key, "key cannot be null");
        return WindowedIterators.sessions(bytes.fetch(key, earliestSessionEndTime, latestSessionStartTime, true));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFindSessions(
            Bytes key, long earliestSessionEndTime, long latestSessionStartTime) {
        Objects.requireNonNull(key, "key cannot be null");
        return WindowedIterators.sessions(bytes.fetch(key, earliestSessionEndTime, latestSessionStartTime, false));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(
            Bytes keyFrom, Bytes keyTo, long earliestSessionEndTime, long latestSessionStartTime) {
        return WindowedIterators.sessions(
                bytes.fetch(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, true));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFindSessions(
            Bytes keyFrom, Bytes keyTo, long earliestSessionEndTime, long latestSessionStartTime) {
        return WindowedIterators.sessions(
                bytes.fetch(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, false));
    }

    /**
     * Every session whose end is in [earliestSessionEndTime, latestSessionEndTime] held by a live segment, by end
     * time, then start, then key (the order of Kafka's time-ordered session store, which emit-on-window-close uses;
     * like that store's, this scan applies segment expiry only, no per-record retention floor).
     */
    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(
            long earliestSessionEndTime, long latestSessionEndTime) {
        if (latestSessionEndTime < earliestSessionEndTime) {
            return EmptyKeyValueIterator.instance();
        }
        return WindowedIterators.sessions(new TimeOrderedIterator(
                bytes,
                bytes.segmentsFor(earliestSessionEndTime, latestSessionEndTime, true),
                k -> {
                    long end = SessionKeyLayout.extractEnd(k);
                    return end >= earliestSessionEndTime && end <= latestSessionEndTime;
                },
                BloomKvSessionStore::timeFirst,
                true));
    }

    /** Kafka's time-first session key: {@code [end (8)][start (8)][key]}. */
    private static byte[] timeFirst(byte[] storeKey) {
        int keyLength = storeKey.length - SessionKeyLayout.SUFFIX_SIZE;
        return ByteBuffer.allocate(storeKey.length)
                .putLong(SessionKeyLayout.extractEnd(storeKey))
                .putLong(SessionKeyLayout.extractStart(storeKey))
                .put(storeKey, 0, keyLength)
                .array();
    }

    @Override
    public byte[] fetchSession(Bytes key, long sessionStartTime, long sessionEndTime) {
        Objects.requireNonNull(key, "key cannot be null");
        return bytes.getStored(
                SessionKeyLayout.toStoreKey(Segment.PREFIX_SIZE, key.get(), sessionStartTime, sessionEndTime));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes key) {
        return findSessions(key, 0, Long.MAX_VALUE);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(Bytes key) {
        return backwardFindSessions(key, 0, Long.MAX_VALUE);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes keyFrom, Bytes keyTo) {
        return findSessions(keyFrom, keyTo, 0, Long.MAX_VALUE);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(Bytes keyFrom, Bytes keyTo) {
        return backwardFindSessions(keyFrom, keyTo, 0, Long.MAX_VALUE);
    }

    @Override
    public synchronized void remove(Windowed<Bytes> sessionKey) {
        Objects.requireNonNull(sessionKey, "sessionKey cannot be null");
        Objects.requireNonNull(sessionKey.key(), "sessionKey.key() cannot be null");
        bytes.removeStored(writeKey(sessionKey));
    }

    @Override
    public synchronized void put(Windowed<Bytes> sessionKey, byte[] aggregate) {
        Objects.requireNonNull(sessionKey, "sessionKey cannot be null");
        Objects.requireNonNull(sessionKey.key(), "sessionKey.key() cannot be null");
        bytes.putStored(writeKey(sessionKey), aggregate);
    }

    /**
     * The stored key of a put or remove, in the array of the previous one when the length is the same (writes are
     * serialized by this store's lock; the engine copies the key into its write batch and nothing keeps the array).
     */
    private byte[] writeKey(Windowed<Bytes> sessionKey) {
        byte[] k = SessionKeyLayout.toStoreKey(
                writeKey,
                Segment.PREFIX_SIZE,
                sessionKey.key().get(),
                sessionKey.window().start(),
                sessionKey.window().end());
        writeKey = k;
        return k;
    }
}
