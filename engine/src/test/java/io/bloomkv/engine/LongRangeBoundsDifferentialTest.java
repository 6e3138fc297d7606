package io.bloomkv.engine;

import static io.bloomkv.engine.LongKeysForTests.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.inspect.TableDump;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.EnvOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.IngestExternalFileOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.SstFileWriter;
import org.rocksdb.StringAppendOperator;

/**
 * The range operations with bounds longer than {@link Db#MAX_KEY_SIZE}, against RocksDB (rocksdbjni) as the oracle,
 * which takes bounds of any length: {@link Db#deleteRange}, {@link WriteBatch#deleteRange} (among other operations of
 * a batch), {@link Db#deleteFilesInRange}, {@link Db#compactRange} and {@link TableFileWriter#deleteRange} (the file
 * ingested with {@link Db#ingest}). Both databases get the same keys (at most {@code MAX} bytes, which bloomkv
 * stores): 1 to 3 bytes, and {@code MAX - 3} to exactly {@code MAX} bytes sharing long stems (a two-byte head, then a
 * run of one filler byte, 'm', 0x00 or 0xFF, then up to three more bytes), with 0x00 and 0xFF bytes, and the keys of
 * {@code MAX} and {@code MAX - 1} bytes of 0xFF. Long bounds are {@code MAX + 1} bytes and more whose first {@code MAX}
 * bytes equal a stored key, or precede or follow one by the last byte, or are a fresh stem, or are all 0xFF (no key of
 * at most {@code MAX} bytes is above them: an end of those runs through the greatest key, a begin of those admits no
 * key); ranges whose two long bounds share their first {@code MAX} bytes (no key of at most {@code MAX} bytes lies
 * between them), and ranges with one long and one stored-length bound.
 *
 * <p>The data is in the memtable only, then in tables only, then in both, through a random history with flushes,
 * compactions, snapshots and reopens (a reopen replays the log, and with it the reduced tombstones written since the
 * last flush). After each operation the full scan and gets (stored keys, long keys) at the latest state are compared
 * with RocksDB's, and each open snapshot's full scan with what both read when it was taken. {@code deleteFilesInRange}
 * removes whole tables on both engines, not the same ones (RocksDB leaves level 0 alone and removes what snapshots
 * read; bloomkv does neither), so what is compared is what reads see: mostly after a range deletion over the same
 * range (RocksDB's pattern, after which nothing visible changes); a third of the time alone, when only the keys
 * outside the range are compared (none may be lost, on either engine), after which a range deletion over the range
 * brings the two in step again. A snapshot open across a {@code deleteFilesInRange} is compared with RocksDB outside
 * that range only; bloomkv's must still read all it read. rocksdbjni's {@code SstFileWriter} has no
 * {@code deleteRange}: RocksDB gets a file's range deletions as a deleteRange just before its ingestion, which reads
 * alike ({@link RocksMixedHistoryDifferentialTest} does the same). Replay with -Dbloomkv.seed=N.
 *
 * <p>Smaller tests pin the edges: what a batch holds for each shape of long range, the replay from the log of a range
 * through the greatest key, the tables compactRange and deleteFilesInRange take for long bounds, the delete of the
 * greatest key made durable before deleteFilesInRange removes tables, the bounds TableFileWriter writes, and each
 * engine's answer to bounds out of order.
 */
@ExtendWith(NoTableLeak.class)
class LongRangeBoundsDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    private static final byte[] V = {'v'};

    @TempDir
    Path dir;

    @Test
    void longRangeBoundsMatchRocksDb() throws Exception {
        new Run(dir, "plain", options()).run();
    }

    /** With range filters, which bounded reads ask, and tables cut at a two-byte prefix. */
    @Test
    void longRangeBoundsWithRangeFiltersAndPartitionsMatchRocksDb() throws Exception {
        new Run(
                        dir,
                        "rangeFiltersPartitioned",
                        options().rangeFilterBitsPerKey(10).tablePartitionPrefixLength(2))
                .run();
    }

    /**
     * A range that holds no key of at most {@code MAX} bytes writes nothing; one through the greatest key is a range
     * deletion up to it and a delete of it; no bound in the batch (so in the log) is longer than {@code MAX}; bounds
     * out of order, null or empty stay refused, whatever their length, and the database stays usable.
     */
    @Test
    void reducedRangesAreWhatTheBatchHolds() throws Exception {
        byte[] stem = filled(MAX, (byte) 'k');
        byte[] stemA = extend(stem, 'a');
        byte[] stemB = extend(stem, 'b');
        byte[] longFf = extend(ALL_FF, 'a');
        byte[] longerFf = extend(longFf, 'b');
        // Both bounds extend the same MAX bytes: no key of at most MAX bytes lies in [stem||a, stem||b).
        assertThat(new WriteBatch().deleteRange(stemA, stemB).count()).isZero();
        // A begin whose first MAX bytes are all 0xFF: no key is at or above it.
        assertThat(new WriteBatch().deleteRange(longFf, longerFf).count()).isZero();
        // [stem, stem||a) holds the stored key stem alone: its end becomes the smallest key above stem.
        byte[] next = filled(MAX, (byte) 'k');
        next[MAX - 1] = 'l';
        assertThat(ops(new WriteBatch().deleteRange(stem, stemA)))
                .containsExactly("deleteRange " + s(stem) + " " + s(next));
        // Through the greatest key: a range deletion up to it and a delete of it.
        assertThat(ops(new WriteBatch().deleteRange(new byte[] {'a'}, longFf)))
                .containsExactly("deleteRange " + s(new byte[] {'a'}) + " " + s(ALL_FF), "delete " + s(ALL_FF));
        assertThat(ops(new WriteBatch().deleteRange(ALL_FF, longFf))).containsExactly("delete " + s(ALL_FF));
        assertThat(ops(new WriteBatch().deleteRange(ALL_FF_SHORT, longFf)))
                .containsExactly("deleteRange " + s(ALL_FF_SHORT) + " " + s(ALL_FF), "delete " + s(ALL_FF));
        // A long begin: the smallest key above its first MAX bytes.
        assertThat(ops(new WriteBatch().deleteRange(stemA, longFf)))
                .containsExactly("deleteRange " + s(next) + " " + s(ALL_FF), "delete " + s(ALL_FF));

        try (Db db = Db.open(dir.resolve("db"), Options.defaults())) {
            db.put(stem, V);
            String before = db.property("bloomkv.last-sequence").orElseThrow();
            db.deleteRange(stemA, stemB);
            db.write(new WriteBatch().deleteRange(longFf, longerFf));
            assertThat(db.property("bloomkv.last-sequence").orElseThrow())
                    .as("sequence after ranges that hold no key")
                    .isEqualTo(before);
            for (byte[][] bad : List.of(
                    new byte[][] {stemB, stemA},
                    new byte[][] {longFf, stem},
                    new byte[][] {null, stemA},
                    new byte[][] {new byte[0], stemA},
                    new byte[][] {stemA, null})) {
                assertThatThrownBy(() -> db.deleteRange(bad[0], bad[1])).isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> new WriteBatch().deleteRange(bad[0], bad[1]))
                        .isInstanceOf(InvalidArgumentException.class);
                if (bad[0] != null && bad[1] != null) {
                    assertThatThrownBy(() -> db.compactRange(bad[0], bad[1]))
                            .isInstanceOf(InvalidArgumentException.class);
                    assertThatThrownBy(() -> db.deleteFilesInRange(bad[0], bad[1]))
                            .isInstanceOf(InvalidArgumentException.class);
                }
            }
            assertThat(db.property("bloomkv.last-sequence").orElseThrow()).isEqualTo(before);
            assertThat(db.get(stem)).isEqualTo(V);
            db.deleteRange(stem, stemA); // [k*MAX, k*MAX||a): the stored key itself
            assertThat(db.get(stem)).isNull();
            db.put(stem, V); // still usable
            assertThat(db.get(stem)).isEqualTo(V);
        }
    }

    /**
     * Bounds out of order, short or long, as each engine takes them (the user guide states the differences): bloomkv
     * refuses them in deleteRange, compactRange and deleteFilesInRange before doing anything and stays usable; RocksDB
     * fails the deleteRange with "end key comes before start key", and then every later write, and does nothing in
     * compactRange and deleteFilesInRange. A batch's empty range deletion: RocksDB counts it, bloomkv does not.
     */
    @Test
    void outOfOrderBoundsAsEachEngineTakesThem() throws Exception {
        byte[] a = extend(filled(MAX, (byte) 'a'), 'z');
        byte[] b = extend(filled(MAX, (byte) 'b'), 'z');
        byte[] c = {'c'};
        try (org.rocksdb.Options ro = new org.rocksdb.Options().setCreateIfMissing(true);
                Db db = Db.open(dir.resolve("bloomkv"), Options.defaults())) {
            for (byte[][] r : List.of(
                    new byte[][] {b, a}, new byte[][] {c, new byte[] {'b'}}, new byte[][] {b, new byte[] {'a'}})) {
                String what = "[" + s(r[0]) + ", " + s(r[1]) + ")";
                try (RocksDB rocks = RocksDB.open(
                        ro,
                        dir.resolve("rocksdb-" + r[0].length + "-" + r[1].length)
                                .toString())) {
                    rocks.put(c, V);
                    rocks.compactRange(r[0], r[1]);
                    rocks.deleteFilesInRanges(rocks.getDefaultColumnFamily(), List.of(r[0], r[1]), false);
                    assertThatThrownBy(() -> rocks.deleteRange(r[0], r[1]))
                            .as(what)
                            .isInstanceOfSatisfying(org.rocksdb.RocksDBException.class, e -> {
                                assertThat(e.getStatus().getCode()).isEqualTo(org.rocksdb.Status.Code.InvalidArgument);
                                assertThat(e.getMessage()).contains("end key comes before start key");
                            });
                    assertThatThrownBy(() -> rocks.put(c, V))
                            .as(what + " then a put")
                            .isInstanceOf(org.rocksdb.RocksDBException.class);
                }
                db.put(c, V);
                assertThatThrownBy(() -> db.compactRange(r[0], r[1])).isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> db.deleteFilesInRange(r[0], r[1]))
                        .isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> db.deleteRange(r[0], r[1])).isInstanceOf(InvalidArgumentException.class);
                db.put(c, V); // still usable
                assertThat(db.get(c)).isEqualTo(V);
            }
        }
        try (org.rocksdb.WriteBatch rb = new org.rocksdb.WriteBatch()) {
            rb.deleteRange(a, a);
            rb.deleteRange(a, extend(a, 0)); // holds no key of at most MAX bytes
            assertThat(rb.count()).isEqualTo(2);
        }
        assertThat(new WriteBatch()
                        .deleteRange(a, a)
                        .deleteRange(a, extend(a, 0))
                        .count())
                .isZero();
    }

    /**
     * A range deletion through the greatest key, written to the log only, is replayed at open as written (the reduced
     * range deletion and the delete of the greatest key), as RocksDB replays its own.
     */
    @Test
    void aRangeThroughTheGreatestKeyIsReplayedFromTheLog() throws Exception {
        byte[] longFf = extend(ALL_FF, 0);
        byte[] mid = filled(MAX, (byte) 'q');
        byte[] low = {'a'};
        try (org.rocksdb.Options ro = new org.rocksdb.Options().setCreateIfMissing(true)) {
            Path ours = dir.resolve("bloomkv");
            String theirs = dir.resolve("rocksdb").toString();
            try (RocksDB rocks = RocksDB.open(ro, theirs);
                    Db db = Db.open(ours, Options.defaults())) {
                for (byte[] k : List.of(low, mid, ALL_FF_SHORT, ALL_FF)) {
                    db.put(k, V);
                    rocks.put(k, V);
                }
                db.flush();
                db.deleteRange(extend(mid, 1), longFf); // everything above mid, ALL_FF included
                rocks.deleteRange(extend(mid, 1), longFf);
                assertThat(scan(db)).containsExactly(s(low), s(mid));
                assertThat(scan(rocks)).containsExactly(s(low), s(mid));
            }
            try (RocksDB rocks = RocksDB.open(ro, theirs);
                    Db db = Db.open(ours, Options.defaults())) {
                assertThat(scan(db)).as("bloomkv after the log's replay").containsExactly(s(low), s(mid));
                assertThat(scan(rocks)).as("RocksDB after the log's replay").containsExactly(s(low), s(mid));
                assertThat(db.get(ALL_FF)).isNull();
                db.put(ALL_FF, V); // newer than the delete: back
                assertThat(db.get(ALL_FF)).isEqualTo(V);
            }
        }
    }

    /**
     * compactRange takes a long {@code from} as the smallest key above its first {@code MAX} bytes and a long
     * {@code to} as its first {@code MAX} bytes (inclusive): with automatic compaction off, exactly the level-0 tables
     * holding keys of the reduced range move down, and a range with nothing above a {@code from} of all 0xFF compacts
     * none.
     */
    @Test
    void compactRangeCompactsTheTablesOfTheReducedRange() {
        byte[] a = filled(MAX, (byte) 'a');
        byte[] b = filled(MAX, (byte) 'b');
        byte[] c = filled(MAX, (byte) 'c');
        byte[] afterC = c.clone(); // the smallest key above c
        afterC[MAX - 1]++;
        try (Db db = Db.open(dir.resolve("db"), Options.defaults().autoCompaction(false))) {
            for (byte[] k : List.of(a, b, c, afterC)) {
                db.put(k, V);
                db.flush();
            }
            assertThat(levelZero(db)).hasSize(4);
            db.compactRange(extend(ALL_FF, 'x'), extend(ALL_FF, 'y')); // nothing above: nothing compacted
            db.compactRange(extend(afterC, 'x'), extend(ALL_FF, 'y')); // above afterC: nothing
            assertThat(levelZero(db)).hasSize(4);
            // [b||x, c||x]: above b up to c itself; the table of c goes, those of b and of the key after c stay.
            db.compactRange(extend(b, 'x'), extend(c, 'x'));
            assertThat(levelZero(db)).containsExactlyInAnyOrder(s(a), s(b), s(afterC));
            // [a - 1 ||x, b||x]: from just above a's predecessor (so a itself) up to b itself.
            byte[] belowA = a.clone();
            belowA[MAX - 1]--;
            db.compactRange(extend(belowA, 'x'), extend(b, 'x'));
            assertThat(levelZero(db)).containsExactly(s(afterC));
            for (byte[] k : List.of(a, b, c, afterC)) {
                assertThat(db.get(k)).isEqualTo(V);
            }
        }
    }

    /**
     * deleteFilesInRange with long bounds removes the tables whose keys lie in the reduced range: a long end whose
     * first {@code MAX} bytes are a stored key includes that key's table, a long begin excludes it, an end of all 0xFF
     * is open (the table of the greatest key goes), a begin of all 0xFF removes nothing.
     */
    @Test
    void deleteFilesInRangeRemovesTheTablesOfTheReducedRange() {
        byte[] a = filled(MAX, (byte) 'a');
        byte[] b = filled(MAX, (byte) 'b');
        try (Db db = Db.open(dir.resolve("db"), Options.defaults().autoCompaction(false))) {
            for (byte[] k : List.of(a, b, ALL_FF)) {
                db.put(k, V);
                db.flush();
            }
            assertThat(db.deleteFilesInRange(extend(ALL_FF, 1), extend(ALL_FF, 2)))
                    .isZero();
            assertThat(db.deleteFilesInRange(extend(a, 1), extend(b, 0)))
                    .as("above a, up to b")
                    .isEqualTo(1);
            assertThat(db.get(a)).isEqualTo(V);
            assertThat(db.get(b)).isNull();
            assertThat(db.deleteFilesInRange(extend(a, 1), extend(ALL_FF, 0)))
                    .as("above a, open")
                    .isEqualTo(1);
            assertThat(db.get(ALL_FF)).isNull();
            assertThat(db.get(a)).isEqualTo(V);
            assertThat(db.deleteFilesInRange(new byte[] {'a'}, extend(a, 0)))
                    .as("up to a")
                    .isEqualTo(1);
            assertThat(db.tables()).isEmpty();
        }
    }

    /**
     * A range deletion from the greatest key on ({@code [MAX bytes of 0xFF, longer)}) is written as a delete of that
     * key; deleteFilesInRange over the same range makes it durable before its tables go, as it makes a range
     * tombstone durable: after a power loss the key stays deleted rather than an older version of it, which a table
     * straddling the range keeps, showing again.
     */
    @Test
    void deleteFilesInRangeMakesTheDeleteOfTheGreatestKeyDurableFirst() throws Exception {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Options o = Options.defaults().fileSystem(fs).syncMode(SyncMode.NONE).autoCompaction(false);
        Path d = dir.resolve("db");
        byte[] a = {'a'};
        byte[] longFf = extend(ALL_FF, 'z');
        Db db = Db.open(d, o);
        try {
            db.put(a, V);
            db.put(ALL_FF, new byte[] {'o', 'l', 'd'});
            db.flush();
            db.compactRange(null, null); // one table of a and the greatest key, at the last level
            db.put(ALL_FF, V);
            db.flush(); // a level-0 table of the greatest key alone
            assertThat(ops(new WriteBatch().deleteRange(ALL_FF, longFf))).containsExactly("delete " + s(ALL_FF));
            db.deleteRange(ALL_FF, longFf);
            long syncs = db.stats().walSyncs();
            assertThat(db.deleteFilesInRange(ALL_FF, longFf))
                    .as("the level-0 table")
                    .isEqualTo(1);
            assertThat(db.stats().walSyncs()).as("log syncs").isGreaterThan(syncs);
            assertThat(db.get(ALL_FF)).isNull();
        } finally {
            SimulatedCrashTest.crash(fs, db, null); // keeps exactly the synced bytes
        }
        try (Db reopened = Db.open(d, o)) {
            assertThat(reopened.get(ALL_FF))
                    .as("the greatest key after the power loss")
                    .isNull();
            assertThat(reopened.get(a)).isEqualTo(V);
        }
    }

    /**
     * TableFileWriter.deleteRange reduces long bounds: the file holds only bounds of at most {@code MAX} bytes; a range
     * through the greatest key adds a delete of it at finish unless the file's last entry is that key; with a merge of
     * that key it is refused, whichever comes second; a file whose only range holds no key is refused at finish as an
     * empty one.
     */
    @Test
    void tableFileWriterReducesLongBounds() throws Exception {
        byte[] stem = filled(MAX, (byte) 'k');
        byte[] longFf = extend(ALL_FF, 'z');
        Path f1 = dir.resolve("f1.sst");
        try (TableFileWriter w = TableFileWriter.create(f1, Options.defaults())) {
            w.deleteRange(extend(stem, 'a'), extend(stem, 'b')); // holds no key
            assertThat(w.rangeDeletions()).isZero();
            w.deleteRange(extend(stem, 'a'), longFf);
            w.put(new byte[] {'z'}, V);
            assertThat(w.rangeDeletions()).isEqualTo(1);
            assertThat(w.entries()).isEqualTo(1);
            assertThatThrownBy(() -> w.merge(ALL_FF, V)).isInstanceOf(InvalidArgumentException.class);
            w.finish();
            assertThat(w.entries())
                    .as("the put and the delete of the greatest key")
                    .isEqualTo(2);
        }
        try (TableDump dump = TableDump.open(f1)) {
            assertThat(dump.rangeDeletions()).hasSize(1);
            TableDump.RangeDeletion r = dump.rangeDeletions().get(0);
            assertThat(r.begin()).isEqualTo(LongKeys.leastAbove(stem));
            assertThat(r.end()).isEqualTo(ALL_FF);
            List<String> entries = new ArrayList<>();
            dump.forEachEntry(
                    10, e -> entries.add(s(e.key().userKey()) + " " + e.key().type()));
            assertThat(entries).containsExactly(s(new byte[] {'z'}) + " PUT", s(ALL_FF) + " DEL");
        }
        Path f2 = dir.resolve("f2.sst");
        try (TableFileWriter w = TableFileWriter.create(f2, Options.defaults())) {
            w.merge(ALL_FF, V);
            assertThatThrownBy(() -> w.deleteRange(new byte[] {'a'}, longFf))
                    .isInstanceOf(InvalidArgumentException.class);
            w.deleteRange(new byte[] {'a'}, extend(extend(ALL_FF_SHORT, 0), 0)); // ends below the greatest key
            w.finish();
        }
        Path f3 = dir.resolve("f3.sst");
        try (TableFileWriter w = TableFileWriter.create(f3, Options.defaults())) {
            w.deleteRange(new byte[] {'a'}, longFf);
            w.put(ALL_FF, V); // the file's own put of the greatest key: no delete added
            w.finish();
            assertThat(w.entries()).isEqualTo(1);
        }
        Path f4 = dir.resolve("f4.sst");
        try (TableFileWriter w = TableFileWriter.create(f4, Options.defaults())) {
            w.deleteRange(extend(ALL_FF, 1), extend(ALL_FF, 2)); // holds no key
            assertThatThrownBy(w::finish).isInstanceOf(InvalidArgumentException.class);
        }
        assertThat(Files.exists(f4)).isFalse();
        try (Db db = Db.open(dir.resolve("db"), Options.defaults())) {
            for (byte[] k : List.of(new byte[] {'a'}, stem, ALL_FF)) {
                db.put(k, new byte[] {'o'});
            }
            db.ingest(List.of(f1), IngestOptions.defaults());
            assertThat(scan(db)).containsExactly(s(new byte[] {'a'}), s(stem), s(new byte[] {'z'}));
            db.ingest(List.of(f3), IngestOptions.defaults());
            assertThat(scan(db)).containsExactly(s(ALL_FF));
            assertThat(db.get(ALL_FF)).isEqualTo(V);
        }
    }

    private static Options options() {
        // SmallLevels' shapes, scaled to keys of up to 64 KiB: the memtable holds the first phase's keys, tables a few.
        return SmallLevels.options()
                .writeBufferSize(8 << 20)
                .targetFileSize(256 << 10)
                .maxBytesForLevelBase(1 << 20)
                .mergeOperator(MergeOperators.stringAppend(','));
    }

    /** {@code k} followed by one byte. */
    private static byte[] extend(byte[] k, int b) {
        byte[] out = Arrays.copyOf(k, k.length + 1);
        out[k.length] = (byte) b;
        return out;
    }

    private static boolean isAllFf(byte[] k, int length) {
        for (int i = 0; i < length; i++) {
            if (k[i] != (byte) 0xff) {
                return false;
            }
        }
        return true;
    }

    /** The operations of a batch as text, with their keys as {@link #s} shows them. */
    private static List<String> ops(WriteBatch batch) {
        List<String> out = new ArrayList<>();
        batch.forEach(1, new WriteBatch.Handler() {
            @Override
            public void put(long sequence, byte[] key, byte[] value) {
                out.add("put " + s(key));
            }

            @Override
            public void delete(long sequence, byte[] key) {
                out.add("delete " + s(key));
            }

            @Override
            public void merge(long sequence, byte[] key, byte[] operand) {
                out.add("merge " + s(key));
            }

            @Override
            public void deleteRange(long sequence, byte[] begin, byte[] end) {
                out.add("deleteRange " + s(begin) + " " + s(end));
            }
        });
        return out;
    }

    private static List<String> levelZero(Db db) {
        return db.tables().stream()
                .filter(t -> t.level() == 0)
                .map(t -> s(t.smallestUserKey()))
                .toList();
    }

    private static List<String> scan(Db db) {
        List<String> out = new ArrayList<>();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                out.add(s(it.key()));
            }
        }
        return out;
    }

    private static List<String> scan(RocksDB rocks) {
        List<String> out = new ArrayList<>();
        try (RocksIterator it = rocks.newIterator()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                out.add(s(it.key()));
            }
        }
        return out;
    }

    /** A key and its value as read. */
    private record Kv(byte[] key, byte[] value) {}

    /** A snapshot of both databases, what both read at it when taken, and the ranges deleteFilesInRange went over. */
    private static final class Snap {
        final Snapshot ours;
        final org.rocksdb.Snapshot theirs;
        final List<Kv> content;
        final List<byte[][]> filesRemovedIn = new ArrayList<>();

        Snap(Snapshot ours, org.rocksdb.Snapshot theirs, List<Kv> content) {
            this.ours = ours;
            this.theirs = theirs;
            this.content = content;
        }

        /** Whether {@code key} lies outside every range deleteFilesInRange went over since the snapshot was taken. */
        boolean comparable(byte[] key) {
            for (byte[][] r : filesRemovedIn) {
                if (in(key, r[0], r[1])) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Whether {@code key} lies in [begin, end), compared as given (bounds of any length). */
    private static boolean in(byte[] key, byte[] begin, byte[] end) {
        return Arrays.compareUnsigned(begin, key) <= 0 && Arrays.compareUnsigned(key, end) < 0;
    }

    private static final class Run {
        private final Path dir;
        private final Options options;
        private final long seed;
        private final Random rnd;
        private final String ctx;
        private final List<String> history = new ArrayList<>();
        /** Every key written (put or merge), for bounds near them. */
        private final List<byte[]> written = new ArrayList<>();

        private final List<Snap> snaps = new ArrayList<>();
        private Db db;
        private RocksDB rocks;
        private org.rocksdb.Options ro;
        private FlushOptions flush;
        private EnvOptions env;
        private IngestExternalFileOptions ingest;
        private int fileCounter;

        /** Range deletions with a long bound (Db, batch, file), and those that hid at least one key. */
        private int longRangeDeletions;

        private int longRangeDeletionsHiding;
        /** Long ranges through the greatest key that hid it (it was there before). */
        private int greatestKeyHidden;
        /** Long ranges that hold no key of at most MAX bytes (same first MAX bytes, or a begin of all 0xFF). */
        private int rangesHoldingNoKey;
        /** deleteFilesInRange calls with a long bound, alone, and the tables bloomkv removed. */
        private int fileRemovals;

        private int bareFileRemovals;
        private int tablesRemoved;
        private int compactRanges;
        private int ingestions;
        private int reopens;

        Run(Path dir, String name, Options options) {
            this.dir = dir;
            this.options = options;
            this.seed = TestSeeds.seed("LongRangeBoundsDifferentialTest." + name);
            this.rnd = new Random(seed);
            this.ctx = name + " seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        }

        void run() throws Exception {
            try (StringAppendOperator rop = new StringAppendOperator(',');
                    org.rocksdb.Options rocksOptions = new org.rocksdb.Options()
                            .setCreateIfMissing(true)
                            .setMergeOperator(rop)
                            .setWriteBufferSize(8 << 20);
                    FlushOptions fo = new FlushOptions().setWaitForFlush(true);
                    EnvOptions eo = new EnvOptions();
                    IngestExternalFileOptions io = new IngestExternalFileOptions()) {
                ro = rocksOptions;
                flush = fo;
                env = eo;
                ingest = io;
                Files.createDirectories(dir.resolve("files"));
                open();
                try {
                    phases();
                } finally {
                    releaseAll();
                    db.close();
                    rocks.close();
                }
            }
            System.out.println(ctx + ": " + longRangeDeletions + " long-bound range deletions ("
                    + longRangeDeletionsHiding
                    + " hid keys, " + greatestKeyHidden + " hid the greatest key, " + rangesHoldingNoKey
                    + " ranges held no key), " + fileRemovals + " long-bound deleteFilesInRange (" + bareFileRemovals
                    + " alone, " + tablesRemoved + " tables removed), " + compactRanges + " long-bound compactRange, "
                    + ingestions + " ingestions, " + reopens + " reopens");
            assertThat(longRangeDeletionsHiding)
                    .as(ctx + ": long-bound range deletions that hid keys")
                    .isPositive();
            assertThat(greatestKeyHidden)
                    .as(ctx + ": ranges through the greatest key that hid it")
                    .isPositive();
            assertThat(rangesHoldingNoKey)
                    .as(ctx + ": long ranges that hold no key")
                    .isPositive();
            assertThat(tablesRemoved)
                    .as(ctx + ": tables removed by long-bound deleteFilesInRange")
                    .isPositive();
            assertThat(bareFileRemovals).as(ctx + ": deleteFilesInRange alone").isPositive();
            assertThat(ingestions).as(ctx + ": ingestions").isPositive();
        }

        private void open() throws Exception {
            rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
            db = Db.open(dir.resolve("bloomkv"), options);
        }

        private void releaseAll() {
            for (Snap sn : snaps) {
                db.releaseSnapshot(sn.ours);
                rocks.releaseSnapshot(sn.theirs);
            }
            snaps.clear();
        }

        /**
         * Memtable only (with a snapshot), tables only, then a history: each phase with range deletions whose long
         * bounds reach the greatest key, hold no key, and hide keys; a reopen replaying long range deletions from the
         * log.
         */
        private void phases() throws Exception {
            put(ALL_FF);
            put(ALL_FF_SHORT);
            for (int i = 0; i < 40; i++) {
                put(key(rnd));
            }
            assertThat(db.tables()).as(ctx + ": tables after the first puts").isEmpty();
            checkLatest("memtable only");
            takeSnapshot();
            fixedRanges("memtable only");
            flushBoth();
            history.add("compactRange");
            db.compactRange(null, null);
            rocks.compactRange();
            assertThat(db.tables()).as(ctx + ": tables").isNotEmpty();
            checkAll("tables only");
            for (int i = 0; i < 30; i++) {
                put(rnd.nextInt(8) == 0 ? ALL_FF : key(rnd));
            }
            flushBoth();
            // With no snapshot open, the compaction to the last level drops the range tombstones (a table holding one
            // stays in deleteFilesInRange while a table straddling the range holds a key of it) and bloomkv keeps no
            // table for a snapshot: tables lie wholly in these ranges and go.
            history.add("release all");
            releaseAll();
            history.add("compactRange");
            db.compactRange(null, null);
            rocks.compactRange();
            checkAll("tables only, refilled");
            deleteFilesInRange("tables only", quarters(0, 2), false);
            deleteFilesInRange("tables only", quarters(2, 4), true);
            takeSnapshot();
            fixedRanges("tables only");
            for (int i = 0; i < 10; i++) {
                put(rnd.nextInt(4) == 0 ? ALL_FF : key(rnd));
            }
            fixedRanges("tables and memtable");
            reopen("range deletions in the log");
            for (int op = 0; op < 250; op++) {
                step("op " + op);
            }
            checkAll("end");
        }

        /** One range deletion of each edge shape, through the Db or a batch: each then compared. */
        private void fixedRanges(String phase) throws Exception {
            byte[] k = written.get(rnd.nextInt(written.size()));
            deleteRange(phase, key(rnd), longFf(), false);
            put(ALL_FF);
            deleteRange(phase, longBound(), longFf(), true);
            deleteRange(phase, longBound(), sameHead(longBound()), rnd.nextBoolean());
            byte[] ffBegin = longFf();
            deleteRange(phase, ffBegin, extend(ffBegin, 0xff), rnd.nextBoolean());
            deleteRange(phase, k, headExtended(k), rnd.nextBoolean()); // [k, k'||x): k alone when k has MAX bytes
            deleteRange(phase, longBound(), key(rnd), rnd.nextBoolean());
            put(ALL_FF);
        }

        private void step(String phase) throws Exception {
            int r = rnd.nextInt(100);
            if (r < 24) {
                put(rnd.nextInt(12) == 0 ? ALL_FF : key(rnd));
            } else if (r < 30) {
                delete(rnd.nextBoolean() ? key(rnd) : written.get(rnd.nextInt(written.size())));
            } else if (r < 36) {
                byte[] k = rnd.nextBoolean() ? key(rnd) : written.get(rnd.nextInt(written.size()));
                byte[] v = ("m" + history.size()).getBytes();
                history.add("merge " + s(k));
                written.add(k);
                db.merge(k, v);
                rocks.merge(k, v);
            } else if (r < 54) {
                byte[][] range = longRange();
                deleteRange(phase, range[0], range[1], rnd.nextBoolean());
            } else if (r < 61) {
                deleteFilesInRange(phase, longRange(), rnd.nextInt(3) == 0);
            } else if (r < 66) {
                byte[][] range = longRange();
                history.add("compactRange " + s(range[0]) + " " + s(range[1]));
                db.compactRange(range[0], range[1]);
                rocks.compactRange(range[0], range[1]);
                compactRanges++;
                checkAll(phase);
            } else if (r < 72) {
                ingestFile(phase);
            } else if (r < 77) {
                flushBoth();
            } else if (r < 78) {
                history.add("compactRange");
                db.compactRange(null, null);
                rocks.compactRange();
            } else if (r < 83) {
                if (snaps.size() < 3 && rnd.nextBoolean()) {
                    takeSnapshot();
                } else if (!snaps.isEmpty()) {
                    int i = rnd.nextInt(snaps.size());
                    history.add("release #" + i);
                    Snap sn = snaps.remove(i);
                    db.releaseSnapshot(sn.ours);
                    rocks.releaseSnapshot(sn.theirs);
                }
            } else if (r < 85) {
                reopen(phase);
            } else {
                checkLatest(phase);
            }
        }

        private void put(byte[] k) throws Exception {
            byte[] v = ("v" + history.size()).getBytes();
            history.add("put " + s(k));
            written.add(k);
            db.put(k, v);
            rocks.put(k, v);
        }

        private void delete(byte[] k) throws Exception {
            history.add("delete " + s(k));
            db.delete(k);
            rocks.delete(k);
        }

        private void flushBoth() throws Exception {
            history.add("flush");
            db.flush();
            rocks.flush(flush);
        }

        private void takeSnapshot() throws Exception {
            history.add("snapshot #" + snaps.size());
            Snapshot ours = db.getSnapshot();
            org.rocksdb.Snapshot theirs = rocks.getSnapshot();
            List<Kv> content = scan(ours);
            compare(ctx + " snapshot #" + snaps.size() + " taken after " + tail(), content, scan(theirs), k -> true);
            snaps.add(new Snap(ours, theirs, content));
        }

        /** Releases the snapshots (a closed database has none), closes both databases and opens them again. */
        private void reopen(String phase) throws Exception {
            history.add("reopen");
            releaseAll();
            db.close();
            rocks.close();
            open();
            reopens++;
            checkLatest(phase + " reopened");
        }

        /**
         * A range deletion of [a, b) (put in order) on both, through {@link Db#deleteRange} or a batch that may put a
         * key before it and a key of the range after it (the later put survives); compared after.
         */
        private void deleteRange(String phase, byte[] a, byte[] b, boolean inBatch) throws Exception {
            if (Arrays.compareUnsigned(a, b) > 0) {
                byte[] t = a;
                a = b;
                b = t;
            }
            boolean longBound = a.length > MAX || b.length > MAX;
            if (longBound) {
                longRangeDeletions++;
                if ((a.length > MAX && isAllFf(a, MAX))
                        || (a.length > MAX && b.length > MAX && Arrays.equals(a, 0, MAX, b, 0, MAX))) {
                    rangesHoldingNoKey++;
                }
            }
            int before = count(a, b);
            boolean greatestBefore = rocks.get(ALL_FF) != null;
            if (!inBatch) {
                history.add("deleteRange " + s(a) + " " + s(b));
                db.deleteRange(a, b);
                rocks.deleteRange(a, b);
            } else {
                StringBuilder sb = new StringBuilder("batch [");
                WriteBatch batch = new WriteBatch();
                try (org.rocksdb.WriteBatch rb = new org.rocksdb.WriteBatch();
                        org.rocksdb.WriteOptions wo = new org.rocksdb.WriteOptions()) {
                    if (rnd.nextBoolean()) {
                        byte[] k = key(rnd);
                        written.add(k);
                        sb.append("put ").append(s(k)).append(", ");
                        batch.put(k, V);
                        rb.put(k, V);
                    }
                    sb.append("deleteRange ").append(s(a)).append(' ').append(s(b));
                    batch.deleteRange(a, b);
                    rb.deleteRange(a, b);
                    byte[] inside = rnd.nextBoolean() ? keyIn(a, b) : null;
                    if (inside != null) {
                        sb.append(", put ").append(s(inside));
                        batch.put(inside, V);
                        rb.put(inside, V);
                    }
                    history.add(sb.append(']').toString());
                    db.write(batch);
                    rocks.write(wo, rb);
                }
            }
            if (longBound) {
                longRangeDeletionsHiding += count(a, b) < before ? 1 : 0;
                greatestKeyHidden += greatestBefore && rocks.get(ALL_FF) == null ? 1 : 0;
            }
            checkAll(phase);
        }

        /**
         * deleteFilesInRange over [range[0], range[1]) on both: after a range deletion over it on both (nothing
         * visible changes), or alone: then the keys outside the range are compared (with RocksDB, and with what
         * bloomkv read before: none lost), and a range deletion over it brings the two in step again.
         */
        private void deleteFilesInRange(String phase, byte[][] range, boolean alone) throws Exception {
            byte[] a = range[0];
            byte[] b = range[1];
            if (!alone) {
                history.add("deleteRange " + s(a) + " " + s(b));
                db.deleteRange(a, b);
                rocks.deleteRange(a, b);
            }
            List<Kv> before = scan((Snapshot) null);
            history.add("deleteFilesInRange " + s(a) + " " + s(b) + (alone ? " alone" : ""));
            int removed = db.deleteFilesInRange(a, b);
            rocks.deleteFilesInRanges(rocks.getDefaultColumnFamily(), List.of(a, b), false);
            if (a.length > MAX || b.length > MAX) {
                fileRemovals++;
                tablesRemoved += removed;
                bareFileRemovals += alone ? 1 : 0;
            }
            for (Snap sn : snaps) {
                sn.filesRemovedIn.add(new byte[][] {a, b});
            }
            if (alone) {
                String what = ctx + " " + phase + " after " + tail() + " outside the range";
                List<Kv> after = scan((Snapshot) null);
                compare(what + " (bloomkv before and after)", before, after, k -> !in(k, a, b));
                compare(what + " (RocksDB)", after, scan((org.rocksdb.Snapshot) null), k -> !in(k, a, b));
                checkSnapshots(phase);
                history.add("deleteRange " + s(a) + " " + s(b));
                db.deleteRange(a, b);
                rocks.deleteRange(a, b);
            }
            checkAll(phase);
        }

        /**
         * The same sorted puts, merges and deletes (keys of the history, fresh ones, the greatest key) with range
         * deletions of long bounds, written by {@link TableFileWriter} and ingested; RocksDB gets the range deletions
         * before ingesting its {@code SstFileWriter}'s file with the same entries. No merge of the greatest key goes
         * with a range through it (the writer refuses that pair).
         */
        private void ingestFile(String phase) throws Exception {
            TreeSet<byte[]> keys = new TreeSet<>(Arrays::compareUnsigned);
            for (int n = 1 + rnd.nextInt(6); n > 0; n--) {
                int r = rnd.nextInt(6);
                keys.add(r == 0 ? ALL_FF : r < 3 ? written.get(rnd.nextInt(written.size())) : key(rnd));
            }
            List<byte[][]> ranges = new ArrayList<>();
            boolean throughGreatest = false;
            for (int n = 1 + rnd.nextInt(2); n > 0; n--) {
                byte[][] range = rnd.nextInt(3) == 0 ? new byte[][] {longBound(), longFf()} : longRange();
                if (Arrays.compareUnsigned(range[0], range[1]) > 0) {
                    range = new byte[][] {range[1], range[0]};
                }
                ranges.add(range);
                throughGreatest |= range[1].length > MAX && isAllFf(range[1], MAX);
            }
            Path ourFile = dir.resolve("files").resolve("b" + fileCounter + ".sst");
            String theirFile =
                    dir.resolve("files").resolve("r" + fileCounter + ".sst").toString();
            fileCounter++;
            StringBuilder sb = new StringBuilder("ingest [");
            List<byte[]> sorted = new ArrayList<>(keys);
            int rangesAt = rnd.nextInt(sorted.size() + 1);
            boolean greatestBefore = rocks.get(ALL_FF) != null;
            try (TableFileWriter w = TableFileWriter.create(ourFile, options);
                    SstFileWriter rw = new SstFileWriter(env, ro)) {
                rw.open(theirFile);
                for (int i = 0; i <= sorted.size(); i++) {
                    if (i == rangesAt) {
                        for (byte[][] range : ranges) {
                            sb.append(" -[")
                                    .append(s(range[0]))
                                    .append(", ")
                                    .append(s(range[1]))
                                    .append(')');
                            w.deleteRange(range[0], range[1]);
                        }
                    }
                    if (i == sorted.size()) {
                        break;
                    }
                    byte[] k = sorted.get(i);
                    byte[] v = ("f" + history.size() + "." + i).getBytes();
                    int op = rnd.nextInt(6);
                    if (op == 0 || (op < 3 && throughGreatest && Arrays.equals(k, ALL_FF))) {
                        sb.append(" del ").append(s(k));
                        w.delete(k);
                        rw.delete(k);
                    } else if (op < 3) {
                        sb.append(' ').append(s(k)).append("+=");
                        w.merge(k, v);
                        rw.merge(k, v);
                    } else {
                        sb.append(' ').append(s(k)).append('=');
                        w.put(k, v);
                        rw.put(k, v);
                    }
                }
                w.finish();
                rw.finish();
            }
            history.add(sb.append(" ]").toString());
            for (byte[][] range : ranges) {
                rocks.deleteRange(range[0], range[1]);
            }
            db.ingest(List.of(ourFile), IngestOptions.defaults());
            rocks.ingestExternalFile(List.of(theirFile), ingest);
            ingestions++;
            longRangeDeletions += ranges.size();
            greatestKeyHidden += greatestBefore && rocks.get(ALL_FF) == null ? 1 : 0;
            checkAll(phase);
        }

        /** The latest state and every snapshot compared. */
        private void checkAll(String phase) throws Exception {
            checkLatest(phase);
            checkSnapshots(phase);
        }

        /** Full scans compared, then gets of some written keys and long keys, and a multiGet of them. */
        private void checkLatest(String phase) throws Exception {
            String what = ctx + " " + phase + " after " + tail() + ":";
            compare(what, scan((Snapshot) null), scan((org.rocksdb.Snapshot) null), k -> true);
            List<byte[]> keys = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                byte[] k = rnd.nextInt(4) == 0 ? longBound() : written.get(rnd.nextInt(written.size()));
                assertThat(db.get(k)).as(what + " get " + s(k)).isEqualTo(rocks.get(k));
                keys.add(k);
            }
            keys.add(ALL_FF);
            List<byte[]> mine = db.multiGet(keys);
            List<byte[]> theirs = rocks.multiGetAsList(keys);
            for (int i = 0; i < keys.size(); i++) {
                assertThat(mine.get(i)).as(what + " multiGet " + s(keys.get(i))).isEqualTo(theirs.get(i));
            }
        }

        /**
         * Each snapshot: bloomkv reads all it read when the snapshot was taken; RocksDB too, outside the ranges
         * deleteFilesInRange went over since (it may have removed tables the snapshot read).
         */
        private void checkSnapshots(String phase) throws Exception {
            for (int i = 0; i < snaps.size(); i++) {
                Snap sn = snaps.get(i);
                String what = ctx + " " + phase + " after " + tail() + " at snapshot #" + i + ":";
                compare(what + " bloomkv", sn.content, scan(sn.ours), k -> true);
                compare(what + " RocksDB", sn.content, scan(sn.theirs), sn::comparable);
            }
        }

        /** {@code expected} and {@code actual} restricted to the keys {@code keep} accepts: equal, key by key. */
        private static void compare(
                String what, List<Kv> expected, List<Kv> actual, java.util.function.Predicate<byte[]> keep) {
            List<Kv> e = expected.stream().filter(kv -> keep.test(kv.key())).toList();
            List<Kv> a = actual.stream().filter(kv -> keep.test(kv.key())).toList();
            for (int i = 0; i < Math.max(e.size(), a.size()); i++) {
                byte[] ek = i < e.size() ? e.get(i).key() : null;
                byte[] ak = i < a.size() ? a.get(i).key() : null;
                if (!Arrays.equals(ek, ak)) {
                    throw new AssertionError(what + " key #" + i + ": expected " + s(ek) + ", found " + s(ak));
                }
                assertThat(a.get(i).value())
                        .as(what + " value of " + s(ak))
                        .isEqualTo(e.get(i).value());
            }
        }

        private List<Kv> scan(Snapshot sn) {
            List<Kv> out = new ArrayList<>();
            try (DbIterator it = db.iterator(ReadOptions.defaults().snapshot(sn))) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    out.add(new Kv(it.key(), it.value()));
                }
            }
            return out;
        }

        private List<Kv> scan(org.rocksdb.Snapshot sn) throws Exception {
            List<Kv> out = new ArrayList<>();
            try (org.rocksdb.ReadOptions r = new org.rocksdb.ReadOptions()) {
                if (sn != null) {
                    r.setSnapshot(sn);
                }
                try (RocksIterator it = rocks.newIterator(r)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        out.add(new Kv(it.key(), it.value()));
                    }
                    it.status();
                }
            }
            return out;
        }

        /** RocksDB's keys in [a, b) at the latest state. */
        private int count(byte[] a, byte[] b) throws Exception {
            int n = 0;
            try (RocksIterator it = rocks.newIterator()) {
                for (it.seek(a); it.isValid() && Arrays.compareUnsigned(it.key(), b) < 0; it.next()) {
                    n++;
                }
                it.status();
            }
            return n;
        }

        /** A written key in [a, b), or null when none is. */
        private byte[] keyIn(byte[] a, byte[] b) {
            List<byte[]> inside = written.stream().filter(k -> in(k, a, b)).toList();
            return inside.isEmpty() ? null : inside.get(rnd.nextInt(inside.size()));
        }

        /**
         * A key of more than {@code MAX} bytes: its first {@code MAX} bytes are a written key (when it has {@code MAX}
         * bytes, else padded with one filler byte), sometimes with the last byte one less or one more (preceding or
         * following that key), or a fresh stem, or all 0xFF; then 1 to 40 more bytes, or up to a few thousand.
         */
        private byte[] longBound() {
            byte[] head;
            int r = rnd.nextInt(12);
            if (r == 0) {
                head = ALL_FF.clone();
            } else if (r < 8) {
                byte[] k = written.get(rnd.nextInt(written.size()));
                head = Arrays.copyOf(k, MAX);
                Arrays.fill(head, Math.min(k.length, MAX), MAX, pick(rnd, FILLERS));
            } else {
                head = stem(rnd, MAX, 1 + rnd.nextInt(3));
            }
            int nudge = rnd.nextInt(4);
            if (nudge == 1) {
                head[MAX - 1]--;
            } else if (nudge == 2) {
                head[MAX - 1]++;
            }
            return withTail(head);
        }

        /** {@code head} followed by 1 to 40 bytes of the alphabet, or up to a few thousand. */
        private byte[] withTail(byte[] head) {
            int extra = rnd.nextInt(5) == 0 ? 1 + rnd.nextInt(3000) : 1 + rnd.nextInt(40);
            byte[] k = Arrays.copyOf(head, head.length + extra);
            for (int i = head.length; i < k.length; i++) {
                k[i] = pick(rnd, ALPHABET);
            }
            return k;
        }

        /** A long key of {@code MAX} bytes of 0xFF and more: no key of at most {@code MAX} bytes is above it. */
        private byte[] longFf() {
            return withTail(ALL_FF.clone());
        }

        /** Another long key with the same first {@code MAX} bytes as {@code k}. */
        private byte[] sameHead(byte[] k) {
            return withTail(Arrays.copyOf(k, MAX));
        }

        /** {@code k} padded to {@code MAX} bytes with 0x00 (when shorter), then longer. */
        private byte[] headExtended(byte[] k) {
            return withTail(Arrays.copyOf(k, MAX));
        }

        /** A range with at least one long bound, in order, of one of the edge shapes or two random bounds. */
        private byte[][] longRange() {
            byte[] a;
            byte[] b;
            switch (rnd.nextInt(10)) {
                case 0 -> {
                    a = longBound();
                    b = sameHead(a);
                }
                case 1 -> {
                    a = key(rnd);
                    b = longFf();
                }
                case 2 -> {
                    a = longFf();
                    b = longFf();
                }
                case 3 -> {
                    a = written.get(rnd.nextInt(written.size()));
                    b = headExtended(a);
                }
                case 4, 5 -> {
                    a = key(rnd);
                    b = longBound();
                }
                case 6, 7 -> {
                    a = longBound();
                    b = key(rnd);
                }
                default -> {
                    a = longBound();
                    b = longBound();
                }
            }
            return Arrays.compareUnsigned(a, b) <= 0 ? new byte[][] {a, b} : new byte[][] {b, a};
        }

        /**
         * A range of long bounds over the written keys, sorted, from quarter {@code from} to quarter {@code to} (4: the
         * last key): each bound the key there padded to {@code MAX} bytes with 0x00 and made longer (so above it).
         */
        private byte[][] quarters(int from, int to) {
            TreeSet<byte[]> sorted = new TreeSet<>(Arrays::compareUnsigned);
            sorted.addAll(written);
            List<byte[]> keys = new ArrayList<>(sorted);
            byte[] lo = keys.get(keys.size() * from / 4);
            byte[] hi = keys.get(Math.min(keys.size() - 1, keys.size() * to / 4));
            return new byte[][] {headExtended(lo), headExtended(hi)};
        }

        private String tail() {
            return history.subList(Math.max(0, history.size() - 6), history.size())
                    .toString();
        }
    }
}
