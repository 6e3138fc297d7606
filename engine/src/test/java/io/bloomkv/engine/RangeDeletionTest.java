package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Range deletions' costs: no filter probe or block read for a covered key, whole tables dropped, tombstones gone at the
 * bottom; a get of a key outside every tombstone's span takes the plain path, with the same answers at the edges.
 */
class RangeDeletionTest {
    @TempDir
    Path dir;

    @Test
    void aCoveredKeyCostsNoFilterProbeAndNoBlockRead() {
        try (Db db = Db.open(dir, Options.defaults().blockCacheSize(0).autoCompaction(false))) {
            for (int i = 0; i < 2000; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
            }
            db.flush();
            db.compactRange(null, null);
            db.deleteRange(TestKeys.key(500), TestKeys.key(1500)); // one write, whatever the number of keys
            Stats before = db.stats();
            for (int i = 500; i < 1500; i++) {
                assertThat(db.get(TestKeys.key(i))).isNull();
            }
            List<byte[]> keys = new ArrayList<>();
            for (int i = 600; i < 700; i++) {
                keys.add(TestKeys.key(i));
            }
            assertThat(db.multiGet(keys)).containsOnlyNulls();
            Stats after = db.stats();
            assertThat(after.filterChecks() - before.filterChecks())
                    .as("filter probes")
                    .isZero();
            assertThat(after.dataBlockAccesses() - before.dataBlockAccesses())
                    .as("data blocks searched")
                    .isZero();
            assertThat(after.blockReads() - before.blockReads())
                    .as("blocks read")
                    .isZero();
            assertThat(after.rangeTombstoneSkips() - before.rangeTombstoneSkips())
                    .isEqualTo(1100);
            assertThat(TestKeys.str(db.get(TestKeys.key(1500)))).isEqualTo("v1500");
            assertThat(TestKeys.str(db.get(TestKeys.key(499)))).isEqualTo("v499");
            db.flush(); // the tombstone now in a level-0 table: still no block of the older table
            before = db.stats();
            assertThat(db.get(TestKeys.key(1000))).isNull();
            assertThat(db.stats().dataBlockAccesses() - before.dataBlockAccesses())
                    .isZero();
        }
    }

    /** A key of {@code segment} (the 1-byte prefix) and {@code i}. */
    private static byte[] segmentKey(int segment, int i) {
        byte[] k = TestKeys.key(i);
        byte[] out = new byte[k.length + 1];
        out[0] = (byte) segment;
        System.arraycopy(k, 0, out, 1, k.length);
        return out;
    }

    @Test
    void partitionedTablesHoldOnePrefixEachAndAWholePrefixDeletionDropsThemUnread() {
        try (Db db = Db.open(
                dir,
                Options.defaults()
                        .compression(Compression.NONE)
                        .autoCompaction(false)
                        .tablePartitionPrefixLength(1))) {
            for (int segment = 0; segment < 4; segment++) {
                for (int i = 0; i < 500; i++) {
                    db.put(segmentKey(segment, i), new byte[32]);
                }
            }
            db.flush();
            db.compactRange(null, null);
            List<TableInfo> tables = db.tables();
            assertThat(tables)
                    .as("one table per prefix (the 64 MiB target is far)")
                    .hasSize(4);
            for (TableInfo t : tables) {
                assertThat(t.smallestUserKey()[0])
                        .as("a table never mixes two prefixes")
                        .isEqualTo(t.largestUserKey()[0]);
            }
            db.deleteRange(new byte[] {0}, new byte[] {2}); // segments 0 and 1, one tombstone
            db.flush();
            db.compactRange(null, null);
            assertThat(db.stats().tablesDroppedByRangeDeletion())
                    .as("both tables dropped unread")
                    .isEqualTo(2);
            assertThat(db.tables()).hasSize(2);
            assertThat(db.get(segmentKey(1, 7))).isNull();
            assertThat(db.get(segmentKey(2, 7))).hasSize(32);
        }
    }

    @Test
    void compactionDropsCoveredTablesAndBottomTombstones() {
        // zero values compress to nothing under the default LZ4: NONE keeps the tables as large as the keys make them
        try (Db db = Db.open(
                dir,
                Options.defaults()
                        .compression(Compression.NONE)
                        .autoCompaction(false)
                        .targetFileSize(16 << 10))) {
            for (int i = 0; i < 4000; i++) {
                db.put(TestKeys.key(i), new byte[64]);
            }
            db.flush();
            db.compactRange(null, null);
            int tables = db.tables().size();
            assertThat(tables).as("several tables at the bottom").isGreaterThan(3);
            db.deleteRange(TestKeys.key(0), TestKeys.key(3000));
            db.flush();
            db.compactRange(null, null);
            assertThat(db.stats().tablesDroppedByRangeDeletion())
                    .as("tables inside the range dropped unread")
                    .isPositive();
            long entries = 0;
            for (TableInfo t : db.tables()) {
                entries += t.entries();
            }
            assertThat(entries).as("only the keys outside the range are left").isEqualTo(1000);
            try (DbIterator it = db.iterator()) {
                it.seekToFirst();
                assertThat(it.key()).isEqualTo(TestKeys.key(3000));
            }
        }
        // Reopened: the tombstone is gone from the last level (no table's range reaches below the first key left).
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(db.get(TestKeys.key(10))).isNull();
            assertThat(db.get(TestKeys.key(3999))).isNotNull();
            assertThat(db.tables())
                    .allSatisfy(
                            t -> assertThat(java.util.Arrays.compareUnsigned(t.smallestUserKey(), TestKeys.key(3000)))
                                    .as("table starts at or after the first key left")
                                    .isGreaterThanOrEqualTo(0));
        }
    }

    /**
     * Gets decide by the tombstones' key span whether to weigh them (SuperVersion.rangeTombstonesMayCover): keys just
     * below a begin, at it, inside, at the (exclusive) end and past it, with tombstones in a table and in the memtable,
     * read as the model says, now and at a snapshot taken before the tombstones.
     */
    @Test
    void getsAtTheEdgesOfTombstoneSpansAnswerAsTheModel() {
        try (Db db = Db.open(dir.resolve("edges"), Options.defaults())) {
            String[] keys = {"a", "az", "b", "c", "d", "da", "l", "m", "o", "p", "pa", "z"};
            for (String k : keys) {
                db.put(TestKeys.bytes(k), TestKeys.bytes("v-" + k));
            }
            try (Snapshot before = db.getSnapshot()) {
                db.deleteRange(TestKeys.bytes("b"), TestKeys.bytes("d"));
                db.flush(); // [b, d) now in a table
                db.deleteRange(TestKeys.bytes("m"), TestKeys.bytes("p")); // [m, p) in the memtable
                db.put(TestKeys.bytes("c"), TestKeys.bytes("again")); // newer than its tombstone
                java.util.Set<String> deleted = java.util.Set.of("b", "m", "o");
                for (String k : keys) {
                    String expected = k.equals("c") ? "again" : deleted.contains(k) ? null : "v-" + k;
                    assertThat(TestKeys.str(db.get(TestKeys.bytes(k))))
                            .as("get " + k)
                            .isEqualTo(expected);
                    assertThat(TestKeys.str(db.get(
                                    TestKeys.bytes(k), ReadOptions.defaults().snapshot(before))))
                            .as("get " + k + " at the snapshot")
                            .isEqualTo("v-" + k);
                }
                assertThat(db.multiGet(List.of(TestKeys.bytes("az"), TestKeys.bytes("b"), TestKeys.bytes("p"))))
                        .extracting(TestKeys::str)
                        .containsExactly("v-az", null, "v-p");
            }
        }
    }
}
