package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scans past many point tombstones of keys of one length (a session store's removed sessions: the memtable lends
 * one key array that it refills entry after entry, and the iterator copies the tombstone it passes into a scratch
 * array of its own), in both directions and with direction switches, across the memtable, an immutable memtable and
 * tables, checked move by move against a {@link TreeMap}. Seeded: replay with -Dbloomkv.seed=N.
 */
class TombstoneScanTest {
    @TempDir
    Path dir;

    private static byte[] key(int i) {
        // Fixed length, a shared prefix (segment id, then Kafka key), the varying part last.
        return String.format("seg00001key-%06d|end", i).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    @Test
    void scansPastTombstonesOfOneKeyLengthLikeAMap() {
        long seed = TestSeeds.seed("TombstoneScanTest");
        Random rnd = new Random(seed);
        NavigableMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
        Options options = Options.defaults().writeBufferSize(64 << 10);
        try (Db db = Db.open(dir, options)) {
            int n = 3000;
            for (int round = 0; round < 3; round++) {
                for (int op = 0; op < 4000; op++) {
                    int i = rnd.nextInt(n);
                    byte[] k = key(i);
                    // Mostly put-then-delete pairs (removed sessions), a few keys left live.
                    db.put(k, new byte[] {(byte) op, (byte) round});
                    model.put(k, new byte[] {(byte) op, (byte) round});
                    if (rnd.nextInt(10) != 0) {
                        db.delete(k);
                        model.remove(k);
                    }
                }
                if (round == 0) {
                    db.flush(); // tables below the memtable: the merge interleaves lent and copied keys
                }
            }
            assertThat(model).as("seed " + seed).isNotEmpty();
            for (int walk = 0; walk < 200; walk++) {
                byte[] lower = rnd.nextBoolean() ? null : key(rnd.nextInt(n));
                byte[] upper = rnd.nextBoolean() ? null : key(rnd.nextInt(n));
                if (lower != null && upper != null && Arrays.compareUnsigned(lower, upper) > 0) {
                    byte[] t = lower;
                    lower = upper;
                    upper = t;
                }
                NavigableMap<byte[], byte[]> view = model;
                if (lower != null) {
                    view = view.tailMap(lower, true);
                }
                if (upper != null) {
                    view = view.headMap(upper, false);
                }
                ReadOptions ro = ReadOptions.defaults().iterateLowerBound(lower).iterateUpperBound(upper);
                String ctx = "seed " + seed + " walk " + walk;
                try (DbIterator it = db.iterator(ro)) {
                    Map.Entry<byte[], byte[]> expected;
                    if (rnd.nextBoolean()) {
                        it.seekToFirst();
                        expected = view.firstEntry();
                    } else {
                        it.seekToLast();
                        expected = view.lastEntry();
                    }
                    for (int step = 0; step < 300; step++) {
                        check(it, expected, ctx + " step " + step);
                        if (expected == null) {
                            break;
                        }
                        if (rnd.nextInt(4) != 0) {
                            it.next();
                            expected = view.higherEntry(expected.getKey());
                        } else {
                            it.prev();
                            expected = view.lowerEntry(expected.getKey());
                        }
                    }
                }
            }
        }
    }

    private static void check(DbIterator it, Map.Entry<byte[], byte[]> expected, String ctx) {
        if (expected == null) {
            assertThat(it.valid()).as(ctx).isFalse();
        } else {
            assertThat(it.valid()).as(ctx).isTrue();
            assertThat(it.key()).as(ctx).isEqualTo(expected.getKey());
            assertThat(it.value()).as(ctx).isEqualTo(expected.getValue());
        }
    }

    /**
     * Iterators at the latest sequence share one fragmented list of range tombstones until the memtable gains one;
     * iterators at older snapshots and after new range deletions must still see exactly what was visible to them.
     */
    @Test
    void rangeTombstonesSeenByEachIteratorAsOfItsSequence() {
        try (Db db = Db.open(dir, Options.defaults().writeBufferSize(64 << 10))) {
            for (int i = 0; i < 100; i++) {
                db.put(key(i), new byte[] {(byte) i});
            }
            Snapshot before = db.getSnapshot();
            db.deleteRange(key(10), key(20));
            assertThat(count(db, null)).isEqualTo(90);
            assertThat(count(db, null)).as("again, from the list kept").isEqualTo(90);
            assertThat(count(db, before))
                    .as("a snapshot before the range deletion")
                    .isEqualTo(100);
            Snapshot middle = db.getSnapshot();
            db.deleteRange(key(30), key(35)); // the memtable gains a tombstone: the kept list is stale
            assertThat(count(db, null)).isEqualTo(85);
            assertThat(count(db, middle)).isEqualTo(90);
            db.flush(); // the tombstones move to a table: a new SuperVersion
            db.deleteRange(key(50), key(51));
            assertThat(count(db, null)).isEqualTo(84);
            assertThat(count(db, before)).isEqualTo(100);
            assertThat(count(db, middle)).isEqualTo(90);
            before.close();
            middle.close();
        }
    }

    private static int count(Db db, Snapshot snapshot) {
        int n = 0;
        try (DbIterator it = db.iterator(ReadOptions.defaults().snapshot(snapshot))) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                n++;
            }
        }
        return n;
    }
}
