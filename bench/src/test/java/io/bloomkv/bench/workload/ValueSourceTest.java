package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.Zstd;
import java.io.ByteArrayOutputStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Values compress to about the asked fraction, as db_bench's compression_ratio. */
class ValueSourceTest {
    @ParameterizedTest
    @ValueSource(doubles = {0.25, 0.5, 0.75, 1.0})
    void valuesCompressToAboutTheRatio(double ratio) {
        io.bloomkv.bench.workload.ValueSource values = new io.bloomkv.bench.workload.ValueSource(100, 7, ratio);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (long id = 0; id < 2000; id++) {
            all.writeBytes(values.value(id, 0));
            assertThat(values.matches(values.value(id, 0), id, 0)).isTrue();
        }
        byte[] raw = all.toByteArray();
        double got = (double) Zstd.compress(raw, 3).length / raw.length;
        // a value is a slice of pieces, so it holds up to two partial pieces: allow some slack above the ratio
        assertThat(got).as("ratio %s", ratio).isBetween(ratio - 0.1, ratio + 0.12);
    }

    @ParameterizedTest
    @ValueSource(doubles = {0, -1, 1.01, Double.NaN})
    void outOfRangeIsRejected(double ratio) {
        assertThatThrownBy(() -> new io.bloomkv.bench.workload.ValueSource(100, 7, ratio))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
