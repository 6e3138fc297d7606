package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.NoSpaceLeftException;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full disk ({@code ENOSPC}) during a WAL append, a flush and a compaction, through the free-space
 * quota of {@link FaultInjectingFileSystem}: the write, flush or compaction fails with a {@link
 * BloomKvIOException} that says "No space left on device"; writes keep failing, reads go on and
 * see every acknowledged write; once space is freed and the database reopened (after a crash that
 * drops unsynced bytes), nothing acknowledged is lost, the failed write is all or nothing, no partial
 * table is live and no table file is left that the database does not name.
 *
 * <p>{@link #realSmallFileSystem} does the same on a real small file system when given one:
 * {@code mount -t tmpfs -o size=4m tmpfs /mnt/bloomkv-small} then {@code mvn -B -q -pl engine -am test
 * -Dtest=DiskFullTest -Dsurefire.failIfNoSpecifiedTests=false -Dbloomkv.diskfull.dir=/mnt/bloomkv-small}.
 * Replay with -Dbloomkv.seed=N.
 */
class DiskFullTest {
    @TempDir
    Path dir;

    private final FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();

    @AfterEach
    void nothingLeaks() {
        assertThat(TableReader.liveTables()).as("tables left open").isZero();
    }

    private Options options(FileSystem fileSystem) {
        return Options.defaults()
                .fileSystem(fileSystem)
                .syncMode(SyncMode.EVERY_WRITE)
                .autoCompaction(false)
                .writeBufferSize(64 << 10)
                .blockSize(1024);
    }

    private static void assertEnospc(Throwable e) {
        assertThat(e).isInstanceOf(BloomKvIOException.class).hasMessageContaining("No space left on device");
    }

    /** Every acknowledged key reads back through get and a full scan. */
    private static void assertHolds(Db db, TreeMap<String, byte[]> model, String ctx) {
        assertHolds(db, model, null, null, null, ctx);
    }

    /**
     * Every acknowledged key reads back through get and a full scan, except {@code uncertainKey} (the
     * key of the write that failed), which holds {@code prior} (null = absent) or {@code attempted}.
     */
    private static void assertHolds(
            Db db, TreeMap<String, byte[]> model, String uncertainKey, byte[] prior, byte[] attempted, String ctx) {
        TreeMap<String, byte[]> scanned = new TreeMap<>();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                scanned.put(TestKeys.str(it.key()), it.value());
            }
        }
        if (uncertainKey != null) {
            byte[] got = scanned.remove(uncertainKey);
            assertThat(java.util.Arrays.equals(got, prior) || java.util.Arrays.equals(got, attempted))
                    .as(ctx + ": the failed write's key holds its old value or, whole, the new one")
                    .isTrue();
            assertThat(db.get(TestKeys.bytes(uncertainKey)))
                    .as(ctx + ": get of the failed write's key")
                    .isEqualTo(got);
        }
        assertThat(scanned.keySet()).as(ctx + ": keys").isEqualTo(model.keySet());
        for (Map.Entry<String, byte[]> e : model.entrySet()) {
            assertThat(scanned.get(e.getKey())).as(ctx + ": scan " + e.getKey()).isEqualTo(e.getValue());
            assertThat(db.get(TestKeys.bytes(e.getKey())))
                    .as(ctx + ": get " + e.getKey())
                    .isEqualTo(e.getValue());
        }
    }

    /** The table files in the database's directory are exactly its live tables: none left over, none missing. */
    static void assertNoOrphanTables(Db db, String ctx) throws IOException {
        TreeSet<Long> live =
                db.tables().stream().map(TableInfo::fileNumber).collect(Collectors.toCollection(TreeSet::new));
        TreeSet<Long> onDisk = new TreeSet<>();
        try (Stream<Path> files = Files.list(db.directory())) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".sst"))
                    .forEach(n -> onDisk.add(Long.parseLong(n.substring(0, n.indexOf('.')))));
        }
        assertThat(onDisk).as(ctx + ": table files on disk = live tables").isEqualTo(live);
    }

    private static void put(Db db, TreeMap<String, byte[]> model, int k, byte[] v) {
        db.put(TestKeys.key(k), v);
        model.put(TestKeys.str(TestKeys.key(k)), v);
    }

    /** Frees the space, crashes (unsynced bytes lost), reopens and checks everything acknowledged is there. */
    private void reopenAfterFreeingSpace(
            Db db, TreeMap<String, byte[]> model, String uncertainKey, byte[] prior, byte[] attempted, String ctx)
            throws IOException {
        fs.clearFreeSpaceLimit();
        try {
            db.close();
        } catch (BloomKvIOException e) {
            // closing after the error may fail too; the crash decides what is on disk
        }
        fs.crash();
        try (Db reopened = Db.open(dir, options(fs))) {
            assertHolds(reopened, model, uncertainKey, prior, attempted, ctx + ", reopened");
            assertNoOrphanTables(reopened, ctx + ", reopened");
            reopened.put(TestKeys.bytes("after"), TestKeys.bytes("space freed"));
            reopened.flush();
            assertThat(TestKeys.str(reopened.get(TestKeys.bytes("after")))).isEqualTo("space freed");
        }
    }

    @Test
    void walAppendHitsFullDisk() throws IOException {
        long seed = TestKeys.seed("DiskFullTest.walAppend");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Db db = Db.open(dir, options(fs));
        for (int i = 0; i < 200; i++) {
            put(db, model, rnd.nextInt(500), TestKeys.value(rnd, 100));
        }
        fs.setFreeSpace(2000 + rnd.nextInt(2000));
        String failedKey = null;
        byte[] prior = null;
        byte[] attempted = null;
        for (int i = 0; failedKey == null; i++) {
            assertThat(i).as("the disk fills up").isLessThan(10_000);
            int k = rnd.nextInt(500);
            byte[] v = TestKeys.value(rnd, 100);
            String key = TestKeys.str(TestKeys.key(k));
            byte[] old = model.get(key);
            try {
                put(db, model, k, v);
            } catch (BloomKvException e) {
                assertEnospc(e);
                assertThat(e).hasMessageContaining("WAL append failed");
                failedKey = key;
                prior = old;
                attempted = v;
                model.remove(key);
            }
        }
        String ctx = "seed " + seed;
        // Writes keep failing (the WAL may hold a partial record) even with space again; reads go on.
        fs.clearFreeSpaceLimit();
        assertThatThrownBy(() -> db.put(TestKeys.key(1), TestKeys.bytes("x"))).satisfies(DiskFullTest::assertEnospc);
        assertThatThrownBy(db::flush).satisfies(DiskFullTest::assertEnospc);
        assertHolds(db, model, failedKey, prior, prior, ctx + ", after ENOSPC (the failed write is not visible)");
        reopenAfterFreeingSpace(db, model, failedKey, prior, attempted, ctx);
    }

    @Test
    void flushHitsFullDisk() throws IOException {
        long seed = TestKeys.seed("DiskFullTest.flush");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Db db = Db.open(dir, options(fs));
        for (int i = 0; i < 300; i++) {
            put(db, model, i, TestKeys.value(rnd, 100));
        }
        db.flush();
        for (int i = 0; i < 300; i++) {
            put(db, model, 1000 + i, TestKeys.value(rnd, 100));
        }
        // Room for less than the new table (~20 KB of values): the flush runs out of space.
        fs.setFreeSpace(1000 + rnd.nextInt(8000));
        String ctx = "seed " + seed;
        assertThatThrownBy(db::flush).satisfies(DiskFullTest::assertEnospc);
        assertThatThrownBy(() -> db.put(TestKeys.key(1), TestKeys.bytes("x"))).satisfies(DiskFullTest::assertEnospc);
        assertHolds(db, model, ctx + ", after ENOSPC");
        assertNoOrphanTables(db, ctx + ", the partial table is deleted");
        reopenAfterFreeingSpace(db, model, null, null, null, ctx);
    }

    @Test
    void compactionHitsFullDisk() throws IOException {
        long seed = TestKeys.seed("DiskFullTest.compaction");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Db db = Db.open(dir, options(fs));
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < 200; i++) {
                put(db, model, rnd.nextInt(600), TestKeys.value(rnd, 100));
            }
            db.flush();
        }
        assertThat(db.tables()).hasSize(4);
        fs.setFreeSpace(2000 + rnd.nextInt(20_000));
        String ctx = "seed " + seed;
        assertThatThrownBy(() -> db.compactRange(null, null)).satisfies(DiskFullTest::assertEnospc);
        assertThatThrownBy(() -> db.put(TestKeys.key(1), TestKeys.bytes("x"))).satisfies(DiskFullTest::assertEnospc);
        assertHolds(db, model, ctx + ", after ENOSPC");
        assertThat(db.tables()).as(ctx + ": the inputs stay live").hasSize(4);
        reopenAfterFreeingSpace(db, model, null, null, null, ctx);
    }

    @Test
    void quotaErrorNamesTheDevice() {
        fs.setFreeSpace(0);
        assertThatThrownBy(() -> Db.open(dir, options(fs)))
                .isInstanceOf(BloomKvIOException.class)
                .hasMessageContaining("No space left on device")
                .hasCauseInstanceOf(NoSpaceLeftException.class);
    }

    /**
     * On a real small file system (see the class comment): a filler file leaves little space, writes run
     * until the device is full, reads go on, the filler is deleted and the reopened database holds every
     * acknowledged write.
     */
    @Test
    @EnabledIfSystemProperty(named = "bloomkv.diskfull.dir", matches = ".+")
    void realSmallFileSystem() throws IOException {
        Path root = Path.of(System.getProperty("bloomkv.diskfull.dir"));
        long seed = TestKeys.seed("DiskFullTest.realSmallFileSystem");
        Random rnd = new Random(seed);
        Path db1 = root.resolve("bloomkv-diskfull-db");
        Path filler = root.resolve("bloomkv-diskfull-filler");
        Db.destroy(db1, Options.defaults());
        Files.deleteIfExists(filler);
        long usable = Files.getFileStore(root).getUsableSpace();
        try (OutputStream out = Files.newOutputStream(filler)) {
            byte[] chunk = new byte[64 << 10];
            for (long w = 0; w < usable - (768 << 10); w += chunk.length) {
                out.write(chunk);
            }
        }
        Options opts = options(FileSystem.disk()).writeBufferSize(128 << 10);
        TreeMap<String, byte[]> model = new TreeMap<>();
        String failure = null;
        long acknowledged = 0;
        try (Db db = Db.open(db1, opts)) {
            for (int i = 0; failure == null; i++) {
                assertThat(i).as("the device fills up").isLessThan(1_000_000);
                int k = rnd.nextInt(20_000);
                byte[] v = TestKeys.value(rnd, 200);
                try {
                    db.put(TestKeys.key(k), v);
                    model.put(TestKeys.str(TestKeys.key(k)), v);
                    acknowledged++;
                    if (i % 500 == 499) {
                        db.flush();
                    }
                } catch (BloomKvIOException e) {
                    assertThat(e).hasMessageContaining("No space left on device");
                    failure = e.getMessage();
                    model.remove(TestKeys.str(TestKeys.key(k)));
                    model.put("__failed__", v);
                }
            }
            byte[] failedValue = model.remove("__failed__");
            try (DbIterator it = db.iterator()) {
                long n = 0;
                for (it.seekToFirst(); it.valid(); it.next()) {
                    n++;
                }
                assertThat(n).as("reads go on after ENOSPC").isGreaterThanOrEqualTo(model.size());
            }
            for (Map.Entry<String, byte[]> e : model.entrySet()) {
                byte[] got = db.get(TestKeys.bytes(e.getKey()));
                assertThat(got).as("get " + e.getKey() + " after ENOSPC").isEqualTo(e.getValue());
            }
            assertThat(failedValue).isNotNull();
        } catch (BloomKvIOException closeFailure) {
            assertThat(failure)
                    .as("only closing may fail, after the write failed")
                    .isNotNull();
        }
        Files.delete(filler);
        try (Db reopened = Db.open(db1, opts)) {
            for (Map.Entry<String, byte[]> e : model.entrySet()) {
                assertThat(reopened.get(TestKeys.bytes(e.getKey())))
                        .as("get " + e.getKey() + " after reopen")
                        .isEqualTo(e.getValue());
            }
            assertNoOrphanTables(reopened, "real file system");
            System.out.println("DiskFullTest.realSmallFileSystem: " + root + " ("
                    + Files.getFileStore(root).type() + "), "
                    + acknowledged + " acknowledged puts before: " + failure + "; all " + model.size()
                    + " live keys read back after the filler was deleted and the database reopened");
        }
        Db.destroy(db1, Options.defaults());
    }
}
