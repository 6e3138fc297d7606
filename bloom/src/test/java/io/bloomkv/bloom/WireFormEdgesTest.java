package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every damaged form of a valid serialized filter, as a user reading bytes from a network or a file would meet it:
 * every prefix truncation and every single-byte change (XOR 0x01, 0x80, 0xFF at every offset) of the plain form
 * ({@link Filters#read} both ways, {@link Filters#map}), of the compressed form ({@link Filters#readCompressed}) and of
 * a range filter ({@link RangeFilter#read}) is refused with {@link FilterFormatException} (all are checksummed), and
 * foreign bytes (another of the three formats, junk) likewise. {@link Filters#readWithoutCrc} has no checksum by
 * design: a change it accepts must still give a filter whose every method answers without an exception. The header
 * is decoded by hand against bloom/FORMAT.md for every kind. {@link OffHeapLeakCheck}: failed reads release
 * everything they allocated.
 */
@ExtendWith(OffHeapLeakCheck.class)
class WireFormEdgesTest {
    private static final int[] MASKS = {0x01, 0x80, 0xFF};

    @TempDir
    Path dir;

    /** A small filter of {@code kind} holding longKey(0..n-1). */
    private static byte[] serialized(FilterKind kind, int n) {
        try (Filter f = TestKeys.filled(kind, n, 10)) {
            return f.toByteArray();
        }
    }

    private static byte[] compressed(Filter f) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        f.writeCompressed(out);
        return out.toByteArray();
    }

    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void everyTruncationAndEveryByteChangeOfThePlainFormIsAFormatError(FilterKind kind) throws IOException {
        byte[] good = serialized(kind, 20);
        for (int len = 0; len < good.length; len++) {
            int l = len;
            assertThatThrownBy(() -> Filters.read(good, 0, l).close())
                    .as("%s cut to %d", kind, len)
                    .isInstanceOf(FilterFormatException.class);
            assertThatThrownBy(() -> Filters.read(ByteBuffer.wrap(good, 0, l)).close())
                    .as("%s cut to %d (ByteBuffer)", kind, len)
                    .isInstanceOf(FilterFormatException.class);
            assertThatThrownBy(() -> Filters.readWithoutCrc(good, 0, l).close())
                    .as("%s cut to %d (no CRC)", kind, len)
                    .isInstanceOf(FilterFormatException.class);
        }
        Path file = dir.resolve("f");
        for (int at = 0; at < good.length; at++) {
            for (int mask : MASKS) {
                byte[] bad = good.clone();
                bad[at] ^= (byte) mask;
                String what = String.format("%s byte %d ^ 0x%02x", kind, at, mask);
                assertThatThrownBy(() -> Filters.read(bad, 0, bad.length).close())
                        .as(what)
                        .isInstanceOf(FilterFormatException.class);
                assertThatThrownBy(() -> Filters.read(ByteBuffer.wrap(bad)).close())
                        .as(what)
                        .isInstanceOf(FilterFormatException.class);
                if (mask == 0xFF) {
                    Files.write(file, bad);
                    assertThatThrownBy(() -> Filters.map(file, 0, bad.length).close())
                            .as(what + " (mapped)")
                            .isInstanceOf(FilterFormatException.class);
                }
                Filter unchecked;
                try {
                    unchecked = Filters.readWithoutCrc(bad, 0, bad.length);
                } catch (FilterFormatException refused) {
                    continue;
                }
                // Accepted without a checksum (FORMAT.md: the caller's container checks the bytes): still a filter
                // whose every method answers, whatever its (damaged) counts and bits say.
                try (Filter f = unchecked) {
                    exerciseEveryMethod(f, what);
                }
            }
        }
    }

    /** Calls every read-only method of {@code f}; none may throw. */
    static void exerciseEveryMethod(Filter f, String what) throws IOException {
        try {
            for (int i = 0; i < 40; i++) {
                f.mightContain(TestKeys.longKey(i));
                f.touch(i);
                f.mightContainTouched(i);
            }
            f.mightContainAll(new long[] {1, 2, 3}, 3, new boolean[3]);
            assertThat(f.expectedFpp()).as(what).isBetween(0.0, 1.0);
            assertThat(f.fractionOfBitsSet()).as(what).isBetween(0.0, 1.0);
            assertThat(f.approximateKeyCount()).as(what).isNotNegative();
            f.hashCount();
            f.bitSize();
            f.keyCount();
            f.expectedKeys();
            f.sizeInBytes();
            f.toString();
            byte[] again = f.toByteArray();
            try (Filter copy = Filters.read(again, 0, again.length)) {
                assertThat(copy.keyCount()).as(what).isEqualTo(f.keyCount());
            }
            byte[] z = compressed(f);
            try (Filter copy = Filters.readCompressed(new ByteArrayInputStream(z))) {
                assertThat(copy.toByteArray()).as(what).isEqualTo(again);
            }
        } catch (RuntimeException e) {
            fail(what + ": " + e, e);
        }
    }

    /** Dense (RAW coding) and sparse (Rice-coded set bits) compressed records of every kind. */
    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void everyTruncationAndEveryByteChangeOfTheCompressedFormIsAFormatError(FilterKind kind) throws IOException {
        byte[][] records = new byte[2][];
        try (Filter dense = TestKeys.filled(kind, 20, 10)) {
            records[0] = compressed(dense);
        }
        if (kind.isStatic()) {
            records[1] = records[0]; // a Ribbon solution is half ones: always RAW
        } else {
            try (Filter sparse = Filters.create(kind, 30, 40, 1)) {
                for (int i = 0; i < 30; i++) {
                    sparse.add(TestKeys.longKey(i));
                }
                records[1] = compressed(sparse);
            }
            assertThat(records[1][CompressedFilterCodec.OFF_CODING])
                    .as("the sparse record is Rice-coded")
                    .isNotEqualTo((byte) CompressedFilterCodec.CODING_RAW);
        }
        for (byte[] good : records) {
            for (int len = 0; len < good.length; len++) {
                byte[] cut = Arrays.copyOf(good, len);
                assertThatThrownBy(() -> Filters.readCompressed(new ByteArrayInputStream(cut))
                                .close())
                        .as("%s cut to %d of %d", kind, len, good.length)
                        .isInstanceOf(FilterFormatException.class);
            }
            for (int at = 0; at < good.length; at++) {
                for (int mask : MASKS) {
                    byte[] bad = good.clone();
                    bad[at] ^= (byte) mask;
                    assertThatThrownBy(() -> Filters.readCompressed(new ByteArrayInputStream(bad))
                                    .close())
                            .as("%s byte %d of %d ^ 0x%02x", kind, at, good.length, mask)
                            .isInstanceOf(FilterFormatException.class);
                }
            }
        }
    }

    @Test
    void everyTruncationAndEveryByteChangeOfARangeFilterIsAFormatError() {
        RangeFilter.Builder b = RangeFilter.builder(10, 8);
        for (int i = 0; i < 30; i++) {
            b.add(new byte[] {'k', (byte) (i * 7), (byte) i});
        }
        byte[] good;
        try (RangeFilter f = b.build()) {
            good = f.toByteArray();
        }
        for (int len = 0; len < good.length; len++) {
            int l = len;
            assertThatThrownBy(() -> RangeFilter.read(good, 0, l).close())
                    .as("cut to %d", len)
                    .isInstanceOf(FilterFormatException.class);
        }
        for (int at = 0; at < good.length; at++) {
            for (int mask : MASKS) {
                byte[] bad = good.clone();
                bad[at] ^= (byte) mask;
                assertThatThrownBy(() -> RangeFilter.read(bad, 0, bad.length).close())
                        .as("byte %d ^ 0x%02x", at, mask)
                        .isInstanceOf(FilterFormatException.class);
            }
        }
    }

    @Test
    void foreignBytesAreFormatErrorsInEveryReader() throws IOException {
        byte[] plain = serialized(FilterKind.BLOCKED, 20);
        byte[] packed;
        try (Filter f = TestKeys.filled(FilterKind.STANDARD, 20, 10)) {
            packed = compressed(f);
        }
        byte[] range;
        try (RangeFilter r = RangeFilter.builder(10).add(new byte[] {1}).build()) {
            range = r.toByteArray();
        }
        SplittableRandom random = new SplittableRandom(TestKeys.seed("bloomkv.seed"));
        byte[] junk = new byte[300];
        for (int i = 0; i < junk.length; i++) {
            junk[i] = (byte) random.nextInt();
        }
        byte[] zeros = new byte[300];
        Path file = dir.resolve("foreign");
        for (byte[] foreign : new byte[][] {packed, range, junk, zeros, plain}) {
            if (foreign != plain) {
                assertThatThrownBy(() -> Filters.read(foreign, 0, foreign.length))
                        .isInstanceOf(FilterFormatException.class);
                assertThatThrownBy(() -> Filters.readWithoutCrc(foreign, 0, foreign.length))
                        .isInstanceOf(FilterFormatException.class);
                Files.write(file, foreign);
                assertThatThrownBy(() -> Filters.map(file, 0, foreign.length))
                        .isInstanceOf(FilterFormatException.class);
            }
            if (foreign != packed) {
                assertThatThrownBy(() -> Filters.readCompressed(new ByteArrayInputStream(foreign)))
                        .isInstanceOf(FilterFormatException.class);
            }
            if (foreign != range) {
                assertThatThrownBy(() -> RangeFilter.read(foreign, 0, foreign.length))
                        .isInstanceOf(FilterFormatException.class);
            }
        }
    }

    /** Several sizes of every kind: the copy, the mapping and the compressed form answer as the original, byte for byte. */
    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void everyKindRoundTripsAtSeveralSizes(FilterKind kind) throws IOException {
        for (int n : new int[] {0, 1, 2, 63, 64, 65, 1000, 20_000}) {
            try (Filter f = TestKeys.filled(kind, n, 7.5)) {
                byte[] bytes = f.toByteArray();
                Path file = dir.resolve(kind + "-" + n);
                Files.write(file, bytes);
                try (Filter copy = Filters.read(bytes, 0, bytes.length);
                        Filter viaBuffer = Filters.read(ByteBuffer.wrap(bytes));
                        Filter mapped = Filters.map(file, 0, bytes.length);
                        Filter unpacked = Filters.readCompressed(new ByteArrayInputStream(compressed(f)))) {
                    for (Filter g : new Filter[] {copy, viaBuffer, mapped, unpacked}) {
                        assertThat(g.toByteArray()).as("%s n=%d", kind, n).isEqualTo(bytes);
                        assertThat(g.keyCount()).isEqualTo(f.keyCount());
                        assertThat(g.expectedFpp()).isEqualTo(f.expectedFpp());
                        for (int i = 0; i < n + 200; i++) {
                            byte[] key = TestKeys.longKey(i);
                            boolean expected = f.mightContain(key);
                            assertThat(g.mightContain(key))
                                    .as("%s n=%d key %d", kind, n, i)
                                    .isEqualTo(expected);
                            if (i < n) {
                                assertThat(expected)
                                        .as("%s n=%d lost key %d", kind, n, i)
                                        .isTrue();
                            }
                        }
                    }
                }
            }
        }
    }

    /** Every header field at the offset, width and byte order bloom/FORMAT.md gives, and the CRC32C as it defines it. */
    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void theHeaderDecodesByHandAsFormatMdSays(FilterKind kind) {
        try (Filter f = TestKeys.filled(kind, 1000, 9)) {
            byte[] bytes = f.toByteArray();
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(Arrays.copyOfRange(bytes, 0, 4)).containsExactly(0x42, 0x4B, 0x56, 0x46);
            assertThat(b.getInt(0)).isEqualTo(0x46564B42);
            assertThat(b.getShort(4)).as("format version").isEqualTo((short) 1);
            assertThat(bytes[6]).as("kind code").isEqualTo((byte) kind.code());
            assertThat(bytes[7]).as("hash version").isEqualTo((byte) 1);
            assertThat(b.getShort(8)).as("header size").isEqualTo((short) 64);
            assertThat(b.getShort(10)).as("k (RIBBON: r)").isEqualTo((short) f.hashCount());
            assertThat(b.getInt(12)).as("flags").isZero();
            long m = b.getLong(16);
            long bodyLength = b.getLong(24);
            assertThat(b.getLong(32))
                    .as("expected keys")
                    .isEqualTo(f.expectedKeys())
                    .isEqualTo(1000);
            assertThat(b.getLong(40)).as("key count").isEqualTo(f.keyCount()).isEqualTo(1000);
            assertThat(bytes.length).isEqualTo(64 + bodyLength);
            assertThat(m).isBetween(1L, 1L << 40);
            switch (kind) {
                case STANDARD:
                    assertThat(m % 64).isZero();
                    assertThat(bodyLength).isEqualTo(m / 8);
                    assertThat(m).isEqualTo(f.bitSize());
                    break;
                case PARTITIONED:
                    assertThat(m % f.hashCount()).isZero();
                    assertThat((m / f.hashCount()) % 64).isZero();
                    assertThat(bodyLength).isEqualTo(m / 8);
                    break;
                case BLOCKED:
                    assertThat(m % 512).isZero();
                    assertThat(bodyLength).isEqualTo(m / 8);
                    break;
                case COUNTING:
                    assertThat(m % 16).isZero();
                    assertThat(bodyLength).as("4-bit counters").isEqualTo(m / 2);
                    break;
                case RIBBON: {
                    assertThat(m % 128).isZero();
                    long blocks = m / 128;
                    long upper = Integer.toUnsignedLong(b.getInt(52));
                    assertThat(upper).isBetween(0L, blocks);
                    assertThat(bodyLength).isEqualTo(16 * (blocks * f.hashCount() + upper));
                    assertThat(f.bitSize())
                            .as("RIBBON's bitSize is the solution's bits")
                            .isEqualTo(8 * bodyLength);
                    assertThat(b.getInt(56)).as("reserved").isZero();
                    break;
                }
                default:
                    throw new AssertionError(kind);
            }
            if (kind != FilterKind.RIBBON) {
                for (int i = 48; i < 60; i++) {
                    assertThat(bytes[i]).as("reserved byte %d", i).isZero();
                }
            }
            CRC32C crc = new CRC32C();
            crc.update(bytes, 0, 60);
            crc.update(bytes, 64, bytes.length - 64);
            assertThat(b.getInt(60)).as("CRC32C over [0, 60) then the body").isEqualTo((int) crc.getValue());
        }
    }
}
