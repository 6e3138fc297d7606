package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Golden XXH3-64 (seed 0) values, computed with the reference C implementation (libxxhash 0.8.1,
 * XXH3_64bits). They pin hash version 1: serialized filters depend on them. The inputs cover every length
 * class of XXH3 (0, 1-3, 4-8, 9-16, 17-128, 129-240, > 240 bytes).
 */
class HashingTest {

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] pattern(int len, int mod) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (i % mod);
        }
        return b;
    }

    @Test
    void goldenValues() {
        assertThat(Hashing.hash64(new byte[0])).isEqualTo(0x2D06800538D394C2L);
        assertThat(Hashing.hash64(ascii("a"))).isEqualTo(0xE6C632B61E964E1FL);
        assertThat(Hashing.hash64(ascii("abc"))).isEqualTo(0x78AF5F94892F3950L);
        assertThat(Hashing.hash64(ascii("bloomkv"))).isEqualTo(0x121CF26DFF551751L);
        assertThat(Hashing.hash64(TestKeys.longKey(42))).isEqualTo(0xD5A6F8C838DF27C8L);
        assertThat(Hashing.hash64(ascii("key0000000000001"))).isEqualTo(0x41E5CF6A2FF37AEBL);
        assertThat(Hashing.hash64(pattern(100, 256))).isEqualTo(0x004E4F921A64BD1CL);
        assertThat(Hashing.hash64(pattern(200, 256))).isEqualTo(0xF42A8864FEAF0703L);
        assertThat(Hashing.hash64(pattern(1000, 251))).isEqualTo(0x33EF703FB2B20ED1L);
    }

    @Test
    void sliceHashEqualsWholeArrayHash() {
        byte[] padded = new byte[3 + 16 + 5];
        byte[] key = ascii("key0000000000001");
        System.arraycopy(key, 0, padded, 3, key.length);
        assertThat(Hashing.hash64(padded, 3, key.length)).isEqualTo(0x41E5CF6A2FF37AEBL);
    }

    @Test
    void addByKeyEqualsAddByHash() {
        byte[] key = ascii("bloomkv");
        try (Filter byKey = Filters.create(FilterKind.STANDARD, 100, 10);
                Filter byHash = Filters.create(FilterKind.STANDARD, 100, 10)) {
            byKey.add(key);
            byHash.add(Hashing.hash64(key));
            assertThat(byKey.toByteArray()).isEqualTo(byHash.toByteArray());
            assertThat(byHash.mightContain(key)).isTrue();
        }
    }
}
