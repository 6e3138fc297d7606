package io.bloomkv.engine;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;

/**
 * Keys around {@link Db#MAX_KEY_SIZE} for the long-key differential tests ({@link LongSeekTargetDifferentialTest},
 * {@link LongRangeBoundsDifferentialTest}): long keys sharing long stems of one filler byte, with 0x00, 0x80 and 0xff
 * bytes at both ends, and short keys now and then; and how to print them.
 */
final class LongKeysForTests {
    static final int MAX = Db.MAX_KEY_SIZE;
    static final byte[] ALPHABET = {0x00, 0x01, 'a', (byte) 0x80, (byte) 0xff};
    static final byte[] FILLERS = {'m', 0x00, (byte) 0xff};
    static final byte[] ALL_FF = filled(MAX, (byte) 0xff);
    static final byte[] ALL_FF_SHORT = filled(MAX - 1, (byte) 0xff);

    private LongKeysForTests() {}

    static byte[] filled(int length, byte b) {
        byte[] k = new byte[length];
        Arrays.fill(k, b);
        return k;
    }

    /** Short keys in full hex; longer ones as first 4 and last 6 bytes and length (messages only, not compared). */
    static String s(byte[] k) {
        if (k == null) {
            return "null";
        }
        HexFormat hex = HexFormat.of();
        if (k.length <= 12) {
            return "'" + hex.formatHex(k) + "'";
        }
        return "'" + hex.formatHex(k, 0, 4) + ".." + hex.formatHex(k, k.length - 6, k.length) + "'(" + k.length + ")";
    }

    static byte pick(Random rnd, byte[] from) {
        return from[rnd.nextInt(from.length)];
    }

    /** A short key (1 to 3 bytes) now and then, else a long one: {@code MAX - 3} to {@code MAX} bytes. */
    static byte[] key(Random rnd) {
        if (rnd.nextInt(6) == 0) {
            byte[] k = new byte[1 + rnd.nextInt(3)];
            for (int i = 0; i < k.length; i++) {
                k[i] = pick(rnd, ALPHABET);
            }
            return k;
        }
        int length = rnd.nextInt(3) == 0 ? MAX - 1 - rnd.nextInt(3) : MAX - rnd.nextInt(2);
        return stem(rnd, length, 1 + rnd.nextInt(3));
    }

    /** A two-byte head, a run of one filler byte, then {@code tail} bytes of the alphabet: {@code length} in all. */
    static byte[] stem(Random rnd, int length, int tail) {
        byte[] k = filled(length, pick(rnd, FILLERS));
        k[0] = pick(rnd, ALPHABET);
        k[1] = pick(rnd, ALPHABET);
        for (int i = length - tail; i < length; i++) {
            k[i] = pick(rnd, ALPHABET);
        }
        return k;
    }
}
