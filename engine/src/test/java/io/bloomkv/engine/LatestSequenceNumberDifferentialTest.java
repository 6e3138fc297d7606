package io.bloomkv.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
import org.rocksdb.SstFileWriter;
import org.rocksdb.StringAppendOperator;
import org.rocksdb.WriteOptions;

/**
 * {@link Db#latestSequenceNumber()} against RocksDB's {@code getLatestSequenceNumber()} (rocksdbjni) over one seeded
 * history of puts, deletes, merges, range deletions (empty ones too), write batches mixing them (empty ones too),
 * flushes, snapshots, close and reopen, and ingestions of one to three files into new key ranges or over keys the
 * database holds, with and without snapshots open. After every step bloomkv's number must equal the count its
 * documentation gives, and RocksDB's must equal it plus the documented differences so far: RocksDB numbers a range
 * deletion of an empty range (bloomkv writes none), and an ingestion that needs a sequence number takes one per file
 * there, one for all its files here. At a reopen (and a read-only open) bloomkv's number stays, while RocksDB's may go
 * back when its last writes ended in empty range deletions, never below the last number it gave an entry: the test
 * checks that bound, then follows RocksDB's number. A snapshot's sequence equals the latest number on both sides.
 *
 * <p>Replay with -Dbloomkv.seed=N; -Dbloomkv.modelOps=N for a longer history (default 400 steps).
 */
@ExtendWith(NoTableLeak.class)
class LatestSequenceNumberDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 400);
    private static final int KEYS = 300;

    private static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    private static String key(int i) {
        return String.format("k%04d", i);
    }

    private static Options options() {
        return Options.defaults().autoCompaction(false).mergeOperator(MergeOperators.stringAppend(','));
    }

    @Test
    void followsRocksDbOverARandomHistory() throws Exception {
        long seed = TestSeeds.seed("LatestSequenceNumberDifferentialTest.followsRocksDbOverARandomHistory");
        new History(seed).run();
    }

    /** The two databases side by side, with what each number must be. */
    private final class History {
        final long seed;
        final Random rnd;
        final Path ours = dir.resolve("bloomkv");
        final Path theirs = dir.resolve("rocksdb");
        final Path files = dir.resolve("files");
        final List<String> log = new ArrayList<>();
        /** Keys some write or ingestion gave an entry: none of them leaves the tree (no compaction runs). */
        final TreeSet<String> present = new TreeSet<>();

        final List<Snapshot> snaps = new ArrayList<>();
        final List<org.rocksdb.Snapshot> rsnaps = new ArrayList<>();
        Db db;
        RocksDB rocks;
        /** What bloomkv's latest sequence number must be. */
        long expected;
        /** RocksDB's number less bloomkv's: the documented differences so far. */
        long difference;
        /**
         * The highest number RocksDB gave an entry (or an ingested file): its memtable inserter gives an empty range
         * deletion none, so this is below RocksDB's published number while the last writes that took numbers end in
         * empty range deletions. What a reopen recovers lies between the two (see {@link #reopen}).
         */
        long rocksEntryMax;
        /** Reopens after which RocksDB's number went back. */
        int rocksWentBack;

        int fileCounter;
        int freshRegions;

        History(long seed) {
            this.seed = seed;
            this.rnd = new Random(seed);
        }

        void run() throws Exception {
            Files.createDirectories(files);
            try (StringAppendOperator append = new StringAppendOperator(',');
                    org.rocksdb.Options ro = new org.rocksdb.Options()
                            .setCreateIfMissing(true)
                            .setMergeOperator(append)
                            .setDisableAutoCompactions(true);
                    EnvOptions env = new EnvOptions();
                    FlushOptions flush = new FlushOptions().setWaitForFlush(true);
                    WriteOptions wo = new WriteOptions();
                    IngestExternalFileOptions ingest = new IngestExternalFileOptions()) {
                db = Db.open(ours, options());
                rocks = RocksDB.open(ro, theirs.toString());
                try {
                    check(-1, "new databases");
                    assertThat(db.latestSequenceNumber()).as("a new database").isZero();
                    for (int op = 0; op < OPS; op++) {
                        step(op, ro, env, flush, wo, ingest);
                        check(op, log.get(log.size() - 1));
                    }
                    releaseSnapshots();
                } finally {
                    releaseSnapshots();
                    db.close();
                    rocks.close();
                }
                try (Db ro1 = Db.open(ours, options().readOnly(true));
                        RocksDB rro = RocksDB.openReadOnly(ro, theirs.toString())) {
                    assertThat(ro1.latestSequenceNumber())
                            .as(ctx(OPS) + ": read-only open")
                            .isEqualTo(expected);
                    checkRocksRecovered(OPS, "a read-only open", expected + difference, rro.getLatestSequenceNumber());
                }
            }
            System.out.println("LatestSequenceNumberDifferentialTest: seed " + seed + ", " + OPS
                    + " steps, last sequence " + expected + " (RocksDB " + (expected + difference)
                    + ", whose number went back at " + rocksWentBack + " reopens)");
        }

        String ctx(int op) {
            int from = Math.max(0, log.size() - 8);
            return "seed " + seed + " (-Dbloomkv.seed=" + seed + ") step " + op + ", last steps "
                    + log.subList(from, log.size());
        }

        void check(int op, String what) {
            assertThat(db.latestSequenceNumber())
                    .as(ctx(op) + ": bloomkv after " + what)
                    .isEqualTo(expected);
            assertThat(rocks.getLatestSequenceNumber())
                    .as(ctx(op) + ": RocksDB after " + what + " (bloomkv " + expected + " + differences " + difference
                            + ")")
                    .isEqualTo(expected + difference);
        }

        void step(
                int op,
                org.rocksdb.Options ro,
                EnvOptions env,
                FlushOptions flush,
                WriteOptions wo,
                IngestExternalFileOptions ingest)
                throws Exception {
            int r = rnd.nextInt(100);
            if (r < 18) {
                String k = key(rnd.nextInt(KEYS));
                db.put(b(k), b("v" + op));
                rocks.put(b(k), b("v" + op));
                present.add(k);
                expected++;
                rocksEntryMax = expected + difference;
                log.add("put " + k);
            } else if (r < 26) {
                String k = key(rnd.nextInt(KEYS));
                db.delete(b(k));
                rocks.delete(b(k));
                present.add(k);
                expected++;
                rocksEntryMax = expected + difference;
                log.add("delete " + k);
            } else if (r < 36) {
                String k = key(rnd.nextInt(KEYS));
                db.merge(b(k), b("m" + op));
                rocks.merge(b(k), b("m" + op));
                present.add(k);
                expected++;
                rocksEntryMax = expected + difference;
                log.add("merge " + k);
            } else if (r < 42) {
                int from = rnd.nextInt(KEYS - 1);
                int to = from + 1 + rnd.nextInt(Math.min(20, KEYS - from - 1));
                db.deleteRange(b(key(from)), b(key(to)));
                rocks.deleteRange(b(key(from)), b(key(to)));
                expected++;
                rocksEntryMax = expected + difference;
                log.add("deleteRange [" + key(from) + ", " + key(to) + ")");
            } else if (r < 45) {
                String k = key(rnd.nextInt(KEYS));
                db.deleteRange(b(k), b(k));
                rocks.deleteRange(b(k), b(k));
                difference++; // RocksDB numbers it; bloomkv writes nothing
                log.add("deleteRange [" + k + ", " + k + ") (empty)");
            } else if (r < 60) {
                batch(op, wo);
            } else if (r < 66) {
                db.flush();
                rocks.flush(flush);
                log.add("flush");
            } else if (r < 72) {
                Snapshot s = db.getSnapshot();
                org.rocksdb.Snapshot rs = rocks.getSnapshot();
                snaps.add(s);
                rsnaps.add(rs);
                log.add("snapshot");
                assertThat(s.sequence()).as(ctx(op) + ": snapshot sequence").isEqualTo(expected);
                assertThat(rs.getSequenceNumber())
                        .as(ctx(op) + ": RocksDB snapshot sequence")
                        .isEqualTo(expected + difference);
            } else if (r < 77) {
                if (!snaps.isEmpty()) {
                    int i = rnd.nextInt(snaps.size());
                    snaps.remove(i).close();
                    rocks.releaseSnapshot(rsnaps.remove(i));
                }
                log.add("release a snapshot");
            } else if (r < 80) {
                reopen(op, ro);
            } else {
                ingest(op, ro, env, ingest);
            }
        }

        void batch(int op, WriteOptions wo) throws Exception {
            WriteBatch batch = new WriteBatch();
            int empties = 0;
            StringBuilder sb = new StringBuilder("batch [");
            try (org.rocksdb.WriteBatch rb = new org.rocksdb.WriteBatch()) {
                for (int n = rnd.nextInt(7); n > 0; n--) {
                    String k = key(rnd.nextInt(KEYS));
                    switch (rnd.nextInt(5)) {
                        case 0 -> {
                            batch.put(b(k), b("b" + op));
                            rb.put(b(k), b("b" + op));
                            present.add(k);
                            sb.append(" put ").append(k);
                        }
                        case 1 -> {
                            batch.delete(b(k));
                            rb.delete(b(k));
                            present.add(k);
                            sb.append(" delete ").append(k);
                        }
                        case 2 -> {
                            batch.merge(b(k), b("bm" + op));
                            rb.merge(b(k), b("bm" + op));
                            present.add(k);
                            sb.append(" merge ").append(k);
                        }
                        case 3 -> {
                            int from = rnd.nextInt(KEYS - 1);
                            String end = key(from + 1 + rnd.nextInt(Math.min(10, KEYS - from - 1)));
                            batch.deleteRange(b(key(from)), b(end));
                            rb.deleteRange(b(key(from)), b(end));
                            sb.append(" deleteRange ")
                                    .append(key(from))
                                    .append("..")
                                    .append(end);
                        }
                        default -> {
                            batch.deleteRange(b(k), b(k));
                            rb.deleteRange(b(k), b(k));
                            empties++;
                            sb.append(" deleteRange ")
                                    .append(k)
                                    .append("..")
                                    .append(k)
                                    .append(" (empty)");
                        }
                    }
                }
                assertThat(rb.count() - batch.count())
                        .as("empty range deletions: in RocksDB's count only")
                        .isEqualTo(empties);
                db.write(batch);
                rocks.write(wo, rb);
            }
            if (batch.count() > 0) {
                // The inserter numbers the batch's other operations from the first in turn: the last one gets this.
                rocksEntryMax = expected + difference + batch.count();
            }
            expected += batch.count();
            difference += empties;
            log.add(sb.append(" ]").toString());
        }

        /**
         * One to three files, each either in a new key range above every key written so far, or holding keys the
         * database has entries for (so both engines see an overlap, whether they judge it by key ranges or by keys).
         */
        void ingest(int op, org.rocksdb.Options ro, EnvOptions env, IngestExternalFileOptions ingestOptions)
                throws Exception {
            int n = 1 + rnd.nextInt(3);
            // The files' key sets, disjoint and in order: overlapping ones from the keys present, then fresh ones.
            List<List<String>> fileKeys = new ArrayList<>();
            int overlapping = 0;
            List<String> pool = new ArrayList<>(present);
            int over = pool.isEmpty() ? 0 : rnd.nextInt(n + 1);
            if (over > 0) {
                // Cut a random run of present keys into `over` consecutive groups: their ranges do not overlap.
                int len = Math.min(pool.size(), over * (1 + rnd.nextInt(4)));
                int start = rnd.nextInt(pool.size() - len + 1);
                List<String> run = pool.subList(start, start + len);
                int per = Math.max(1, len / over);
                for (int f = 0; f < over && f * per < len; f++) {
                    int to = f == over - 1 ? len : Math.min(len, (f + 1) * per);
                    fileKeys.add(new ArrayList<>(run.subList(f * per, to)));
                    overlapping++;
                }
            }
            while (fileKeys.size() < n) {
                String region = String.format("z%04d", freshRegions++);
                List<String> keys = new ArrayList<>();
                for (int i = 0, m = 1 + rnd.nextInt(5); i < m; i++) {
                    keys.add(region + String.format("-%02d", i));
                }
                fileKeys.add(keys);
            }
            boolean snapshotOpen = !snaps.isEmpty();
            List<Path> ourFiles = new ArrayList<>();
            List<String> theirFiles = new ArrayList<>();
            StringBuilder sb = new StringBuilder("ingest");
            for (List<String> keys : fileKeys) {
                Path ourFile = files.resolve("b" + fileCounter + ".sst");
                Path theirFile = files.resolve("r" + fileCounter + ".sst");
                fileCounter++;
                sb.append(" [")
                        .append(keys.get(0))
                        .append("..")
                        .append(keys.get(keys.size() - 1))
                        .append(']');
                try (TableFileWriter w = TableFileWriter.create(ourFile, options());
                        SstFileWriter rw = new SstFileWriter(env, ro)) {
                    rw.open(theirFile.toString());
                    for (String k : keys) {
                        switch (rnd.nextInt(4)) {
                            case 0 -> {
                                w.delete(b(k));
                                rw.delete(b(k));
                            }
                            case 1 -> {
                                w.merge(b(k), b("im" + op));
                                rw.merge(b(k), b("im" + op));
                            }
                            default -> {
                                w.put(b(k), b("i" + op));
                                rw.put(b(k), b("i" + op));
                            }
                        }
                    }
                    w.finish();
                    rw.finish();
                }
                ourFiles.add(ourFile);
                theirFiles.add(theirFile.toString());
            }
            db.ingest(ourFiles, IngestOptions.defaults());
            rocks.ingestExternalFile(theirFiles, ingestOptions);
            for (List<String> keys : fileKeys) {
                present.addAll(keys);
            }
            // bloomkv: one number for the whole ingestion when it must order the files after the database's entries.
            long ours = snapshotOpen || overlapping > 0 ? 1 : 0;
            // RocksDB: one per file that needs a global sequence number (every file while a snapshot is open).
            long theirs = snapshotOpen ? fileKeys.size() : overlapping;
            expected += ours;
            difference += theirs - ours;
            if (theirs > 0) {
                rocksEntryMax = expected + difference; // the last number assigned to a file
            }
            log.add(sb + " (" + overlapping + " of " + fileKeys.size() + " overlapping"
                    + (snapshotOpen ? ", a snapshot open" : "") + ")");
        }

        /**
         * Closes and reopens both. bloomkv's number stays. RocksDB's may go back, to no less than {@link
         * #rocksEntryMax}: its memtable inserter gives an empty range deletion no number ({@code
         * MemTableInserter::DeleteRangeCF} returns before {@code MaybeAdvanceSeq}), and the number recovered from the
         * WAL ({@code DBImpl::FinishLogFileProcessing}: the inserter's next sequence less one) or recorded by a flush
         * follows the inserter, not the batch counts that the writes published. The test follows RocksDB's number
         * from there on.
         */
        void reopen(int op, org.rocksdb.Options ro) throws Exception {
            releaseSnapshots();
            long rocksBefore = rocks.getLatestSequenceNumber();
            db.close();
            rocks.close();
            db = Db.open(ours, options());
            rocks = RocksDB.open(ro, theirs.toString());
            long rocksAfter = rocks.getLatestSequenceNumber();
            log.add("reopen"
                    + (rocksAfter < rocksBefore ? " (RocksDB " + rocksBefore + " -> " + rocksAfter + ")" : ""));
            checkRocksRecovered(op, "a reopen", rocksBefore, rocksAfter);
            if (rocksAfter < rocksBefore) {
                rocksWentBack++;
            }
            difference = rocksAfter - expected;
        }

        void checkRocksRecovered(int op, String what, long before, long after) {
            assertThat(after)
                    .as(ctx(op) + ": RocksDB's number after " + what + ", from " + before
                            + ", no lower than the last number it gave an entry, " + rocksEntryMax)
                    .isBetween(rocksEntryMax, before);
        }

        void releaseSnapshots() {
            for (Snapshot s : snaps) {
                s.close();
            }
            for (org.rocksdb.Snapshot s : rsnaps) {
                rocks.releaseSnapshot(s);
            }
            snaps.clear();
            rsnaps.clear();
        }
    }

    /**
     * The documented difference in how an ingestion judges overlap: a file whose keys fall between two keys of a table
     * takes a sequence number in bloomkv (the table's key range overlaps the file's) but not in RocksDB (the level
     * holds no key in the file's range).
     */
    @Test
    void aFileBetweenTheKeysOfATableTakesANumberHereNotInRocksDb() throws Exception {
        try (org.rocksdb.Options ro =
                        new org.rocksdb.Options().setCreateIfMissing(true).setDisableAutoCompactions(true);
                EnvOptions env = new EnvOptions();
                FlushOptions flush = new FlushOptions().setWaitForFlush(true);
                IngestExternalFileOptions ingest = new IngestExternalFileOptions();
                Db db = Db.open(dir.resolve("bloomkv"), Options.defaults().autoCompaction(false));
                RocksDB rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString())) {
            for (String k : List.of("a", "c")) {
                db.put(b(k), b("v"));
                rocks.put(b(k), b("v"));
            }
            db.flush();
            rocks.flush(flush);
            assertThat(db.latestSequenceNumber()).isEqualTo(2);
            assertThat(rocks.getLatestSequenceNumber()).isEqualTo(2);
            Path ourFile = dir.resolve("b.sst");
            Path theirFile = dir.resolve("r.sst");
            try (TableFileWriter w = TableFileWriter.create(ourFile, Options.defaults());
                    SstFileWriter rw = new SstFileWriter(env, ro)) {
                rw.open(theirFile.toString());
                w.put(b("b"), b("x"));
                rw.put(b("b"), b("x"));
                w.finish();
                rw.finish();
            }
            db.ingest(List.of(ourFile), IngestOptions.defaults());
            rocks.ingestExternalFile(List.of(theirFile.toString()), ingest);
            assertThat(db.latestSequenceNumber())
                    .as("bloomkv: the table's range [a, c] overlaps")
                    .isEqualTo(3);
            assertThat(rocks.getLatestSequenceNumber())
                    .as("RocksDB: no key of the level in [b, b]")
                    .isEqualTo(2);
            assertThat(db.get(b("b"))).isEqualTo(b("x"));
            assertThat(rocks.get(b("b"))).isEqualTo(b("x"));
        }
    }

    @Test
    void aClosedDatabaseThrows() {
        Db db = Db.open(dir, Options.defaults());
        db.put(b("a"), b("1"));
        assertThat(db.latestSequenceNumber()).isEqualTo(1);
        db.close();
        assertThatThrownBy(db::latestSequenceNumber).isInstanceOf(DbClosedException.class);
    }

    /** Also the {@code bloomkv.last-sequence} property, and after a reopen the number recovered from the WAL. */
    @Test
    void thePropertyAndARecoveredWalAgree() {
        try (Db db = Db.open(dir, Options.defaults())) {
            WriteBatch batch =
                    new WriteBatch().put(b("a"), b("1")).delete(b("b")).deleteRange(b("c"), b("d"));
            db.write(batch);
            assertThat(db.latestSequenceNumber()).isEqualTo(3);
            assertThat(db.property("bloomkv.last-sequence")).contains("3");
        }
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(db.latestSequenceNumber()).as("replayed from the WAL").isEqualTo(3);
            try (Snapshot s = db.getSnapshot()) {
                assertThat(s.sequence()).isEqualTo(3);
            }
        }
    }
}
