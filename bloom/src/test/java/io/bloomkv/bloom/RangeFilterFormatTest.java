package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link RangeFilter}'s hash versions against bloom/FORMAT.md "Range filter": the positions a built filter stores are
 * recomputed from the documented hash-version-2 formula (independently: arbitrary-precision arithmetic for the
 * polynomial mod 2^61 - 1), and filters written with hash version 1 (the committed fuzz seeds, built before version 2)
 * still read, round-trip byte for byte and never say "empty" for a range holding one of their keys.
 */
class RangeFilterFormatTest {
    private static final BigInteger P = BigInteger.valueOf(RangeFilter.P61);

    /** fmix64 as documented (MurmurHash3's 64-bit finalizer). */
    private static long fmix64(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /** c_i of segment j, as documented. */
    private static long coefficient(long seed, int j, int i) {
        long x = seed + (4L * j + i + 1) * 0x9E3779B97F4A7C15L;
        return BigInteger.valueOf(fmix64(fmix64(x) ^ 0xD6E8FEB86659FD93L))
                .mod(P)
                .longValueExact();
    }

    /** q_j(t) of hash version 2, as documented, by Horner's rule over BigInteger. */
    private static long q(long seed, int j, long r, long t) {
        BigInteger x = BigInteger.valueOf(t).mod(P);
        BigInteger sum = BigInteger.ZERO;
        for (int i = 3; i >= 0; i--) {
            sum = sum.multiply(x)
                    .add(BigInteger.valueOf(coefficient(seed, j, i)))
                    .mod(P);
        }
        return sum.mod(BigInteger.valueOf(r)).longValueExact();
    }

    /** The stored positions, decoded from the Elias–Fano part of the serialized bytes. */
    private static long[] storedPositions(byte[] bytes) {
        ByteBuffer bb = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int l = bb.get(RangeFilter.OFF_LOW_BITS);
        int segments = bb.getInt(RangeFilter.OFF_SEGMENTS);
        long n = bb.getLong(RangeFilter.OFF_ELEMENTS);
        long heap = bb.getLong(RangeFilter.OFF_HEAP_LENGTH);
        long lows = RangeFilter.HEADER_SIZE + (long) segments * RangeFilter.SEGMENT_RECORD + heap;
        long highs = lows + 8 * RangeFilter.lowWords(n, l);
        long[] out = new long[(int) n];
        long pos = 0;
        for (int i = 0; i < n; i++) {
            while ((bb.getLong((int) (highs + 8 * (pos >>> 6))) >>> (pos & 63) & 1) == 0) {
                pos++;
            }
            long low = 0;
            for (int b = 0; b < l; b++) {
                long bit = (long) i * l + b;
                low |= (bb.getLong((int) (lows + 8 * (bit >>> 6))) >>> (bit & 63) & 1) << b;
            }
            out[i] = ((pos - i) << l) | low;
            pos++;
        }
        return out;
    }

    @Test
    void positionsFollowTheDocumentedHashVersion2() {
        SplittableRandom rnd = new SplittableRandom(41);
        TreeSet<byte[]> keys = new TreeSet<>(Arrays::compareUnsigned);
        long v = 1L << 36;
        while (keys.size() < 3000) {
            v += 1 + rnd.nextInt(1 << 16);
            keys.add(RangeFilterFprTest.be(v, 8)); // < 2^40: every segment's window fits, segments are plain runs
        }
        int segmentKeys = 200;
        List<byte[]> list = new ArrayList<>(keys);
        try (RangeFilter f = RangeFilterPropertyTest.build(keys, 8, segmentKeys)) {
            byte[] bytes = f.toByteArray();
            ByteBuffer bb = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(bb.get(RangeFilter.OFF_HASH_VERSION)).isEqualTo((byte) 2);
            long seed = bb.getLong(RangeFilter.OFF_SEED);
            int segments = bb.getInt(RangeFilter.OFF_SEGMENTS);
            assertThat(segments).isEqualTo((list.size() + segmentKeys - 1) / segmentKeys);
            TreeSet<Long> expected = new TreeSet<>();
            int hashedSegments = 0;
            for (int j = 0; j < segments; j++) {
                int at = RangeFilter.HEADER_SIZE + j * RangeFilter.SEGMENT_RECORD;
                int c = bb.getInt(at + RangeFilter.SEG_PREFIX_BITS);
                int w = bb.get(at + RangeFilter.SEG_WINDOW);
                boolean exact = (bb.get(at + RangeFilter.SEG_FLAGS) & RangeFilter.FLAG_EXACT) != 0;
                long w0 = bb.getLong(at + RangeFilter.SEG_W0);
                long r = bb.getLong(at + RangeFilter.SEG_R);
                long base = bb.getLong(at + RangeFilter.SEG_BASE);
                hashedSegments += exact ? 0 : 1;
                for (byte[] k : list.subList(j * segmentKeys, Math.min(list.size(), (j + 1) * segmentKeys))) {
                    long off = RangeFilter.window(k, c, w) - w0;
                    expected.add(base + (exact ? off : Math.floorMod(q(seed, j, r, off / r) + off % r, r)));
                }
            }
            assertThat(hashedSegments).as("segments stored hashed").isEqualTo(segments);
            assertThat(storedPositions(bytes))
                    .containsExactly(
                            expected.stream().mapToLong(Long::longValue).toArray());
        }
    }

    /** The bytes of a version-2 filter as format version 1 wrote them: version 1, no shortest key lengths, CRC. */
    static byte[] asVersion1(byte[] v2) {
        byte[] b = v2.clone();
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        bb.putShort(RangeFilter.OFF_VERSION, (short) 1);
        int segments = bb.getInt(RangeFilter.OFF_SEGMENTS);
        for (int j = 0; j < segments; j++) {
            bb.putShort(
                    RangeFilter.HEADER_SIZE + j * RangeFilter.SEGMENT_RECORD + RangeFilter.SEG_MIN_LENGTH, (short) 0);
        }
        RangeFilterFuzzTest.resign(b);
        return b;
    }

    /**
     * Format version 1 (the committed "seed-h2-..." fuzz seeds: hash version 2, written before the shortest key length
     * joined the directory): read, round-trip byte for byte, equal a filter built now from the same keys but for the
     * version and the lengths, answer closed ranges exactly as it does, and answer an exclusive bound ending in 0x00
     * as the closed range (they cannot know no shorter key shares its window value), never "empty" for a range
     * holding a key.
     */
    @Test
    void formatVersion1FiltersReadAndAnswerAsBuilt() throws IOException {
        SplittableRandom rnd = new SplittableRandom(11);
        int[][] shapes = {{0, 10, 8}, {5, 10, 4}, {60, 12, 16}, {300, 6, 64}, {200, 20, 512}};
        int exactBounds = 0;
        for (int[] s : shapes) {
            TreeSet<byte[]> keys = new TreeSet<>(Arrays::compareUnsigned);
            while (keys.size() < s[0]) {
                keys.add(RangeFilterPropertyTest.randomKey(rnd, 10, 26));
            }
            String name = "RangeFilterFuzzTestInputs/readRangeFilter/seed-h2-" + s[0] + "-" + s[1] + "-" + s[2];
            byte[] seed;
            try (InputStream in = RangeFilterFormatTest.class.getResourceAsStream(name)) {
                assertThat(in).as(name).isNotNull();
                seed = in.readAllBytes();
            }
            byte[] bytes = Arrays.copyOfRange(seed, 1, seed.length);
            assertThat(bytes[RangeFilter.OFF_VERSION]).as(name).isEqualTo((byte) 1);
            try (RangeFilter old = RangeFilter.read(bytes, 0, bytes.length);
                    RangeFilter now = RangeFilterPropertyTest.build(keys, s[1], s[2])) {
                byte[] built = now.toByteArray();
                assertThat(built[RangeFilter.OFF_VERSION]).isEqualTo((byte) RangeFilter.VERSION);
                assertThat(old.toByteArray()).isEqualTo(bytes);
                assertThat(asVersion1(built)).as(name).isEqualTo(bytes);
                List<byte[]> list = new ArrayList<>(keys);
                SplittableRandom q = new SplittableRandom(s[0]);
                for (int i = 0; i < 2000 && !list.isEmpty(); i++) {
                    byte[] lo = RangeFilterPropertyTest.randomKey(q, 10, 26);
                    byte[] k = list.get(q.nextInt(list.size()));
                    byte[] hi = q.nextBoolean() ? k : Arrays.copyOf(k, k.length + 1); // a key, or a key then 0x00
                    boolean closed = old.mightContainRange(lo, hi);
                    assertThat(now.mightContainRange(lo, hi)).isEqualTo(closed);
                    boolean open = old.mightContainRange(lo, hi, false);
                    if (hi.length > k.length) {
                        assertThat(open).as("version 1, bound ending in 0x00").isEqualTo(closed);
                    }
                    if (RangeFilterPropertyTest.holdsExclusive(keys, lo, hi)) {
                        assertThat(open).isTrue();
                    }
                    exactBounds += closed && !open ? 1 : 0;
                }
            }
        }
        assertThat(exactBounds)
                .as("exclusive bounds at a key answered \"empty\" by version 1")
                .isPositive();
    }

    @Test
    void hashVersion1FiltersStillReadAndAnswer() throws IOException {
        // The keys of the committed version-1 seeds, drawn as FilterFuzzSeedWriter.rangeSeeds draws them.
        SplittableRandom rnd = new SplittableRandom(11);
        int[][] shapes = {{0, 10, 8}, {5, 10, 4}, {60, 12, 16}, {300, 6, 64}, {200, 20, 512}};
        int read = 0;
        for (int[] s : shapes) {
            TreeSet<byte[]> keys = new TreeSet<>(Arrays::compareUnsigned);
            while (keys.size() < s[0]) {
                keys.add(RangeFilterPropertyTest.randomKey(rnd, 10, 26));
            }
            String name = "RangeFilterFuzzTestInputs/readRangeFilter/seed-" + s[0] + "-" + s[1] + "-" + s[2];
            byte[] seed;
            try (InputStream in = RangeFilterFormatTest.class.getResourceAsStream(name)) {
                assertThat(in).as(name).isNotNull();
                seed = in.readAllBytes();
            }
            byte[] bytes = Arrays.copyOfRange(seed, 1, seed.length);
            assertThat(bytes[RangeFilter.OFF_HASH_VERSION]).as(name).isEqualTo((byte) 1);
            try (RangeFilter f = RangeFilter.read(bytes, 0, bytes.length)) {
                assertThat(f.toByteArray()).isEqualTo(bytes);
                assertThat(f.keyCount()).isEqualTo(keys.size());
                List<byte[]> list = new ArrayList<>(keys);
                for (byte[] k : list) {
                    assertThat(f.mightContainRange(k, k))
                            .as("%s holds %s", name, Arrays.toString(k))
                            .isTrue();
                }
                SplittableRandom q = new SplittableRandom(s[0]);
                for (int i = 0; i < 2000; i++) {
                    byte[] lo = RangeFilterPropertyTest.randomKey(q, 10, 26);
                    byte[] hi = RangeFilterPropertyTest.randomKey(q, 10, 26);
                    if (RangeFilterPropertyTest.holds(keys, lo, hi)) {
                        assertThat(f.mightContainRange(lo, hi)).isTrue();
                    }
                }
                // The exact keys of this version-1 filter, built again: hash version 2, same answers for held ranges.
                try (RangeFilter g = RangeFilterPropertyTest.build(keys, s[1], s[2])) {
                    assertThat(g.toByteArray()[RangeFilter.OFF_HASH_VERSION]).isEqualTo((byte) 2);
                    for (byte[] k : list) {
                        assertThat(g.mightContainRange(k, k)).isTrue();
                    }
                }
            }
            read++;
        }
        assertThat(read).isEqualTo(shapes.length);
    }
}
