package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.fs.WritableFile;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link WriteBehindFile}: the file holds exactly the appended bytes in order whatever the append sizes; it is synced
 * every {@code bytesPerSync} bytes on the writer thread and everything is durable after {@link WritableFile#sync()}
 * (checked against the fault-injecting file system's crash); an error of the writer thread reaches the owner; close
 * always ends the thread.
 */
class WriteBehindFileTest {
    @TempDir
    Path dir;

    @Test
    void appendsInOrderSyncsIncrementallyAndIsDurableAfterSync() throws IOException {
        long seed = TestSeeds.seed("WriteBehindFileTest.appends");
        Random rnd = new Random(seed);
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        AtomicInteger syncs = new AtomicInteger();
        fs.inject((op, path) -> {
            if (op == Op.SYNC) {
                syncs.incrementAndGet();
            }
            return false;
        });
        Path p = dir.resolve("a");
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        try (WriteBehindFile f = new WriteBehindFile(fs.newWritableFile(p), 1000, 2, 5000)) {
            while (expected.size() < 200_000) {
                // sizes below, at and well above a chunk
                byte[] b = new byte[rnd.nextInt(10) == 0 ? rnd.nextInt(5000) : rnd.nextInt(300)];
                rnd.nextBytes(b);
                int off = b.length == 0 ? 0 : rnd.nextInt(b.length);
                f.append(b, off, b.length - off);
                expected.write(b, off, b.length - off);
                assertThat(f.size()).isEqualTo(expected.size());
            }
            int before = syncs.get();
            assertThat(before).as("syncs while writing").isGreaterThanOrEqualTo(expected.size() / 5000 - 3);
            f.sync();
            assertThat(fs.durableSize(p)).isEqualTo(expected.size());
            byte[] tail = {1, 2, 3};
            f.append(tail);
            expected.write(tail, 0, 3);
        }
        // close writes what is buffered without syncing it: a crash keeps the synced bytes only
        assertThat(Files.readAllBytes(p)).isEqualTo(expected.toByteArray());
        assertThat(fs.durableSize(p)).isEqualTo(expected.size() - 3);
        fs.crash();
        assertThat(Files.size(p)).isEqualTo(expected.size() - 3);
        assertThat(liveThreads()).isZero();
    }

    @Test
    void anErrorOfTheWriterThreadReachesTheOwnerAndCloseEndsTheThread() throws IOException {
        for (Op failing : new Op[] {Op.WRITE, Op.SYNC, Op.FLUSH}) {
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            Path p = dir.resolve("f-" + failing);
            WriteBehindFile f = new WriteBehindFile(fs.newWritableFile(p), 100, 1, 1000);
            f.append(new byte[50]);
            fs.injectFromNth(FaultInjectingFileSystem.on(failing), 1);
            IOException error = null;
            try {
                for (int i = 0; i < 1000 && error == null; i++) {
                    f.append(new byte[70]);
                }
                f.flush();
                f.sync();
            } catch (IOException e) {
                error = e;
            }
            assertThat(error).as(failing + " fails").isNotNull();
            assertThat(error).hasMessageContaining(p.toString());
            assertThat(error.getCause()).isInstanceOf(IOException.class);
            // the file stays failed: every later call reports it, close included, and ends the thread
            assertThatThrownBy(f::sync).isInstanceOf(IOException.class);
            assertThatThrownBy(f::close).isInstanceOf(IOException.class);
            f.close(); // idempotent
            assertThatThrownBy(() -> f.append(new byte[1])).isInstanceOf(IOException.class);
            fs.clearFaults();
        }
        assertThat(liveThreads()).isZero();
    }

    /** startSync returns at once; the sync runs after the bytes before it, and its error reaches a later call. */
    @Test
    void aBackgroundSyncCoversTheBytesBeforeItAndReportsItsError() throws IOException {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Path p = dir.resolve("s");
        try (WriteBehindFile f = new WriteBehindFile(fs.newWritableFile(p), 4096, 2, 0)) {
            f.append(new byte[10_000]);
            f.startSync();
            f.append(new byte[5]);
            f.flush(); // after the background sync in the writer thread's order
            assertThat(fs.durableSize(p)).isEqualTo(10_000);
            f.sync();
            assertThat(fs.durableSize(p)).isEqualTo(10_005);
        }
        Path q = dir.resolve("t");
        WriteBehindFile f = new WriteBehindFile(fs.newWritableFile(q), 4096, 2, 0);
        f.append(new byte[100]);
        fs.injectNth(FaultInjectingFileSystem.on(Op.SYNC), 1);
        f.startSync();
        assertThatThrownBy(f::flush).isInstanceOf(IOException.class).hasRootCauseMessage("injected SYNC error on " + q);
        assertThatThrownBy(f::close).isInstanceOf(IOException.class);
        fs.clearFaults();
        assertThat(liveThreads()).isZero();
    }

    @Test
    void anInterruptedOwnerStillClosesTheFile() throws IOException {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        Path p = dir.resolve("i");
        WriteBehindFile f = new WriteBehindFile(fs.newWritableFile(p), 64, 1, 0);
        f.append(new byte[1000]);
        Thread.currentThread().interrupt();
        try {
            f.close();
            assertThat(Thread.currentThread().isInterrupted())
                    .as("interrupt kept")
                    .isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(Files.size(p)).isEqualTo(1000);
        assertThat(liveThreads()).isZero();
    }

    @Test
    void argumentsAreChecked() throws IOException {
        WritableFile file = FaultInjectingFileSystem.overDisk().newWritableFile(dir.resolve("x"));
        try {
            assertThatThrownBy(() -> new WriteBehindFile(file, 0, 1, 0)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new WriteBehindFile(file, 1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new WriteBehindFile(file, 1, 1, -1)).isInstanceOf(IllegalArgumentException.class);
        } finally {
            file.close();
        }
    }

    private static long liveThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("bloomkv-write-behind") && t.isAlive())
                .count();
    }
}
