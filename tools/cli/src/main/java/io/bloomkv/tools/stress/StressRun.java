package io.bloomkv.tools.stress;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Holder;
import io.bloomkv.engine.IngestOptions;
import io.bloomkv.engine.ReadOptions;
import io.bloomkv.engine.Snapshot;
import io.bloomkv.engine.TableFileWriter;
import io.bloomkv.engine.WriteBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The threads of a stress run (RocksDB db_stress's operation mix): random puts, merges, deletes, range deletions,
 * batches, gets, keyMayExist and keyExists, multiGets, iterators and snapshots, each answer checked against the
 * {@link ExpectedState}; occasional flushes, range compactions, pauses of the background work
 * ({@link Db#pauseBackgroundWork} for a few reads, then {@link Db#continueBackgroundWork}), ingestions of external
 * table files (a few own keys' puts, merges, deletes and range deletions written by {@link TableFileWriter}, then
 * {@link Db#ingest}, moved or copied: the expected-state rule of a batch, all the file's keys old or all new after a
 * crash) and range drops (a range tombstone over one own key, then
 * {@link Db#deleteFilesInRange} over it: the key of the thread's last one-key ingestion when there is one, whose
 * table the call then removes; a delete's rule) and key-range deletions (db_stress's TestDeleteRange: one range
 * tombstone over 1-8 or, a third of the time, a quarter of a stripe up to a stripe of consecutive own keys, so that the
 * tombstones of a run hide most of a memtable and the engine's memtable rewrite runs; a batch's rule over the range).
 * Keys are partitioned among the threads in stripes of {@link #stripe} consecutive keys: thread t writes only keys
 * {@code (k / stripe) % threads == t} (a stripe holds only one thread's keys, so a range of them is a range
 * deletion no other thread's write races), so its own keys have an exact expected state while it runs; keys of other
 * threads are checked to be a well-formed value of a version between the ones the expected state
 * showed before and after the read. Every write is marked pending in the expected state before it is
 * issued and committed after it is acknowledged.
 */
public final class StressRun {
    /** What to run: {@code ops} per run (0 = no limit) and {@code durationMillis} (0 = no limit), whichever ends first. */
    public record Config(int threads, long ops, long durationMillis, long seed) {}

    /**
     * How far a run is, read while its threads run ({@link #run}): operations done, acknowledged writes, wrong answers,
     * key-range deletions and memtable rewrites so far.
     */
    public record Counts(
            long ops, long acknowledgedWrites, long wrongAnswers, long keyRangeDeletions, long memtableRewrites) {}

    /** The widest stripe of consecutive keys one thread owns (and so the widest key-range deletion). */
    public static final int MAX_STRIPE = 256;

    /** The widest key-range deletion (one thread owns the whole key space: its stripe may be far wider). */
    static final int MAX_RANGE = 1024;

    /** What a run did. */
    public record Summary(
            long ops,
            long puts,
            long deletes,
            long merges,
            long rangeDeletes,
            long batches,
            long gets,
            long multiGets,
            long iterators,
            long keyMayExists,
            long snapshots,
            long flushes,
            long compactions,
            long pauses,
            long ingestions,
            long rangeDrops,
            long tablesDropped,
            long keyRangeDeletes,
            long keysRangeDeleted,
            long memtableRewrites,
            long acknowledgedWrites,
            long wrongAnswers,
            List<String> problems,
            long millis) {
        @Override
        public String toString() {
            return ops + " ops in " + millis + " ms (" + (millis > 0 ? ops * 1000 / millis : 0) + " ops/s): puts "
                    + puts
                    + ", deletes " + deletes + ", merges " + merges + ", range deletions " + rangeDeletes + ", batches "
                    + batches + ", gets " + gets + ", multiGets " + multiGets + ", iterators " + iterators
                    + ", keyMayExist/keyExists " + keyMayExists + ", snapshots " + snapshots + ", flushes " + flushes
                    + ", compactions " + compactions
                    + ", background pauses " + pauses
                    + ", ingestions " + ingestions + ", range drops " + rangeDrops + " (tables removed " + tablesDropped
                    + "), key-range deletions " + keyRangeDeletes + " (" + keysRangeDeleted
                    + " keys), memtable rewrites "
                    + memtableRewrites + "; acknowledged writes " + acknowledgedWrites + "; wrong answers "
                    + wrongAnswers
                    + (problems.isEmpty() ? "" : "; first: " + problems);
        }
    }

    private final Db db;
    private final ExpectedState es;
    private final Config config;
    private final int keys;
    private final AtomicLong ops = new AtomicLong();
    private final AtomicLong puts = new AtomicLong();
    private final AtomicLong deletes = new AtomicLong();
    private final AtomicLong merges = new AtomicLong();
    private final AtomicLong rangeDeletes = new AtomicLong();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong gets = new AtomicLong();
    private final AtomicLong multiGets = new AtomicLong();
    private final AtomicLong iterators = new AtomicLong();
    private final AtomicLong keyMayExists = new AtomicLong();
    private final AtomicLong snapshots = new AtomicLong();
    private final AtomicLong flushes = new AtomicLong();
    private final AtomicLong compactions = new AtomicLong();
    private final AtomicLong pauses = new AtomicLong();
    private final AtomicLong ingestions = new AtomicLong();
    private final AtomicLong rangeDrops = new AtomicLong();
    private final AtomicLong tablesDropped = new AtomicLong();
    private final AtomicLong keyRangeDeletes = new AtomicLong();
    private final AtomicLong keysRangeDeleted = new AtomicLong();
    private final int stripe;
    private long rewritesAtStart;
    private long rewritesRecorded;
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong wrong = new AtomicLong();
    private final List<String> problems = new ArrayList<>();
    private volatile Throwable failure;

    public StressRun(Db db, ExpectedState es, Config config) {
        if (config.threads() < 1 || config.threads() > ExpectedState.MAX_THREADS) {
            throw new IllegalArgumentException(
                    "threads must be in [1, " + ExpectedState.MAX_THREADS + "]: " + config.threads());
        }
        if (es.keys() < config.threads()) {
            throw new IllegalArgumentException(
                    "need at least one key per thread: " + es.keys() + " keys, " + config.threads() + " threads");
        }
        this.db = db;
        this.es = es;
        this.config = config;
        this.keys = es.keys();
        this.stripe = stripe(es.keys(), config.threads());
    }

    /**
     * The width of the stripes of consecutive keys the threads own in turn: the whole key space for one thread, else at
     * most {@link #MAX_STRIPE} and at most a thread's share, so every thread owns at least one stripe.
     */
    public static int stripe(int keys, int threads) {
        return threads == 1 ? keys : Math.max(1, Math.min(MAX_STRIPE, keys / threads));
    }

    /** The memtable rewrites of the database since the run began, also added to the expected state's total. */
    private long memtableRewrites() {
        long now = db.stats().memtableRewrites() - rewritesAtStart;
        if (now > rewritesRecorded) {
            es.addMemtableRewrites(now - rewritesRecorded);
            rewritesRecorded = now;
        }
        return now;
    }

    /**
     * The operations the run makes at most: exactly {@link Config#ops}, split among the threads by {@link #share}, or
     * -1 when only the duration limits it.
     */
    public long opsLimit() {
        return config.ops() > 0 ? config.ops() : -1;
    }

    /**
     * Thread {@code thread}'s share of {@code ops} operations run by {@code threads} threads: {@code ops / threads},
     * and one more for each of the first {@code ops % threads} threads, so the shares add up to exactly {@code ops}
     * (a thread's share may be 0 when there are fewer operations than threads). Each thread draws its operations from
     * its own random stream ({@link Config#seed} and its number), so a seed replays every thread's operations, its
     * share's worth of them.
     */
    public static long share(long ops, int threads, int thread) {
        return ops / threads + (thread < ops % threads ? 1 : 0);
    }

    /** The operations thread {@code thread} runs at most: its {@link #share} of {@link Config#ops}, or no limit. */
    private long threadLimit(int thread) {
        return config.ops() > 0 ? share(config.ops(), config.threads(), thread) : Long.MAX_VALUE;
    }

    /**
     * Runs the threads until the operations or the time are used up. {@code progress} hears the counts so far on the
     * calling thread about every 200 ms while they run, and the final ones once they have ended; it decides what to
     * show and when (the command's progress display on stderr).
     */
    public Summary run(Consumer<Counts> progress) throws InterruptedException {
        long t0 = System.nanoTime();
        rewritesAtStart = db.stats().memtableRewrites();
        long deadline = config.durationMillis() > 0 ? t0 + config.durationMillis() * 1_000_000L : Long.MAX_VALUE;
        Thread[] threads = new Thread[config.threads()];
        for (int t = 0; t < threads.length; t++) {
            int id = t;
            threads[t] = new Thread(
                    () -> {
                        try {
                            worker(id, deadline);
                        } catch (Throwable e) {
                            failure = e;
                        }
                    },
                    "stress-" + t);
            threads[t].start();
        }
        // A first report as the threads start (the counts so far), so a run always shows where it began, however
        // soon its threads end.
        progress.accept(new Counts(ops.get(), acked.get(), wrong.get(), keyRangeDeletes.get(), memtableRewrites()));
        for (Thread th : threads) {
            while (th.isAlive()) {
                th.join(200);
                long rewrites = memtableRewrites(); // also recorded in the expected state, for crashtest's totals
                progress.accept(new Counts(ops.get(), acked.get(), wrong.get(), keyRangeDeletes.get(), rewrites));
            }
        }
        if (failure != null) {
            wrong.incrementAndGet();
            problem("a stress thread failed: " + failure);
        }
        long millis = (System.nanoTime() - t0) / 1_000_000;
        long rewrites = memtableRewrites();
        progress.accept(new Counts(ops.get(), acked.get(), wrong.get(), keyRangeDeletes.get(), rewrites)); // the last
        synchronized (problems) {
            return new Summary(
                    ops.get(),
                    puts.get(),
                    deletes.get(),
                    merges.get(),
                    rangeDeletes.get(),
                    batches.get(),
                    gets.get(),
                    multiGets.get(),
                    iterators.get(),
                    keyMayExists.get(),
                    snapshots.get(),
                    flushes.get(),
                    compactions.get(),
                    pauses.get(),
                    ingestions.get(),
                    rangeDrops.get(),
                    tablesDropped.get(),
                    keyRangeDeletes.get(),
                    keysRangeDeleted.get(),
                    rewrites,
                    acked.get(),
                    wrong.get(),
                    List.copyOf(problems),
                    millis);
        }
    }

    /** The failure that stopped a thread, if any (it also counts as a wrong answer). */
    public Throwable failure() {
        return failure;
    }

    private void problem(String p) {
        synchronized (problems) {
            if (problems.size() < 5) {
                problems.add(p);
            }
        }
    }

    private void wrongAnswer(String p) {
        wrong.incrementAndGet();
        problem(p);
    }

    /** A random key of {@code thread}'s stripes. */
    private int ownKey(Random rnd, int thread) {
        int stripes = (keys + stripe - 1) / stripe;
        int own = (stripes - thread + config.threads() - 1) / config.threads(); // >= 1: stripe(...) made sure
        int start = (thread + config.threads() * rnd.nextInt(own)) * stripe;
        return start + rnd.nextInt(Math.min(stripe, keys - start));
    }

    private void worker(int thread, long deadline) {
        Random rnd = new Random(config.seed() * 1_000_003L + thread);
        long writeSeq = 0;
        int[] lastSingleIngested = {-1}; // the own key of this thread's last one-key ingestion not dropped yet
        long limit = threadLimit(thread);
        for (long i = 0; i < limit && System.nanoTime() < deadline && failure == null; i++) {
            int r = rnd.nextInt(1000);
            long writeId = (long) thread << 48 | ++writeSeq;
            if (r < 350) {
                write(thread, writeId, List.of(ownKey(rnd, thread)), rnd, false);
            } else if (r < 450) {
                write(thread, writeId, List.of(ownKey(rnd, thread)), rnd, true);
            } else if (r < 600) {
                int n = 2 + rnd.nextInt(7);
                List<Integer> ks = new ArrayList<>();
                for (int j = 0; j < n; j++) {
                    int k = ownKey(rnd, thread);
                    if (!ks.contains(k)) {
                        ks.add(k);
                    }
                }
                write(thread, writeId, ks, rnd, rnd.nextInt(4) == 0);
            } else if (r < 710) {
                get(thread, rnd.nextInt(keys));
            } else if (r < 747) {
                keyMayExist(thread, rnd.nextInt(keys));
            } else if (r < 777) {
                deleteKeyRange(thread, writeId, rnd, ownKey(rnd, thread), true);
            } else if (r < 780) {
                dropRange(thread, writeId, rnd, lastSingleIngested);
            } else if (r < 820) {
                multiGet(thread, rnd);
            } else if (r < 900) {
                iterate(thread, rnd);
            } else if (r < 989) {
                snapshot(thread, rnd, writeId);
            } else if (r < 992) {
                pauseAndRead(thread, rnd);
            } else if (r < 996) {
                if (db.options().ttl() == null) {
                    // a TTL database refuses ingestion (files carry no write times)
                    ingest(thread, writeId, rnd, lastSingleIngested);
                } else {
                    write(thread, writeId, List.of(ownKey(rnd, thread)), rnd, false);
                }
            } else if (r < 999) {
                db.flush();
                flushes.incrementAndGet();
            } else {
                int a = rnd.nextInt(keys);
                int b = Math.min(keys - 1, a + rnd.nextInt(keys / 10 + 1));
                db.compactRange(StressValue.key(a), StressValue.key(b));
                compactions.incrementAndGet();
            }
            ops.incrementAndGet();
            es.count(thread, 1, 0);
        }
    }

    /**
     * Writes {@code ks} (one put or delete, or a batch of several; {@code deletes}: a random share of them are deletes).
     * A quarter of the writes of a value are merges ({@link StressValue#MERGE_OPERATOR}: same rule as a put) and a
     * quarter of the deletes are range deletions of exactly the key ({@link StressValue#rangeEnd}: same rule as a delete).
     */
    private void write(int thread, long writeId, List<Integer> ks, Random rnd, boolean withDeletes) {
        long[] next = new long[ks.size()];
        boolean[] alt = new boolean[ks.size()];
        WriteBatch b = new WriteBatch();
        for (int j = 0; j < ks.size(); j++) {
            int k = ks.get(j);
            long version = ExpectedState.version(es.committed(k)) + 1;
            boolean del = ks.size() == 1 ? withDeletes : withDeletes && rnd.nextBoolean();
            alt[j] = rnd.nextInt(4) == 0;
            next[j] = ExpectedState.state(version, !del);
            es.setPending(k, next[j], writeId);
            if (del && alt[j]) {
                b.deleteRange(StressValue.key(k), StressValue.rangeEnd(k));
            } else if (del) {
                b.delete(StressValue.key(k));
            } else if (alt[j]) {
                b.merge(StressValue.key(k), StressValue.of(k, version));
            } else {
                b.put(StressValue.key(k), StressValue.of(k, version));
            }
        }
        if (ks.size() == 1) {
            int k = ks.get(0);
            if (ExpectedState.exists(next[0])) {
                if (alt[0]) {
                    db.merge(StressValue.key(k), StressValue.of(k, ExpectedState.version(next[0])));
                    merges.incrementAndGet();
                } else {
                    db.put(StressValue.key(k), StressValue.of(k, ExpectedState.version(next[0])));
                    puts.incrementAndGet();
                }
            } else if (alt[0]) {
                db.deleteRange(StressValue.key(k), StressValue.rangeEnd(k));
                rangeDeletes.incrementAndGet();
            } else {
                db.delete(StressValue.key(k));
                deletes.incrementAndGet();
            }
        } else {
            db.write(b);
            batches.incrementAndGet();
        }
        for (int j = 0; j < ks.size(); j++) {
            es.commit(ks.get(j), next[j]);
        }
        acked.incrementAndGet();
        es.count(thread, 0, 1);
    }

    /**
     * The directory of the external table files of a run on {@code db}: next to the database, {@code DB_DIR.ingest}
     * (a killed run leaves its in-flight file there; the next run on the database empties it first).
     */
    public static Path ingestDirectory(Db db) {
        Path dir = db.directory().toAbsolutePath().normalize();
        return dir.resolveSibling(dir.getFileName() + ".ingest");
    }

    /** Creates the ingestion directory of {@code db} and removes what a killed run left in it. */
    public static void prepareIngestDirectory(Db db) throws IOException {
        Path dir = ingestDirectory(db);
        Files.createDirectories(dir);
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                Files.delete(p);
            }
        }
    }

    /**
     * Writes 1-8 distinct own keys (sorted: the keys' zero-padded numbers sort as their bytes) with their next
     * versions into an external table file and ingests it, moved (hard-linked) or copied at random. Each key is a
     * put, a merge (a put's rule), a delete or a range deletion of exactly the key (a delete's rule), as in
     * {@link #write}. Every key is
     * marked pending under one write id first, as for a batch: after a kill, the file is in (every key new) or not
     * (every key old), which {@link StressVerifier} checks. Files overlapping the memtable flush it first
     * ({@link IngestOptions#allowBlockingFlush}).
     */
    private void ingest(int thread, long writeId, Random rnd, int[] lastSingleIngested) {
        int n = 1 + rnd.nextInt(8);
        java.util.TreeSet<Integer> sorted = new java.util.TreeSet<>();
        for (int j = 0; j < n; j++) {
            sorted.add(ownKey(rnd, thread));
        }
        List<Integer> ks = new ArrayList<>(sorted);
        long[] next = new long[ks.size()];
        Path file = ingestDirectory(db).resolve("t" + thread + "-" + (writeId & 0xffff_ffff_ffffL) + ".sst");
        try (TableFileWriter w = TableFileWriter.create(file, db.options())) {
            for (int j = 0; j < ks.size(); j++) {
                int k = ks.get(j);
                int kind = rnd.nextInt(8); // 0: delete, 1: range deletion of exactly the key, 2-3: merge, else put
                next[j] = ExpectedState.state(ExpectedState.version(es.committed(k)) + 1, kind > 1);
                long version = ExpectedState.version(next[j]);
                switch (kind) {
                    case 0 -> w.delete(StressValue.key(k));
                    case 1 -> w.deleteRange(StressValue.key(k), StressValue.rangeEnd(k));
                    case 2, 3 -> w.merge(StressValue.key(k), StressValue.of(k, version));
                    default -> w.put(StressValue.key(k), StressValue.of(k, version));
                }
            }
            w.finish();
        }
        for (int j = 0; j < ks.size(); j++) {
            es.setPending(ks.get(j), next[j], writeId);
        }
        db.ingest(List.of(file), IngestOptions.defaults().moveFiles(rnd.nextBoolean()));
        for (int j = 0; j < ks.size(); j++) {
            es.commit(ks.get(j), next[j]);
        }
        try {
            Files.deleteIfExists(
                    file); // a moved file is a hard link into the database: this drops only the source name
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ingestions.incrementAndGet();
        acked.incrementAndGet();
        es.count(thread, 0, 1);
        if (ks.size() == 1) {
            lastSingleIngested[0] = ks.get(0);
        }
    }

    /**
     * Drops one own key as the Kafka Streams stores drop an expired segment: a range tombstone over exactly the key
     * (the write: a delete's expected-state rule), then {@link Db#deleteFilesInRange} over the same range, which
     * removes the tables lying in it (the table of a one-key ingestion of that key, when the thread made one) and
     * changes nothing reads see, also across a kill (the tombstone is made durable before the removal is).
     */
    private void dropRange(int thread, long writeId, Random rnd, int[] lastSingleIngested) {
        int k = lastSingleIngested[0] >= 0 ? lastSingleIngested[0] : ownKey(rnd, thread);
        lastSingleIngested[0] = -1;
        long next = ExpectedState.state(ExpectedState.version(es.committed(k)) + 1, false);
        es.setPending(k, next, writeId);
        db.deleteRange(StressValue.key(k), StressValue.rangeEnd(k));
        es.commit(k, next);
        acked.incrementAndGet();
        es.count(thread, 0, 1);
        tablesDropped.addAndGet(db.deleteFilesInRange(StressValue.key(k), StressValue.rangeEnd(k)));
        rangeDrops.incrementAndGet();
        if (db.get(StressValue.key(k)) != null) {
            wrongAnswer("range drop of own key " + k + ": the key still reads");
        }
    }

    private boolean own(int thread, int k) {
        return (k / stripe) % config.threads() == thread;
    }

    /**
     * Deletes own keys {@code [from, to)} with one range tombstone, {@code to} at most the end of {@code from}'s stripe:
     * 1-8 keys, or a third of the time a quarter of a stripe (at least 16 keys) up to a whole stripe, at most
     * {@link #MAX_RANGE} keys (wide ranges hide
     * most of a memtable when the key space is small: the engine's memtable rewrite runs). Every key of the range is marked pending (deleted,
     * its next version) under the one write id {@code writeId} before the call and committed after it, so after a kill
     * the range reads all old or all deleted ({@link StressVerifier}'s rule for a batch). A quarter of the calls go
     * through a {@link WriteBatch} and half of those put one key of the range again after the tombstone in the same
     * batch (a later sequence than the tombstone's: the key reads the put). With {@code check}, one time in four reads
     * the range back at once: a get of one of its keys and an iterator bounded to the range must see exactly the
     * expected state. Returns {@code [from, to)} and the keys' committed states before the call, in {@code before}.
     */
    private int[] deleteKeyRange(int thread, long writeId, Random rnd, int from, boolean check, long... before) {
        int stripeEnd = Math.min(keys, (from / stripe + 1) * stripe);
        int wideMax = Math.min(stripe, MAX_RANGE);
        int wideMin = Math.min(wideMax, Math.max(16, wideMax / 4));
        int width = rnd.nextInt(3) == 0 ? wideMin + rnd.nextInt(wideMax - wideMin + 1) : 1 + rnd.nextInt(8);
        int to = Math.min(stripeEnd, from + width);
        long[] next = new long[to - from];
        for (int k = from; k < to; k++) {
            long c = es.committed(k);
            if (before.length > k - from) {
                before[k - from] = c;
            }
            next[k - from] = ExpectedState.state(ExpectedState.version(c) + 1, false);
            es.setPending(k, next[k - from], writeId);
        }
        if (rnd.nextInt(4) == 0) {
            WriteBatch b = new WriteBatch();
            b.deleteRange(StressValue.key(from), StressValue.key(to));
            if (rnd.nextBoolean()) {
                int k = from + rnd.nextInt(to - from);
                long version = ExpectedState.version(next[k - from]) + 1;
                next[k - from] = ExpectedState.state(version, true);
                es.setPending(k, next[k - from], writeId);
                b.put(StressValue.key(k), StressValue.of(k, version));
            }
            db.write(b);
        } else {
            db.deleteRange(StressValue.key(from), StressValue.key(to));
        }
        for (int k = from; k < to; k++) {
            es.commit(k, next[k - from]);
        }
        keyRangeDeletes.incrementAndGet();
        keysRangeDeleted.addAndGet(to - from);
        acked.incrementAndGet();
        es.count(thread, 0, 1);
        es.countKeyRangeDeletion(thread);
        if (check && rnd.nextInt(4) == 0) {
            int k = from + rnd.nextInt(to - from);
            check(thread, k, es.committed(k), db.get(StressValue.key(k)), "get after a key-range deletion");
            checkRange(
                    ReadOptions.defaults(), from, to, next, "iterator over a key-range deletion " + from + ".." + to);
        }
        return new int[] {from, to};
    }

    /**
     * Iterates own keys {@code [from, to)} through {@code ro} (bounds set here): exactly the keys whose {@code states}
     * exist must show, each with its value.
     */
    private void checkRange(ReadOptions ro, int from, int to, long[] states, String what) {
        ro.iterateLowerBound(StressValue.key(from)).iterateUpperBound(StressValue.key(to));
        try (DbIterator it = db.iterator(ro)) {
            int k = from;
            for (it.seekToFirst(); it.valid(); it.next()) {
                int got = StressValue.keyNumber(it.key());
                while (k < to && k < got && !ExpectedState.exists(states[k - from])) {
                    k++;
                }
                if (got != k || k >= to || !StressValue.matches(k, states[k - from], it.value())) {
                    wrongAnswer(what + ": key " + got + " (version " + StressValue.versionOf(got, it.value())
                            + ") where the expected state has "
                            + (k < to ? "key " + k + " " + StressVerifier.describe(states[k - from]) : "nothing"));
                    return;
                }
                k++;
            }
            for (; k < to; k++) {
                if (ExpectedState.exists(states[k - from])) {
                    wrongAnswer(
                            what + ": key " + k + " missing, expected " + StressVerifier.describe(states[k - from]));
                    return;
                }
            }
        }
    }

    /** Checks a value read for another thread's key: absent or a well-formed value, of a version the expected state allows. */
    private boolean plausible(int k, byte[] v, long before, long after) {
        long lo = ExpectedState.version(before);
        long hi = ExpectedState.version(after);
        long p = es.pending(k);
        if (p >= 0) {
            hi = Math.max(hi, ExpectedState.version(p));
        }
        if (v == null) {
            return !ExpectedState.exists(before)
                    || !ExpectedState.exists(after)
                    || hi > lo
                    || p >= 0 && !ExpectedState.exists(p);
        }
        long ver = StressValue.versionOf(k, v);
        return ver >= 0 && ver >= lo && ver <= hi;
    }

    private void get(int thread, int k) {
        gets.incrementAndGet();
        long before = es.committed(k);
        check(thread, k, before, db.get(StressValue.key(k)), "get");
    }

    /**
     * {@link Db#keyMayExist(byte[], Holder)} and {@link Db#keyExists(byte[])} of key {@code k}, any thread's. An own
     * key (its state exact): keyMayExist must be true when the key exists, the value it hands back (found in memory)
     * must be the expected one, and keyExists must equal whether it exists. Another thread's key: a value handed back,
     * or an absence (keyMayExist or keyExists false), must be plausible as a get's answer is.
     */
    private void keyMayExist(int thread, int k) {
        keyMayExists.incrementAndGet();
        byte[] key = StressValue.key(k);
        long before = es.committed(k);
        Holder<byte[]> h = new Holder<>();
        boolean may = db.keyMayExist(key, h);
        byte[] v = h.getValue();
        boolean exists = db.keyExists(key);
        if (!may && v != null) {
            wrongAnswer("keyMayExist of key " + k + ": false with a value");
        }
        if (own(thread, k)) {
            boolean expected = ExpectedState.exists(before);
            if (expected && !may) {
                wrongAnswer("keyMayExist of own key " + k + ": false, expected " + StressVerifier.describe(before));
            }
            if (v != null && !StressValue.matches(k, before, v)) {
                wrongAnswer("keyMayExist of own key " + k + ": version " + StressValue.versionOf(k, v) + ", expected "
                        + StressVerifier.describe(before));
            }
            if (exists != expected) {
                wrongAnswer(
                        "keyExists of own key " + k + ": " + exists + ", expected " + StressVerifier.describe(before));
            }
        } else {
            long after = es.committed(k);
            if ((v != null || !may) && !plausible(k, v, before, after)) {
                wrongAnswer("keyMayExist of key " + k + ": "
                        + (v == null ? "certainly absent" : "version " + StressValue.versionOf(k, v)) + " outside ["
                        + StressVerifier.describe(before) + ", " + StressVerifier.describe(after) + "]");
            }
            if (!exists && !plausible(k, null, before, es.committed(k))) {
                wrongAnswer("keyExists of key " + k + ": absent, outside [" + StressVerifier.describe(before) + ", "
                        + StressVerifier.describe(es.committed(k)) + "]");
            }
        }
    }

    /**
     * A {@code multiGet} of 2-16 keys, any thread's, duplicates and neighbours included (db_stress's TestMultiGet): the
     * batched read path (each table filters the whole batch, keys sharing a block read it back to back); each answer is
     * checked as a get's.
     */
    private void multiGet(int thread, Random rnd) {
        multiGets.incrementAndGet();
        int n = 2 + rnd.nextInt(15);
        int[] ks = new int[n];
        List<byte[]> batch = new ArrayList<>(n);
        for (int j = 0; j < n; j++) {
            ks[j] = j > 0 && rnd.nextInt(3) == 0 ? Math.min(keys - 1, ks[j - 1] + rnd.nextInt(3)) : rnd.nextInt(keys);
            batch.add(StressValue.key(ks[j]));
        }
        long[] before = new long[n];
        for (int j = 0; j < n; j++) {
            before[j] = es.committed(ks[j]);
        }
        List<byte[]> values = db.multiGet(batch);
        if (values.size() != n) {
            wrongAnswer("multiGet of " + n + " keys returned " + values.size() + " values");
            return;
        }
        for (int j = 0; j < n; j++) {
            check(thread, ks[j], before[j], values.get(j), "multiGet");
        }
    }

    /** Checks {@code v}, read for key {@code k} whose committed state was {@code before} when the read began. */
    private void check(int thread, int k, long before, byte[] v, String op) {
        if (own(thread, k)) {
            if (!StressValue.matches(k, before, v)) {
                wrongAnswer(op + " of own key " + k + ": expected " + StressVerifier.describe(before) + ", got "
                        + (v == null ? "nothing" : "version " + StressValue.versionOf(k, v)));
            }
        } else if (!plausible(k, v, before, es.committed(k))) {
            wrongAnswer(op + " of key " + k + ": " + (v == null ? "nothing" : "version " + StressValue.versionOf(k, v))
                    + " outside [" + StressVerifier.describe(before) + ", " + StressVerifier.describe(es.committed(k))
                    + "]");
        }
    }

    /**
     * Pauses the database's background work ({@link Db#pauseBackgroundWork}: nested when other threads hold pauses
     * too), makes 8-64 reads of any thread's keys while it holds (gets, keyMayExist and keyExists, multiGets,
     * iterators, each checked as usual), and continues. Meanwhile the other threads' writes go on until the memtables
     * fill and then stall, and their flushes and range compactions wait for the continue; a kill -9 then must lose
     * nothing. The pausing thread only reads: a write of its own could stall, or a flush wait, for the very work its
     * pause holds.
     */
    private void pauseAndRead(int thread, Random rnd) {
        pauses.incrementAndGet();
        db.pauseBackgroundWork();
        try {
            for (int n = 8 + rnd.nextInt(57); n > 0; n--) {
                switch (rnd.nextInt(4)) {
                    case 0 -> get(thread, rnd.nextInt(keys));
                    case 1 -> keyMayExist(thread, rnd.nextInt(keys));
                    case 2 -> multiGet(thread, rnd);
                    default -> iterate(thread, rnd);
                }
            }
        } finally {
            db.continueBackgroundWork();
        }
    }

    /** Seeks to a random key and walks up to 32 entries: own keys in the walked range exactly, others plausibly. */
    private void iterate(int thread, Random rnd) {
        iterators.incrementAndGet();
        int start = rnd.nextInt(keys);
        int lastSeen = start - 1;
        boolean ended = true;
        List<int[]> seenOwn = new ArrayList<>();
        try (DbIterator it = db.iterator()) {
            int steps = 0;
            for (it.seek(StressValue.key(start)); it.valid(); it.next()) {
                if (steps++ == 32) {
                    ended = false;
                    break;
                }
                int k = StressValue.keyNumber(it.key());
                if (k < 0 || k >= keys || k < start || k <= lastSeen) {
                    wrongAnswer("iterator from " + start + ": key " + k + " after " + lastSeen);
                    return;
                }
                byte[] v = it.value();
                if (own(thread, k)) {
                    if (!StressValue.matches(k, es.committed(k), v)) {
                        wrongAnswer("iterator: own key " + k + " reads " + StressValue.versionOf(k, v) + ", expected "
                                + StressVerifier.describe(es.committed(k)));
                    }
                    seenOwn.add(new int[] {k});
                } else if (StressValue.versionOf(k, v) < 0) {
                    wrongAnswer("iterator: key " + k + " has a malformed value");
                }
                lastSeen = k;
            }
        }
        // Own keys in [start, lastSeen] (to the end when the iterator ended) that exist must have been seen.
        int end = ended ? keys - 1 : lastSeen;
        int idx = 0;
        for (int k = start; k <= end; k++) {
            if (!own(thread, k)) {
                continue;
            }
            boolean seen = idx < seenOwn.size() && seenOwn.get(idx)[0] == k;
            if (seen) {
                idx++;
            }
            if (seen != ExpectedState.exists(es.committed(k))) {
                wrongAnswer("iterator from " + start + ": own key " + k
                        + (seen ? " present but expected absent" : " missing"));
                return;
            }
        }
    }

    /**
     * Takes a snapshot, records a few own keys, overwrites one of them (or, one time in five, deletes a key range from
     * it: {@link #deleteKeyRange}), and reads them back through the snapshot (the first also by keyMayExist and
     * keyExists); after a key-range deletion an iterator through the snapshot over the range must show every key of it
     * as it was.
     */
    private void snapshot(int thread, Random rnd, long writeId) {
        snapshots.incrementAndGet();
        int n = 1 + rnd.nextInt(8);
        int[] ks = new int[n];
        long[] states = new long[n];
        try (Snapshot s = db.getSnapshot()) {
            for (int j = 0; j < n; j++) {
                ks[j] = ownKey(rnd, thread);
                states[j] = es.committed(ks[j]);
            }
            int[] range = null;
            long[] old = null;
            if (rnd.nextInt(5) == 0) {
                old = new long[Math.min(stripe, MAX_RANGE)];
                range = deleteKeyRange(thread, writeId, rnd, ks[0], false, old);
            } else {
                write(thread, writeId, List.of(ks[0]), rnd, rnd.nextInt(4) == 0);
            }
            if (range != null) {
                checkRange(
                        ReadOptions.defaults().snapshot(s),
                        range[0],
                        range[1],
                        java.util.Arrays.copyOf(old, range[1] - range[0]),
                        "snapshot iterator over key-range deletion " + range[0] + ".." + range[1]);
            }
            ReadOptions ro = ReadOptions.defaults().snapshot(s);
            for (int j = 0; j < n; j++) {
                byte[] v = db.get(StressValue.key(ks[j]), ro);
                if (!StressValue.matches(ks[j], states[j], v)) {
                    wrongAnswer("snapshot get of own key " + ks[j] + ": expected " + StressVerifier.describe(states[j])
                            + ", got " + (v == null ? "nothing" : "version " + StressValue.versionOf(ks[j], v)));
                }
            }
            // keyMayExist and keyExists through the snapshot, where the state recorded is exact.
            Holder<byte[]> h = new Holder<>();
            byte[] key0 = StressValue.key(ks[0]);
            boolean may = db.keyMayExist(ro, key0, h);
            boolean exists = db.keyExists(ro, key0);
            if ((ExpectedState.exists(states[0]) && !may)
                    || (h.getValue() != null && !StressValue.matches(ks[0], states[0], h.getValue()))
                    || exists != ExpectedState.exists(states[0])) {
                wrongAnswer("snapshot keyMayExist/keyExists of own key " + ks[0] + ": " + may + " (version "
                        + StressValue.versionOf(ks[0], h.getValue()) + "), " + exists + ", expected "
                        + StressVerifier.describe(states[0]));
            }
            if (rnd.nextBoolean()) {
                if (rnd.nextBoolean()) {
                    ro.iterateUpperBound(StressValue.key(ks[0] + 1)); // a one-key range: through the range filters
                }
                try (DbIterator it = db.iterator(ro)) {
                    it.seek(StressValue.key(ks[0]));
                    boolean at = it.valid() && StressValue.keyNumber(it.key()) == ks[0];
                    if (at != ExpectedState.exists(states[0])
                            || at && !StressValue.matches(ks[0], states[0], it.value())) {
                        wrongAnswer("snapshot iterator at own key " + ks[0] + ": expected "
                                + StressVerifier.describe(states[0]));
                    }
                }
            }
        }
    }
}
