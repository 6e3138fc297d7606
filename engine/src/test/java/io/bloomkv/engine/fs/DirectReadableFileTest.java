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
            // a read larger than the per-thread buffer
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
     * A thread's reads keep one direct buffer, however many reads and files: a new thread's first read allocates it
     * (64 KiB and an alignment, for reads of up to that window), and no later read of such a window, of this file or of
     * another opened and closed meanwhile, allocates another (the JVM's count of direct buffers and their bytes never
     * go above that one buffer). The reads run on a thread of their own, which starts without a buffer; what they find
     * is checked here.
     */
    @Test
    void aThreadsReadsReuseOneDirectBuffer() throws Exception {
        DirectMemory.withoutCollection(this::aThreadsReadsReuseOneDirectBufferAttempt);
    }

    private void aThreadsReadsReuseOneDirectBufferAttempt() throws Exception {
        long seed = TestSeeds.seed("DirectReadableFileTest.buffers");
        Random rnd = new Random(seed);
        byte[] content = new byte[5 * 4096 + 1234];
        rnd.nextBytes(content);
        Path p = dir.resolve("data");
        Path q = dir.resolve("other");
        Files.write(p, content);
        Files.write(q, content);
        onNewThread(seed, () -> {
            try (ReadableFile f = FileSystem.disk().newDirectReadableFile(p)) {
                int align = ((DirectReadableFile) f).alignment();
                long buffers = DirectMemory.count();
                long bytes = DirectMemory.bytes();
                long oneBuffer = (64 << 10) + align;
                check(f, content, 0, 1, "seed " + seed);
                assertThat(DirectMemory.count())
                        .as("the thread's buffer, allocated")
                        .isEqualTo(buffers + 1);
                assertThat(DirectMemory.bytes()).as("64 KiB and an alignment").isEqualTo(bytes + oneBuffer);
                for (int i = 0; i < 500; i++) {
                    int pos = rnd.nextInt(content.length);
                    int len = rnd.nextInt(Math.min(content.length - pos, 9000) + 1);
                    if (i % 100 == 50) {
                        try (ReadableFile g = FileSystem.disk().newDirectReadableFile(q)) {
                            check(g, content, pos, len, "seed " + seed + ", another file");
                        }
                    } else {
                        check(f, content, pos, len, "seed " + seed);
                    }
                    // at most: a collection may free unrelated buffers meanwhile, never add this thread's
                    assertThat(DirectMemory.count())
                            .as("seed %d read %d: no buffer beside the thread's", seed, i)
                            .isLessThanOrEqualTo(buffers + 1);
                    assertThat(DirectMemory.bytes())
                            .as("seed %d read %d", seed, i)
                            .isLessThanOrEqualTo(bytes + oneBuffer);
                }
            }
        });
    }

    /**
     * A read larger than a thread keeps frees its own buffer when it returns, and a thread's buffer outgrown by a
     * larger window is freed when it is replaced: the JVM's count of direct buffers and their bytes come back to the
     * thread's one buffer, with no collection in between (on a thread of its own, which starts without a buffer).
     */
    @Test
    void largeReadsAndOutgrownBuffersAreFreedAtOnce() throws Exception {
        DirectMemory.withoutCollection(this::largeReadsAndOutgrownBuffersAreFreedAttempt);
    }

    private void largeReadsAndOutgrownBuffersAreFreedAttempt() throws Exception {
        long seed = TestSeeds.seed("DirectReadableFileTest.free");
        Random rnd = new Random(seed);
        byte[] content = randomBytes(DirectReadableFile.MAX_REUSED_BUFFER + 3 * 4096 + 77, rnd);
        Path p = write("large", content);
        onNewThread(seed, () -> {
            try (ReadableFile f = FileSystem.disk().newDirectReadableFile(p)) {
                int align = ((DirectReadableFile) f).alignment();
                long buffers = DirectMemory.count();
                long bytes = DirectMemory.bytes();
                check(f, content, 0, 100, "seed " + seed);
                assertThat(DirectMemory.count()).as("the thread's first buffer").isEqualTo(buffers + 1);
                assertThat(DirectMemory.bytes()).isEqualTo(bytes + (64 << 10) + align);
                check(f, content, 0, 200 << 10, "seed " + seed + ", a larger window");
                assertThat(DirectMemory.count()).as("the outgrown buffer freed").isEqualTo(buffers + 1);
                long grown = DirectMemory.bytes() - bytes;
                assertThat(grown)
                        .as("one buffer of the larger window and an alignment")
                        .isBetween(200L << 10, (200L << 10) + 2L * align);
                check(f, content, 5, content.length - 5, "seed " + seed + ", past the reused size");
                assertThat(DirectMemory.count())
                        .as("the large read's own buffer freed")
                        .isEqualTo(buffers + 1);
                assertThat(DirectMemory.bytes()).isEqualTo(bytes + grown);
            }
        });
    }

    /**
     * Closing the last open direct file frees every thread's buffer, also of threads that live on (a pool's threads
     * after the database they read is closed): the JVM's count of direct buffers and their bytes come back to where
     * they were, with no collection in between. A read of a file opened later gets a new buffer.
     */
    @Test
    void everyThreadsBufferIsFreedWhenTheLastDirectFileCloses() throws Exception {
        assertNoDirectFileOpen();
        DirectMemory.withoutCollection(this::everyThreadsBufferIsFreedAttempt);
    }

    private void everyThreadsBufferIsFreedAttempt() throws Exception {
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
                    assertThat(DirectMemory.count())
                            .as("seed %d round %d: each pool thread's buffer", seed, round)
                            .isEqualTo(buffers + 2);
                    assertThat(DirectReadableFile.liveThreadBuffers()).isEqualTo(2);
                }
                assertThat(DirectMemory.count())
                        .as("seed %d round %d: freed at the last close, the threads alive", seed, round)
                        .isEqualTo(buffers);
                assertThat(DirectMemory.bytes()).isEqualTo(bytes);
                assertThat(DirectReadableFile.liveThreadBuffers()).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A thread that ended keeps no buffer past the next thread's first read, while a file stays open: the next thread's
     * allocation frees it, so a database read by short-lived threads holds one buffer per live thread.
     */
    @Test
    void anEndedThreadsBufferIsFreedAtTheNextThreadsFirstRead() throws Exception {
        assertNoDirectFileOpen();
        DirectMemory.withoutCollection(this::anEndedThreadsBufferAttempt);
    }

    private void anEndedThreadsBufferAttempt() throws Exception {
        long seed = TestSeeds.seed("DirectReadableFileTest.ended");
        byte[] content = randomBytes(2 * 4096 + 7, new Random(seed));
        Path p = write("ended", content);
        long buffers = DirectMemory.count();
        try (ReadableFile f = FileSystem.disk().newDirectReadableFile(p)) {
            for (int i = 0; i < 4; i++) {
                int pos = i * 1000;
                onNewThread(seed, () -> check(f, content, pos, 3000, "seed " + seed));
                assertThat(DirectMemory.count())
                        .as("seed %d thread %d: only the last ended thread's buffer", seed, i)
                        .isEqualTo(buffers + 1);
                assertThat(DirectReadableFile.liveThreadBuffers()).isEqualTo(1);
            }
        }
        assertThat(DirectMemory.count()).isEqualTo(buffers);
        assertThat(DirectReadableFile.liveThreadBuffers()).isZero();
    }

    /**
     * Reads racing the close of the only open file (each read returns the file's bytes or fails with an
     * {@link IOException}) leave no buffer behind and free none twice: whether the close's release finds a buffer idle
     * (and frees it), in use (and leaves it to its read), or not yet allocated (the read frees it, seeing no file open).
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
            assertThat(DirectReadableFile.liveThreadBuffers())
                    .as("seed %d round %d: no thread buffer kept", seed, round)
                    .isZero();
            assertThat(DirectMemory.count()).as("seed %d round %d", seed, round).isEqualTo(buffers);
            assertThat(DirectMemory.bytes()).isEqualTo(bytes);
        }
    }

    /**
     * A direct file closed twice is counted closed once: while another direct file is open, a thread's buffer stays
     * (a second count would release it under that file, and the count of open files would go below zero).
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
            assertThat(DirectReadableFile.liveThreadBuffers())
                    .as("this thread's buffer")
                    .isEqualTo(1);
            f.close();
            f.close();
            assertThat(DirectReadableFile.openFiles())
                    .as("the second close counts nothing")
                    .isEqualTo(1);
            assertThat(DirectReadableFile.liveThreadBuffers())
                    .as("this thread's buffer, kept while another file is open")
                    .isEqualTo(1);
            check(g, content, 4000, 4000, "seed " + seed);
        }
        assertThat(DirectReadableFile.openFiles()).isZero();
        assertThat(DirectReadableFile.liveThreadBuffers()).isZero();
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

    /** Runs {@code body} on a new thread (which starts without a read buffer); throws what it threw, with the seed. */
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
