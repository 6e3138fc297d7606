package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.DiskFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.InMemoryFileSystem;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Options.useMmapReads through a Db: the same answers mapped or not, one mapping per open table and none after close
 * (tables dropped by compactions included), {@code pread} where the file system cannot map, faults still surfacing.
 */
class MmapReadsTest {
    @TempDir
    Path dir;

    private static byte[] key(int i) {
        return String.format("k%07d", i).getBytes(StandardCharsets.US_ASCII);
    }

    /** Loads {@code n} keys (every other one present, odd value sizes, compactions along the way) and checks every get and a scan. */
    private static void loadAndCheck(Db db, int n, long seed) {
        Random rnd = new Random(seed);
        byte[][] values = new byte[n][];
        for (int i = 0; i < n; i += 2) {
            values[i] = new byte[1 + rnd.nextInt(300)];
            rnd.nextBytes(values[i]);
            db.put(key(i), values[i]);
        }
        db.flush();
        db.waitForBackgroundWork();
        for (int i = 0; i < n; i++) {
            assertThat(db.get(key(i))).as("key %d seed %d", i, seed).isEqualTo(values[i]);
        }
        int seen = 0;
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                int i = Integer.parseInt(new String(it.key(), StandardCharsets.US_ASCII).substring(1));
                assertThat(it.value()).isEqualTo(values[i]);
                seen++;
            }
        }
        assertThat(seen).isEqualTo(n / 2);
    }

    private static Options small() {
        return Options.defaults()
                .writeBufferSize(64 << 10)
                .targetFileSize(64 << 10)
                .maxBytesForLevelBase(256 << 10)
                .blockCacheSize(0);
    }

    @Test
    void mappedTablesAnswerAsPreadAndAreUnmappedAtClose() {
        long seed = TestSeeds.seed("MmapReadsTest");
        long before = DiskFileSystem.liveMappedFiles();
        long beforeBytes = DiskFileSystem.liveMappedBytes();
        try (Db db = Db.open(dir.resolve("mapped"), small())) {
            assertThat(db.options().useMmapReads()).as("the default").isTrue();
            loadAndCheck(db, 20_000, seed);
            Stats s = db.stats();
            assertThat(s.blockReads())
                    .as("block reads from the mappings are counted")
                    .isPositive();
            int tables = db.tables().size();
            assertThat(tables).isGreaterThan(1);
            // every open table is mapped; tables the compactions dropped are unmapped already
            assertThat(DiskFileSystem.liveMappedFiles() - before).isBetween(1L, (long) tables);
        }
        assertThat(DiskFileSystem.liveMappedFiles())
                .as("mappings after close, seed %d", seed)
                .isEqualTo(before);
        assertThat(DiskFileSystem.liveMappedBytes()).isEqualTo(beforeBytes);
        try (Db db = Db.open(dir.resolve("pread"), small().useMmapReads(false))) {
            loadAndCheck(db, 20_000, seed);
            assertThat(DiskFileSystem.liveMappedFiles())
                    .as("pread tables map nothing")
                    .isEqualTo(before);
        }
        // reopened mapped, read-only: the same answers from the same files
        try (Db db = Db.open(dir.resolve("mapped"), small().readOnly(true))) {
            assertThat(db.get(key(0))).isNotNull();
            assertThat(db.get(key(1))).isNull();
            assertThat(DiskFileSystem.liveMappedFiles()).isGreaterThan(before);
        }
        assertThat(DiskFileSystem.liveMappedFiles()).isEqualTo(before);
    }

    @Test
    void aFileSystemWithoutMappingsIsReadWithPread() {
        long seed = TestSeeds.seed("MmapReadsTest.inMemory");
        long before = DiskFileSystem.liveMappedFiles();
        try (Db db = Db.open(dir, small().fileSystem(new InMemoryFileSystem()))) {
            loadAndCheck(db, 10_000, seed);
            assertThat(DiskFileSystem.liveMappedFiles()).isEqualTo(before);
        }
    }

    @Test
    void directReadsWinOverMappedReads() {
        long before = DiskFileSystem.liveMappedFiles();
        try (Db db = Db.open(dir, small().useDirectReads(true).useMmapReads(true))) {
            loadAndCheck(db, 4_000, 1);
            assertThat(DiskFileSystem.liveMappedFiles())
                    .as("O_DIRECT tables are not mapped")
                    .isEqualTo(before);
        }
    }

    @Test
    void injectedReadFaultsSurfaceThroughMappedTables() {
        FaultInjectingFileSystem ffs = FaultInjectingFileSystem.overDisk();
        try (Db db = Db.open(dir, small().fileSystem(ffs))) {
            for (int i = 0; i < 2000; i++) {
                db.put(key(i), key(i));
            }
            db.flush();
            assertThat(DiskFileSystem.liveMappedFiles()).isPositive();
            ffs.inject(FaultInjectingFileSystem.on(FaultInjectingFileSystem.Op.READ, "*.sst"));
            assertThatThrownBy(() -> db.get(key(7))).isInstanceOf(BloomKvException.class);
            ffs.clearFaults();
            assertThat(db.get(key(7))).isEqualTo(key(7));
        }
    }
}
