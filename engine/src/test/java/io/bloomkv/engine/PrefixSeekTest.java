package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * Prefix filters (Options.prefixLength) and prefix seeks (ReadOptions.prefixSameAsStart) against RocksDB (rocksdbjni,
 * a fixed-length prefix extractor and prefix_same_as_start) as the oracle: a prefix seek yields exactly RocksDB's keys
 * and values from the target on that share the target's prefix; tables without the prefix are skipped without a block
 * read; tables written with another prefix length fail open. Replay with -Dbloomkv.seed=N.
 */
class PrefixSeekTest {
    static {
        RocksDB.loadLibrary();
    }

    static final int PREFIX = 5;

    @TempDir
    Path dir;

    /** Keys "pNNN:" + suffix: prefix NNN is used only when NNN is even, so odd prefixes are absent. */
    private static String key(Random rnd) {
        int p = 2 * rnd.nextInt(150);
        return String.format("p%03d:%s", p, Integer.toString(rnd.nextInt(3000), 36));
    }

    private static Options options(int prefixLength) {
        return Options.defaults()
                .writeBufferSize(16 << 10)
                .blockSize(512)
                .targetFileSize(16 << 10)
                .maxBytesForLevelBase(64 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(3)
                .blockCacheSize(0)
                .prefixLength(prefixLength);
    }

    private static List<String> prefixScan(Db db, String target, ReadOptions ro) {
        List<String> out = new ArrayList<>();
        try (DbIterator it = db.iterator(ro)) {
            for (it.seek(TestKeys.bytes(target)); it.valid(); it.next()) {
                out.add(TestKeys.str(it.key()));
            }
        }
        return out;
    }

    /** Random puts and deletes (odd prefixes never written). */
    private static void load(Db db, Random rnd, int ops) {
        for (int i = 0; i < ops; i++) {
            byte[] k = TestKeys.bytes(key(rnd));
            if (rnd.nextInt(10) == 0) {
                db.delete(k);
            } else {
                db.put(k, TestKeys.value(rnd, 60));
            }
        }
    }

    /** A RocksDB with the same prefix length: a fixed-length prefix extractor, prefix Bloom filters in its tables. */
    private static RocksDB openRocks(Path path, int prefixLength, org.rocksdb.Options ro, BloomFilter bloom)
            throws RocksDBException {
        ro.setCreateIfMissing(true)
                .setWriteBufferSize(64 << 10)
                .setMemtablePrefixBloomSizeRatio(0.1)
                .setTableFormatConfig(
                        new BlockBasedTableConfig().setFilterPolicy(bloom).setWholeKeyFiltering(true));
        if (prefixLength > 0) {
            ro.useFixedLengthPrefixExtractor(prefixLength);
        }
        return RocksDB.open(ro, path.toString());
    }

    /** The same random puts and deletes on both databases. */
    private static void load(Db db, RocksDB rocks, Random rnd, int ops) throws RocksDBException {
        for (int i = 0; i < ops; i++) {
            byte[] k = TestKeys.bytes(key(rnd));
            if (rnd.nextInt(10) == 0) {
                db.delete(k);
                rocks.delete(k);
            } else {
                byte[] v = TestKeys.value(rnd, 60);
                db.put(k, v);
                rocks.put(k, v);
            }
        }
    }

    private static String entry(byte[] k, byte[] v) {
        return TestKeys.str(k) + "=" + Arrays.toString(v);
    }

    /** Keys and values from {@code it}'s position on. */
    private static List<String> rest(DbIterator it) {
        List<String> out = new ArrayList<>();
        for (; it.valid(); it.next()) {
            out.add(entry(it.key(), it.value()));
        }
        return out;
    }

    private static List<String> rest(RocksIterator it) throws RocksDBException {
        List<String> out = new ArrayList<>();
        for (; it.isValid(); it.next()) {
            out.add(entry(it.key(), it.value()));
        }
        it.status();
        return out;
    }

    private static List<String> scan(Db db, String target, ReadOptions ro) {
        try (DbIterator it = db.iterator(ro)) {
            it.seek(TestKeys.bytes(target));
            return rest(it);
        }
    }

    private static List<String> scan(RocksDB rocks, String target, org.rocksdb.ReadOptions ro) throws RocksDBException {
        try (RocksIterator it = rocks.newIterator(ro)) {
            it.seek(TestKeys.bytes(target));
            return rest(it);
        }
    }

    /**
     * The same seeded puts, deletes, flushes and seeks on bloomkv and on RocksDB (rocksdbjni) with the same prefix
     * length; every prefix seek, plain seek and full scan yields the same keys and values. Where bloomkv's documented
     * semantics (ReadOptions.prefixSameAsStart) differ from RocksDB's prefix_same_as_start, the oracle is RocksDB in
     * total order (total_order_seek), which is what bloomkv promises there:
     * <ul>
     *   <li>a seek target shorter than the prefix: bloomkv iterates over everything from the target on; RocksDB sets
     *       no prefix for a target outside the extractor's domain but keeps its prefix-mode inner iterators, whose
     *       order past the prefix is unspecified;
     *   <li>an iterator without the option: always total order in bloomkv; RocksDB's default under a prefix
     *       extractor is prefix mode (total_order_seek false).
     * </ul>
     */
    @Test
    void prefixSeeksMatchRocksDb() throws Exception {
        long seed = TestKeys.seed("PrefixSeekTest.model");
        Random rnd = new Random(seed);
        ReadOptions prefixOnly = ReadOptions.defaults().prefixSameAsStart(true);
        try (BloomFilter bloom = new BloomFilter(10);
                org.rocksdb.Options rocksOptions = new org.rocksdb.Options();
                RocksDB rocks = openRocks(dir.resolve("rocks"), PREFIX, rocksOptions, bloom);
                org.rocksdb.ReadOptions rocksPrefix = new org.rocksdb.ReadOptions().setPrefixSameAsStart(true);
                org.rocksdb.ReadOptions rocksTotal = new org.rocksdb.ReadOptions().setTotalOrderSeek(true);
                org.rocksdb.FlushOptions flush = new org.rocksdb.FlushOptions().setWaitForFlush(true);
                Db db = Db.open(dir.resolve("bloomkv"), options(PREFIX))) {
            int nonEmpty = 0;
            int empty = 0;
            for (int round = 0; round < 6; round++) {
                load(db, rocks, rnd, 2500);
                if (round % 2 == 0) {
                    db.flush();
                    rocks.flush(flush);
                }
                db.waitForBackgroundWork();
                for (int q = 0; q < 200; q++) {
                    int p = rnd.nextInt(300);
                    String target = switch (rnd.nextInt(4)) {
                        case 0 -> String.format("p%03d:", p);
                        case 1 -> String.format("p%03d:%s", p, Integer.toString(rnd.nextInt(3000), 36));
                        case 2 -> String.format("p%03d", p).substring(0, 1 + rnd.nextInt(3)); // shorter than the prefix
                        default -> String.format("p%03d:zzzz", p); // past the prefix's keys
                    };
                    String ctx = "seed " + seed + " round " + round + " target " + target;
                    List<String> expected = scan(rocks, target, target.length() >= PREFIX ? rocksPrefix : rocksTotal);
                    assertThat(scan(db, target, prefixOnly)).as(ctx).isEqualTo(expected);
                    if (expected.isEmpty()) {
                        empty++;
                    } else {
                        nonEmpty++;
                    }
                }
                // the plain iterator is unaffected
                String target = String.format("p%03d:", rnd.nextInt(300));
                assertThat(scan(db, target, ReadOptions.defaults()))
                        .as("seed %d round %d plain seek %s", seed, round, target)
                        .isEqualTo(scan(rocks, target, rocksTotal));
            }
            assertThat(nonEmpty)
                    .as("seed %d: prefix seeks that found keys", seed)
                    .isPositive();
            assertThat(empty).as("seed %d: prefix seeks that found none", seed).isPositive();
            // one iterator, many seeks, moving in and out of prefix mode
            try (DbIterator it = db.iterator(prefixOnly);
                    RocksIterator rit = rocks.newIterator(rocksPrefix)) {
                for (int q = 0; q < 100; q++) {
                    String target = String.format("p%03d:", rnd.nextInt(300));
                    it.seek(TestKeys.bytes(target));
                    rit.seek(TestKeys.bytes(target));
                    assertThat(rest(it)).as("seed %d target %s", seed, target).isEqualTo(rest(rit));
                }
                it.seekToFirst();
                rit.seekToFirst();
                assertThat(rest(it))
                        .as("seed %d: seekToFirst walks the first key's prefix", seed)
                        .isEqualTo(rest(rit))
                        .isNotEmpty();
            }
            for (TableInfo t : db.tables()) {
                try (TableReader r = TableReader.open(
                        io.bloomkv.engine.fs.FileSystem.disk(), t.path(), t.fileNumber(), null, null)) {
                    assertThat(r.properties().prefixLength()).isEqualTo(PREFIX);
                    assertThat(r.properties().filterPrefixes()).isPositive();
                }
            }
        }
    }

    @Test
    void absentPrefixesReadNoBlocks() {
        long seed = TestKeys.seed("PrefixSeekTest.absent");
        Random rnd = new Random(seed);
        try (Db db = Db.open(dir, options(PREFIX))) {
            load(db, rnd, 15_000);
            db.flush();
            db.waitForBackgroundWork();
            assertThat(db.tables().size()).isGreaterThan(3);
            Stats before = db.stats();
            int seeks = 0;
            for (int p = 1; p < 300; p += 2) {
                assertThat(prefixScan(
                                db,
                                String.format("p%03d:", p),
                                ReadOptions.defaults().prefixSameAsStart(true)))
                        .isEmpty();
                seeks++;
            }
            long reads = db.stats().blockReads() - before.blockReads();
            System.out.printf(
                    "absent-prefix seeks: %d seeks, %d block reads (%d tables)%n",
                    seeks, reads, db.tables().size());
            // only filter false positives read (~1% per table holding the key range)
            assertThat((double) reads / seeks).as("seed %d", seed).isLessThanOrEqualTo(0.25);
            long checks = db.stats().filterChecks() - before.filterChecks();
            long useful = db.stats().filterUseful() - before.filterUseful();
            long positive = db.stats().filterPositive() - before.filterPositive();
            assertThat(checks)
                    .as("each seek probes the prefix filter of each table in its range")
                    .isGreaterThanOrEqualTo(seeks);
            assertThat(useful + positive).isEqualTo(checks);
            assertThat(useful).as("seed %d: the probes rule tables out", seed).isGreaterThan(checks * 9 / 10);

            Stats b2 = db.stats();
            for (int p = 1; p < 300; p += 2) {
                prefixScan(db, String.format("p%03d:", p), ReadOptions.defaults());
            }
            long plainReads = db.stats().blockReads() - b2.blockReads();
            assertThat(plainReads)
                    .as("without the prefix option every seek reads")
                    .isGreaterThanOrEqualTo(seeks);
        }
    }

    /**
     * Reopened with another prefix length (or none), a database whose tables were written with the old one still
     * answers prefix seeks exactly, as RocksDB does reopened with the same change of prefix extractor (its tables keep
     * the old extractor's filters; without an extractor prefix_same_as_start is ignored, as bloomkv's option is
     * without a prefix length).
     */
    @Test
    void tablesOfAnotherPrefixLengthFailOpen() throws Exception {
        long seed = TestKeys.seed("PrefixSeekTest.otherLength");
        Random rnd = new Random(seed);
        Path ours = dir.resolve("bloomkv");
        Path theirs = dir.resolve("rocks");
        try (BloomFilter bloom = new BloomFilter(10);
                org.rocksdb.Options rocksOptions = new org.rocksdb.Options();
                RocksDB rocks = openRocks(theirs, PREFIX, rocksOptions, bloom);
                org.rocksdb.FlushOptions flush = new org.rocksdb.FlushOptions().setWaitForFlush(true);
                Db db = Db.open(ours, options(PREFIX))) {
            load(db, rocks, rnd, 8000);
            db.flush();
            rocks.flush(flush);
        }
        int found = 0;
        for (int other : new int[] {3, 0, 2}) {
            try (BloomFilter bloom = new BloomFilter(10);
                    org.rocksdb.Options rocksOptions = new org.rocksdb.Options();
                    RocksDB rocks = openRocks(theirs, other, rocksOptions, bloom);
                    org.rocksdb.FlushOptions flush = new org.rocksdb.FlushOptions().setWaitForFlush(true);
                    org.rocksdb.ReadOptions rocksPrefix = new org.rocksdb.ReadOptions().setPrefixSameAsStart(true);
                    Db db = Db.open(ours, options(other).autoCompaction(false))) {
                load(db, rocks, rnd, 1500);
                db.flush();
                rocks.flush(flush);
                ReadOptions ro = ReadOptions.defaults().prefixSameAsStart(true);
                for (int q = 0; q < 150; q++) {
                    String target = String.format("p%03d:", rnd.nextInt(300));
                    List<String> expected = scan(rocks, target, rocksPrefix);
                    assertThat(scan(db, target, ro))
                            .as("seed %d length %d target %s", seed, other, target)
                            .isEqualTo(expected);
                    found += expected.isEmpty() ? 0 : 1;
                }
            }
        }
        assertThat(found).as("seed %d: seeks that found keys", seed).isPositive();
    }

    /** Keys and values from {@code it}'s position back. */
    private static List<String> restBack(DbIterator it) {
        List<String> out = new ArrayList<>();
        for (; it.valid(); it.prev()) {
            out.add(entry(it.key(), it.value()));
        }
        return out;
    }

    private static List<String> restBack(RocksIterator it) throws RocksDBException {
        List<String> out = new ArrayList<>();
        for (; it.isValid(); it.prev()) {
            out.add(entry(it.key(), it.value()));
        }
        it.status();
        return out;
    }

    /**
     * prefix_same_as_start holds in both directions and for every positioning, as in RocksDB: seekForPrev confines
     * to its target's prefix, seekToFirst and seekToLast to the prefix of the key they land on, and a walk that turns
     * around stays within it. RocksDB's prefix iterator is the oracle; targets are at least the prefix length long
     * (shorter ones are outside a fixed-length extractor's domain). Replay with -Dbloomkv.seed=N.
     */
    @Test
    void prefixSameAsStartHoldsInBothDirections() throws Exception {
        long seed = TestKeys.seed("PrefixSeekTest.reverse");
        Random rnd = new Random(seed);
        ReadOptions prefixOnly = ReadOptions.defaults().prefixSameAsStart(true);
        try (BloomFilter bloom = new BloomFilter(10);
                org.rocksdb.Options rocksOptions = new org.rocksdb.Options();
                RocksDB rocks = openRocks(dir.resolve("rocks"), PREFIX, rocksOptions, bloom);
                org.rocksdb.ReadOptions rocksPrefix = new org.rocksdb.ReadOptions().setPrefixSameAsStart(true);
                org.rocksdb.FlushOptions flush = new org.rocksdb.FlushOptions().setWaitForFlush(true);
                Db db = Db.open(dir.resolve("bloomkv"), options(PREFIX))) {
            int found = 0;
            int turned = 0;
            for (int round = 0; round < 4; round++) {
                load(db, rocks, rnd, 2500);
                if (round % 2 == 0) {
                    db.flush();
                    rocks.flush(flush);
                }
                db.waitForBackgroundWork();
                try (DbIterator it = db.iterator(prefixOnly);
                        RocksIterator rit = rocks.newIterator(rocksPrefix)) {
                    for (int q = 0; q < 150; q++) {
                        int p = rnd.nextInt(300);
                        int how = rnd.nextInt(4);
                        String target = switch (rnd.nextInt(3)) {
                            case 0 -> String.format("p%03d:", p);
                            case 1 -> String.format("p%03d:%s", p, Integer.toString(rnd.nextInt(3000), 36));
                            default -> String.format("p%03d:zzzz", p); // after the prefix's keys
                        };
                        String ctx = "seed " + seed + " round " + round + " query " + q + " "
                                + switch (how) {
                                    case 0 -> "seekForPrev " + target;
                                    case 1 -> "seekToLast";
                                    case 2 -> "seekToFirst";
                                    default -> "seekForPrev " + target + ", then turning";
                                };
                        switch (how) {
                            case 1 -> {
                                it.seekToLast();
                                rit.seekToLast();
                            }
                            case 2 -> {
                                it.seekToFirst();
                                rit.seekToFirst();
                            }
                            default -> {
                                it.seekForPrev(TestKeys.bytes(target));
                                rit.seekForPrev(TestKeys.bytes(target));
                            }
                        }
                        assertThat(it.valid()).as(ctx).isEqualTo(rit.isValid());
                        if (!it.valid()) {
                            continue;
                        }
                        found++;
                        if (how == 3) {
                            // a few steps back, then forward to the end of the prefix
                            for (int steps = rnd.nextInt(3); steps > 0 && it.valid(); steps--) {
                                it.prev();
                                rit.prev();
                                assertThat(it.valid()).as(ctx).isEqualTo(rit.isValid());
                            }
                            if (it.valid()) {
                                turned++;
                                assertThat(rest(it)).as(ctx).isEqualTo(rest(rit));
                            }
                        } else if (how == 2) {
                            assertThat(rest(it)).as(ctx).isEqualTo(rest(rit));
                        } else {
                            assertThat(restBack(it)).as(ctx).isEqualTo(restBack(rit));
                        }
                    }
                }
            }
            assertThat(found).as("seed %d: positionings that found a key", seed).isPositive();
            assertThat(turned).as("seed %d: walks that turned forward", seed).isPositive();
        }
    }

    /** The smallest history: keys of three prefixes, each positioning kept to one prefix (RocksDB's answers). */
    @Test
    void reversePositioningsStayInOnePrefix() {
        try (Db db = Db.open(dir, options(2).autoCompaction(false))) {
            for (String k : List.of("aa1", "bb2", "dd1")) {
                db.put(TestKeys.bytes(k), TestKeys.bytes("v"));
            }
            db.flush(); // one table, and two keys in the memtable
            for (String k : List.of("aa2", "bb1")) {
                db.put(TestKeys.bytes(k), TestKeys.bytes("v"));
            }
            try (DbIterator it = db.iterator(ReadOptions.defaults().prefixSameAsStart(true))) {
                it.seekForPrev(TestKeys.bytes("cc1"));
                assertThat(it.valid()).as("no key with prefix cc").isFalse();
                it.seekForPrev(TestKeys.bytes("bb3"));
                assertThat(restBackKeys(it)).containsExactly("bb2", "bb1");
                it.seekToLast();
                assertThat(restBackKeys(it)).containsExactly("dd1");
                it.seekToFirst();
                List<String> forward = new ArrayList<>();
                for (; it.valid(); it.next()) {
                    forward.add(TestKeys.str(it.key()));
                }
                assertThat(forward).containsExactly("aa1", "aa2");
            }
        }
    }

    /**
     * A target shorter than the prefix length confines nothing (ReadOptions.prefixSameAsStart), also when a
     * seekForPrev of it is at or past the upper bound and so lands on the last key below the bound: the walk back goes
     * on in key order past that key's prefix, as after the same seekForPrev below the bound, or without one.
     */
    @Test
    void shortSeekForPrevTargetPastTheUpperBoundConfinesNothing() {
        try (Db db = Db.open(dir, options(2).autoCompaction(false))) {
            for (String k : List.of("aa1", "aa2", "bb1", "bb2", "dd1")) {
                db.put(TestKeys.bytes(k), TestKeys.bytes("v"));
            }
            ReadOptions prefixMode = ReadOptions.defaults().prefixSameAsStart(true);
            try (DbIterator bounded = db.iterator(prefixMode.iterateUpperBound(TestKeys.bytes("c")));
                    DbIterator open = db.iterator(ReadOptions.defaults().prefixSameAsStart(true))) {
                for (String target : List.of("z", "c")) {
                    bounded.seekForPrev(TestKeys.bytes(target));
                    assertThat(restBackKeys(bounded))
                            .as("seekForPrev(%s) below c", target)
                            .containsExactly("bb2", "bb1", "aa2", "aa1");
                }
                bounded.seekForPrev(TestKeys.bytes("b"));
                assertThat(restBackKeys(bounded)).as("seekForPrev(b)").containsExactly("aa2", "aa1");
                open.seekForPrev(TestKeys.bytes("z"));
                assertThat(restBackKeys(open)).containsExactly("dd1", "bb2", "bb1", "aa2", "aa1");
                // seekToLast itself still confines to the prefix of the key it lands on.
                bounded.seekToLast();
                assertThat(restBackKeys(bounded)).containsExactly("bb2", "bb1");
            }
        }
    }

    private static List<String> restBackKeys(DbIterator it) {
        List<String> out = new ArrayList<>();
        for (; it.valid(); it.prev()) {
            out.add(TestKeys.str(it.key()));
        }
        return out;
    }

    @Test
    void prefixesShareTheFilterWithWholeKeys() {
        try (Db db = Db.open(dir, options(PREFIX).autoCompaction(false).writeBufferSize(4 << 20))) {
            for (int i = 0; i < 1000; i++) {
                db.put(TestKeys.bytes(String.format("p%03d:%04d", 2 * (i % 50), i)), TestKeys.bytes("v"));
            }
            db.put(TestKeys.bytes("abc"), TestKeys.bytes("short key: no prefix"));
            db.flush();
            assertThat(db.tables()).hasSize(1);
            TableInfo t = db.tables().get(0);
            assertThat(t.filterKeyCount()).as("1001 keys + 50 prefixes").isEqualTo(1051);
            assertThat(db.get(TestKeys.bytes("abc"))).isNotNull();
            assertThat(Arrays.equals(db.get(TestKeys.bytes("p002:0001")), TestKeys.bytes("v")))
                    .isTrue();
        }
    }
}
