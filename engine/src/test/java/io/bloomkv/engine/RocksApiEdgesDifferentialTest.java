package io.bloomkv.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.StringAppendOperator;
import org.rocksdb.WriteOptions;

/**
 * Edges of the public API that a port from RocksDB meets, with rocksdbjni as the oracle where RocksDB defines the
 * behaviour: write batches (same key twice, range deletion and put together, merges, reuse and clear, counts), multiGet
 * (duplicates, absent keys, snapshots, merges and range deletions, result order), iterator bounds (equal, inverted,
 * seekForPrev past the upper bound, with and without range filters and with the data in tables or memtables), released
 * snapshots and closed databases (typed exceptions), and {@code estimate-num-keys}.
 */
class RocksApiEdgesDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private org.rocksdb.MergeOperator rop;
    private org.rocksdb.Options ro;
    private RocksDB rocks;
    private Db db;

    @BeforeEach
    void open() throws RocksDBException {
        rop = new StringAppendOperator(',');
        ro = new org.rocksdb.Options().setCreateIfMissing(true).setMergeOperator(rop);
        rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
        db = Db.open(dir.resolve("bloomkv"), Options.defaults().mergeOperator(MergeOperators.stringAppend(',')));
    }

    @AfterEach
    void close() {
        if (db != null) {
            db.close();
        }
        rocks.close();
        ro.close();
        rop.close();
    }

    static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    static String s(byte[] v) {
        return v == null ? null : new String(v, UTF_8);
    }

    private List<String> ourScan() {
        List<String> out = new ArrayList<>();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                out.add(s(it.key()) + "=" + s(it.value()));
            }
        }
        return out;
    }

    private List<String> rocksScan() {
        List<String> out = new ArrayList<>();
        try (RocksIterator it = rocks.newIterator()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                out.add(s(it.key()) + "=" + s(it.value()));
            }
        }
        return out;
    }

    /** Writes the same batch to both, built by {@code build} on each engine's batch type. */
    private void writeBoth(BatchOps ops) throws RocksDBException {
        WriteBatch ours = new WriteBatch();
        try (org.rocksdb.WriteBatch theirs = new org.rocksdb.WriteBatch();
                WriteOptions wo = new WriteOptions()) {
            ops.apply(new Both(ours, theirs));
            assertThat(ours.count()).as("count()").isEqualTo(theirs.count());
            db.write(ours);
            rocks.write(wo, theirs);
        }
        assertThat(ourScan()).isEqualTo(rocksScan());
    }

    interface BatchOps {
        void apply(Both b) throws RocksDBException;
    }

    record Both(WriteBatch ours, org.rocksdb.WriteBatch theirs) {
        Both put(String k, String v) throws RocksDBException {
            ours.put(b(k), b(v));
            theirs.put(b(k), b(v));
            return this;
        }

        Both delete(String k) throws RocksDBException {
            ours.delete(b(k));
            theirs.delete(b(k));
            return this;
        }

        Both merge(String k, String v) throws RocksDBException {
            ours.merge(b(k), b(v));
            theirs.merge(b(k), b(v));
            return this;
        }

        Both deleteRange(String begin, String end) throws RocksDBException {
            ours.deleteRange(b(begin), b(end));
            theirs.deleteRange(b(begin), b(end));
            return this;
        }
    }

    // ------------------------------------------------------------------ write batches

    @Test
    void batchesWithTheSameKeyTwiceRangeDeletionsAndMergesMatchRocksDb() throws RocksDBException {
        writeBoth(b -> b.put("a", "1").put("b", "1").put("c", "1").put("d", "1").put("m", "base"));
        writeBoth(b -> b.delete("a").put("a", "2")); // delete then put: the put wins
        writeBoth(b -> b.put("b", "2").delete("b")); // put then delete: gone
        writeBoth(b -> b.deleteRange("b", "d").put("c", "3")); // a later put in the range survives
        writeBoth(b -> b.put("e", "4").deleteRange("d", "f")); // an earlier put in the range is deleted
        writeBoth(b -> b.merge("m", "x").put("m", "y").merge("m", "z")); // the put resets the chain
        writeBoth(b -> b.merge("n", "p").merge("n", "q").delete("n").merge("n", "r"));
        writeBoth(b -> b.merge("o", "1").deleteRange("o", "p").merge("o", "2"));
        db.flush();
        try (org.rocksdb.FlushOptions fo = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
            rocks.flush(fo);
        }
        assertThat(ourScan()).isEqualTo(rocksScan());
        db.compactRange(null, null);
        rocks.compactRange();
        assertThat(ourScan()).isEqualTo(rocksScan());
    }

    @Test
    void aBatchIsReusableAfterWriteAndAfterClearAsInRocksDb() throws RocksDBException {
        WriteBatch ours = new WriteBatch();
        try (org.rocksdb.WriteBatch theirs = new org.rocksdb.WriteBatch();
                WriteOptions wo = new WriteOptions()) {
            Both both = new Both(ours, theirs);
            both.put("k", "1").merge("m", "a");
            db.write(ours);
            rocks.write(wo, theirs);
            // written again, unchanged: the merge applies twice
            db.write(ours);
            rocks.write(wo, theirs);
            assertThat(ourScan()).isEqualTo(rocksScan()).contains("m=a,a");
            // grown after a write: the old operations and the new one are written
            both.put("k2", "2");
            assertThat(ours.count()).isEqualTo(theirs.count()).isEqualTo(3);
            db.write(ours);
            rocks.write(wo, theirs);
            assertThat(ourScan()).isEqualTo(rocksScan());
            ours.clear();
            theirs.clear();
            assertThat(ours.count()).isEqualTo(theirs.count()).isZero();
            assertThat(ours.isEmpty()).isTrue();
            long before = db.stats().lastSequence();
            db.write(ours); // an empty batch writes nothing and takes no sequence number
            rocks.write(wo, theirs);
            assertThat(db.stats().lastSequence()).isEqualTo(before);
            both.delete("k");
            db.write(ours);
            rocks.write(wo, theirs);
            assertThat(ourScan()).isEqualTo(rocksScan());
        }
    }

    @Test
    void eachOperationOfABatchTakesOneSequenceNumberAsInRocksDb() throws RocksDBException {
        long ours0 = db.stats().lastSequence();
        long theirs0 = rocks.getLatestSequenceNumber();
        writeBoth(b -> b.put("a", "1").delete("b").merge("c", "x").deleteRange("d", "e"));
        assertThat(db.stats().lastSequence() - ours0).isEqualTo(rocks.getLatestSequenceNumber() - theirs0);
        try (Snapshot snap = db.getSnapshot();
                org.rocksdb.Snapshot rsnap = rocks.getSnapshot()) {
            assertThat(snap.sequence() - ours0).isEqualTo(rsnap.getSequenceNumber() - theirs0);
            rocks.releaseSnapshot(rsnap);
        }
    }

    // ------------------------------------------------------------------ multiGet

    @Test
    void multiGetWithDuplicatesAbsentKeysMergesRangeDeletionsAndSnapshotsMatchesRocksDb() throws RocksDBException {
        writeBoth(
                b -> b.put("a", "1").put("b", "2").put("c", "3").merge("m", "x").put("z", "26"));
        db.flush();
        try (org.rocksdb.FlushOptions fo = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
            rocks.flush(fo);
        }
        Snapshot snap = db.getSnapshot();
        org.rocksdb.Snapshot rsnap = rocks.getSnapshot();
        try {
            writeBoth(
                    b -> b.merge("m", "y").deleteRange("b", "d").put("c", "33").delete("z"));
            List<byte[]> keys = List.of(b("z"), b("c"), b("a"), b("nope"), b("c"), b("m"), b("b"), b("a"), b("m"));
            assertThat(strings(db.multiGet(keys))).isEqualTo(strings(rocks.multiGetAsList(keys)));
            try (org.rocksdb.ReadOptions rro = new org.rocksdb.ReadOptions().setSnapshot(rsnap)) {
                assertThat(strings(db.multiGet(ReadOptions.defaults().snapshot(snap), keys)))
                        .isEqualTo(strings(rocks.multiGetAsList(rro, keys)));
            }
            assertThat(db.multiGet(List.of())).isEmpty();
        } finally {
            snap.close();
            rocks.releaseSnapshot(rsnap);
            rsnap.close();
        }
    }

    @Test
    void multiGetRefusesANullOrEmptyKeyWithATypedException() {
        List<byte[]> withNull = new ArrayList<>();
        withNull.add(b("a"));
        withNull.add(null);
        assertThatThrownBy(() -> db.multiGet(withNull)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> db.multiGet(List.of(b("a"), new byte[0])))
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> db.multiGet(null)).isInstanceOf(InvalidArgumentException.class);
    }

    private static List<String> strings(List<byte[]> values) {
        List<String> out = new ArrayList<>();
        for (byte[] v : values) {
            out.add(s(v));
        }
        return out;
    }

    // ------------------------------------------------------------------ iterator bounds

    /** Every positioning call, in both engines, under each pair of bounds drawn from around the keys. */
    @Test
    void boundsEqualInvertedAndPastTheKeysMatchRocksDbInMemtablesAndTables() throws RocksDBException {
        for (String k : List.of("b", "d", "f", "h")) {
            db.put(b(k), b(k.toUpperCase(java.util.Locale.ROOT)));
            rocks.put(b(k), b(k.toUpperCase(java.util.Locale.ROOT)));
        }
        compareBounds("memtable");
        db.flush();
        compareBounds("table");
        db.close();
        db = Db.open(
                dir.resolve("bloomkv"),
                Options.defaults()
                        .mergeOperator(MergeOperators.stringAppend(','))
                        .rangeFilterBitsPerKey(10));
        db.compactRange(null, null); // tables with range filters
        assertThat(db.tables()).isNotEmpty();
        compareBounds("range-filtered table");
    }

    private void compareBounds(String where) {
        List<String> points = Arrays.asList(null, "a", "b", "c", "d", "e", "h", "i");
        for (String lower : points) {
            for (String upper : points) {
                ReadOptions rOurs = ReadOptions.defaults();
                if (lower != null) {
                    rOurs.iterateLowerBound(b(lower));
                }
                if (upper != null) {
                    rOurs.iterateUpperBound(b(upper));
                }
                try (Slice lo = lower == null ? null : new Slice(b(lower));
                        Slice hi = upper == null ? null : new Slice(b(upper));
                        org.rocksdb.ReadOptions rr = new org.rocksdb.ReadOptions()) {
                    if (lo != null) {
                        rr.setIterateLowerBound(lo);
                    }
                    if (hi != null) {
                        rr.setIterateUpperBound(hi);
                    }
                    try (DbIterator it = db.iterator(rOurs);
                            RocksIterator rit = rocks.newIterator(rr)) {
                        String ctx = where + " [" + lower + ", " + upper + ")";
                        it.seekToFirst();
                        rit.seekToFirst();
                        assertThat(walk(it, false)).as(ctx + " seekToFirst").isEqualTo(walk(rit, false));
                        it.seekToLast();
                        rit.seekToLast();
                        assertThat(walk(it, true)).as(ctx + " seekToLast").isEqualTo(walk(rit, true));
                        for (String t : List.of("a", "b", "c", "d", "e", "h", "i")) {
                            it.seek(b(t));
                            rit.seek(b(t));
                            assertThat(walk(it, false)).as(ctx + " seek " + t).isEqualTo(walk(rit, false));
                            it.seekForPrev(b(t));
                            rit.seekForPrev(b(t));
                            assertThat(walk(it, true))
                                    .as(ctx + " seekForPrev " + t)
                                    .isEqualTo(walk(rit, true));
                        }
                    }
                }
            }
        }
    }

    private static List<String> walk(DbIterator it, boolean reverse) {
        List<String> out = new ArrayList<>();
        for (; it.valid(); ) {
            out.add(s(it.key()));
            if (reverse) {
                it.prev();
            } else {
                it.next();
            }
        }
        return out;
    }

    private static List<String> walk(RocksIterator it, boolean reverse) {
        List<String> out = new ArrayList<>();
        for (; it.isValid(); ) {
            out.add(s(it.key()));
            if (reverse) {
                it.prev();
            } else {
                it.next();
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ snapshots, closed iterators

    @Test
    void releasedSnapshotsAndClosedDatabasesGiveTypedExceptions() {
        db.put(b("a"), b("1"));
        Snapshot snap = db.getSnapshot();
        snap.close();
        db.releaseSnapshot(snap); // a second release is a no-op
        snap.close();
        ReadOptions atReleased = ReadOptions.defaults().snapshot(snap);
        assertThatThrownBy(() -> db.get(b("a"), atReleased)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> db.multiGet(atReleased, List.of(b("a")))).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> db.iterator(atReleased)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> db.releaseSnapshot(null)).isInstanceOf(InvalidArgumentException.class);

        DbIterator it = db.iterator();
        assertThatThrownBy(it::key).isInstanceOf(NoSuchElementException.class); // not positioned
        assertThatThrownBy(() -> it.seek(null)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> it.seekForPrev(null)).isInstanceOf(InvalidArgumentException.class);
        // An empty target is no error, as in RocksDB (EmptySeekTargetDifferentialTest): the first key, then none.
        it.seek(new byte[0]);
        assertThat(s(it.key())).isEqualTo("a");
        it.seekForPrev(new byte[0]);
        assertThat(it.valid()).isFalse();
        it.seekToFirst();
        Snapshot open = db.getSnapshot();
        db.close();
        assertThatThrownBy(it::valid).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(it::seekToFirst).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(it::key).isInstanceOf(DbClosedException.class);
        it.close(); // after the database closed: a no-op
        it.close();
        open.close(); // after the database closed: a no-op
        assertThatThrownBy(() -> db.get(b("a"))).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(() -> db.multiGet(List.of(b("a")))).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(db::getSnapshot).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(db::iterator).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(() -> db.write(new WriteBatch())).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(() -> db.property("bloomkv.estimate-num-keys")).isInstanceOf(DbClosedException.class);
        db = null;
    }

    // ------------------------------------------------------------------ properties

    /**
     * RocksDB's estimate counts a deletion against the key it deletes: the memtables' entries less twice their deletes,
     * plus the tables' non-deletions less their deletions. Compared exactly while everything is in the memtable (in
     * tables RocksDB samples the files' statistics, so its estimate there depends on which files it sampled).
     */
    @Test
    void estimateNumKeysCountsDeletionsAsRocksDbDoes() throws RocksDBException {
        for (int i = 0; i < 100; i++) {
            byte[] k = b(String.format("k%03d", i));
            db.put(k, b("v"));
            rocks.put(k, b("v"));
        }
        for (int i = 0; i < 40; i++) {
            byte[] k = b(String.format("k%03d", i));
            db.delete(k);
            rocks.delete(k);
        }
        assertThat(estimate())
                .as("memtable")
                .isEqualTo(rocks.getLongProperty("rocksdb.estimate-num-keys"))
                .isEqualTo(60);
        for (int i = 40; i < 100; i++) {
            byte[] k = b(String.format("k%03d", i));
            db.delete(k);
            rocks.delete(k);
        }
        assertThat(estimate())
                .as("all deleted")
                .isEqualTo(rocks.getLongProperty("rocksdb.estimate-num-keys"))
                .isZero();
        db.flush(); // a table of puts and the tombstones that hide them
        assertThat(estimate()).as("flushed").isZero();
        db.compactRange(null, null); // the last level: the tombstones go too
        assertThat(db.stats().levelEntries(db.stats().numLevels() - 1)).isZero();
        for (int i = 0; i < 50; i++) {
            db.put(b(String.format("n%03d", i)), b("v"));
        }
        db.flush();
        for (int i = 0; i < 10; i++) {
            db.delete(b(String.format("n%03d", i))); // in the memtable, over keys of the tables
        }
        // RocksDB's formula: twice the memtable's deletes come off the whole estimate (10 + 50 - 20), so a delete in
        // the memtable of a key in the tables takes one key off
        assertThat(estimate()).as("tables and memtable").isEqualTo(40);
        db.compactRange(null, null);
        assertThat(estimate()).as("compacted").isEqualTo(40);
    }

    /**
     * Deletes in the memtable of keys that are in a table: RocksDB takes twice the memtable's deletes off the whole
     * estimate (memtable entries plus the tables' estimate), not off the memtable's entries alone.
     */
    @Test
    void estimateNumKeysMemtableDeletesOfFlushedKeysAsRocksDb() throws RocksDBException {
        for (int i = 0; i < 50; i++) {
            byte[] k = b(String.format("n%03d", i));
            db.put(k, b("v"));
            rocks.put(k, b("v"));
        }
        db.flush();
        try (org.rocksdb.FlushOptions fo = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
            rocks.flush(fo);
        }
        assertThat(estimate()).as("flushed").isEqualTo(rocks.getLongProperty("rocksdb.estimate-num-keys"));
        for (int i = 0; i < 10; i++) {
            byte[] k = b(String.format("n%03d", i));
            db.delete(k);
            rocks.delete(k);
        }
        assertThat(rocks.getLongProperty("rocksdb.estimate-num-keys"))
                .as("RocksDB")
                .isEqualTo(40);
        assertThat(estimate()).as("tables and memtable").isEqualTo(40);
        for (int i = 10; i < 50; i++) {
            byte[] k = b(String.format("n%03d", i));
            db.delete(k);
            rocks.delete(k);
        }
        assertThat(estimate()).as("all deleted").isEqualTo(rocks.getLongProperty("rocksdb.estimate-num-keys"));
    }

    private long estimate() {
        return Long.parseLong(db.property("bloomkv.estimate-num-keys").orElseThrow());
    }

    /**
     * {@code num-entries-active-mem-table} counts the active memtable only, as RocksDB's does, and
     * {@code num-entries-imm-mem-tables} those waiting for flush: both engines hold 50 entries in a frozen memtable
     * (its flush held back: RocksDB's background work paused, bloomkv's flush thread held at its table's creation) and
     * 10 in the active one. bloomkv counted all memtables under the active name.
     */
    @Test
    void activeMemtableEntriesCountTheActiveMemtableOnly() throws Exception {
        for (int i = 0; i < 50; i++) {
            rocks.put(TestKeys.key(i), TestKeys.key(i));
        }
        rocks.pauseBackgroundWork();
        try (org.rocksdb.FlushOptions fo =
                new org.rocksdb.FlushOptions().setWaitForFlush(false).setAllowWriteStall(true)) {
            rocks.flush(fo);
        }
        for (int i = 50; i < 60; i++) {
            rocks.put(TestKeys.key(i), TestKeys.key(i));
        }
        String rocksActive = rocks.getProperty("rocksdb.num-entries-active-mem-table");
        String rocksImm = rocks.getProperty("rocksdb.num-entries-imm-mem-tables");
        rocks.continueBackgroundWork();
        assertThat(rocksActive).isEqualTo("10");
        assertThat(rocksImm).isEqualTo("50");

        java.util.concurrent.CountDownLatch flushHeld = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        io.bloomkv.engine.fs.FileSystem holdingFlush =
                new io.bloomkv.engine.fs.ForwardingFileSystem(io.bloomkv.engine.fs.FileSystem.disk()) {
                    @Override
                    public io.bloomkv.engine.fs.WritableFile newWritableFile(Path p) throws java.io.IOException {
                        if (p.toString().endsWith(".sst")) {
                            flushHeld.countDown();
                            try {
                                release.await(120, java.util.concurrent.TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                        return super.newWritableFile(p);
                    }
                };
        java.util.concurrent.ExecutorService flusher = java.util.concurrent.Executors.newSingleThreadExecutor();
        try (Db held = Db.open(dir.resolve("held"), Options.defaults().fileSystem(holdingFlush))) {
            for (int i = 0; i < 50; i++) {
                held.put(TestKeys.key(i), TestKeys.key(i));
            }
            java.util.concurrent.Future<?> flushed = flusher.submit(held::flush);
            try {
                assertThat(flushHeld.await(60, java.util.concurrent.TimeUnit.SECONDS))
                        .isTrue();
                for (int i = 50; i < 60; i++) {
                    held.put(TestKeys.key(i), TestKeys.key(i));
                }
                assertThat(held.property("bloomkv.num-immutable-mem-table")).hasValue("1");
                assertThat(held.property("bloomkv.num-entries-active-mem-table"))
                        .hasValue(rocksActive);
                assertThat(held.property("bloomkv.num-entries-imm-mem-tables")).hasValue(rocksImm);
            } finally {
                release.countDown();
            }
            flushed.get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(held.property("bloomkv.num-entries-active-mem-table")).hasValue("10");
            assertThat(held.property("bloomkv.num-entries-imm-mem-tables")).hasValue("0");
        } finally {
            flusher.shutdownNow();
        }
    }
}
