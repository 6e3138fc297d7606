package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a reopened database holds when {@link Db#open} returns: every write the WAL replayed is already in a level-0
 * table (as RocksDB, which flushes recovered memtables during open unless avoid_flush_during_recovery), so the first
 * gets after a restart read tables, not a memtable a background flush is still writing out.
 */
class RecoverySettledTest {

    @Test
    void openReturnsWithTheReplayedWritesInTablesAndAnEmptyMemtable(@TempDir Path dir) {
        int n = 5000;
        try (Db db = Db.open(dir, Options.defaults())) {
            for (int i = 0; i < n; i++) {
                db.put(key(i), value(i));
            }
            assertThat(db.stats().memtableEntries()).isEqualTo(n);
        } // closed without a flush: the writes are only in the WAL
        try (Db db = Db.open(dir, Options.defaults())) {
            Stats s = db.stats();
            assertThat(s.memtableEntries())
                    .as("nothing left to flush in the background")
                    .isZero();
            assertThat(s.immutableMemtables()).isZero();
            assertThat(db.tables()).isNotEmpty();
            for (int i = 0; i < n; i++) {
                assertThat(db.get(key(i))).isEqualTo(value(i));
            }
        }
    }

    private static byte[] key(int i) {
        return String.format("key%08d", i).getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] value(int i) {
        return ("value-" + i).repeat(8).getBytes(StandardCharsets.US_ASCII);
    }
}
