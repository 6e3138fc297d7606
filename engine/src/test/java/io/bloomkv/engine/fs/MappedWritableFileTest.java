package io.bloomkv.engine.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Appends through {@link FileSystem#newMappedWritableFile}: the file holds exactly the bytes appended, across regions
 * and with appends larger than one; while it is open (as a crash leaves it) the file runs on to the end of its region
 * in zeros, which a log reader reads as the end of the log; close cuts the file to its size and unmaps every region
 * exactly once.
 */
class MappedWritableFileTest {
    @TempDir
    Path dir;

    @BeforeEach
    void linuxOnly() {
        assumeTrue(FileSystem.disk().supportsMappedWrites(), "mapped writes need Linux with native access");
    }

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
                    .as("one region mapped at a time")
                    .isEqualTo(1);

            // While open, as a crash would leave it: the bytes, then zeros to the end of the last region.
            byte[] onDisk = Files.readAllBytes(p);
            byte[] want = expected.toByteArray();
            assertThat(onDisk.length).isGreaterThanOrEqualTo(want.length);
            assertThat(onDisk.length - want.length).isLessThan(MappedWritableFile.REGION);
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
