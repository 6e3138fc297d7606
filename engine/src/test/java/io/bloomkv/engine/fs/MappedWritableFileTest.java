package io.bloomkv.engine.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.record.LogReader;
import io.bloomkv.engine.internal.record.LogWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * Appends through {@link FileSystem#newMappedWritableFile}: the file holds exactly the bytes appended, across regions
 * and with appends larger than one; while it is open (as a crash leaves it) the file runs on to the end of its region
 * in zeros, which a log reader reads as the end of the log; close cuts the file to its size and unmaps every region
 * exactly once.
 */
@EnabledIf(
        value = "io.bloomkv.engine.fs.MappedWritableFile#supported",
        disabledReason = "mapped writes need Linux with native access")
class MappedWritableFileTest {
    @TempDir
    Path dir;

    @Test
    void holdsExactlyTheBytesAppendedAcrossRegions() throws IOException {
        long seed = TestSeeds.seed("MappedWritableFileTest");
        Random rnd = new Random(seed);
        Path p = dir.resolve("data.log");
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        long regionsBefore = DiskFileSystem.liveMappedWritableRegions();
        WritableFile f = FileSystem.disk().newMappedWritableFile(p);
        try {
            assertThat(f).isInstanceOf(MappedWritableFile.class);
            assertThat(f.size()).isZero();
            assertThat(Files.size(p))
                    .as("nothing allocated before the first append")
                    .isZero();
            // one append that fills the first region exactly, small ones across the growing regions, one larger
            // than the largest region, an empty one
            byte[] first = new byte[MappedWritableFile.FIRST_REGION];
            rnd.nextBytes(first);
            f.append(first);
            expected.write(first, 0, first.length);
            List<Integer> sizes = new ArrayList<>();
            for (int i = 0; i < 1500; i++) {
                sizes.add(rnd.nextInt(3000));
            }
            sizes.add(0);
            sizes.add(MappedWritableFile.REGION + 12345);
            for (int i = 0; i < 300; i++) {
                sizes.add(rnd.nextInt(3000));
            }
            for (int len : sizes) {
                byte[] b = new byte[len + 3];
                rnd.nextBytes(b);
                f.append(b, 1, len);
                expected.write(b, 1, len);
                assertThat(f.size()).isEqualTo(expected.size());
            }
            f.flush();
            f.sync();
            assertThat(DiskFileSystem.liveMappedWritableRegions() - regionsBefore)
                    .as("the region written and at most the one prepared after it")
                    .isBetween(1L, 2L);

            // While open, as a crash would leave it: the bytes, then zeros to the end of the last region (or of the
            // one prepared after it).
            byte[] onDisk = Files.readAllBytes(p);
            byte[] want = expected.toByteArray();
            assertThat(onDisk.length).isGreaterThanOrEqualTo(want.length);
            assertThat(onDisk.length - want.length).isLessThan(2 * MappedWritableFile.REGION);
            assertThat(Arrays.copyOf(onDisk, want.length)).as("seed " + seed).isEqualTo(want);
            for (int i = want.length; i < onDisk.length; i++) {
                assertThat(onDisk[i]).as("byte %d of the allocated tail", i).isZero();
            }
        } finally {
            f.close();
        }
        f.close(); // idempotent
        assertThat(DiskFileSystem.liveMappedWritableRegions()).isEqualTo(regionsBefore);
        assertThat(Files.readAllBytes(p)).as("seed " + seed).isEqualTo(expected.toByteArray());
        assertThatThrownBy(() -> f.append(new byte[1])).isInstanceOf(IOException.class);
        assertThatThrownBy(f::sync).isInstanceOf(IOException.class);
    }

    @Test
    void theRegionAfterTheOneWrittenIsPreparedAheadAndTaken() throws Exception {
        Path p = dir.resolve("ahead.log");
        long regionsBefore = DiskFileSystem.liveMappedWritableRegions();
        WritableFile f = FileSystem.disk().newMappedWritableFile(p);
        byte[] b = new byte[MappedWritableFile.FIRST_REGION + 10]; // into the second region (128 KiB at 64 KiB)
        Arrays.fill(b, (byte) 7);
        try {
            f.append(b);
            // The third region (256 KiB at 192 KiB) is allocated and mapped in the background: the file grows to its
            // end, and two regions are mapped, the written one and the prepared one.
            long want = 3 * MappedWritableFile.FIRST_REGION + 4 * MappedWritableFile.FIRST_REGION;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while ((Files.size(p) < want || DiskFileSystem.liveMappedWritableRegions() - regionsBefore < 2)
                    && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(Files.size(p))
                    .as("allocated through the prepared region")
                    .isEqualTo(want);
            assertThat(DiskFileSystem.liveMappedWritableRegions() - regionsBefore)
                    .isEqualTo(2);
            byte[] c = new byte[2 * MappedWritableFile.FIRST_REGION]; // to the end of the second region and beyond
            Arrays.fill(c, (byte) 9);
            f.append(c);
            assertThat(DiskFileSystem.liveMappedWritableRegions() - regionsBefore)
                    .as("the prepared region taken, the next one prepared")
                    .isBetween(1L, 2L);
        } finally {
            f.close();
        }
        assertThat(DiskFileSystem.liveMappedWritableRegions()).isEqualTo(regionsBefore);
        byte[] onDisk = Files.readAllBytes(p);
        assertThat(onDisk).hasSize(b.length + 2 * MappedWritableFile.FIRST_REGION);
        for (int i = 0; i < onDisk.length; i++) {
            if (onDisk[i] != (i < b.length ? 7 : 9)) {
                throw new AssertionError("byte " + i + " is " + onDisk[i]);
            }
        }
    }

    @Test
    void filesWrittenAndSyncedFromSeveralThreadsHoldTheirBytes() throws Exception {
        long seed = TestSeeds.seed("MappedWritableFileTest.threads");
        long regionsBefore = DiskFileSystem.liveMappedWritableRegions();
        int threads = 4;
        List<java.util.concurrent.Future<byte[]>> written = new ArrayList<>();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            for (int t = 0; t < threads; t++) {
                int id = t;
                written.add(pool.submit(() -> {
                    // threads 0 and 2 sync now and then (their regions are then prepared without dirtying pages)
                    Random rnd = new Random(seed + id);
                    ByteArrayOutputStream expected = new ByteArrayOutputStream();
                    try (WritableFile f = FileSystem.disk().newMappedWritableFile(dir.resolve("t" + id + ".log"))) {
                        while (expected.size() < 3 * MappedWritableFile.REGION) {
                            byte[] r = new byte[1 + rnd.nextInt(5000)];
                            rnd.nextBytes(r);
                            f.append(r);
                            expected.write(r, 0, r.length);
                            if (id % 2 == 0 && rnd.nextInt(100) == 0) {
                                f.sync();
                            }
                        }
                    }
                    return expected.toByteArray();
                }));
            }
            for (int t = 0; t < threads; t++) {
                byte[] want = written.get(t).get();
                assertThat(Files.readAllBytes(dir.resolve("t" + t + ".log")))
                        .as("file %d, seed %d", t, seed)
                        .isEqualTo(want);
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES))
                    .isTrue();
        }
        assertThat(DiskFileSystem.liveMappedWritableRegions()).isEqualTo(regionsBefore);
    }

    @Test
    void aLogLeftOpenReadsToItsLastRecord() throws IOException {
        long seed = TestSeeds.seed("MappedWritableFileTest.log");
        Random rnd = new Random(seed);
        Path p = dir.resolve("000007.log");
        List<byte[]> records = new ArrayList<>();
        LogWriter w = new LogWriter(FileSystem.disk().newMappedWritableFile(p));
        try {
            // records of every size class: within a block, across blocks, across a region boundary
            while (w.size() < MappedWritableFile.REGION + 100_000) {
                byte[] r = new byte[rnd.nextInt(10) == 0 ? 40_000 + rnd.nextInt(40_000) : rnd.nextInt(300)];
                rnd.nextBytes(r);
                w.addRecord(r);
                records.add(r);
            }
            w.flush();
            // The file as a kill -9 leaves it: every record, then the zero padding of the allocated region.
            long logical = w.size();
            try (LogReader r = new LogReader(FileSystem.disk().newReadableFile(p))) {
                assertThat(readAll(r)).as("seed " + seed).containsExactlyElementsOf(records);
                assertThat(r.fileSize()).isGreaterThan(logical);
                assertThat(r.tailDropped())
                        .as("the zero padding is a torn tail")
                        .isTrue();
                assertThat(r.lastGoodOffset()).isEqualTo(logical);
            }
        } finally {
            w.close();
        }
        try (LogReader r = new LogReader(FileSystem.disk().newReadableFile(p))) {
            assertThat(readAll(r)).as("seed " + seed).containsExactlyElementsOf(records);
            assertThat(r.tailDropped()).as("closed: cut to its records").isFalse();
        }
    }

    @Test
    void fileSystemsWithoutMappedWritesRefuse() throws IOException {
        FileSystem mem = new InMemoryFileSystem();
        assertThat(mem.supportsMappedWrites()).isFalse();
        assertThatThrownBy(() -> mem.newMappedWritableFile(dir.resolve("x.log")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("does not support memory-mapped writes");
        // A forwarding file system opts in explicitly: its wrapped writable files would not see mapped ones.
        FileSystem forwarding = new ForwardingFileSystem(FileSystem.disk()) {};
        assertThat(forwarding.supportsMappedWrites()).isFalse();
        assertThat(new NoFsyncFileSystem().supportsMappedWrites()).isTrue();
        assertThat(new FaultInjectingFileSystem(FileSystem.disk()).supportsMappedWrites())
                .isTrue();
        assertThat(new FaultInjectingFileSystem(mem).supportsMappedWrites()).isFalse();
    }

    private static List<byte[]> readAll(LogReader r) throws IOException {
        List<byte[]> out = new ArrayList<>();
        byte[] rec;
        while ((rec = r.readRecord()) != null) {
            out.add(rec);
        }
        return out;
    }
}
