package io.bloomkv.engine.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.TestSeeds;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** O_DIRECT reads through {@link FileSystem#newDirectReadableFile}: any position and length, the same bytes as a plain read. */
class DirectReadableFileTest {
    @TempDir
    Path dir;

    @Test
    void unalignedReadsAnywhereReturnTheFilesBytes() throws IOException {
        long seed = TestSeeds.seed("DirectReadableFileTest");
        Random rnd = new Random(seed);
        byte[] content = randomBytes(5 * 4096 + 1234, rnd); // ends inside a block
        Path p = write("data", content);
        try (ReadableFile f = FileSystem.disk().newDirectReadableFile(p)) {
            assertThat(f).isInstanceOf(DirectReadableFile.class);
            int align = ((DirectReadableFile) f).alignment();
            assertThat(Integer.bitCount(align)).isEqualTo(1);
            assertThat(f.size()).isEqualTo(content.length);
            // edges: first byte, a whole aligned block, across a block boundary, the last byte, the whole file
            int[][] cases = {
                {0, 1},
                {0, align},
                {align - 3, 7},
                {content.length - 1, 1},
                {0, content.length},
                {content.length - 5000, 5000},
                {7, 0}
            };
            for (int[] c : cases) {
                check(f, content, c[0], c[1], "seed " + seed);
            }
            for (int i = 0; i < 2000; i++) {
                int pos = rnd.nextInt(content.length);
                int len = rnd.nextInt(Math.min(content.length - pos, 9000) + 1);
                check(f, content, pos, len, "seed " + seed);
            }
            assertThatThrownBy(() -> f.readFully(content.length - 10, new byte[11], 0, 11))
                    .isInstanceOf(EOFException.class)
                    .hasMessageContaining(p.toString());
            assertThatThrownBy(() -> f.readFully(content.length + 4096, new byte[1], 0, 1))
                    .isInstanceOf(EOFException.class);
            // a read larger than a pooled buffer serves
            byte[] big = new byte[DirectReadableFile.MAX_REUSED_BUFFER + 10_000];
            rnd.nextBytes(big);
            Path bp = dir.resolve("big");
            Files.write(bp, big);
            try (ReadableFile bf = FileSystem.disk().newDirectReadableFile(bp)) {
                byte[] got = new byte[big.length - 3];
                bf.readFully(3, got, 0, got.length);
                assertThat(got).isEqualTo(Arrays.copyOfRange(big, 3, big.length));
            }
        }
    }

    /**
     * Reads one after another share one pooled direct buffer, whatever thread makes them and however many files: the
     * first read allocates it (64 KiB and an alignment, for reads of up to that window), and no later read of such a
     * window, of this file or of another opened and closed meanwhile, on this thread or on a new one, allocates another
     * (the JVM's count of direct buffers and their bytes never go above that one buffer).
     */
    @Test
    void readsOneAfterAnotherShareOnePooledBuffer() throws Exception {
        assertNoDirectFileOpen();
        DirectMemory.withoutCollection(this::readsShareOnePooledBufferAttempt);
    }

    private void readsShareOnePooledBufferAttempt() throws Exception {
        long seed = TestSeeds.seed("DirectReadableFileTest.buffers");
        Random rnd = new Random(seed);
        byte[] content = randomBytes(5 * 4096 + 1234, rnd);
        Path p = write("data", content);
        Path q = write("other", content);
        try (ReadableFile f = FileSystem.disk().newDirectReadableFile(p)) {
            int align = ((DirectReadableFile) f).alignment();
            long buffers = DirectMemory.count();
            long bytes = DirectMemory.bytes();
            long oneBuffer = (64 << 10) + align;
            check(f, content, 0, 1, "seed " + seed);
            assertThat(DirectMemory.count()).as("the pool's buffer, allocated").isEqualTo(buffers + 1);
            assertThat(DirectMemory.bytes()).as("64 KiB and an alignment").isEqualTo(bytes + oneBuffer);
            for (int i = 0; i < 500; i++) {
                int pos = rnd.nextInt(content.length);
                int len = rnd.nextInt(Math.min(content.length - pos, 9000) + 1);
                if (i % 100 == 50) {
                    try (ReadableFile g = FileSystem.disk().newDirectReadableFile(q)) {
                        check(g, content, pos, len, "seed " + seed + ", another file");
                    }
                } else if (i % 100 == 70) {
                    onNewThread(seed, () -> check(f, content, pos, len, "seed " + seed + ", a new thread"));
                } else {
                    check(f, content, pos, len, "seed " + seed);
                }
                // at most: a collection may free unrelated buffers meanwhile, never add one
                assertThat(DirectMemory.count())
                        .as("seed %d read %d: no buffer beside the pool's", seed, i)
                        .isLessThanOrEqualTo(buffers + 1);
                assertThat(DirectMemory.bytes()).as("seed %d read %d", seed, i).isLessThanOrEqualTo(bytes + oneBuffer);
                assertThat(DirectReadableFile.liveBuffers()).isEqualTo(1);
            }
        }
        assertThat(DirectReadableFile.liveBuffers())
                .as("freed at the last close")
                .isZero();
    }

    /**
     * A read larger than a pooled buffer serves frees its own buffer when it returns, and a window larger than every
     * idle buffer gets a new one of its size, which joins the pool beside the smaller one: the JVM's count of direct
     * buffers and their bytes come back to those two, with no collection in between, and each later window takes the
     * idle buffer that fits it best (the large one for a large window, the small one for a small window).
     */
    @Test
    void largeReadsAndOutgrownBuffersAreFreedAtOnce() throws Exception {
        assertNoDirectFileOpen();
        DirectMemory.withoutCollection(this::largeReadsAndOutgrownBuffersAreFreedAttempt);
    }

    private void largeReadsAndOutgrownBuffersAreFreedAttempt() throws Exception {
        long seed = TestSeeds.seed("DirectReadableFileTest.free");
        Random rnd = new Random(seed);
        byte[] content = randomBytes(DirectReadableFile.MAX_REUSED_BUFFER + 3 * 4096 + 77, rnd);
        Path p = write("large", content);
        try (ReadableFile f = FileSystem.disk().newDirectReadableFile(p)) {
            int align = ((DirectReadableFile) f).alignment();
            long buffers = DirectMemory.count();
            long bytes = DirectMemory.bytes();
            check(f, content, 0, 100, "seed " + seed);
            assertThat(DirectMemory.count()).as("the pool's first buffer").isEqualTo(buffers + 1);
            assertThat(DirectMemory.bytes()).isEqualTo(bytes + (64 << 10) + align);
            check(f, content, 0, 200 << 10, "seed " + seed + ", a larger window");
            assertThat(DirectMemory.count())
                    .as("a buffer of the larger window beside the first")
                    .isEqualTo(buffers + 2);
            long grown = DirectMemory.bytes() - bytes - (64 << 10) - align;
            assertThat(grown)
                    .as("one buffer of the larger window and an alignment")
                    .isBetween(200L << 10, (200L << 10) + 2L * align);
            for (int i = 0; i < 20; i++) {
                check(f, content, 7 * i, i % 2 == 0 ? 150 << 10 : 100, "seed " + seed + ", windows of both sizes");
            }
            assertThat(DirectMemory.count()).as("both sizes reused").isEqualTo(buffers + 2);
            check(f, content, 5, content.length - 5, "seed " + seed + ", past the reused size");
            assertThat(DirectMemory.count())
                    .as("the large read's own buffer freed")
                    .isEqualTo(buffers + 2);
            assertThat(DirectMemory.bytes()).isEqualTo(bytes + (64 << 10) + align + grown);
        }
    }

    /**
     * Closing the last open direct file frees every pooled buffer, also those last used by threads that live on (a
     * pool's threads after the database they read is closed): the JVM's count of direct buffers and their bytes come
     * back to where they were, with no collection in between. A read of a file opened later gets a new buffer.
     */
    @Test
    void everyPooledBufferIsFreedWhenTheLastDirectFileCloses() throws Exception {
        assertNoDirectFileOpen();
        DirectMemory.withoutCollection(this::everyPooledBufferIsFreedAttempt);
    }

    private void everyPooledBufferIsFreedAttempt() throws Exception {
        long seed = TestSeeds.seed("DirectReadableFileTest.lastClose");
        Random rnd = new Random(seed);
        byte[] content = randomBytes(3 * 4096 + 99, rnd);
        Path p = write("pool", content);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            long buffers = DirectMemory.count();
            long bytes = DirectMemory.bytes();
            for (int round = 0; round < 3; round++) {
                try (ReadableFile f = FileSystem.disk().newDirectReadableFile(p)) {
                    onBothThreads(pool, () -> check(f, content, 5, 4000, "seed " + seed));
                    int pooled = DirectReadableFile.liveBuffers();
                    assertThat(pooled)
                            .as("seed %d round %d: one buffer per read in flight at once", seed, round)
                            .isBetween(1, 2);
                    assertThat(DirectReadableFile.idleBuffers())
                            .as("every read gave its back")
                            .isEqualTo(pooled);
                    assertThat(DirectMemory.count()).isEqualTo(buffers + pooled);
                }
                assertThat(DirectMemory.count())
                        .as("seed %d round %d: freed at the last close, the threads alive", seed, round)
                        .isEqualTo(buffers);
                assertThat(DirectMemory.bytes()).isEqualTo(bytes);
                assertThat(DirectReadableFile.liveBuffers()).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Threads that come and go add no buffers: each of a run of short-lived threads reads with the one pooled buffer,
     * and a burst of threads reading at once leaves at most what their reads in flight needed, every one idle in the
     * pool once they returned, and all of them freed at the last close.
     */
    @Test
    void shortLivedThreadsShareThePool() throws Exception {
        assertNoDirectFileOpen();
        DirectMemory.withoutCollection(this::shortLivedThreadsAttempt);
    }

    private void shortLivedThreadsAttempt() throws Exception {
        long seed = TestSeeds.seed("DirectReadableFileTest.shortLived");
        Random rnd = new Random(seed);
        byte[] content = randomBytes(4 * 4096 + 7, rnd);
        Path p = write("short", content);
        long buffers = DirectMemory.count();
        try (ReadableFile f = FileSystem.disk().newDirectReadableFile(p)) {
            for (int i = 0; i < 20; i++) {
                int pos = rnd.nextInt(content.length - 3000);
                onNewThread(seed, () -> check(f, content, pos, 3000, "seed " + seed));
                assertThat(DirectMemory.count())
                        .as("seed %d thread %d: the one pooled buffer", seed, i)
                        .isEqualTo(buffers + 1);
                assertThat(DirectReadableFile.liveBuffers()).isEqualTo(1);
            }
            int threads = 16;
            CyclicBarrier start = new CyclicBarrier(threads);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> burst = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long threadSeed = rnd.nextLong();
                Thread th = new Thread(() -> {
                    try {
                        start.await(30, TimeUnit.SECONDS);
                        Random r = new Random(threadSeed);
                        for (int i = 0; i < 50; i++) {
                            int pos = r.nextInt(content.length);
                            check(f, content, pos, r.nextInt(content.length - pos + 1), "seed " + seed);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                th.start();
                burst.add(th);
            }
            for (Thread th : burst) {
                th.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("seed " + seed, failure.get());
            }
            int live = DirectReadableFile.liveBuffers();
            assertThat(live)
                    .as("seed %d: at most one buffer per thread of the burst", seed)
                    .isBetween(1, threads);
            assertThat(DirectReadableFile.idleBuffers())
                    .as("every buffer back in the pool")
                    .isEqualTo(live);
            assertThat(DirectMemory.count()).isEqualTo(buffers + live);
        }
        assertThat(DirectReadableFile.liveBuffers()).isZero();
        assertThat(DirectMemory.count()).isEqualTo(buffers);
    }

    /**
     * The pool keeps at most {@link DirectReadableFile#MAX_IDLE_BYTES} of idle buffers: of more 1 MiB buffers taken at
     * once than that holds, those given back beyond it are freed at once, the rest kept for the next reads and freed at
     * the last close.
     */
    @Test
    void thePoolKeepsAtMostItsBoundOfIdleBuffers() throws Exception {
        assertNoDirectFileOpen();
        DirectMemory.withoutCollection(this::poolBoundAttempt);
    }

    private void poolBoundAttempt() throws Exception {
        Path p = write("bound", new byte[4096]);
        long buffers = DirectMemory.count();
        int window = DirectReadableFile.MAX_REUSED_BUFFER;
        try (DirectReadableFile f = (DirectReadableFile) FileSystem.disk().newDirectReadableFile(p)) {
            int taken = (int) (DirectReadableFile.MAX_IDLE_BYTES / window) + 5;
            List<DirectReadableFile.Buffer> held = new ArrayList<>();
            for (int i = 0; i < taken; i++) {
                held.add(f.acquire(window));
            }
            assertThat(DirectReadableFile.liveBuffers()).isEqualTo(taken);
            assertThat(DirectMemory.count()).isEqualTo(buffers + taken);
            for (DirectReadableFile.Buffer b : held) {
                DirectReadableFile.giveBack(b);
            }
            long oneBuffer = window + f.alignment();
            int kept = (int) (DirectReadableFile.MAX_IDLE_BYTES / oneBuffer);
            assertThat(DirectReadableFile.idleBuffers())
                    .as("as many as the bound holds")
                    .isEqualTo(kept);
            assertThat(DirectReadableFile.idleBufferBytes()).isLessThanOrEqualTo(DirectReadableFile.MAX_IDLE_BYTES);
            assertThat(DirectReadableFile.liveBuffers()).isEqualTo(kept);
            assertThat(DirectMemory.count()).as("the rest freed at once").isEqualTo(buffers + kept);
        }
        assertThat(DirectReadableFile.liveBuffers()).isZero();
        assertThat(DirectMemory.count()).isEqualTo(buffers);
    }

    /**
     * A window takes the idle buffer that fits it best, not the most recently used one: a compaction's 1 MiB window
     * finds its buffer again after a point read gave back a small one, and a point read takes the small one, not the
     * 1 MiB buffer (no buffer allocated, none freed).
     */
    @Test
    void aWindowTakesTheIdleBufferThatFitsItBest() throws Exception {
        assertNoDirectFileOpen();
        Path p = write("fit", new byte[4096]);
        try (DirectReadableFile f = (DirectReadableFile) FileSystem.disk().newDirectReadableFile(p)) {
            int big = DirectReadableFile.MAX_REUSED_BUFFER;
            DirectReadableFile.Buffer large = f.acquire(big);
            DirectReadableFile.Buffer small = f.acquire(4096);
            DirectReadableFile.giveBack(large);
            DirectReadableFile.giveBack(small); // the most recently used
            assertThat(f.acquire(big)).as("the idle 1 MiB buffer").isSameAs(large);
            DirectReadableFile.giveBack(large); // now the most recently used
            assertThat(f.acquire(4096)).as("the idle 64 KiB buffer").isSameAs(small);
            DirectReadableFile.giveBack(small);
            assertThat(DirectReadableFile.liveBuffers()).isEqualTo(2);
        }
        assertThat(DirectReadableFile.liveBuffers()).isZero();
    }

    /**
     * Reads racing the close of the only open file (each read returns the file's bytes or fails with an
     * {@link IOException}) leave no buffer behind and free none twice: whether the close's release finds a buffer idle
     * in the pool (and frees it), or it is in use or not yet taken (its read frees it when it gives it back, seeing no
     * file open).
     */
    @Test
    void readsRacingTheLastCloseLeaveNoBuffer() throws Exception {
        assertNoDirectFileOpen();
        DirectMemory.withoutCollection(this::readsRacingTheLastCloseAttempt);
    }

    private void readsRacingTheLastCloseAttempt() throws Exception {
        long seed = TestSeeds.seed("DirectReadableFileTest.race");
        Random rnd = new Random(seed);
        byte[] content = randomBytes(6 * 4096 + 500, rnd);
        Path p = write("race", content);
        long buffers = DirectMemory.count();
        long bytes = DirectMemory.bytes();
        for (int round = 0; round < 200; round++) {
            ReadableFile f = FileSystem.disk().newDirectReadableFile(p);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch reading = new CountDownLatch(2);
            Thread[] readers = new Thread[2];
            for (int t = 0; t < readers.length; t++) {
                long readerSeed = rnd.nextLong();
                readers[t] = new Thread(() -> {
                    Random r = new Random(readerSeed);
                    reading.countDown();
                    try {
                        while (true) {
                            int pos = r.nextInt(content.length);
                            int len = r.nextInt(Math.min(content.length - pos, 9000) + 1);
                            byte[] dst = new byte[len];
                            try {
                                f.readFully(pos, dst, 0, len);
                            } catch (IOException closed) {
                                return; // the close won the race
                            }
                            assertThat(dst)
                                    .as("seed %d pos %d len %d", seed, pos, len)
                                    .isEqualTo(Arrays.copyOfRange(content, pos, pos + len));
                        }
                    } catch (Throwable e) {
                        failure.set(e);
                    }
                });
                readers[t].start();
            }
            reading.await();
            if (rnd.nextBoolean()) {
                Thread.sleep(0, rnd.nextInt(500_000));
            }
            f.close();
            for (Thread t : readers) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("seed " + seed + " round " + round, failure.get());
            }
            assertThat(DirectReadableFile.liveBuffers())
                    .as("seed %d round %d: no buffer kept", seed, round)
                    .isZero();
            assertThat(DirectMemory.count()).as("seed %d round %d", seed, round).isEqualTo(buffers);
            assertThat(DirectMemory.bytes()).isEqualTo(bytes);
        }
    }

    /**
     * A direct file closed twice is counted closed once: while another direct file is open, the pooled buffer stays (a
     * second count would release it under that file, and the count of open files would go below zero).
     */
    @Test
    void aFileClosedTwiceIsCountedOnce() throws IOException {
        assertNoDirectFileOpen();
        long seed = TestSeeds.seed("DirectReadableFileTest.closeTwice");
        byte[] content = randomBytes(2 * 4096 + 11, new Random(seed));
        Path p = write("twice", content);
        ReadableFile f = FileSystem.disk().newDirectReadableFile(p);
        try (ReadableFile g = FileSystem.disk().newDirectReadableFile(p)) {
            assertThat(DirectReadableFile.openFiles()).isEqualTo(2);
            check(f, content, 100, 5000, "seed " + seed);
            assertThat(DirectReadableFile.liveBuffers()).as("the pooled buffer").isEqualTo(1);
            f.close();
            f.close();
            assertThat(DirectReadableFile.openFiles())
                    .as("the second close counts nothing")
                    .isEqualTo(1);
            assertThat(DirectReadableFile.liveBuffers())
                    .as("the pooled buffer, kept while another file is open")
                    .isEqualTo(1);
            check(g, content, 4000, 4000, "seed " + seed);
        }
        assertThat(DirectReadableFile.openFiles()).isZero();
        assertThat(DirectReadableFile.liveBuffers()).isZero();
    }

    /** {@code length} bytes from {@code rnd}. */
    private static byte[] randomBytes(int length, Random rnd) {
        byte[] b = new byte[length];
        rnd.nextBytes(b);
        return b;
    }

    /** Writes {@code content} to the file {@code name} of the test's directory. */
    private Path write(String name, byte[] content) throws IOException {
        return Files.write(dir.resolve(name), content);
    }

    private static void assertNoDirectFileOpen() {
        assertThat(DirectReadableFile.openFiles())
                .as("direct files left open by an earlier test")
                .isZero();
    }

    /** Runs {@code read} once on each of the pool's two threads (both busy at once, so each thread runs one). */
    private static void onBothThreads(ExecutorService pool, DirectMemory.Check read) throws Exception {
        CyclicBarrier both = new CyclicBarrier(2);
        List<Future<?>> runs = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            runs.add(pool.submit(() -> {
                both.await(30, TimeUnit.SECONDS);
                read.run();
                return null;
            }));
        }
        for (Future<?> run : runs) {
            try {
                run.get(60, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw new AssertionError(e.getCause());
            }
        }
    }

    /** Runs {@code body} on a new thread and waits for it; throws what it threw, with the seed. */
    private static void onNewThread(long seed, DirectMemory.Check body) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.start();
        t.join();
        if (failure.get() != null) {
            throw new AssertionError("seed " + seed, failure.get());
        }
    }

    private static void check(ReadableFile f, byte[] content, int pos, int len, String ctx) throws IOException {
        byte[] dst = new byte[len + 2];
        f.readFully(pos, dst, 1, len);
        assertThat(Arrays.copyOfRange(dst, 1, 1 + len))
                .as("pos %d len %d %s", pos, len, ctx)
                .isEqualTo(Arrays.copyOfRange(content, pos, pos + len));
    }

    @Test
    void aFileSystemWithoutDirectReadsRefusesNamingThePath() throws IOException {
        Path p = dir.resolve("x");
        Files.write(p, new byte[10]);
        FileSystem plain = new FileSystemWithoutDirectReads(FileSystem.disk());
        assertThatThrownBy(() -> plain.newDirectReadableFile(p))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("does not support direct reads")
                .hasMessageContaining(p.toString());
        // the fault-injecting file system passes the direct open through, and its faults apply
        FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
        try (ReadableFile f = ffs.newDirectReadableFile(p)) {
            byte[] b = new byte[3];
            f.readFully(7, b, 0, 3);
            ffs.inject(FaultInjectingFileSystem.on(FaultInjectingFileSystem.Op.READ, "x"));
            assertThatThrownBy(() -> f.readFully(0, b, 0, 3)).isInstanceOf(InjectedIOException.class);
        }
        FaultInjectingFileSystem overPlain = new FaultInjectingFileSystem(plain);
        assertThatThrownBy(() -> overPlain.newDirectReadableFile(p))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("does not support direct reads");
    }
}
