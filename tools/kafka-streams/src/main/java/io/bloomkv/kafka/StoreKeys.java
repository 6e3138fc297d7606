package io.bloomkv.kafka;

import java.util.Arrays;
import org.apache.kafka.common.utils.Bytes;

/**
 * How a Kafka key is stored: one format byte ({@link #PLAIN}) then the key's bytes (the store's own records use
 * {@link #META}). Kafka allows
 * empty keys (an empty string serializes to zero bytes) and the engine's keys are 1 byte or more;
 * a common first byte keeps the unsigned lexicographic order of the Kafka keys.
 */
final class StoreKeys {
    /** The format byte of every Kafka key. */
    static final byte PLAIN = 0;
    /**
     * The format byte of the store's own records (changelog offsets, IQv2 position: {@link StoreMetadata}): above
     * every Kafka key, and every range of Kafka keys ends before it, so no read of Kafka keys returns one.
     */
    static final byte META = 1;

    private StoreKeys() {}

    static byte[] encode(byte[] kafkaKey) {
        byte[] out = new byte[kafkaKey.length + 1];
        out[0] = PLAIN;
        System.arraycopy(kafkaKey, 0, out, 1, kafkaKey.length);
        return out;
    }

    static byte[] encode(Bytes kafkaKey) {
        return encode(kafkaKey.get());
    }

    static Bytes decode(byte[] storeKey) {
        return Bytes.wrap(Arrays.copyOfRange(storeKey, 1, storeKey.length));
    }

    /** The stored key right after {@code kafkaKey} (its exclusive upper bound as an inclusive one). */
    static byte[] encodeSuccessor(byte[] kafkaKey) {
        byte[] out = new byte[kafkaKey.length + 2];
        out[0] = PLAIN;
        System.arraycopy(kafkaKey, 0, out, 1, kafkaKey.length);
        return out; // trailing 0x00: the smallest key greater than kafkaKey
    }

    /** Exclusive upper bound of the stored keys starting with {@code prefix}; null when there is none (all 0xFF). */
    static byte[] prefixEnd(byte[] prefix) {
        byte[] enc = encode(prefix);
        int i = enc.length - 1;
        while (i >= 1 && enc[i] == (byte) 0xFF) {
            i--;
        }
        if (i < 1) {
            // Every key with the prefix ends the PLAIN key space: bound at the next format byte.
            return new byte[] {(byte) (PLAIN + 1)};
        }
        byte[] end = Arrays.copyOf(enc, i + 1);
        end[i]++;
        return end;
    }
}
