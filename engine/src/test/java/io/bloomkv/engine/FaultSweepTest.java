package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Fault;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.fs.InjectedIOException;
import io.bloomkv.engine.fs.NoFsyncFileSystem;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fault sweep: a fixed workload (puts, merges, deletes, range deletions, batches, gets, scans, flushes, a full
 * compaction, a reopen, ingestions of external table files written by {@link TableFileWriter} (puts, merges, deletes
 * and range deletions), moved and copied,
 * a memtable rewrite (a range tombstone hiding most of the memtable), range drops (a range tombstone, then {@link
 * Db#deleteFilesInRange} over the same range: over an ingested file's keys, it removes that file's table), checkpoints,
 * and iterators left open across a compaction until the next reopen's close, whose deletion pass then deletes the
 * tables they kept) under {@link SyncMode#EVERY_WRITE} is first run once on a healthy {@link FaultInjectingFileSystem}
 * to count its file-system operations (every {@link Op}: create, open, write, flush, sync, read, close, delete, rename,
 * list, size, lock, ...). Then, for every i, a fresh database runs the workload with only the i-th operation failing;
 * the workload stops at the first call that fails. The failed call must have surfaced a {@link BloomKvIOException}
 * caused by the injected error (or succeeded, when the engine tolerates that failure); then the process "dies"
 * (every other i, and when the i-th operation belongs to the final close, the database is closed first) and {@link
 * FaultInjectingFileSystem#crash()} drops every unsynced byte. Reopened on the healthy file system, the database must
 * equal the model of acknowledged writes ({@link TreeMap}), plus, all or nothing, the one write (or ingestion) that
 * failed: nothing acknowledged lost, no batch or ingested file half applied, no corruption, and no table file on disk
 * that the database does not name (nor one it names that is missing). Every checkpoint that completed opens, right away
 * and again after the crash, with exactly the acknowledged writes of its point. {@link #everyFailedOperationIsResumed}
 * sweeps the workload once more, calling {@link Db#resume} after each failure before the close or crash: the failed
 * write must then be gone for good, and writes after the resume kept.
 *
 * <p>The workload is derived from a seed (printed; replay with -Dbloomkv.seed=N). A bigger sweep:
 * {@code mvn -B -q -pl engine -am test -Dtest=FaultSweepTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dbloomkv.faultsweep.scale=10
 * -Djunit.jupiter.execution.timeout.mode=disabled} (the suite runs scale 2; the engine tests' 5-minute limit would stop
 * a big sweep).
 */
class FaultSweepTest {
    @TempDir
    Path dir;

    private static final int KEYS = 64;

    /**
     * One change of a write: {@code value == null} deletes; {@code merge} appends {@code value} (the stringAppend(',')
     * operator); {@code rangeEnd > key} deletes the keys [key, rangeEnd) with one range tombstone.
     */
    record Mut(int key, byte[] value, boolean merge, int rangeEnd) {
        Mut(int key, byte[] value) {
            this(key, value, false, -1);
        }

        static Mut merge(int key, byte[] operand) {
            return new Mut(key, operand, true, -1);
        }

        static Mut deleteRange(int from, int to) {
            return new Mut(from, null, false, to);
        }
    }

    /** A random single write: a put, a merge, a delete or a range deletion. */
    private static Mut randomMut(Random rnd) {
        int r = rnd.nextInt(100);
        int k = rnd.nextInt(KEYS);
        if (r < 55) {
            return new Mut(k, TestKeys.value(rnd, 40));
        } else if (r < 75) {
            return Mut.merge(k, TestKeys.value(rnd, 12));
        } else if (r < 92) {
            return new Mut(k, null);
        }
        return Mut.deleteRange(k, Math.min(KEYS, k + 1 + rnd.nextInt(6)));
    }

    sealed interface Step
            permits Write, Get, Scan, Flush, Compact, Reopen, Ingest, DropRange, Checkpoint, HoldIterator {}

    record Write(List<Mut> muts, boolean batch) implements Step {}

    record Get(int key) implements Step {}

    record Scan() implements Step {}

    record Flush() implements Step {}

    record Compact() implements Step {}

    record Reopen() implements Step {}

    /**
     * Puts, merges and deletes of distinct keys, ascending, after them maybe a range deletion listed first (applied
     * before them: it does not delete the file's own keys), written into an external table file and ingested (moved or
     * copied).
     */
    record Ingest(List<Mut> puts, boolean move) implements Step {}

    /**
     * A range tombstone over keys [from, to), then {@link Db#deleteFilesInRange} over the same range (the Kafka
     * Streams stores' expiry): the tombstone is the write (all or nothing); the file removal changes nothing reads see.
     */
    record DropRange(int from, int to) implements Step {}

    /** A checkpoint into a new directory next to the database. */
    record Checkpoint() implements Step {}

    /**
     * An iterator left open: it keeps the tables of its Version until the close of the next {@link Reopen} (or the
     * final close) invalidates it, so that close's deletion pass has the inputs of the compactions since to delete.
     */
    record HoldIterator() implements Step {}

    /** The workload: {@code scale} rounds of writes and reads, each ending in a flush, with a compaction and a reopen. */
    static List<Step> workload(long seed, int scale) {
        Random rnd = new Random(seed);
        List<Step> steps = new ArrayList<>();
        int rounds = 3 * scale;
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < 24; i++) {
                int r = rnd.nextInt(100);
                if (r < 60) {
                    steps.add(new Write(List.of(randomMut(rnd)), false));
                } else if (r < 75) {
                    List<Mut> muts = new ArrayList<>();
                    int n = 2 + rnd.nextInt(5);
                    for (int j = 0; j < n; j++) {
                        muts.add(randomMut(rnd));
                    }
                    steps.add(new Write(muts, true));
                } else if (r < 95) {
                    steps.add(new Get(rnd.nextInt(KEYS)));
                } else {
                    steps.add(new Scan());
                }
            }
            if (round == 0) {
                // Puts over three quarters of the keys, then one range tombstone over them: it hides most of the
                // memtable, so the next write replaces the memtable with a copy without them (every seed sweeps a
                // memtable rewrite, and the flush, crash and recovery after it).
                List<Mut> puts = new ArrayList<>();
                for (int k = 0; k < KEYS * 3 / 4; k += 2) {
                    puts.add(new Mut(k, TestKeys.value(rnd, 40)));
                }
                steps.add(new Write(puts, true));
                steps.add(new Write(List.of(Mut.deleteRange(0, KEYS * 3 / 4)), false));
                steps.add(new Write(List.of(new Mut(KEYS - 1, TestKeys.value(rnd, 40))), false)); // rewrites first
            }
            if (round % 3 == 0) {
                TreeMap<Integer, Mut> puts = new TreeMap<>();
                for (int j = 1 + rnd.nextInt(4); j > 0; j--) {
                    int k = rnd.nextInt(KEYS);
                    int kind = rnd.nextInt(6);
                    puts.put(
                            k,
                            kind == 0
                                    ? new Mut(k, null)
                                    : kind == 1
                                            ? Mut.merge(k, TestKeys.value(rnd, 12))
                                            : new Mut(k, TestKeys.value(rnd, 40)));
                }
                List<Mut> file = new ArrayList<>();
                if (puts.lastKey() > puts.firstKey() && rnd.nextInt(3) == 0) {
                    // a range deletion inside the file's key range (the range drop below still covers the table):
                    // applied before the file's keys, which it does not delete
                    int from = puts.firstKey() + rnd.nextInt(puts.lastKey() - puts.firstKey());
                    file.add(Mut.deleteRange(from, Math.min(puts.lastKey(), from + 1 + rnd.nextInt(8))));
                }
                file.addAll(puts.values());
                if (round == 0) {
                    // Every seed sweeps a removal: after a full compaction every table is in the last level and inside
                    // [0, KEYS), so this drop removes them all. (The drop after the ingestion below may remove
                    // nothing: a file that overlaps the tree is rewritten into level 0, which deleteFilesInRange
                    // leaves alone, as RocksDB's does.)
                    steps.add(new Compact());
                    steps.add(new DropRange(0, KEYS));
                }
                steps.add(new Ingest(file, rnd.nextBoolean()));
                if (round == 0 || rnd.nextBoolean()) {
                    // The ingested file's table lies in its keys' range: the drop removes it where the file went to a
                    // level below 0.
                    steps.add(new DropRange(puts.firstKey(), puts.lastKey() + 1));
                } else {
                    int from = rnd.nextInt(KEYS);
                    steps.add(new DropRange(from, Math.min(KEYS, from + 1 + rnd.nextInt(16))));
                }
            }
            steps.add(new Flush());
            if (round % 3 == 2) {
                steps.add(new Checkpoint());
            }
            if (round % 3 == 1) {
                steps.add(new HoldIterator());
                steps.add(new Compact());
            }
            if (round % 3 == 2) {
                steps.add(new Reopen());
            }
        }
        steps.add(new Scan());
        return steps;
    }

    /**
     * Options.ttl of the sweep's database, or null: {@link #aTtlDatabaseLosesNothingAcknowledged} sweeps a TTL database
     * (a day, on a clock that does not move: nothing expires, so the model is the same; every value and operand carries
     * its write-time suffix through WAL, flush, collapse, compaction and recovery).
     */
    private static volatile java.time.Duration sweepTtl;

    /**
     * Options.disableWal for the sweep's database: {@link #aDatabaseWithoutAWalKeepsAPrefixEndingAtItsLastFlush} sweeps
     * one. Its writes are durable only once a flush, a clean close or a checkpoint has written their memtable, so after
     * a failure and a crash the database must equal the model at one of the points since the last of those: a prefix
     * of the acknowledged writes that holds at least the flushed ones.
     */
    private static volatile boolean sweepNoWal;

    /**
     * Whether the sweep resumes after each failure ({@link #everyFailedOperationIsResumed}): before the close or crash,
     * {@link Db#resume} must clear whatever error the failure left, the database must then hold exactly the
     * acknowledged writes (the failed one not applied), take new writes and a flush, and after the crash and reopen
     * the failed write must be gone for good.
     */
    private static volatile boolean sweepResume;

    private static final ManualClock FROZEN = new ManualClock(1_700_000_000L);

    private static Options options(FaultInjectingFileSystem fs) {
        // No automatic flush or compaction: the calls of the workload are the only file-system users,
        // so the i-th operation is the same one in every run. No block cache: gets read the tables.
        return Options.defaults()
                .ttl(sweepTtl)
                .clock(FROZEN)
                .fileSystem(fs)
                .disableWal(sweepNoWal)
                .syncMode(sweepNoWal ? SyncMode.NONE : SyncMode.EVERY_WRITE) // no log to sync without a WAL
                .autoCompaction(false)
                .writeBufferSize(32 << 10) // never filled by a round (each ends in a flush); a rewrite from 2 KiB
                .blockSize(256)
                .blockCacheSize(0)
                .mergeOperator(MergeOperators.stringAppend(','))
                .rangeFilterBitsPerKey(10) // every table write also writes a range filter block
                // and, under a filter budget with 64-byte partitions, a partitioned point filter (more than 51 keys)
                .filterMemoryBudget(16 << 10)
                .filterPartitionSize(64);
    }

    /** What a run of the workload left: the acknowledged writes, and the write whose call failed, if any. */
    static final class Outcome {
        final TreeMap<Integer, byte[]> model = new TreeMap<>();
        Db db;
        List<Mut> uncertain;
        BloomKvIOException failure;
        String failedStep;
        /** Completed checkpoints: directory, and the acknowledged writes at its point. */
        final Map<Path, TreeMap<Integer, byte[]>> checkpoints = new java.util.LinkedHashMap<>();

        int ingestions;
        /** Tables {@link DropRange} steps removed. */
        int droppedTables;
        /** Memtables rewritten without what their range tombstones hide, over the run's opens. */
        long memtableRewrites;

        /**
         * Without a WAL: the model at the last durable point (flush, clean close, checkpoint), then after each write
         * acknowledged since; a crash leaves one of them. Empty for a database with a WAL, where every acknowledged
         * write is durable.
         */
        final List<TreeMap<Integer, byte[]>> sinceDurable = new ArrayList<>();

        void durable() {
            if (sweepNoWal) {
                sinceDurable.clear();
                sinceDurable.add(new TreeMap<>(model));
            }
        }

        void acknowledged() {
            if (sweepNoWal) {
                sinceDurable.add(new TreeMap<>(model));
            }
        }
    }

    private static TreeMap<Integer, byte[]> applied(TreeMap<Integer, byte[]> model, List<Mut> muts) {
        TreeMap<Integer, byte[]> m = new TreeMap<>(model);
        for (Mut mu : muts) {
            if (mu.rangeEnd() > mu.key()) {
                m.subMap(mu.key(), mu.rangeEnd()).clear();
            } else if (mu.value() == null) {
                m.remove(mu.key());
            } else if (mu.merge()) {
                byte[] old = m.get(mu.key());
                m.put(mu.key(), MergeOperators.stringAppend(',').fullMerge(null, old, List.of(mu.value())));
            } else {
                m.put(mu.key(), mu.value());
            }
        }
        return m;
    }

    /** Runs {@code steps} until the first call that throws a {@link BloomKvIOException}; any other exception escapes. */
    private static Outcome run(Path d, FaultInjectingFileSystem fs, List<Step> steps) {
        Outcome o = new Outcome();
        o.durable();
        try {
            o.db = Db.open(d, options(fs));
        } catch (BloomKvIOException e) {
            o.failure = e;
            o.failedStep = "open";
            return o;
        }
        for (Step s : steps) {
            try {
                apply(o, s);
            } catch (BloomKvIOException e) {
                o.failure = e;
                o.failedStep = s.toString();
                if (s instanceof Write w) {
                    o.uncertain = w.muts();
                } else if (s instanceof Ingest in) {
                    o.uncertain = in.puts();
                }
                return o;
            }
        }
        return o;
    }

    private static void apply(Outcome o, Step s) {
        Db db = o.db;
        if (s instanceof Write w) {
            if (w.batch()) {
                WriteBatch b = new WriteBatch();
                for (Mut m : w.muts()) {
                    if (m.rangeEnd() > m.key()) {
                        b.deleteRange(TestKeys.key(m.key()), TestKeys.key(m.rangeEnd()));
                    } else if (m.value() == null) {
                        b.delete(TestKeys.key(m.key()));
                    } else if (m.merge()) {
                        b.merge(TestKeys.key(m.key()), m.value());
                    } else {
                        b.put(TestKeys.key(m.key()), m.value());
                    }
                }
                db.write(b);
            } else {
                Mut m = w.muts().get(0);
                if (m.rangeEnd() > m.key()) {
                    db.deleteRange(TestKeys.key(m.key()), TestKeys.key(m.rangeEnd()));
                } else if (m.value() == null) {
                    db.delete(TestKeys.key(m.key()));
                } else if (m.merge()) {
                    db.merge(TestKeys.key(m.key()), m.value());
                } else {
                    db.put(TestKeys.key(m.key()), m.value());
                }
            }
            TreeMap<Integer, byte[]> next = applied(o.model, w.muts());
            o.model.clear();
            o.model.putAll(next);
            o.acknowledged();
        } else if (s instanceof Get g) {
            assertThat(db.get(TestKeys.key(g.key())))
                    .as("get " + g.key() + " while running")
                    .isEqualTo(o.model.get(g.key()));
        } else if (s instanceof Scan) {
            assertThat(scan(db)).as("scan while running").isEqualTo(render(o.model));
        } else if (s instanceof HoldIterator) {
            db.iterator(); // never closed here: the database's close closes it
        } else if (s instanceof Flush) {
            db.flush();
            o.durable();
        } else if (s instanceof Compact) {
            db.compactRange(null, null);
        } else if (s instanceof Ingest in) {
            // The file is written through the same (faulty) file system, outside the database directory.
            Path file =
                    db.directory().resolveSibling(db.directory().getFileName() + "-ingest-" + o.ingestions++ + ".sst");
            try (TableFileWriter w = TableFileWriter.create(file, db.options())) {
                for (Mut m : in.puts()) {
                    if (m.rangeEnd() > m.key()) {
                        w.deleteRange(TestKeys.key(m.key()), TestKeys.key(m.rangeEnd()));
                    } else if (m.value() == null) {
                        w.delete(TestKeys.key(m.key()));
                    } else if (m.merge()) {
                        w.merge(TestKeys.key(m.key()), m.value());
                    } else {
                        w.put(TestKeys.key(m.key()), m.value());
                    }
                }
                w.finish();
            }
            db.ingest(List.of(file), IngestOptions.defaults().moveFiles(in.move()));
            TreeMap<Integer, byte[]> next = applied(o.model, in.puts());
            o.model.clear();
            o.model.putAll(next);
        } else if (s instanceof DropRange r) {
            Mut tombstone = Mut.deleteRange(r.from(), r.to());
            try {
                db.deleteRange(TestKeys.key(r.from()), TestKeys.key(r.to()));
            } catch (BloomKvIOException e) {
                o.uncertain = List.of(tombstone);
                throw e;
            }
            TreeMap<Integer, byte[]> next = applied(o.model, List.of(tombstone));
            o.model.clear();
            o.model.putAll(next);
            o.acknowledged();
            // A failure here leaves the acknowledged tombstone: what reads see is the model either way.
            o.droppedTables += db.deleteFilesInRange(TestKeys.key(r.from()), TestKeys.key(r.to()));
        } else if (s instanceof Checkpoint) {
            Path cp = db.directory().resolveSibling(db.directory().getFileName() + "-cp-" + o.checkpoints.size());
            db.checkpoint(cp);
            TreeMap<Integer, byte[]> at = new TreeMap<>(o.model);
            try (Db c = Db.open(cp, db.options())) {
                assertThat(scan(c))
                        .as("checkpoint " + cp.getFileName() + " right after it was taken")
                        .isEqualTo(render(at));
            }
            o.checkpoints.put(cp, at);
            o.durable(); // a checkpoint flushes the memtable first
        } else if (s instanceof Reopen) {
            Path d = db.directory();
            Options opts = db.options();
            o.memtableRewrites += db.stats().memtableRewrites();
            db.close();
            o.db = null;
            o.durable();
            o.db = Db.open(d, opts);
        }
    }

    static TreeMap<String, String> render(Map<Integer, byte[]> model) {
        TreeMap<String, String> r = new TreeMap<>();
        model.forEach((k, v) -> r.put(TestKeys.str(TestKeys.key(k)), Arrays.toString(v)));
        return r;
    }

    static TreeMap<String, String> scan(Db db) {
        TreeMap<String, String> r = new TreeMap<>();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                r.put(TestKeys.str(it.key()), Arrays.toString(it.value()));
            }
        }
        return r;
    }

    /** What a dead process leaves: nothing more reaches the disk, then unsynced bytes are dropped. */
    private static void die(FaultInjectingFileSystem fs, Db db) throws IOException {
        if (db != null) {
            Fault everything = fs.inject((op, p) -> true);
            try {
                db.close();
            } catch (BloomKvException expected) {
                // closing through a dead file system fails; what matters is what is on "disk"
            } finally {
                everything.remove();
            }
        }
        fs.crash();
    }

    /** The reopened database equals {@code expected}, key by key and by a full scan; its table files are exactly the live ones. */
    static void checkReopened(Db db, TreeMap<Integer, byte[]> expected, String ctx) throws IOException {
        assertThat(scan(db)).as(ctx + ": full scan").isEqualTo(render(expected));
        for (int k = 0; k < KEYS; k++) {
            assertThat(db.get(TestKeys.key(k))).as(ctx + ": get " + k).isEqualTo(expected.get(k));
            // a bounded seek goes through the tables' range filters, which must never hide the key
            try (DbIterator it = db.iterator(ReadOptions.defaults().iterateUpperBound(TestKeys.key(k + 1)))) {
                it.seek(TestKeys.key(k));
                assertThat(it.valid()).as(ctx + ": bounded seek " + k).isEqualTo(expected.containsKey(k));
            }
        }
        TreeSet<Long> live =
                db.tables().stream().map(TableInfo::fileNumber).collect(Collectors.toCollection(TreeSet::new));
        TreeSet<Long> onDisk = new TreeSet<>();
        try (Stream<Path> files = Files.list(db.directory())) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".sst"))
                    .forEach(n -> onDisk.add(Long.parseLong(n.substring(0, n.indexOf('.')))));
        }
        assertThat(onDisk)
                .as(ctx + ": table files on disk = live tables (no orphan, none missing)")
                .isEqualTo(live);
    }

    private static void deleteTree(Path d) throws IOException {
        if (!Files.exists(d)) {
            return;
        }
        try (Stream<Path> s = Files.walk(d)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Test
    void everyFailedOperationLosesNothingAcknowledged() throws IOException {
        long seed = TestSeeds.seed("FaultSweepTest", "bloomkv.seed");
        sweep(seed, Integer.getInteger("bloomkv.faultsweep.scale", 2));
    }

    @Test
    void aTtlDatabaseLosesNothingAcknowledged() throws IOException {
        long seed = TestSeeds.seed("FaultSweepTest.ttl", "bloomkv.seed");
        sweepTtl = java.time.Duration.ofDays(1);
        try {
            sweep(seed, 1); // a smaller workload: the same paths, with TTL values
        } finally {
            sweepTtl = null;
        }
    }

    @Test
    void aDatabaseWithoutAWalKeepsAPrefixEndingAtItsLastFlush() throws IOException {
        long seed = TestSeeds.seed("FaultSweepTest.noWal", "bloomkv.seed");
        sweepNoWal = true;
        try {
            sweep(seed, 1);
        } finally {
            sweepNoWal = false;
        }
    }

    @Test
    void everyFailedOperationIsResumed() throws IOException {
        long seed = TestSeeds.seed("FaultSweepTest.resume", "bloomkv.seed");
        sweepResume = true;
        try {
            sweep(seed, Integer.getInteger("bloomkv.faultsweep.resumeScale", 1));
        } finally {
            sweepResume = false;
        }
    }

    /**
     * After the failure of a run (the fault fired once, so the file system is healthy again): resumes, checks the
     * database holds exactly the acknowledged writes, writes more (flushed, then one in the WAL only) and checks again.
     * From then on the failed write must never appear. False when the failed step had closed the database.
     */
    private static boolean resumeAndWrite(Outcome o, Random rnd, String ctx) {
        Db db = o.db;
        try {
            db.resume();
        } catch (DbClosedException closed) {
            return false; // a reopen whose close failed
        }
        assertThat(db.property("bloomkv.background-errors"))
                .as(ctx + ": resumed")
                .contains("0");
        assertThat(scan(db)).as(ctx + ": resumed, the failed write not applied").isEqualTo(render(o.model));
        for (int j = 0; j < 4; j++) {
            apply(o, new Write(List.of(randomMut(rnd)), j == 3));
            if (j == 2) {
                apply(o, new Flush());
            }
        }
        o.uncertain = null;
        assertThat(scan(db)).as(ctx + ": written after resume").isEqualTo(render(o.model));
        for (int k = 0; k < KEYS; k++) {
            assertThat(db.get(TestKeys.key(k)))
                    .as(ctx + ": get " + k + " after resume")
                    .isEqualTo(o.model.get(k));
        }
        return true;
    }

    private void sweep(long seed, int scale) throws IOException {
        List<Step> steps = workload(seed, scale);
        if (sweepTtl != null || sweepNoWal) {
            // Db.ingest is refused on a TTL database (external files carry no write times). Without a WAL an
            // ingested file is durable at once while the memtable's earlier writes are not, so what survives a crash
            // is not a prefix of the model's order: the no-WAL sweep leaves ingestion to IngestTest.
            steps = steps.stream().filter(s -> !(s instanceof Ingest)).toList();
        }

        // 1. Count the operations of a healthy run (including the final close).
        FaultInjectingFileSystem counting = new FaultInjectingFileSystem(new NoFsyncFileSystem());
        Map<Op, Integer> perOp = new EnumMap<>(Op.class);
        AtomicInteger closeDeletes = new AtomicInteger();
        counting.inject((op, p) -> {
            synchronized (perOp) {
                perOp.merge(op, 1, Integer::sum);
            }
            if (op == Op.DELETE && inClosesDeletionPass()) {
                closeDeletes.incrementAndGet();
            }
            return false;
        });
        Path healthyDir = dir.resolve("healthy");
        Outcome healthy = run(healthyDir, counting, steps);
        assertThat(healthy.failure).as("the healthy run fails nowhere").isNull();
        healthy.memtableRewrites += healthy.db.stats().memtableRewrites();
        healthy.db.close(); // before the check below: a failed check must not leave its tables open for the next test
        assertThat(healthy.memtableRewrites).as("memtables rewritten").isPositive();
        if (sweepTtl == null && !sweepNoWal) {
            assertThat(healthy.droppedTables).as("range drops removed tables").isPositive();
        }
        // The tables the held iterators kept: every seed sweeps failures of close's own deletions.
        assertThat(closeDeletes.get())
                .as("files deleted by close's deletion pass")
                .isPositive();
        int total = perOp.values().stream().mapToInt(Integer::intValue).sum();
        System.out.println("FaultSweepTest: " + steps.size() + " steps, " + total + " file-system operations " + perOp
                + ", tables removed by range drops " + healthy.droppedTables + ", memtable rewrites "
                + healthy.memtableRewrites + ", files deleted by close's deletion pass " + closeDeletes.get());
        deleteTree(healthyDir);

        // 2. Fail each of them in turn.
        int surfaced = 0;
        int tolerated = 0;
        int uncertainApplied = 0;
        int uncertainDropped = 0;
        int notReached = 0;
        int resumed = 0;
        int beyondEnd = 0;
        List<String> notReachedAt = new ArrayList<>();
        Map<Op, Integer> failedPerOp = new EnumMap<>(Op.class);
        for (int i = 1; i <= total; i++) {
            Path d = dir.resolve("s" + i);
            FaultInjectingFileSystem fs = new FaultInjectingFileSystem(new NoFsyncFileSystem());
            Op[] failedOp = new Op[1];
            AtomicInteger seen = new AtomicInteger();
            final int n = i;
            fs.inject((op, p) -> {
                if (seen.incrementAndGet() == n) {
                    failedOp[0] = op;
                }
                return false;
            });
            Fault nth = fs.injectNth((op, p) -> true, i);
            String ctx = "seed " + seed + ", fault at operation " + i + " of " + total;
            Outcome o;
            try {
                o = run(d, fs, steps);
                if (sweepResume && o.failure != null && o.db != null) {
                    if (resumeAndWrite(o, new Random(seed * 31 + i), ctx + " (failed in " + o.failedStep + ")")) {
                        resumed++;
                    }
                }
                if (o.db != null && (i % 2 == 0 || nth.fired() == 0)) {
                    // A clean close first (every other i, and whenever the fault falls into the final
                    // close): the fault must then surface as an I/O error or be tolerated.
                    try {
                        o.db.close();
                        o.durable(); // a clean close flushes the memtable
                    } catch (BloomKvIOException e) {
                        if (o.failure == null) {
                            o.failure = e;
                            o.failedStep = "close";
                        }
                    }
                    o.db = null;
                }
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError(ctx + ": unexpected " + e, e);
            }
            Op op = failedOp[0];
            if (nth.fired() == 0 && seen.get() < i) {
                // Background threads (flush, obsolete-file deletion) may make a run a few operations
                // shorter than the counted one: its last operations do not exist in this run.
                beyondEnd++;
            } else if (nth.fired() == 0) {
                notReached++;
                notReachedAt.add(i + " (run made " + seen.get() + " operations, failure " + o.failure + " in "
                        + o.failedStep + ")");
            } else {
                failedPerOp.merge(op, 1, Integer::sum);
            }
            if (o.failure != null) {
                surfaced++;
                assertThat(hasInjectedCause(o.failure))
                        .as(ctx + ": " + o.failedStep + " failed with " + o.failure
                                + " not caused by the injected error")
                        .isTrue();
            } else if (nth.fired() > 0) {
                tolerated++;
            }
            die(fs, o.db);
            fs.clearFaults();
            try (Db reopened = Db.open(d, options(fs))) {
                TreeMap<String, String> actual = scan(reopened);
                TreeMap<Integer, byte[]> expected = o.model;
                if (sweepNoWal) {
                    List<TreeMap<Integer, byte[]>> candidates = new ArrayList<>(o.sinceDurable);
                    if (o.uncertain != null) {
                        candidates.add(applied(o.model, o.uncertain));
                    }
                    expected = candidates.stream()
                            .filter(c -> actual.equals(render(c)))
                            .reduce((a, b) -> b)
                            .orElseThrow(() -> new AssertionError(ctx + " (" + op + " failed in " + o.failedStep
                                    + "): without a WAL the database must equal the model at one of the "
                                    + candidates.size() + " points since its last flush, close or checkpoint; it holds "
                                    + actual));
                } else if (o.uncertain != null) {
                    TreeMap<Integer, byte[]> with = applied(o.model, o.uncertain);
                    if (actual.equals(render(with)) && !actual.equals(render(o.model))) {
                        expected = with;
                        uncertainApplied++;
                    } else {
                        uncertainDropped++;
                    }
                }
                checkReopened(
                        reopened, expected, ctx + " (" + op + " failed in " + o.failedStep + ": " + o.failure + ")");
                for (Map.Entry<Path, TreeMap<Integer, byte[]>> cp : o.checkpoints.entrySet()) {
                    try (Db c = Db.open(cp.getKey(), options(fs))) {
                        checkReopened(
                                c,
                                cp.getValue(),
                                ctx + ": checkpoint " + cp.getKey().getFileName() + " after the crash");
                    }
                    deleteTree(cp.getKey());
                }
            } catch (RuntimeException e) {
                throw new AssertionError(ctx + " (" + op + " failed in " + o.failedStep + "): reopen failed: " + e, e);
            }
            deleteTree(d);
        }
        System.out.println(
                "FaultSweepTest: swept " + total + " operations " + failedPerOp + "; surfaced as BloomKvIOException "
                        + surfaced + ", tolerated " + tolerated + ", beyond the end of a shorter run " + beyondEnd
                        + "; failed write applied after reopen "
                        + uncertainApplied + ", dropped " + uncertainDropped + "; resumed " + resumed
                        + "; 0 lost, 0 corrupt");
        if (sweepResume) {
            assertThat(resumed).as("failures resumed from").isGreaterThan(surfaced / 2);
        }
        assertThat(notReachedAt)
                .as("every operation of the counted run was reached and failed once")
                .isEmpty();
        assertThat(beyondEnd).as("runs are nearly deterministic").isLessThanOrEqualTo(Math.max(2, total / 100));
        assertThat(surfaced + tolerated + beyondEnd).isEqualTo(total);
        assertThat(TableReader.liveTables()).as("no table left open").isZero();
    }

    /** Whether the calling thread is in the deletion pass of {@link Db#close} ({@link ObsoleteFiles#deleteAtClose}). */
    private static boolean inClosesDeletionPass() {
        for (StackTraceElement e : new Throwable().getStackTrace()) {
            if (e.getClassName().equals(ObsoleteFiles.class.getName())
                    && e.getMethodName().equals("deleteAtClose")) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasInjectedCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof InjectedIOException) {
                return true;
            }
            for (Throwable s : c.getSuppressed()) {
                if (hasInjectedCause(s)) {
                    return true;
                }
            }
        }
        return false;
    }
}
