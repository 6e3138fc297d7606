package io.bloomkv.kafka;

import java.nio.ByteBuffer;
import org.apache.kafka.common.utils.Bytes;

/**
 * Range bounds over composite keys {@code [key bytes][fixed-size suffix]} whose key part has no fixed
 * length (Kafka's {@code OrderedBytes}, used by its window and session key schemas). With variable-length
 * keys, the composite keys of different user keys interleave in byte order ("a"+suffix may sort after
 * "a\u0001"+suffix), so a key-range scan reads a superset and filters (see {@link SegmentedKeySchema#matches}).
 * The bounds are Kafka's, byte for byte, so a scan visits the same entries in the same order as Kafka's store.
 */
final class KeyRanges {
    /** Kafka assumes keys of at least one byte when it shortens an upper bound. */
    private static final int MIN_KEY_LENGTH = 1;

    private KeyRanges() {}

    /**
     * Inclusive upper bound of the composite keys whose key part is at most {@code key} and whose suffix is
     * at most {@code maxSuffix}: the key's bytes up to the first byte smaller than the suffix's first byte,
     * then the suffix (Kafka's {@code OrderedBytes.upperRange}).
     */
    static byte[] upperRange(Bytes key, byte[] maxSuffix) {
        byte[] bytes = key.get();
        ByteBuffer rangeEnd = ByteBuffer.allocate(bytes.length + maxSuffix.length);
        int firstSuffixByte = maxSuffix[0] & 0xFF;
        if (firstSuffixByte == 0) {
            return rangeEnd.put(bytes).put(maxSuffix).array();
        }
        int i = 0;
        while (i < bytes.length && (i < MIN_KEY_LENGTH || (bytes[i] & 0xFF) >= firstSuffixByte)) {
            rangeEnd.put(bytes[i++]);
        }
        rangeEnd.put(maxSuffix);
        rangeEnd.flip();
        byte[] res = new byte[rangeEnd.remaining()];
        rangeEnd.get(res);
        return res;
    }

    /** Inclusive lower bound: the key then the smallest suffix (Kafka's {@code OrderedBytes.lowerRange}). */
    static byte[] lowerRange(Bytes key, byte[] minSuffix) {
        byte[] bytes = key.get();
        return ByteBuffer.allocate(bytes.length + minSuffix.length)
                .put(bytes)
                .put(minSuffix)
                .array();
    }
}
