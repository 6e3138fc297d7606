package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

@ExtendWith(OffHeapLeakCheck.class)
class SerializationTest {
    @TempDir
    Path dir;

    private static Filter filled(FilterKind kind, int n) {
        return TestKeys.filled(kind, n, 10);
    }

    private static void assertSameAnswers(Filter original, Filter copy, int n) {
        assertThat(copy.kind()).isEqualTo(original.kind());
        assertThat(copy.hashCount()).isEqualTo(original.hashCount());
        assertThat(copy.bitSize()).isEqualTo(original.bitSize());
        assertThat(copy.expectedKeys()).isEqualTo(original.expectedKeys());
        assertThat(copy.keyCount()).isEqualTo(original.keyCount());
        assertThat(copy.expectedFpp()).isEqualTo(original.expectedFpp());
        assertThat(copy.fractionOfBitsSet()).isEqualTo(original.fractionOfBitsSet());
        for (int i = 0; i < 3 * n; i++) {
            byte[] key = TestKeys.longKey(i);
            assertThat(copy.mightContain(key)).isEqualTo(original.mightContain(key));
        }
        assertThat(copy.toByteArray()).isEqualTo(original.toByteArray());
    }

    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void roundTripByCopy(FilterKind kind) throws IOException {
        try (Filter f = filled(kind, 2000)) {
            byte[] bytes = f.toByteArray();
            assertThat((long) bytes.length).isEqualTo(f.serializedSize());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            f.writeTo(out);
            assertThat(out.toByteArray()).isEqualTo(bytes);

            byte[] padded = new byte[bytes.length + 10];
            System.arraycopy(bytes, 0, padded, 7, bytes.length);
            try (Filter a = Filters.read(padded, 7, bytes.length);
                    Filter b = Filters.read(ByteBuffer.wrap(bytes));
                    Filter c = Filters.read(
                            ByteBuffer.allocateDirect(bytes.length).put(bytes).flip())) {
                assertSameAnswers(f, a, 2000);
                assertSameAnswers(f, b, 2000);
                assertSameAnswers(f, c, 2000);
                if (kind.isStatic()) {
                    assertThatThrownBy(() -> a.add(TestKeys.longKey(-1))).isInstanceOf(IllegalStateException.class);
                } else {
                    a.add(TestKeys.longKey(-1));
                    assertThat(a.mightContain(TestKeys.longKey(-1))).isTrue();
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void roundTripByMapping(FilterKind kind) throws IOException {
        try (Filter f = filled(kind, 2000)) {
            byte[] bytes = f.toByteArray();
            byte[] file = new byte[123 + bytes.length + 45];
            Arrays.fill(file, (byte) 0x5A);
            System.arraycopy(bytes, 0, file, 123, bytes.length);
            Path p = dir.resolve("table-" + kind);
            Files.write(p, file);
            Filter mapped = Filters.map(p, 123, bytes.length);
            try {
                assertSameAnswers(f, mapped, 2000);
                assertThat(mapped.sizeInBytes()).isEqualTo(bytes.length);
                assertThatThrownBy(() -> mapped.add(TestKeys.longKey(1)))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageFindingMatch("read-only|immutable");
            } finally {
                mapped.close();
                mapped.close();
            }
            assertThatThrownBy(() -> mapped.mightContain(1L)).isInstanceOf(IllegalStateException.class);
            Files.delete(p);
        }
    }

    @Test
    void headerLayoutIsLittleEndianAsDocumented() {
        try (Filter f = filled(FilterKind.BLOCKED, 1000)) {
            ByteBuffer b = ByteBuffer.wrap(f.toByteArray()).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(Arrays.copyOf(b.array(), 4)).containsExactly('B', 'K', 'V', 'F');
            assertThat(b.getShort(4)).isEqualTo((short) 1);
            assertThat(b.get(6)).isEqualTo((byte) 3);
            assertThat(b.get(7)).isEqualTo((byte) 1);
            assertThat(b.getShort(8)).isEqualTo((short) 64);
            assertThat(b.getShort(10)).isEqualTo((short) f.hashCount());
            assertThat(b.getLong(16)).isEqualTo(f.bitSize());
            assertThat(b.getLong(24)).isEqualTo(f.bitSize() / 8);
            assertThat(b.getLong(32)).isEqualTo(1000);
            assertThat(b.getLong(40)).isEqualTo(1000);
            assertThat(b.capacity()).isEqualTo(64 + f.bitSize() / 8);
        }
    }

    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void everyHeaderByteFlippedIsAClearError(FilterKind kind) throws IOException {
        byte[] good;
        try (Filter f = filled(kind, 500)) {
            good = f.toByteArray();
        }
        for (int i = 0; i < FilterHeader.HEADER_SIZE; i++) {
            for (int mask : new int[] {0x01, 0x80, 0xFF}) {
                byte[] bad = good.clone();
                bad[i] ^= (byte) mask;
                int at = i;
                assertThatThrownBy(() -> Filters.read(bad, 0, bad.length).close())
                        .as("byte %d ^ 0x%02x", at, mask)
                        .isInstanceOf(FilterFormatException.class)
                        .hasMessageFindingMatch(
                                "magic|version|kind|hash|header|flags|reserved|bit size|counter count|body length|region|CRC32C|key count|multiple|upper block|result bits|slot count");
            }
        }
        // the mapped path validates the same way
        byte[] bad = good.clone();
        bad[FilterHeader.OFF_KIND] = 9;
        Path p = dir.resolve("bad");
        Files.write(p, bad);
        assertThatThrownBy(() -> Filters.map(p, 0, bad.length))
                .isInstanceOf(FilterFormatException.class)
                .hasMessageContaining("unknown filter kind code 9");
    }

    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void aFlippedBodyBitFailsTheCrc(FilterKind kind) throws IOException {
        byte[] good;
        try (Filter f = filled(kind, 500)) {
            good = f.toByteArray();
        }
        long seed = TestKeys.seed("bloom.serialization.seed");
        SplittableRandom random = new SplittableRandom(seed);
        for (int trial = 0; trial < 20; trial++) {
            byte[] bad = good.clone();
            int bit = FilterHeader.HEADER_SIZE * 8 + random.nextInt((bad.length - FilterHeader.HEADER_SIZE) * 8);
            bad[bit / 8] ^= (byte) (1 << (bit % 8));
            assertThatThrownBy(() -> Filters.read(bad, 0, bad.length).close())
                    .as("bit %d, seed %d", bit, seed)
                    .isInstanceOf(FilterFormatException.class)
                    .hasMessageContaining("CRC32C mismatch");
            Path p = dir.resolve("flipped");
            Files.write(p, bad);
            assertThatThrownBy(() -> Filters.map(p, 0, bad.length))
                    .isInstanceOf(FilterFormatException.class)
                    .hasMessageContaining("CRC32C mismatch");
        }
    }

    @Test
    void wrongLengthsAreClearErrors() throws IOException {
        byte[] good;
        try (Filter f = filled(FilterKind.STANDARD, 500)) {
            good = f.toByteArray();
        }
        assertThatThrownBy(() -> Filters.read(good, 0, 10))
                .isInstanceOf(FilterFormatException.class)
                .hasMessageContaining("truncated");
        assertThatThrownBy(() -> Filters.read(good, 0, good.length - 1))
                .isInstanceOf(FilterFormatException.class)
                .hasMessageContaining("header says");
        byte[] longer = Arrays.copyOf(good, good.length + 8);
        assertThatThrownBy(() -> Filters.read(longer, 0, longer.length))
                .isInstanceOf(FilterFormatException.class)
                .hasMessageContaining("header says");
        Path p = dir.resolve("short");
        Files.write(p, good);
        assertThatThrownBy(() -> Filters.map(p, 8, good.length))
                .isInstanceOf(FilterFormatException.class)
                .hasMessageContaining("beyond the end");
        assertThatThrownBy(() -> Filters.read(new byte[0], 0, 0)).isInstanceOf(FilterFormatException.class);
        assertThatThrownBy(() -> Filters.map(p, 0, 10))
                .isInstanceOf(FilterFormatException.class)
                .hasMessageContaining("truncated");
    }
}
