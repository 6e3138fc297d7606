package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MemKeyTest {
    @Test
    void ordersExactlyLikeEncodedInternalKeys() {
        long seed = TestSeeds.seed("MemKeyTest");
        Random rnd = new Random(seed);
        for (int i = 0; i < 200_000; i++) {
            byte[] a = randomKey(rnd);
            byte[] b = rnd.nextInt(4) == 0 ? a.clone() : randomKey(rnd);
            long sa = rnd.nextInt(4);
            long sb = rnd.nextInt(4);
            ValueType ta = rnd.nextBoolean() ? ValueType.PUT : ValueType.DELETE;
            ValueType tb = rnd.nextBoolean() ? ValueType.PUT : ValueType.DELETE;
            int expected =
                    Integer.signum(InternalKey.compare(InternalKey.encode(a, sa, ta), InternalKey.encode(b, sb, tb)));
            int actual = Integer.signum(MemKey.compare(
                    new MemKey(a, InternalKey.packTrailer(sa, ta)), new MemKey(b, InternalKey.packTrailer(sb, tb))));
            assertThat(actual).as("seed " + seed + " case " + i).isEqualTo(expected);
        }
        byte[] ik = InternalKey.encode(new byte[] {1, 2, 3}, 77, ValueType.PUT);
        MemKey k = MemKey.of(ik);
        MemSkipList list = new MemSkipList();
        list.insert(k.userKey, k.trailer, new byte[0], 0, 0);
        assertThat(list.encodedKey(list.first(), list.first())).isEqualTo(ik);
    }

    /** A word is the key's bytes from {@code from} on, big-endian, padded with zeros: for 0 to 8 bytes left and past the end. */
    @Test
    void aWordIsTheBytesLeftPaddedWithZeros() {
        byte[] key = {(byte) 0x81, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, (byte) 0xF0};
        for (int from = 0; from <= key.length + 8; from++) {
            long expected = 0;
            for (int i = 0; i < 8; i++) {
                expected = (expected << 8) | (from + i < key.length ? key[from + i] & 0xFFL : 0);
            }
            assertThat(MemKey.word(key, from)).as("from %d", from).isEqualTo(expected);
        }
        assertThat(MemKey.word(new byte[0], 0)).isZero();
    }

    /**
     * A key stored in the list (a key node's key with one of its versions' trailers) compares with a lookup key
     * exactly as the two encoded internal keys compare.
     */
    @Test
    void storedKeysCompareLikeEncodedInternalKeys() {
        long seed = TestSeeds.seed("MemKeyTest.stored");
        Random rnd = new Random(seed);
        MemSkipList list = new MemSkipList();
        java.util.List<byte[]> stored = new java.util.ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            byte[] a = randomKey(rnd);
            long trailer = InternalKey.packTrailer(i + 1, rnd.nextBoolean() ? ValueType.PUT : ValueType.DELETE);
            list.insert(a, trailer, new byte[0], 0, 0);
            stored.add(InternalKey.encode(a, i + 1, ValueType.fromCode((int) (trailer & 0xFF))));
        }
        java.util.Map<String, long[]> nodes = new java.util.HashMap<>(); // encoded key -> {key node, version}
        for (long x = list.first(); x != 0; x = list.next(x)) {
            for (long v = list.newest(x); v != 0; v = list.older(x, v)) {
                nodes.put(java.util.HexFormat.of().formatHex(list.encodedKey(x, v)), new long[] {x, v});
            }
        }
        assertThat(nodes).hasSize(stored.size());
        for (int i = 0; i < 100_000; i++) {
            byte[] a = stored.get(rnd.nextInt(stored.size()));
            byte[] b = rnd.nextInt(4) == 0 ? InternalKey.userKey(a) : randomKey(rnd);
            long sb = rnd.nextInt(3000);
            ValueType tb = rnd.nextBoolean() ? ValueType.PUT : ValueType.DELETE;
            int expected = Integer.signum(InternalKey.compare(a, InternalKey.encode(b, sb, tb)));
            long[] at = nodes.get(java.util.HexFormat.of().formatHex(a));
            int actual = Integer.signum(list.compare(at[0], at[1], new MemKey(b, InternalKey.packTrailer(sb, tb))));
            assertThat(actual).as("seed " + seed + " case " + i).isEqualTo(expected);
        }
    }

    /** Short and long keys, zero bytes and high bytes around the 8- and 16-byte word boundaries. */
    private static byte[] randomKey(Random rnd) {
        byte[] k = new byte[rnd.nextInt(rnd.nextBoolean() ? 20 : 40)];
        for (int i = 0; i < k.length; i++) {
            int r = rnd.nextInt(4);
            k[i] = (byte) (r == 0 ? 0 : r == 1 ? 0xFF : r == 2 ? 0x80 : 0x7F);
        }
        return k;
    }
}
