package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link TableFileWriter}: the file is an engine table (read back by the engine's {@link TableReader}, entries at
 * sequence 0, with a filter) holding exactly what was put; unsorted, duplicate and invalid input is refused with
 * {@link InvalidArgumentException} and leaves the writer usable; an unfinished or failed file is deleted.
 */
class TableFileWriterTest {
    @TempDir
    Path dir;

    private static TreeMap<String, byte[]> randomSorted(Random rnd, int n) {
        TreeMap<String, byte[]> m = new TreeMap<>();
        while (m.size() < n) {
            m.put(TestKeys.str(TestKeys.key(rnd.nextInt(1_000_000))), TestKeys.value(rnd, 100));
        }
        return m;
    }

    private static TableReader open(Path p) throws IOException {
        return TableReader.open(FileSystem.disk(), p, 1, null, new ReadCounters());
    }

    @Test
    void writesATableTheEngineReadsBack() throws IOException {
        long seed = TestSeeds.seed("TableFileWriterTest.roundTrip");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = randomSorted(rnd, 5000);
        Path p = dir.resolve("a.sst");
        try (TableFileWriter w =
                TableFileWriter.create(p, Options.defaults().blockSize(512).compression(Compression.LZ4))) {
            for (Map.Entry<String, byte[]> e : model.entrySet()) {
                w.put(TestKeys.bytes(e.getKey()), e.getValue());
            }
            assertThat(w.entries()).isEqualTo(model.size());
            w.finish();
            assertThatThrownBy(() -> w.put(TestKeys.bytes("zzz"), new byte[1]))
                    .isInstanceOf(IllegalStateException.class);
        }
        try (TableReader r = open(p)) {
            assertThat(r.properties().entries()).isEqualTo(model.size());
            assertThat(r.properties().largestSeq()).isZero();
            assertThat(r.hasFilter()).isTrue();
            TreeMap<String, byte[]> read = new TreeMap<>();
            try (InternalIterator it = r.iterator()) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    assertThat(InternalKey.sequence(it.key())).isZero();
                    assertThat(InternalKey.type(it.key())).isEqualTo(ValueType.PUT);
                    read.put(TestKeys.str(InternalKey.userKey(it.key())), it.value());
                }
            }
            assertThat(read.keySet()).isEqualTo(model.keySet());
            for (Map.Entry<String, byte[]> e : model.entrySet()) {
                assertThat(read.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
                byte[] k = TestKeys.bytes(e.getKey());
                TableReader.Entry got = r.get(k, Hashing.hash64(k), InternalKey.MAX_SEQUENCE);
                assertThat(got).as("get " + e.getKey()).isNotNull();
                assertThat(got.value()).isEqualTo(e.getValue());
            }
            assertThat(r.verifyChecksums()).isEmpty();
        }
    }

    @Test
    void unsortedDuplicateAndInvalidInputIsRefusedAndTheWriterStaysUsable() throws IOException {
        Path p = dir.resolve("b.sst");
        try (TableFileWriter w = TableFileWriter.create(p, Options.defaults())) {
            w.put(TestKeys.bytes("b"), TestKeys.bytes("1"));
            assertThatThrownBy(() -> w.put(TestKeys.bytes("b"), TestKeys.bytes("2")))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("duplicate");
            assertThatThrownBy(() -> w.put(TestKeys.bytes("a"), TestKeys.bytes("2")))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("before the previous");
            assertThatThrownBy(() -> w.put(null, TestKeys.bytes("2"))).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.put(new byte[0], TestKeys.bytes("2")))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.put(TestKeys.bytes("c"), null)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.put(new byte[Db.MAX_KEY_SIZE + 1], new byte[0]))
                    .isInstanceOf(InvalidArgumentException.class);
            // "\u00ff" sorts after "c" unsigned; the refused puts left nothing behind
            w.put(TestKeys.bytes("c"), TestKeys.bytes("3"));
            w.put(new byte[] {(byte) 0xff}, TestKeys.bytes("4"));
            w.finish();
        }
        try (TableReader r = open(p)) {
            assertThat(r.properties().entries()).isEqualTo(3);
        }
        assertThatThrownBy(() -> TableFileWriter.create(null, Options.defaults()))
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> TableFileWriter.create(p, null)).isInstanceOf(InvalidArgumentException.class);
    }

    /**
     * Puts, merge operands and deletes share one strictly increasing key order (one entry per key), with the argument
     * checks of put; range deletions come in any order, may overlap, and are written as their union to the
     * range-deletion block at sequence 0; the properties count each kind.
     */
    @Test
    void mergesDeletesAndRangeDeletionsShareTheOrderAndCounts() throws IOException {
        Path p = dir.resolve("kinds.sst");
        try (TableFileWriter w = TableFileWriter.create(p, Options.defaults())) {
            w.deleteRange(TestKeys.bytes("m"), TestKeys.bytes("p"));
            w.put(TestKeys.bytes("b"), TestKeys.bytes("1"));
            assertThatThrownBy(() -> w.delete(TestKeys.bytes("b")))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("duplicate");
            assertThatThrownBy(() -> w.merge(TestKeys.bytes("a"), TestKeys.bytes("x")))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("before the previous");
            w.merge(TestKeys.bytes("c"), TestKeys.bytes("x"));
            assertThatThrownBy(() -> w.put(TestKeys.bytes("c"), TestKeys.bytes("2")))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("duplicate");
            assertThatThrownBy(() -> w.merge(TestKeys.bytes("d"), null)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.merge(null, TestKeys.bytes("x"))).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.merge(TestKeys.bytes("d"), new byte[Db.MAX_VALUE_SIZE + 1]))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.delete(new byte[0])).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.delete(null)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.delete(new byte[Db.MAX_KEY_SIZE + 1]))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.deleteRange(TestKeys.bytes("z"), TestKeys.bytes("y")))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.deleteRange(null, TestKeys.bytes("y")))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> w.deleteRange(TestKeys.bytes("a"), new byte[0]))
                    .isInstanceOf(InvalidArgumentException.class);
            w.deleteRange(TestKeys.bytes("q"), TestKeys.bytes("q")); // empty: nothing
            w.delete(TestKeys.bytes("d"));
            // any order, before the keys they cover and overlapping: [a, b), [e, g) and [m, p) joined with [n, r)
            w.deleteRange(TestKeys.bytes("n"), TestKeys.bytes("r"));
            w.deleteRange(TestKeys.bytes("a"), TestKeys.bytes("b"));
            w.deleteRange(TestKeys.bytes("e"), TestKeys.bytes("g"));
            w.deleteRange(TestKeys.bytes("e"), TestKeys.bytes("f"));
            w.put(TestKeys.bytes("e"), TestKeys.bytes("3"));
            assertThat(w.entries()).isEqualTo(4);
            assertThat(w.rangeDeletions()).isEqualTo(5);
            w.finish();
        }
        try (TableReader r = open(p)) {
            assertThat(r.properties().entries()).isEqualTo(4);
            assertThat(r.properties().deletions()).isEqualTo(1);
            assertThat(r.properties().mergeOperands()).isEqualTo(1);
            assertThat(r.properties().rangeDeletions()).isEqualTo(3);
            assertThat(r.properties().largestSeq()).isZero();
            assertThat(TestKeys.str(r.properties().smallestUserKey())).isEqualTo("a");
            assertThat(TestKeys.str(r.properties().largestUserKey())).isEqualTo("r");
            StringBuilder sb = new StringBuilder();
            try (InternalIterator it = r.iterator()) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    assertThat(InternalKey.sequence(it.key())).isZero();
                    sb.append(TestKeys.str(InternalKey.userKey(it.key())))
                            .append(':')
                            .append(InternalKey.type(it.key()))
                            .append(' ');
                }
            }
            assertThat(sb.toString()).isEqualTo("b:PUT c:MERGE d:DELETE e:PUT ");
            StringBuilder ts = new StringBuilder();
            for (var t : r.rangeTombstones().fragments()) {
                assertThat(t.sequence()).isZero();
                ts.append('[')
                        .append(TestKeys.str(t.begin()))
                        .append(',')
                        .append(TestKeys.str(t.end()))
                        .append(')');
            }
            assertThat(ts.toString()).isEqualTo("[a,b)[e,g)[m,r)");
        }
        // range deletions alone make a file
        Path only = dir.resolve("only-ranges.sst");
        try (TableFileWriter w = TableFileWriter.create(only, Options.defaults())) {
            w.deleteRange(TestKeys.bytes("k"), TestKeys.bytes("l"));
            w.finish();
        }
        try (TableReader r = open(only)) {
            assertThat(r.properties().entries()).isZero();
            assertThat(r.properties().rangeDeletions()).isEqualTo(1);
        }
    }

    @Test
    void anEmptyOrUnfinishedFileIsDeleted() {
        Path empty = dir.resolve("empty.sst");
        TableFileWriter w = TableFileWriter.create(empty, Options.defaults());
        assertThatThrownBy(w::finish).isInstanceOf(InvalidArgumentException.class);
        assertThat(Files.exists(empty)).isFalse();
        w.close();

        Path partial = dir.resolve("partial.sst");
        try (TableFileWriter p = TableFileWriter.create(partial, Options.defaults())) {
            p.put(TestKeys.bytes("a"), TestKeys.bytes("1"));
        }
        assertThat(Files.exists(partial)).isFalse();
    }

    /**
     * Every file-system operation of writing a table, failed in turn: a typed I/O error and no file left. The appends
     * and syncs run on the writer's second thread, and their errors reach put or finish; without incremental syncs
     * (bytesPerSync 0) and with a sync every 4 KiB; with direct writes and through the page cache. A fault on the
     * direct open is absorbed by the fallback to the plain one (the file is then written through the page cache).
     */
    @ParameterizedTest
    @CsvSource({"0, true", "4096, true", "0, false", "4096, false"})
    void everyFailedOperationSurfacesAndLeavesNoFile(long bytesPerSync, boolean direct) throws IOException {
        int total = -1;
        for (int i = 0; total < 0 || i <= total; i++) {
            FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
            AtomicInteger ops = new AtomicInteger();
            AtomicInteger syncs = new AtomicInteger();
            FaultInjectingFileSystem.Fault counter = fs.inject((op, path) -> {
                ops.incrementAndGet();
                if (op == FaultInjectingFileSystem.Op.SYNC) {
                    syncs.incrementAndGet();
                }
                return false;
            });
            FaultInjectingFileSystem.Fault nth = i == 0 ? null : fs.injectNth((op, path) -> true, i);
            Path p = dir.resolve("f" + bytesPerSync + "-" + direct + "-" + i + ".sst");
            boolean finished = false;
            try (TableFileWriter w = TableFileWriter.create(
                    p,
                    Options.defaults()
                            .fileSystem(fs)
                            .blockSize(256)
                            .compression(Compression.NONE)
                            .bytesPerSync(bytesPerSync)
                            .useDirectWritesForBulkLoad(direct))) {
                for (int k = 0; k < 200; k++) {
                    w.put(TestKeys.key(k), new byte[40]);
                }
                w.finish();
                finished = true;
            } catch (BloomKvIOException e) {
                assertThat(finished).isFalse();
            }
            counter.remove();
            if (nth != null) {
                nth.remove();
            }
            if (i == 0) {
                total = ops.get();
                assertThat(finished).isTrue();
                if (bytesPerSync > 0) {
                    // 200 entries of ~50 bytes, uncompressed: several 4 KiB chunks, each followed by a sync, then the
                    // final one
                    assertThat(syncs.get()).as("incremental syncs").isGreaterThan(2);
                } else {
                    assertThat(syncs.get())
                            .as("the data area, then the whole file")
                            .isEqualTo(2);
                }
            }
            if (finished) {
                try (TableReader r = open(p)) {
                    assertThat(r.properties().entries()).as("fault " + i).isEqualTo(200);
                }
            } else {
                assertThat(Files.exists(p))
                        .as("fault " + i + ": partial file deleted")
                        .isFalse();
            }
        }
        assertThat(total).isGreaterThan(2);
        assertThat(writeBehindThreads()).as("write-behind threads left running").isZero();
    }

    /** The same entries make the same bytes whatever the incremental syncs, with direct writes or not. */
    @Test
    void writeBehindWritesTheSameFileAsTheCaller() throws IOException {
        long seed = TestSeeds.seed("TableFileWriterTest.writeBehind");
        TreeMap<String, byte[]> model = randomSorted(new Random(seed), 30_000);
        long[] modes = {0, 4096, 1 << 20};
        byte[][] files = new byte[2 * modes.length][];
        for (int m = 0; m < files.length; m++) {
            Path p = dir.resolve("same-" + m + ".sst");
            try (TableFileWriter w = TableFileWriter.create(
                    p,
                    Options.defaults()
                            .blockSize(1024)
                            .compression(Compression.NONE)
                            .bytesPerSync(modes[m % modes.length])
                            .useDirectWritesForBulkLoad(m < modes.length))) {
                for (Map.Entry<String, byte[]> e : model.entrySet()) {
                    w.put(TestKeys.bytes(e.getKey()), e.getValue());
                }
                w.finish();
            }
            files[m] = Files.readAllBytes(p);
        }
        assertThat(files[0].length).isGreaterThan(3 << 19); // more than one 1 MiB chunk
        for (int m = 1; m < files.length; m++) {
            assertThat(files[m]).as("mode %d, seed %d", m, seed).isEqualTo(files[0]);
        }
        assertThat(writeBehindThreads()).isZero();
    }

    /**
     * Direct writes go through {@link FileSystem#newDirectWritableFile} where the file system offers it, the page cache
     * where it does not (an in-memory file system) or where the option is off; the table is the same either way.
     */
    @Test
    void directWritesWhereTheFileSystemOffersThemElseThePageCache() throws IOException {
        java.util.List<String> opened = new java.util.concurrent.CopyOnWriteArrayList<>();
        FileSystem recording = new io.bloomkv.engine.fs.ForwardingFileSystem(FileSystem.disk()) {
            @Override
            public io.bloomkv.engine.fs.WritableFile newWritableFile(Path p) throws IOException {
                opened.add("plain");
                return super.newWritableFile(p);
            }

            @Override
            public io.bloomkv.engine.fs.WritableFile newDirectWritableFile(Path p) throws IOException {
                opened.add("direct");
                return delegateDirectWritableFile(p);
            }
        };
        for (boolean direct : new boolean[] {true, false}) {
            opened.clear();
            Path p = dir.resolve("rec-" + direct + ".sst");
            try (TableFileWriter w = TableFileWriter.create(
                    p, Options.defaults().fileSystem(recording).useDirectWritesForBulkLoad(direct))) {
                w.put(TestKeys.bytes("k"), TestKeys.bytes("v"));
                w.finish();
            }
            assertThat(opened).containsExactly(direct ? "direct" : "plain");
            try (TableReader r = open(p)) {
                assertThat(r.properties().entries()).isEqualTo(1);
            }
        }
        assertThat(Options.defaults().useDirectWritesForBulkLoad()).isFalse();
        assertThat(Options.defaults().useDirectWritesForBulkLoad(true).copy().useDirectWritesForBulkLoad())
                .isTrue();

        io.bloomkv.engine.fs.InMemoryFileSystem mem = new io.bloomkv.engine.fs.InMemoryFileSystem();
        mem.createDirectories(dir);
        Path p = dir.resolve("mem.sst");
        try (TableFileWriter w = TableFileWriter.create(p, Options.defaults().fileSystem(mem))) {
            w.put(TestKeys.bytes("k"), TestKeys.bytes("v"));
            w.finish();
        }
        assertThat(mem.exists(p)).isTrue();
        assertThat(Files.exists(p)).isFalse();
        try (TableReader r = TableReader.open(mem, p, 1, null, new ReadCounters())) {
            assertThat(r.properties().entries()).isEqualTo(1);
        }
    }

    @Test
    void bytesPerSyncIsValidated() {
        assertThat(Options.defaults().bytesPerSync()).isZero();
        assertThat(Options.defaults().bytesPerSync(0).bytesPerSync()).isZero();
        assertThat(Options.defaults().bytesPerSync(1 << 20).copy().bytesPerSync())
                .isEqualTo(1 << 20);
        assertThatThrownBy(() -> Options.defaults().bytesPerSync(-1)).isInstanceOf(InvalidArgumentException.class);
    }

    /** An abandoned writer (closed before finish) ends its write-behind thread and deletes the file. */
    @Test
    void anAbandonedWriteBehindWriterEndsItsThread() {
        Path p = dir.resolve("abandoned.sst");
        try (TableFileWriter w = TableFileWriter.create(p, Options.defaults().bytesPerSync(4096))) {
            for (int k = 0; k < 5000; k++) {
                w.put(TestKeys.key(k), new byte[100]);
            }
        }
        assertThat(Files.exists(p)).isFalse();
        assertThat(writeBehindThreads()).isZero();
    }

    private static long writeBehindThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("bloomkv-write-behind") && t.isAlive())
                .count();
    }
}
