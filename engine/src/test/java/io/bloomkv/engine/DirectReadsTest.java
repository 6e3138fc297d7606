package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.DirectReadBuffers;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.FileSystemWithoutDirectReads;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Options.useDirectReads through a Db: reads are device reads, answers unchanged, refusal where unsupported. */
class DirectReadsTest {
    @TempDir
    Path dir;

    private static byte[] key(int i) {
        return String.format("k%07d", i).getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void getsAndScansWithDirectReadsCountEveryBlockAsARead() {
        long seed = TestSeeds.seed("DirectReadsTest");
        Random rnd = new Random(seed);
        int n = 5000;
        byte[][] values = new byte[n][];
        // odd value sizes: blocks end at unaligned offsets
        Options o = Options.defaults()
                .writeBufferSize(128 << 10)
                .blockCacheSize(0)
                .useDirectReads(true)
                .compression(Compression.LZ4);
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < n; i += 2) {
                values[i] = new byte[1 + rnd.nextInt(300)];
                rnd.nextBytes(values[i]);
                db.put(key(i), values[i]);
            }
            db.compactRange(null, null);
            Stats before = db.stats();
            for (int i = 0; i < n; i++) {
                assertThat(db.get(key(i))).as("key %d seed %d", i, seed).isEqualTo(values[i]);
            }
            Stats after = db.stats();
            // no block cache: every data-block access of a present key is a read from the device
            assertThat(after.blockReads() - before.blockReads())
                    .isEqualTo(after.dataBlockAccesses() - before.dataBlockAccesses())
                    .isGreaterThanOrEqualTo(n / 2);
            int seen = 0;
            try (DbIterator it = db.iterator()) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    assertThat(it.value())
                            .isEqualTo(values[
                                    Integer.parseInt(new String(it.key(), StandardCharsets.US_ASCII).substring(1))]);
                    seen++;
                }
            }
            assertThat(seen).isEqualTo(n / 2);
            // the last key lives in the file's last data block
            assertThat(db.get(key(n - 2))).isEqualTo(values[n - 2]);
        }
    }

    /**
     * Closing a database read with O_DIRECT by a pool's threads, which live on, frees the read buffers they used: none
     * is kept for files that are gone, and the JVM's direct buffer pool is where it was before the open (checked again
     * when a collection, which frees other code's dropped buffers, ran during the check).
     */
    @Test
    void closingTheDatabaseFreesThePoolThreadsReadBuffers() throws Exception {
        long seed = TestSeeds.seed("DirectReadsTest.buffers");
        assertThat(DirectReadBuffers.openFiles())
                .as("direct files left open by an earlier test")
                .isZero();
        BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct"))
                .findFirst()
                .orElseThrow();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            for (int attempt = 1; ; attempt++) {
                long collections = collections();
                long buffers = direct.getCount();
                long bytes = direct.getTotalCapacity();
                Random rnd = new Random(seed);
                byte[][] values = new byte[2000][];
                try (Db db = Db.open(
                        dir.resolve("pool-" + attempt),
                        Options.defaults()
                                .blockCacheSize(0)
                                .useDirectReads(true)
                                .writeBufferSize(64 << 10))) {
                    for (int i = 0; i < values.length; i++) {
                        values[i] = new byte[1 + rnd.nextInt(200)];
                        rnd.nextBytes(values[i]);
                        db.put(key(i), values[i]);
                    }
                    db.compactRange(null, null);
                    List<Future<?>> reads = new ArrayList<>();
                    for (int t = 0; t < 3; t++) {
                        int first = t;
                        reads.add(pool.submit(() -> {
                            for (int i = first; i < values.length; i += 3) {
                                assertThat(db.get(key(i)))
                                        .as("key %d seed %d", i, seed)
                                        .isEqualTo(values[i]);
                            }
                            return null;
                        }));
                    }
                    for (Future<?> r : reads) {
                        r.get(60, TimeUnit.SECONDS);
                    }
                    assertThat(DirectReadBuffers.live())
                            .as("the read buffers given back to the pool")
                            .isPositive();
                }
                assertThat(DirectReadBuffers.live())
                        .as("seed %d: read buffers kept after close, the pool's threads alive", seed)
                        .isZero();
                long leftCount = direct.getCount() - buffers;
                long leftBytes = direct.getTotalCapacity() - bytes;
                if (leftCount == 0 && leftBytes == 0) {
                    return;
                }
                if (collections() == collections || attempt == 5) {
                    throw new AssertionError("seed " + seed + ": " + leftCount + " direct buffers (" + leftBytes
                            + " bytes) left after close");
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static long collections() {
        long n = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
        }
        return n;
    }

    @Test
    void openRefusesWhereTheFileSystemHasNoDirectReads() {
        Options o = Options.defaults()
                .fileSystem(new FileSystemWithoutDirectReads(FileSystem.disk()))
                .useDirectReads(true);
        assertThatThrownBy(() -> Db.open(dir, o))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("useDirectReads")
                .hasMessageContaining(dir.toAbsolutePath().toString())
                .hasMessageContaining("O_DIRECT");
        // the refused open left nothing locked or open
        try (Db db = Db.open(dir, o.copy().useDirectReads(false))) {
            db.put(key(1), key(1));
        }
    }

    @Test
    void faultInjectingFileSystemPassesDirectReadsThrough() {
        FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
        Options o = Options.defaults().fileSystem(ffs).blockCacheSize(0).useDirectReads(true);
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < 2000; i++) {
                db.put(key(i), key(i));
            }
            db.flush();
            ffs.inject(FaultInjectingFileSystem.on(FaultInjectingFileSystem.Op.READ, "*.sst"));
            assertThatThrownBy(() -> db.get(key(7))).isInstanceOf(BloomKvException.class);
            ffs.clearFaults();
            assertThat(db.get(key(7))).isEqualTo(key(7));
        }
    }
}
