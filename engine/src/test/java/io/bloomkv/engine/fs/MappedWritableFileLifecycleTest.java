package io.bloomkv.engine.fs;

import static io.bloomkv.engine.fs.PosixFaults.holdPreparerInMadvise;
import static io.bloomkv.engine.fs.PosixFaults.onPreparer;
import static io.bloomkv.engine.fs.PosixFaults.openWith;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MappedWritableFile}'s region preparation through its lifecycle: close with a preparation queued, running or failed, a full disk at the writer's own region, an interrupted writer; every mapping released exactly once and the bytes kept. Failures and delays are injected with {@link PosixFaults}.
 */
@EnabledIf(
        value = "io.bloomkv.engine.fs.MappedWritableFile#supported",
        disabledReason = "mapped writes need Linux with native access")
class MappedWritableFileLifecycleTest {
    @TempDir
    Path dir;

    /** Close while the preparation runs (held in its madvise): close waits for it and unmaps its region once. */
    @Test
    void closeWhileThePreparationRunsUnmapsItsRegion() throws Exception {
        Path p = dir.resolve("running.log");
        CountDownLatch inMadvise = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MappedWritableFile f = openWith(p, holdPreparerInMadvise(inMadvise, release));
        long before = MappedWritableFile.liveMappings();
        long bytesBefore = MappedWritableFile.liveMappedBytes();
        try {
            f.append(new byte[10]);
            assertThat(inMadvise.await(30, TimeUnit.SECONDS)).isTrue();
            Thread closer = new Thread(() -> {
                try {
                    f.close();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            closer.start();
            closer.join(200);
            assertThat(closer.isAlive())
                    .as("close waits for the running preparation")
                    .isTrue();
            release.countDown();
            closer.join(30_000);
            assertThat(closer.isAlive()).isFalse();
        } finally {
            release.countDown();
            f.close();
        }
        assertThat(MappedWritableFile.liveMappings()).isEqualTo(before);
        assertThat(MappedWritableFile.liveMappedBytes()).isEqualTo(bytesBefore);
        assertThat(Files.size(p)).isEqualTo(10);
    }

    /**
     * Close while the preparation is queued behind another file's (held in its madvise): the queued one is taken back,
     * and never maps when the thread reaches it.
     */
    @Test
    void closeWhileThePreparationIsQueuedTakesItBack() throws Exception {
        CountDownLatch inMadvise = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger secondMmaps = new AtomicInteger();
        MappedWritableFile blocker = openWith(dir.resolve("blocker.log"), (method, args, real) -> {
            if (method.equals("madvise") && onPreparer()) {
                inMadvise.countDown();
                release.await();
            }
            return null;
        });
        long before = MappedWritableFile.liveMappings();
        MappedWritableFile f = null;
        try {
            blocker.append(new byte[10]);
            assertThat(inMadvise.await(30, TimeUnit.SECONDS)).isTrue();
            f = openWith(dir.resolve("queued.log"), (method, args, real) -> {
                if (method.equals("mmap") && onPreparer()) {
                    secondMmaps.incrementAndGet();
                }
                return null;
            });
            f.append(new byte[10]);
            f.close();
            release.countDown();
            blocker.close();
            Thread.sleep(300); // the thread reaches the cancelled preparation
        } finally {
            release.countDown();
            blocker.close();
            if (f != null) {
                f.close();
            }
        }
        assertThat(secondMmaps.get()).as("a cancelled preparation never maps").isZero();
        assertThat(MappedWritableFile.liveMappings()).isEqualTo(before);
        assertThat(Files.size(dir.resolve("queued.log"))).isEqualTo(10);
    }

    /**
     * Failures of the preparation (fallocate ENOSPC, another fallocate error, madvise EINVAL/ENOMEM, an InternalError
     * from the populate) leave the writer to map the region itself, or to take it, and nothing mapped after close.
     */
    @Test
    void failedPreparationsLeaveNoMappingAndTheBytes() throws Exception {
        String[] kinds = {"fallocate-enospc", "mmap", "madvise-einval", "madvise-enomem", "madvise-internal-error"};
        for (String kind : kinds) {
            Path p = dir.resolve(kind + ".log");
            ThreadLocal<Integer> errno = new ThreadLocal<>();
            MappedWritableFile f = openWith(p, (method, args, real) -> {
                if (method.equals("lastError") && errno.get() != null) {
                    return errno.get();
                }
                if (!onPreparer()) {
                    return null;
                }
                switch (kind) {
                    case "fallocate-enospc":
                        if (method.equals("fallocate")) {
                            errno.set(28);
                            return -1;
                        }
                        break;
                    case "mmap":
                        if (method.equals("mmap") && args.length == 6) {
                            return real.mmap(
                                    (long) args[0], (long) args[1], (int) args[2], (int) args[3], -1, (long) args[5]);
                        }
                        break;
                    case "madvise-einval":
                        if (method.equals("madvise")) {
                            errno.set(22);
                            return -1;
                        }
                        break;
                    case "madvise-enomem":
                        if (method.equals("madvise")) {
                            errno.set(12);
                            return -1;
                        }
                        break;
                    default:
                        if (method.equals("madvise")) {
                            throw new InternalError("a fault occurred in an unsafe memory access");
                        }
                }
                return null;
            });
            long before = MappedWritableFile.liveMappings();
            long bytesBefore = MappedWritableFile.liveMappedBytes();
            byte[] all = new byte[3 * MappedWritableFile.REGION + 777];
            for (int i = 0; i < all.length; i++) {
                all[i] = (byte) (i * 31 + 7);
            }
            try {
                for (int off = 0; off < all.length; ) {
                    int n = Math.min(4093, all.length - off);
                    f.append(all, off, n);
                    off += n;
                }
            } finally {
                f.close();
            }
            assertThat(MappedWritableFile.liveMappings()).as(kind).isEqualTo(before);
            assertThat(MappedWritableFile.liveMappedBytes()).as(kind).isEqualTo(bytesBefore);
            assertThat(Files.readAllBytes(p)).as(kind).isEqualTo(all);
        }
    }

    /** A full disk at the writer's own allocation: the append fails, the retry after space returns succeeds. */
    @Test
    void aFullDiskAtTheWritersRegionFailsTheAppendAndLeavesNothingMapped() throws Exception {
        Path p = dir.resolve("full.log");
        ThreadLocal<Integer> errno = new ThreadLocal<>();
        boolean[] full = {false};
        MappedWritableFile f = openWith(p, (method, args, real) -> {
            if (method.equals("lastError") && errno.get() != null) {
                return errno.get();
            }
            if (method.equals("fallocate") && full[0]) {
                errno.set(28);
                return -1;
            }
            return null;
        });
        long before = MappedWritableFile.liveMappings();
        byte[] a = new byte[MappedWritableFile.FIRST_REGION];
        Arrays.fill(a, (byte) 5);
        try {
            full[0] = true;
            assertThatThrownBy(() -> f.append(a))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("No space");
            assertThat(MappedWritableFile.liveMappings()).isEqualTo(before);
            full[0] = false;
            f.append(a);
            full[0] = true;
            // the second region was prepared already (or is prepared now without fault: preparations ran before)
            f.append(new byte[] {1});
        } catch (IOException e) {
            // the preparation ran while the disk was full: the writer's own fallocate reports it
            assertThat(e).hasMessageContaining("No space");
        } finally {
            f.close();
        }
        assertThat(MappedWritableFile.liveMappings()).isEqualTo(before);
        assertThat(Files.size(p)).isEqualTo(f.size());
    }

    /** The writer interrupted while it waits for a running preparation: it still takes it, and keeps the interrupt. */
    @Test
    void anInterruptedWriterStillTakesTheRunningPreparation() throws Exception {
        Path p = dir.resolve("interrupted.log");
        CountDownLatch inMadvise = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MappedWritableFile f = openWith(p, holdPreparerInMadvise(inMadvise, release));
        long before = MappedWritableFile.liveMappings();
        byte[] a = new byte[MappedWritableFile.FIRST_REGION + 1];
        Arrays.fill(a, (byte) 3);
        Thread writer = new Thread(() -> {
            try {
                f.append(a, 0, MappedWritableFile.FIRST_REGION);
                inMadvise.await();
                Thread.currentThread().interrupt();
                f.append(a, MappedWritableFile.FIRST_REGION, 1); // waits for the preparation
                assertThat(Thread.currentThread().isInterrupted()).isTrue();
                Thread.interrupted();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        writer.start();
        try {
            assertThat(inMadvise.await(30, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(100);
            release.countDown();
            writer.join(30_000);
            assertThat(writer.isAlive()).isFalse();
        } finally {
            release.countDown();
            f.close();
        }
        assertThat(MappedWritableFile.liveMappings()).isEqualTo(before);
        assertThat(Files.readAllBytes(p)).isEqualTo(a);
    }
}
