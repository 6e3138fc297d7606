package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** When immutable memtables pile up behind a slow flush, writers wait; they neither fail nor lose data. */
class WriteStallTest {
    @TempDir
    Path dir;

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void writersStallWhileFlushIsBlockedThenProceed() throws Exception {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        CountDownLatch release = new CountDownLatch(1);
        // A fault predicate that never fails but holds the flush thread at its first table creation.
        fs.inject((op, p) -> {
            if (op == Op.CREATE && p.getFileName().toString().endsWith(".sst")) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        });
        Options o = Options.defaults()
                .fileSystem(fs)
                .writeBufferSize(4096)
                .maxImmutableMemtables(1)
                .autoCompaction(false);
        Db db = Db.open(dir, o);
        try {
            AtomicInteger written = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < 500; i++) {
                        db.put(TestKeys.key(i), new byte[100]);
                        written.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            writer.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (db.stats().writeStalls() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            Stats stalled = db.stats();
            assertThat(stalled.writeStalls()).as("a writer waits for the flush").isPositive();
            assertThat(stalled.immutableMemtables()).isEqualTo(1);
            int before = written.get();
            Thread.sleep(100);
            assertThat(written.get()).as("no write completes while stalled").isEqualTo(before);
            assertThat(writer.isAlive()).isTrue();
            assertThat(failure.get()).isNull();
            release.countDown();
            writer.join(TimeUnit.SECONDS.toMillis(90));
            assertThat(writer.isAlive())
                    .as("writer finished after the flush was released")
                    .isFalse();
            assertThat(failure.get()).isNull();
            assertThat(written.get()).isEqualTo(500);
            for (int i = 0; i < 500; i++) {
                assertThat(db.get(TestKeys.key(i))).hasSize(100);
            }
            assertThat(db.stats().flushes()).isPositive();
        } finally {
            release.countDown(); // else close() would wait for the held flush forever
            db.close();
        }
    }
}
