package io.bloomkv.engine.internal.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.fs.WritableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogTest {
    private static final int BLOCK = LogFormat.BLOCK_SIZE;
    private static final int HEADER = LogFormat.HEADER_SIZE;

    @TempDir
    Path dir;

    private final FileSystem fs = FileSystem.disk();
    private long seed;
    private Random rnd;

    @BeforeEach
    void seed() {
        seed = TestSeeds.seed("LogTest", "wal.seed");
        rnd = new Random(seed);
    }

    private byte[] payload(int n) {
        byte[] b = new byte[n];
        rnd.nextBytes(b);
        return b;
    }

    /** Writes the records, returning the end offset of each. */
    private long[] write(Path p, List<byte[]> records) throws IOException {
        long[] ends = new long[records.size()];
        try (LogWriter w = new LogWriter(fs.newWritableFile(p))) {
            for (int i = 0; i < records.size(); i++) {
                w.addRecord(records.get(i));
                ends[i] = w.size();
            }
            w.sync();
        }
        return ends;
    }

    private List<byte[]> readAll(Path p, LogReader[] out) throws IOException {
        List<byte[]> got = new ArrayList<>();
        LogReader r = new LogReader(fs.newReadableFile(p));
        out[0] = r;
        try (r) {
            byte[] rec;
            while ((rec = r.readRecord()) != null) {
                got.add(rec);
            }
        }
        return got;
    }

    private List<byte[]> mixedRecords(int n) {
        List<byte[]> recs = new ArrayList<>();
        int[] sizes = {0, 1, 7, 100, BLOCK - HEADER, BLOCK - HEADER - 1, BLOCK, 3 * BLOCK + 5, 1000};
        for (int i = 0; i < n; i++) {
            int size = i < sizes.length ? sizes[i] : rnd.nextInt(rnd.nextBoolean() ? 200 : 3 * BLOCK);
            recs.add(payload(size));
        }
        return recs;
    }

    @Test
    void roundTripAcrossBlockBoundaries() throws IOException {
        List<byte[]> recs = mixedRecords(200);
        Path p = dir.resolve("000001.log");
        write(p, recs);
        LogReader[] r = new LogReader[1];
        List<byte[]> got = readAll(p, r);
        assertThat(got).as("seed %d", seed).hasSize(recs.size());
        for (int i = 0; i < recs.size(); i++) {
            assertThat(got.get(i)).as("record %d seed %d", i, seed).isEqualTo(recs.get(i));
        }
        assertThat(r[0].tailDropped()).isFalse();
        assertThat(r[0].lastGoodOffset()).isEqualTo(Files.size(p));
    }

    @Test
    void blockTrailerShorterThanAHeaderIsZeroFilled() throws IOException {
        Path p = dir.resolve("trailer.log");
        // leave exactly 3 bytes in the first block
        List<byte[]> recs = List.of(payload(BLOCK - HEADER - 3), payload(10));
        long[] ends = write(p, recs);
        assertThat(ends[0]).isEqualTo(BLOCK - 3);
        assertThat(ends[1]).isEqualTo(BLOCK + HEADER + 10);
        byte[] file = Files.readAllBytes(p);
        assertThat(Arrays.copyOfRange(file, BLOCK - 3, BLOCK)).containsExactly(0, 0, 0);
        List<byte[]> got = readAll(p, new LogReader[1]);
        assertThat(got).hasSize(2);
        assertThat(got.get(1)).isEqualTo(recs.get(1));
    }

    @Test
    void emptyLogHasNoRecords() throws IOException {
        Path p = dir.resolve("empty.log");
        write(p, List.of());
        LogReader[] r = new LogReader[1];
        assertThat(readAll(p, r)).isEmpty();
        assertThat(r[0].tailDropped()).isFalse();
    }

    /** Every truncation length of the last record (which spans blocks) is cut cleanly at the previous record. */
    @Test
    void tornTailIsCutAtEveryTruncationLength() throws IOException {
        List<byte[]> recs = new ArrayList<>();
        recs.add(payload(BLOCK - 60));
        recs.add(payload(20));
        recs.add(payload(100)); // the last record: starts 26 bytes before the end of block 0, crosses into block 1
        Path full = dir.resolve("full.log");
        long[] ends = write(full, recs);
        byte[] bytes = Files.readAllBytes(full);
        long lastStart = ends[1];
        assertThat(lastStart).isEqualTo(BLOCK - 26);
        assertThat(ends[2]).isGreaterThan(BLOCK);
        for (long cut = lastStart; cut < bytes.length; cut++) {
            Path p = dir.resolve("cut.log");
            Files.write(p, Arrays.copyOf(bytes, (int) cut));
            LogReader[] r = new LogReader[1];
            List<byte[]> got = readAll(p, r);
            assertThat(got).as("cut at %d", cut).hasSize(2);
            assertThat(got.get(1)).isEqualTo(recs.get(1));
            assertThat(r[0].lastGoodOffset()).as("cut at %d", cut).isEqualTo(lastStart);
            assertThat(r[0].tailDropped()).as("cut at %d", cut).isEqualTo(cut > lastStart);
        }
    }

    @Test
    void tornTailOfASmallRecordAtEveryLength() throws IOException {
        List<byte[]> recs = List.of(payload(50), payload(30), payload(40));
        Path full = dir.resolve("full2.log");
        long[] ends = write(full, recs);
        byte[] bytes = Files.readAllBytes(full);
        for (int cut = (int) ends[1] + 1; cut < bytes.length; cut++) {
            Path p = dir.resolve("cut2.log");
            Files.write(p, Arrays.copyOf(bytes, cut));
            LogReader[] r = new LogReader[1];
            assertThat(readAll(p, r)).as("cut at %d", cut).hasSize(2);
            assertThat(r[0].tailDropped()).isTrue();
            assertThat(r[0].droppedBytes()).isEqualTo(cut - ends[1]);
        }
    }

    @Test
    void zeroPaddingAtTheEndIsATornTail() throws IOException {
        List<byte[]> recs = List.of(payload(50), payload(60));
        Path p = dir.resolve("zeros.log");
        long[] ends = write(p, recs);
        byte[] bytes = Files.readAllBytes(p);
        for (int zeros : new int[] {1, HEADER, 100, BLOCK + 3}) {
            byte[] padded = Arrays.copyOf(bytes, bytes.length + zeros);
            Files.write(p, padded);
            LogReader[] r = new LogReader[1];
            assertThat(readAll(p, r)).as("%d zeros", zeros).hasSize(2);
            assertThat(r[0].tailDropped()).isTrue();
            assertThat(r[0].lastGoodOffset()).isEqualTo(ends[1]);
        }
    }

    @Test
    void corruptLastRecordIsATornTail() throws IOException {
        List<byte[]> recs = List.of(payload(50), payload(60), payload(70));
        Path p = dir.resolve("lastbad.log");
        long[] ends = write(p, recs);
        byte[] bytes = Files.readAllBytes(p);
        bytes[(int) ends[1] + HEADER + 5] ^= 0x10; // payload of the last record
        Files.write(p, bytes);
        LogReader[] r = new LogReader[1];
        assertThat(readAll(p, r)).hasSize(2);
        assertThat(r[0].tailDropped()).isTrue();
        assertThat(r[0].lastGoodOffset()).isEqualTo(ends[1]);
    }

    @Test
    void midLogCorruptionIsAnErrorNamingFileAndOffset() throws IOException {
        List<byte[]> recs = mixedRecords(40);
        Path clean = dir.resolve("clean.log");
        long[] ends = write(clean, recs);
        byte[] bytes = Files.readAllBytes(clean);
        for (int victim : new int[] {0, 3, 10, 25}) {
            long start = victim == 0 ? 0 : ends[victim - 1];
            // damage the header, the start and the end of the record's payload in turn
            long[] spots = {start, start + 4, start + 6, start + HEADER, ends[victim] - 1};
            for (long spot : spots) {
                if (spot >= ends[victim]) {
                    continue; // an empty record has no payload byte
                }
                byte[] copy = bytes.clone();
                copy[(int) spot] ^= 0x41;
                Path p = dir.resolve("bad.log");
                Files.write(p, copy);
                List<byte[]> got = new ArrayList<>();
                try (LogReader r = new LogReader(fs.newReadableFile(p))) {
                    assertThatThrownBy(() -> {
                                byte[] rec;
                                while ((rec = r.readRecord()) != null) {
                                    got.add(rec);
                                }
                            })
                            .as("record %d, byte %d, seed %d", victim, spot, seed)
                            .isInstanceOfSatisfying(CorruptionException.class, e -> {
                                assertThat(e.file()).isEqualTo(p);
                                assertThat(e.offset()).isBetween(start, ends[victim]);
                            });
                }
                assertThat(got)
                        .as("records before the damage are returned intact")
                        .hasSize(victim);
                for (int i = 0; i < victim; i++) {
                    assertThat(got.get(i)).isEqualTo(recs.get(i));
                }
            }
        }
    }

    @Test
    void missingMiddleBlockIsCorruption() throws IOException {
        List<byte[]> recs = List.of(payload(5 * BLOCK), payload(10));
        Path p = dir.resolve("hole.log");
        write(p, recs);
        byte[] bytes = Files.readAllBytes(p);
        Arrays.fill(bytes, 2 * BLOCK, 3 * BLOCK, (byte) 0);
        Files.write(p, bytes);
        try (LogReader r = new LogReader(fs.newReadableFile(p))) {
            assertThatThrownBy(r::readRecord).isInstanceOfSatisfying(CorruptionException.class, e -> {
                assertThat(e.file()).isEqualTo(p);
                assertThat(e.offset()).as("the damaged record starts at 0").isZero();
                assertThat(e.getMessage()).contains("hole.log");
            });
        }
    }

    @Test
    void simulatedCrashLeavesOnlyWholeRecords() throws IOException {
        FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
        for (int round = 0; round < 30; round++) {
            Path p = dir.resolve("crash" + round + ".log");
            List<byte[]> recs = mixedRecords(30);
            LogWriter w = new LogWriter(ffs.newWritableFile(p));
            int synced = rnd.nextInt(recs.size());
            for (int i = 0; i < recs.size(); i++) {
                w.addRecord(recs.get(i));
                if (i == synced - 1) {
                    w.sync();
                }
            }
            w.flush();
            ffs.crash(rnd);
            if (!Files.exists(p)) {
                assertThat(synced).isZero();
                continue;
            }
            List<byte[]> got = new ArrayList<>();
            try (LogReader r = new LogReader(ffs.newReadableFile(p))) {
                byte[] rec;
                while ((rec = r.readRecord()) != null) {
                    got.add(rec);
                }
            }
            assertThat(got.size()).as("round %d seed %d", round, seed).isBetween(synced, recs.size());
            for (int i = 0; i < got.size(); i++) {
                assertThat(got.get(i)).as("round %d seed %d", round, seed).isEqualTo(recs.get(i));
            }
        }
    }

    @Test
    void writerRefusesAfterAnIoError() throws IOException {
        FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
        ffs.injectNth(FaultInjectingFileSystem.on(FaultInjectingFileSystem.Op.WRITE, "*.log"), 3);
        Path p = dir.resolve("err.log");
        try (LogWriter w = new LogWriter(ffs.newWritableFile(p))) {
            w.addRecord(payload(10)); // writes 1 and 2 (header, payload)
            assertThatThrownBy(() -> w.addRecord(payload(10))).isInstanceOf(IOException.class);
            assertThatThrownBy(() -> w.addRecord(payload(10)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("failed earlier");
            assertThatThrownBy(w::sync).isInstanceOf(IOException.class);
        }
    }

    @Test
    void readerOverAFileThatIsNotALog() throws IOException {
        Path p = dir.resolve("junk.log");
        Files.write(p, payload(1000));
        try (ReadableFile f = fs.newReadableFile(p);
                LogReader r = new LogReader(f)) {
            // random bytes hold no valid fragment: a torn tail from offset 0
            assertThat(r.readRecord()).isNull();
            assertThat(r.tailDropped()).isTrue();
            assertThat(r.lastGoodOffset()).isZero();
        }
    }

    /**
     * An unchecked exception from the file part-way through a record fails the writer as an I/O error does: no later
     * record follows the fragments already written, so the log reads back up to the record before.
     */
    @Test
    void anUncheckedFailureMidRecordStopsTheWriter() throws IOException {
        Path p = dir.resolve("unchecked.log");
        int[] appends = {0};
        WritableFile failing = new ForwardingFileSystem.ForwardingWritableFile(fs.newWritableFile(p)) {
            @Override
            public void append(byte[] b, int off, int len) throws IOException {
                if (++appends[0] == 4) { // the first record's two appends pass; the second's fragments fail part-way
                    throw new IllegalStateException("injected");
                }
                super.append(b, off, len);
            }
        };
        byte[] first = payload(100);
        try (LogWriter w = new LogWriter(failing)) {
            w.addRecord(first);
            assertThatThrownBy(() -> w.addRecord(payload(3 * BLOCK))).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> w.addRecord(payload(10)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("failed earlier");
        }
        List<byte[]> got = readAll(p, new LogReader[1]);
        assertThat(got).hasSize(1);
        assertThat(got.get(0)).isEqualTo(first);
    }

    /**
     * A mapped log is allocated ahead of its records and cut to them at close: a reader that opened it before the
     * close (a checkpoint copying the live log while a memtable switch closes it) sampled the longer size. It reads
     * every record and ends cleanly at the cut, with no EOFException from the blocks that are gone.
     */
    @Test
    void aLogCutAtCloseWhileReadEndsAtTheCut() throws IOException {
        Assumptions.assumeTrue(fs.supportsMappedWrites(), "mapped writes need native access on Linux");
        Path p = dir.resolve("cut-while-read.log");
        List<byte[]> recs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            recs.add(payload(1 + rnd.nextInt(2 * BLOCK / 3))); // about four blocks in all
        }
        LogWriter w = new LogWriter(fs.newMappedWritableFile(p));
        List<byte[]> got = new ArrayList<>();
        LogReader r;
        try {
            for (byte[] rec : recs) {
                w.addRecord(rec);
            }
            w.sync();
            // The region after the current one is allocated by a background thread: wait for it (a loaded machine
            // may not have run it yet), so that the reader samples a size at least a block past the records.
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (Files.size(p) <= w.size() + BLOCK && System.nanoTime() < deadline) {
                sleepMillis(1);
            }
            r = new LogReader(fs.newReadableFile(p));
            assertThat(r.fileSize()).as("allocated ahead, seed %d", seed).isGreaterThan(w.size() + BLOCK);
            got.add(r.readRecord()); // the reader is inside the first block when the log is cut
        } finally {
            w.close();
        }
        assertThat(Files.size(p)).as("cut at close").isEqualTo(w.size());
        try (r) {
            byte[] rec;
            while ((rec = r.readRecord()) != null) {
                got.add(rec);
            }
            assertThat(got).as("seed %d", seed).hasSize(recs.size());
            for (int i = 0; i < recs.size(); i++) {
                assertThat(got.get(i)).as("record %d seed %d", i, seed).isEqualTo(recs.get(i));
            }
            assertThat(r.lastGoodOffset()).isEqualTo(w.size());
        }
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
