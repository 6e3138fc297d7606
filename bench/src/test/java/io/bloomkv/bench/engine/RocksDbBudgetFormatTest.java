package io.bloomkv.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.ValueSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bench --filter-budget as a percentage: RocksDB writes its tables in the budgeted format (partitioned filters,
 * two-level index) from the load on, before the budget's bytes are known, as bloomkv writes partitioned filters during
 * its load; tables written with full filter blocks would be read whole through the budget's cache at each miss. Without
 * a budget the index stays one-level.
 */
class RocksDbBudgetFormatTest {
    private static void load(BenchEngine e, KeySpace ks) throws Exception {
        ValueSource values = new ValueSource(100, 1);
        List<byte[]> keys = new ArrayList<>();
        List<byte[]> vals = new ArrayList<>();
        for (long i = 0; i < ks.num(); i++) {
            keys.add(ks.key(ks.loadedId(i)));
            vals.add(values.value(ks.loadedId(i), 0));
        }
        e.putAll(keys, vals);
        e.flushAndSettle();
    }

    @Test
    void aPercentageBudgetWritesPartitionedTablesFromTheLoadOn(@TempDir Path dir) throws Exception {
        KeySpace ks = new KeySpace(20_000, 16);
        EngineSettings plain = new EngineSettings(true, 10, "BLOCKED", 4096, 64 * 1024, 64L << 20, false);
        try (RocksDbEngine e = (RocksDbEngine) EngineFactory.open(
                "rocksdb", dir.resolve("budget"), plain.withFilterBudget(FilterBudgetSpec.parse("25%")))) {
            load(e, ks);
            assertThat(e.filterMemoryBudget())
                    .as("the share, measured after the load")
                    .isPositive();
            assertThat(e.describe()).contains("partition_filters");
            List<Long> partitions = e.indexPartitionsPerTable();
            assertThat(partitions).isNotEmpty().allSatisfy(n -> assertThat(n).isPositive());
            for (long i = 0; i < ks.num(); i += 97) {
                assertThat(e.get(ks.key(ks.loadedId(i)))).isNotNull();
            }
        }
        try (RocksDbEngine e = (RocksDbEngine) EngineFactory.open("rocksdb", dir.resolve("none"), plain)) {
            load(e, ks);
            assertThat(e.indexPartitionsPerTable())
                    .isNotEmpty()
                    .allSatisfy(n -> assertThat(n).isZero());
        }
    }
}
