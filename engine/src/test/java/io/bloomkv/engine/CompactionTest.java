package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.version.LevelTargets;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Leveled compaction: shape of the levels, what merges drop, and readers that outlive their tables. */
class CompactionTest {
    @TempDir
    Path dir;

    private static Options tiny() {
        return Options.defaults()
                .writeBufferSize(8 << 10)
                .blockSize(512)
                .targetFileSize(8 << 10)
                .maxBytesForLevelBase(32 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .l0SlowdownWritesTrigger(4)
                .l0StopWritesTrigger(6);
    }

    private long tableFilesOnDisk() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".sst")).count();
        }
    }

    /**
     * A sequential load's level-0 tables do not overlap and nothing lies below their keys: they are moved down
     * together, never rewritten (RocksDB's level-0 trivial move), unless the filter depends on the level.
     */
    @Test
    void aSequentialLoadMovesLevel0TablesDownWithoutRewritingThem() {
        long seed = TestKeys.seed("CompactionTest.sequential");
        java.util.Random rnd = new java.util.Random(seed);
        for (FilterAllocation allocation : new FilterAllocation[] {FilterAllocation.UNIFORM, FilterAllocation.MONKEY}) {
            Path d = dir.resolve(allocation.name());
            List<byte[]> values = new java.util.ArrayList<>();
            // l0 triggers high enough that no write waits: the picker, not a stall, decides when level 0 moves
            Options o = tiny().filterAllocation(allocation)
                    .l0SlowdownWritesTrigger(100)
                    .l0StopWritesTrigger(200);
            try (Db db = Db.open(d, o)) {
                for (int i = 0; i < 3000; i++) {
                    byte[] v = TestKeys.value(rnd, 60);
                    values.add(v);
                    db.put(TestKeys.key(i), v);
                }
                db.flush();
                db.waitForBackgroundWork();
                Stats s = db.stats();
                int deeper = 0;
                for (int level = 1; level < s.numLevels(); level++) {
                    deeper += s.levelTables(level);
                }
                assertThat(deeper)
                        .as("seed %d %s: tables below level 0", seed, allocation)
                        .isPositive();
                assertThat(s.levelTables(0)).as("level 0 compacted").isLessThan(o.l0CompactionTrigger());
                if (allocation == FilterAllocation.UNIFORM) {
                    assertThat(s.compactionBytesWritten())
                            .as("seed %d: level-0 tables moved, nothing rewritten", seed)
                            .isZero();
                } else {
                    assertThat(s.compactionBytesWritten())
                            .as("seed %d: MONKEY gives each level its own filter bits: merged", seed)
                            .isPositive();
                }
                for (int i = 0; i < values.size(); i++) {
                    assertThat(db.get(TestKeys.key(i)))
                            .as("seed %d key %d", seed, i)
                            .isEqualTo(values.get(i));
                }
            }
        }
    }

    @Test
    void levelsStayWithinBoundsAndObsoleteFilesAreDeleted() throws IOException {
        levelsStayWithinBounds(tiny().dynamicLevelBytes(true));
    }

    @Test
    void staticLevelSizesStayWithinBounds() throws IOException {
        levelsStayWithinBounds(tiny().dynamicLevelBytes(false));
    }

    private void levelsStayWithinBounds(Options options) throws IOException {
        Random rnd = new Random(TestKeys.seed("CompactionTest.levels"));
        try (Db db = Db.open(dir, options)) {
            for (int i = 0; i < 20_000; i++) {
                db.put(TestKeys.key(rnd.nextInt(5000)), TestKeys.value(rnd, 80));
            }
            db.waitForBackgroundWork();
            Stats s = db.stats();
            System.out.println("CompactionTest: " + s);
            assertThat(s.compactions()).as("hundreds of compactions").isGreaterThan(100);
            assertThat(s.levelTables(0)).isLessThan(tiny().l0CompactionTrigger());
            long[] levelBytes = new long[s.numLevels()];
            for (int level = 0; level < s.numLevels(); level++) {
                levelBytes[level] = s.levelBytes(level);
            }
            LevelTargets targets = LevelTargets.compute(
                    levelBytes,
                    options.dynamicLevelBytes(),
                    options.maxBytesForLevelBase(),
                    options.levelSizeMultiplier());
            System.out.println("CompactionTest: " + targets);
            for (int level = 1; level < s.numLevels() - 1; level++) {
                assertThat(s.levelBytes(level)).as("level " + level).isLessThanOrEqualTo(targets.target(level));
                if (!options.dynamicLevelBytes()) {
                    assertThat(targets.target(level)).isEqualTo(options.maxBytesForLevel(level));
                }
            }
            for (int level = 1; level < targets.baseLevel(); level++) {
                assertThat(s.levelBytes(level))
                        .as("level " + level + " above the base level")
                        .isZero();
            }
            if (options.dynamicLevelBytes()) {
                // 20,000 puts of ~100 bytes over 5000 keys hold a few hundred KiB: fewer levels than configured.
                assertThat(targets.baseLevel())
                        .as("levels sized from the last level up")
                        .isGreaterThan(1);
                assertThat(s.levelBytes(s.numLevels() - 1))
                        .as("the last level holds the most")
                        .isPositive();
            }
            assertThat(s.writeAmplification()).isGreaterThan(1);
            assertThat(s.compactionBytesWritten()).isPositive();
            assertThat(s.compactionBytesRead()).isGreaterThanOrEqualTo(s.compactionBytesWritten());
            assertThat(tableFilesOnDisk()).as("no obsolete table left").isEqualTo(s.tableCount());
            long filterMemory = 0;
            for (int level = 0; level < s.numLevels(); level++) {
                filterMemory += s.levelFilterMemory(level);
            }
            assertThat(filterMemory).isEqualTo(s.filterMemoryBytes()).isPositive();
        }
    }

    @Test
    void compactRangeDropsOverwrittenValuesAndTombstones() throws IOException {
        try (Db db = Db.open(dir, tiny().autoCompaction(false))) {
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 1000; i++) {
                    db.put(TestKeys.key(i), TestKeys.bytes("r" + round + "-" + i));
                }
                db.flush();
            }
            for (int i = 0; i < 500; i++) {
                db.delete(TestKeys.key(i));
            }
            db.compactRange(null, null);
            Stats s = db.stats();
            assertThat(s.levelTables(0)).isZero();
            long entries = 0;
            for (int level = 0; level < s.numLevels(); level++) {
                entries += s.levelEntries(level);
            }
            assertThat(entries)
                    .as("only the newest value of each live key is left")
                    .isEqualTo(500);
            for (int i = 0; i < 1000; i++) {
                byte[] v = db.get(TestKeys.key(i));
                if (i < 500) {
                    assertThat(v).isNull();
                } else {
                    assertThat(TestKeys.str(v)).isEqualTo("r2-" + i);
                }
            }
            assertThat(tableFilesOnDisk()).isEqualTo(s.tableCount());
        }
    }

    @Test
    void iteratorsAndSnapshotsKeepTheirViewAcrossCompactions() throws IOException {
        try (Db db = Db.open(dir, tiny())) {
            for (int i = 0; i < 2000; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("old-" + i));
            }
            db.flush();
            Snapshot snap = db.getSnapshot();
            DbIterator it = db.iterator();
            it.seekToFirst();
            for (int i = 0; i < 2000; i++) {
                if (i % 3 == 0) {
                    db.delete(TestKeys.key(i));
                } else {
                    db.put(TestKeys.key(i), TestKeys.bytes("new-" + i));
                }
            }
            db.compactRange(null, null);
            db.waitForBackgroundWork();
            assertThat(db.stats().liveVersions())
                    .as("the iterator pins an old Version")
                    .isGreaterThan(1);
            int n = 0;
            for (; it.valid(); it.next()) {
                assertThat(TestKeys.str(it.value())).isEqualTo("old-" + n);
                n++;
            }
            assertThat(n).isEqualTo(2000);
            it.close();
            ReadOptions atSnap = ReadOptions.defaults().snapshot(snap);
            for (int i = 0; i < 2000; i += 7) {
                assertThat(TestKeys.str(db.get(TestKeys.key(i), atSnap))).isEqualTo("old-" + i);
                assertThat(TestKeys.str(db.get(TestKeys.key(i)))).isEqualTo(i % 3 == 0 ? null : "new-" + i);
            }
            long withSnapshot = totalEntries(db);
            snap.close();
            db.compactRange(null, null);
            db.waitForBackgroundWork();
            assertThat(totalEntries(db))
                    .as("old versions dropped once the snapshot is gone")
                    .isLessThan(withSnapshot);
            assertThat(totalEntries(db)).isEqualTo(2000 - 667);
            assertThat(db.stats().liveVersions()).isEqualTo(1);
            assertThat(tableFilesOnDisk()).isEqualTo(db.stats().tableCount());
        }
    }

    private static long totalEntries(Db db) {
        Stats s = db.stats();
        long n = 0;
        for (int level = 0; level < s.numLevels(); level++) {
            n += s.levelEntries(level);
        }
        return n;
    }

    @Test
    void monkeyGivesSmallerLevelsMoreBitsPerKey() {
        Options o = Options.defaults()
                .writeBufferSize(64 << 10)
                .targetFileSize(64 << 10)
                .maxBytesForLevelBase(256 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .filterAllocation(FilterAllocation.MONKEY);
        Random rnd = new Random(1);
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < 50_000; i++) {
                db.put(TestKeys.key(rnd.nextInt(40_000)), TestKeys.value(rnd, 50));
                if (i % 500 == 499) {
                    // Let flushes and compactions keep up, so the tree's history (and each table's bits, fixed
                    // when it is written) does not depend on how the threads happened to be scheduled.
                    db.waitForBackgroundWork();
                }
            }
            db.waitForBackgroundWork();
            Stats s = db.stats();
            System.out.println("CompactionTest.monkey: " + s);
            // The shallowest non-empty level below 0 (trivially moved tables keep the bits of the level
            // they were written for, so compare the first level, always written by merges, with the largest).
            int first = -1;
            int largest = -1;
            for (int level = 1; level < s.numLevels(); level++) {
                if (s.levelEntries(level) == 0) {
                    continue;
                }
                if (first < 0) {
                    first = level;
                }
                if (largest < 0 || s.levelEntries(level) > s.levelEntries(largest)) {
                    largest = level;
                }
            }
            assertThat(s.levelEntries(largest)).isGreaterThan(3 * s.levelEntries(first));
            assertThat(s.levelBitsPerKey(first))
                    .as("level L" + first + " vs largest L" + largest)
                    .isGreaterThan(s.levelBitsPerKey(largest) + 0.5);
        }
    }

    /** Filter bits over filter keys of the live tables, and the sum over the runs a get asks of their expected rates. */
    private static double[] filterBitsPerKeyAndSumOfRates(Db db) {
        double bits = 0;
        double keys = 0;
        java.util.Map<Integer, Double> levelRate = new java.util.TreeMap<>();
        java.util.Map<Integer, Double> levelKeys = new java.util.TreeMap<>();
        double sumOfRates = 0;
        int tables = 0;
        for (TableInfo t : db.tables()) {
            tables++;
            bits += t.filterBitSize();
            keys += t.filterKeyCount();
            if (t.level() == 0) {
                sumOfRates += t.filterExpectedFpp();
            } else {
                // A get asks one table per deeper level: the level's rate, weighted by its tables' keys.
                levelRate.merge(t.level(), t.filterExpectedFpp() * t.filterKeyCount(), Double::sum);
                levelKeys.merge(t.level(), (double) t.filterKeyCount(), Double::sum);
            }
        }
        for (int level : levelRate.keySet()) {
            sumOfRates += levelRate.get(level) / levelKeys.get(level);
        }
        // Each table's filter rounds up to whole 512-bit blocks: at most one block more than its keys' bits.
        return new double[] {bits / keys, sumOfRates, 512.0 * tables / keys};
    }

    private double[] loadAndMeasure(FilterAllocation allocation, boolean sequential, Path path) {
        Options o = Options.defaults()
                .writeBufferSize(64 << 10)
                .targetFileSize(64 << 10)
                .maxBytesForLevelBase(256 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(4)
                .filterAllocation(allocation);
        Random rnd = new Random(7);
        try (Db db = Db.open(path, o)) {
            for (int i = 0; i < 60_000; i++) {
                db.put(TestKeys.key(sequential ? i : rnd.nextInt(1_000_000)), TestKeys.value(rnd, 50));
                if (i % 500 == 499) {
                    db.waitForBackgroundWork();
                }
            }
            db.waitForBackgroundWork();
            return filterBitsPerKeyAndSumOfRates(db);
        }
    }

    @Test
    void monkeySpendsTheUniformBudgetAndLowersTheSumOfRates() {
        for (boolean sequential : new boolean[] {false, true}) {
            String load = sequential ? "sequential" : "random";
            double[] uniform = loadAndMeasure(FilterAllocation.UNIFORM, sequential, dir.resolve(load + "-uniform"));
            double[] monkey = loadAndMeasure(FilterAllocation.MONKEY, sequential, dir.resolve(load + "-monkey"));
            System.out.printf(
                    "CompactionTest.monkey %s load: bits/key %.2f uniform (rounding allows %.2f), %.2f monkey; sum of rates %.4f,"
                            + " %.4f%n",
                    load, uniform[0], uniform[2], monkey[0], uniform[1], monkey[1]);
            // Small filters round up to whole 512-bit blocks, so the uniform tree spends a little over 10 bits per key:
            // at most one block per table more (how many tables a load leaves depends on the memtable's bytes per key).
            assertThat(uniform[0]).as(load).isBetween(10.0, 10.0 + uniform[2]);
            // The same memory within a few percent (bits are fixed when a table is written, the shape moves on).
            assertThat(monkey[0] / uniform[0])
                    .as(load + " monkey bits per key / uniform")
                    .isBetween(0.93, 1.03);
            // A sequential load builds one sorted run, whose optimum is the uniform allocation, compared at equal
            // memory: the bits per key uniform spends beyond Monkey's (block rounding of many small tables) lower a
            // Bloom filter's rate by e^(ln2^2) per bit.
            double gap = Math.max(0, uniform[0] - monkey[0]);
            assertThat(monkey[1])
                    .as(load + " monkey sum of rates")
                    .isLessThanOrEqualTo(uniform[1] * 1.05 * Math.exp(Math.log(2) * Math.log(2) * gap));
            if (!sequential) {
                assertThat(monkey[1]).as(load + " monkey sum of rates").isLessThan(uniform[1] * 0.9);
            }
        }
    }
}
