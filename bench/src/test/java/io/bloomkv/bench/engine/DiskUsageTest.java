package io.bloomkv.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.workload.KeySpace;
import io.bloomkv.bench.workload.ValueSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.RocksIterator;

/**
 * "SST bytes on disk" counts the live tables on both engines: bloomkv sums its live tables' file sizes, so RocksDB's
 * figure must not include the files of older versions that an open iterator (or a job finishing) still pins.
 */
class DiskUsageTest {
    private static final EngineSettings SETTINGS =
            new EngineSettings(true, 10, "BLOCKED", 4096, 64 * 1024, 64L << 20, false);

    /** Three flushed level-0 tables of interleaved keys (below the level-0 trigger: no compaction yet). */
    private static void loadThreeTables(BenchEngine e, KeySpace ks) throws Exception {
        ValueSource values = new ValueSource(100, 1);
        for (int part = 0; part < 3; part++) {
            List<byte[]> keys = new ArrayList<>();
            List<byte[]> vals = new ArrayList<>();
            for (long i = part; i < ks.num(); i += 3) {
                keys.add(ks.key(ks.loadedId(i)));
                vals.add(values.value(ks.loadedId(i), 0));
            }
            e.putAll(keys, vals);
            e.flushAndSettle();
        }
    }

    @Test
    void rocksdbCountsOnlyTheLiveTablesWhileAnIteratorPinsTheOldOnes(@TempDir Path dir) throws Exception {
        KeySpace ks = new KeySpace(8_000, 16);
        try (RocksDbEngine e = (RocksDbEngine) EngineFactory.open("rocksdb", dir.resolve("r"), SETTINGS)) {
            loadThreeTables(e, ks);
            long before = e.tables().sstBytes();
            assertThat(e.tables().tableCount()).isEqualTo(3);
            try (RocksIterator pin = e.rocksDb().newIterator()) {
                pin.seekToFirst();
                e.compactAll();
                long live = e.rocksDb().getLiveFilesMetaData().stream()
                        .mapToLong(LiveFileMetaData::size)
                        .sum();
                assertThat(e.rocksDb().getLongProperty("rocksdb.total-sst-files-size"))
                        .as("the pinned tables are still on disk")
                        .isGreaterThan(live);
                assertThat(e.tables().sstBytes()).isEqualTo(live).isLessThan(before + live);
            }
        }
    }
}
