package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bloomkv.engine.fs.DiskFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.version.FileNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Options#useMmapWal} through a Db: by default the live WAL is written through a mapping (its file runs ahead of
 * its records, in allocated zeros), with the option off it is not; either way every acknowledged write is read back
 * after a reopen, and after a process crash: the files as they are while the database is open (what a kill -9
 * leaves: the page cache's bytes, the WAL's zero tail) open as a database holding every write that returned under
 * {@link SyncMode#NONE}.
 */
class MmapWalTest {
    @TempDir
    Path dir;

    private static Options options(boolean mmapWal) {
        // a memtable large enough that nothing is flushed: every write lives in the WAL only
        return Options.defaults()
                .syncMode(SyncMode.NONE)
                .writeBufferSize(64L << 20)
                .useMmapWal(mmapWal);
    }

    @Test
    void theLiveWalRunsAheadOfItsRecordsOnlyWhenMapped() throws IOException {
        assumeTrue(FileSystem.disk().supportsMappedWrites(), "mapped writes need Linux with native access");
        long regions = DiskFileSystem.liveMappedWritableRegions();
        for (boolean mapped : new boolean[] {true, false}) {
            Path d = dir.resolve(mapped ? "mapped" : "written");
            try (Db db = Db.open(d, options(mapped))) {
                assertThat(db.options().useMmapWal()).isEqualTo(mapped);
                for (int i = 0; i < 1000; i++) {
                    db.put(TestKeys.key(i), new byte[] {(byte) i});
                }
                if (mapped) {
                    assertThat(DiskFileSystem.liveMappedWritableRegions())
                            .as("the WAL's regions, mapped")
                            .isGreaterThan(regions);
                } else {
                    assertThat(DiskFileSystem.liveMappedWritableRegions())
                            .as("write(2): nothing mapped")
                            .isEqualTo(regions);
                }
                byte[] wal = Files.readAllBytes(liveWal(d));
                // 1,000 records of a few dozen bytes: less than the first mapped region (64 KiB)
                if (mapped) {
                    assertThat(wal.length)
                            .as("allocated ahead of the records: the first region, and the second once prepared")
                            .isIn(64 << 10, (64 + 128) << 10);
                    assertThat(wal[wal.length - 1])
                            .as("allocated, not yet written")
                            .isZero();
                } else {
                    assertThat(wal.length)
                            .as("write(2): the file is its records")
                            .isLessThan(64 << 10);
                    assertThat(wal[wal.length - 1])
                            .as("the last record's value")
                            .isEqualTo((byte) 999);
                }
            }
            assertThat(DiskFileSystem.liveMappedWritableRegions())
                    .as("unmapped at close (mapped %s)", mapped)
                    .isEqualTo(regions);
            try (Db db = Db.open(d, options(mapped))) {
                for (int i = 0; i < 1000; i++) {
                    assertThat(db.get(TestKeys.key(i))).isEqualTo(new byte[] {(byte) i});
                }
            }
            assertThat(DiskFileSystem.liveMappedWritableRegions())
                    .as("unmapped at the reopened database's close (mapped %s)", mapped)
                    .isEqualTo(regions);
        }
    }

    /**
     * The crash of a mapped WAL: only where logs can be written through mappings (elsewhere the option falls back to
     * {@code write(2)}, which this test would check instead, silently). The WAL's mapped regions are live while the
     * database is open and all unmapped once it and the recovered copy are closed.
     */
    @Test
    void aProcessCrashUnderNoneLosesNoAcknowledgedWrite() throws IOException {
        assumeTrue(FileSystem.disk().supportsMappedWrites(), "mapped writes need Linux with native access");
        long seed = TestKeys.seed("MmapWalTest");
        Random rnd = new Random(seed);
        Path live = dir.resolve("live");
        Path crashed = dir.resolve("crashed");
        long regions = DiskFileSystem.liveMappedWritableRegions();
        List<byte[]> values = new ArrayList<>();
        try (Db db = Db.open(live, options(true))) {
            for (int i = 0; i < 20_000; i++) {
                byte[] v = TestKeys.value(rnd, 200);
                values.add(v);
                if (i % 7 == 0) {
                    db.write(new WriteBatch().put(TestKeys.key(i), v).delete(TestKeys.key(i + 1_000_000)));
                } else {
                    db.put(TestKeys.key(i), v);
                }
            }
            assertThat(DiskFileSystem.liveMappedWritableRegions())
                    .as("the live WAL is written through a mapping")
                    .isGreaterThan(regions);
            // What a kill -9 leaves now: every file as the OS has it, nothing flushed, closed or synced.
            copyFiles(live, crashed);
        }
        assertThat(DiskFileSystem.liveMappedWritableRegions())
                .as("the WAL's regions unmapped at close")
                .isEqualTo(regions);
        try (Db db = Db.open(crashed, options(true))) {
            for (int i = 0; i < values.size(); i++) {
                assertThat(db.get(TestKeys.key(i)))
                        .as("seed %d key %d", seed, i)
                        .isEqualTo(values.get(i));
            }
            assertThat(db.stats().walTailsDropped())
                    .as("the WAL's allocated zeros end it")
                    .isEqualTo(1);
        }
        assertThat(DiskFileSystem.liveMappedWritableRegions())
                .as("the recovered database's WAL regions unmapped at close, seed %d", seed)
                .isEqualTo(regions);
    }

    private static Path liveWal(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.filter(p -> {
                        FileNames.Parsed f = FileNames.parse(p.getFileName().toString());
                        return f != null && f.kind() == FileNames.Kind.LOG;
                    })
                    .max(Path::compareTo)
                    .orElseThrow();
        }
    }

    private static void copyFiles(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> s = Files.list(from)) {
            for (Path p : s.toList()) {
                Files.copy(p, to.resolve(p.getFileName()));
            }
        }
    }
}
