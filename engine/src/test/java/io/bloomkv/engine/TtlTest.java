package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Options.ttl: write times, reads hiding expired values at once, compactions removing them (never what a live
 * snapshot reads), the TTL flag checked on open, and merge operands under the gap rule (see {@link Ttl}). The clock is
 * a {@link ManualClock}: nothing sleeps.
 */
class TtlTest {
    private static final long START = 1_700_000_000L;

    @TempDir
    Path dir;

    private ManualClock clock = new ManualClock(START);

    private Options options(long ttlSeconds) {
        return Options.defaults()
                .ttl(Duration.ofSeconds(ttlSeconds))
                .clock(clock)
                .compression(Compression.NONE);
    }

    private static long entries(Db db) {
        long n = 0;
        for (TableInfo t : db.tables()) {
            n += t.entries();
        }
        return n;
    }

    @Test
    void storedFormIsTheValueThenAFixed32LittleEndianWriteTime() {
        byte[] stored = Ttl.stamp(bytes("ab"), 0x01020304L);
        assertThat(stored).containsExactly('a', 'b', 4, 3, 2, 1);
        assertThat(Ttl.writeTime(stored)).isEqualTo(0x01020304L);
        assertThat(str(Ttl.strip(stored))).isEqualTo("ab");
        assertThat(Ttl.writeTime(Ttl.stamp(new byte[0], 0xFFFF_FFFFL))).isEqualTo(0xFFFF_FFFFL); // unsigned
        assertThatThrownBy(() -> Ttl.strip(new byte[3])).isInstanceOf(CorruptionException.class);
    }

    /** A value (or operand) too long to carry its write time is refused with its own length and the TTL limit. */
    @Test
    void aValueTooLongForItsWriteTimeIsRefusedWithTheTtlLimit(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        try (Db db = Db.open(dir, options(60).mergeOperator(MergeOperators.stringAppend(',')))) {
            byte[] fits = new byte[Db.MAX_VALUE_SIZE - 4];
            db.put(bytes("fits"), fits);
            assertThat(db.get(bytes("fits"))).hasSize(fits.length);
            byte[] over = new byte[Db.MAX_VALUE_SIZE - 3];
            assertThatThrownBy(() -> db.put(bytes("k"), over))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("value of " + over.length + " bytes")
                    .hasMessageContaining("limit of " + (Db.MAX_VALUE_SIZE - 4) + " of a database with a TTL");
            assertThatThrownBy(() -> db.merge(bytes("k"), over))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("merge operand of " + over.length + " bytes");
            assertThat(db.get(bytes("k"))).as("nothing written").isNull();
        }
    }

    @Test
    void optionsRejectDurationsThatAreNotWholePositiveSeconds() {
        assertThatThrownBy(() -> Options.defaults().ttl(Duration.ZERO)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> Options.defaults().ttl(Duration.ofMillis(1500)))
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> Options.defaults().periodicCompaction(Duration.ofMillis(10)))
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> Options.defaults().clock(null)).isInstanceOf(InvalidArgumentException.class);
        assertThat(Options.defaults().ttl(Duration.ofDays(1)).copy().ttl()).isEqualTo(Duration.ofDays(1));
    }

    @Test
    void readsHideAValueOnceItsTtlHasPassedEverywhere() {
        try (Db db = Db.open(dir, options(100))) {
            db.put(bytes("a"), bytes("1"));
            db.put(bytes("b"), bytes("2"));
            clock.advanceSeconds(50);
            db.put(bytes("c"), bytes("3"));
            Snapshot snap = db.getSnapshot();
            try {
                clock.advanceSeconds(
                        50); // a and b are exactly ttl old: still alive (RocksDB: stale when t + ttl < now)
                assertThat(str(db.get(bytes("a")))).isEqualTo("1");
                clock.advanceSeconds(1);
                for (boolean flushed : new boolean[] {false, true}) {
                    assertThat(db.get(bytes("a"))).isNull();
                    assertThat(db.get(bytes("a"), ReadOptions.defaults().snapshot(snap)))
                            .isNull();
                    assertThat(str(db.get(bytes("c")))).isEqualTo("3");
                    List<byte[]> many = db.multiGet(List.of(bytes("a"), bytes("c"), bytes("b")));
                    assertThat(many.get(0)).isNull();
                    assertThat(str(many.get(1))).isEqualTo("3");
                    assertThat(many.get(2)).isNull();
                    assertThat(keys(db, true, null)).containsExactly("c");
                    assertThat(keys(db, false, null)).containsExactly("c");
                    assertThat(keys(db, true, snap)).containsExactly("c");
                    if (!flushed) {
                        db.flush();
                    }
                }
                clock.advanceSeconds(50);
                assertThat(keys(db, true, null)).isEmpty();
                assertThat(keys(db, false, snap)).isEmpty();
            } finally {
                snap.close();
            }
        }
    }

    @Test
    void iteratorsSkipExpiredKeysBetweenLiveOnesInBothDirections() {
        try (Db db = Db.open(dir, options(10))) {
            for (int i = 0; i < 20; i++) {
                if (i % 3 == 0) {
                    db.put(TestKeys.key(i), bytes("old" + i));
                }
            }
            db.flush();
            clock.advanceSeconds(8);
            for (int i = 0; i < 20; i++) {
                if (i % 3 != 0) {
                    db.put(TestKeys.key(i), bytes("new" + i));
                }
            }
            clock.advanceSeconds(5); // the old ones expired
            List<String> forward = keys(db, true, null);
            List<String> backward = keys(db, false, null);
            assertThat(forward).hasSize(13).noneMatch(k -> k.equals(str(TestKeys.key(0))));
            List<String> reversed = new ArrayList<>(backward);
            java.util.Collections.reverse(reversed);
            assertThat(reversed).isEqualTo(forward);
            try (DbIterator it = db.iterator()) {
                it.seek(TestKeys.key(3)); // expired: lands on 4
                assertThat(it.key()).isEqualTo(TestKeys.key(4));
                it.prev(); // 3 expired: 2
                assertThat(it.key()).isEqualTo(TestKeys.key(2));
                assertThat(str(it.value())).isEqualTo("new2");
                it.seekForPrev(TestKeys.key(6)); // expired: 5
                assertThat(it.key()).isEqualTo(TestKeys.key(5));
                it.next(); // 6 expired: 7
                assertThat(it.key()).isEqualTo(TestKeys.key(7));
            }
        }
    }

    @Test
    void compactionRemovesExpiredValuesButNotWhileASnapshotCouldReadThem() {
        try (Db db = Db.open(dir, options(100))) {
            for (int i = 0; i < 500; i++) {
                db.put(TestKeys.key(i), new byte[100]);
            }
            db.flush();
            db.compactRange(null, null);
            assertThat(entries(db)).isEqualTo(500);
            Snapshot snap = db.getSnapshot();
            clock.advanceSeconds(101);
            db.compactRange(null, null);
            // RocksDB's rule: the compaction filter (TtlCompactionFilter) is not asked about values a snapshot reads.
            assertThat(entries(db)).isEqualTo(500);
            snap.close();
            db.compactRange(null, null);
            assertThat(entries(db)).isZero();
            assertThat(db.stats().tableCount()).isZero();
        }
    }

    @Test
    void expiredValueOverAnOlderVersionBelowLeavesATombstoneUntilTheBottom() {
        try (Db db = Db.open(dir, options(100).numLevels(3))) {
            db.put(bytes("k"), bytes("v1"));
            db.flush();
            db.compactRange(null, null); // v1 at the last level
            clock.advanceSeconds(20);
            db.put(bytes("k"), bytes("v2"));
            db.flush();
            clock.advanceSeconds(200);
            assertThat(db.get(bytes("k"))).isNull();
            db.compactRange(null, null);
            assertThat(db.get(bytes("k"))).isNull();
            assertThat(entries(db)).isZero();
        }
    }

    @Test
    void userCompactionFilterSeesTheUserBytesAndAChangedValueKeepsItsWriteTime() {
        List<String> seen = new ArrayList<>();
        CompactionFilter upper = (level, bottommost, key, value) -> {
            synchronized (seen) {
                seen.add(str(value));
            }
            return CompactionFilter.Decision.changeValue(bytes(str(value).toUpperCase(java.util.Locale.ROOT)));
        };
        try (Db db = Db.open(dir, options(100).compactionFilter(upper))) {
            db.put(bytes("k"), bytes("abc"));
            db.flush();
            clock.advanceSeconds(60);
            db.compactRange(null, null);
            assertThat(seen).containsExactly("abc");
            assertThat(str(db.get(bytes("k")))).isEqualTo("ABC");
            clock.advanceSeconds(41); // the original write time still counts
            assertThat(db.get(bytes("k"))).isNull();
        }
    }

    @Test
    void openRefusesATtlMismatchAndAcceptsAChangedDuration() {
        try (Db db = Db.open(dir, options(100))) {
            db.put(bytes("k"), bytes("v"));
        }
        assertThatThrownBy(() -> Db.open(dir, Options.defaults().clock(clock)))
                .isInstanceOf(TtlMismatchException.class)
                .hasMessageContaining("created with a TTL")
                .satisfies(e ->
                        assertThat(((TtlMismatchException) e).ttlDatabase()).isTrue());
        assertThatThrownBy(() -> Db.open(dir, Options.defaults().readOnly(true)))
                .isInstanceOf(TtlMismatchException.class);
        clock.advanceSeconds(150);
        try (Db db = Db.open(dir, options(100))) {
            assertThat(db.get(bytes("k"))).isNull();
        }
        try (Db db = Db.open(dir, options(1000))) { // a longer TTL: the value is alive again (as in RocksDB)
            assertThat(str(db.get(bytes("k")))).isEqualTo("v");
            db.flush();
            db.compactRange(null, null);
        }
        Path plain = dir.resolve("plain");
        try (Db db = Db.open(plain, Options.defaults())) {
            db.put(bytes("k"), bytes("v"));
        }
        assertThatThrownBy(() -> Db.open(plain, options(100)))
                .isInstanceOf(TtlMismatchException.class)
                .hasMessageContaining("without a TTL");
        try (Db db = Db.open(plain, Options.defaults())) {
            assertThat(str(db.get(bytes("k")))).isEqualTo("v");
        }
    }

    @Test
    void checkpointOfATtlDatabaseIsATtlDatabase() {
        Path cp = dir.resolve("cp");
        try (Db db = Db.open(dir.resolve("db"), options(100))) {
            db.put(bytes("k"), bytes("v"));
            db.flush();
            db.checkpoint(cp);
        }
        assertThatThrownBy(() -> Db.open(cp, Options.defaults())).isInstanceOf(TtlMismatchException.class);
        try (Db db = Db.open(cp, options(100))) {
            assertThat(str(db.get(bytes("k")))).isEqualTo("v");
        }
    }

    @Test
    void ingestIsRefusedOnATtlDatabase() {
        try (Db db = Db.open(dir, options(100))) {
            assertThatThrownBy(() -> db.ingest(List.of(dir.resolve("x.sst")), IngestOptions.defaults()))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("TTL");
        }
    }

    @Test
    void mergeRefreshesTheKeyAndAnExpiredBaseCountsAsAbsent() {
        Options o = options(100).mergeOperator(MergeOperators.uint64Add());
        try (Db db = Db.open(dir, o)) {
            assertThat(db.options().mergeOperator().name())
                    .isEqualTo(MergeOperators.uint64Add().name());
            db.put(bytes("a"), MergeOperators.encodeUint64(5));
            clock.advanceSeconds(60);
            db.merge(bytes("a"), MergeOperators.encodeUint64(1)); // the base is alive: 6, written now
            db.put(bytes("b"), MergeOperators.encodeUint64(5));
            assertThat(MergeOperators.decodeUint64(db.get(bytes("a")))).isEqualTo(6);
            clock.advanceSeconds(101);
            db.merge(bytes("b"), MergeOperators.encodeUint64(1)); // b had expired before this operand: 1
            assertThat(db.get(bytes("a"))).isNull(); // last written 101 s ago
            assertThat(MergeOperators.decodeUint64(db.get(bytes("b")))).isEqualTo(1);
            db.flush(); // flush collapses the chains by the same rule
            assertThat(MergeOperators.decodeUint64(db.get(bytes("b")))).isEqualTo(1);
            db.compactRange(null, null);
            assertThat(MergeOperators.decodeUint64(db.get(bytes("b")))).isEqualTo(1);
            assertThat(db.get(bytes("a"))).isNull();
            clock.advanceSeconds(100);
            assertThat(MergeOperators.decodeUint64(db.get(bytes("b")))).isEqualTo(1); // exactly ttl old
            clock.advanceSeconds(1);
            assertThat(db.get(bytes("b"))).isNull();
        }
    }

    @Test
    void anExpiredValueStaysWhileANewerOperandAboveStillAppliesToIt() {
        Options o = options(100).mergeOperator(MergeOperators.uint64Add()).periodicCompaction(Duration.ofSeconds(100));
        try (Db db = Db.open(dir, o)) {
            db.put(bytes("k"), MergeOperators.encodeUint64(5));
            db.flush();
            db.compactRange(null, null); // the base alone at the last level
            clock.advanceSeconds(50);
            db.merge(bytes("k"), MergeOperators.encodeUint64(1)); // in the memtable, written while the base was alive
            clock.advanceSeconds(70); // the base expired; the table reached the period
            db.scheduleCompactionCheck();
            db.waitForBackgroundWork(); // a periodic compaction rewrites the last level
            assertThat(MergeOperators.decodeUint64(db.get(bytes("k")))).isEqualTo(6);
            db.flush();
            db.compactRange(null, null);
            assertThat(MergeOperators.decodeUint64(db.get(bytes("k")))).isEqualTo(6);
            assertThat(entries(db)).isEqualTo(1);
        }
    }

    private static List<String> keys(Db db, boolean forward, Snapshot snap) {
        List<String> out = new ArrayList<>();
        try (DbIterator it =
                db.iterator(snap == null ? null : ReadOptions.defaults().snapshot(snap))) {
            if (forward) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    out.add(str(it.key()));
                }
            } else {
                for (it.seekToLast(); it.valid(); it.prev()) {
                    out.add(str(it.key()));
                }
            }
        }
        return out;
    }
}
