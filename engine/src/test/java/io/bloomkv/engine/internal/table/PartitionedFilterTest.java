package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partitioned point filters (engine/FORMAT.md "Partitioned filter"): over random key sets, kinds, bits per key and
 * partition sizes (seeded, replayable with -Dbloomkv.seed), no key of a table is ever ruled out, whether the filter is
 * resident (no budget) or loaded partition by partition through a budget far smaller than it; absent keys are still
 * ruled out at the filter's rate; a damaged partition or top-level index is reported and fails open; every byte is
 * freed at close.
 */
class PartitionedFilterTest {
    private static final FileSystem FS = FileSystem.disk();

    @TempDir
    Path dir;

    private static List<byte[]> randomKeys(Random rnd, int n) {
        TreeSet<byte[]> keys = new TreeSet<>(java.util.Arrays::compareUnsigned);
        while (keys.size() < n) {
            byte[] k = new byte[1 + rnd.nextInt(24)];
            rnd.nextBytes(k);
            keys.add(k);
        }
        return new ArrayList<>(keys);
    }

    private static TableProperties write(Path p, List<byte[]> keys, TableBuilderOptions opts) throws IOException {
        WritableFile f = FS.newWritableFile(p);
        try (TableWriter w = new TableWriter(f, opts, keys.size())) {
            long seq = 1;
            for (byte[] k : keys) {
                w.add(InternalKey.encode(k, seq++, ValueType.PUT), k);
            }
            return w.finish();
        }
    }

    @Test
    void noFalseNegativesOverRandomKeySets() throws IOException {
        long seed = TestSeeds.seed("PartitionedFilterTest.noFalseNegatives");
        Random rnd = new Random(seed);
        FilterKind[] kinds = {FilterKind.BLOCKED, FilterKind.RIBBON, FilterKind.STANDARD};
        int[] partitionBytes = {256, 1024, 4096};
        double[] bits = {4, 7, 10, 16};
        long liveTables = TableReader.liveTables();
        long liveFilterBytes = TableReader.liveFilterBytes();
        long liveBudgeted = FilterMemory.liveBytes();
        long liveInPlace = io.bloomkv.bloom.InPlaceFilters.live();
        for (int round = 0; round < 6; round++) {
            int drawn = 2000 + rnd.nextInt(18_000);
            FilterKind kind = kinds[rnd.nextInt(kinds.length)];
            double b = bits[rnd.nextInt(bits.length)];
            int pb = partitionBytes[rnd.nextInt(partitionBytes.length)];
            // at least two partitions' worth of filter bits: a smaller table keeps a whole filter (nothing to test
            // here)
            int n = Math.max(drawn, (int) Math.ceil(2.0 * pb * 8 / b));
            String what = "round " + round + ": " + n + " keys, " + kind + " at " + b + " bits, partitions of " + pb
                    + " bytes (seed " + seed + ")";
            List<byte[]> keys = randomKeys(rnd, n);
            Path p = dir.resolve(round + ".sst");
            TableProperties props = write(
                    p,
                    keys,
                    TableBuilderOptions.defaults()
                            .filterKind(kind)
                            .bitsPerKey(b)
                            .filterPartitionBytes(pb));
            assertThat(props.filterPartitions())
                    .as(what)
                    .isPositive(); // one when the keys fill less than 1.25 partitions
            List<byte[]> absent = new ArrayList<>();
            TreeSet<byte[]> present = new TreeSet<>(java.util.Arrays::compareUnsigned);
            present.addAll(keys);
            while (absent.size() < 5000) {
                byte[] k = new byte[1 + rnd.nextInt(24)];
                rnd.nextBytes(k);
                if (!present.contains(k)) {
                    absent.add(k);
                }
            }
            // resident (no budget), then through a budget of a quarter of the filter's size (at least a few partitions:
            // a partition larger than the cache share is not loaded, as a whole filter is not; and the pinned half
            // must hold the top-level index, 20 bytes a partition: 8% of the filter with 256-byte partitions)
            // The budget once through pread (partitions copied into the cache) and once mapped (probed in place).
            FilterMemory budget = new FilterMemory(Math.max(8L * pb, props.filterBytes() / 4));
            for (int mode = 0; mode < 3; mode++) {
                FilterMemory fm = mode == 0 ? null : budget;
                TableReadMode readMode = mode == 2 ? TableReadMode.MMAP : TableReadMode.PREAD;
                long loadsBefore = budget.loads();
                ReadCounters counters = new ReadCounters();
                try (TableReader r = TableReader.open(FS, p, 1, null, counters, readMode, fm)) {
                    assertThat(r.hasFilter()).as(what).isTrue();
                    assertThat(r.filterProbesInPlace())
                            .as(what + ", mode " + mode)
                            .isEqualTo(mode == 2);
                    for (byte[] k : keys) {
                        assertThat(r.filterAnswer(Hashing.hash64(k)))
                                .as(what + ": false negative")
                                .isNotEqualTo(1);
                        TableReader.Entry e = r.get(k, Hashing.hash64(k), Long.MAX_VALUE >>> 8);
                        assertThat(e).as(what).isNotNull();
                        assertThat(e.value()).isEqualTo(k);
                    }
                    // a batch (multiGet) sees the same answers
                    long[] hashes =
                            keys.stream().limit(500).mapToLong(Hashing::hash64).toArray();
                    boolean[] passed = new boolean[hashes.length];
                    byte[][] batch = keys.stream().limit(500).toArray(byte[][]::new);
                    int[] order =
                            java.util.stream.IntStream.range(0, batch.length).toArray();
                    TableReader.Entry[] found = new TableReader.Entry[batch.length];
                    boolean[] resolved = new boolean[batch.length];
                    r.getAll(batch, order, hashes, hashes.length, Long.MAX_VALUE >>> 8, passed, found, resolved);
                    for (int i = 0; i < batch.length; i++) {
                        assertThat(resolved[i]).as(what + ": batch key " + i).isTrue();
                        assertThat(found[i].value()).isEqualTo(batch[i]);
                    }
                    int ruledOut = 0;
                    for (byte[] k : absent) {
                        if (r.filterAnswer(Hashing.hash64(k)) == 1) {
                            ruledOut++;
                        }
                    }
                    double fpr = 1 - ruledOut / (double) absent.size();
                    double bound = 3 * r.filterExpectedFpp() + 0.01;
                    assertThat(fpr)
                            .as(what + ": false-positive rate against " + r.filterExpectedFpp())
                            .isLessThan(bound);
                    assertThat(r.filterKeyCount()).as(what).isEqualTo(n);
                    assertThat(r.filterKind()).isEqualTo(kind);
                    assertThat(counters.tablesReadWithoutFilter.sum()).as(what).isZero();
                    if (fm != null) {
                        assertThat(budget.pinnedBytes() + budget.cachedBytes())
                                .as(what)
                                .isLessThanOrEqualTo(budget.capacityBytes());
                        if (readMode == TableReadMode.PREAD) {
                            assertThat(budget.loads() - loadsBefore)
                                    .as(what + ": partitions loaded on demand")
                                    .isGreaterThan(0);
                        } else {
                            assertThat(budget.loads() - loadsBefore)
                                    .as(what + ": mapped partitions probed in place, never copied")
                                    .isZero();
                            assertThat(budget.cachedBytes()).as(what).isZero();
                            assertThat(r.filterMemoryBytes())
                                    .as(what + ": the top-level index and the descriptors only (36 bytes a partition)")
                                    .isLessThanOrEqualTo(36L * props.filterPartitions() + 128);
                        }
                    }
                }
            }
            assertThat(budget.pinnedBytes()).isZero();
            assertThat(budget.cachedBytes()).isZero();
        }
        assertThat(TableReader.liveTables()).isEqualTo(liveTables);
        assertThat(TableReader.liveFilterBytes()).isEqualTo(liveFilterBytes);
        assertThat(FilterMemory.liveBytes()).isEqualTo(liveBudgeted);
        assertThat(io.bloomkv.bloom.InPlaceFilters.live())
                .as("every mapped partition region released at close")
                .isEqualTo(liveInPlace);
    }

    /**
     * The top-level lookup guesses a partition from the hash (partitions hold equal counts of uniform hashes) and
     * confirms it: over uniform boundaries, skewed ones and one partition, it answers what a binary search answers,
     * for hashes at, next to and between the boundaries.
     */
    @Test
    void partitionLookupMatchesABinarySearch() {
        long seed = TestSeeds.seed("PartitionedFilterTest.partitionLookup");
        Random rnd = new Random(seed);
        for (int round = 0; round < 200; round++) {
            int n = 1 + rnd.nextInt(round < 100 ? 400 : 5);
            long[] last = new long[n];
            int shape = round % 3; // near-uniform boundaries, all in the lowest 1/1000 of the range, or random
            java.util.TreeSet<Long> set = new java.util.TreeSet<>(Long::compareUnsigned);
            while (set.size() < n) {
                long h = rnd.nextLong();
                set.add(
                        shape == 0
                                ? Long.divideUnsigned(-1L, n) * (set.size() + 1) + (rnd.nextInt(2001) - 1000)
                                : shape == 1 ? Long.remainderUnsigned(h, Long.divideUnsigned(-1L, 1000)) : h);
            }
            int i = 0;
            for (long h : set) {
                last[i++] = h;
            }
            PartitionedFilter.Index index = new PartitionedFilter.Index(last, new long[n], new int[n]);
            for (int q = 0; q < 2000; q++) {
                long base = q % 4 == 0 ? rnd.nextLong() : last[rnd.nextInt(n)];
                long hash = base + (q % 4 == 0 ? 0 : rnd.nextInt(3) - 1);
                int expected = java.util.stream.IntStream.range(0, n)
                        .filter(j -> Long.compareUnsigned(last[j], hash) >= 0)
                        .findFirst()
                        .orElse(-1);
                assertThat(index.partitionOf(hash))
                        .as("hash " + Long.toUnsignedString(hash) + ", " + n + " partitions, shape " + shape + " (seed "
                                + seed + ")")
                        .isEqualTo(expected);
            }
        }
    }

    /**
     * Partitions of equal hash ranges: the writer's bounds have the equal-range form, the decoded index recognises it
     * and finds a partition by multiplication (the same answer as a search of the bounds), every hash lies in the
     * partition its range names and that partition's filter holds it, also when hashes crowd some ranges and leave
     * others empty.
     */
    @Test
    void equalHashRangePartitionsHoldTheirHashes() {
        long seed = TestSeeds.seed("PartitionedFilterTest.equalRanges");
        Random rnd = new Random(seed);
        for (FilterKind kind : new FilterKind[] {FilterKind.BLOCKED, FilterKind.RIBBON, FilterKind.STANDARD}) {
            for (boolean crowded : new boolean[] {false, true}) {
                long[] hashes = new long[5000 + rnd.nextInt(20_000)];
                for (int i = 0; i < hashes.length; i++) {
                    long h = rnd.nextLong();
                    hashes[i] = crowded ? h >>> 3 : h; // crowded: all in the lowest eighth, the other ranges empty
                }
                PartitionedFilter.Built built = PartitionedFilter.build(kind, hashes, hashes.length, 10, 400);
                int parts = built.partitions().size();
                String what =
                        kind + (crowded ? " crowded" : " uniform") + ", " + parts + " partitions (seed " + seed + ")";
                assertThat(parts).as(what).isEqualTo((int) Math.round(hashes.length / 400.0));
                PartitionedFilter.Index index =
                        new PartitionedFilter.Index(built.lastHashes(), new long[parts], new int[parts]);
                assertThat(index.uniform()).as(what).isTrue();
                assertThat(built.lastHashes()[parts - 1]).isEqualTo(-1L);
                io.bloomkv.bloom.Filter[] filters = new io.bloomkv.bloom.Filter[parts];
                try {
                    for (int p = 0; p < parts; p++) {
                        byte[] b = built.partitions().get(p);
                        filters[p] = io.bloomkv.bloom.Filters.read(b, 0, b.length);
                    }
                    for (long h : hashes) {
                        int p = index.partitionOf(h);
                        assertThat(p).as(what).isEqualTo(PartitionedFilter.uniformPartition(h, parts));
                        assertThat(Long.compareUnsigned(built.lastHashes()[p], h))
                                .as(what)
                                .isGreaterThanOrEqualTo(0);
                        assertThat(p == 0 || Long.compareUnsigned(built.lastHashes()[p - 1], h) < 0)
                                .as(what)
                                .isTrue();
                        assertThat(filters[p].mightContain(PartitionedFilter.remix(h)))
                                .as(what + ": hash " + h)
                                .isTrue();
                    }
                    if (crowded) {
                        assertThat(filters[parts - 1].keyCount())
                                .as(what + ": an empty range")
                                .isZero();
                        assertThat(filters[parts - 1].mightContain(PartitionedFilter.remix(-1L)))
                                .isFalse();
                    }
                } finally {
                    for (io.bloomkv.bloom.Filter f : filters) {
                        if (f != null) {
                            f.close();
                        }
                    }
                }
                // the search finds what the multiplication finds
                PartitionedFilter.Index searched =
                        new PartitionedFilter.Index(built.lastHashes(), new long[parts], new int[parts], false);
                for (int q = 0; q < 5000; q++) {
                    long h = q % 2 == 0 ? rnd.nextLong() : built.lastHashes()[rnd.nextInt(parts)] + (q % 3) - 1;
                    assertThat(searched.partitionOf(h)).as(what).isEqualTo(index.partitionOf(h));
                }
            }
        }
    }

    @Test
    void pinningLoadsEveryPartitionAndUnpinningReturnsTheRoom() throws IOException {
        List<byte[]> keys = randomKeys(new Random(7), 10_000);
        List<byte[]> absent = randomKeys(new Random(8), 5_000);
        Path p = dir.resolve("pin.sst");
        TableProperties props = write(p, keys, TableBuilderOptions.defaults().filterPartitionBytes(1024));
        FilterMemory budget = new FilterMemory(props.filterBytes() * 4);
        long liveBudgeted = FilterMemory.liveBytes();
        for (TableReadMode mode : new TableReadMode[] {TableReadMode.PREAD, TableReadMode.MMAP}) {
            try (TableReader r = TableReader.open(FS, p, 1, null, null, mode, budget)) {
                long index = budget.pinnedBytes();
                assertThat(index)
                        .as("the top-level index and the descriptors are charged as pinned")
                        .isPositive()
                        .isLessThan(props.filterBytes() / 20);
                long pinCharge = r.filterBlockSize();
                assertThat(pinCharge)
                        .as("the partitions at 64-byte boundaries and their offsets")
                        .isBetween(props.filterBytes(), props.filterBytes() + 68L * props.filterPartitions());
                assertThat(r.pin(true)).isTrue();
                assertThat(r.filterPinned()).isTrue();
                assertThat(r.filterProbesInPlace())
                        .as("a pinned filter is probed in its copy")
                        .isFalse();
                assertThat(budget.pinnedBytes()).isEqualTo(index + pinCharge);
                assertThat(FilterMemory.liveBytes()).isEqualTo(liveBudgeted + pinCharge);
                long loads = budget.loads();
                for (byte[] k : keys) {
                    long h = Hashing.hash64(k);
                    assertThat(r.filterAnswer(h)).isNotEqualTo(1);
                    r.touchFilter(h);
                    assertThat(r.get(k, h, Long.MAX_VALUE >>> 8)).isNotNull();
                }
                int ruledOut = 0;
                for (byte[] k : absent) {
                    ruledOut += r.filterAnswer(Hashing.hash64(k)) == 1 ? 1 : 0;
                }
                assertThat(1 - ruledOut / (double) absent.size())
                        .as("false-positive rate of the pinned copy, " + mode)
                        .isLessThan(3 * r.filterExpectedFpp() + 0.01);
                assertThat(budget.loads())
                        .as("pinned partitions are not loaded through the cache")
                        .isEqualTo(loads);
                assertThat(r.filterMemoryBytes()).isEqualTo(index + pinCharge);
                assertThat(r.pin(false)).isFalse();
                assertThat(budget.pinnedBytes()).isEqualTo(index);
                assertThat(FilterMemory.liveBytes()).isEqualTo(liveBudgeted);
                assertThat(r.filterProbesInPlace()).isEqualTo(mode == TableReadMode.MMAP);
                for (byte[] k : keys.subList(0, 1000)) {
                    assertThat(r.filterAnswer(Hashing.hash64(k))).isNotEqualTo(1);
                }
                assertThat(r.pin(true)).as("pinned again, then closed pinned").isTrue();
            }
            assertThat(budget.pinnedBytes()).isZero();
            assertThat(FilterMemory.liveBytes()).isEqualTo(liveBudgeted);
        }
    }

    /**
     * The probe of {@code Db.keyMayExist} ({@link TableReader#residentFilterAnswer}) reads nothing: under a budget,
     * before any get a partition is neither cached (read with pread) nor verified in the mapping, and every hash is let
     * through (-1) without a load or a verification; once gets have loaded or verified the partitions, and again once
     * the filter is pinned, it answers every hash, present or absent, as a get's probe does. Its own probes load
     * nothing. Keys seeded, replayable with -Dbloomkv.seed.
     */
    @Test
    void theCacheOnlyProbeAnswersFromMemoryAndLoadsNothing() throws IOException {
        long seed = TestSeeds.seed("PartitionedFilterTest.cacheOnly");
        Random rnd = new Random(seed);
        List<byte[]> keys = randomKeys(rnd, 8000);
        List<byte[]> absent = randomKeys(rnd, 4000);
        Path p = dir.resolve("cacheonly.sst");
        TableProperties props = write(p, keys, TableBuilderOptions.defaults().filterPartitionBytes(1024));
        FilterMemory budget = new FilterMemory(props.filterBytes() * 4);
        for (TableReadMode mode : new TableReadMode[] {TableReadMode.PREAD, TableReadMode.MMAP}) {
            String what = mode + " (seed " + seed + ")";
            try (TableReader r = TableReader.open(FS, p, 1, null, null, mode, budget)) {
                long loads = budget.loads();
                for (byte[] k : keys) {
                    assertThat(r.residentFilterAnswer(Hashing.hash64(k)))
                            .as(what)
                            .isEqualTo(-1);
                }
                assertThat(budget.loads())
                        .as(what + ": loads by the cache-only probe")
                        .isEqualTo(loads);
                assertThat(r.filterPartitionsInRun())
                        .as(what + ": partitions verified")
                        .isZero();
                for (boolean pinned : new boolean[] {false, true}) {
                    assertThat(r.pin(pinned)).isEqualTo(pinned);
                    for (List<byte[]> set : List.of(keys, absent)) {
                        for (byte[] k : set) {
                            r.filterAnswer(Hashing.hash64(k)); // a get's probe: loads or verifies the partition
                        }
                        loads = budget.loads();
                        for (byte[] k : set) {
                            long h = Hashing.hash64(k);
                            int answer = r.residentFilterAnswer(h);
                            assertThat(answer)
                                    .as(what + (pinned ? ", pinned" : ""))
                                    .isEqualTo(r.filterAnswer(h));
                            if (set == keys) {
                                assertThat(answer)
                                        .as(what + ": a present key ruled out")
                                        .isNotEqualTo(1);
                            }
                        }
                        assertThat(budget.loads()).as(what).isEqualTo(loads);
                    }
                }
            }
        }
    }

    /**
     * Tables written since partitions share one geometry: a Bloom kind's partitions are sized for the table's mean key
     * count, so a pinned filter is probed as one run at a fixed stride and a mapped one joins each partition to the run
     * at its first verification; Ribbon's partitions, solved for their own keys, keep the descriptor path. The run
     * answers every hash as the resident partitions do (the same bits), and no key is ruled out.
     */
    @Test
    void partitionsOfOneGeometryAreProbedAsOneRun() throws IOException {
        long seed = TestSeeds.seed("PartitionedFilterTest.oneGeometry");
        Random rnd = new Random(seed);
        for (FilterKind kind : new FilterKind[] {FilterKind.BLOCKED, FilterKind.STANDARD, FilterKind.RIBBON}) {
            List<byte[]> keys = randomKeys(rnd, 30_000);
            Path p = dir.resolve("geometry-" + kind + ".sst");
            TableProperties props = write(
                    p,
                    keys,
                    TableBuilderOptions.defaults()
                            .filterKind(kind)
                            .bitsPerKey(10)
                            .filterPartitionBytes(1024));
            long parts = props.filterPartitions();
            assertThat(parts).isGreaterThan(10);
            long[] probes = new long[40_000];
            for (int i = 0; i < probes.length; i++) {
                probes[i] = i < keys.size() ? Hashing.hash64(keys.get(i)) : rnd.nextLong();
            }
            int[] resident = new int[probes.length];
            try (TableReader r = TableReader.open(FS, p, 1, null, null, TableReadMode.PREAD, null)) {
                for (int i = 0; i < probes.length; i++) {
                    resident[i] = r.filterAnswer(probes[i]);
                }
                assertThat(r.filterPartitionsInRun())
                        .as("no budget: resident partitions")
                        .isZero();
            }
            FilterMemory budget = new FilterMemory(props.filterBytes() * 4);
            String what = kind + " (seed " + seed + ")";
            for (TableReadMode mode : new TableReadMode[] {TableReadMode.MMAP, TableReadMode.PREAD}) {
                try (TableReader r = TableReader.open(FS, p, 1, null, null, mode, budget)) {
                    if (mode == TableReadMode.MMAP) {
                        for (int i = 0; i < probes.length; i++) {
                            assertThat(r.filterAnswer(probes[i]))
                                    .as(what + ", in place, " + i)
                                    .isEqualTo(resident[i]);
                        }
                        assertThat(r.filterPartitionsInRun())
                                .as(what + ": mapped partitions verified with the run's geometry")
                                .isEqualTo(kind == FilterKind.RIBBON ? 0 : parts);
                        // probed through the run a second time, with touch first as gets do
                        for (int i = 0; i < probes.length; i++) {
                            r.touchFilter(probes[i]);
                            assertThat(r.filterAnswer(probes[i])).isEqualTo(resident[i]);
                        }
                    }
                    assertThat(r.pin(true)).isTrue();
                    assertThat(r.filterPartitionsInRun())
                            .as(what + ": pinned, " + mode)
                            .isEqualTo(kind == FilterKind.RIBBON ? 0 : parts);
                    for (int i = 0; i < probes.length; i++) {
                        r.touchFilter(probes[i]);
                        assertThat(r.filterAnswer(probes[i]))
                                .as(what + ", pinned, " + i)
                                .isEqualTo(resident[i]);
                    }
                    for (int i = 0; i < keys.size(); i++) {
                        assertThat(resident[i])
                                .as(what + ": a key of the table ruled out")
                                .isNotEqualTo(1);
                    }
                }
            }
            assertThat(budget.pinnedBytes()).isZero();
        }
    }

    /**
     * Read with pread under a budget a few partitions wide, most probes miss the cache: each miss loads its partition
     * into a slot that an eviction gave back (a fresh one only while the pool has none of its size), every key is still
     * found, and at close the slots, pooled or cached, are freed.
     */
    @Test
    void cacheMissesReuseTheSlotsOfEvictedPartitions() throws IOException {
        List<byte[]> keys = randomKeys(new Random(17), 120_000);
        Path p = dir.resolve("slots.sst");
        TableProperties props = write(p, keys, TableBuilderOptions.defaults().filterPartitionBytes(4096));
        long liveBudgeted = FilterMemory.liveBytes();
        long liveInPlace = io.bloomkv.bloom.InPlaceFilters.live();
        FilterMemory budget = new FilterMemory(props.filterBytes() / 2);
        try (TableReader r = TableReader.open(FS, p, 1, null, null, TableReadMode.PREAD, budget)) {
            Random rnd = new Random(18);
            for (int i = 0; i < 20_000; i++) {
                byte[] k = keys.get(rnd.nextInt(keys.size()));
                assertThat(r.filterAnswer(Hashing.hash64(k))).isNotEqualTo(1);
            }
            assertThat(budget.loads())
                    .as("about half the probes miss the cache")
                    .isGreaterThan(5_000);
            assertThat(budget.slotAllocations())
                    .as("slots allocated against " + budget.loads() + " loads")
                    .isLessThan(budget.loads() / 10);
            assertThat(budget.pinnedBytes() + budget.cachedBytes()).isLessThanOrEqualTo(budget.capacityBytes());
        }
        assertThat(FilterMemory.liveBytes()).as("pooled and cached slots freed").isEqualTo(liveBudgeted);
        assertThat(io.bloomkv.bloom.InPlaceFilters.live()).isEqualTo(liveInPlace);
    }

    @Test
    void smallTablesAndTablesWithoutPartitionBytesKeepAWholeFilter() throws IOException {
        List<byte[]> keys = randomKeys(new Random(3), 5000);
        TableProperties whole = write(dir.resolve("a.sst"), keys, TableBuilderOptions.defaults());
        assertThat(whole.filterPartitions()).isZero();
        assertThat(whole.filterPartitionsIndex()).isNull();
        TableProperties small = write(
                dir.resolve("b.sst"),
                keys.subList(0, 100),
                TableBuilderOptions.defaults().filterPartitionBytes(4096));
        assertThat(small.filterPartitions())
                .as("fewer keys than one partition holds")
                .isZero();
        try (TableReader r = TableReader.open(FS, dir.resolve("b.sst"), 1, null, null)) {
            assertThat(r.footer().hasFilter()).isTrue();
        }
    }

    @Test
    void threadsRacingToVerifyMappedPartitionsNeverSeeAFalseNegative() throws Exception {
        long seed = TestSeeds.seed("PartitionedFilterTest.racingVerification");
        List<byte[]> keys = randomKeys(new Random(seed), 20_000);
        Path p = dir.resolve("race.sst");
        TableProperties props = write(p, keys, TableBuilderOptions.defaults().filterPartitionBytes(512));
        FilterMemory budget = new FilterMemory(props.filterBytes() / 4);
        long liveInPlace = io.bloomkv.bloom.InPlaceFilters.live();
        for (int round = 0; round < 3; round++) {
            // a fresh reader each round: every partition is verified by whichever thread probes it first
            try (TableReader r = TableReader.open(FS, p, 1, null, null, TableReadMode.MMAP, budget)) {
                assertThat(r.filterProbesInPlace()).isTrue();
                int threads = 4;
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
                java.util.concurrent.atomic.AtomicInteger falseNegatives =
                        new java.util.concurrent.atomic.AtomicInteger();
                List<Thread> ts = new ArrayList<>();
                List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
                for (int t = 0; t < threads; t++) {
                    int offset = t * keys.size() / threads;
                    Thread th = new Thread(() -> {
                        try {
                            start.await();
                            for (int i = 0; i < keys.size(); i++) {
                                byte[] k = keys.get((i + offset) % keys.size());
                                if (r.filterAnswer(Hashing.hash64(k)) == 1) {
                                    falseNegatives.incrementAndGet();
                                }
                            }
                        } catch (Throwable e) {
                            errors.add(e);
                        }
                    });
                    ts.add(th);
                    th.start();
                }
                for (Thread th : ts) {
                    th.join();
                }
                assertThat(errors).as("seed " + seed).isEmpty();
                assertThat(falseNegatives.get()).as("seed " + seed).isZero();
                assertThat(r.filterBroken()).isFalse();
                assertThat(budget.loads()).isZero();
                assertThat(io.bloomkv.bloom.InPlaceFilters.live()).isEqualTo(liveInPlace + 1);
            }
        }
        assertThat(budget.pinnedBytes()).isZero();
        assertThat(io.bloomkv.bloom.InPlaceFilters.live()).isEqualTo(liveInPlace);
    }

    /** Flips a byte in the middle of {@code h}'s contents. */
    private static void corrupt(Path p, BlockHandle h) throws IOException {
        byte[] b = Files.readAllBytes(p);
        b[(int) (h.offset() + h.size() / 2)] ^= 0x5A;
        Files.write(p, b);
    }

    @Test
    void aDamagedPartitionIsReportedAndFailsOpen() throws IOException {
        List<byte[]> keys = randomKeys(new Random(11), 8000);
        Path p = dir.resolve("bad.sst");
        TableProperties props = write(p, keys, TableBuilderOptions.defaults().filterPartitionBytes(1024));
        PartitionedFilter.Index index;
        try (TableReader r = TableReader.open(FS, p, 1, null, null)) {
            BlockHandle h = props.filterPartitionsIndex();
            byte[] all = Files.readAllBytes(p);
            index = PartitionedFilter.decodeIndex(
                    java.util.Arrays.copyOfRange(all, (int) h.offset(), (int) (h.offset() + h.size())),
                    (int) h.size(),
                    props.filterPartitions(),
                    h.offset(),
                    p);
        }
        corrupt(p, index.handle(1));
        long liveBudgeted = FilterMemory.liveBytes();
        FilterMemory budget = new FilterMemory(props.filterBytes() / 4);
        for (int mode = 0; mode < 3; mode++) {
            FilterMemory fm = mode == 0 ? null : budget;
            TableReadMode readMode = mode == 2 ? TableReadMode.MMAP : TableReadMode.PREAD;
            ReadCounters counters = new ReadCounters();
            try (TableReader r = TableReader.open(FS, p, 1, null, counters, readMode, fm)) {
                assertThat(r.filterProbesInPlace()).isEqualTo(mode == 2);
                for (byte[] k : keys) {
                    TableReader.Entry e = r.get(k, Hashing.hash64(k), Long.MAX_VALUE >>> 8);
                    assertThat(e).as("no key lost to the damaged partition").isNotNull();
                }
                assertThat(r.hasFilter())
                        .as("the other partitions still filter")
                        .isTrue();
                assertThat(r.filterBroken()).isTrue();
                assertThat(r.filterProblem()).contains("filter partition 1").contains("checksum");
                long unfiltered = counters.tablesReadWithoutFilter.sum();
                assertThat(unfiltered)
                        .as("gets in the damaged partition read unfiltered")
                        .isPositive();
                for (byte[] k : keys) {
                    r.get(k, Hashing.hash64(k), Long.MAX_VALUE >>> 8);
                }
                assertThat(counters.tablesReadWithoutFilter.sum())
                        .as("the damaged partition fails open again, the same gets as the first pass")
                        .isEqualTo(2 * unfiltered);
                assertThat(counters.filterChecks.sum()).isPositive();
                assertThat(r.verifyChecksums())
                        .extracting(TableReader.BadBlock::kind)
                        .containsExactly("filter");
            }
        }
        assertThat(FilterMemory.liveBytes()).isEqualTo(liveBudgeted);
    }

    @Test
    void aDamagedTopLevelIndexLeavesTheTableUnfiltered() throws IOException {
        List<byte[]> keys = randomKeys(new Random(13), 8000);
        Path p = dir.resolve("badindex.sst");
        TableProperties props = write(p, keys, TableBuilderOptions.defaults().filterPartitionBytes(1024));
        corrupt(p, props.filterPartitionsIndex());
        FilterMemory budget = new FilterMemory(props.filterBytes());
        for (FilterMemory fm : new FilterMemory[] {null, budget}) {
            ReadCounters counters = new ReadCounters();
            try (TableReader r = TableReader.open(FS, p, 1, null, counters, TableReadMode.PREAD, fm)) {
                assertThat(r.hasFilter()).isFalse();
                assertThat(r.filterProblem()).contains("checksum");
                for (byte[] k : keys.subList(0, 500)) {
                    assertThat(r.get(k, Hashing.hash64(k), Long.MAX_VALUE >>> 8))
                            .isNotNull();
                }
                assertThat(counters.tablesReadWithoutFilter.sum()).isEqualTo(500);
                assertThat(r.verifyChecksums())
                        .extracting(TableReader.BadBlock::kind)
                        .containsExactly("filter");
            }
        }
        assertThat(budget.pinnedBytes()).isZero();
    }
}
