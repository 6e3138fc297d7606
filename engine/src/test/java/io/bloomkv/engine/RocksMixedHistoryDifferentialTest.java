package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.AbstractSlice;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.EnvOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.IngestExternalFileOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.SstFileWriter;
import org.rocksdb.StringAppendOperator;
import org.rocksdb.UInt64AddOperator;

/**
 * One seeded history mixing the RocksDB features bloomkv follows, against RocksDB (rocksdbjni) as the oracle: puts,
 * deletes, merge operands ({@link MergeOperators#uint64Add()} / {@code UInt64AddOperator},
 * {@link MergeOperators#stringAppend(char)} / {@code StringAppendOperator}), range deletions over merges and puts
 * (bursts of writes under a tombstone of their own memtable too), write batches mixing all four, snapshots taken
 * mid-history, iterators held open across later writes, flushes, manual {@code compactRange}, ingestions (the same
 * sorted puts, merge operands and deletes written by {@link TableFileWriter} and ingested with {@link Db#ingest}, and
 * by RocksDB's {@code SstFileWriter} and ingested with {@code ingestExternalFile}; bloomkv's files with range deletions
 * too, which RocksDB gets as a deleteRange just before its ingestion: into new key ranges, over the memtables, over
 * tables, under snapshots and open iterators, some files written with another prefix length or without filters) and
 * close/reopen in the middle. bloomkv alone follows some range deletions with {@code deleteFilesInRange} over the same
 * range, which its documentation says changes nothing reads see once the tombstone is written. Every read is compared: get and multiGet (latest and at snapshots), iterators in both
 * directions with lower and upper bounds and changes of direction at random points, and prefix seeks
 * ({@link ReadOptions#prefixSameAsStart} with {@link Options#prefixLength}, against a fixed-length prefix extractor).
 * {@link RocksFeaturesDifferentialTest} covers merges and range deletions with short-lived reads; this class adds what
 * meets them.
 *
 * <p>Prefix-mode iterators are positioned by {@code seek} or {@code seekForPrev} with targets of at least the prefix
 * length (shorter ones are outside a fixed-length extractor's domain, where RocksDB leaves the order unspecified; the
 * positionings without a target are {@link PrefixSeekTest}'s), and are compared with RocksDB's total-order iterator
 * confined to the target's prefix; iterators without prefix mode run RocksDB with {@code total_order_seek}.
 *
 * <p>Replay with -Dbloomkv.seed=N; -Dbloomkv.modelOps=N for longer histories (default 1000 operations per test).
 */
class RocksMixedHistoryDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 1000);

    /** The prefix length of both databases: 'k' or 'x', then a group byte. */
    private static final int PREFIX = 2;

    /** Group bytes of the main key space; 0x42 is never used, so its prefix is always empty. */
    private static final byte[] GROUPS = {0x00, 0x01, 0x41, 0x7f, (byte) 0x80, (byte) 0xfe, (byte) 0xff};

    private long liveTablesBefore;
    private long filterBytesBefore;
    private long mappedBefore;

    @BeforeEach
    void countOffHeap() {
        liveTablesBefore = TableReader.liveTables();
        filterBytesBefore = TableReader.liveFilterBytes();
        mappedBefore = io.bloomkv.engine.fs.DiskFileSystem.liveMappedFiles();
    }

    @AfterEach
    void nothingLeftOffHeap() {
        assertThat(TableReader.liveTables()).as("table readers alive").isEqualTo(liveTablesBefore);
        assertThat(TableReader.liveFilterBytes()).as("filter bytes off-heap").isEqualTo(filterBytesBefore);
        assertThat(io.bloomkv.engine.fs.DiskFileSystem.liveMappedFiles())
                .as("table files mapped")
                .isEqualTo(mappedBefore);
    }

    /** Small tables and levels, so flushes and compactions happen often. */
    private static Options small() {
        return SmallLevels.options().prefixLength(PREFIX);
    }

    @Test
    void countersMatchRocksDb() throws Exception {
        new Run(small().mergeOperator(MergeOperators.uint64Add()), true, "counters").run();
    }

    @Test
    void appendsMatchRocksDb() throws Exception {
        new Run(small().mergeOperator(MergeOperators.stringAppend(',')), false, "appends").run();
    }

    /** Range filters on: bounded positionings may rule tables out before reading them. */
    @Test
    void appendsWithRangeFiltersMatchRocksDb() throws Exception {
        new Run(
                        small().mergeOperator(MergeOperators.stringAppend(',')).rangeFilterBitsPerKey(10),
                        false,
                        "rangeFilters")
                .run();
    }

    /**
     * A recorded history (this class's seed 73229034180372 at the default length): a held iterator bounded below at a
     * key whose older versions are merge operands walks forward, back to the bound, and forward again. Turning forward
     * by a step from where the walk back stopped surfaced, through a range-filtered level, a tombstone below the
     * bound that ended the skip of the current key, which was returned twice; the turn now re-seeks to the key.
     */
    @Test
    void turningForwardAtTheLowerBoundReturnsTheNextKey() throws Exception {
        new Run(
                        small().mergeOperator(MergeOperators.stringAppend(',')).rangeFilterBitsPerKey(10),
                        false,
                        "rangeFilters",
                        73229034180372L)
                .run();
    }

    /**
     * Tables cut at the prefix (as for segments), so range deletions over whole prefixes cover whole tables and
     * deleteFilesInRange removes them; no WAL (a close flushes the memtables).
     */
    @Test
    void partitionedTablesWithoutWalMatchRocksDb() throws Exception {
        new Run(
                        small().tablePartitionPrefixLength(PREFIX)
                                .disableWal(true)
                                .mergeOperator(MergeOperators.stringAppend(',')),
                        false,
                        "partitioned")
                .run();
    }

    /**
     * A write buffer of 32 KiB: bursts of writes under a range tombstone of their own memtable make the write path
     * rewrite it ({@code MemTable.withoutHidden}) while snapshots and iterators read it.
     */
    @Test
    void memtableRewritesMatchRocksDb() throws Exception {
        Run run =
                new Run(small().writeBufferSize(32 << 10).mergeOperator(MergeOperators.uint64Add()), true, "rewrites");
        run.expectRewrites = true;
        run.run();
    }

    /**
     * A bloomkv iterator and RocksDB iterators made at the same point with the same snapshot and bounds, held open
     * across operations: {@code theirs} in total order; for a prefix-mode bloomkv iterator, {@code theirsPrefix} in
     * RocksDB's prefix mode too (null otherwise).
     */
    private record Pair(
            DbIterator ours,
            RocksIterator theirs,
            RocksIterator theirsPrefix,
            List<AutoCloseable> resources,
            boolean prefixMode,
            String what) {
        void close() throws Exception {
            ours.close();
            theirs.close();
            if (theirsPrefix != null) {
                theirsPrefix.close();
            }
            for (AutoCloseable r : resources) {
                r.close();
            }
        }
    }

    private final class Run {
        final Options options;
        final boolean counters;
        final String name;
        final long seed;
        final Random rnd;
        final Path ours;
        final Path files;
        final List<String> history = new ArrayList<>();
        final List<Snapshot> snaps = new ArrayList<>();
        final List<org.rocksdb.Snapshot> rsnaps = new ArrayList<>();
        final List<Pair> iterators = new ArrayList<>();
        /** Regions 'x' + c (c below this) were made by ingestions into new key ranges. */
        int freshRegions;

        int fileCounter;
        Db db;
        RocksDB rocks;
        long mergeLookups;
        long ingestions;
        long prefixSeeks;
        long rocksPrefixInconsistent;
        long rewrites;
        long filesRemoved;

        boolean expectRewrites;

        Run(Options options, boolean counters, String name) throws Exception {
            this(options, counters, name, TestKeys.seed("RocksMixedHistoryDifferentialTest." + name));
        }

        Run(Options options, boolean counters, String name, long seed) throws Exception {
            this.options = options;
            this.counters = counters;
            this.name = name;
            this.seed = seed;
            this.rnd = new Random(seed);
            this.ours = dir.resolve("bloomkv");
            this.files = Files.createDirectories(dir.resolve("files"));
        }

        String ctx(int op) {
            return "seed " + seed + " (-Dbloomkv.seed=" + seed + ") op " + op;
        }

        void log(String s) {
            history.add(s);
        }

        void run() throws Exception {
            try (org.rocksdb.MergeOperator rop = counters ? new UInt64AddOperator() : new StringAppendOperator(',');
                    BloomFilter bloom = new BloomFilter(10);
                    org.rocksdb.Options ro = new org.rocksdb.Options()
                            .setCreateIfMissing(true)
                            .setWriteBufferSize(64 << 10)
                            .setMergeOperator(rop)
                            .useFixedLengthPrefixExtractor(PREFIX)
                            .setMemtablePrefixBloomSizeRatio(0.1)
                            .setTableFormatConfig(new BlockBasedTableConfig()
                                    .setFilterPolicy(bloom)
                                    .setWholeKeyFiltering(true));
                    EnvOptions env = new EnvOptions();
                    FlushOptions flush = new FlushOptions().setWaitForFlush(true);
                    IngestExternalFileOptions ingest = new IngestExternalFileOptions()) {
                rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                db = Db.open(ours, options);
                try {
                    for (int op = 0; op < OPS; op++) {
                        step(op, ro, env, flush, ingest);
                    }
                    closeIterators();
                    compareScan(ctx(OPS) + " full scan", null, null, false, -1, Integer.MAX_VALUE);
                    db.compactRange(null, null);
                    compareScan(
                            ctx(OPS) + " full reverse scan after compactRange",
                            null,
                            null,
                            true,
                            -1,
                            Integer.MAX_VALUE);
                    mergeLookups += db.stats().mergeLookups();
                    rewrites += db.stats().memtableRewrites();
                    System.out.println("RocksMixedHistoryDifferentialTest." + name + ": " + ingestions + " ingestions, "
                            + prefixSeeks + " prefix seeks (" + rocksPrefixInconsistent
                            + " where RocksDB's prefix mode disagreed with its total order), " + mergeLookups
                            + " merge lookups, " + rewrites + " memtable rewrites, " + filesRemoved
                            + " tables removed by deleteFilesInRange; " + db.stats());
                    assertThat(ingestions).as("ingestions").isPositive();
                    assertThat(prefixSeeks).as("prefix seeks").isPositive();
                    assertThat(mergeLookups).as("gets read past merge operands").isPositive();
                    if (expectRewrites) {
                        assertThat(rewrites)
                                .as("memtables rewritten without their hidden entries")
                                .isPositive();
                    }
                } catch (AssertionError | RuntimeException | RocksDBException e) {
                    int from = Math.max(0, history.size() - 200);
                    System.out.println("RocksMixedHistoryDifferentialTest." + name + " seed " + seed
                            + ": the history's last " + (history.size() - from) + " of " + history.size() + " steps:");
                    for (int i = from; i < history.size(); i++) {
                        System.out.println("  " + history.get(i));
                    }
                    throw e;
                } finally {
                    closeIterators();
                    releaseSnapshots();
                    db.close();
                    rocks.close();
                }
            }
        }

        void step(int op, org.rocksdb.Options ro, EnvOptions env, FlushOptions flush, IngestExternalFileOptions ingest)
                throws Exception {
            String where = ctx(op);
            if (expectRewrites && op % 100 == 99) {
                burst(true);
            }
            int r = rnd.nextInt(1000);
            if (r < 160) {
                byte[] k = key();
                byte[] v = value();
                log("put " + s(k) + " " + s(v));
                db.put(k, v);
                rocks.put(k, v);
            } else if (r < 200) {
                byte[] k = key();
                log("delete " + s(k));
                db.delete(k);
                rocks.delete(k);
            } else if (r < 380) {
                byte[] k = key();
                byte[] v = operand();
                log("merge " + s(k) + " " + s(v));
                db.merge(k, v);
                rocks.merge(k, v);
            } else if (r < 420) {
                byte[][] range = range();
                log("deleteRange " + s(range[0]) + " " + s(range[1]));
                db.deleteRange(range[0], range[1]);
                rocks.deleteRange(range[0], range[1]);
                if (rnd.nextInt(3) == 0) {
                    // bloomkv only: with the tombstone written first, the removal changes nothing reads see
                    // (docs/user-guide.md, "Giving the space back at once")
                    int removed = db.deleteFilesInRange(range[0], range[1]);
                    log("deleteFilesInRange " + s(range[0]) + " " + s(range[1]) + ": " + removed + " tables");
                    filesRemoved += removed;
                }
            } else if (r < 440) {
                batch();
            } else if (r < 540) {
                int sn = pickSnapshot();
                byte[] k = key();
                log("get " + s(k) + " at " + sn);
                try (org.rocksdb.ReadOptions rro = rocksRead(sn)) {
                    assertThat(db.get(k, ourRead(sn)))
                            .as(where + " get " + s(k) + " at snapshot " + sn)
                            .isEqualTo(rocks.get(rro, k));
                }
            } else if (r < 580) {
                int sn = pickSnapshot();
                List<byte[]> keys = new ArrayList<>();
                for (int i = 0, n = 1 + rnd.nextInt(16); i < n; i++) {
                    keys.add(rnd.nextInt(6) == 0 && !keys.isEmpty() ? keys.get(rnd.nextInt(keys.size())) : key());
                }
                log("multiGet " + keys.size() + " at " + sn);
                List<byte[]> expected;
                try (org.rocksdb.ReadOptions rro = rocksRead(sn)) {
                    expected = rocks.multiGetAsList(rro, keys);
                }
                List<byte[]> actual = db.multiGet(ourRead(sn), keys);
                for (int i = 0; i < keys.size(); i++) {
                    assertThat(actual.get(i))
                            .as(where + " multiGet " + s(keys.get(i)) + " at snapshot " + sn)
                            .isEqualTo(expected.get(i));
                }
            } else if (r < 680) {
                int sn = pickSnapshot();
                byte[] lower = rnd.nextInt(3) == 0 ? bound() : null;
                byte[] upper = rnd.nextInt(3) == 0 ? bound() : null;
                boolean reverse = rnd.nextBoolean();
                int how = rnd.nextInt(3);
                int limit = 1 + rnd.nextInt(rnd.nextInt(8) == 0 ? 2000 : 30);
                compareScan(where, lower, upper, reverse, sn, limit, how);
            } else if (r < 760) {
                useIterator(where);
            } else if (r < 800) {
                if (iterators.size() < 3 && rnd.nextBoolean()) {
                    openIterator();
                } else if (!iterators.isEmpty()) {
                    int i = rnd.nextInt(iterators.size());
                    log("close iterator " + i);
                    iterators.remove(i).close();
                }
            } else if (r < 840) {
                if (snaps.size() < 4 && rnd.nextBoolean()) {
                    log("snapshot " + snaps.size());
                    snaps.add(db.getSnapshot());
                    rsnaps.add(rocks.getSnapshot());
                } else if (!snaps.isEmpty()) {
                    int i = rnd.nextInt(snaps.size());
                    log("release snapshot " + i);
                    snaps.remove(i).close();
                    rocks.releaseSnapshot(rsnaps.remove(i));
                }
            } else if (r < 870) {
                log("flush");
                db.flush();
                if (rnd.nextBoolean()) {
                    rocks.flush(flush);
                }
            } else if (r < 885) {
                byte[] a = rnd.nextBoolean() ? null : bound();
                byte[] b = rnd.nextBoolean() ? null : bound();
                if (a != null && b != null && Arrays.compareUnsigned(a, b) > 0) {
                    byte[] t = a;
                    a = b;
                    b = t;
                }
                log("compactRange " + s(a) + " " + s(b));
                db.compactRange(a, b);
                if (rnd.nextInt(4) == 0) {
                    rocks.compactRange();
                }
            } else if (r < 935) {
                ingest(ro, env, ingest);
            } else if (r < 942) {
                log("reopen");
                mergeLookups += db.stats().mergeLookups();
                rewrites += db.stats().memtableRewrites();
                closeIterators();
                releaseSnapshots();
                db.close();
                db = Db.open(ours, options);
            } else if (r < 952) {
                burst(false);
            } else {
                int sn = pickSnapshot();
                byte[] k = key();
                log("get " + s(k) + " at " + sn);
                try (org.rocksdb.ReadOptions rro = rocksRead(sn)) {
                    assertThat(db.get(k, ourRead(sn)))
                            .as(where + " get " + s(k) + " at snapshot " + sn)
                            .isEqualTo(rocks.get(rro, k));
                }
            }
        }

        /**
         * Many puts and merges, then a range deletion over the whole main key space or one prefix of it (the whole
         * space when {@code whole}; otherwise three times in four, either): the memtable fills with entries a tombstone
         * of its own hides, which makes the write path rewrite it without them, under the snapshots and iterators open
         * at the time.
         */
        void burst(boolean whole) throws RocksDBException {
            int n = whole ? 80 : 20 + rnd.nextInt(80);
            log("burst of " + n + " writes");
            for (int i = 0; i < n; i++) {
                byte[] k = key();
                if (rnd.nextInt(3) == 0) {
                    byte[] v = operand();
                    log("merge " + s(k) + " " + s(v));
                    db.merge(k, v);
                    rocks.merge(k, v);
                } else {
                    byte[] v = value();
                    log("put " + s(k) + " " + s(v));
                    db.put(k, v);
                    rocks.put(k, v);
                }
            }
            if (whole || rnd.nextInt(4) != 0) {
                byte[] begin;
                byte[] end;
                if (whole || rnd.nextBoolean()) {
                    begin = new byte[] {'k'};
                    end = new byte[] {'l'};
                } else {
                    begin = new byte[] {'k', GROUPS[rnd.nextInt(GROUPS.length)]};
                    end = begin[1] == (byte) 0xff ? new byte[] {'l'} : new byte[] {'k', (byte) (begin[1] + 1)};
                }
                log("deleteRange " + s(begin) + " " + s(end));
                db.deleteRange(begin, end);
                rocks.deleteRange(begin, end);
                byte[] k = key();
                byte[] v = value();
                log("put " + s(k) + " " + s(v));
                db.put(k, v);
                rocks.put(k, v);
            }
        }

        void batch() throws RocksDBException {
            WriteBatch b = new WriteBatch();
            StringBuilder sb = new StringBuilder("batch");
            try (org.rocksdb.WriteBatch rb = new org.rocksdb.WriteBatch();
                    org.rocksdb.WriteOptions wo = new org.rocksdb.WriteOptions()) {
                for (int i = 0, n = 1 + rnd.nextInt(8); i < n; i++) {
                    byte[] k = key();
                    switch (rnd.nextInt(4)) {
                        case 0 -> {
                            sb.append(" [delete ").append(s(k)).append(']');
                            b.delete(k);
                            rb.delete(k);
                        }
                        case 1 -> {
                            byte[] v = value();
                            sb.append(" [put ")
                                    .append(s(k))
                                    .append(' ')
                                    .append(s(v))
                                    .append(']');
                            b.put(k, v);
                            rb.put(k, v);
                        }
                        case 2 -> {
                            byte[] v = operand();
                            sb.append(" [merge ")
                                    .append(s(k))
                                    .append(' ')
                                    .append(s(v))
                                    .append(']');
                            b.merge(k, v);
                            rb.merge(k, v);
                        }
                        default -> {
                            byte[][] range = range();
                            sb.append(" [deleteRange ")
                                    .append(s(range[0]))
                                    .append(' ')
                                    .append(s(range[1]))
                                    .append(']');
                            b.deleteRange(range[0], range[1]);
                            rb.deleteRange(range[0], range[1]);
                        }
                    }
                }
                log(sb.toString());
                db.write(b);
                rocks.write(wo, rb);
            }
        }

        /**
         * Writes the same sorted keys (puts, merge operands, deletes) with {@link TableFileWriter} and RocksDB's
         * {@code SstFileWriter} (split into one to three files of disjoint ranges; bloomkv's files sometimes with range
         * deletions too) and ingests them into each database: half the time into a key range never
         * written before ('x' and a new group byte), otherwise over keys the memtables and tables may hold.
         */
        void ingest(org.rocksdb.Options ro, EnvOptions env, IngestExternalFileOptions ingest) throws RocksDBException {
            TreeSet<byte[]> keys = new TreeSet<>(Arrays::compareUnsigned);
            boolean fresh = rnd.nextBoolean() && freshRegions < 250;
            int n = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 60 : 12);
            if (fresh) {
                int c = freshRegions++;
                for (int i = 0; i < n; i++) {
                    keys.add(xKey(c));
                }
            } else {
                for (int i = 0; i < n; i++) {
                    keys.add(key());
                }
            }
            List<byte[]> sorted = new ArrayList<>(keys);
            int parts = Math.min(sorted.size(), 1 + rnd.nextInt(3));
            List<Path> ourFiles = new ArrayList<>();
            List<String> theirFiles = new ArrayList<>();
            StringBuilder sb = new StringBuilder("ingest" + (fresh ? " (new range)" : ""));
            for (int p = 0; p < parts; p++) {
                int from = p * sorted.size() / parts;
                int to = (p + 1) * sorted.size() / parts;
                Path ourFile = files.resolve("b" + fileCounter + ".sst");
                String theirFile = files.resolve("r" + fileCounter + ".sst").toString();
                fileCounter++;
                sb.append(" [");
                // a file of another prefix length, or without filters, fails open in reads (its filter is not asked
                // about prefixes, or there is none)
                Options fileOptions = switch (rnd.nextInt(5)) {
                    case 0 -> options.copy().prefixLength(0);
                    case 1 -> options.copy().prefixLength(3);
                    case 2 -> options.copy().bitsPerKey(0).rangeFilterBitsPerKey(0);
                    default -> options;
                };
                // Range deletions inside the file's own key range (files must not overlap each other), added before,
                // among or after the keys. rocksdbjni's SstFileWriter has no deleteRange: RocksDB gets each as a
                // deleteRange written just before its ingestion, which reads alike (it hides every older key of the
                // range and none of the file's, and no snapshot or iterator is made in between).
                List<byte[][]> ranges = new ArrayList<>();
                if (rnd.nextInt(3) == 0) {
                    for (int r = 1 + rnd.nextInt(2); r > 0; r--) {
                        int i = from + rnd.nextInt(to - from);
                        int j = i + rnd.nextInt(to - i);
                        byte[] begin = sorted.get(i);
                        byte[] end = j > i && rnd.nextBoolean()
                                ? sorted.get(j)
                                : Arrays.copyOf(sorted.get(j), sorted.get(j).length + 1);
                        ranges.add(new byte[][] {begin, end});
                    }
                }
                int rangesAt = from + rnd.nextInt(to - from + 1);
                try (TableFileWriter w = TableFileWriter.create(ourFile, fileOptions);
                        SstFileWriter rw = new SstFileWriter(env, ro)) {
                    rw.open(theirFile);
                    for (int i = from; i <= to; i++) {
                        if (i == rangesAt) {
                            for (byte[][] r : ranges) {
                                sb.append(i == from ? "" : " ")
                                        .append("-[")
                                        .append(s(r[0]))
                                        .append(',')
                                        .append(s(r[1]))
                                        .append(')');
                                w.deleteRange(r[0], r[1]);
                            }
                        }
                        if (i == to) {
                            break;
                        }
                        byte[] k = sorted.get(i);
                        sb.append(i == from ? "" : " ");
                        switch (rnd.nextInt(6)) {
                            case 0 -> {
                                sb.append("del ").append(s(k));
                                w.delete(k);
                                rw.delete(k);
                            }
                            case 1, 2 -> {
                                byte[] v = operand();
                                sb.append(s(k)).append("+=").append(s(v));
                                w.merge(k, v);
                                rw.merge(k, v);
                            }
                            default -> {
                                byte[] v = rnd.nextInt(3) == 0 ? operand() : value();
                                sb.append(s(k)).append('=').append(s(v));
                                w.put(k, v);
                                rw.put(k, v);
                            }
                        }
                    }
                    w.finish();
                    rw.finish();
                }
                for (byte[][] r : ranges) {
                    rocks.deleteRange(r[0], r[1]);
                }
                sb.append(']');
                ourFiles.add(ourFile);
                theirFiles.add(theirFile);
            }
            boolean move = rnd.nextBoolean();
            log(sb + (move ? " moved" : " copied"));
            db.ingest(ourFiles, IngestOptions.defaults().moveFiles(move));
            rocks.ingestExternalFile(theirFiles, ingest);
            ingestions++;
        }

        void openIterator() {
            int sn = pickSnapshot();
            boolean prefixMode = rnd.nextInt(3) == 0;
            byte[] lower = rnd.nextInt(4) == 0 ? bound() : null;
            byte[] upper = rnd.nextInt(4) == 0 ? bound() : null;
            ReadOptions o = ourRead(sn).prefixSameAsStart(prefixMode);
            List<AutoCloseable> resources = new ArrayList<>();
            org.rocksdb.ReadOptions total = rocksRead(sn);
            org.rocksdb.ReadOptions prefix =
                    rocksRead(sn).setTotalOrderSeek(false).setPrefixSameAsStart(true);
            resources.add(total);
            resources.add(prefix);
            if (lower != null) {
                o.iterateLowerBound(lower);
                Slice sl = new Slice(lower);
                resources.add(sl);
                total.setIterateLowerBound(sl);
                prefix.setIterateLowerBound(sl);
            }
            if (upper != null) {
                o.iterateUpperBound(upper);
                Slice sl = new Slice(upper);
                resources.add(sl);
                total.setIterateUpperBound(sl);
                prefix.setIterateUpperBound(sl);
            }
            String what =
                    "iterator at " + sn + " in [" + s(lower) + ", " + s(upper) + ")" + (prefixMode ? " prefix" : "");
            log("open " + iterators.size() + ": " + what);
            iterators.add(new Pair(
                    db.iterator(o),
                    rocks.newIterator(total),
                    prefixMode ? rocks.newIterator(prefix) : null,
                    resources,
                    prefixMode,
                    what));
        }

        /**
         * A positioning of a held iterator, then random moves either way; every position compared. A prefix-mode
         * iterator is compared with RocksDB's total-order iterator confined to the target's prefix (what
         * prefix_same_as_start promises: RocksDB's own prefix-mode iterator is not always consistent after a change of
         * direction; such answers are counted, not compared).
         */
        void useIterator(String where) throws RocksDBException {
            if (iterators.isEmpty()) {
                openIterator();
            }
            int i = rnd.nextInt(iterators.size());
            Pair p = iterators.get(i);
            int how = p.prefixMode ? rnd.nextInt(2) : rnd.nextInt(4);
            byte[] target = p.prefixMode ? prefixTarget() : bound();
            byte[] prefix = p.prefixMode ? Arrays.copyOf(target, PREFIX) : null;
            if (p.prefixMode) {
                prefixSeeks++;
            }
            StringBuilder moves = new StringBuilder();
            for (int m = 0, n = rnd.nextInt(rnd.nextInt(6) == 0 ? 200 : 12); m < n; m++) {
                moves.append(rnd.nextInt(4) == 0 ? '<' : '>');
            }
            String desc = "use " + i + " (" + p.what + "): "
                    + new String[] {"seek", "seekForPrev", "seekToFirst", "seekToLast"}[how]
                    + (how < 2 ? " " + s(target) : "") + " " + moves;
            log(desc);
            List<String> mine = new ArrayList<>();
            List<String> theirs = new ArrayList<>();
            switch (how) {
                case 0 -> {
                    p.ours.seek(target);
                    p.theirs.seek(target);
                }
                case 1 -> {
                    p.ours.seekForPrev(target);
                    p.theirs.seekForPrev(target);
                }
                case 2 -> {
                    p.ours.seekToFirst();
                    p.theirs.seekToFirst();
                }
                default -> {
                    p.ours.seekToLast();
                    p.theirs.seekToLast();
                }
            }
            mine.add(at(p.ours));
            theirs.add(atIn(p.theirs, prefix));
            for (int m = 0; m < moves.length() && p.ours.valid() && inPrefix(p.theirs, prefix); m++) {
                if (moves.charAt(m) == '<') {
                    p.ours.prev();
                    p.theirs.prev();
                } else {
                    p.ours.next();
                    p.theirs.next();
                }
                mine.add(at(p.ours));
                theirs.add(atIn(p.theirs, prefix));
            }
            p.theirs.status();
            assertThat(mine).as(where + " " + desc).isEqualTo(theirs);
            if (p.prefixMode) {
                List<String> rocksPrefix = new ArrayList<>();
                if (how == 0) {
                    p.theirsPrefix.seek(target);
                } else {
                    p.theirsPrefix.seekForPrev(target);
                }
                rocksPrefix.add(at(p.theirsPrefix));
                for (int m = 0; m < moves.length() && p.theirsPrefix.isValid(); m++) {
                    if (moves.charAt(m) == '<') {
                        p.theirsPrefix.prev();
                    } else {
                        p.theirsPrefix.next();
                    }
                    rocksPrefix.add(at(p.theirsPrefix));
                }
                if (!rocksPrefix.equals(theirs.subList(0, Math.min(theirs.size(), rocksPrefix.size())))
                        || rocksPrefix.size() < theirs.size()) {
                    if (rocksPrefixInconsistent++ == 0) {
                        System.out.println("RocksMixedHistoryDifferentialTest." + name + " " + where + " " + desc
                                + ": RocksDB's prefix-mode iterator " + rocksPrefix + ", its total-order iterator "
                                + "confined to the prefix " + theirs + ", bloomkv " + mine);
                    }
                }
            }
        }

        /** RocksDB's iterator is on a key of {@code prefix} (any key when null). */
        boolean inPrefix(RocksIterator it, byte[] prefix) {
            return it.isValid() && (prefix == null || startsWith(it.key(), prefix));
        }

        String atIn(RocksIterator it, byte[] prefix) {
            return inPrefix(it, prefix) ? at(it) : "end";
        }

        void closeIterators() throws Exception {
            for (Pair p : iterators) {
                p.close();
            }
            iterators.clear();
        }

        void releaseSnapshots() {
            for (Snapshot sn : snaps) {
                sn.close();
            }
            for (org.rocksdb.Snapshot sn : rsnaps) {
                rocks.releaseSnapshot(sn);
            }
            snaps.clear();
            rsnaps.clear();
        }

        int pickSnapshot() {
            return snaps.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(snaps.size());
        }

        ReadOptions ourRead(int sn) {
            return ReadOptions.defaults().snapshot(sn < 0 ? null : snaps.get(sn));
        }

        org.rocksdb.ReadOptions rocksRead(int sn) {
            org.rocksdb.ReadOptions rro = new org.rocksdb.ReadOptions().setTotalOrderSeek(true);
            if (sn >= 0) {
                rro.setSnapshot(rsnaps.get(sn));
            }
            return rro;
        }

        void compareScan(String where, byte[] lower, byte[] upper, boolean reverse, int sn, int limit)
                throws RocksDBException {
            compareScan(where, lower, upper, reverse, sn, limit, 0);
        }

        /** how: 0 from the first (last) key, else from a seek (seekForPrev) to a random target. */
        void compareScan(String where, byte[] lower, byte[] upper, boolean reverse, int sn, int limit, int how)
                throws RocksDBException {
            byte[] start = how == 0 ? null : bound();
            String desc = "scan " + (reverse ? "back" : "fwd") + " from " + s(start) + " in [" + s(lower) + ", "
                    + s(upper) + ") at " + sn + " limit " + limit;
            log(desc);
            ReadOptions o = ourRead(sn);
            List<AbstractSlice<?>> slices = new ArrayList<>();
            try (org.rocksdb.ReadOptions rro = rocksRead(sn)) {
                if (lower != null) {
                    o.iterateLowerBound(lower);
                    Slice sl = new Slice(lower);
                    slices.add(sl);
                    rro.setIterateLowerBound(sl);
                }
                if (upper != null) {
                    o.iterateUpperBound(upper);
                    Slice sl = new Slice(upper);
                    slices.add(sl);
                    rro.setIterateUpperBound(sl);
                }
                List<String> mine = new ArrayList<>();
                List<String> theirs = new ArrayList<>();
                try (DbIterator it = db.iterator(o);
                        RocksIterator rit = rocks.newIterator(rro)) {
                    if (start == null) {
                        if (reverse) {
                            it.seekToLast();
                            rit.seekToLast();
                        } else {
                            it.seekToFirst();
                            rit.seekToFirst();
                        }
                    } else if (reverse) {
                        it.seekForPrev(start);
                        rit.seekForPrev(start);
                    } else {
                        it.seek(start);
                        rit.seek(start);
                    }
                    walk(it, reverse, limit, mine);
                    walk(rit, reverse, limit, theirs);
                    rit.status();
                }
                assertThat(mine).as(where + " " + desc).isEqualTo(theirs);
            } finally {
                for (AbstractSlice<?> sl : slices) {
                    sl.close();
                }
            }
        }

        void walk(DbIterator it, boolean reverse, int limit, List<String> out) {
            walk(it::valid, it::next, it::prev, () -> at(it), reverse, limit, out);
        }

        void walk(RocksIterator it, boolean reverse, int limit, List<String> out) {
            walk(it::isValid, it::next, it::prev, () -> at(it), reverse, limit, out);
        }

        /** Up to {@code limit} positions one way, then one step back the other way ("turn:"), as both engines run it. */
        private static void walk(
                BooleanSupplier valid,
                Runnable next,
                Runnable prev,
                Supplier<String> at,
                boolean reverse,
                int limit,
                List<String> out) {
            Runnable forth = reverse ? prev : next;
            Runnable back = reverse ? next : prev;
            for (; valid.getAsBoolean() && out.size() < limit; ) {
                out.add(at.get());
                forth.run();
            }
            if (valid.getAsBoolean() && out.size() > 1) {
                back.run();
                out.add("turn:" + at.get());
            }
        }

        /**
         * A key of the main space ('k', a group byte, 0 to 2 more bytes), now and then the one-byte key "k" (shorter
         * than the prefix) or a key of a range an ingestion wrote.
         */
        byte[] key() {
            if (rnd.nextInt(80) == 0) {
                return new byte[] {'k'};
            }
            if (rnd.nextInt(20) == 0) {
                return xKey(rnd.nextInt(freshRegions + 1));
            }
            int id = rnd.nextInt(280);
            byte[] k = new byte[2 + (id / GROUPS.length) % 3];
            k[0] = 'k';
            k[1] = GROUPS[id % GROUPS.length];
            for (int i = 2; i < k.length; i++) {
                k[i] = (byte) (id * 31 * i + (id >> 3));
            }
            return k;
        }

        /** A key of the ingested range c: 'x', c, one or two bytes. */
        byte[] xKey(int c) {
            byte[] k = new byte[3 + rnd.nextInt(2)];
            k[0] = 'x';
            k[1] = (byte) c;
            for (int i = 2; i < k.length; i++) {
                k[i] = (byte) (rnd.nextInt(6) * 40);
            }
            return k;
        }

        /** A bound or a seek target: a key, a two-byte prefix (maybe one no key has), or a prefix with 0xff after it. */
        byte[] bound() {
            return switch (rnd.nextInt(5)) {
                case 0 -> new byte[] {'k', GROUPS[rnd.nextInt(GROUPS.length)]};
                case 1 -> new byte[] {'k', 0x42};
                case 2 ->
                    new byte[] {rnd.nextBoolean() ? (byte) 'k' : (byte) 'x', (byte) rnd.nextInt(256), (byte) 0xff};
                default -> key();
            };
        }

        /** A prefix seek's target: at least the prefix length. */
        byte[] prefixTarget() {
            byte[] t = bound();
            while (t.length < PREFIX) {
                t = bound();
            }
            return t;
        }

        /** [begin, end) with begin < end: mostly one key, sometimes a whole prefix, sometimes any two keys. */
        byte[][] range() {
            byte[] a = key();
            byte[] b;
            switch (rnd.nextInt(6)) {
                case 0 -> {
                    a = Arrays.copyOf(a, PREFIX);
                    b = a.clone();
                    b[1]++;
                    if (b[1] == 0) {
                        b = new byte[] {(byte) (a[0] + 1)};
                    }
                }
                case 1 -> b = key();
                default -> b = Arrays.copyOf(a, a.length + 1);
            }
            int c = Arrays.compareUnsigned(a, b);
            if (c == 0) {
                b = Arrays.copyOf(a, a.length + 1);
            } else if (c > 0) {
                byte[] t = a;
                a = b;
                b = t;
            }
            return new byte[][] {a, b};
        }

        byte[] value() {
            if (counters && rnd.nextInt(10) != 0) {
                return MergeOperators.encodeUint64(rnd.nextInt(1000));
            }
            return TestKeys.value(rnd, 12);
        }

        byte[] operand() {
            if (counters) {
                return rnd.nextInt(20) == 0
                        ? TestKeys.value(rnd, 4)
                        : MergeOperators.encodeUint64(rnd.nextInt(1 << 20));
            }
            return TestKeys.value(rnd, 6);
        }
    }

    private static boolean startsWith(byte[] key, byte[] prefix) {
        return key.length >= prefix.length && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }

    private static String at(DbIterator it) {
        return it.valid() ? s(it.key()) + "=" + s(it.value()) : "end";
    }

    private static String at(RocksIterator it) {
        return it.isValid() ? s(it.key()) + "=" + s(it.value()) : "end";
    }

    /** Bytes separated by dots, 'k' and 'x' as letters, the others in hex; null as "null". */
    private static String s(byte[] b) {
        if (b == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder(3 * b.length);
        for (int i = 0; i < b.length; i++) {
            sb.append(i == 0 ? "" : ".");
            if (b[i] == 'k' || b[i] == 'x') {
                sb.append((char) b[i]);
            } else {
                sb.append(String.format("%02x", b[i] & 0xff));
            }
        }
        return sb.toString();
    }
}
