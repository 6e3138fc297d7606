package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#deleteFilesInRange}: tables wholly inside the range go (every level, level 0 included), tables straddling
 * it and outside it stay; no data is written; snapshots keep what they read; a range tombstone still hiding an entry
 * of a table that stays is kept; the deletion survives a reopen; open iterators keep their tables; and, randomized
 * (seeded), range drops racing background flushes and compactions keep the database equal to a model.
 */
class DeleteFilesInRangeTest {
    @TempDir
    Path dir;

    @AfterEach
    void noTableLeftOpen() {
        assertThat(TableReader.liveTables()).as("no table left open").isZero();
    }

    /** One table per flush, no background compaction: the tests place tables by hand. */
    private static Options options() {
        return Options.defaults().autoCompaction(false);
    }

    private static void putFlush(Db db, String... keys) {
        for (String k : keys) {
            db.put(bytes(k), bytes("v-" + k));
        }
        db.flush();
    }

    private static List<String> tableRanges(Db db) {
        List<String> out = new ArrayList<>();
        for (TableInfo t : db.tables()) {
            out.add(str(t.smallestUserKey()) + ".." + str(t.largestUserKey()));
        }
        out.sort(null);
        return out;
    }

    private static TreeSet<Long> tableFilesOnDisk(Path d) throws IOException {
        TreeSet<Long> onDisk = new TreeSet<>();
        try (Stream<Path> files = Files.list(d)) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".sst"))
                    .forEach(n -> onDisk.add(Long.parseLong(n.substring(0, n.indexOf('.')))));
        }
        return onDisk;
    }

    private static TreeSet<Long> liveTables(Db db) {
        return db.tables().stream().map(TableInfo::fileNumber).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void tablesInsideGoTablesStraddlingOrOutsideStay() throws IOException {
        try (Db db = Db.open(dir, options())) {
            putFlush(db, "c1", "c5"); // inside [b, d)
            db.compactRange(null, null); // at a deeper level
            assertThat(db.tables().get(0).level()).isPositive();
            putFlush(db, "b1", "b5"); // inside, level 0
            putFlush(db, "a1", "b7"); // straddles the begin
            putFlush(db, "c7", "d1"); // straddles the end
            putFlush(db, "c8", "d"); // ends at the end key itself, which it holds: not inside
            putFlush(db, "e1"); // outside
            long flushedBefore = db.stats().flushBytesWritten();
            long compactedBefore = db.stats().compactionBytesWritten();
            assertThat(db.deleteFilesInRange(bytes("b"), bytes("d"))).isEqualTo(2);
            assertThat(tableRanges(db)).containsExactly("a1..b7", "c7..d1", "c8..d", "e1..e1");
            assertThat(db.stats().flushBytesWritten()).as("no data written").isEqualTo(flushedBefore);
            assertThat(db.stats().compactionBytesWritten()).isEqualTo(compactedBefore);
            for (String gone : List.of("b1", "b5", "c1", "c5")) {
                assertThat(db.get(bytes(gone))).as(gone).isNull();
            }
            for (String kept : List.of("a1", "b7", "c7", "d1", "c8", "d", "e1")) {
                assertThat(str(db.get(bytes(kept)))).as(kept).isEqualTo("v-" + kept);
            }
            assertThat(tableFilesOnDisk(dir))
                    .as("the removed tables' files are deleted")
                    .isEqualTo(liveTables(db));
            assertThat(db.deleteFilesInRange(bytes("b"), bytes("d")))
                    .as("nothing left inside")
                    .isZero();
        }
        try (Db db = Db.open(dir, options())) {
            assertThat(tableRanges(db)).as("after reopen").containsExactly("a1..b7", "c7..d1", "c8..d", "e1..e1");
            assertThat(db.get(bytes("c1"))).isNull();
            assertThat(str(db.get(bytes("b7")))).isEqualTo("v-b7");
            assertThat(tableFilesOnDisk(dir)).isEqualTo(liveTables(db));
        }
    }

    @Test
    void openBoundsAndBadArguments() {
        try (Db db = Db.open(dir, options())) {
            putFlush(db, "a1", "a2");
            putFlush(db, "m1");
            putFlush(db, "z1", "z2");
            assertThat(db.deleteFilesInRange(null, bytes("b"))).isEqualTo(1);
            assertThat(db.deleteFilesInRange(bytes("y"), null)).isEqualTo(1);
            assertThat(tableRanges(db)).containsExactly("m1..m1");
            assertThat(db.deleteFilesInRange(null, null)).isEqualTo(1);
            assertThat(db.tables()).isEmpty();
            assertThatThrownBy(() -> db.deleteFilesInRange(bytes("b"), bytes("a")))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.deleteFilesInRange(new byte[0], bytes("a")))
                    .isInstanceOf(InvalidArgumentException.class);
        }
    }

    @Test
    void withARangeTombstoneFirstReadsDoNotChangeAndSpaceComesBack() throws IOException {
        try (Db db = Db.open(dir, options())) {
            putFlush(db, "a1", "b2"); // straddles [b, c): its b2 stays in the table, hidden by the tombstone
            putFlush(db, "b1", "b5");
            db.put(bytes("b1"), bytes("newer")); // a newer version in another table inside
            db.flush();
            db.put(bytes("b3"), bytes("in-memtable"));
            db.deleteRange(bytes("b"), bytes("c"));
            assertThat(db.deleteFilesInRange(bytes("b"), bytes("c"))).isEqualTo(2);
            assertThat(db.get(bytes("b2"))).isNull();
            assertThat(db.get(bytes("b3"))).isNull();
            assertThat(str(db.get(bytes("a1")))).isEqualTo("v-a1");
            db.flush(); // the tombstone overlaps the straddling table: written, b3 dropped
            assertThat(db.get(bytes("b2"))).isNull();
            assertThat(db.get(bytes("b3"))).isNull();
        }
        try (Db db = Db.open(dir, options())) {
            assertThat(db.get(bytes("b2"))).isNull();
            assertThat(db.get(bytes("b1"))).isNull();
            assertThat(tableFilesOnDisk(dir)).isEqualTo(liveTables(db));
        }
    }

    @Test
    void aloneItRemovesDataAndOlderVersionsLeftInPlaceShowAgain() {
        try (Db db = Db.open(dir, options())) {
            putFlush(db, "a1", "b1"); // b1 = v-b1, in a table straddling [b, c)
            db.put(bytes("b1"), bytes("newer"));
            db.flush();
            assertThat(str(db.get(bytes("b1")))).isEqualTo("newer");
            assertThat(db.deleteFilesInRange(bytes("b"), bytes("c"))).isEqualTo(1);
            assertThat(str(db.get(bytes("b1"))))
                    .as("RocksDB's documented caveat")
                    .isEqualTo("v-b1");
        }
    }

    @Test
    void aSnapshotKeepsTheTablesItCanRead() {
        try (Db db = Db.open(dir, options())) {
            putFlush(db, "b1", "b2");
            Snapshot s = db.getSnapshot();
            putFlush(db, "b3", "b4"); // newer than the snapshot: it cannot read this table
            db.deleteRange(bytes("b"), bytes("c"));
            assertThat(db.deleteFilesInRange(bytes("b"), bytes("c"))).isEqualTo(1);
            assertThat(tableRanges(db)).containsExactly("b1..b2");
            ReadOptions at = ReadOptions.defaults().snapshot(s);
            assertThat(str(db.get(bytes("b1"), at))).isEqualTo("v-b1");
            assertThat(db.get(bytes("b3"), at)).isNull();
            assertThat(db.get(bytes("b1"))).isNull();
            s.close();
            assertThat(db.deleteFilesInRange(bytes("b"), bytes("c"))).isEqualTo(1);
            assertThat(db.tables()).isEmpty();
            assertThat(db.get(bytes("b1"))).isNull();
        }
    }

    @Test
    void aTombstoneThatStillHidesAnEntryOfATableThatStaysIsKept() {
        try (Db db = Db.open(dir, options())) {
            putFlush(db, "a1", "b3"); // straddles [b, c) and holds b3
            db.deleteRange(bytes("b"), bytes("c"));
            db.flush(); // a table of the tombstone only: [b, c], inside the range (it holds no entry of c)
            assertThat(tableRanges(db)).containsExactly("a1..b3", "b..c");
            assertThat(db.deleteFilesInRange(bytes("b"), bytes("c")))
                    .as("the tombstone still hides b3")
                    .isZero();
            assertThat(db.get(bytes("b3"))).isNull();
        }
        try (Db db = Db.open(dir.resolve("other"), options())) {
            putFlush(db, "a1", "a3"); // below the range
            putFlush(db, "b1");
            db.deleteRange(bytes("b"), bytes("c"));
            db.flush();
            assertThat(tableRanges(db)).containsExactly("a1..a3", "b..c", "b1..b1");
            assertThat(db.deleteFilesInRange(bytes("b"), bytes("c")))
                    .as("nothing left for the tombstone to hide: it goes with the table it covers")
                    .isEqualTo(2);
            assertThat(tableRanges(db)).containsExactly("a1..a3");
            assertThat(db.get(bytes("b1"))).isNull();
        }
    }

    @Test
    void openIteratorsKeepReadingTheRemovedTables() throws IOException {
        try (Db db = Db.open(dir, options())) {
            putFlush(db, "b1", "b2");
            long number = liveTables(db).first();
            try (DbIterator it = db.iterator()) {
                db.deleteRange(bytes("b"), bytes("c"));
                assertThat(db.deleteFilesInRange(bytes("b"), bytes("c"))).isEqualTo(1);
                assertThat(tableFilesOnDisk(dir))
                        .as("kept while the iterator reads it")
                        .contains(number);
                it.seekToFirst();
                assertThat(str(it.key())).isEqualTo("b1");
                it.next();
                assertThat(str(it.key())).isEqualTo("b2");
            }
            db.put(bytes("x"), bytes("y"));
            db.flush(); // a later version change deletes what no reader holds
            assertThat(tableFilesOnDisk(dir)).doesNotContain(number);
        }
    }

    @Test
    void aReadOnlyDatabaseRefuses() {
        try (Db db = Db.open(dir, options())) {
            putFlush(db, "b1");
        }
        try (Db db = Db.open(dir, options().readOnly(true))) {
            assertThatThrownBy(() -> db.deleteFilesInRange(bytes("b"), bytes("c")))
                    .isInstanceOf(DbReadOnlyException.class);
        }
    }

    /**
     * Random writes over 8 key prefixes with background flushes and compactions, tables partitioned by prefix, and now
     * and then a prefix dropped (range tombstone, then its files, as the Kafka Streams stores expire segments), a
     * snapshot read or a reopen: the database equals a model throughout, and no table file is left that it does not
     * name.
     */
    @Test
    void rangeDropsRacingBackgroundWorkKeepTheModel() throws IOException {
        long seed = TestKeys.seed("DeleteFilesInRangeTest");
        Random rnd = new Random(seed);
        Options o = Options.defaults()
                .writeBufferSize(32 << 10)
                .l0CompactionTrigger(2)
                .targetFileSize(16 << 10)
                .tablePartitionPrefixLength(2);
        TreeMap<String, String> model = new TreeMap<>();
        long removed = 0;
        Db db = Db.open(dir, o);
        try {
            for (int step = 0; step < 6000; step++) {
                int r = rnd.nextInt(1000);
                if (r < 985) {
                    String k = "p" + rnd.nextInt(8) + String.format("%05d", rnd.nextInt(400));
                    String v = "v" + step + "x".repeat(rnd.nextInt(60));
                    db.put(bytes(k), bytes(v));
                    model.put(k, v);
                } else if (r < 995) {
                    String p = "p" + rnd.nextInt(8);
                    String end = "p" + (char) (p.charAt(1) + 1 + rnd.nextInt(2));
                    db.deleteRange(bytes(p), bytes(end));
                    removed += db.deleteFilesInRange(bytes(p), bytes(end));
                    model.subMap(p, end).clear();
                } else if (r < 998) {
                    try (Snapshot s = db.getSnapshot()) {
                        TreeMap<String, String> at = new TreeMap<>(model);
                        String p = "p" + rnd.nextInt(8);
                        db.deleteRange(bytes(p), bytes(p + "~"));
                        removed += db.deleteFilesInRange(bytes(p), bytes(p + "~"));
                        model.subMap(p, p + "~").clear();
                        assertThat(scan(db, ReadOptions.defaults().snapshot(s)))
                                .as("seed " + seed + ": a snapshot reads what it read before")
                                .isEqualTo(at);
                    }
                } else {
                    db.close();
                    db = Db.open(dir, o);
                }
                if (step % 500 == 0) {
                    assertThat(scan(db, ReadOptions.defaults()))
                            .as("seed " + seed + " step " + step)
                            .isEqualTo(model);
                }
            }
            db.waitForBackgroundWork();
            assertThat(scan(db, ReadOptions.defaults())).as("seed " + seed).isEqualTo(model);
            for (Map.Entry<String, String> e : model.entrySet()) {
                assertThat(str(db.get(bytes(e.getKey())))).isEqualTo(e.getValue());
            }
            assertThat(removed).as("seed " + seed + ": tables were removed").isPositive();
            db.close();
            db = Db.open(dir, o);
            db.waitForBackgroundWork(); // a compaction started by the reopen has an output file not yet in the Version
            assertThat(scan(db, ReadOptions.defaults()))
                    .as("seed " + seed + ", reopened")
                    .isEqualTo(model);
            assertThat(tableFilesOnDisk(dir)).isEqualTo(liveTables(db));
            System.out.println("DeleteFilesInRangeTest seed " + seed + ": " + removed + " tables removed");
        } finally {
            db.close();
        }
    }

    private static TreeMap<String, String> scan(Db db, ReadOptions ro) {
        TreeMap<String, String> out = new TreeMap<>();
        try (DbIterator it = db.iterator(ro)) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                out.put(str(it.key()), str(it.value()));
            }
        }
        return out;
    }
}
