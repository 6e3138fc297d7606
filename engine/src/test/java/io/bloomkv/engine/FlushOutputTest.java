package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.compaction.OutputCutter;
import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a flush writes: with {@link Options#tablePartitionPrefixLength} one table per key partition, the range
 * tombstones cut at the same boundaries (the parts between partitions in tables of their own); entries a tombstone of
 * the same memtable hides from every reader, and older versions under a newer one every reader sees, are not written
 * unless a snapshot reads them; a tombstone that overlaps no table below is not written either.
 */
class FlushOutputTest {
    @TempDir
    Path dir;

    @AfterEach
    void noTableLeftOpen() {
        assertThat(TableReader.liveTables()).as("no table left open").isZero();
    }

    private static Options partitioned(int n) {
        return Options.defaults().autoCompaction(false).tablePartitionPrefixLength(n);
    }

    /** "smallest..largest" of each table of {@code level}, in key order. */
    private static List<String> ranges(Db db, int level) {
        List<String> out = new ArrayList<>();
        for (TableInfo t : db.tables()) {
            if (t.level() == level) {
                out.add(str(t.smallestUserKey()) + ".." + str(t.largestUserKey()));
            }
        }
        out.sort(null);
        return out;
    }

    private static long entries(Db db) {
        return db.tables().stream().mapToLong(TableInfo::entries).sum();
    }

    @Test
    void aFlushWritesOneTablePerPartition() {
        try (Db db = Db.open(dir, partitioned(2))) {
            for (String k : List.of("aa1", "aa2", "ab1", "b", "bc1", "bc2", "bc")) {
                db.put(bytes(k), bytes("v-" + k));
            }
            db.flush();
            // "b" is shorter than the prefix: a partition of its own; "bc" and "bc1" share theirs
            assertThat(ranges(db, 0)).containsExactly("aa1..aa2", "ab1..ab1", "b..b", "bc..bc2");
            for (String k : List.of("aa1", "aa2", "ab1", "b", "bc1", "bc2", "bc")) {
                assertThat(str(db.get(bytes(k)))).isEqualTo("v-" + k);
            }
        }
        try (Db db = Db.open(dir.resolve("unpartitioned"), Options.defaults().autoCompaction(false))) {
            for (String k : List.of("aa1", "ab1", "bc1")) {
                db.put(bytes(k), bytes("v"));
            }
            db.flush();
            assertThat(ranges(db, 0)).containsExactly("aa1..bc1");
        }
    }

    @Test
    void tombstonesAreCutAtPartitionBoundariesTooWithTheGapsInTablesOfTheirOwn() {
        try (Db db = Db.open(dir, partitioned(2))) {
            for (String k : List.of("ab5", "bc5", "dd5")) {
                db.put(bytes(k), bytes("old"));
            }
            db.flush(); // the tables below the tombstone
            db.compactRange(null, null);
            db.put(bytes("aa1"), bytes("v"));
            db.put(bytes("ac0"), bytes("covered")); // hidden by the tombstone from every reader: not written
            db.deleteRange(bytes("ab"), bytes("dd"));
            db.put(bytes("ac1"), bytes("v"));
            db.put(bytes("bc2"), bytes("v"));
            db.flush();
            assertThat(ranges(db, 0))
                    .containsExactly(
                            "aa1..aa1", // its partition [aa, ab): no tombstone part
                            "ab..ac", // the part [ab, ac), a table of its own (its bound is the part's end)
                            "ac..ad", // partition ac: ac1 and the part [ac, ad)
                            "ad..bc", // the part [ad, bc)
                            "bc..bd", // partition bc: bc2 and the part [bc, bd)
                            "bd..dd"); // the part [bd, dd)
            assertThat(spanningTwoPartitions(db, 2)).isEmpty();
            assertThat(entries(db) - 3).as("aa1, ac1, bc2: ac0 was not written").isEqualTo(3);
            assertThat(db.get(bytes("ab5"))).isNull();
            assertThat(db.get(bytes("bc5"))).isNull();
            assertThat(db.get(bytes("ac0"))).isNull();
            assertThat(str(db.get(bytes("dd5")))).isEqualTo("old");
            assertThat(str(db.get(bytes("ac1")))).isEqualTo("v");
            assertThat(str(db.get(bytes("bc2")))).isEqualTo("v");
            // The tombstone's tables and the tables it covers whole go without a rewrite.
            assertThat(db.deleteFilesInRange(bytes("ad"), bytes("bc"))).isEqualTo(1);
            assertThat(db.get(bytes("bc5"))).isNull();
        }
    }

    @Test
    void entriesATombstoneHidesFromEveryReaderAreNotWrittenNorIsTheTombstoneWhenNothingIsBelow() {
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false))) {
            for (int i = 0; i < 100; i++) {
                db.put(bytes("b" + i), bytes("v" + i));
            }
            db.deleteRange(bytes("a"), bytes("c"));
            db.put(bytes("b7"), bytes("after"));
            db.flush();
            assertThat(entries(db)).isEqualTo(1);
            assertThat(ranges(db, 0)).as("no tombstone: no table below it").containsExactly("b7..b7");
            assertThat(str(db.get(bytes("b7")))).isEqualTo("after");
            assertThat(db.get(bytes("b8"))).isNull();
        }
    }

    @Test
    void aSnapshotKeepsWhatItReads() {
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false))) {
            db.put(bytes("k"), bytes("v1"));
            db.put(bytes("b1"), bytes("x"));
            Snapshot s = db.getSnapshot();
            db.put(bytes("k"), bytes("v2"));
            db.deleteRange(bytes("a"), bytes("c"));
            db.flush();
            assertThat(entries(db))
                    .as("k v1, k v2 and b1: the snapshot reads v1 and b1")
                    .isEqualTo(3);
            ReadOptions at = ReadOptions.defaults().snapshot(s);
            assertThat(str(db.get(bytes("k"), at))).isEqualTo("v1");
            assertThat(str(db.get(bytes("b1"), at))).isEqualTo("x");
            assertThat(db.get(bytes("b1"))).isNull();
            assertThat(str(db.get(bytes("k")))).isEqualTo("v2");
            s.close();
            db.put(bytes("k"), bytes("v3"));
            db.put(bytes("k"), bytes("v4"));
            db.flush();
            assertThat(entries(db) - 3).as("v3 is under v4 for every reader").isEqualTo(1);
            assertThat(str(db.get(bytes("k")))).isEqualTo("v4");
        }
    }

    /**
     * Random puts, deletes and range deletions over partitions, flushes with and without snapshots open, checked
     * against a model (latest state and each snapshot's) and, when partitioned, that no table with entries spans two
     * partitions (seeded).
     */
    @Test
    void randomFlushesMatchTheModel() {
        long seed = TestKeys.seed("FlushOutputTest");
        Random rnd = new Random(seed);
        for (int n : new int[] {0, 3}) {
            Options o = Options.defaults()
                    .autoCompaction(false)
                    .tablePartitionPrefixLength(n)
                    .fileSystem(new io.bloomkv.engine.fs.InMemoryFileSystem()); // many small flushes, no fsync
            TreeMap<String, String> model = new TreeMap<>();
            List<Snapshot> snaps = new ArrayList<>();
            List<TreeMap<String, String>> snapModels = new ArrayList<>();
            try (Db db = Db.open(dir.resolve("n" + n), o)) {
                for (int step = 0; step < 2000; step++) {
                    String k = "p" + rnd.nextInt(6) + rnd.nextInt(40);
                    int r = rnd.nextInt(100);
                    if (r < 70) {
                        db.put(bytes(k), bytes("v" + step));
                        model.put(k, "v" + step);
                    } else if (r < 85) {
                        db.delete(bytes(k));
                        model.remove(k);
                    } else if (r < 92) {
                        String end = "p" + rnd.nextInt(7);
                        if (end.compareTo(k) > 0) {
                            db.deleteRange(bytes(k), bytes(end));
                            model.subMap(k, end).clear();
                        }
                    } else if (r < 95) {
                        db.flush();
                    } else if (snaps.size() < 3) {
                        snaps.add(db.getSnapshot());
                        snapModels.add(new TreeMap<>(model));
                    } else {
                        int i = rnd.nextInt(snaps.size());
                        assertThat(scan(db, ReadOptions.defaults().snapshot(snaps.get(i))))
                                .as("seed " + seed + ", snapshot")
                                .isEqualTo(snapModels.get(i));
                        snaps.remove(i).close();
                        snapModels.remove(i);
                    }
                }
                db.flush();
                assertThat(scan(db, ReadOptions.defaults())).as("seed " + seed).isEqualTo(model);
                for (Map.Entry<String, String> e : model.entrySet()) {
                    assertThat(str(db.get(bytes(e.getKey()))))
                            .as("seed " + seed)
                            .isEqualTo(e.getValue());
                }
                for (int i = 0; i < snaps.size(); i++) {
                    assertThat(scan(db, ReadOptions.defaults().snapshot(snaps.get(i))))
                            .as("seed " + seed + ", snapshot")
                            .isEqualTo(snapModels.get(i));
                    snaps.get(i).close();
                }
                if (n > 0) {
                    assertThat(spanningTwoPartitions(db, n))
                            .as("seed " + seed + ": tables spanning two partitions")
                            .isEmpty();
                }
            }
        }
    }

    /**
     * Tables with entries whose range passes the end of their smallest key's partition (a table of tombstone parts
     * only may span partitions that hold no key). A tombstone part's bound may be that end
     * itself (the largest key a tombstone covers is written as its end, one key too far when it does not end in 0x00).
     */
    private static TreeSet<String> spanningTwoPartitions(Db db, int n) {
        TreeSet<String> spans = new TreeSet<>();
        for (TableInfo t : db.tables()) {
            byte[] end = OutputCutter.partitionEnd(t.smallestUserKey(), n);
            if (t.entries() > 0 && end != null && java.util.Arrays.compareUnsigned(t.largestUserKey(), end) > 0) {
                spans.add(str(t.smallestUserKey()) + ".." + str(t.largestUserKey()));
            }
        }
        return spans;
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
