package io.bloomkv.engine.internal.util;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.TestSeeds;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Prefix comparisons order keys exactly as {@link Arrays#compareUnsigned(byte[], byte[])} does. */
class KeyPrefixTest {

    @Test
    void prefixIsTheZeroPaddedBigEndianHead() {
        assertThat(KeyPrefix.of(new byte[0])).isZero();
        assertThat(KeyPrefix.of(new byte[] {1})).isEqualTo(0x0100_0000_0000_0000L);
        assertThat(KeyPrefix.of(new byte[] {(byte) 0xFF, 2, 3, 4, 5, 6, 7, 8, 9}))
                .isEqualTo(0xFF02_0304_0506_0708L);
    }

    @Test
    void edgeCasesAroundPaddingAndSign() {
        byte[][] keys = {
            {},
            {0},
            {0, 0},
            {1},
            {1, 0},
            {1, 0, 0, 0, 0, 0, 0, 0},
            {1, 0, 0, 0, 0, 0, 0, 0, 0},
            {1, 0, 0, 0, 0, 0, 0, 0, 1},
            {(byte) 0x80},
            {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF},
            {0x7F, (byte) 0xFF},
        };
        for (byte[] a : keys) {
            for (byte[] b : keys) {
                assertSameOrder(a, b);
            }
        }
    }

    @Test
    void randomKeysCompareAsArraysDo() {
        long seed = TestSeeds.seed("KeyPrefixTest.randomKeysCompareAsArraysDo");
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[] alphabet = {0, 1, 0x7F, (byte) 0x80, (byte) 0xFF};
        for (int n = 0; n < 200_000; n++) {
            byte[] a = randomKey(rnd, alphabet);
            byte[] b = rnd.nextInt(4) == 0 ? a.clone() : randomKey(rnd, alphabet);
            if (rnd.nextBoolean() && b.length > 0) {
                b = Arrays.copyOf(
                        a, Math.max(0, Math.min(a.length + rnd.nextInt(-2, 3), 12))); // near-prefixes of each other
                if (b.length == 0) {
                    continue;
                }
            }
            assertSameOrder(a, b);
        }
    }

    @Test
    void sameAgreesWithEquality() {
        long[] edges = {0, 1, 2, Long.MAX_VALUE - 1, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1, -2, -1};
        for (long p : edges) {
            for (long q : edges) {
                assertThat(KeyPrefix.same(p, q)).isEqualTo(p == q ? 1 : 0);
            }
        }
        long seed = TestSeeds.seed("KeyPrefixTest.sameAgreesWithEquality");
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int n = 0; n < 200_000; n++) {
            long p = rnd.nextLong();
            long q = rnd.nextBoolean() ? rnd.nextLong() : p + rnd.nextInt(-2, 3);
            assertThat(KeyPrefix.same(p, q))
                    .as("same(%x, %x), seed %d", p, q, seed)
                    .isEqualTo(p == q ? 1 : 0);
        }
    }

    @Test
    void twoWordPrecedesIsExactOrUndecidedOnlyForLongKeysThatShareSixteenBytes() {
        long seed =
                TestSeeds.seed("KeyPrefixTest.twoWordPrecedesIsExactOrUndecidedOnlyForLongKeysThatShareSixteenBytes");
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[] alphabet = {0, 1, 0x7F, (byte) 0x80, (byte) 0xFF};
        int undecided = 0;
        for (int n = 0; n < 300_000; n++) {
            byte[] a = randomKey(rnd, alphabet, 21);
            byte[] b;
            switch (rnd.nextInt(3)) {
                case 0 -> b = a.clone();
                case 1 -> b = Arrays.copyOf(a, Math.max(0, a.length + rnd.nextInt(-3, 4))); // prefix or zero-extended
                default -> b = randomKey(rnd, alphabet, 21);
            }
            if (rnd.nextInt(4) == 0 && b.length > 0) {
                b[rnd.nextInt(b.length)] = alphabet[rnd.nextInt(alphabet.length)];
            }
            int ab = KeyPrefix.precedes(
                    KeyPrefix.of(a), KeyPrefix.second(a), a.length, KeyPrefix.of(b), KeyPrefix.second(b), b.length);
            int ba = KeyPrefix.precedes(
                    KeyPrefix.of(b), KeyPrefix.second(b), b.length, KeyPrefix.of(a), KeyPrefix.second(a), a.length);
            int expected = Integer.signum(Arrays.compareUnsigned(a, b));
            boolean longShared =
                    a.length > 16 && b.length > 16 && Arrays.equals(Arrays.copyOf(a, 16), Arrays.copyOf(b, 16));
            String what = String.format("%s vs %s, seed %d", Arrays.toString(a), Arrays.toString(b), seed);
            if (longShared) {
                undecided++;
                assertThat(ab).as(what).isEqualTo(KeyPrefix.UNDECIDED);
                assertThat(ba).as(what).isEqualTo(KeyPrefix.UNDECIDED);
            } else {
                assertThat(ab).as(what).isEqualTo(expected < 0 ? KeyPrefix.BEFORE : 0);
                assertThat(ba).as(what).isEqualTo(expected > 0 ? KeyPrefix.BEFORE : 0);
            }
        }
        assertThat(undecided).as("seed %d", seed).isPositive();
        assertThat(KeyPrefix.second(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9})).isEqualTo(0x0900_0000_0000_0000L);
        assertThat(KeyPrefix.second(new byte[8])).isZero();
    }

    private static byte[] randomKey(SplittableRandom rnd, byte[] alphabet) {
        return randomKey(rnd, alphabet, 13);
    }

    private static byte[] randomKey(SplittableRandom rnd, byte[] alphabet, int lengths) {
        byte[] k = new byte[rnd.nextInt(lengths)];
        for (int i = 0; i < k.length; i++) {
            k[i] = alphabet[rnd.nextInt(alphabet.length)];
        }
        return k;
    }

    private static void assertSameOrder(byte[] a, byte[] b) {
        int expected = Integer.signum(Arrays.compareUnsigned(a, b));
        int ab = KeyPrefix.precedes(
                KeyPrefix.of(a), KeyPrefix.second(a), a.length, KeyPrefix.of(b), KeyPrefix.second(b), b.length);
        int ba = KeyPrefix.precedes(
                KeyPrefix.of(b), KeyPrefix.second(b), b.length, KeyPrefix.of(a), KeyPrefix.second(a), a.length);
        assertThat(ab)
                .as("%s before %s", Arrays.toString(a), Arrays.toString(b))
                .isEqualTo(expected < 0 ? 1 : 0);
        assertThat(ba)
                .as("%s before %s", Arrays.toString(b), Arrays.toString(a))
                .isEqualTo(expected > 0 ? 1 : 0);
    }
}
