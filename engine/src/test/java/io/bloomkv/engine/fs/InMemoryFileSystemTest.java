package io.bloomkv.engine.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbLockedException;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.SyncMode;
import io.bloomkv.engine.TableInfo;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class InMemoryFileSystemTest {
    /** A directory that does not exist on disk: nothing here may create it there. */
    private static final Path DIR = Path.of("/bloomkv-in-memory-test/d");

    private final InMemoryFileSystem fs = new InMemoryFileSystem();

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private byte[] readAll(Path p) throws IOException {
        try (ReadableFile r = fs.newReadableFile(p)) {
            byte[] b = new byte[Math.toIntExact(r.size())];
            r.readFully(0, b, 0, b.length);
            return b;
        }
    }

    private void write(Path p, byte[] b) throws IOException {
        try (WritableFile w = fs.newWritableFile(p)) {
            w.append(b);
        }
    }

    @Test
    void appendsAreReadBackAtAnyPosition() throws IOException {
        fs.createDirectories(DIR);
        Path p = DIR.resolve("a.sst");
        byte[] data = bytes(10_000, 1);
        try (WritableFile w = fs.newWritableFile(p)) {
            assertThat(w.path()).isEqualTo(p);
            for (int off = 0; off < data.length; off += 777) {
                w.append(data, off, Math.min(777, data.length - off));
            }
            w.append(new byte[0]);
            assertThat(w.size()).isEqualTo(data.length);
            w.flush();
            w.sync();
        }
        assertThat(fs.exists(p)).isTrue();
        assertThat(fs.size(p)).isEqualTo(data.length);
        assertThat(readAll(p)).isEqualTo(data);
        try (ReadableFile r = fs.newReadableFile(p)) {
            assertThat(r.path()).isEqualTo(p);
            byte[] dst = new byte[20];
            r.readFully(5_000, dst, 3, 10);
            assertThat(Arrays.copyOfRange(dst, 3, 13)).isEqualTo(Arrays.copyOfRange(data, 5_000, 5_010));
            assertThat(dst[0]).isZero();
            assertThat(dst[13]).isZero();
            r.readFully(data.length, dst, 0, 0); // an empty read at the end is fine
        }
        assertThat(Files.exists(DIR.getParent())).as("nothing on the real disk").isFalse();
    }

    @Test
    void aReadPastTheEndIsAnEofNamingTheFile() throws IOException {
        fs.createDirectories(DIR);
        Path p = DIR.resolve("short");
        write(p, bytes(100, 2));
        try (ReadableFile r = fs.newReadableFile(p)) {
            byte[] dst = new byte[10];
            r.readFully(90, dst, 0, 10);
            assertThatThrownBy(() -> r.readFully(91, dst, 0, 10))
                    .isInstanceOf(EOFException.class)
                    .hasMessageContaining("read of 10 bytes at 91")
                    .hasMessageContaining(p.toString())
                    .hasMessageContaining("size 100");
            assertThatThrownBy(() -> r.readFully(Long.MAX_VALUE, dst, 0, 1)).isInstanceOf(EOFException.class);
            assertThatThrownBy(() -> r.readFully(-1, dst, 0, 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> r.readFully(0, dst, 5, 6)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void aReaderSeesLaterAppendsAndKeepsItsFileWhenDeletedOrReplaced() throws IOException {
        fs.createDirectories(DIR);
        Path p = DIR.resolve("f");
        byte[] data = bytes(64, 3);
        try (WritableFile w = fs.newWritableFile(p);
                ReadableFile r = fs.newReadableFile(p)) {
            w.append(data, 0, 10);
            assertThat(r.size()).isEqualTo(10);
            w.append(data, 10, 54);
            assertThat(r.size()).isEqualTo(64);
            byte[] dst = new byte[64];
            r.readFully(0, dst, 0, 64);
            assertThat(dst).isEqualTo(data);
        }
        try (ReadableFile r = fs.newReadableFile(p)) {
            fs.delete(p);
            assertThat(fs.exists(p)).isFalse();
            byte[] dst = new byte[64];
            r.readFully(0, dst, 0, 64);
            assertThat(dst)
                    .as("an unlinked file stays readable through an open reader")
                    .isEqualTo(data);
        }
        write(p, data);
        Path other = DIR.resolve("g");
        write(other, new byte[] {1, 2, 3});
        try (ReadableFile r = fs.newReadableFile(p)) {
            fs.rename(other, p);
            assertThat(r.size()).as("the reader keeps the replaced file").isEqualTo(64);
            assertThat(readAll(p)).containsExactly(1, 2, 3);
        }
    }

    @Test
    void newWritableFileTruncatesAnExistingFile() throws IOException {
        fs.createDirectories(DIR);
        Path p = DIR.resolve("CURRENT");
        write(p, bytes(1000, 4));
        try (ReadableFile before = fs.newReadableFile(p);
                WritableFile w = fs.newWritableFile(p)) {
            assertThat(fs.size(p)).isZero();
            assertThat(before.size()).as("truncated in place, as O_TRUNC").isZero();
            w.append("MANIFEST-000002\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(w.size()).isEqualTo(16);
        }
        assertThat(new String(readAll(p), StandardCharsets.US_ASCII)).isEqualTo("MANIFEST-000002\n");
    }

    @Test
    void missingFilesAndDirectoriesAreNoSuchFile() throws IOException {
        Path p = DIR.resolve("missing");
        assertThat(fs.exists(p)).isFalse();
        assertThat(fs.exists(DIR)).isFalse();
        assertThatThrownBy(() -> fs.newReadableFile(p))
                .isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining("missing");
        assertThatThrownBy(() -> fs.size(p)).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.rename(p, DIR.resolve("x"))).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.list(DIR)).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.syncDirectory(DIR)).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.newWritableFile(p))
                .as("the parent must exist")
                .isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.tryLock(DIR.resolve("LOCK"))).isInstanceOf(NoSuchFileException.class);
        fs.delete(p); // no error
        assertThatThrownBy(() -> fs.newDirectReadableFile(p))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("direct reads");
    }

    @Test
    void directoriesAreExplicitAndListedSorted() throws IOException {
        assertThat(fs.exists(Path.of("/"))).as("a root always exists").isTrue();
        fs.createDirectories(DIR.resolve("sub/deeper"));
        fs.createDirectories(DIR); // exists already: fine
        assertThat(fs.exists(DIR)).isTrue();
        assertThat(fs.exists(DIR.resolve("sub"))).isTrue();
        assertThat(fs.size(DIR)).isZero();
        fs.syncDirectory(DIR);
        for (String name : List.of("000010.sst", "000002.log", "CURRENT", "LOCK", "000002.sst")) {
            write(DIR.resolve(name), new byte[] {7});
        }
        write(DIR.resolve("sub/deeper/x"), new byte[] {7});
        assertThat(fs.list(DIR))
                .containsExactly(
                        DIR.resolve("000002.log"),
                        DIR.resolve("000002.sst"),
                        DIR.resolve("000010.sst"),
                        DIR.resolve("CURRENT"),
                        DIR.resolve("LOCK"),
                        DIR.resolve("sub"));
        assertThat(fs.list(DIR.getParent())).containsExactly(DIR);
        assertThatThrownBy(() -> fs.list(DIR.resolve("CURRENT"))).isInstanceOf(NotDirectoryException.class);
        assertThatThrownBy(() -> fs.syncDirectory(DIR.resolve("CURRENT"))).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.createDirectories(DIR.resolve("CURRENT/x")))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> fs.newWritableFile(DIR.resolve("CURRENT/x")))
                .isInstanceOf(FileSystemException.class)
                .hasMessageContaining("Not a directory");
        assertThatThrownBy(() -> fs.newWritableFile(DIR.resolve("sub")))
                .isInstanceOf(FileSystemException.class)
                .hasMessageContaining("Is a directory");
        assertThatThrownBy(() -> fs.newReadableFile(DIR.resolve("sub")))
                .isInstanceOf(FileSystemException.class)
                .hasMessageContaining("Is a directory");
        assertThatThrownBy(() -> fs.delete(DIR.resolve("sub"))).isInstanceOf(DirectoryNotEmptyException.class);
        fs.delete(DIR.resolve("sub/deeper/x"));
        fs.delete(DIR.resolve("sub/deeper"));
        fs.delete(DIR.resolve("sub"));
        assertThat(fs.exists(DIR.resolve("sub"))).isFalse();
        assertThat(fs.list(DIR)).hasSize(5).doesNotContain(DIR.resolve("sub"));
    }

    @Test
    void pathsAreNormalized() throws IOException {
        fs.createDirectories(DIR);
        write(DIR.resolve("./a/../f"), new byte[] {1, 2});
        assertThat(fs.exists(DIR.resolve("f"))).isTrue();
        assertThat(fs.size(DIR.resolve("f"))).isEqualTo(2);
        assertThat(fs.list(DIR)).containsExactly(DIR.resolve("f"));
    }

    @Test
    void renameMovesAndReplaces() throws IOException {
        fs.createDirectories(DIR);
        fs.createDirectories(DIR.resolve("other"));
        Path tmp = DIR.resolve("000005.dbtmp");
        Path current = DIR.resolve("CURRENT");
        write(current, "old".getBytes(StandardCharsets.US_ASCII));
        write(tmp, "new".getBytes(StandardCharsets.US_ASCII));
        fs.rename(tmp, current);
        assertThat(fs.exists(tmp)).isFalse();
        assertThat(readAll(current)).isEqualTo("new".getBytes(StandardCharsets.US_ASCII));
        assertThat(fs.list(DIR)).containsExactly(current, DIR.resolve("other"));
        fs.rename(current, current); // onto itself: nothing changes
        assertThat(readAll(current)).isEqualTo("new".getBytes(StandardCharsets.US_ASCII));
        Path moved = DIR.resolve("other/CURRENT");
        fs.rename(current, moved);
        assertThat(fs.list(DIR.resolve("other"))).containsExactly(moved);
        assertThat(fs.exists(current)).isFalse();
        assertThatThrownBy(() -> fs.rename(moved, DIR.resolve("nowhere/x"))).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.rename(moved, DIR)).isInstanceOf(FileSystemException.class);
        assertThatThrownBy(() -> fs.rename(DIR.resolve("other"), DIR.resolve("o2")))
                .isInstanceOf(FileSystemException.class);
        assertThat(readAll(moved)).isEqualTo("new".getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void closedReadersAndWritersThrow() throws IOException {
        fs.createDirectories(DIR);
        Path p = DIR.resolve("f");
        WritableFile w = fs.newWritableFile(p);
        w.append(new byte[] {1});
        w.close();
        w.close(); // idempotent
        assertThatThrownBy(() -> w.append(new byte[] {2}))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(w::flush).isInstanceOf(IOException.class);
        assertThatThrownBy(w::sync).isInstanceOf(IOException.class);
        assertThat(fs.size(p)).isEqualTo(1);
        ReadableFile r = fs.newReadableFile(p);
        r.close();
        r.close();
        assertThatThrownBy(() -> r.readFully(0, new byte[1], 0, 1))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(r::size).isInstanceOf(IOException.class);
    }

    @Test
    void locksAreExclusivePerPathUntilReleased() throws IOException {
        fs.createDirectories(DIR);
        Path lockFile = DIR.resolve("LOCK");
        Optional<Closeable> first = fs.tryLock(lockFile);
        assertThat(first).isPresent();
        assertThat(fs.exists(lockFile)).as("the lock file is created").isTrue();
        assertThat(fs.tryLock(lockFile)).isEmpty();
        assertThat(fs.tryLock(DIR.resolve("../d/./LOCK")))
                .as("the same path spelled differently")
                .isEmpty();
        Optional<Closeable> other = fs.tryLock(DIR.resolve("LOCK2"));
        assertThat(other).isPresent();
        assertThat(new InMemoryFileSystem().tryLock(Path.of("/LOCK")))
                .as("another instance shares nothing")
                .isPresent();
        first.get().close();
        first.get().close(); // idempotent: must not release a later holder
        Optional<Closeable> again = fs.tryLock(lockFile);
        assertThat(again).isPresent();
        first.get().close();
        assertThat(fs.tryLock(lockFile))
                .as("a second close of the old handle released nothing")
                .isEmpty();
        again.get().close();
        other.get().close();
    }

    @Test
    void concurrentWritersReadersAndRenames() throws Exception {
        fs.createDirectories(DIR);
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                futures.add(pool.submit(() -> {
                    byte[] data = bytes(50_000, 100 + id);
                    for (int round = 0; round < 20; round++) {
                        Path tmp = DIR.resolve(id + "-" + round + ".tmp");
                        Path dst = DIR.resolve(id + ".sst");
                        try (WritableFile w = fs.newWritableFile(tmp);
                                ReadableFile r = fs.newReadableFile(tmp)) {
                            byte[] dst2 = new byte[1000];
                            for (int off = 0; off < data.length; off += 1000) {
                                w.append(data, off, 1000);
                                r.readFully(off, dst2, 0, 1000);
                                assertThat(dst2).isEqualTo(Arrays.copyOfRange(data, off, off + 1000));
                            }
                        }
                        fs.rename(tmp, dst);
                        assertThat(readAll(dst)).isEqualTo(data);
                        assertThat(fs.list(DIR)).contains(dst);
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(fs.list(DIR))
                .containsExactly(
                        DIR.resolve("0.sst"), DIR.resolve("1.sst"), DIR.resolve("2.sst"), DIR.resolve("3.sst"));
    }

    private static byte[] key(int i) {
        return String.format("key%08d", i).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] value(int i, int version) {
        return ("value-" + i + "-" + version + "-" + "x".repeat(i % 50)).getBytes(StandardCharsets.UTF_8);
    }

    /** A whole database on the in-memory file system: writes, flushes, compaction, a reopen, and every value back; nothing on disk. */
    @Test
    void aDatabaseRunsOnIt() throws IOException {
        Path dbDir = DIR.resolve("db");
        Options options =
                Options.defaults().fileSystem(fs).writeBufferSize(32 << 10).syncMode(SyncMode.NONE);
        int n = 5_000;
        try (Db db = Db.open(dbDir, options)) {
            assertThatThrownBy(() -> Db.open(dbDir, options))
                    .as("the LOCK is held")
                    .isInstanceOf(DbLockedException.class);
            for (int i = 0; i < n; i++) {
                db.put(key(i), value(i, 1));
            }
            db.flush();
            for (int i = 0; i < n; i += 2) {
                db.put(key(i), value(i, 2));
            }
            for (int i = 0; i < n; i += 7) {
                db.delete(key(i));
            }
            db.flush();
            assertThat(db.tables()).as("flushes wrote tables").isNotEmpty();
            db.compactRange(null, null);
            db.waitForBackgroundWork();
            List<TableInfo> tables = db.tables();
            assertThat(tables)
                    .allSatisfy(t ->
                            assertThat(t.level()).as("compacted out of level 0").isPositive());
            for (TableInfo t : tables) {
                assertThat(fs.exists(t.path())).isTrue();
                assertThat(fs.size(t.path())).isEqualTo(t.fileSize());
            }
        }
        List<String> names = new ArrayList<>();
        for (Path p : fs.list(dbDir)) {
            names.add(p.getFileName().toString());
        }
        assertThat(names)
                .contains("CURRENT", "LOCK")
                .anyMatch(s -> s.startsWith("MANIFEST-"))
                .anyMatch(s -> s.endsWith(".sst"));
        try (Db db = Db.open(dbDir, options)) {
            for (int i = 0; i < n; i++) {
                byte[] expected = i % 7 == 0 ? null : value(i, i % 2 == 0 ? 2 : 1);
                assertThat(db.get(key(i))).as("key " + i + " after the reopen").isEqualTo(expected);
            }
            db.put(key(n), value(n, 1));
        }
        try (Db db = Db.open(dbDir, options)) {
            assertThat(db.get(key(n))).as("a write recovered from the WAL").isEqualTo(value(n, 1));
        }
        Db.destroy(dbDir, options);
        assertThat(fs.exists(dbDir)).isFalse();
        assertThat(Files.exists(DIR.getParent())).as("nothing on the real disk").isFalse();
    }
}
