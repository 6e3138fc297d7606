package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Options.periodicCompaction: a cold level (no level over its target, nothing written) is compacted once its tables
 * reach the period, so what compactions remove leaves the disk. The clock is a {@link ManualClock};
 * {@link Db#scheduleCompactionCheck} stands for the compaction thread's timer.
 */
class PeriodicCompactionTest {
    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(1_700_000_000L);

    private static long tableBytesOnDisk(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".sst"))
                    .mapToLong(p -> {
                        try {
                            return Files.size(p);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    })
                    .sum();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Long> tableNumbers(Db db) {
        return db.tables().stream().map(TableInfo::fileNumber).toList();
    }

    @Test
    void aColdBottomLevelOfExpiredValuesIsCompactedAwayOnceItReachesThePeriod() {
        Options o = Options.defaults()
                .compression(Compression.NONE)
                .clock(clock)
                .ttl(Duration.ofSeconds(100))
                .periodicCompaction(Duration.ofSeconds(200));
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < 2000; i++) {
                db.put(TestKeys.key(i), new byte[200]);
            }
            db.flush();
            db.compactRange(null, null);
            long before = tableBytesOnDisk(dir);
            assertThat(before).isGreaterThan(2000L * 200);
            List<Long> cold = tableNumbers(db);
            assertThat(db.tables()).allMatch(t -> t.level() == o.numLevels() - 1);

            clock.advanceSeconds(150); // every value expired; the tables are younger than the period
            db.scheduleCompactionCheck();
            db.waitForBackgroundWork();
            assertThat(db.get(TestKeys.key(1))).isNull();
            assertThat(tableNumbers(db)).isEqualTo(cold);
            assertThat(tableBytesOnDisk(dir)).isEqualTo(before);

            clock.advanceSeconds(60); // the tables are 210 s old
            db.scheduleCompactionCheck();
            db.waitForBackgroundWork();
            assertThat(db.tables()).isEmpty();
            assertThat(tableBytesOnDisk(dir)).isZero();
        }
    }

    @Test
    void aRewrittenTableIsYoungAgainAndAYoungDatabaseIsLeftAlone() {
        Options o = Options.defaults()
                .compression(Compression.NONE)
                .clock(clock)
                .periodicCompaction(Duration.ofSeconds(100));
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < 100; i++) {
                db.put(TestKeys.key(i), bytes("v" + i));
            }
            db.flush();
            db.compactRange(null, null);
            List<Long> first = tableNumbers(db);
            db.scheduleCompactionCheck();
            db.waitForBackgroundWork();
            assertThat(tableNumbers(db)).isEqualTo(first);
            clock.advanceSeconds(100);
            db.scheduleCompactionCheck();
            db.waitForBackgroundWork();
            List<Long> second = tableNumbers(db);
            assertThat(second).isNotEmpty().doesNotContainAnyElementsOf(first); // rewritten, not moved
            db.scheduleCompactionCheck();
            db.waitForBackgroundWork();
            assertThat(tableNumbers(db)).isEqualTo(second); // the outputs carry the new time: no loop
            assertThat(str(db.get(TestKeys.key(7)))).isEqualTo("v7");
        }
    }

    /**
     * A lone level-0 table with nothing below is moved to the base level by the periodic pick, and the same check
     * rewrites it there at once (it is still as old): the filter's decisions reach it, and no table is left merely
     * moved.
     */
    @Test
    void aLoneOldLevel0TableIsRewrittenNotOnlyMoved() {
        CompactionFilter dropOdd = (level, bottommost, key, value) ->
                (key[key.length - 1] & 1) == 1 ? CompactionFilter.Decision.REMOVE : CompactionFilter.Decision.KEEP;
        Options o = Options.defaults()
                .compression(Compression.NONE)
                .clock(clock)
                .compactionFilter(dropOdd)
                .periodicCompaction(Duration.ofSeconds(100));
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < 100; i++) {
                db.put(TestKeys.key(i), bytes("v" + i));
            }
            db.flush();
            assertThat(db.tables()).hasSize(1).allMatch(t -> t.level() == 0);
            List<Long> flushed = tableNumbers(db);
            clock.advanceSeconds(100);
            db.scheduleCompactionCheck();
            db.waitForBackgroundWork();
            assertThat(db.tables()).isNotEmpty().allMatch(t -> t.level() > 0);
            assertThat(tableNumbers(db)).doesNotContainAnyElementsOf(flushed); // rewritten, not only moved
            assertThat(db.tables().stream().mapToLong(TableInfo::entries).sum()).isEqualTo(50); // the odd keys gone
            assertThat(str(db.get(TestKeys.key(8)))).isEqualTo("v8");
        }
    }

    @Test
    void aCompactionFilterDecisionReachesAColdLevel() {
        CompactionFilter dropOdd = (level, bottommost, key, value) ->
                (key[key.length - 1] & 1) == 1 ? CompactionFilter.Decision.REMOVE : CompactionFilter.Decision.KEEP;
        Options plain = Options.defaults().compression(Compression.NONE).clock(clock);
        try (Db db = Db.open(dir, plain)) {
            for (int i = 0; i < 1000; i++) {
                db.put(TestKeys.key(i), new byte[100]);
            }
            db.flush();
            db.compactRange(null, null);
        }
        long before = tableBytesOnDisk(dir);
        clock.advanceSeconds(3600);
        // Reopened with a filter and periodic compaction: the cold level is revisited without any write.
        try (Db db = Db.open(dir, plain.copy().compactionFilter(dropOdd).periodicCompaction(Duration.ofHours(1)))) {
            db.scheduleCompactionCheck();
            db.waitForBackgroundWork();
            long entries = db.tables().stream().mapToLong(TableInfo::entries).sum();
            assertThat(entries).isLessThan(1000).isGreaterThan(0);
            assertThat(tableBytesOnDisk(dir)).isLessThan(before);
        }
    }
}
