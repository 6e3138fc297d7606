package io.bloomkv.kafka;

import java.util.Arrays;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.TimeWindow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys of a window store, byte for byte Kafka's {@code WindowKeySchema} (so a changelog written by
 * either store restores into the other):
 *
 * <pre>
 * +----------------------+---------------------------+---------------------+
 * | key bytes (variable) | window start (8, int64 BE) | seqnum (4, int32 BE) |
 * +----------------------+---------------------------+---------------------+
 * </pre>
 *
 * The seqnum is 0 unless the store retains duplicates (then each put takes the next one, 31 bits,
 * wrapping). All keys of one user key are adjacent and in time order for non-negative timestamps, so a
 * single-key time-range fetch is one bounded scan from {@code key+from+0} to {@code key+to+MAX} per segment.
 */
final class WindowKeyLayout implements SegmentedKeySchema {
    private static final Logger LOG = LoggerFactory.getLogger(WindowKeyLayout.class);
    static final int TIMESTAMP_SIZE = 8;
    static final int SEQNUM_SIZE = 4;
    static final int SUFFIX_SIZE = TIMESTAMP_SIZE + SEQNUM_SIZE;
    private static final byte[] MIN_SUFFIX = new byte[SUFFIX_SIZE];

    static final WindowKeyLayout INSTANCE = new WindowKeyLayout();

    private WindowKeyLayout() {}

    static byte[] toStoreKey(byte[] key, long timestamp, int seqnum) {
        return toStoreKey(0, key, timestamp, seqnum);
    }

    /**
     * The composite key behind {@code gap} zero bytes, in one array: {@code gap = Segment.PREFIX_SIZE} leaves room for
     * the segment prefix the store fills in ({@link SegmentedStore#putStored}), so a put or get copies the key once.
     */
    static byte[] toStoreKey(int gap, byte[] key, long timestamp, int seqnum) {
        return toStoreKey(null, gap, key, timestamp, seqnum);
    }

    /**
     * {@link #toStoreKey(int, byte[], long, int)} written into {@code reuse} when it has the length (else a new array;
     * the gap's bytes are left as they are): for a writer that reuses one array from put to put (the engine copies
     * the key it is given).
     */
    static byte[] toStoreKey(byte[] reuse, int gap, byte[] key, long timestamp, int seqnum) {
        int length = gap + key.length + SUFFIX_SIZE;
        byte[] out = reuse != null && reuse.length == length ? reuse : new byte[length];
        System.arraycopy(key, 0, out, gap, key.length);
        BigEndian.putLong(out, gap + key.length, timestamp);
        BigEndian.putInt(out, gap + key.length + TIMESTAMP_SIZE, seqnum);
        return out;
    }

    static byte[] extractKeyBytes(byte[] storeKey) {
        return Arrays.copyOf(storeKey, storeKey.length - SUFFIX_SIZE);
    }

    /** The window start of a composite key (also of a stored key: the suffix is read from the end). */
    static long extractTimestamp(byte[] storeKey) {
        return BigEndian.getLong(storeKey, storeKey.length - SUFFIX_SIZE);
    }

    static int extractSeqnum(byte[] storeKey) {
        return BigEndian.getInt(storeKey, storeKey.length - SEQNUM_SIZE);
    }

    /** The windowed key of a stored key: window [start, start + windowSize), the end capped at Long.MAX_VALUE. */
    static Windowed<Bytes> windowedKey(byte[] storeKey, long windowSize) {
        long start = extractTimestamp(storeKey);
        long end = start + windowSize;
        if (end < 0) {
            LOG.warn("Warning: window end time was truncated to Long.MAX");
            end = Long.MAX_VALUE;
        }
        return new Windowed<>(Bytes.wrap(extractKeyBytes(storeKey)), new TimeWindow(start, end));
    }

    @Override
    public long segmentTimestamp(byte[] storeKey) {
        return extractTimestamp(storeKey);
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
        byte[] maxSuffix = new byte[SUFFIX_SIZE];
        BigEndian.putLong(maxSuffix, 0, to);
        BigEndian.putInt(maxSuffix, TIMESTAMP_SIZE, Integer.MAX_VALUE);
        return KeyRanges.upperRange(key, maxSuffix);
    }

    @Override
    public byte[] lowerRangeFixedSize(Bytes key, long from) {
        return toStoreKey(key.get(), Math.max(0, from), 0);
    }

    @Override
    public byte[] upperRangeFixedSize(Bytes key, long to) {
        return toStoreKey(key.get(), to, Integer.MAX_VALUE);
    }

    @Override
    public boolean matches(byte[] storeKey, Bytes keyFrom, Bytes keyTo, long from, long to) {
        long time = extractTimestamp(storeKey);
        if (time < from || time > to) {
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
        return to;
    }

    @Override
    public boolean emptyWhenToBeforeFrom() {
        return true;
    }
}
