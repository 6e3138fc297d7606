package io.bloomkv.kafka;

import java.util.Arrays;

/**
 * The value of a key's row in the latest-value database of a {@link BloomKvVersionedStore}: its newest version,
 * as Kafka's {@code RocksDBVersionedStore.LatestValueFormatter} lays it out.
 *
 * <pre>
 * offset  width  field
 * 0       8      validFrom of the version (big-endian)
 * 8       n      the value's bytes (never a tombstone: a deleted key has no row here)
 * </pre>
 */
final class VersionedLatestValue {
    private static final int TIMESTAMP_SIZE = 8;

    private VersionedLatestValue() {}

    static long timestamp(byte[] raw) {
        return BigEndian.getLong(raw, 0);
    }

    static byte[] value(byte[] raw) {
        return Arrays.copyOfRange(raw, TIMESTAMP_SIZE, raw.length);
    }

    static byte[] encode(byte[] value, long timestamp) {
        if (value == null) {
            throw new IllegalStateException("Cannot store tombstone in latest value");
        }
        byte[] out = new byte[TIMESTAMP_SIZE + value.length];
        BigEndian.putLong(out, 0, timestamp);
        System.arraycopy(value, 0, out, TIMESTAMP_SIZE, value.length);
        return out;
    }
}
