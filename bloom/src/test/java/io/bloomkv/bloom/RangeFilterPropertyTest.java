package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NavigableSet;
import java.util.SplittableRandom;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@link RangeFilter} never says "empty" for a range that holds a key: random key sets of variable-length byte strings
 * over a small alphabet (so keys share long prefixes, are prefixes of each other and differ past the 62-bit window),
 * random ranges, a {@link TreeSet} as the oracle; and the serialized form round-trips with the same answers.
 * jqwik reports the failing seed; a run is replayed with it.
 */
class RangeFilterPropertyTest {
    static final java.util.Comparator<byte[]> ORDER = Arrays::compareUnsigned;

    static byte[] randomKey(SplittableRandom rnd, int maxLen, int alphabet) {
        byte[] k = new byte[rnd.nextInt(maxLen + 1)];
        for (int i = 0; i < k.length; i++) {
            k[i] = (byte)
                    (alphabet >= 256 ? rnd.nextInt(256) : 'a' - 1 + rnd.nextInt(alphabet)); // includes '`' and a few
        }
        return k;
    }

    static RangeFilter build(NavigableSet<byte[]> keys, double bitsPerKey, int segmentKeys) {
        RangeFilter.Builder b = RangeFilter.builder(bitsPerKey, segmentKeys);
        for (byte[] k : keys) {
            b.add(k);
        }
        return b.build();
    }

    @Property(tries = 300)
    void neverEmptyForARangeHoldingAKey(
            @ForAll long seed,
            @ForAll @IntRange(min = 0, max = 3000) int n,
            @ForAll @IntRange(min = 1, max = 40) int maxLen,
            @ForAll @IntRange(min = 2, max = 256) int alphabet,
            @ForAll @IntRange(min = 2, max = 30) int bitsPerKey,
            @ForAll @IntRange(min = 1, max = 600) int segmentKeys) {
        SplittableRandom rnd = new SplittableRandom(seed);
        TreeSet<byte[]> keys = new TreeSet<>(ORDER);
        byte[] common = randomKey(rnd, rnd.nextInt(3) == 0 ? 30 : 0, alphabet);
        for (int i = 0; i < n; i++) {
            byte[] k = randomKey(rnd, maxLen, alphabet);
            byte[] full = Arrays.copyOf(common, common.length + k.length);
            System.arraycopy(k, 0, full, common.length, k.length);
            keys.add(full);
        }
        List<byte[]> list = new ArrayList<>(keys);
        try (RangeFilter f = build(keys, bitsPerKey, segmentKeys)) {
            byte[] bytes = f.toByteArray();
            assertThat((long) bytes.length).isEqualTo(f.serializedSize());
            try (RangeFilter g = RangeFilter.read(bytes, 0, bytes.length)) {
                for (int q = 0; q < 400; q++) {
                    byte[] lo;
                    byte[] hi;
                    int mode = rnd.nextInt(4);
                    if (mode == 0 && !list.isEmpty()) {
                        // a range around a stored key, endpoints perturbed
                        byte[] k = list.get(rnd.nextInt(list.size()));
                        lo = perturb(rnd, k, alphabet, -1);
                        hi = perturb(rnd, k, alphabet, +1);
                    } else if (mode == 1 && !list.isEmpty()) {
                        lo = list.get(rnd.nextInt(list.size()));
                        hi = list.get(rnd.nextInt(list.size()));
                    } else {
                        lo = withCommon(common, randomKey(rnd, maxLen, alphabet));
                        hi = withCommon(common, randomKey(rnd, maxLen, alphabet));
                    }
                    if (rnd.nextInt(20) == 0) {
                        lo = null;
                    }
                    if (rnd.nextInt(20) == 0) {
                        hi = null;
                    }
                    boolean holds = holds(keys, lo, hi);
                    boolean answer = f.mightContainRange(lo, hi);
                    for (byte[] k : new byte[][] {lo, hi}) {
                        if (k != null) {
                            assertThat(f.segmentOf(k))
                                    .as("segment of %s", show(k))
                                    .isEqualTo(f.segmentOfByScan(k));
                        }
                    }
                    // The bounds as the leading bytes of longer arrays (an internal key's user part) answer alike.
                    byte[] loLong = lo == null ? null : withCommon(lo, randomKey(rnd, 9, 256));
                    byte[] hiLong = hi == null ? null : withCommon(hi, randomKey(rnd, 9, 256));
                    assertThat(f.mightContainRange(
                                    loLong, lo == null ? 0 : lo.length, hiLong, hi == null ? 0 : hi.length))
                            .as("bounds given by length")
                            .isEqualTo(answer);
                    if (holds) {
                        assertThat(answer)
                                .as("range [%s, %s] holds a key", show(lo), show(hi))
                                .isTrue();
                    }
                    assertThat(g.mightContainRange(lo, hi))
                            .as("read back answers alike")
                            .isEqualTo(answer);
                }
                for (byte[] k : list) {
                    assertThat(f.mightContainRange(k, k)).isTrue();
                }
                assertThat(f.keyCount()).isEqualTo(keys.size());
            }
        }
    }

    static boolean holds(TreeSet<byte[]> keys, byte[] lo, byte[] hi) {
        if (lo != null && hi != null && ORDER.compare(lo, hi) > 0) {
            return false;
        }
        byte[] c = lo == null ? (keys.isEmpty() ? null : keys.first()) : keys.ceiling(lo);
        return c != null && (hi == null || ORDER.compare(c, hi) <= 0);
    }

    private static byte[] withCommon(byte[] common, byte[] k) {
        byte[] full = Arrays.copyOf(common, common.length + k.length);
        System.arraycopy(k, 0, full, common.length, k.length);
        return full;
    }

    /** k shortened, lengthened or with one byte moved in {@code direction}. */
    private static byte[] perturb(SplittableRandom rnd, byte[] k, int alphabet, int direction) {
        switch (rnd.nextInt(4)) {
            case 0:
                return k.clone();
            case 1:
                return direction < 0
                        ? Arrays.copyOf(k, rnd.nextInt(k.length + 1))
                        : withCommon(k, randomKey(rnd, 5, alphabet));
            case 2: {
                if (k.length == 0) {
                    return k.clone();
                }
                byte[] c = k.clone();
                int i = rnd.nextInt(c.length);
                c[i] = (byte) (c[i] + direction);
                return c;
            }
            default:
                return direction < 0 ? new byte[0] : new byte[] {(byte) 0xFF, (byte) 0xFF};
        }
    }

    private static String show(byte[] k) {
        return k == null ? "null" : Arrays.toString(k);
    }

    @Test
    void emptySetAndArgumentChecks() {
        try (RangeFilter f = RangeFilter.builder(10).build()) {
            assertThat(f.mightContainRange(null, null)).isFalse();
            assertThat(f.keyCount()).isZero();
            byte[] b = f.toByteArray();
            try (RangeFilter g = RangeFilter.read(b, 0, b.length)) {
                assertThat(g.mightContainRange(new byte[0], new byte[] {1})).isFalse();
            }
        }
        RangeFilter.Builder b = RangeFilter.builder(10).add(new byte[] {5});
        assertThatThrownBy(() -> b.add(new byte[] {5})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RangeFilter.builder(1)).isInstanceOf(IllegalArgumentException.class);
        RangeFilter f = b.build();
        f.close();
        f.close();
        assertThatThrownBy(() -> f.mightContainRange(null, null)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void damagedBytesFailWithAFormatException() {
        TreeSet<byte[]> keys = new TreeSet<>(ORDER);
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < 2000; i++) {
            keys.add(randomKey(rnd, 12, 26));
        }
        byte[] bytes;
        try (RangeFilter f = build(keys, 12, 100)) {
            bytes = f.toByteArray();
        }
        for (int at : new int[] {0, 4, 6, 7, 8, 12, 16, 24, 32, 48, 60, 64, 100, bytes.length - 1}) {
            byte[] bad = bytes.clone();
            bad[at] ^= 0x04;
            assertThatThrownBy(() -> RangeFilter.read(bad, 0, bad.length))
                    .as("flip at %d", at)
                    .isInstanceOf(FilterFormatException.class);
        }
        assertThatThrownBy(() -> RangeFilter.read(bytes, 0, bytes.length - 8))
                .isInstanceOf(FilterFormatException.class);
        assertThatThrownBy(() -> RangeFilter.read(bytes, 0, 10)).isInstanceOf(FilterFormatException.class);
    }
}
