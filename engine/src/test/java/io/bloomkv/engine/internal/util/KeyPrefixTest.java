package io.bloomkv.engine.internal.util;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.TestSeeds;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A prefix comparison orders keys exactly as {@link Arrays#compareUnsigned(byte[], byte[])} does. */
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
    void rangeTestsAgreeWithUnsignedComparison() {
        long[] edges = {0, 1, 2, Long.MAX_VALUE - 1, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1, -2, -1};
        for (long p : edges) {
            for (long lo : edges) {
                assertThat(KeyPrefix.atLeast(p, lo)).isEqualTo(Long.compareUnsigned(p, lo) >= 0 ? 1 : 0);
                assertThat(KeyPrefix.same(p, lo)).isEqualTo(p == lo ? 1 : 0);
                for (long hi : edges) {
                    assertInRange(p, lo, hi);
                }
            }
        }
        long seed = TestSeeds.seed("KeyPrefixTest.rangeTestsAgreeWithUnsignedComparison");
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int n = 0; n < 200_000; n++) {
            long p = rnd.nextLong();
            // bounds near p as often as far from it: the borrow and sign cases of the arithmetic
            long lo = rnd.nextBoolean() ? rnd.nextLong() : p + rnd.nextInt(-2, 3);
            long hi = rnd.nextBoolean() ? rnd.nextLong() : p + rnd.nextInt(-2, 3);
            assertThat(KeyPrefix.atLeast(p, lo))
                    .as("atLeast(%x, %x), seed %d", p, lo, seed)
                    .isEqualTo(Long.compareUnsigned(p, lo) >= 0 ? 1 : 0);
            assertInRange(p, lo, hi);
            assertThat(KeyPrefix.same(p, lo)).as("same(%x, %x)", p, lo).isEqualTo(p == lo ? 1 : 0);
        }
    }

    private static void assertInRange(long p, long lo, long hi) {
        int expected = Long.compareUnsigned(lo, p) <= 0 && Long.compareUnsigned(p, hi) <= 0 ? 1 : 0;
        assertThat(KeyPrefix.inRange(p, lo, hi))
                .as("inRange(%x, %x, %x)", p, lo, hi)
                .isEqualTo(expected);
    }

    private static byte[] randomKey(SplittableRandom rnd, byte[] alphabet) {
        byte[] k = new byte[rnd.nextInt(13)];
        for (int i = 0; i < k.length; i++) {
            k[i] = alphabet[rnd.nextInt(alphabet.length)];
        }
        return k;
    }

    private static void assertSameOrder(byte[] a, byte[] b) {
        int expected = Integer.signum(Arrays.compareUnsigned(a, b));
        int actual = Integer.signum(KeyPrefix.compare(KeyPrefix.of(a), a, KeyPrefix.of(b), b));
        assertThat(actual)
                .as("%s vs %s", Arrays.toString(a), Arrays.toString(b))
                .isEqualTo(expected);
    }
}
