package io.bloomkv.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** bench --filter-budget: its forms, and a percentage applied by the bloomkv engine after a load. */
class FilterBudgetSpecTest {
    @TempDir
    Path dir;

    @Test
    void parsesBytesSuffixesAndPercentages() {
        assertThat(FilterBudgetSpec.parse("").none()).isTrue();
        assertThat(FilterBudgetSpec.parse("4096").bytes()).isEqualTo(4096);
        assertThat(FilterBudgetSpec.parse("2m").bytes()).isEqualTo(2L << 20);
        assertThat(FilterBudgetSpec.parse("512K").bytes()).isEqualTo(512L << 10);
        assertThat(FilterBudgetSpec.parse("25%").percent()).isEqualTo(25.0);
        assertThat(FilterBudgetSpec.parse(FilterBudgetSpec.parse("25%").toString())
                        .percent())
                .isEqualTo(25.0);
        assertThatThrownBy(() -> FilterBudgetSpec.parse("0")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterBudgetSpec.parse("150%")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterBudgetSpec.parse("lots")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPercentageIsTakenOfTheUnboundedFiltersAfterTheLoad() throws IOException {
        EngineSettings s = new EngineSettings(true, 10, "BLOCKED", 4096, 1 << 20, 256 << 10, false)
                .withFilterBudget(FilterBudgetSpec.parse("10%"));
        try (BloomKvEngine e = BloomKvEngine.open(dir, s)) {
            assertThat(e.filterMemoryBudget()).isZero();
            for (int i = 0; i < 20_000; i++) {
                e.put(String.format("key%08d", i).getBytes(StandardCharsets.UTF_8), new byte[50]);
            }
            e.flushAndSettle();
            long budget = e.filterMemoryBudget();
            assertThat(budget).isGreaterThan(0);
            for (int i = 0; i < 2000; i++) {
                assertThat(e.get(String.format("key%08d", i).getBytes(StandardCharsets.UTF_8)))
                        .isNotNull();
            }
            assertThat(Long.parseLong(e.db().property("bloomkv.filter-memory").orElseThrow()))
                    .isLessThanOrEqualTo(budget);
            assertThat(e.tables().filterBytes())
                    .as("resident filters as the bench reports them")
                    .isLessThanOrEqualTo(budget);
        }
    }
}
