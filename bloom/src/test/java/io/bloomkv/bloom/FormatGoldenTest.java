package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The serialized form, byte by byte, against an independent reading of bloom/FORMAT.md: the body the
 * test builds from the document's probe formulas and bit numbering (bit b = bit b % 64 of little-endian
 * word b / 64; counter c = bits 4(c % 16).. of word c / 16) must equal the body the library writes,
 * and the CRC32C field must cover bytes [0, 60) and the body. Replay with {@code -Dbloom.format.seed=N}.
 */
class FormatGoldenTest {
    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

    private static long fmix64(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /** floor(x * n / 2^64), x unsigned, computed with BigInteger. */
    private static long reduce(long x, long n) {
        BigInteger ux = new BigInteger(Long.toUnsignedString(x));
        return ux.multiply(BigInteger.valueOf(n)).divide(TWO_64).longValueExact();
    }

    private static void setBit(byte[] body, long b) {
        long word = b / 64;
        int bitInWord = (int) (b % 64);
        body[(int) (word * 8 + bitInWord / 8)] |= (byte) (1 << (bitInWord % 8)); // little-endian word
    }

    private static void bumpCounter(byte[] body, long c) {
        long word = c / 16;
        int bitInWord = (int) (c % 16) * 4;
        int byteIndex = (int) (word * 8 + bitInWord / 8);
        int shift = bitInWord % 8;
        int v = (body[byteIndex] >>> shift) & 0xF;
        if (v < 15) {
            body[byteIndex] = (byte) ((body[byteIndex] & ~(0xF << shift)) | ((v + 1) << shift));
        }
    }

    /** The bit (or counter) numbers key hash h sets, by the document's probe formulas. */
    private static long[] positions(FilterKind kind, long m, int k, long h) {
        long[] at = new long[k];
        long s = fmix64(h);
        switch (kind) {
            case STANDARD:
            case COUNTING:
                for (int i = 0; i < k; i++) {
                    at[i] = reduce(h + i * s, m);
                }
                break;
            case PARTITIONED: {
                long r = m / k;
                for (int i = 0; i < k; i++) {
                    at[i] = i * r + reduce(h + i * s, r);
                }
                break;
            }
            case BLOCKED: {
                long blocks = m / 512;
                long j = ((h & 0xFFFF_FFFFL) * blocks) >>> 32;
                long w = fmix64(h);
                for (int i = 0; i < k; i++) {
                    if (i > 0 && i % 7 == 0) {
                        w = fmix64(w);
                    }
                    at[i] = 512 * j + ((w << (9 * (i % 7))) >>> 55);
                }
                break;
            }
            default:
                throw new AssertionError(kind);
        }
        return at;
    }

    private static void expectKey(byte[] body, FilterKind kind, long m, int k, long h) {
        for (long p : positions(kind, m, k, h)) {
            if (kind == FilterKind.COUNTING) {
                bumpCounter(body, p);
            } else {
                setBit(body, p);
            }
        }
    }

    /** The document's answer for h: every one of its bits set (every counter above zero). */
    private static boolean documentedAnswer(byte[] body, FilterKind kind, long m, int k, long h) {
        for (long p : positions(kind, m, k, h)) {
            boolean set;
            if (kind == FilterKind.COUNTING) {
                int bitInWord = (int) (p % 16) * 4;
                int byteIndex = (int) ((p / 16) * 8 + bitInWord / 8);
                set = ((body[byteIndex] >>> (bitInWord % 8)) & 0xF) != 0;
            } else {
                int bitInWord = (int) (p % 64);
                set = (body[(int) ((p / 64) * 8 + bitInWord / 8)] & (1 << (bitInWord % 8))) != 0;
            }
            if (!set) {
                return false;
            }
        }
        return true;
    }

    /**
     * Queries ({@code mightContain} and, after a touch, {@code mightContainTouched}) answer exactly what the
     * document's bits say, for added and absent hashes, at probe counts below and above seven (the blocked layout takes a second word of probe positions from the eighth on): a query that
     * skipped or misplaced a probe would answer differently for some absent hash.
     */
    @ParameterizedTest
    @EnumSource(value = FilterKind.class, mode = EnumSource.Mode.EXCLUDE, names = "RIBBON") // RibbonFilterTest
    void queriesAnswerExactlyAsDocumented(FilterKind kind) {
        long seed = TestKeys.seed("bloom.format.seed");
        SplittableRandom random = new SplittableRandom(seed);
        for (double bitsPerKey : new double[] {3, 10, 17, 24}) {
            try (Filter f = Filters.create(kind, 2000, bitsPerKey)) {
                long[] added = new long[2000];
                for (int i = 0; i < added.length; i++) {
                    added[i] = random.nextLong();
                    f.add(added[i]);
                }
                byte[] bytes = f.toByteArray();
                byte[] body = Arrays.copyOfRange(bytes, 64, bytes.length);
                long m = f.bitSize();
                int k = f.hashCount();
                for (long h : added) {
                    assertThat(f.mightContain(h))
                            .as("added %d, k %d, seed %d", h, k, seed)
                            .isTrue();
                    assertThat(f.mightContainTouched(h))
                            .as("added %d, k %d, seed %d", h, k, seed)
                            .isTrue();
                }
                int positives = 0;
                for (int i = 0; i < 20_000; i++) {
                    long h = random.nextLong();
                    boolean documented = documentedAnswer(body, kind, m, k, h);
                    assertThat(f.mightContain(h))
                            .as("absent %d, k %d, seed %d", h, k, seed)
                            .isEqualTo(documented);
                    f.touch(h);
                    assertThat(f.mightContainTouched(h))
                            .as("touched %d, k %d, seed %d", h, k, seed)
                            .isEqualTo(documented);
                    positives += documented ? 1 : 0;
                }
                // Both answers occur, so the comparison tested something: at 3 bits per key about 15% are positive.
                if (bitsPerKey == 3) {
                    assertThat(positives)
                            .as("positives at 3 bits per key, seed %d", seed)
                            .isGreaterThan(200);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = FilterKind.class, mode = EnumSource.Mode.EXCLUDE, names = "RIBBON") // RibbonFormatTest
    void bodyAndChecksumAreExactlyAsDocumented(FilterKind kind) {
        long seed = TestKeys.seed("bloom.format.seed");
        SplittableRandom random = new SplittableRandom(seed);
        try (Filter f = Filters.create(kind, 300, 12)) {
            long m = f.bitSize();
            int k = f.hashCount();
            byte[] expectedBody = new byte[(int) (kind == FilterKind.COUNTING ? m / 2 : m / 8)];
            for (int i = 0; i < 300; i++) {
                long h = random.nextLong();
                f.add(h);
                expectKey(expectedBody, kind, m, k, h);
            }
            byte[] bytes = f.toByteArray();
            assertThat(bytes).hasSize(64 + expectedBody.length);
            assertThat(Arrays.copyOfRange(bytes, 64, bytes.length))
                    .as("body, seed %d", seed)
                    .isEqualTo(expectedBody);
            ByteBuffer header = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(header.getShort(10)).isEqualTo((short) k);
            assertThat(header.getLong(16)).isEqualTo(m);
            assertThat(header.getLong(24)).isEqualTo(expectedBody.length);
            assertThat(header.getLong(32)).isEqualTo(300);
            assertThat(header.getLong(40)).isEqualTo(300);
            assertThat(header.getInt(12)).as("flags").isZero();
            assertThat(Arrays.copyOfRange(bytes, 48, 60)).as("reserved").containsOnly(0);
            CRC32C crc = new CRC32C();
            crc.update(bytes, 0, 60);
            crc.update(bytes, 64, expectedBody.length);
            assertThat(header.getInt(60)).isEqualTo((int) crc.getValue());
        }
    }
}
