package io.bloomkv.engine.internal.table;

import static io.bloomkv.engine.internal.table.TestTables.userKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.TestTables.Model;
import io.bloomkv.engine.internal.table.TestTables.Version;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TableCorruptionTest {
    @TempDir
    Path dir;

    private final FileSystem fs = FileSystem.disk();
    private long seed;
    private Random rnd;
    private Model model;
    private Path table;
    private byte[] bytes;
    private Footer footer;

    @BeforeEach
    void writeTable() throws IOException {
        seed = TestSeeds.seed("TableCorruptionTest", "table.seed");
        rnd = new Random(seed);
        model = TestTables.model(400, rnd);
        table = dir.resolve("000005.sst");
        TestTables.write(fs, table, model, TableBuilderOptions.defaults().blockSize(512));
        bytes = Files.readAllBytes(table);
        try (TableReader t = TableReader.open(fs, table, 5, null, null)) {
            footer = t.footer();
        }
    }

    private Path corrupt(long pos) throws IOException {
        byte[] copy = bytes.clone();
        copy[(int) pos] ^= 0x5a;
        Path p = dir.resolve("bad.sst");
        Files.write(p, copy);
        return p;
    }

    /** Every get either returns the model's answer or throws CorruptionException; returns how many threw. */
    private int checkReads(TableReader t, Path p) {
        int threw = 0;
        for (Map.Entry<byte[], List<Version>> e : model.versions.entrySet()) {
            byte[] uk = e.getKey();
            try {
                TableReader.Entry got = t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE);
                Version want = e.getValue().get(0);
                assertThat(got).as("seed %d", seed).isNotNull();
                assertThat(got.sequence()).isEqualTo(want.seq());
                assertThat(got.type()).isEqualTo(want.type());
                if (want.type() == ValueType.PUT) {
                    assertThat(got.value())
                            .as("never a wrong value, seed %d", seed)
                            .isEqualTo(want.value());
                }
            } catch (CorruptionException ex) {
                assertThat(ex.file()).isEqualTo(p);
                threw++;
            }
        }
        return threw;
    }

    @Test
    void flippedDataBlockByteIsCorruptionNamingFileAndBlock() throws IOException {
        List<TableReader.IndexEntry> index;
        try (TableReader t = TableReader.open(fs, table, 5, null, null)) {
            index = t.indexEntries();
        }
        TableReader.IndexEntry victim = index.get(rnd.nextInt(index.size()));
        long pos =
                victim.handle().offset() + rnd.nextInt((int) victim.handle().size() + TableFormat.BLOCK_TRAILER_SIZE);
        Path p = corrupt(pos);
        try (TableReader t = TableReader.open(fs, p, 5, null, new ReadCounters())) {
            byte[] uk = InternalKey.userKey(victim.separator());
            assertThatThrownBy(() -> t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE))
                    .as("byte %d, seed %d", pos, seed)
                    .isInstanceOfSatisfying(CorruptionException.class, e -> {
                        assertThat(e.file()).isEqualTo(p);
                        assertThat(e.offset()).isEqualTo(victim.handle().offset());
                        assertThat(e.getMessage()).contains("bad.sst");
                    });
            assertThat(checkReads(t, p)).isPositive();
            List<TableReader.BadBlock> bad = t.verifyChecksums();
            assertThat(bad).hasSize(1);
            assertThat(bad.get(0).kind()).isEqualTo("data");
            assertThat(bad.get(0).offset()).isEqualTo(victim.handle().offset());
            try (InternalIterator it = t.iterator()) {
                assertThatThrownBy(() -> {
                            for (it.seekToFirst(); it.valid(); it.next()) {
                                it.key();
                            }
                        })
                        .isInstanceOf(CorruptionException.class);
            }
        }
    }

    @Test
    void flippedIndexPropertiesOrFooterByteFailsOpen() throws IOException {
        long[][] regions = {
            {footer.index().offset(), footer.index().size() + TableFormat.BLOCK_TRAILER_SIZE},
            {footer.properties().offset(), footer.properties().size() + TableFormat.BLOCK_TRAILER_SIZE},
            {bytes.length - TableFormat.FOOTER_SIZE, TableFormat.FOOTER_SIZE},
        };
        for (long[] region : regions) {
            for (int i = 0; i < 20; i++) {
                long pos = region[0] + rnd.nextInt((int) region[1]);
                Path p = corrupt(pos);
                assertThatThrownBy(() -> TableReader.open(fs, p, 5, null, null))
                        .as("byte %d, seed %d", pos, seed)
                        .isInstanceOfSatisfying(CorruptionException.class, e -> {
                            assertThat(e.file()).isEqualTo(p);
                            assertThat(e.offset()).isBetween(region[0], region[0] + region[1]);
                        });
            }
        }
    }

    @Test
    void truncatedOrForeignFileIsCorruption() throws IOException {
        for (int len : new int[] {0, 10, 63, 64, bytes.length / 2, bytes.length - 1}) {
            Path p = dir.resolve("trunc.sst");
            Files.write(p, java.util.Arrays.copyOf(bytes, len));
            assertThatThrownBy(() -> TableReader.open(fs, p, 5, null, null))
                    .as("length %d", len)
                    .isInstanceOfSatisfying(
                            CorruptionException.class, e -> assertThat(e.file()).isEqualTo(p));
        }
        Path p = dir.resolve("foreign.sst");
        byte[] junk = new byte[4096];
        rnd.nextBytes(junk);
        Files.write(p, junk);
        assertThatThrownBy(() -> TableReader.open(fs, p, 5, null, null))
                .isInstanceOf(CorruptionException.class)
                .hasMessageContaining("magic");
    }

    @Test
    void corruptFilterFailsOpenAndReadsStayCorrect() throws IOException {
        long[] spots = {
            footer.filter().offset(), // filter header
            footer.filter().offset() + footer.filter().size() / 2, // filter body
            footer.filter().offset() + footer.filter().size() + 2 // block trailer
        };
        for (long pos : spots) {
            Path p = corrupt(pos);
            ReadCounters c = new ReadCounters();
            try (TableReader t = TableReader.open(fs, p, 5, null, c)) {
                assertThat(t.filterBroken()).as("byte %d", pos).isTrue();
                assertThat(t.filterProblem()).isNotBlank();
                assertThat(t.hasFilter()).isFalse();
                assertThat(t.filterMemoryBytes()).isZero();
                assertThat(checkReads(t, p)).isZero();
                for (int i = 0; i < 100; i++) {
                    byte[] absent = userKey(2L * i + 1);
                    assertThat(t.get(absent, Hashing.hash64(absent), InternalKey.MAX_SEQUENCE))
                            .isNull();
                }
                assertThat(c.filterChecks.sum()).isZero();
                assertThat(c.tablesReadWithoutFilter.sum()).isEqualTo(model.versions.size() + 100);
                assertThat(t.verifyChecksums())
                        .extracting(TableReader.BadBlock::kind)
                        .containsExactly("filter");
            }
        }
    }

    /**
     * Flip each byte of a small table in turn: opening either fails with CorruptionException, or every
     * read returns the right answer or throws CorruptionException (never a wrong value).
     */
    @Test
    void everySingleByteFlipIsDetectedNeverAWrongAnswer() throws IOException {
        model = TestTables.model(30, rnd);
        Path small = dir.resolve("small.sst");
        TestTables.write(fs, small, model, TableBuilderOptions.defaults().blockSize(256));
        bytes = Files.readAllBytes(small);
        int openFailed = 0;
        Path p = dir.resolve("flipped.sst");
        Files.write(p, bytes);
        // Flip in place and restore (rewriting a whole file per position is ~100x slower).
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            for (int pos = 0; pos < bytes.length; pos++) {
                ch.write(ByteBuffer.wrap(new byte[] {(byte) (bytes[pos] ^ 0x5a)}), pos);
                try {
                    TableReader t;
                    try {
                        t = TableReader.open(fs, p, 5, null, null);
                    } catch (CorruptionException e) {
                        assertThat(e.file()).isEqualTo(p);
                        openFailed++;
                        continue;
                    }
                    try (t) {
                        checkReads(t, p);
                    }
                } finally {
                    ch.write(ByteBuffer.wrap(new byte[] {bytes[pos]}), pos);
                }
            }
        }
        assertThat(openFailed).isGreaterThan(TableFormat.FOOTER_SIZE);
    }

    @Test
    void injectedReadErrorsSurfaceAsIoErrors() throws IOException {
        FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
        FaultInjectingFileSystem.Fault f = ffs.inject(FaultInjectingFileSystem.on(Op.READ, "*.sst"));
        assertThatThrownBy(() -> TableReader.open(ffs, table, 5, null, null)).isInstanceOf(IOException.class);
        f.remove();
        try (TableReader t = TableReader.open(ffs, table, 5, null, null)) {
            ffs.inject(FaultInjectingFileSystem.on(Op.READ, "*.sst"));
            byte[] uk = userKey(0);
            assertThatThrownBy(() -> t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasRootCauseInstanceOf(io.bloomkv.engine.fs.InjectedIOException.class);
            ffs.clearFaults();
            assertThat(t.get(uk, Hashing.hash64(uk), InternalKey.MAX_SEQUENCE)).isNotNull();
        }
    }

    @Test
    void tornTableAfterCrashNeverOpensAsAWrongTable() throws IOException {
        for (int round = 0; round < 10; round++) {
            FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
            ffs.inject(FaultInjectingFileSystem.on(Op.SYNC, "*.sst"));
            Path p = dir.resolve("torn" + round + ".sst");
            assertThatThrownBy(() -> TestTables.write(ffs, p, model, TableBuilderOptions.defaults()))
                    .isInstanceOf(IOException.class);
            ffs.clearFaults();
            if (round == 0) {
                ffs.crash(); // a table whose sync failed was never durable: it must not survive a plain crash
                assertThat(Files.exists(p))
                        .as("never-synced table after crash()")
                        .isFalse();
                continue;
            }
            ffs.crash(rnd);
            if (!Files.exists(p)) {
                continue;
            }
            try (TableReader t = TableReader.open(ffs, p, 1, null, null)) {
                assertThat(Files.size(p)).isEqualTo(bytes.length);
                assertThat(checkReads(t, p)).isZero();
            } catch (CorruptionException e) {
                assertThat(e.file()).isEqualTo(p);
            }
        }
    }
}
