package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Write-side review: interactions of compaction, range deletions, merges, snapshots, ingestion and recovery. */
class WriteSideReviewTest {
    @TempDir
    Path dir;

    @AfterEach
    void noTableLeftOpen() {
        assertThat(TableReader.liveTables()).as("no table left open").isZero();
    }

    /**
     * A tombstone ending at {@code end || 0x00} covers {@code end} itself, and its table's largest key is {@code end}
     * (RangeTombstone.largestCoveredBound). deleteFilesInRange(begin, end) must not take such a table for one "inside"
     * the range: removing it brings back an older version of {@code end}, a key outside the range.
     */
    @Test
    void deleteFilesInRangeKeepsATombstoneThatCoversTheEndKey() {
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false))) {
            db.put(bytes("k"), bytes("old"));
            db.flush();
            db.compactRange(null, null); // "k" in a deeper table that stays (it holds the end key)
            db.deleteRange(bytes("b"), bytes("k\0")); // covers b.. and "k" itself
            db.flush(); // a level-0 table of the tombstone only: its key range is [b, k]
            assertThat(db.get(bytes("k"))).isNull();

            db.deleteFilesInRange(bytes("b"), bytes("k"));

            assertThat(db.get(bytes("k")))
                    .as("a key outside [b, k) must read as before")
                    .isNull();
        }
    }

    /**
     * CompactionFilter's contract: it never sees a value a snapshot can still read. A snapshot taken while a
     * compaction runs (after it read the list of snapshots) reads the values the compaction is filtering: once the
     * compaction is installed, the snapshot must still read them as before.
     */
    @Test
    void aSnapshotTakenDuringACompactionKeepsWhatTheFilterWouldRemove() throws Exception {
        CountDownLatch inFilter = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        CompactionFilter dropAll = (level, bottommost, key, value) -> {
            if (first.compareAndSet(true, false)) {
                inFilter.countDown();
                try {
                    proceed.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return CompactionFilter.Decision.REMOVE;
        };
        try (Db db = Db.open(dir, Options.defaults().autoCompaction(false).compactionFilter(dropAll))) {
            db.put(bytes("a"), bytes("1"));
            db.put(bytes("b"), bytes("2"));
            db.flush();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread compaction = new Thread(() -> {
                try {
                    db.compactRange(null, null);
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            compaction.start();
            assertThat(inFilter.await(30, TimeUnit.SECONDS)).isTrue();
            try (Snapshot snap = db.getSnapshot()) {
                ReadOptions at = ReadOptions.defaults().snapshot(snap);
                assertThat(db.get(bytes("a"), at)).isEqualTo(bytes("1"));
                proceed.countDown();
                compaction.join();
                assertThat(failed.get()).isNull();
                assertThat(db.get(bytes("a"), at))
                        .as("what the snapshot read before")
                        .isEqualTo(bytes("1"));
                assertThat(db.get(bytes("b"), at))
                        .as("what the snapshot read before")
                        .isEqualTo(bytes("2"));
            } finally {
                proceed.countDown();
                compaction.join();
            }
        }
    }

    /** A point a database thread stops at, once armed, until the test releases it. */
    static final class Gate {
        private final CountDownLatch reached = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private final AtomicBoolean armed = new AtomicBoolean();

        void arm() {
            armed.set(true);
        }

        /** Waits until a thread stopped here. */
        void awaitReached() throws InterruptedException {
            assertThat(reached.await(30, TimeUnit.SECONDS))
                    .as("a thread reached the gate")
                    .isTrue();
        }

        void release() {
            released.countDown();
        }

        /** Called by the database's thread: stops here the first time after {@link #arm}. */
        void pass() {
            if (armed.compareAndSet(true, false)) {
                reached.countDown();
                try {
                    released.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * The disk, with gates where the database syncs its MANIFEST, creates a WAL and closes a WAL: what a database
     * publishes between two steps can be looked at from another thread.
     */
    static final class GatedFileSystem extends ForwardingFileSystem {
        final Gate manifestSync = new Gate();
        final Gate logCreate = new Gate();
        final Gate logClose = new Gate();

        GatedFileSystem() {
            super(FileSystem.disk());
        }

        @Override
        public WritableFile newWritableFile(Path p) throws IOException {
            String name = p.getFileName().toString();
            boolean log = name.endsWith(".log");
            if (log) {
                logCreate.pass();
            }
            boolean manifest = name.startsWith("MANIFEST");
            return new ForwardingFileSystem.ForwardingWritableFile(delegate().newWritableFile(p)) {
                @Override
                public void sync() throws IOException {
                    if (manifest) {
                        manifestSync.pass();
                    }
                    super.sync();
                }

                @Override
                public void close() throws IOException {
                    if (log) {
                        logClose.pass();
                    }
                    super.close();
                }
            };
        }
    }

    /** Runs {@code body} on a new thread; its failure, if any, goes to {@code failed}. */
    private static Thread start(AtomicReference<Throwable> failed, Runnable body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failed.compareAndSet(null, e);
            }
        });
        t.start();
        return t;
    }

    /**
     * A flush records its table (the Version changes) before it drops its memtable from the immutable ones. A
     * SuperVersion published in between by another thread (here a memtable switch) must not hold both the memtable and
     * the table made of it: a reader would meet each merge operand twice and apply it twice.
     */
    @Test
    void aSuperVersionPublishedDuringAFlushHoldsItsEntriesOnce() throws Exception {
        GatedFileSystem fs = new GatedFileSystem();
        Options options = Options.defaults()
                .autoCompaction(false)
                .maxImmutableMemtables(2) // a second memtable is frozen while the first one's flush runs
                .fileSystem(fs)
                .syncMode(SyncMode.NONE) // the flushed memtable's WAL is closed by the flush (a gate)
                .mergeOperator(MergeOperators.stringAppend(','));
        AtomicReference<Throwable> failed = new AtomicReference<>();
        try (Db db = Db.open(dir.resolve("db"), options)) {
            db.merge(bytes("k"), bytes("a"));
            fs.manifestSync.arm();
            Thread flush1 = start(failed, db::flush); // the flush of the memtable holding the operand
            Thread flush2 = null;
            try {
                fs.manifestSync.awaitReached(); // its table written, not yet in the Version
                db.put(bytes("other"), bytes("x"));
                fs.logCreate.arm();
                flush2 = start(failed, db::flush); // a memtable switch: it holds the mutex while it creates its WAL
                fs.logCreate.awaitReached();
                fs.logClose.arm();
                fs.manifestSync.release(); // the first flush installs its Version, then waits for the mutex
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (db.stats().flushes() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(1); // counted after the Version is installed, before the mutex is taken
                }
                fs.logCreate.release(); // the switch publishes a SuperVersion, then the flush drops its memtable
                fs.logClose.awaitReached(); // and closes its WAL before publishing its own SuperVersion
                assertThat(str(db.get(bytes("k"))))
                        .as("the operand applied once")
                        .isEqualTo("a");
                try (DbIterator it = db.iterator()) {
                    it.seek(bytes("k"));
                    assertThat(str(it.value())).as("the operand applied once").isEqualTo("a");
                }
            } finally {
                fs.manifestSync.release();
                fs.logCreate.release();
                fs.logClose.release();
                flush1.join();
                if (flush2 != null) {
                    flush2.join();
                }
            }
            assertThat(failed.get()).isNull();
            assertThat(str(db.get(bytes("k")))).isEqualTo("a");
        }
    }

    /**
     * An ingestion over existing keys (or under an open snapshot) takes a new sequence number S. A snapshot taken
     * while it records its tables must read the same before and after the ingestion is installed: either S with the
     * ingested values from the start, or an older sequence.
     */
    @Test
    void aSnapshotTakenWhileAnIngestionIsRecordedReadsTheSameAfterIt() throws Exception {
        GatedFileSystem fs = new GatedFileSystem();
        Options options =
                Options.defaults().autoCompaction(false).fileSystem(fs).syncMode(SyncMode.NONE);
        Path file = dir.resolve("ext.sst");
        try (TableFileWriter w = TableFileWriter.create(file, options)) {
            w.put(bytes("k"), bytes("new"));
            w.finish();
        }
        try (Db db = Db.open(dir.resolve("db"), options)) {
            db.put(bytes("k"), bytes("old"));
            db.flush(); // the file overlaps a table: rewritten at a new sequence
            try (Snapshot older = db.getSnapshot()) {
                fs.manifestSync.arm();
                AtomicReference<Throwable> failed = new AtomicReference<>();
                Thread ingest = new Thread(() -> {
                    try {
                        db.ingest(List.of(file), IngestOptions.defaults());
                    } catch (Throwable t) {
                        failed.set(t);
                    }
                });
                ingest.start();
                try {
                    fs.manifestSync.awaitReached();
                    AtomicReference<Snapshot> taken = new AtomicReference<>();
                    AtomicReference<byte[]> before = new AtomicReference<>();
                    Thread reader = new Thread(() -> {
                        Snapshot s = db.getSnapshot();
                        taken.set(s);
                        before.set(db.get(bytes("k"), ReadOptions.defaults().snapshot(s)));
                    });
                    reader.start();
                    reader.join(500); // a snapshot may wait for the ingestion instead
                    fs.manifestSync.release();
                    ingest.join();
                    reader.join();
                    assertThat(failed.get()).isNull();
                    try (Snapshot during = taken.get()) {
                        assertThat(db.get(bytes("k"), ReadOptions.defaults().snapshot(during)))
                                .as("the snapshot reads what it read before the ingestion was installed")
                                .isEqualTo(before.get());
                    }
                    assertThat(db.get(bytes("k"), ReadOptions.defaults().snapshot(older)))
                            .isEqualTo(bytes("old"));
                    assertThat(db.get(bytes("k"))).isEqualTo(bytes("new"));
                } finally {
                    fs.manifestSync.release();
                    ingest.join();
                }
            }
        }
    }

    /** Keys of {@link #deleteFilesInRangeUnderATombstoneChangesNoRead}'s key space. */
    private static final int FK = 200;

    /** A key of {@link #deleteFilesInRangeUnderATombstoneChangesNoRead}'s key space. */
    private static String fk(int i) {
        return String.format("k%03d", i);
    }

    private static TreeMap<String, String> scanHex(Db db, ReadOptions ro) {
        try (DbIterator it = db.iterator(ro)) {
            return scanHex(it);
        }
    }

    private static TreeMap<String, String> scanHex(DbIterator it) {
        TreeMap<String, String> out = new TreeMap<>();
        for (it.seekToFirst(); it.valid(); it.next()) {
            out.put(HexFormat.of().formatHex(it.key()), HexFormat.of().formatHex(it.value()));
        }
        return out;
    }

    /**
     * Every key of the key space read at {@code at} by one multiGet (or a get each), as {@link #scanHex} gives them.
     */
    private static TreeMap<String, String> pointReads(Db db, ReadOptions at, boolean multiGet) {
        List<byte[]> keys = new ArrayList<>();
        for (int x = 0; x < FK; x++) {
            keys.add(bytes(fk(x)));
        }
        List<byte[]> values = new ArrayList<>();
        if (multiGet) {
            values = db.multiGet(at, keys);
        } else {
            for (byte[] k : keys) {
                values.add(db.get(k, at));
            }
        }
        TreeMap<String, String> out = new TreeMap<>();
        for (int i = 0; i < keys.size(); i++) {
            if (values.get(i) != null) {
                out.put(HexFormat.of().formatHex(keys.get(i)), HexFormat.of().formatHex(values.get(i)));
            }
        }
        return out;
    }

    /** Throws when two scans of one view differ, naming the keys that differ (hex). */
    private static void sameReads(
            String view, long seed, TreeMap<String, String> first, TreeMap<String, String> second) {
        if (first.equals(second)) {
            return;
        }
        TreeMap<String, String> diff = new TreeMap<>();
        for (String key : first.keySet()) {
            if (!first.get(key).equals(second.get(key))) {
                diff.put(key, first.get(key) + " then " + second.get(key));
            }
        }
        for (String key : second.keySet()) {
            if (!first.containsKey(key)) {
                diff.put(key, "null then " + second.get(key));
            }
        }
        throw new AssertionError(
                "seed " + seed + ": " + view + " read differently (hex key: before then after): " + diff);
    }

    /**
     * Randomized (seeded): after {@code deleteRange(b, e)} and no later write in [b, e), {@code deleteFilesInRange}
     * over any part [b2, e2) of the range changes no read (user guide), latest or at a snapshot, whatever the tables
     * hold (puts, deletes, merge operands, tombstones ending at a key or just after it, "key || 0x00"), with
     * background flushes and compactions, gets of the bounds included.
     */
    @Test
    void deleteFilesInRangeUnderATombstoneChangesNoRead() {
        long seed = TestKeys.seed("WriteSideReviewTest.deleteFilesInRange");
        Random rnd = new Random(seed);
        Options o = Options.defaults()
                .writeBufferSize(8 << 10)
                .targetFileSize(4 << 10)
                .maxBytesForLevelBase(16 << 10)
                .l0CompactionTrigger(2)
                .autoCompaction(rnd.nextBoolean()) // without: level-0 tables stay as flushed until a compactRange
                .syncMode(SyncMode.NONE)
                .fileSystem(new io.bloomkv.engine.fs.NoFsyncFileSystem())
                .mergeOperator(MergeOperators.uint64Add())
                .tablePartitionPrefixLength(3); // "k00" to "k19", 10 keys each: tables wholly in a range
        long removed = 0;
        Db db = Db.open(dir, o);
        try {
            for (int round = 0; round < 30; round++) {
                String ctx = "seed " + seed + " round " + round;
                for (int i = 0, n = 50 + rnd.nextInt(300); i < n; i++) {
                    byte[] k = bytes(fk(rnd.nextInt(FK)));
                    int r = rnd.nextInt(10);
                    if (r < 6) {
                        db.put(k, bytes("v" + round + "-" + i + "x".repeat(rnd.nextInt(40))));
                    } else if (r < 8) {
                        db.merge(k, MergeOperators.encodeUint64(rnd.nextInt(100)));
                    } else {
                        db.delete(k);
                    }
                    if (rnd.nextInt(100) == 0) {
                        db.flush();
                    }
                }
                int from = rnd.nextInt(FK - 10);
                int to = Math.min(FK - 1, from + 1 + rnd.nextInt(80));
                if (rnd.nextBoolean()) { // whole partitions: their tables lie wholly in the range
                    from -= from % 10;
                    to = Math.min(FK - 10, to - to % 10 + 10);
                }
                boolean coversEndKey = rnd.nextBoolean(); // end = "k<to>\0": the key k<to> is covered too
                byte[] b = bytes(fk(from));
                byte[] e = coversEndKey ? bytes(fk(to) + "\0") : bytes(fk(to));
                boolean alone = rnd.nextBoolean(); // the tombstone flushed alone: a table of it only
                if (alone) {
                    db.flush();
                }
                db.deleteRange(b, e);
                if (alone) {
                    db.flush();
                }
                int last = coversEndKey ? to : to - 1; // the largest key the tombstone covers
                for (int i = 0, n = rnd.nextInt(200); i < n; i++) { // writes outside [from, last] only
                    int x = rnd.nextInt(FK);
                    if (x < from || x > last) {
                        db.put(bytes(fk(x)), bytes("w" + round + "-" + i));
                    }
                }
                if (rnd.nextBoolean()) {
                    db.flush();
                }
                if (rnd.nextInt(4) == 0) {
                    db.compactRange(null, null);
                }
                Snapshot snap = rnd.nextInt(3) == 0 ? db.getSnapshot() : null;
                try {
                    TreeMap<String, String> before = scanHex(db, ReadOptions.defaults());
                    TreeMap<String, String> atSnap = snap == null
                            ? null
                            : scanHex(db, ReadOptions.defaults().snapshot(snap));
                    // [b2, e2) inside [b, e): e2 is e, or a key in (b2, last] (the end key itself: fk(to) when the
                    // tombstone ends just after it)
                    int from2 = rnd.nextBoolean() ? from : from + rnd.nextInt(last - from + 1);
                    byte[] b2 = bytes(fk(from2));
                    int r2 = rnd.nextInt(3);
                    byte[] e2 = r2 == 0 ? e : bytes(fk(r2 == 1 ? last : from2 + 1 + rnd.nextInt(last - from2 + 1)));
                    removed += db.deleteFilesInRange(b2, e2);
                    assertThat(scanHex(db, ReadOptions.defaults()))
                            .as(ctx + ": deleteFilesInRange under a tombstone changes no read")
                            .isEqualTo(before);
                    for (int x = Math.max(0, from - 1); x <= Math.min(FK - 1, to + 1); x++) {
                        String hex = HexFormat.of().formatHex(bytes(fk(x)));
                        byte[] v = db.get(bytes(fk(x)));
                        assertThat(v == null ? null : HexFormat.of().formatHex(v))
                                .as(ctx + ": get " + fk(x))
                                .isEqualTo(before.get(hex));
                    }
                    if (snap != null) {
                        assertThat(scanHex(db, ReadOptions.defaults().snapshot(snap)))
                                .as(ctx + ": at the snapshot")
                                .isEqualTo(atSnap);
                    }
                } finally {
                    if (snap != null) {
                        snap.close();
                    }
                }
                if (rnd.nextInt(10) == 0) {
                    db.close();
                    db = Db.open(dir, o);
                }
            }
            assertThat(removed).as("seed " + seed + ": tables were removed").isPositive();
            System.out.println("WriteSideReviewTest.deleteFilesInRange seed " + seed + ": " + removed + " removed");
        } finally {
            db.close();
        }
    }

    /**
     * Randomized (seeded): write batches mixing puts, deletes, merge operands and range deletions, left in the WAL
     * (a close does not flush), replayed by an open with a write buffer so small that recovery cuts the replay into
     * many level-0 tables: a tombstone of a later table must still hide the entries of earlier ones, and an operand
     * chain cut between two tables must merge once. Every read after the reopen equals the one before the close.
     */
    @Test
    void walReplayCutIntoManyTablesReadsAsBefore() {
        long seed = TestKeys.seed("WriteSideReviewTest.walReplay");
        Random rnd = new Random(seed);
        Options big = Options.defaults()
                .writeBufferSize(64 << 20)
                .syncMode(SyncMode.NONE)
                .fileSystem(new io.bloomkv.engine.fs.NoFsyncFileSystem())
                .mergeOperator(MergeOperators.stringAppend(','));
        TreeMap<String, String> before;
        try (Db db = Db.open(dir, big)) {
            for (int i = 0; i < 3000; i++) {
                WriteBatch batch = new WriteBatch();
                for (int j = 0, n = 1 + rnd.nextInt(4); j < n; j++) {
                    byte[] k = bytes(fk(rnd.nextInt(FK)));
                    int r = rnd.nextInt(20);
                    if (r < 8) {
                        batch.put(k, bytes("p" + i + "." + j));
                    } else if (r < 16) {
                        batch.merge(k, bytes("m" + i + "." + j));
                    } else if (r < 19) {
                        batch.delete(k);
                    } else {
                        int from = rnd.nextInt(FK);
                        batch.deleteRange(bytes(fk(from)), bytes(fk(Math.min(FK, from + 1 + rnd.nextInt(20)))));
                    }
                }
                db.write(batch);
            }
            assertThat(db.tables())
                    .as("everything still in the memtable and the WAL")
                    .isEmpty();
            before = scanHex(db, ReadOptions.defaults());
        }
        Options small = big.writeBufferSize(4 << 10).autoCompaction(false);
        try (Db db = Db.open(dir, small)) {
            assertThat(db.tables().size())
                    .as("seed " + seed + ": the replay was cut")
                    .isGreaterThan(5);
            assertThat(scanHex(db, ReadOptions.defaults()))
                    .as("seed " + seed + ": after replay")
                    .isEqualTo(before);
            for (int x = 0; x < FK; x++) {
                byte[] v = db.get(bytes(fk(x)));
                assertThat(v == null ? null : HexFormat.of().formatHex(v))
                        .as("seed " + seed + ": get " + fk(x))
                        .isEqualTo(before.get(HexFormat.of().formatHex(bytes(fk(x)))));
            }
            db.compactRange(null, null);
            assertThat(scanHex(db, ReadOptions.defaults()))
                    .as("seed " + seed + ": compacted")
                    .isEqualTo(before);
        }
    }

    /**
     * Randomized (seeded writer; the threads' interleaving is not replayable): a snapshot reads the same each time,
     * while a writer runs everything that rewrites the tree under it: puts, merge operands, deletes, range deletions,
     * flushes, background and manual compactions with a compaction filter that removes and changes values, ingestions
     * over existing keys, deleteFilesInRange under a tombstone. Two readers take snapshots at random points and scan
     * each one twice, some time apart, and read every key with gets and a multiGet in between; a third scans an open
     * iterator twice.
     */
    @Test
    void snapshotsReadTheSameWhileTheTreeIsRewritten() throws Exception {
        long seed = TestKeys.seed("WriteSideReviewTest.snapshots");
        Random rnd = new Random(seed);
        CompactionFilter filter = (level, bottommost, key, value) -> value.length > 0 && value[0] == 'x'
                ? CompactionFilter.Decision.REMOVE
                : value.length > 0 && value[0] == 'y'
                        ? CompactionFilter.Decision.changeValue(bytes("changed"))
                        : CompactionFilter.Decision.KEEP;
        Options o = Options.defaults()
                .writeBufferSize(8 << 10)
                .targetFileSize(4 << 10)
                .maxBytesForLevelBase(16 << 10)
                .l0CompactionTrigger(2)
                .syncMode(SyncMode.NONE)
                .fileSystem(new io.bloomkv.engine.fs.NoFsyncFileSystem())
                .mergeOperator(MergeOperators.stringAppend(','))
                .maxImmutableMemtables(1 + rnd.nextInt(3))
                .tablePartitionPrefixLength(rnd.nextBoolean() ? 3 : 0)
                .compactionFilter(filter);
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (Db db = Db.open(dir.resolve("db"), o)) {
            List<Thread> readers = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                boolean iterator = t == 2; // an open iterator (no snapshot) rescanned from the start
                Thread r = new Thread(() -> {
                    try {
                        while (!done.get() && failure.get() == null) {
                            if (iterator) {
                                try (DbIterator it = db.iterator()) {
                                    TreeMap<String, String> first = scanHex(it);
                                    Thread.sleep(1 + (first.size() & 7));
                                    sameReads("iterator at " + it.sequence(), seed, first, scanHex(it));
                                }
                                continue;
                            }
                            try (Snapshot snap = db.getSnapshot()) {
                                ReadOptions at = ReadOptions.defaults().snapshot(snap);
                                TreeMap<String, String> first = scanHex(db, at);
                                Thread.sleep(1 + (first.size() & 7));
                                String view = "snapshot at " + snap.sequence();
                                sameReads(view + " (multiGet)", seed, first, pointReads(db, at, true));
                                sameReads(view + " (get)", seed, first, pointReads(db, at, false));
                                sameReads(view, seed, first, scanHex(db, at));
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                r.start();
                readers.add(r);
            }
            try {
                for (int step = 0; step < 3000 && failure.get() == null; step++) {
                    int r = rnd.nextInt(1000);
                    byte[] k = bytes(fk(rnd.nextInt(FK)));
                    if (r < 500) {
                        String prefix = rnd.nextInt(4) == 0 ? "x" : rnd.nextInt(3) == 0 ? "y" : "v";
                        db.put(k, bytes(prefix + step + "-".repeat(rnd.nextInt(30))));
                    } else if (r < 750) {
                        db.merge(k, bytes("m" + step));
                    } else if (r < 900) {
                        db.delete(k);
                    } else if (r < 940) {
                        int from = rnd.nextInt(FK - 1);
                        db.deleteRange(bytes(fk(from)), bytes(fk(from + 1 + rnd.nextInt(Math.min(20, FK - 1 - from)))));
                    } else if (r < 960) {
                        db.flush();
                    } else if (r < 975) {
                        int from = rnd.nextInt(FK - 1);
                        db.compactRange(bytes(fk(from)), bytes(fk(from + rnd.nextInt(FK - from))));
                    } else if (r < 990) {
                        Path file = dir.resolve("ingest-" + step + ".sst");
                        int from = rnd.nextInt(FK - 10);
                        try (TableFileWriter w = TableFileWriter.create(file, o)) {
                            for (int x = from; x < from + 10; x += 1 + rnd.nextInt(3)) {
                                w.put(bytes(fk(x)), bytes((rnd.nextBoolean() ? "x" : "i") + step));
                            }
                            w.finish();
                        }
                        db.ingest(List.of(file), IngestOptions.defaults().moveFiles(rnd.nextBoolean()));
                    } else {
                        int from = rnd.nextInt(FK - 1);
                        byte[] b = bytes(fk(from));
                        byte[] e = bytes(fk(from + 1 + rnd.nextInt(Math.min(40, FK - 1 - from))));
                        db.deleteRange(b, e);
                        db.deleteFilesInRange(b, e);
                    }
                }
            } finally {
                done.set(true);
                for (Thread r : readers) {
                    r.join();
                }
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
        }
    }
}
