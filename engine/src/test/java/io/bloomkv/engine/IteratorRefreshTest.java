package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DbIterator#refresh()}: the iterator reads the current state at the latest sequence ({@link
 * DbIterator#refresh(Snapshot)}: at that snapshot), is not valid until
 * positioned, keeps its bounds and prefix mode, and lets go of its old view at once (its Version, its tables, and the
 * files compactions made obsolete meanwhile); a closed iterator, or one of a closed database, refuses it as every
 * other call. {@link IteratorRefreshDifferentialTest} compares refreshes with rocksdbjni's.
 */
@ExtendWith(NoTableLeak.class)
class IteratorRefreshTest {
    @TempDir
    Path dir;

    private static byte[] v(String s) {
        return TestKeys.bytes(s);
    }

    private static List<String> scan(DbIterator it) {
        List<String> out = new ArrayList<>();
        for (it.seekToFirst(); it.valid(); it.next()) {
            out.add(TestKeys.str(it.key()) + "=" + TestKeys.str(it.value()));
        }
        return out;
    }

    @Test
    void refreshReadsTheLatestStateAndReleasesTheOldViewAndItsFiles() throws Exception {
        try (Db db = Db.open(dir, SmallLevels.options())) {
            for (int i = 0; i < 200; i++) {
                db.put(TestKeys.key(i), v("old-" + i));
            }
            db.flush();
            db.waitForBackgroundWork();
            Set<Long> oldTables = IteratorRefreshDifferentialTest.liveTables(db);
            DbIterator it = db.iterator();
            it.seekToFirst(); // pins a table's block
            assertThat(TestKeys.str(it.value())).isEqualTo("old-0");
            long oldSequence = it.sequence();

            for (int i = 0; i < 200; i++) {
                db.put(TestKeys.key(i), v("new-" + i));
            }
            db.delete(TestKeys.key(7));
            db.compactRange(null, null);
            db.waitForBackgroundWork();
            assertThat(IteratorRefreshDifferentialTest.liveTables(db)).doesNotContainAnyElementsOf(oldTables);
            assertThat(IteratorRefreshDifferentialTest.tableFilesOnDisk(dir))
                    .as("the iterator keeps the old tables")
                    .containsAll(oldTables);
            assertThat(db.stats().liveVersions()).as("and their Version").isGreaterThan(1);
            assertThat(TestKeys.str(it.value())).as("the old view still reads").isEqualTo("old-0");

            it.refresh();
            assertThat(it.valid())
                    .as("not valid until positioned, as RocksDB's")
                    .isFalse();
            assertThatThrownBy(it::key).isInstanceOf(java.util.NoSuchElementException.class);
            assertThat(it.sequence()).isEqualTo(db.stats().lastSequence()).isGreaterThan(oldSequence);
            assertThat(IteratorRefreshDifferentialTest.tableFilesOnDisk(dir))
                    .as("the refresh let the obsolete tables go: deleted at once")
                    .isEqualTo(IteratorRefreshDifferentialTest.liveTables(db));
            assertThat(db.stats().liveVersions()).isEqualTo(1);
            assertThat(db.stats().openIterators()).isEqualTo(1);
            List<String> seen = scan(it);
            assertThat(seen).hasSize(199).doesNotContain("key00000007=new-7").allMatch(s -> s.contains("=new-"));

            it.refresh(); // twice in a row, then back at the start: the same
            it.refresh();
            assertThat(scan(it)).isEqualTo(seen);
            it.close();
            assertThat(db.stats().openIterators()).isZero();
            assertThat(db.stats().liveVersions()).isEqualTo(1);
            assertThatThrownBy(it::refresh)
                    .isInstanceOf(DbClosedException.class)
                    .hasMessageContaining("iterator used after close");
        }
    }

    /** RocksDB's Refresh(): an iterator made at a snapshot reads the latest state afterwards. */
    @Test
    void anIteratorAtASnapshotReadsTheLatestStateAfterARefresh() {
        try (Db db = Db.open(dir, SmallLevels.options())) {
            db.put(TestKeys.key(1), v("a"));
            try (Snapshot s = db.getSnapshot()) {
                db.put(TestKeys.key(1), v("b"));
                db.put(TestKeys.key(2), v("c"));
                try (DbIterator it = db.iterator(ReadOptions.defaults().snapshot(s))) {
                    assertThat(scan(it)).containsExactly("key00000001=a");
                    assertThat(it.sequence()).isEqualTo(s.sequence());
                    it.refresh();
                    assertThat(it.sequence()).isEqualTo(db.stats().lastSequence());
                    assertThat(scan(it)).containsExactly("key00000001=b", "key00000002=c");
                }
            }
        }
    }

    /**
     * RocksDB's Refresh(snapshot): the iterator reads at the given snapshot, older or newer than what it read before,
     * over the current memtables and tables; a null snapshot is refresh().
     */
    @Test
    void refreshToASnapshotReadsAtIt() {
        try (Db db = Db.open(dir, SmallLevels.options())) {
            db.put(TestKeys.key(1), v("a"));
            try (Snapshot s1 = db.getSnapshot()) {
                db.put(TestKeys.key(1), v("b"));
                db.put(TestKeys.key(2), v("c"));
                db.flush();
                try (Snapshot s2 = db.getSnapshot();
                        DbIterator it = db.iterator()) {
                    db.delete(TestKeys.key(2));
                    db.put(TestKeys.key(3), v("d"));
                    assertThat(scan(it)).containsExactly("key00000001=b", "key00000002=c");

                    it.refresh(s1);
                    assertThat(it.valid()).as("not valid until positioned").isFalse();
                    assertThat(it.sequence()).isEqualTo(s1.sequence());
                    assertThat(scan(it)).as("back to an older snapshot").containsExactly("key00000001=a");

                    it.refresh(s2);
                    assertThat(it.sequence()).isEqualTo(s2.sequence());
                    assertThat(scan(it)).containsExactly("key00000001=b", "key00000002=c");

                    it.refresh(null);
                    assertThat(it.sequence()).isEqualTo(db.latestSequenceNumber());
                    assertThat(scan(it)).as("null: the latest state").containsExactly("key00000001=b", "key00000003=d");
                }
            }
            assertThat(db.stats().openIterators()).isZero();
        }
    }

    /**
     * A released snapshot, or one of another database, is refused as ReadOptions.snapshot is when an iterator is made;
     * the iterator keeps its view and its position.
     */
    @Test
    void refreshToAReleasedOrForeignSnapshotIsRefusedAndKeepsTheView() {
        try (Db db = Db.open(dir.resolve("a"), SmallLevels.options());
                Db other = Db.open(dir.resolve("b"), SmallLevels.options())) {
            db.put(TestKeys.key(1), v("a"));
            db.flush();
            Snapshot released = db.getSnapshot();
            released.close();
            try (Snapshot foreign = other.getSnapshot();
                    DbIterator it = db.iterator()) {
                db.put(TestKeys.key(2), v("b"));
                it.seekToFirst();
                long sequence = it.sequence();
                assertThatThrownBy(() -> it.refresh(released))
                        .isInstanceOf(InvalidArgumentException.class)
                        .hasMessageContaining("released");
                assertThatThrownBy(() -> it.refresh(foreign))
                        .isInstanceOf(InvalidArgumentException.class)
                        .hasMessageContaining("another database");
                assertThat(it.sequence()).isEqualTo(sequence);
                assertThat(it.valid()).as("still positioned").isTrue();
                assertThat(TestKeys.str(it.key())).isEqualTo("key00000001");
                it.next();
                assertThat(it.valid()).as("the old view: key 2 is not in it").isFalse();
                assertThat(db.stats().liveVersions()).isEqualTo(1);
            }
        }
    }

    @Test
    void boundsAndPrefixModeStay() {
        try (Db db = Db.open(dir, SmallLevels.options().prefixLength(4))) {
            for (int i = 0; i < 30; i++) {
                db.put(TestKeys.key(i), v("x" + i));
            }
            ReadOptions ro =
                    ReadOptions.defaults().iterateLowerBound(TestKeys.key(5)).iterateUpperBound(TestKeys.key(9));
            try (DbIterator bounded = db.iterator(ro)) {
                ro.iterateLowerBound(null).iterateUpperBound(null); // the iterator took its own copy
                db.put(TestKeys.key(6), v("y"));
                db.flush();
                db.put(TestKeys.key(100), v("z"));
                bounded.refresh();
                assertThat(scan(bounded))
                        .containsExactly("key00000005=x5", "key00000006=y", "key00000007=x7", "key00000008=x8");
                bounded.seekToLast();
                assertThat(TestKeys.str(bounded.key())).isEqualTo("key00000008");
            }
            // Prefix mode: "key0" is the prefix of every key here but "abcd..."; a seek stays within its prefix.
            db.put(v("abcd1"), v("p"));
            try (DbIterator prefixed = db.iterator(ReadOptions.defaults().prefixSameAsStart(true))) {
                db.put(v("abcd2"), v("q"));
                db.put(v("abce"), v("r"));
                prefixed.refresh();
                List<String> seen = new ArrayList<>();
                for (prefixed.seek(v("abcd")); prefixed.valid(); prefixed.next()) {
                    seen.add(TestKeys.str(prefixed.key()));
                }
                assertThat(seen).containsExactly("abcd1", "abcd2");
            }
        }
    }

    /** With a TTL an iterator judges expiry at one time: its creation, then each refresh. */
    @Test
    void aTtlIteratorJudgesExpiryAtItsRefresh() {
        ManualClock clock = new ManualClock(1_700_000_000L);
        try (Db db = Db.open(
                dir, SmallLevels.options().ttl(java.time.Duration.ofSeconds(10)).clock(clock))) {
            db.put(TestKeys.key(1), v("a"));
            try (DbIterator it = db.iterator()) {
                clock.advanceSeconds(11);
                db.put(TestKeys.key(2), v("b"));
                assertThat(scan(it)).as("judged at its creation").containsExactly("key00000001=a");
                it.refresh();
                assertThat(scan(it)).as("judged at the refresh").containsExactly("key00000002=b");
            }
        }
    }

    @Test
    void aRefreshOfAClosedDatabasesIteratorThrowsAsEveryCall() {
        Db db = Db.open(dir, SmallLevels.options());
        db.put(TestKeys.key(1), v("a"));
        DbIterator it = db.iterator();
        it.seekToFirst();
        db.close();
        assertThatThrownBy(it::refresh)
                .isInstanceOf(DbClosedException.class)
                .hasMessageContaining("after its database was closed");
        assertThatThrownBy(() -> it.refresh((Snapshot) null))
                .isInstanceOf(DbClosedException.class)
                .hasMessageContaining("after its database was closed");
        assertThatThrownBy(it::valid).isInstanceOf(DbClosedException.class);
        it.close();
    }

    /**
     * A thread refreshing and scanning in a loop while another closes the database: each refresh either takes a view
     * or throws {@link DbClosedException}; close waits for a refresh in progress, and nothing is left open.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void refreshesRacingCloseLeaveNothingOpen() throws Exception {
        for (int round = 0; round < 20; round++) {
            Path d = dir.resolve("r" + round);
            Db db = Db.open(d, SmallLevels.options());
            for (int i = 0; i < 300; i++) {
                db.put(TestKeys.key(i), v("v" + i));
            }
            DbIterator it = db.iterator();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread refresher = new Thread(() -> {
                try {
                    while (true) {
                        it.refresh();
                        int n = 0;
                        for (it.seekToFirst(); it.valid() && n < 50; it.next()) {
                            n++;
                        }
                    }
                } catch (DbClosedException expected) {
                    // the database closed: every call of the iterator says so from now on
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            refresher.start();
            for (int i = 0; i < 200; i++) {
                db.put(TestKeys.key(i), v("w" + i)); // new memtables and tables for the refreshes to take
            }
            db.close();
            refresher.join();
            assertThat(failure.get()).isNull();
            assertThatThrownBy(it::refresh).isInstanceOf(DbClosedException.class);
            assertThat(TableReader.liveTables()).as("round " + round).isEqualTo(NoTableLeak.before());
        }
    }
}
