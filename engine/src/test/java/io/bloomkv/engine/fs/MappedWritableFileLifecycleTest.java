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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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
     * and never runs (allocates or maps) when the thread reaches it. The thread runs preparations one at a time, in
     * order: once a third file's preparation, queued after the cancelled one, has started, the thread has reached and
     * passed the cancelled one, so the checks below are not vacuous.
     */
    @Test
    void closeWhileThePreparationIsQueuedTakesItBack() throws Exception {
        CountDownLatch inMadvise = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch sentinelReached = new CountDownLatch(1);
        List<String> preparerCalls = new CopyOnWriteArrayList<>(); // of the queued file's binding
        MappedWritableFile blocker = openWith(dir.resolve("blocker.log"), holdPreparerInMadvise(inMadvise, release));
        long before = MappedWritableFile.liveMappings();
        MappedWritableFile f = null;
        MappedWritableFile sentinel = null;
        try {
            blocker.append(new byte[10]);
            assertThat(inMadvise.await(30, TimeUnit.SECONDS)).isTrue();
            f = openWith(dir.resolve("queued.log"), (method, args, real) -> {
                if (onPreparer()) {
                    preparerCalls.add(method);
                }
                return null;
            });
            f.append(new byte[10]); // queues the preparation of its second region behind the blocker's
            sentinel = openWith(dir.resolve("sentinel.log"), (method, args, real) -> {
                if (onPreparer()) {
                    sentinelReached.countDown(); // its first call on the thread: fallocate of the region ahead
                }
                return null;
            });
            sentinel.append(new byte[10]); // queues its own preparation behind the one f is about to cancel
            f.close();
            release.countDown();
            assertThat(sentinelReached.await(30, TimeUnit.SECONDS))
                    .as("the thread reached the preparation queued after the cancelled one")
                    .isTrue();
        } finally {
            release.countDown();
            blocker.close();
            if (f != null) {
                f.close();
            }
            if (sentinel != null) {
                sentinel.close();
            }
        }
        assertThat(preparerCalls)
                .as("a cancelled preparation never runs: no allocation, no mapping of the closed file")
                .isEmpty();
        assertThat(MappedWritableFile.liveMappings()).isEqualTo(before);
        assertThat(Files.size(dir.resolve("queued.log"))).isEqualTo(10);
        assertThat(Files.size(dir.resolve("sentinel.log"))).isEqualTo(10);
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

    /**
     * The writer interrupted while it waits for a running preparation: it still takes it, and keeps the interrupt. The
     * preparation is released only once the writer is parked in that wait (seen in its stack: the interrupt, set
     * before the append, made the first wait throw and the writer waits again); what the writer saw (its interrupt
     * status after the append, or what it threw) is recorded and checked here, on the test's thread.
     */
    @Test
    void anInterruptedWriterStillTakesTheRunningPreparation() throws Exception {
        Path p = dir.resolve("interrupted.log");
        CountDownLatch inMadvise = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MappedWritableFile f = openWith(p, holdPreparerInMadvise(inMadvise, release));
        long before = MappedWritableFile.liveMappings();
        byte[] a = new byte[MappedWritableFile.FIRST_REGION + 1];
        Arrays.fill(a, (byte) 3);
        AtomicReference<Boolean> keptInterrupt = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                f.append(a, 0, MappedWritableFile.FIRST_REGION);
                inMadvise.await();
                Thread.currentThread().interrupt();
                f.append(a, MappedWritableFile.FIRST_REGION, 1); // waits for the preparation
                keptInterrupt.set(Thread.interrupted());
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        writer.start();
        try {
            assertThat(inMadvise.await(30, TimeUnit.SECONDS)).isTrue();
            awaitWaitingIn(writer, "take", failure, 30);
            release.countDown();
            writer.join(30_000);
            assertThat(writer.isAlive()).isFalse();
        } finally {
            release.countDown();
            f.close();
        }
        assertThat(failure.get()).as("the writer's appends").isNull();
        assertThat(keptInterrupt.get()).as("the writer keeps its interrupt").isTrue();
        assertThat(MappedWritableFile.liveMappings()).isEqualTo(before);
        assertThat(Files.readAllBytes(p)).isEqualTo(a);
    }

    /**
     * Waits until {@code t} is parked inside {@code MappedWritableFile.Preparation.<method>}, or fails after
     * {@code seconds} or when {@code t} ended (with the {@code failure} it recorded). The stack is read before the
     * state: a thread seen in {@code take} that is WAITING afterwards is parked in take's wait (take cannot return
     * while the preparation is held, and parks nowhere else).
     */
    private static void awaitWaitingIn(Thread t, String method, AtomicReference<Throwable> failure, long seconds)
            throws InterruptedException {
        String preparation = MappedWritableFile.class.getName() + "$Preparation";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            boolean inMethod = Arrays.stream(t.getStackTrace())
                    .anyMatch(e -> e.getClassName().equals(preparation)
                            && e.getMethodName().equals(method));
            if (inMethod && t.getState() == Thread.State.WAITING) {
                return;
            }
            assertThat(t.isAlive())
                    .as("%s still running (it failed with %s)", t.getName(), failure.get())
                    .isTrue();
            assertThat(System.nanoTime() - deadline)
                    .as("%s waiting in %s.%s", t.getName(), preparation, method)
                    .isNegative();
            Thread.sleep(1);
        }
    }
}
