package io.bloomkv.engine.internal;

import io.bloomkv.engine.internal.util.Coding;
import java.util.Arrays;
import java.util.Comparator;

/**
 * Internal keys, as in LevelDB: {@code userKey || trailer}, where the trailer is a little-endian
 * fixed64 holding {@code (sequence << 8) | type}. Sequence numbers are 56 bits.
 *
 * <p>Order: user key ascending (unsigned lexicographic), then sequence descending, then type
 * descending, so the newest entry of a user key comes first. See engine/FORMAT.md, "Internal key".
 */
public final class InternalKey {
    /** Largest sequence number that fits in 56 bits. */
    public static final long MAX_SEQUENCE = (1L << 56) - 1;
    /** Bytes of the trailer appended to the user key. */
    public static final int TRAILER_SIZE = 8;

    /** Orders encoded internal keys. */
    public static final Comparator<byte[]> COMPARATOR = InternalKey::compare;

    private InternalKey() {}

    public static long packTrailer(long sequence, ValueType type) {
        if (sequence < 0 || sequence > MAX_SEQUENCE) {
            throw new IllegalArgumentException("sequence out of range: " + sequence);
        }
        return (sequence << 8) | type.code();
    }

    /** Encodes {@code userKey || fixed64le((sequence << 8) | type)}. */
    public static byte[] encode(byte[] userKey, long sequence, ValueType type) {
        byte[] out = Arrays.copyOf(userKey, userKey.length + TRAILER_SIZE);
        Coding.putFixed64(out, userKey.length, packTrailer(sequence, type));
        return out;
    }

    /** The internal key that sorts before every entry of {@code userKey} visible at {@code sequence}. */
    public static byte[] forSeek(byte[] userKey, long sequence) {
        return encode(userKey, sequence, ValueType.FOR_SEEK);
    }

    public static int userKeyLength(byte[] internalKey) {
        return internalKey.length - TRAILER_SIZE;
    }

    public static byte[] userKey(byte[] internalKey) {
        return Arrays.copyOf(internalKey, internalKey.length - TRAILER_SIZE);
    }

    public static long trailer(byte[] internalKey) {
        return Coding.getFixed64(internalKey, internalKey.length - TRAILER_SIZE);
    }

    public static long sequence(byte[] internalKey) {
        return trailer(internalKey) >>> 8;
    }

    public static ValueType type(byte[] internalKey) {
        return ValueType.fromCode((int) (trailer(internalKey) & 0xff));
    }

    /** Compares only the user-key parts of two internal keys. */
    public static int compareUserKeys(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, 0, a.length - TRAILER_SIZE, b, 0, b.length - TRAILER_SIZE);
    }

    /** Compares the user-key part of an internal key with a plain user key. */
    public static int compareUserKey(byte[] internalKey, byte[] userKey) {
        return Arrays.compareUnsigned(internalKey, 0, internalKey.length - TRAILER_SIZE, userKey, 0, userKey.length);
    }

    public static int compare(byte[] a, byte[] b) {
        int c = compareUserKeys(a, b);
        if (c != 0) {
            return c;
        }
        // Higher trailer (newer sequence, then higher type) sorts first.
        return Long.compareUnsigned(trailer(b), trailer(a));
    }
}
