package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A flush writes no entry a reader could see (RocksDB's flush drops them too): values overwritten under a newer put
 * or delete that every reader sees, and entries under a range tombstone of the same memtable that every reader
 * sees; what a live snapshot still reads is kept. Checked by counts on small cases, then against a model at every
 * live snapshot on random puts, deletes, range deletions, snapshots and flushes. Replay with -Dbloomkv.seed=N.
 */
class FlushDropsHiddenEntriesTest {
    @TempDir
    Path dir;

    private static long entries(Db db) {
        return db.tables().stream().mapToLong(TableInfo::entries).sum();
    }

    @Test
    void overwrittenValuesAreNotFlushed() {
        try (Db db = Db.open(dir, Options.defaults())) {
            for (int i = 0; i < 20; i++) {
                for (int v = 0; v < 30; v++) {
                    db.put(TestKeys.key(i), bytes("v" + v));
                }
            }
            db.put(bytes("gone"), bytes("x"));
            db.delete(bytes("gone"));
            db.flush();
            assertThat(entries(db)).as("one entry per key: the newest").isEqualTo(21);
            assertThat(str(db.get(TestKeys.key(7)))).isEqualTo("v29");
            assertThat(db.get(bytes("gone"))).isNull();
        }
    }

    @Test
    void theFlushOfARecoveredLogDropsTheSameEntries() {
        try (Db db = Db.open(dir, Options.defaults())) {
            for (int v = 0; v < 30; v++) {
                db.put(bytes("a"), bytes("v" + v));
                db.put(bytes("b"), bytes("w" + v));
            }
            db.delete(bytes("b"));
        }
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(str(db.get(bytes("a")))).isEqualTo("v29");
            assertThat(db.get(bytes("b"))).isNull();
            db.flush();
            assertThat(entries(db)).as("a's newest value and b's delete").isEqualTo(2);
        }
    }

    @Test
    void aDeleteStillHidesTheValueOfAnOlderTable() {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put(bytes("k"), bytes("old"));
            db.flush();
            db.put(bytes("k"), bytes("newer"));
            db.delete(bytes("k"));
            db.flush();
            assertThat(entries(db)).as("the old value, and the delete over it").isEqualTo(2);
            assertThat(db.get(bytes("k"))).isNull();
        }
    }

    @Test
    void aSnapshotKeepsWhatItReads() {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put(bytes("k"), bytes("a"));
            db.put(bytes("k"), bytes("b"));
            try (Snapshot s = db.getSnapshot()) {
                db.put(bytes("k"), bytes("c"));
                db.put(bytes("k"), bytes("d"));
                db.flush();
                // d (newest), c (not hidden from the snapshot's point of view by anything it sees: kept, as LevelDB and
                // RocksDB keep it without snapshot stripes), b (what the snapshot reads); a is under b, hidden for all.
                assertThat(entries(db)).isEqualTo(3);
                assertThat(str(db.get(bytes("k"), ReadOptions.defaults().snapshot(s))))
                        .isEqualTo("b");
                assertThat(str(db.get(bytes("k")))).isEqualTo("d");
            }
        }
    }

    @Test
    void entriesUnderARangeTombstoneOfTheSameMemtableAreNotFlushed() {
        try (Db db = Db.open(dir, Options.defaults())) {
            for (int i = 0; i < 100; i++) {
                db.put(TestKeys.key(i), bytes("v" + i));
            }
            db.deleteRange(TestKeys.key(10), TestKeys.key(60));
            db.put(TestKeys.key(20), bytes("after")); // newer than the tombstone: kept
            db.flush();
            assertThat(entries(db)).isEqualTo(100 - 50 + 1);
            assertThat(db.get(TestKeys.key(15))).isNull();
            assertThat(str(db.get(TestKeys.key(20)))).isEqualTo("after");
            assertThat(str(db.get(TestKeys.key(60)))).isEqualTo("v60");
        }
        try (Db db = Db.open(dir.resolve("snap"), Options.defaults())) {
            for (int i = 0; i < 100; i++) {
                db.put(TestKeys.key(i), bytes("v" + i));
            }
            try (Snapshot s = db.getSnapshot()) {
                db.deleteRange(TestKeys.key(10), TestKeys.key(60));
                db.flush();
                assertThat(entries(db))
                        .as("the snapshot still reads the covered keys")
                        .isEqualTo(100);
                assertThat(str(db.get(TestKeys.key(15), ReadOptions.defaults().snapshot(s))))
                        .isEqualTo("v15");
                assertThat(db.get(TestKeys.key(15))).isNull();
            }
        }
    }

    @Test
    void randomWritesReadTheSameAtEverySnapshotAfterFlushes() {
        long seed = TestKeys.seed("FlushDropsHiddenEntriesTest");
        Random rnd = new Random(seed);
        for (int round = 0; round < 4; round++) {
            String what = "seed " + seed + " round " + round;
            try (Db db = Db.open(dir.resolve("r" + round), Options.defaults().writeBufferSize(1 << 20))) {
                TreeMap<String, String> model = new TreeMap<>();
                List<Snapshot> snapshots = new ArrayList<>();
                List<TreeMap<String, String>> seen = new ArrayList<>();
                int keys = 5 + rnd.nextInt(60);
                for (int i = 0; i < 3000; i++) {
                    int dice = rnd.nextInt(100);
                    String k = String.format("k%03d", rnd.nextInt(keys));
                    if (dice < 70) {
                        String v = "v" + i;
                        db.put(bytes(k), bytes(v));
                        model.put(k, v);
                    } else if (dice < 85) {
                        db.delete(bytes(k));
                        model.remove(k);
                    } else if (dice < 90) {
                        String end = String.format("k%03d", rnd.nextInt(keys + 1));
                        if (k.compareTo(end) <= 0) {
                            db.deleteRange(bytes(k), bytes(end));
                            model.subMap(k, end).clear();
                        }
                    } else if (dice < 93 && snapshots.size() < 4) {
                        snapshots.add(db.getSnapshot());
                        seen.add(new TreeMap<>(model));
                    } else if (dice < 95 && !snapshots.isEmpty()) {
                        int s = rnd.nextInt(snapshots.size());
                        snapshots.remove(s).close();
                        seen.remove(s);
                    } else if (dice < 97) {
                        db.flush();
                    }
                }
                db.flush();
                for (int s = 0; s <= snapshots.size(); s++) {
                    ReadOptions ro = ReadOptions.defaults();
                    TreeMap<String, String> expected = model;
                    if (s < snapshots.size()) {
                        ro = ReadOptions.defaults().snapshot(snapshots.get(s));
                        expected = seen.get(s);
                    }
                    for (int k = 0; k < keys; k++) {
                        String key = String.format("k%03d", k);
                        assertThat(str(db.get(bytes(key), ro)))
                                .as(what + " get " + key + " at snapshot " + s)
                                .isEqualTo(expected.get(key));
                    }
                    TreeMap<String, String> scanned = new TreeMap<>();
                    try (DbIterator it = db.iterator(ro)) {
                        for (it.seekToFirst(); it.valid(); it.next()) {
                            scanned.put(str(it.key()), str(it.value()));
                        }
                    }
                    assertThat(scanned).as(what + " scan at snapshot " + s).isEqualTo(expected);
                }
                snapshots.forEach(Snapshot::close);
            }
        }
    }
}
