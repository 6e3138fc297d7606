package io.bloomkv.bench.fpr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.FilterKind;
import java.util.List;
import org.junit.jupiter.api.Test;

class FprSweepTest {

    @Test
    void measuresEveryKindAndSettingCloseToTheory() throws Exception {
        FprSweep.Config config =
                new FprSweep.Config(List.of(FilterKind.values()), new double[] {6, 10}, 20_000, 400_000, 7, false);
        List<FprSweep.Row> rows = FprSweep.run(config, 2);
        assertThat(rows).hasSize(10);
        for (FprSweep.Row r : rows) {
            // 400,000 queries at p >= 0.8%: binomial sigma <= 5% of p; the filter's own spread adds a little
            assertThat(r.measured()).as(r.toString()).isBetween(0.8 * r.theoretical(), 1.2 * r.theoretical());
            assertThat(r.queries()).isEqualTo(400_000);
            assertThat(r.bitsPerKeyActual()).isGreaterThanOrEqualTo(r.bitsPerKey());
        }
        assertThat(rows.get(0).kind()).isEqualTo(FilterKind.STANDARD);
        assertThat(rows.get(0).k()).isEqualTo(4);
        FprSweep.Row counting = rows.get(7);
        assertThat(counting.kind()).isEqualTo(FilterKind.COUNTING);
        assertThat(counting.memoryBitsPerKey())
                .isCloseTo(4 * counting.bitsPerKeyActual(), org.assertj.core.api.Assertions.within(0.01));
        FprSweep.Row ribbon = rows.get(8);
        assertThat(ribbon.kind()).isEqualTo(FilterKind.RIBBON);
        // RIBBON at 6 bits per key beats BLOCKED at 6 by about 3x
        assertThat(ribbon.theoretical()).isLessThan(rows.get(4).theoretical() / 2);
        String table = FprSweep.toMarkdown(rows);
        assertThat(table)
                .startsWith("| kind | bits/key | k |")
                .contains("| BLOCKED | 10 |")
                .contains("| RIBBON | 6 |")
                .hasLineCount(12);
    }

    @Test
    void sameSeedSameRows() {
        FprSweep.Row a = FprSweep.measure(FilterKind.BLOCKED, 8, 5_000, 50_000, 3, false);
        FprSweep.Row b = FprSweep.measure(FilterKind.BLOCKED, 8, 5_000, 50_000, 3, false);
        assertThat(a).isEqualTo(b);
    }

    @Test
    void rejectsEmptyConfig() {
        assertThatThrownBy(() -> new FprSweep.Config(List.of(), new double[] {10}, 1, 1, 1, false))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
