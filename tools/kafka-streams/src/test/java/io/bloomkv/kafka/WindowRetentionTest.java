package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.TableInfo;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retention costs nothing per record: ten retention periods of steady input into a window store write no
 * tombstone per expired record (expiry writes one range tombstone per dropped run of segments), expiry removes the
 * expired segments' tables whole without reading them ({@code Db.deleteFilesInRange}) and forces no flush, no table of
 * expired segments only is left once the background work is done, and the disk held and the bytes written per
 * period stay flat.
 */
class WindowRetentionTest {
    private static final long MINUTE = 60_000;
    private static final Duration RETENTION = Duration.ofMinutes(10); // segments of 5 minutes

    /** After each test, its drivers and stores closed: no table and no off-heap filter byte left open. */
    @RegisterExtension
    final OpenStores openStores = new OpenStores();

    @TempDir
    Path tmp;

    /** Counts the bytes appended to the store's files. */
    static final class CountingFileSystem extends ForwardingFileSystem {
        final AtomicLong written = new AtomicLong();

        CountingFileSystem() {
            super(FileSystem.disk());
        }

        @Override
        public WritableFile newWritableFile(Path p) throws IOException {
            return new ForwardingWritableFile(delegate().newWritableFile(p)) {
                @Override
                public void append(byte[] b, int off, int len) throws IOException {
                    written.addAndGet(len);
                    super.append(b, off, len);
                }
            };
        }
    }

    /** Bytes of the files under {@code dir}; a file the store deletes during the walk (an old WAL) counts as gone. */
    private static long bytesUnder(Path dir) {
        long[] sum = {0};
        try {
            Files.walkFileTree(dir, new java.nio.file.SimpleFileVisitor<>() {
                @Override
                public java.nio.file.FileVisitResult visitFile(Path f, java.nio.file.attribute.BasicFileAttributes a) {
                    sum[0] += a.isRegularFile() ? a.size() : 0;
                    return java.nio.file.FileVisitResult.CONTINUE;
                }

                @Override
                public java.nio.file.FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                    if (e instanceof java.nio.file.NoSuchFileException) {
                        return java.nio.file.FileVisitResult.CONTINUE;
                    }
                    throw e;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return sum[0];
    }

    @Test
    void tenRetentionPeriodsOfSteadyInputKeepDiskFlatAndWriteNothingForExpiry() throws IOException {
        long retention = RETENTION.toMillis();
        long segmentInterval = Math.max(retention / 2, MINUTE);
        CountingFileSystem fs = new CountingFileSystem();
        // Compression.NONE: the zero values would compress to next to nothing under the default LZ4, leaving the
        // disk figure to the table overheads, whose sampling point jitters more than the data does
        Options options = BloomKvStores.defaultSegmentedOptions()
                .compression(io.bloomkv.engine.Compression.NONE)
                .writeBufferSize(64 << 10)
                .fileSystem(fs);
        try (ShmDir state = new ShmDir(tmp)) {
            TestStoreContext ctx = new TestStoreContext(state.path.toFile());
            WindowStore<Bytes, byte[]> store = BloomKvStores.persistentWindowStore(
                            "w", RETENTION, Duration.ofMinutes(1), false, options)
                    .get();
            store.init(ctx, store);
            try {
                Path storeDir = new File(state.path.toFile(), "w").toPath();
                List<Long> diskAfterPeriod = new ArrayList<>();
                List<Long> writtenPerPeriod = new ArrayList<>();
                byte[] value = new byte[100];
                long start = 10 * retention;
                long lastWritten = 0;
                long streamTime = 0;
                long rolls = 0;
                for (int period = 0; period < 10; period++) {
                    for (int minute = 0; minute < 10; minute++) {
                        for (int i = 0; i < 300; i++) {
                            long t = start + period * retention + minute * MINUTE + i * 200L;
                            if (t / segmentInterval > streamTime / segmentInterval) {
                                rolls++;
                            }
                            streamTime = Math.max(streamTime, t);
                            store.put(Bytes.wrap(("key-" + (i * 7 + minute) % 1000).getBytes()), value, t - t % MINUTE);
                        }
                        store.flush();
                    }
                    assertThat(metricSum(ctx, "bloomkv-segments"))
                            .as("the segments gauge: retention / interval + the open one")
                            .isBetween(1.0, 3.0);
                    // Settled: expiry's table deletions (off the stream thread) and the engine's background work done.
                    ((BloomKvWindowStore) store).awaitExpiryDeletions();
                    Db db = ((BloomKvWindowStore) store).db();
                    db.waitForBackgroundWork();
                    diskAfterPeriod.add(bytesUnder(storeDir));
                    writtenPerPeriod.add(fs.written.get() - lastWritten);
                    lastWritten = fs.written.get();
                    long minLive = (streamTime - retention) / segmentInterval;
                    for (TableInfo t : db.tables()) {
                        assertThat(Segment.idOf(t.largestUserKey()))
                                .as("a table of expired segments only is left: " + t.path() + " at level " + t.level())
                                .isGreaterThanOrEqualTo(minLive);
                    }
                }
                System.out.println("WindowRetentionTest disk after each period " + diskAfterPeriod
                        + ", bytes written per period " + writtenPerPeriod);
                assertThat(fs.written.get())
                        .as("the counting file system sees the writes")
                        .isGreaterThan(1 << 20);
                BloomKvWindowStore w = (BloomKvWindowStore) store;
                // A range tombstone counts as one delete in the engine's counters: every delete is one of expiry's.
                assertThat(w.db().stats().deletes())
                        .as("tombstones written per record")
                        .isEqualTo(w.expiryRangeDeletes());
                assertThat(w.expiryRangeDeletes())
                        .as("range tombstones written by expiry: at most one per segment roll")
                        .isBetween(1L, rolls);
                assertThat(w.expiryTablesDeleted())
                        .as("tables removed whole, unread")
                        .isPositive();
                long written = fs.written.get();
                long flushes = w.db().stats().flushes();
                System.out.println("WindowRetentionTest expiry range tombstones " + w.expiryRangeDeletes() + " for "
                        + rolls + " segment rolls, tables removed by expiry " + w.expiryTablesDeleted()
                        + ", dropped unread by compactions " + w.db().stats().tablesDroppedByRangeDeletion()
                        + ", flushes " + flushes + ", bytes written " + written);
                List<Long> steady = diskAfterPeriod.subList(2, diskAfterPeriod.size());
                long min = steady.stream().mapToLong(Long::longValue).min().orElseThrow();
                long max = steady.stream().mapToLong(Long::longValue).max().orElseThrow();
                assertThat(max).as("disk held stays flat: " + diskAfterPeriod).isLessThanOrEqualTo(min + min / 2);
                // Per two consecutive periods: a compaction that the settling at a period's end finds due lands in
                // that period or the next (by the expiry thread's timing), moving its bytes between neighbours; the
                // sum of two is what stays flat.
                List<Long> pairs = new ArrayList<>();
                for (int i = 2; i + 1 < writtenPerPeriod.size(); i++) {
                    pairs.add(writtenPerPeriod.get(i) + writtenPerPeriod.get(i + 1));
                }
                long wmin = pairs.stream().mapToLong(Long::longValue).min().orElseThrow();
                long wmax = pairs.stream().mapToLong(Long::longValue).max().orElseThrow();
                assertThat(wmax)
                        .as("bytes written per two periods stay flat: " + writtenPerPeriod)
                        .isLessThanOrEqualTo(wmin + wmin * 3 / 4);
            } finally {
                store.close(); // also when an assertion fails: later test classes check that no table is left open
            }
        }
    }

    /**
     * The heap held stays flat too: with the store's default write buffer nothing fills a memtable in ten retention
     * periods, so without more the memtable would hold every record since open (the expired segments' entries hidden
     * by their tombstones). The engine rewrites it without them once they are over half of it
     * ({@code MemTable.withoutHidden}): its size after each period stays within a few periods' worth of input, no
     * flush is forced, and every live window still reads its last value.
     */
    @Test
    void tenRetentionPeriodsKeepTheMemtableFlat() {
        long retention = RETENTION.toMillis();
        try (ShmDir state = new ShmDir(tmp)) {
            TestStoreContext ctx = new TestStoreContext(state.path.toFile());
            WindowStore<Bytes, byte[]> store = BloomKvStores.persistentWindowStore(
                            "m", RETENTION, Duration.ofMinutes(1), false)
                    .get();
            store.init(ctx, store);
            try {
                BloomKvWindowStore w = (BloomKvWindowStore) store;
                List<Long> memtableAfterPeriod = new ArrayList<>();
                java.util.Map<String, byte[]> lastOfWindow = new java.util.HashMap<>();
                long start = 10 * retention;
                long streamTime = 0;
                for (int period = 0; period < 10; period++) {
                    for (int minute = 0; minute < 10; minute++) {
                        for (int i = 0; i < 300; i++) {
                            long t = start + period * retention + minute * MINUTE + i * 200L;
                            streamTime = Math.max(streamTime, t);
                            String key = "key-" + (i * 7 + minute) % 1000;
                            byte[] value = (key + "@" + t + "-".repeat(80)).getBytes();
                            store.put(Bytes.wrap(key.getBytes()), value, t - t % MINUTE);
                            lastOfWindow.put(key + "/" + (t - t % MINUTE), value);
                        }
                        store.commit(java.util.Map.of()); // as Kafka 4.3 commits a store that manages offsets
                    }
                    memtableAfterPeriod.add(w.db().stats().memtableBytes());
                }
                long perPeriod = memtableAfterPeriod.get(0); // nothing expired in the first period
                long rewrites = w.db().stats().memtableRewrites();
                System.out.println("WindowRetentionTest memtable bytes after each period " + memtableAfterPeriod
                        + ", rewrites " + rewrites + ", bytes freed "
                        + w.db().stats().memtableRewriteBytesFreed()
                        + ", flushes " + w.db().stats().flushes());
                assertThat(rewrites)
                        .as("memtables rewritten without the expired segments")
                        .isPositive();
                assertThat(w.db().stats().flushes()).as("no flush forced").isZero();
                for (int period = 1; period < 10; period++) {
                    assertThat(memtableAfterPeriod.get(period))
                            .as(
                                    "memtable bytes after period %d (one period's input: %d): %s",
                                    period, perPeriod, memtableAfterPeriod)
                            .isLessThanOrEqualTo(4 * perPeriod);
                }
                int checked = 0;
                for (var e : lastOfWindow.entrySet()) {
                    String[] kw = e.getKey().split("/");
                    long windowStart = Long.parseLong(kw[1]);
                    if (windowStart <= streamTime - retention) {
                        continue; // expired (Kafka's bound: a window ending before stream time - retention)
                    }
                    assertThat(store.fetch(Bytes.wrap(kw[0].getBytes()), windowStart))
                            .as("live window %s", e.getKey())
                            .isEqualTo(e.getValue());
                    checked++;
                }
                assertThat(checked).as("live windows read back").isGreaterThan(1000);
            } finally {
                store.close();
            }
        }
    }

    private static double metricSum(TestStoreContext ctx, String name) {
        double sum = 0;
        for (var e : ctx.metrics.metrics().entrySet()) {
            if (e.getKey().name().equals(name)) {
                sum += ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        return sum;
    }
}
