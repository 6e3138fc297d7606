package io.bloomkv.kafka;

import java.util.Arrays;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;

/**
 * The keys of a session store, byte for byte Kafka's {@code SessionKeySchema}:
 *
 * <pre>
 * +----------------------+-------------------------+---------------------------+
 * | key bytes (variable) | session end (8, int64 BE) | session start (8, int64 BE) |
 * +----------------------+-------------------------+---------------------------+
 * </pre>
 *
 * A session lives in the segment of its end time. Sessions that can overlap [earliestSessionEndTime,
 * latestSessionStartTime] lie between {@code key+ESET+0} and {@code key+MAX+LSST} (end first, then start).
 */
final class SessionKeyLayout implements SegmentedKeySchema {
    static final int TIMESTAMP_SIZE = 8;
    static final int SUFFIX_SIZE = 2 * TIMESTAMP_SIZE;
    private static final byte[] MIN_SUFFIX = new byte[SUFFIX_SIZE];

    static final SessionKeyLayout INSTANCE = new SessionKeyLayout();

    private SessionKeyLayout() {}

    static byte[] toStoreKey(byte[] key, long startTime, long endTime) {
        return toStoreKey(0, key, startTime, endTime);
    }

    /**
     * The composite key behind {@code gap} zero bytes, in one array: {@code gap = Segment.PREFIX_SIZE} leaves room for
     * the segment prefix the store fills in ({@link SegmentedStore#putStored}), so a put or get copies the key once.
     */
    static byte[] toStoreKey(int gap, byte[] key, long startTime, long endTime) {
        return toStoreKey(null, gap, key, startTime, endTime);
    }

    /** {@link #toStoreKey(int, byte[], long, long)} written into {@code reuse} when it has the length (else new). */
    static byte[] toStoreKey(byte[] reuse, int gap, byte[] key, long startTime, long endTime) {
        int length = gap + key.length + SUFFIX_SIZE;
        byte[] out = reuse != null && reuse.length == length ? reuse : new byte[length];
        System.arraycopy(key, 0, out, gap, key.length);
        BigEndian.putLong(out, gap + key.length, endTime);
        BigEndian.putLong(out, gap + key.length + TIMESTAMP_SIZE, startTime);
        return out;
    }

    static byte[] toStoreKey(Windowed<Bytes> sessionKey) {
        return toStoreKey(0, sessionKey);
    }

    static byte[] toStoreKey(int gap, Windowed<Bytes> sessionKey) {
        return toStoreKey(
                gap,
                sessionKey.key().get(),
                sessionKey.window().start(),
                sessionKey.window().end());
    }

    static byte[] extractKeyBytes(byte[] storeKey) {
        return Arrays.copyOf(storeKey, storeKey.length - SUFFIX_SIZE);
    }

    /** The session end of a composite key (also of a stored key: the suffix is read from the end). */
    static long extractEnd(byte[] storeKey) {
        return BigEndian.getLong(storeKey, storeKey.length - SUFFIX_SIZE);
    }

    static long extractStart(byte[] storeKey) {
        return BigEndian.getLong(storeKey, storeKey.length - TIMESTAMP_SIZE);
    }

    static Windowed<Bytes> windowedKey(byte[] storeKey) {
        return new Windowed<>(
                Bytes.wrap(extractKeyBytes(storeKey)), new SessionWindow(extractStart(storeKey), extractEnd(storeKey)));
    }

    @Override
    public long segmentTimestamp(byte[] storeKey) {
        return extractEnd(storeKey);
    }

    @Override
    public byte[] lowerRange(Bytes key, long from) {
        return key == null ? null : KeyRanges.lowerRange(key, MIN_SUFFIX);
    }

    @Override
    public byte[] upperRange(Bytes key, long to) {
        if (key == null) {
            return null;
        }
        // The end can be as large as possible (it is at least the start); then the start.
        byte[] maxSuffix = new byte[SUFFIX_SIZE];
        BigEndian.putLong(maxSuffix, 0, Long.MAX_VALUE);
        BigEndian.putLong(maxSuffix, TIMESTAMP_SIZE, to);
        return KeyRanges.upperRange(key, maxSuffix);
    }

    @Override
    public byte[] lowerRangeFixedSize(Bytes key, long from) {
        return toStoreKey(key.get(), 0, Math.max(0, from));
    }

    /**
     * Kafka's {@code SessionKeySchema} builds this bound as the session window {@code [to, Long.MAX_VALUE]}, so a
     * single-key {@code findSessions} with a negative latestSessionStartTime throws the window's exception.
     */
    @Override
    public byte[] upperRangeFixedSize(Bytes key, long to) {
        if (to < 0) {
            throw new IllegalArgumentException("Window startMs time cannot be negative.");
        }
        return toStoreKey(key.get(), to, Long.MAX_VALUE);
    }

    @Override
    public boolean matches(byte[] storeKey, Bytes keyFrom, Bytes keyTo, long from, long to) {
        if (extractEnd(storeKey) < from || extractStart(storeKey) > to) {
            return false;
        }
        int keyLength = storeKey.length - SUFFIX_SIZE;
        return (keyFrom == null
                        || Arrays.compareUnsigned(storeKey, 0, keyLength, keyFrom.get(), 0, keyFrom.get().length) >= 0)
                && (keyTo == null
                        || Arrays.compareUnsigned(storeKey, 0, keyLength, keyTo.get(), 0, keyTo.get().length) <= 0);
    }

    @Override
    public long searchUpperTime(long to) {
        return Long.MAX_VALUE;
    }

    @Override
    public boolean emptyWhenToBeforeFrom() {
        return false;
    }
}
