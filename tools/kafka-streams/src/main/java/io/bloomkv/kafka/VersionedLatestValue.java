package io.bloomkv.kafka;

import java.nio.ByteBuffer;

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
        return ByteBuffer.wrap(raw).getLong(0);
    }

    static byte[] value(byte[] raw) {
        byte[] v = new byte[raw.length - TIMESTAMP_SIZE];
        System.arraycopy(raw, TIMESTAMP_SIZE, v, 0, v.length);
        return v;
    }

    static byte[] encode(byte[] value, long timestamp) {
        if (value == null) {
            throw new IllegalStateException("Cannot store tombstone in latest value");
        }
        return ByteBuffer.allocate(TIMESTAMP_SIZE + value.length)
                .putLong(timestamp)
                .put(value)
                .array();
    }
}
