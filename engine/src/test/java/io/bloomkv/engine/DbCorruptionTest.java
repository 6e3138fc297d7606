package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.table.Footer;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged files seen through the database: flipped bytes in a data block, the index, the footer or
 * a WAL record give a {@link CorruptionException} naming the file, never a wrong value; a torn WAL
 * tail is cut cleanly; a damaged filter block leaves every read correct (fail open).
 */
class DbCorruptionTest {
    static final int N = 2000;

    @TempDir
    Path dir;

    private void loadAndFlush() {
        try (Db db = Db.open(dir, Options.defaults().blockCacheSize(0))) {
            for (int i = 0; i < N; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("value-" + i));
            }
            db.flush();
        }
    }

    private Path onlyFile(String suffix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(suffix))
                    .reduce((a, b) -> {
                        throw new AssertionError("more than one " + suffix + ": " + a + ", " + b);
                    })
                    .orElseThrow();
        }
    }

    private static void flip(Path file, long offset) throws IOException {
        byte[] b = Files.readAllBytes(file);
        b[(int) offset] ^= 0x5A;
        Files.write(file, b);
    }

    private static Footer footer(Path table) throws IOException {
        try (TableReader r = TableReader.open(FileSystem.disk(), table, 0, null, null)) {
            return r.footer();
        }
    }

    @Test
    void flippedDataBlockByteIsCorruptionNamingTheTable() throws IOException {
        loadAndFlush();
        Path sst = onlyFile(".sst");
        flip(sst, 10);
        try (Db db = Db.open(dir, Options.defaults().blockCacheSize(0))) {
            CorruptionException e = catchThrowableOfType(() -> db.get(TestKeys.key(0)), CorruptionException.class);
            assertThat(e).isNotNull();
            assertThat(e.file()).isEqualTo(sst);
            assertThat(e.getMessage()).contains(sst.getFileName().toString());
            // Keys in other blocks still read correctly.
            assertThat(TestKeys.str(db.get(TestKeys.key(N - 1)))).isEqualTo("value-" + (N - 1));
            assertThatThrownBy(() -> {
                        try (DbIterator it = db.iterator()) {
                            for (it.seekToFirst(); it.valid(); it.next()) {
                                it.value();
                            }
                        }
                    })
                    .isInstanceOf(CorruptionException.class);
        }
    }

    @Test
    void flippedIndexByteIsCorruptionAtOpen() throws IOException {
        loadAndFlush();
        Path sst = onlyFile(".sst");
        Footer f = footer(sst);
        flip(sst, f.index().offset() + f.index().size() / 2);
        CorruptionException e = catchThrowableOfType(() -> Db.open(dir, Options.defaults()), CorruptionException.class);
        assertThat(e).isNotNull();
        assertThat(e.file()).isEqualTo(sst);
        // The failed open released the lock.
        flip(sst, f.index().offset() + f.index().size() / 2);
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(TestKeys.str(db.get(TestKeys.key(5)))).isEqualTo("value-5");
        }
    }

    @Test
    void flippedFooterByteIsCorruptionAtOpen() throws IOException {
        loadAndFlush();
        Path sst = onlyFile(".sst");
        flip(sst, Files.size(sst) - 3);
        CorruptionException e = catchThrowableOfType(() -> Db.open(dir, Options.defaults()), CorruptionException.class);
        assertThat(e).isNotNull();
        assertThat(e.file()).isEqualTo(sst);
    }

    @Test
    void flippedFilterByteFailsOpenAndReadsStayCorrect() throws IOException {
        loadAndFlush();
        Path sst = onlyFile(".sst");
        Footer f = footer(sst);
        assertThat(f.hasFilter()).isTrue();
        flip(sst, f.filter().offset() + f.filter().size() / 2);
        try (Db db = Db.open(dir, Options.defaults())) {
            for (int i = 0; i < N; i++) {
                assertThat(TestKeys.str(db.get(TestKeys.key(i)))).isEqualTo("value-" + i);
            }
            for (int i = N; i < N + 200; i++) {
                assertThat(db.get(TestKeys.key(i))).isNull();
            }
        }
    }

    @Test
    void failedOpenReleasesItsTablesAndTheLock() throws IOException {
        loadAndFlush();
        try (Db db = Db.open(dir, Options.defaults().syncMode(SyncMode.EVERY_WRITE))) {
            for (int i = N; i < N + 300; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("value-" + i));
            }
        }
        long liveBefore = TableReader.liveTables();
        long filterBytesBefore = TableReader.liveFilterBytes();
        Path log = onlyFile(".log");
        flip(log, 20);
        // The open reads the MANIFEST and opens the table (its filter goes off-heap), then fails in the WAL.
        CorruptionException e = catchThrowableOfType(() -> Db.open(dir, Options.defaults()), CorruptionException.class);
        assertThat(e).isNotNull();
        assertThat(e.file()).isEqualTo(log);
        assertThat(TableReader.liveTables())
                .as("table readers after the failed open")
                .isEqualTo(liveBefore);
        assertThat(TableReader.liveFilterBytes())
                .as("filter bytes after the failed open")
                .isEqualTo(filterBytesBefore);
        flip(log, 20);
        try (Db db = Db.open(dir, Options.defaults())) {
            for (int i = 0; i < N + 300; i++) {
                assertThat(TestKeys.str(db.get(TestKeys.key(i)))).as("key " + i).isEqualTo("value-" + i);
            }
        }
    }

    @Test
    void flippedWalRecordIsCorruptionNamingTheLog() throws IOException {
        try (Db db = Db.open(dir, Options.defaults().syncMode(SyncMode.EVERY_WRITE))) {
            for (int i = 0; i < 300; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("value-" + i));
            }
        }
        Path log = onlyFile(".log");
        flip(log, 20);
        CorruptionException e = catchThrowableOfType(() -> Db.open(dir, Options.defaults()), CorruptionException.class);
        assertThat(e).isNotNull();
        assertThat(e.file()).isEqualTo(log);
        assertThat(e.getMessage()).contains(log.getFileName().toString());
    }

    @Test
    void tornWalTailIsACleanCut() throws IOException {
        try (Db db = Db.open(dir, Options.defaults().syncMode(SyncMode.EVERY_WRITE))) {
            for (int i = 0; i < 300; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("value-" + i));
            }
        }
        Path log = onlyFile(".log");
        byte[] b = Files.readAllBytes(log);
        Files.write(log, java.util.Arrays.copyOf(b, b.length - 5));
        try (Db db = Db.open(dir, Options.defaults())) {
            for (int i = 0; i < 299; i++) {
                assertThat(TestKeys.str(db.get(TestKeys.key(i)))).isEqualTo("value-" + i);
            }
            assertThat(db.get(TestKeys.key(299))).isNull();
            assertThat(db.stats().walTailsDropped()).isEqualTo(1);
        }
    }

    @Test
    void damagedCurrentOrManifestIsCorruption() throws IOException {
        loadAndFlush();
        Path current = dir.resolve("CURRENT");
        String saved = Files.readString(current);
        Files.writeString(current, "garbage\n");
        CorruptionException e = catchThrowableOfType(() -> Db.open(dir, Options.defaults()), CorruptionException.class);
        assertThat(e).isNotNull();
        assertThat(e.file()).isEqualTo(current);
        Files.writeString(current, saved);
        Path manifest = onlyFile(saved.trim());
        byte[] m = Files.readAllBytes(manifest);
        flip(manifest, 12);
        e = catchThrowableOfType(() -> Db.open(dir, Options.defaults()), CorruptionException.class);
        assertThat(e).isNotNull();
        assertThat(e.file()).isEqualTo(manifest);
        Files.write(manifest, m);
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(TestKeys.str(db.get(TestKeys.key(3)))).isEqualTo("value-3");
        }
    }
}
