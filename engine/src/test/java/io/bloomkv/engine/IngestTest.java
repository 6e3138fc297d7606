package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FileSystem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#ingest}: differential against a TreeMap model (reads right after each ingestion, after compactions and
 * after a reopen); files that overlap nothing land in the last level as written, files that overlap the tree or a
 * memtable are newer than everything before them (memtables flushed first or the call refused); snapshots taken
 * before do not see ingested keys; bad input is refused with typed errors and changes nothing.
 */
class IngestTest {
    @TempDir
    Path dir;

    private static Options small() {
        return Options.defaults()
                .writeBufferSize(16 << 10)
                .blockSize(512)
                .targetFileSize(16 << 10)
                .maxBytesForLevelBase(64 << 10)
                .syncMode(SyncMode.NONE);
    }

    /** Writes {@code entries} (sorted by the TreeMap of String keys, which is byte order for ASCII) to a file. */
    private static Path write(Path p, Map<String, byte[]> entries, Options options) {
        try (TableFileWriter w = TableFileWriter.create(p, options)) {
            for (Map.Entry<String, byte[]> e : entries.entrySet()) {
                w.put(TestKeys.bytes(e.getKey()), e.getValue());
            }
            w.finish();
        }
        return p;
    }

    private static TreeMap<String, byte[]> range(int from, int to, Random rnd) {
        TreeMap<String, byte[]> m = new TreeMap<>();
        for (int i = from; i < to; i++) {
            m.put(TestKeys.str(TestKeys.key(i)), TestKeys.value(rnd, 60));
        }
        return m;
    }

    private static void assertMatches(Db db, TreeMap<String, byte[]> model, String ctx) {
        assertThat(CheckpointTest.contents(db)).as(ctx).isEqualTo(CheckpointTest.render(model));
        for (Map.Entry<String, byte[]> e : model.entrySet()) {
            assertThat(db.get(TestKeys.bytes(e.getKey())))
                    .as(ctx + ": get " + e.getKey())
                    .isEqualTo(e.getValue());
        }
    }

    @Test
    void filesOverlappingNothingGoToTheLastLevelAsWrittenAndMoveDeletesTheOriginal() throws IOException {
        long seed = TestSeeds.seed("IngestTest.lastLevel");
        Random rnd = new Random(seed);
        Options opts = small();
        TreeMap<String, byte[]> model = new TreeMap<>();
        TreeMap<String, byte[]> a = range(0, 500, rnd);
        TreeMap<String, byte[]> b = range(1000, 1500, rnd);
        Path fa = write(dir.resolve("a.sst"), a, opts);
        Path fb = write(dir.resolve("b.sst"), b, opts);
        long sizeA = Files.size(fa);
        List<EventListener.TableFileCreatedInfo> created = new CopyOnWriteArrayList<>();
        EventListener listener = new EventListener() {
            @Override
            public void onTableFileCreated(TableFileCreatedInfo info) {
                created.add(info);
            }
        };
        try (Db db = Db.open(dir.resolve("db"), opts.listeners(listener))) {
            db.put(TestKeys.bytes("zzz"), new byte[] {1}); // in the memtable, outside both ranges
            model.put("zzz", new byte[] {1});
            db.ingest(List.of(fb, fa), IngestOptions.defaults()); // order of the list does not matter
            model.putAll(a);
            model.putAll(b);
            assertMatches(db, model, "seed " + seed + ": right after");
            assertThat(Files.exists(fa)).as("copy keeps the original").isTrue();
            int last = opts.numLevels() - 1;
            assertThat(db.tables())
                    .hasSize(2)
                    .allSatisfy(t -> assertThat(t.level()).isEqualTo(last));
            assertThat(db.tables()).anySatisfy(t -> assertThat(t.fileSize()).isEqualTo(sizeA));

            TreeMap<String, byte[]> c = range(2000, 2300, rnd);
            Path fc = write(dir.resolve("c.sst"), c, opts);
            db.ingest(List.of(fc), IngestOptions.defaults().moveFiles(true));
            model.putAll(c);
            assertThat(Files.exists(fc)).as("move removes the original name").isFalse();
            assertMatches(db, model, "seed " + seed + ": after move");
            db.waitForBackgroundWork();
            assertThat(created)
                    .filteredOn(i -> i.reason() == EventListener.TableReason.INGEST)
                    .isNotEmpty();
        }
        try (Db db = Db.open(dir.resolve("db"), small())) {
            assertMatches(db, model, "seed " + seed + ": after reopen");
        }
    }

    @Test
    void filesOverlappingTheTreeAreNewerThanEverythingBeforeAndOlderThanEverythingAfter() {
        long seed = TestSeeds.seed("IngestTest.overlap");
        Random rnd = new Random(seed);
        Options opts = small();
        TreeMap<String, byte[]> model = new TreeMap<>();
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            for (int i = 0; i < 2000; i++) {
                byte[] v = TestKeys.value(rnd, 60);
                db.put(TestKeys.key(i), v);
                model.put(TestKeys.str(TestKeys.key(i)), v);
            }
            db.compactRange(null, null);
            db.delete(TestKeys.key(10));
            model.remove(TestKeys.str(TestKeys.key(10)));
            db.flush(); // a tombstone in level 0
            TreeMap<String, byte[]> f = range(5, 1500, rnd);
            for (int i = 5; i < 1500; i += 2) {
                f.remove(TestKeys.str(TestKeys.key(i)));
            }
            db.ingest(List.of(write(dir.resolve("f.sst"), f, opts)), IngestOptions.defaults());
            model.putAll(f);
            assertMatches(db, model, "seed " + seed + ": right after");
            db.put(TestKeys.key(6), new byte[] {42});
            model.put(TestKeys.str(TestKeys.key(6)), new byte[] {42});
            db.compactRange(null, null);
            assertMatches(db, model, "seed " + seed + ": after a later put and a full compaction");
        }
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            assertMatches(db, model, "seed " + seed + ": after reopen");
        }
    }

    @Test
    void aMemtableHoldingKeysInTheRangeIsFlushedFirstOrTheCallRefused() {
        Options opts = small().writeBufferSize(1 << 20);
        TreeMap<String, byte[]> model = new TreeMap<>();
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            db.put(TestKeys.bytes("k5"), TestKeys.bytes("old"));
            db.put(TestKeys.bytes("x"), TestKeys.bytes("memtable"));
            model.put("k5", TestKeys.bytes("old"));
            model.put("x", TestKeys.bytes("memtable"));
            TreeMap<String, byte[]> f = new TreeMap<>(
                    Map.of("k1", TestKeys.bytes("f1"), "k5", TestKeys.bytes("new"), "k9", TestKeys.bytes("f9")));
            Path file = write(dir.resolve("f.sst"), f, opts);
            assertThatThrownBy(() ->
                            db.ingest(List.of(file), IngestOptions.defaults().allowBlockingFlush(false)))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("allowBlockingFlush");
            assertMatches(db, model, "refused: unchanged");
            assertThat(db.tables()).isEmpty();
            db.put(TestKeys.bytes("y"), TestKeys.bytes("still writable"));
            model.put("y", TestKeys.bytes("still writable"));

            db.ingest(List.of(file), IngestOptions.defaults());
            model.putAll(f);
            assertMatches(db, model, "flushed, then ingested");
            assertThat(db.tables()).anySatisfy(t -> assertThat(t.level()).isZero()); // the flushed memtable
        }
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            assertMatches(db, model, "after reopen");
        }
    }

    /** A range deletion left in the memtable is newer than sequence 0: ingested keys under it must still read. */
    @Test
    void aMemtableRangeDeletionOverTheFilesDoesNotHideThem() {
        Options opts = small().writeBufferSize(1 << 20);
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            db.deleteRange(TestKeys.bytes("a"), TestKeys.bytes("z"));
            TreeMap<String, byte[]> f = new TreeMap<>(Map.of("k1", TestKeys.bytes("f1"), "k9", TestKeys.bytes("f9")));
            Path file = write(dir.resolve("f.sst"), f, opts);
            assertThatThrownBy(() ->
                            db.ingest(List.of(file), IngestOptions.defaults().allowBlockingFlush(false)))
                    .isInstanceOf(InvalidArgumentException.class);
            db.ingest(List.of(file), IngestOptions.defaults());
            assertMatches(db, f, "ingested under a range deletion");
            db.compactRange(null, null);
            assertMatches(db, f, "after a full compaction");
        }
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            assertMatches(
                    db, new TreeMap<>(Map.of("k1", TestKeys.bytes("f1"), "k9", TestKeys.bytes("f9"))), "after reopen");
        }
    }

    @Test
    void aSnapshotTakenBeforeDoesNotSeeIngestedKeys() {
        Options opts = small();
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            db.put(TestKeys.bytes("a"), TestKeys.bytes("1"));
            try (Snapshot s = db.getSnapshot()) {
                Path file = write(dir.resolve("f.sst"), new TreeMap<>(Map.of("m", TestKeys.bytes("2"))), opts);
                db.ingest(List.of(file), IngestOptions.defaults());
                assertThat(db.get(TestKeys.bytes("m"), ReadOptions.defaults().snapshot(s)))
                        .isNull();
                assertThat(db.get(TestKeys.bytes("m"))).isEqualTo(TestKeys.bytes("2"));
                try (DbIterator it = db.iterator(ReadOptions.defaults().snapshot(s))) {
                    it.seekToFirst();
                    assertThat(TestKeys.str(it.key())).isEqualTo("a");
                    it.next();
                    assertThat(it.valid()).isFalse();
                }
            }
        }
    }

    @Test
    void badInputIsRefusedWithTypedErrorsAndChangesNothing() throws IOException {
        Options opts = small();
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            db.put(TestKeys.bytes("a"), TestKeys.bytes("1"));
            Path f1 = write(dir.resolve("1.sst"), new TreeMap<>(Map.of("b", new byte[1], "d", new byte[1])), opts);
            Path f2 = write(dir.resolve("2.sst"), new TreeMap<>(Map.of("c", new byte[1], "e", new byte[1])), opts);
            assertThatThrownBy(() -> db.ingest(List.of(f1, f2), IngestOptions.defaults()))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("overlap");
            assertThatThrownBy(() -> db.ingest(List.of(f1, f1), IngestOptions.defaults()))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("twice");
            assertThatThrownBy(() -> db.ingest(List.of(dir.resolve("missing.sst")), IngestOptions.defaults()))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.ingest(List.of(), IngestOptions.defaults()))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.ingest(List.of(f1), null)).isInstanceOf(InvalidArgumentException.class);
            Path junk = dir.resolve("junk.sst");
            Files.write(junk, new byte[200]);
            assertThatThrownBy(() -> db.ingest(List.of(junk), IngestOptions.defaults()))
                    .isInstanceOf(CorruptionException.class);
            // A table of a database holds sequence numbers above 0: not a TableFileWriter file.
            db.flush();
            Path own = db.tables().get(0).path();
            Path copy = dir.resolve("own.sst");
            Files.copy(own, copy);
            assertThatThrownBy(() -> db.ingest(List.of(copy), IngestOptions.defaults()))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("sequence 0");
            assertThat(db.tables()).hasSize(1);
            assertThat(db.get(TestKeys.bytes("b"))).isNull();
            db.ingest(List.of(f1), IngestOptions.defaults());
            assertThat(db.get(TestKeys.bytes("b"))).isEqualTo(new byte[1]);
        }
        try (Db ro = Db.open(dir.resolve("db"), small().readOnly(true))) {
            assertThatThrownBy(() -> ro.ingest(List.of(dir.resolve("2.sst")), IngestOptions.defaults()))
                    .isInstanceOf(DbReadOnlyException.class);
        }
    }

    private static byte[] b(String s) {
        return TestKeys.bytes(s);
    }

    /** The database's keys and values, "k=v k=v". */
    private static String dump(Db db) {
        StringBuilder sb = new StringBuilder();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                sb.append(sb.isEmpty() ? "" : " ")
                        .append(str(it.key()))
                        .append('=')
                        .append(str(it.value()));
            }
        }
        return sb.toString();
    }

    private static String str(byte[] v) {
        return v == null ? null : TestKeys.str(v);
    }

    /** A file of each kind of entry: put a, merge b, delete c, range deletion [d, f) with its own put e. */
    private static Path mixedFile(Path p, Options options) {
        try (TableFileWriter w = TableFileWriter.create(p, options)) {
            w.put(b("a"), b("fa"));
            w.deleteRange(b("d"), b("f"));
            w.merge(b("b"), b("fb"));
            w.delete(b("c"));
            w.put(b("e"), b("fe"));
            w.finish();
        }
        return p;
    }

    /**
     * A file overlapping nothing goes to the last level as written, at sequence 0: its tombstone and range deletion
     * hide nothing (and break nothing), its merge operand merges onto no value; later writes stack on it.
     */
    @Test
    void mergesAndDeletesOfAFileOverlappingNothingGoToTheLastLevelAsWritten() {
        Options opts = small().mergeOperator(MergeOperators.stringAppend(','));
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            db.put(b("z"), b("1"));
            db.flush();
            db.ingest(List.of(mixedFile(dir.resolve("m.sst"), opts)), IngestOptions.defaults());
            TableInfo t = db.tables().stream()
                    .filter(i -> str(i.smallestUserKey()).equals("a"))
                    .findFirst()
                    .orElseThrow();
            assertThat(t.level()).isEqualTo(opts.numLevels() - 1);
            assertThat(t.largestSequence()).isZero();
            assertThat(dump(db)).isEqualTo("a=fa b=fb e=fe z=1");
            assertThat(str(db.get(b("b")))).isEqualTo("fb");
            assertThat(db.get(b("c"))).isNull();
            assertThat(db.get(b("d"))).isNull();
            db.merge(b("b"), b("w"));
            db.put(b("c"), b("wc"));
            db.put(b("d"), b("wd"));
            db.merge(b("e"), b("we"));
            String expected = "a=fa b=fb,w c=wc d=wd e=fe,we z=1";
            assertThat(dump(db)).isEqualTo(expected);
            db.flush();
            assertThat(dump(db)).as("flushed").isEqualTo(expected);
            db.compactRange(null, null);
            assertThat(dump(db)).as("compacted").isEqualTo(expected);
            assertThat(str(db.get(b("b")))).isEqualTo("fb,w");
        }
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            assertThat(dump(db)).as("reopened").isEqualTo("a=fa b=fb,w c=wc d=wd e=fe,we z=1");
        }
    }

    /**
     * A file overlapping the tree is rewritten at a fresh sequence number: its tombstone and range deletion hide the
     * older values (not the file's own put inside the range), its merge operand stacks on the older value and
     * operands; a snapshot taken before sees none of it.
     */
    @Test
    void mergesAndDeletesOfAFileOverlappingTheTreeApplyOverOlderData() {
        Options opts = small().mergeOperator(MergeOperators.stringAppend(','));
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            for (String k : List.of("a", "b", "c", "d", "dd", "e", "f")) {
                db.put(b(k), b("o" + k));
            }
            db.compactRange(null, null);
            db.merge(b("b"), b("m1"));
            db.flush();
            db.merge(b("b"), b("m2")); // in the memtable: flushed first
            Snapshot before = db.getSnapshot();
            db.ingest(List.of(mixedFile(dir.resolve("m.sst"), opts)), IngestOptions.defaults());
            String expected = "a=fa b=ob,m1,m2,fb e=fe f=of";
            assertThat(dump(db)).isEqualTo(expected);
            assertThat(db.tables())
                    .allSatisfy(t -> assertThat(t.smallestSequence() == 0 && t.largestSequence() == 0)
                            .isFalse());
            assertThat(str(db.get(b("b")))).isEqualTo("ob,m1,m2,fb");
            assertThat(db.get(b("c"))).isNull();
            assertThat(db.get(b("dd"))).isNull();
            assertThat(str(db.get(b("f")))).isEqualTo("of");
            assertThat(str(db.get(b("b"), ReadOptions.defaults().snapshot(before))))
                    .isEqualTo("ob,m1,m2");
            assertThat(str(db.get(b("dd"), ReadOptions.defaults().snapshot(before))))
                    .isEqualTo("odd");
            db.releaseSnapshot(before);
            db.merge(b("b"), b("w"));
            db.compactRange(null, null);
            assertThat(dump(db)).as("compacted").isEqualTo("a=fa b=ob,m1,m2,fb,w e=fe f=of");
        }
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            assertThat(dump(db)).as("reopened").isEqualTo("a=fa b=ob,m1,m2,fb,w e=fe f=of");
        }
    }

    /**
     * A file holding merge operands is refused, nothing changed, by a database without a merge operator (its reads
     * could not be answered); a TTL database refuses every file (they carry no write times), deletes and merges too.
     */
    @Test
    void mergeOperandsNeedAMergeOperatorAndTtlDatabasesRefuseFiles() {
        Options opts = small();
        Path f = mixedFile(dir.resolve("m.sst"), opts);
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            db.put(b("a"), b("1"));
            assertThatThrownBy(
                            () -> db.ingest(List.of(f), IngestOptions.defaults().moveFiles(true)))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("merge operator");
            assertThat(Files.exists(f)).isTrue();
            assertThat(db.tables()).isEmpty();
            assertThat(dump(db)).isEqualTo("a=1");
            Path noMerge;
            try (TableFileWriter w = TableFileWriter.create(dir.resolve("d.sst"), opts)) {
                w.delete(b("a"));
                w.deleteRange(b("b"), b("c"));
                w.finish();
                noMerge = w.path();
            }
            db.ingest(List.of(noMerge), IngestOptions.defaults());
            assertThat(db.get(b("a"))).isNull();
        }
        try (Db db = Db.open(dir.resolve("ttl"), small().ttl(java.time.Duration.ofHours(1)))) {
            assertThatThrownBy(() -> db.ingest(List.of(f), IngestOptions.defaults()))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("TTL");
        }
    }

    /**
     * Random rounds of puts, deletes and ingestions (random ranges, some overlapping the tree, some new, copy or
     * move), with background compactions and concurrent-free checks against the model after each ingestion and
     * after a reopen.
     */
    @Test
    void randomizedAgainstAModel() {
        long seed = TestSeeds.seed("IngestTest.random");
        Random rnd = new Random(seed);
        Options opts = small();
        TreeMap<String, byte[]> model = new TreeMap<>();
        Path db = dir.resolve("db");
        int fileNo = 0;
        for (int round = 0; round < 3; round++) {
            try (Db d = Db.open(db, opts)) {
                for (int step = 0; step < 10; step++) {
                    int op = rnd.nextInt(3);
                    if (op == 0) {
                        for (int i = 0; i < 200; i++) {
                            byte[] k = TestKeys.key(rnd.nextInt(20_000));
                            if (rnd.nextInt(8) == 0) {
                                d.delete(k);
                                model.remove(TestKeys.str(k));
                            } else {
                                byte[] v = TestKeys.value(rnd, 60);
                                d.put(k, v);
                                model.put(TestKeys.str(k), v);
                            }
                        }
                    } else {
                        // one to three disjoint files, new ranges (above everything) or anywhere
                        int files = 1 + rnd.nextInt(3);
                        int start = op == 1 ? 20_000 + fileNo * 1000 : rnd.nextInt(18_000);
                        List<Path> paths = new ArrayList<>();
                        TreeMap<String, byte[]> all = new TreeMap<>();
                        for (int f = 0; f < files; f++) {
                            int from = start + f * 300;
                            TreeMap<String, byte[]> m = new TreeMap<>();
                            for (int i = from; i < from + 250; i++) {
                                if (rnd.nextInt(3) != 0) {
                                    m.put(TestKeys.str(TestKeys.key(i)), TestKeys.value(rnd, 60));
                                }
                            }
                            if (m.isEmpty()) {
                                m.put(TestKeys.str(TestKeys.key(from)), new byte[0]);
                            }
                            paths.add(write(dir.resolve("in" + (fileNo++) + ".sst"), m, opts));
                            all.putAll(m);
                        }
                        d.ingest(paths, IngestOptions.defaults().moveFiles(rnd.nextBoolean()));
                        model.putAll(all);
                        assertMatches(d, model, "seed " + seed + ", round " + round + ", step " + step);
                    }
                }
                d.waitForBackgroundWork();
                assertMatches(d, model, "seed " + seed + ", round " + round + " after compactions");
            }
            try (Db d = Db.open(db, opts)) {
                assertMatches(d, model, "seed " + seed + ", round " + round + " after reopen");
            }
        }
    }

    /** Ingestion while another thread writes: every acknowledged write and every ingested key is there. */
    @Test
    void ingestWhileWriting() throws Exception {
        long seed = TestSeeds.seed("IngestTest.concurrent");
        Random rnd = new Random(seed);
        Options opts = small();
        try (Db db = Db.open(dir.resolve("db"), opts)) {
            Thread writer = new Thread(() -> {
                for (int i = 0; i < 5000; i++) {
                    db.put(TestKeys.bytes("w" + i), TestKeys.bytes("v" + i));
                }
            });
            writer.start();
            TreeMap<String, byte[]> ingested = new TreeMap<>();
            for (int f = 0; f < 10; f++) {
                TreeMap<String, byte[]> m = range(f * 100, f * 100 + 100, rnd);
                db.ingest(List.of(write(dir.resolve("c" + f + ".sst"), m, opts)), IngestOptions.defaults());
                ingested.putAll(m);
            }
            writer.join();
            for (Map.Entry<String, byte[]> e : ingested.entrySet()) {
                assertThat(db.get(TestKeys.bytes(e.getKey())))
                        .as("seed " + seed + ": " + e.getKey())
                        .isEqualTo(e.getValue());
            }
            for (int i = 0; i < 5000; i++) {
                assertThat(db.get(TestKeys.bytes("w" + i))).isEqualTo(TestKeys.bytes("v" + i));
            }
        }
        assertThat(FileSystem.disk().exists(dir.resolve("db"))).isTrue();
    }
}
