package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.Version;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.Range;
import org.rocksdb.RocksDB;
import org.rocksdb.SizeApproximationFlag;
import org.rocksdb.Slice;

/**
 * {@link Db#approximateSizes}: the table part is monotonic in the range, additive over adjacent ranges within a block
 * per table a bound cuts, the whole key space gives the tables' file sizes, a range holding no key gives 0, the
 * memtable part is counted only when asked for and only while data is unflushed; compared with rocksdbjni's
 * {@code getApproximateSizes} on the same data (both uncompressed, 4 KiB blocks).
 */
@ExtendWith(NoTableLeak.class)
class ApproximateSizesTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private static final int BLOCK = 1024;
    private static final SizeApproximation FILES = SizeApproximation.INCLUDE_FILES;
    private static final SizeApproximation MEM = SizeApproximation.INCLUDE_MEMTABLES;

    private static Options options() {
        return Options.defaults()
                .compression(Compression.NONE)
                .bottommostCompression(Compression.NONE)
                .blockSize(BLOCK)
                .writeBufferSize(256 << 10)
                .targetFileSize(128 << 10);
    }

    private static KeyRange range(long from, long to) {
        return new KeyRange(TestKeys.key(from), TestKeys.key(to));
    }

    private static long size(Db db, KeyRange r, SizeApproximation... flags) {
        return db.approximateSizes(List.of(r), flags)[0];
    }

    /** A key past every stored one: longer than MAX_KEY_SIZE, all 0xFF, so the range is open above. */
    private static byte[] pastEveryKey() {
        byte[] k = new byte[Db.MAX_KEY_SIZE + 1];
        Arrays.fill(k, (byte) 0xFF);
        return k;
    }

    private static Db loaded(Path dir, int keys, Random rnd) {
        Db db = Db.open(dir, options());
        for (int i = 0; i < keys; i++) {
            db.put(TestKeys.key(i), TestKeys.value(rnd, 200));
        }
        db.flush();
        db.waitForBackgroundWork();
        return db;
    }

    @Test
    void tableBytesAreMonotonicAdditiveAndSumToTheFiles() {
        long seed = TestSeeds.seed("ApproximateSizesTest.tableBytesAreMonotonicAdditiveAndSumToTheFiles");
        Random rnd = new Random(seed);
        int n = 30_000;
        try (Db db = loaded(dir, n, rnd)) {
            List<TableInfo> tables = db.tables();
            assertThat(tables.size()).as("several tables").isGreaterThan(5);
            long fileBytes = tables.stream().mapToLong(TableInfo::fileSize).sum();
            long all = size(db, new KeyRange(new byte[0], pastEveryKey()));
            assertThat(Math.abs(all - fileBytes))
                    .as("the whole key space is the tables' bytes (rounding only)")
                    .isLessThanOrEqualTo(tables.size());
            assertThat(size(db, new KeyRange(new byte[0], pastEveryKey()), FILES))
                    .isEqualTo(all);

            for (int round = 0; round < 300; round++) {
                long a = rnd.nextInt(n + 10);
                long c = a + rnd.nextInt(n / 2);
                long b = a + (c == a ? 0 : rnd.nextInt((int) (c - a + 1)));
                long inner0 = a + (c == a ? 0 : rnd.nextInt((int) (c - a + 1)));
                long inner1 = inner0 + (c == inner0 ? 0 : rnd.nextInt((int) (c - inner0 + 1)));
                long[] s = db.approximateSizes(List.of(range(a, c), range(a, b), range(b, c), range(inner0, inner1)));
                String ctx = "seed " + seed + " (-Dbloomkv.seed=" + seed + ") a=" + a + " b=" + b + " c=" + c;
                assertThat(s[3])
                        .as(ctx + ": a range inside another is not larger")
                        .isLessThanOrEqualTo(s[0]);
                assertThat(s[1]).as(ctx).isLessThanOrEqualTo(s[0]);
                assertThat(s[2]).as(ctx).isLessThanOrEqualTo(s[0]);
                // Tables the middle bound falls in: each may count its block at b once on each side.
                long cut = tables.stream()
                        .filter(t -> Arrays.compareUnsigned(t.smallestUserKey(), TestKeys.key(b)) <= 0
                                && Arrays.compareUnsigned(t.largestUserKey(), TestKeys.key(b)) >= 0)
                        .count();
                assertThat(Math.abs(s[1] + s[2] - s[0]))
                        .as(ctx + ": adjacent ranges sum to their union")
                        .isLessThanOrEqualTo(cut * (2L * BLOCK) + tables.size());
                long held = Math.min(c, n) - Math.min(a, n); // keys of the range the database holds
                if (held >= 2000) {
                    // About 100 bytes of value a key (and its key, trailer and block overhead): not 0, not the whole.
                    assertThat(s[0]).as(ctx).isBetween(held * 50, Math.min(fileBytes, held * 400));
                }
            }
            assertThat(size(db, range(n + 5, n + 100))).as("past every key").isZero();
            assertThat(size(db, new KeyRange(TestKeys.bytes("a"), TestKeys.bytes("b"))))
                    .as("before every key")
                    .isZero();
            assertThat(size(db, range(500, 500))).as("empty range").isZero();
            assertThat(size(db, range(900, 100))).as("start after limit").isZero();
            assertThat(size(db, new KeyRange(TestKeys.key(100), new byte[0])))
                    .as("empty limit")
                    .isZero();
            assertThat(size(db, new KeyRange(TestKeys.key(100), TestKeys.key(101)), MEM))
                    .as("memtables only, all flushed")
                    .isZero();
        }
    }

    /**
     * The tables of level 1 and deeper that a range overlaps are found by binary searches: each level's answer is the
     * same as a walk of every table of the level (the computation before), over many ranges whose bounds are random
     * keys, the tables' smallest and largest keys, the keys just above and just below those (a table's bound falling
     * on, before or after a range's), and open ends.
     */
    @Test
    void eachLevelAnswersAsAWalkOfAllItsTables() {
        long seed = TestSeeds.seed("ApproximateSizesTest.eachLevelAnswersAsAWalkOfAllItsTables");
        Random rnd = new Random(seed);
        Options small = SmallLevels.options().compression(Compression.NONE).bottommostCompression(Compression.NONE);
        try (Db db = Db.open(dir, small)) {
            for (int i = 0; i < 8000; i++) {
                long k = rnd.nextInt(20_000);
                if (rnd.nextInt(10) == 0) {
                    db.delete(TestKeys.key(k));
                } else {
                    db.put(TestKeys.key(k), TestKeys.value(rnd, 60));
                }
            }
            db.flush();
            db.waitForBackgroundWork();
            for (int i = 0; i < 50; i++) {
                db.put(TestKeys.key(rnd.nextInt(20_000)), TestKeys.value(rnd, 60)); // in level 0 or the memtable
            }
            db.flush();
            db.withCurrentVersionForTests(v -> {
                List<byte[]> bounds = new ArrayList<>();
                int deepTables = 0;
                for (int level = 0; level < v.numLevels(); level++) {
                    for (FileMetaData f : v.files(level)) {
                        for (byte[] k : List.of(f.smallestUserKey(), f.largestUserKey())) {
                            bounds.add(k);
                            bounds.add(Arrays.copyOf(k, k.length + 1)); // just above k
                            bounds.add(Arrays.copyOf(k, k.length - 1)); // below k, above every key below it
                        }
                    }
                    if (level > 0) {
                        deepTables = Math.max(deepTables, v.numFiles(level));
                    }
                }
                assertThat(deepTables).as("a level below 0 with many tables").isGreaterThanOrEqualTo(8);
                for (int round = 0; round < 3000; round++) {
                    byte[] lo = bound(rnd, bounds);
                    byte[] hi = bound(rnd, bounds);
                    if (lo != null && hi != null && Arrays.compareUnsigned(lo, hi) > 0) {
                        byte[] t = lo;
                        lo = hi;
                        hi = t;
                    }
                    for (int level = 0; level < v.numLevels(); level++) {
                        assertThat(Db.approximateLevelBytes(v, level, lo, hi))
                                .as(
                                        "seed %d (-Dbloomkv.seed=%d) round %d level %d [%s, %s)",
                                        seed, seed, round, level, hex(lo), hex(hi))
                                .isEqualTo(walkOfEveryTable(v, level, lo, hi));
                    }
                }
                return null;
            });
        }
    }

    /** A range bound: open (null), a random key, or one of {@code bounds}. */
    private static byte[] bound(Random rnd, List<byte[]> bounds) {
        int pick = rnd.nextInt(10);
        if (pick == 0) {
            return null;
        }
        return pick < 3 ? TestKeys.key(rnd.nextInt(21_000)) : bounds.get(rnd.nextInt(bounds.size()));
    }

    private static String hex(byte[] k) {
        return k == null ? "open" : java.util.HexFormat.of().formatHex(k);
    }

    /** The reference: every table of the level checked against [lo, hi), as the computation was before. */
    private static long walkOfEveryTable(Version v, int level, byte[] lo, byte[] hi) {
        long total = 0;
        List<FileMetaData> files = v.files(level);
        for (int i = 0; i < files.size(); i++) {
            FileMetaData f = files.get(i);
            boolean below = lo != null && Arrays.compareUnsigned(f.largestUserKey(), lo) < 0;
            boolean above = hi != null && Arrays.compareUnsigned(f.smallestUserKey(), hi) >= 0;
            if (below || above) {
                continue;
            }
            boolean inside = (lo == null || Arrays.compareUnsigned(f.smallestUserKey(), lo) >= 0)
                    && (hi == null || Arrays.compareUnsigned(f.largestUserKey(), hi) < 0);
            total += inside ? f.fileSize() : v.reader(level, i).approximateSize(lo, hi);
        }
        return total;
    }

    @Test
    void boundsLongerThanMaxKeySizeAreReducedAsForIterators() {
        Random rnd =
                new Random(TestSeeds.seed("ApproximateSizesTest.boundsLongerThanMaxKeySizeAreReducedAsForIterators"));
        try (Db db = loaded(dir, 20_000, rnd)) {
            byte[] longStart = Arrays.copyOf(TestKeys.key(3000), Db.MAX_KEY_SIZE + 5); // above key 3000 itself
            byte[] longLimit = Arrays.copyOf(TestKeys.key(9000), Db.MAX_KEY_SIZE + 5); // key 9000 is below it
            long[] s = db.approximateSizes(List.of(
                    new KeyRange(longStart, longLimit),
                    new KeyRange(LongKeys.leastAbove(longStart), LongKeys.leastAbove(longLimit)),
                    new KeyRange(longStart, longStart)));
            assertThat(s[0]).isEqualTo(s[1]).isPositive();
            assertThat(s[2]).isZero();
        }
    }

    /** The memtable flag adds the unflushed data's estimate; it changes nothing once everything is flushed. */
    @Test
    void theMemtableFlagCountsOnlyUnflushedData() {
        Random rnd = new Random(TestSeeds.seed("ApproximateSizesTest.theMemtableFlagCountsOnlyUnflushedData"));
        try (Db db = Db.open(dir, options().writeBufferSize(64 << 20))) {
            for (int i = 0; i < 10_000; i++) {
                db.put(TestKeys.key(i), TestKeys.value(rnd, 200));
            }
            db.flush();
            db.waitForBackgroundWork();
            KeyRange flushed = range(1000, 5000);
            long files = size(db, flushed);
            assertThat(files).isPositive();
            assertThat(size(db, flushed, MEM, FILES)).as("nothing unflushed").isEqualTo(files);

            for (int i = 20_000; i < 30_000; i++) {
                db.put(TestKeys.key(i), TestKeys.value(rnd, 200));
            }
            KeyRange unflushed = range(20_000, 30_000);
            KeyRange half = range(22_000, 27_000);
            assertThat(size(db, flushed, MEM, FILES))
                    .as("no unflushed key in it")
                    .isEqualTo(files);
            assertThat(size(db, unflushed))
                    .as("files only: the memtable does not count")
                    .isZero();
            assertThat(size(db, unflushed, FILES)).isZero();
            long memBytes = db.stats().memtableBytes();
            assertThat(size(db, new KeyRange(new byte[0], pastEveryKey()), MEM))
                    .as("all of the memtable")
                    .isEqualTo(memBytes);
            long halfMem = size(db, half, MEM);
            System.out.println(
                    "ApproximateSizesTest: memtable " + memBytes + " bytes, half of its keys estimated at " + halfMem);
            assertThat(halfMem).as("half the keys: a sampled estimate").isBetween(memBytes / 4, memBytes);
            assertThat(size(db, half, MEM, FILES)).isEqualTo(halfMem);
            assertThat(size(db, range(30_000, 40_000), MEM))
                    .as("past the memtable's keys")
                    .isZero();
            db.flush();
            db.waitForBackgroundWork();
            long afterFlush = size(db, unflushed);
            assertThat(afterFlush).as("flushed: now in the files").isPositive();
            assertThat(size(db, unflushed, MEM, FILES)).isEqualTo(afterFlush);
        }
    }

    @Test
    void refusesNullsAndAClosedDatabase() {
        Db db = Db.open(dir, options());
        assertThatThrownBy(() -> db.approximateSizes(null)).isInstanceOf(InvalidArgumentException.class);
        List<KeyRange> withNull = new ArrayList<>();
        withNull.add(null);
        assertThatThrownBy(() -> db.approximateSizes(withNull)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> db.approximateSizes(List.of(range(1, 2)), (SizeApproximation) null))
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> new KeyRange(null, new byte[1])).isInstanceOf(InvalidArgumentException.class);
        assertThat(db.approximateSizes(List.of())).isEmpty();
        assertThat(db.approximateSizes(List.of(range(1, 2)), MEM, FILES)).containsExactly(0);
        db.close();
        assertThatThrownBy(() -> db.approximateSizes(List.of(range(1, 2)))).isInstanceOf(DbClosedException.class);
    }

    /**
     * The same keys and values in both stores, uncompressed, 4 KiB blocks: for ranges of a few thousand keys the two
     * answers are within a factor of two of each other (printed); a range with start after limit is 0 in both.
     */
    @Test
    void closeToRocksDbsGetApproximateSizes() throws Exception {
        long seed = TestSeeds.seed("ApproximateSizesTest.closeToRocksDbsGetApproximateSizes");
        Random rnd = new Random(seed);
        int n = 50_000;
        BlockBasedTableConfig table = new BlockBasedTableConfig().setBlockSize(4096);
        try (org.rocksdb.Options ro = new org.rocksdb.Options()
                        .setCreateIfMissing(true)
                        .setCompressionType(CompressionType.NO_COMPRESSION)
                        .setBottommostCompressionType(CompressionType.NO_COMPRESSION)
                        .setWriteBufferSize(64 << 20)
                        .setTableFormatConfig(table);
                FlushOptions flush = new FlushOptions().setWaitForFlush(true);
                RocksDB rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                Db db = Db.open(
                        dir.resolve("bloomkv"), options().blockSize(4096).writeBufferSize(64 << 20))) {
            for (int i = 0; i < n; i++) {
                byte[] v = TestKeys.value(rnd, 200);
                db.put(TestKeys.key(i), v);
                rocks.put(TestKeys.key(i), v);
            }
            db.flush();
            db.waitForBackgroundWork();
            rocks.flush(flush);
            for (int i = n; i < n + 10_000; i++) { // unflushed in both
                byte[] v = TestKeys.value(rnd, 200);
                db.put(TestKeys.key(i), v);
                rocks.put(TestKeys.key(i), v);
            }
            String ctx = "seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
            for (int round = 0; round < 8; round++) {
                long a = rnd.nextInt(n - 5000);
                long b = a + 2000 + rnd.nextInt(3000);
                long ours = size(db, range(a, b), FILES);
                long theirs = rocksSize(rocks, TestKeys.key(a), TestKeys.key(b), SizeApproximationFlag.INCLUDE_FILES);
                System.out.println("ApproximateSizesTest: keys [" + a + ", " + b + ") files: bloomkv " + ours
                        + ", RocksDB " + theirs);
                assertThat(ours)
                        .as(ctx + " [" + a + ", " + b + "): bloomkv against RocksDB " + theirs)
                        .isBetween(theirs / 2, theirs * 2);
            }
            long a = n + 2000;
            long b = n + 7000;
            long oursMem = size(db, range(a, b), MEM);
            long theirsMem =
                    rocksSize(rocks, TestKeys.key(a), TestKeys.key(b), SizeApproximationFlag.INCLUDE_MEMTABLES);
            System.out.println("ApproximateSizesTest: keys [" + a + ", " + b + ") memtables: bloomkv " + oursMem
                    + ", RocksDB " + theirsMem);
            assertThat(oursMem)
                    .as(ctx + ": memtables against RocksDB " + theirsMem)
                    .isBetween(theirsMem / 2, theirsMem * 2);

            // Probes: start after limit, and start == limit.
            long reversed =
                    rocksSize(rocks, TestKeys.key(9000), TestKeys.key(1000), SizeApproximationFlag.INCLUDE_FILES);
            long same = rocksSize(rocks, TestKeys.key(1000), TestKeys.key(1000), SizeApproximationFlag.INCLUDE_FILES);
            long noFlags = rocksSize(rocks, TestKeys.key(1000), TestKeys.key(9000));
            // rocksdbjni passes no flag on as both off, which RocksDB refuses without touching the answer: the
            // number it returns then is not an estimate (printed, not compared). bloomkv counts the files, as C++'s
            // default argument does.
            System.out.println("ApproximateSizesTest: RocksDB start > limit " + reversed + ", start == limit " + same
                    + ", no flags " + noFlags + " (bloomkv, no flags: " + size(db, range(1000, 9000)) + ")");
            assertThat(reversed).as("RocksDB: start after limit").isZero();
            assertThat(same).as("RocksDB: start == limit").isZero();
            assertThat(size(db, range(9000, 1000))).isZero();
            assertThat(size(db, range(1000, 1000))).isZero();
        }
    }

    private static long rocksSize(RocksDB rocks, byte[] start, byte[] limit, SizeApproximationFlag... flags)
            throws Exception {
        try (Slice s = new Slice(start);
                Slice l = new Slice(limit)) {
            return rocks.getApproximateSizes(List.of(new Range(s, l)), flags)[0];
        }
    }
}
