package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ByteFormatTest {

    @Test
    void utf8ShowsTextAndEscapesControlAndInvalidBytes() {
        assertThat(ByteFormat.UTF8.format("grüße".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo("grüße");
        assertThat(ByteFormat.UTF8.format(new byte[] {'a', '\t', 'b', '\n'})).isEqualTo("a\\x09b\\x0a");
        assertThat(ByteFormat.UTF8.format(new byte[] {'a', '\\', 'b'})).isEqualTo("a\\\\b");
        // 0xff can never appear in UTF-8: the whole value is shown byte by byte.
        assertThat(ByteFormat.UTF8.format(new byte[] {'k', (byte) 0xff, 0, 'z'}))
                .isEqualTo("k\\xff\\x00z");
    }

    @Test
    void utf8InputIsLiteral() {
        assertThat(ByteFormat.UTF8.parse("a\\x00")).isEqualTo("a\\x00".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void hexRoundTripsAndAcceptsPrefixAndUpperCase() {
        byte[] b = {0, 1, (byte) 0xab, (byte) 0xff};
        assertThat(ByteFormat.HEX.format(b)).isEqualTo("0001abff");
        assertThat(ByteFormat.HEX.parse("0001abff")).isEqualTo(b);
        assertThat(ByteFormat.HEX.parse("0x0001ABFF")).isEqualTo(b);
        assertThat(ByteFormat.HEX.parse("")).isEmpty();
    }

    @Test
    void malformedHexIsRejected() {
        assertThatThrownBy(() -> ByteFormat.HEX.parse("abc"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("even number");
        assertThatThrownBy(() -> ByteFormat.HEX.parse("zz"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a hex string");
    }
}
