package io.bloomkv.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#keyMayExist} and {@link Db#keyExists}, case by case of RocksDB's contract: memtable puts, deletes, range
 * deletions and merge operands answer exactly (with the value); tables answer through their filters and, where a
 * filter lets the key through, the block cache only (the value when the block is cached, "may exist" without one when
 * not), never a file read; TTL expiry, snapshots, a closed database, bad keys, prefix filters and the statistics.
 * {@link KeyMayExistDifferentialTest} compares random histories with RocksDB.
 */
@ExtendWith(NoTableLeak.class)
class KeyMayExistTest {
    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    private static final byte[] STALE = b("stale");

    /** keyMayExist with a holder filled beforehand: the call must set it (to null when no value was found). */
    private static Holder<byte[]> mayExist(Db db, ReadOptions ro, byte[] key, boolean expected) {
        Holder<byte[]> h = new Holder<>(STALE);
        assertThat(db.keyMayExist(ro, key, h))
                .as("keyMayExist " + new String(key, UTF_8))
                .isEqualTo(expected);
        assertThat(h.getValue()).as("holder of " + new String(key, UTF_8)).isNotSameAs(STALE);
        return h;
    }

    /** Tables read with pread: their blocks go through the block cache (a mapped uncompressed table skips it). */
    private static Options cached() {
        return Options.defaults().useMmapReads(false);
    }

    @Test
    void memtablePutsAndAbsentKeysAnswerExactlyWithTheValue() {
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(mayExist(db, null, b("a"), false).getValue()).isNull();
            assertThat(db.keyMayExist(b("a"))).isFalse();
            assertThat(db.keyExists(b("a"))).isFalse();
            db.put(b("a"), b("1"));
            assertThat(mayExist(db, null, b("a"), true).getValue()).isEqualTo(b("1"));
            assertThat(db.keyMayExist(b("a"))).isTrue();
            Holder<byte[]> h = new Holder<>();
            assertThat(db.keyMayExist(b("a"), h)).isTrue();
            assertThat(h.getValue()).isEqualTo(b("1"));
            h.getValue()[0] = 'x'; // the caller's copy
            assertThat(db.get(b("a"))).isEqualTo(b("1"));
            assertThat(db.keyExists(b("a"))).isTrue();
            assertThat(db.keyExists(ReadOptions.defaults(), b("b"))).isFalse();
            assertThat(db.keyMayExist(ReadOptions.defaults(), b("b"), null)).isFalse();
        }
    }

    @Test
    void deletesAndRangeDeletionsInTheMemtableHideTableValues() {
        try (Db db = Db.open(dir, cached())) {
            for (String k : new String[] {"a", "b", "c", "d"}) {
                db.put(b(k), b("v" + k));
            }
            db.flush();
            db.delete(b("b"));
            db.deleteRange(b("c"), b("d"));
            assertThat(mayExist(db, null, b("b"), false).getValue()).isNull();
            assertThat(mayExist(db, null, b("c"), false).getValue()).isNull();
            assertThat(db.keyExists(b("b"))).isFalse();
            assertThat(db.keyExists(b("c"))).isFalse();
            // In the table: a filter that lets the key through, then a block the cache may or may not hold.
            assertThat(db.keyMayExist(b("a"))).isTrue();
            assertThat(db.keyMayExist(b("d"))).isTrue();
            assertThat(db.keyExists(b("d"))).isTrue();
            // A range deletion flushed to a table is weighed from the table's range-deletion block, in memory.
            db.flush();
            assertThat(mayExist(db, null, b("c"), false).getValue()).isNull();
            assertThat(db.keyExists(b("c"))).isFalse();
            assertThat(db.keyExists(b("b"))).isFalse();
        }
    }

    @Test
    void tableValuesComeFromCachedBlocksOnly() {
        try (Db db = Db.open(dir, cached())) {
            for (int i = 0; i < 200; i++) {
                db.put(b("key" + i), b("value" + i));
            }
            db.flush();
        }
        try (Db db = Db.open(dir, cached())) {
            // A fresh cache: the filter lets key7 through, its block is not cached: "may exist", value unknown.
            assertThat(mayExist(db, null, b("key7"), true).getValue()).isNull();
            assertThat(db.get(b("key7"))).isEqualTo(b("value7")); // reads the block into the cache
            assertThat(mayExist(db, null, b("key7"), true).getValue()).isEqualTo(b("value7"));
            db.delete(b("key7")); // a newer delete in the memtable answers before the table
            assertThat(mayExist(db, null, b("key7"), false).getValue()).isNull();
        }
        try (Db db = Db.open(dir, cached().blockCacheSize(0))) {
            assertThat(db.get(b("key8"))).isEqualTo(b("value8"));
            assertThat(mayExist(db, null, b("key8"), true).getValue())
                    .as("no block cache")
                    .isNull();
        }
    }

    @Test
    void mergeOperandsAreMergedWhenTheirBaseIsInMemory() {
        Options o = cached().mergeOperator(MergeOperators.stringAppend(','));
        try (Db db = Db.open(dir, o)) {
            db.merge(b("m1"), b("x")); // operands over no value (no table holds the key: there is none)
            assertThat(mayExist(db, null, b("m1"), true).getValue()).isEqualTo(b("x"));
            db.put(b("m2"), b("a"));
            db.merge(b("m2"), b("b"));
            assertThat(mayExist(db, null, b("m2"), true).getValue()).isEqualTo(b("a,b"));
            db.put(b("m3"), b("a"));
            db.flush();
            db.merge(b("m3"), b("b"));
            db.merge(b("m3"), b("c"));
            db.delete(b("m2"));
            db.merge(b("m2"), b("z")); // over a delete: the base is known (none)
            assertThat(mayExist(db, null, b("m2"), true).getValue()).isEqualTo(b("z"));
            assertThat(db.keyExists(b("m3"))).isTrue();
        }
        try (Db db = Db.open(dir, o)) {
            // m3's operands are in the memtable (replayed), its base in a table whose block is not cached.
            assertThat(mayExist(db, null, b("m3"), true).getValue()).isNull();
            assertThat(db.get(b("m3"))).isEqualTo(b("a,b,c"));
            assertThat(mayExist(db, null, b("m3"), true).getValue()).isEqualTo(b("a,b,c"));
        }
    }

    @Test
    void tableReadsTakeNoFileReadsAndAbsentKeysAreRuledOutByFilters() throws IOException {
        ReadCountingFileSystem fs = new ReadCountingFileSystem();
        Options o = cached().fileSystem(fs).blockSize(512).writeBufferSize(64 << 10);
        int n = 3000;
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < n; i++) {
                db.put(b("present" + i), b("value" + i));
            }
            db.flush();
            db.compactRange(null, null);
        }
        try (Db db = Db.open(dir, o)) {
            assertThat(db.stats().tableCount()).isPositive();
            long before = fs.reads.get();
            int absentMaybe = 0;
            for (int i = 0; i < n; i++) {
                assertThat(db.keyMayExist(b("present" + i))).as("present" + i).isTrue();
                if (db.keyMayExist(b("present" + i + "x"))) {
                    absentMaybe++;
                }
            }
            assertThat(fs.reads.get()).as("file reads by keyMayExist").isEqualTo(before);
            // 10 bits per key: about 1% false positives; "always may exist" would be n.
            assertThat(absentMaybe).as("absent keys let through").isLessThan(n / 20);
            assertThat(db.get(b("present1"))).isEqualTo(b("value1"));
            assertThat(fs.reads.get()).as("a get reads the block").isGreaterThan(before);
        }
    }

    /**
     * Under a filter memory budget that pins one table's filter and has not loaded the other's, keyMayExist answers
     * through the filter in memory and "may exist" for every key of the other table, reading no file and loading
     * nothing into the budget (RocksDB's cache-only read); once a get has loaded the second filter into the budget's
     * cache, keyMayExist rules absent keys of both tables out. No present key is ever answered false.
     */
    @Test
    void underAFilterMemoryBudgetAFilterNotInMemoryAnswersMayExistWithoutAFileRead() throws IOException {
        ReadCountingFileSystem fs = new ReadCountingFileSystem();
        Options o = cached().fileSystem(fs)
                .blockCacheSize(0)
                .writeBufferSize(4 << 20)
                .autoCompaction(false);
        int n = 2000;
        try (Db db = Db.open(dir, o)) {
            for (String table : TABLES) {
                for (int i = 0; i < n; i++) {
                    db.put(key(table, i), b("value" + i));
                }
                db.flush();
            }
        }
        long charge = 0; // a whole filter's charge in a budget: its serialized size
        try (var files = Files.list(dir)) {
            for (Path p : files.filter(p -> p.toString().endsWith(".sst")).toList()) {
                try (TableReader r = TableReader.open(FileSystem.disk(), p, 0, null, null)) {
                    charge = Math.max(charge, r.filterBlockSize());
                }
            }
        }
        // Half of the budget may be pinned: one filter, not both; the rest caches the other once a get loads it.
        SharedFilterBudget budget = new SharedFilterBudget(charge * 22 / 10);
        try (Db db = Db.open(dir, o.filterMemoryBudget(budget))) {
            assertThat(budget.pinnedBytes())
                    .as("one filter pinned")
                    .isPositive()
                    .isLessThanOrEqualTo(charge);
            assertThat(budget.cachedBytes()).as("none cached yet").isZero();
            int[] maybe = absentKeysMayExist(db, fs, budget, n);
            int cold = maybe[0] > maybe[1] ? 0 : 1;
            assertThat(maybe[1 - cold])
                    .as("absent keys let through by the pinned filter")
                    .isLessThan(n / 20);
            assertThat(maybe[cold])
                    .as("absent keys of the table whose filter is not in memory")
                    .isEqualTo(n - 1);

            assertThat(db.get(key(TABLES[cold], 1))).isEqualTo(b("value1")); // loads its filter into the cache
            assertThat(budget.cachedBytes()).as("the get cached the filter").isPositive();
            maybe = absentKeysMayExist(db, fs, budget, n);
            assertThat(maybe[cold])
                    .as("absent keys let through by the cached filter")
                    .isLessThan(n / 20);
            assertThat(maybe[1 - cold]).isLessThan(n / 20);
            for (String table : TABLES) {
                for (int i = 0; i < n; i++) {
                    assertThat(db.get(key(table, i))).as(table + i).isEqualTo(b("value" + i));
                }
            }
        }
    }

    /** The key prefixes of the two tables of the budget test (disjoint key ranges: one table asked per key). */
    private static final String[] TABLES = {"a", "b"};

    private static byte[] key(String table, int i) {
        return b(table + String.format("%05d", i));
    }

    /**
     * keyMayExist for every key of both tables and for n - 1 absent keys inside each table's key range: every present
     * key may exist; no file read, and the budget neither loads nor caches anything meanwhile. Returns the absent keys
     * answered "may exist", per table.
     */
    private static int[] absentKeysMayExist(Db db, ReadCountingFileSystem fs, SharedFilterBudget budget, int n) {
        long reads = fs.reads.get();
        long loads = budget.loads();
        long cached = budget.cachedBytes();
        int[] maybe = new int[TABLES.length];
        for (int t = 0; t < TABLES.length; t++) {
            for (int i = 0; i < n; i++) {
                assertThat(db.keyMayExist(key(TABLES[t], i))).as(TABLES[t] + i).isTrue();
                if (i < n - 1 && db.keyMayExist(b(TABLES[t] + String.format("%05dx", i)))) { // between keys i and i + 1
                    maybe[t]++;
                }
            }
        }
        assertThat(fs.reads.get()).as("file reads by keyMayExist").isEqualTo(reads);
        assertThat(budget.loads()).as("filters loaded by keyMayExist").isEqualTo(loads);
        assertThat(budget.cachedBytes()).as("cached filter bytes").isEqualTo(cached);
        return maybe;
    }

    @Test
    void ttlExpiredValuesFoundInMemoryReadAsAbsent() {
        ManualClock clock = new ManualClock(1_000_000);
        Options o = cached().ttl(Duration.ofSeconds(10)).clock(clock);
        try (Db db = Db.open(dir, o)) {
            db.put(b("t"), b("table"));
            db.flush();
            assertThat(db.get(b("t"))).isEqualTo(b("table")); // cache its block
            db.put(b("m"), b("memtable"));
            // The values without the write time the TTL database stores with them.
            assertThat(mayExist(db, null, b("m"), true).getValue()).isEqualTo(b("memtable"));
            assertThat(mayExist(db, null, b("t"), true).getValue()).isEqualTo(b("table"));
            clock.advanceSeconds(11);
            assertThat(db.get(b("m"))).isNull();
            assertThat(mayExist(db, null, b("m"), false).getValue()).isNull();
            assertThat(mayExist(db, null, b("t"), false).getValue()).isNull();
            assertThat(db.keyExists(b("m"))).isFalse();
            assertThat(db.keyExists(b("t"))).isFalse();
        }
    }

    @Test
    void snapshotsAreReadAtTheirSequence() {
        try (Db db = Db.open(dir, cached())) {
            try (Snapshot empty = db.getSnapshot()) {
                db.put(b("k"), b("v1"));
                Snapshot s1 = db.getSnapshot();
                db.put(b("k"), b("v2"));
                ReadOptions at0 = ReadOptions.defaults().snapshot(empty);
                ReadOptions at1 = ReadOptions.defaults().snapshot(s1);
                assertThat(mayExist(db, at1, b("k"), true).getValue()).isEqualTo(b("v1"));
                assertThat(mayExist(db, null, b("k"), true).getValue()).isEqualTo(b("v2"));
                assertThat(mayExist(db, at0, b("k"), false).getValue()).isNull();
                db.delete(b("k"));
                assertThat(mayExist(db, null, b("k"), false).getValue()).isNull();
                assertThat(mayExist(db, at1, b("k"), true).getValue()).isEqualTo(b("v1"));
                assertThat(db.keyExists(at1, b("k"))).isTrue();
                assertThat(db.keyExists(b("k"))).isFalse();
                assertThat(db.keyExists(at0, b("k"))).isFalse();
                // In a table, its block cached by a get at the snapshot.
                db.flush();
                assertThat(db.get(b("k"), at1)).isEqualTo(b("v1"));
                assertThat(mayExist(db, at1, b("k"), true).getValue()).isEqualTo(b("v1"));
                assertThat(mayExist(db, null, b("k"), false).getValue()).isNull();
                assertThat(mayExist(db, at0, b("k"), false).getValue()).isNull();
                s1.close();
                assertThatThrownBy(() -> db.keyMayExist(at1, b("k"), null))
                        .isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> db.keyExists(at1, b("k"))).isInstanceOf(InvalidArgumentException.class);
            }
            try (Db other = Db.open(dir.resolve("other"), Options.defaults());
                    Snapshot foreign = other.getSnapshot()) {
                ReadOptions ro = ReadOptions.defaults().snapshot(foreign);
                assertThatThrownBy(() -> db.keyMayExist(ro, b("k"), null)).isInstanceOf(InvalidArgumentException.class);
            }
        }
    }

    @Test
    void aClosedDatabaseThrowsAsGetDoes() {
        Db db = Db.open(dir, Options.defaults());
        db.put(b("k"), b("v"));
        db.close();
        assertThatThrownBy(() -> db.get(b("k"))).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(() -> db.keyMayExist(b("k"))).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(() -> db.keyMayExist(b("k"), new Holder<>())).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(() -> db.keyMayExist(ReadOptions.defaults(), b("k"), null))
                .isInstanceOf(DbClosedException.class);
        assertThatThrownBy(() -> db.keyExists(b("k"))).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(() -> db.keyExists(ReadOptions.defaults(), b("k"))).isInstanceOf(DbClosedException.class);
    }

    @Test
    void nullAndEmptyKeysAreRefusedAndLongerKeysAbsentAsForGet() {
        try (Db db = Db.open(dir, Options.defaults())) {
            Holder<byte[]> h = new Holder<>(STALE);
            for (byte[] bad : new byte[][] {null, new byte[0]}) {
                String what = bad == null ? "null" : bad.length + " bytes";
                assertThatThrownBy(() -> db.get(bad)).as(what).isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> db.keyMayExist(bad)).as(what).isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> db.keyMayExist(bad, h)).as(what).isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> db.keyMayExist(null, bad, h))
                        .as(what)
                        .isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> db.keyExists(bad)).as(what).isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> db.keyExists(null, bad)).as(what).isInstanceOf(InvalidArgumentException.class);
            }
            assertThat(h.getValue())
                    .as("a refused call leaves the holder alone")
                    .isSameAs(STALE);
            byte[] longest = new byte[Db.MAX_KEY_SIZE];
            db.put(longest, b("v"));
            db.flush();
            db.put(longest, b("w"));
            assertThat(mayExist(db, null, longest, true).getValue()).isEqualTo(b("w"));
            // One byte longer: no stored key is that long, so absent (RocksDB reads keys of any length).
            byte[] tooLong = java.util.Arrays.copyOf(longest, Db.MAX_KEY_SIZE + 1);
            assertThat(db.get(tooLong)).isNull();
            assertThat(mayExist(db, null, tooLong, false).getValue()).isNull();
            assertThat(db.keyMayExist(tooLong)).isFalse();
            assertThat(db.keyExists(tooLong)).isFalse();
            try (Snapshot s = db.getSnapshot()) {
                ReadOptions ro = ReadOptions.defaults().snapshot(s);
                assertThat(db.keyMayExist(ro, tooLong, null)).isFalse();
                assertThat(db.keyExists(ro, tooLong)).isFalse();
                s.close();
                assertThatThrownBy(() -> db.keyMayExist(ro, tooLong, null))
                        .as("a released snapshot, checked for a long key too")
                        .isInstanceOf(InvalidArgumentException.class);
                assertThatThrownBy(() -> db.get(tooLong, ro)).isInstanceOf(InvalidArgumentException.class);
            }
        }
    }

    /**
     * With a prefix length the tables' filters hold the keys' prefixes beside the whole keys; a get probes the whole
     * key, and so does keyMayExist: an absent key sharing its prefix with present keys is still ruled out (about 99%).
     */
    @Test
    void prefixFiltersAreProbedWithTheWholeKeyAsAGetProbesThem() {
        Options o = cached().prefixLength(4);
        int n = 2000;
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < n; i++) {
                db.put(b(String.format("p%03d-%d", i % 100, i)), b("v" + i));
            }
            db.put(b("ab"), b("short")); // shorter than the prefix: only its whole key is in the filter
            db.flush();
        }
        try (Db db = Db.open(dir, o)) {
            int absentMaybe = 0;
            for (int i = 0; i < n; i++) {
                assertThat(db.keyMayExist(b(String.format("p%03d-%d", i % 100, i))))
                        .isTrue();
                if (db.keyMayExist(b(String.format("p%03d-%dx", i % 100, i)))) {
                    absentMaybe++; // same prefix as a present key
                }
            }
            assertThat(db.keyMayExist(b("ab"))).isTrue();
            assertThat(absentMaybe)
                    .as("absent keys sharing a present prefix let through")
                    .isLessThan(n / 20);
        }
    }

    @Test
    void keyMayExistCountsInNoStatisticAndKeyExistsCountsAsAGet() {
        try (Db db = Db.open(dir, cached())) {
            for (int i = 0; i < 100; i++) {
                db.put(b("k" + i), b("v" + i));
            }
            db.flush();
            db.put(b("mem"), b("v"));
            assertThat(db.get(b("k5"))).isNotNull();
            Stats before = db.stats();
            for (int i = 0; i < 200; i++) {
                db.keyMayExist(b("k" + i), new Holder<>());
            }
            db.keyMayExist(b("mem"));
            Stats after = db.stats();
            assertThat(after.gets()).isEqualTo(before.gets());
            assertThat(after.filterChecks()).isEqualTo(before.filterChecks());
            assertThat(after.filterPositive()).isEqualTo(before.filterPositive());
            assertThat(after.dataBlockAccesses()).isEqualTo(before.dataBlockAccesses());
            assertThat(after.blockCacheHits()).isEqualTo(before.blockCacheHits());
            assertThat(after.blockReads()).isEqualTo(before.blockReads());
            assertThat(after.memtableHits()).isEqualTo(before.memtableHits());
            assertThat(db.keyExists(b("k6"))).isTrue();
            assertThat(db.keyExists(b("absent"))).isFalse();
            Stats gets = db.stats();
            assertThat(gets.gets()).isEqualTo(before.gets() + 2);
            assertThat(gets.hits()).isEqualTo(before.hits() + 1);
            assertThat(gets.filterChecks()).isGreaterThan(before.filterChecks());
        }
    }

    /** The disk, counting the reads of files opened for reading (tables read with pread). */
    private static final class ReadCountingFileSystem extends ForwardingFileSystem {
        final AtomicLong reads = new AtomicLong();

        ReadCountingFileSystem() {
            super(FileSystem.disk());
        }

        @Override
        public ReadableFile newReadableFile(Path p) throws IOException {
            return new ForwardingReadableFile(delegate().newReadableFile(p)) {
                @Override
                public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
                    reads.incrementAndGet();
                    super.readFully(pos, dst, off, len);
                }
            };
        }
    }
}
