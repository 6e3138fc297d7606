package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Compression;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.internals.VersionedKeyValueToBytesStoreAdapter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * History retention costs nothing per record in the versioned store either: ten retention periods of steady input
 * (without a WAL, its default) write one range tombstone per dropped run of segments and nothing per expired version,
 * the engine's own compactions drop the covered tables whole without reading them (expiry forces no flush and no
 * compaction), and the disk held and the bytes written per period stay flat.
 */
class VersionedRetentionTest {
    private static final long MINUTE = 60_000;
    private static final long RETENTION = 10 * MINUTE;
    private static final long SEGMENT_INTERVAL = 2 * MINUTE;

    /** After each test, its drivers and stores closed: no table and no off-heap filter byte left open. */
    @RegisterExtension
    final OpenStores openStores = new OpenStores();

    @TempDir
    Path tmp;

    /** Bytes of the files under {@code dir}; a file the store deletes during the walk counts as gone. */
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
    void tenRetentionPeriodsOfSteadyInputKeepDiskFlatAndWriteNothingPerExpiredVersion() throws Exception {
        WindowRetentionTest.CountingFileSystem fs = new WindowRetentionTest.CountingFileSystem();
        // Compression.NONE: sizes follow the data, not how well zero-filled values compress.
        int writeBuffer = 64 << 10;
        Options options = BloomKvStores.defaultKeyValueOptions()
                .compression(Compression.NONE)
                .writeBufferSize(writeBuffer)
                .fileSystem(fs);
        TestStoreContext ctx = new TestStoreContext(tmp.toFile());
        StateStore adapter = BloomKvStores.persistentVersionedKeyValueStore(
                        "v", Duration.ofMillis(RETENTION), Duration.ofMillis(SEGMENT_INTERVAL), options)
                .get();
        adapter.init(ctx, adapter);
        try {
            Field f = VersionedKeyValueToBytesStoreAdapter.class.getDeclaredField("inner");
            f.setAccessible(true);
            BloomKvVersionedStore store = (BloomKvVersionedStore) f.get(adapter);
            Path storeDir = new File(tmp.toFile(), "v").toPath();
            List<Long> diskAfterPeriod = new ArrayList<>();
            List<Long> writtenPerPeriod = new ArrayList<>();
            byte[] value = new byte[100];
            long lastWritten = 0;
            long rolls = 0;
            long streamTime = 0;
            for (int period = 0; period < 10; period++) {
                for (int i = 0; i < 1500; i++) {
                    long t = period * RETENTION + i * (RETENTION / 1500);
                    if (t / SEGMENT_INTERVAL > streamTime / SEGMENT_INTERVAL) {
                        rolls++;
                    }
                    streamTime = Math.max(streamTime, t);
                    // One in ten out of order, within the grace period.
                    long ts = i % 10 == 0 ? Math.max(0, t - RETENTION / 4) : t;
                    store.put(Bytes.wrap(("key-" + (i * 7) % 100).getBytes()), value, ts);
                }
                Db db = store.db();
                db.waitForBackgroundWork();
                diskAfterPeriod.add(bytesUnder(storeDir));
                writtenPerPeriod.add(fs.written.get() - lastWritten);
                lastWritten = fs.written.get();
            }
            System.out.println("VersionedRetentionTest disk after each period " + diskAfterPeriod
                    + ", bytes written per period " + writtenPerPeriod + ", expiry range tombstones "
                    + store.expiryRangeDeletes() + " for " + rolls + " segment rolls, tables dropped unread "
                    + store.db().stats().tablesDroppedByRangeDeletion());
            // A range tombstone counts as one delete in the engine's counters: every delete is one of expiry's.
            assertThat(store.db().stats().deletes())
                    .as("tombstones written per record")
                    .isEqualTo(store.expiryRangeDeletes());
            assertThat(store.expiryRangeDeletes())
                    .as("range tombstones written by expiry: at most one per segment roll")
                    .isBetween(1L, rolls);
            assertThat(store.db().stats().tablesDroppedByRangeDeletion())
                    .as("tables dropped whole, unread, by the engine's compactions")
                    .isPositive();
            List<Long> steady = diskAfterPeriod.subList(2, diskAfterPeriod.size());
            long min = steady.stream().mapToLong(Long::longValue).min().orElseThrow();
            long max = steady.stream().mapToLong(Long::longValue).max().orElseThrow();
            // Flat: what moves from period to period is the level-0 tables waiting for their compaction (a few
            // flushed write buffers), while a period of history kept beyond the retention would add the ~live size.
            assertThat(max - min).as("disk held stays flat: " + diskAfterPeriod).isLessThanOrEqualTo(4L * writeBuffer);
            List<Long> steadyWrites = writtenPerPeriod.subList(2, writtenPerPeriod.size());
            long wmin = steadyWrites.stream().mapToLong(Long::longValue).min().orElseThrow();
            long wmax = steadyWrites.stream().mapToLong(Long::longValue).max().orElseThrow();
            assertThat(wmax)
                    .as("bytes written per period stay flat: " + writtenPerPeriod)
                    .isLessThanOrEqualTo(wmin * 2);
        } finally {
            adapter.close(); // also when an assertion fails: later test classes check that no table is left open
        }
    }
}
