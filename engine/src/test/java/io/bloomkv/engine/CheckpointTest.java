package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.InMemoryFileSystem;
import io.bloomkv.engine.fs.NoFsyncFileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.version.FileNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#checkpoint}: the copy opens (read-write, as another process would) with exactly the writes acknowledged
 * before the call, under a concurrent writer too; tables are linked, or copied where links fail; a failed
 * checkpoint (every file-system operation failed in turn) leaves no CURRENT and the source intact; a crash at any
 * operation of a checkpoint leaves a directory that either opens with exactly the point or is refused.
 */
class CheckpointTest {
    @TempDir
    Path dir;

    /** Small tables; writes not synced (durability is tested on a {@link FaultInjectingFileSystem}, see {@link #faulty}). */
    private static Options small(FileSystem fs) {
        return Options.defaults()
                .fileSystem(fs)
                .writeBufferSize(16 << 10)
                .blockSize(512)
                .targetFileSize(16 << 10)
                .syncMode(SyncMode.NONE);
    }

    /** A fault-injecting file system over the disk without fsyncs (its crash model decides what survives). */
    private static FaultInjectingFileSystem faulty() {
        return new FaultInjectingFileSystem(new NoFsyncFileSystem());
    }

    /** Puts {@code n} random keys (and some deletes) into {@code db} and {@code model}. */
    private static void load(Db db, TreeMap<String, byte[]> model, Random rnd, int n) {
        for (int i = 0; i < n; i++) {
            byte[] k = TestKeys.key(rnd.nextInt(2000));
            if (rnd.nextInt(10) == 0) {
                db.delete(k);
                model.remove(TestKeys.str(k));
            } else {
                byte[] v = TestKeys.value(rnd, 80);
                db.put(k, v);
                model.put(TestKeys.str(k), v);
            }
        }
    }

    static TreeMap<String, String> contents(Db db) {
        TreeMap<String, String> out = new TreeMap<>();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                out.put(TestKeys.str(it.key()), Arrays.toString(it.value()));
            }
        }
        return out;
    }

    static TreeMap<String, String> render(TreeMap<String, byte[]> model) {
        TreeMap<String, String> out = new TreeMap<>();
        model.forEach((k, v) -> out.put(k, Arrays.toString(v)));
        return out;
    }

    @Test
    void checkpointHoldsTablesAndMemtableAndIsIndependent() throws IOException {
        long seed = TestSeeds.seed("CheckpointTest.basic");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Path src = dir.resolve("db");
        Path cp = dir.resolve("cp");
        try (Db db = Db.open(src, small(FileSystem.disk()))) {
            load(db, model, rnd, 3000);
            db.flush();
            load(db, model, rnd, 200); // some in the memtable only
            db.checkpoint(cp);
            TreeMap<String, String> atPoint = render(model);
            load(db, model, rnd, 500); // after the point: not in the checkpoint
            db.compactRange(null, null); // deletes the source's old tables: the checkpoint keeps its links
            assertThat(contents(db)).isEqualTo(render(model));
            try (Db copy = Db.open(cp, small(FileSystem.disk()))) {
                assertThat(contents(copy)).as("seed " + seed).isEqualTo(atPoint);
                copy.put(TestKeys.bytes("only-in-copy"), new byte[] {1});
            }
            assertThat(db.get(TestKeys.bytes("only-in-copy"))).isNull();
        }
        try (Db copy = Db.open(cp, small(FileSystem.disk()))) {
            assertThat(copy.get(TestKeys.bytes("only-in-copy"))).containsExactly(1);
        }
    }

    /**
     * A memtable switch closes the live mapped WAL (cutting it to its records) while the checkpoint copies it: the
     * checkpoint reads the log to the cut and holds every write of the point. The switch runs on another thread right
     * after the checkpoint opened the log, when the size it sampled still counts the space allocated ahead.
     */
    @Test
    void aLogCutByASwitchWhileTheCheckpointCopiesItIsCopiedWhole() throws Exception {
        Assumptions.assumeTrue(FileSystem.disk().supportsMappedWrites(), "mapped writes need native access on Linux");
        long seed = TestSeeds.seed("CheckpointTest.cutWhileCopied");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Path src = dir.resolve("db");
        AtomicBoolean armed = new AtomicBoolean();
        Db[] open = new Db[1];
        long[] sampled = {-1, -1};
        FileSystem fs = new ForwardingFileSystem(FileSystem.disk()) {
            @Override
            public boolean supportsMappedWrites() {
                return delegate().supportsMappedWrites();
            }

            @Override
            public WritableFile newMappedWritableFile(Path p) throws IOException {
                return delegate().newMappedWritableFile(p);
            }

            @Override
            public ReadableFile newReadableFile(Path p) throws IOException {
                ReadableFile f = super.newReadableFile(p);
                if (!p.getFileName().toString().endsWith(".log") || !armed.compareAndSet(true, false)) {
                    return f;
                }
                return new ForwardingFileSystem.ForwardingReadableFile(f) {
                    boolean cut;

                    @Override
                    public void readFully(long pos, byte[] dst, int off, int len) throws IOException {
                        if (!cut) { // the first read: the reader has sampled the size, allocated space included
                            cut = true;
                            sampled[0] = size();
                            Thread flusher = new Thread(() -> open[0].flush()); // a switch: closes this log
                            flusher.start();
                            try {
                                flusher.join(30_000);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new IOException(e);
                            }
                            sampled[1] = size();
                        }
                        super.readFully(pos, dst, off, len);
                    }
                };
            }
        };
        Options opts = Options.defaults()
                .fileSystem(fs)
                .writeBufferSize(4 << 20)
                .syncMode(SyncMode.NONE)
                .autoCompaction(false);
        try (Db db = Db.open(src, opts)) {
            open[0] = db;
            for (int i = 0; i < 300; i++) { // ~300 KB in the log: the copy reads past the first blocks after the cut
                byte[] k = TestKeys.key(i);
                byte[] v = TestKeys.value(rnd, 1000);
                db.put(k, v);
                model.put(TestKeys.str(k), v);
            }
            armed.set(true);
            db.checkpoint(dir.resolve("cp"));
            assertThat(armed.get()).as("the checkpoint read the live log").isFalse();
            assertThat(sampled[1])
                    .as("the log was cut while the checkpoint held it open")
                    .isLessThan(sampled[0]);
        }
        try (Db copy = Db.open(dir.resolve("cp"), small(FileSystem.disk()))) {
            assertThat(contents(copy)).as("seed " + seed).isEqualTo(render(model));
        }
    }

    @Test
    void refusesBadTargets() throws IOException {
        Path src = dir.resolve("db");
        Files.createDirectories(dir.resolve("full"));
        Files.writeString(dir.resolve("full").resolve("x"), "x");
        Files.writeString(dir.resolve("afile"), "x");
        try (Db db = Db.open(src, small(FileSystem.disk()))) {
            db.put(TestKeys.key(1), new byte[] {1});
            assertThatThrownBy(() -> db.checkpoint(null)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.checkpoint(src)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.checkpoint(dir.resolve("full")))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("not empty");
            assertThatThrownBy(() -> db.checkpoint(dir.resolve("afile"))).isInstanceOf(InvalidArgumentException.class);
            Files.createDirectories(dir.resolve("empty"));
            db.checkpoint(dir.resolve("empty"));
        }
        try (Db copy = Db.open(dir.resolve("empty"), small(FileSystem.disk()))) {
            assertThat(copy.get(TestKeys.key(1))).containsExactly(1);
        }
    }

    @Test
    void copiesTablesWhereLinksFail() {
        InMemoryFileSystem mem = new InMemoryFileSystem();
        AtomicInteger linkCalls = new AtomicInteger();
        FileSystem noLinks = new ForwardingFileSystem(mem) {
            @Override
            public void link(Path existing, Path link) throws IOException {
                linkCalls.incrementAndGet();
                throw new IOException("links refused by the test");
            }
        };
        Random rnd = new Random(7);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Path src = Path.of("/mem/db");
        try (Db db = Db.open(src, small(noLinks).autoCompaction(false))) {
            load(db, model, rnd, 2000);
            db.flush();
            int tables = db.tables().size();
            assertThat(tables).isPositive();
            db.checkpoint(Path.of("/mem/cp"));
            assertThat(linkCalls.get()).isEqualTo(tables);
        }
        try (Db copy = Db.open(Path.of("/mem/cp"), small(mem))) {
            assertThat(contents(copy)).isEqualTo(render(model));
        }
    }

    /**
     * A listener that throws while the checkpoint copies the tables it could not link (a caller cancelling, with a
     * runtime exception or an error) fails the checkpoint with its own throwable, as is, and leaves nothing: no target
     * directory (it was created by the checkpoint), no linked table, WAL, MANIFEST or partly copied table. The source
     * still reads as before, and a checkpoint taken next opens with every write.
     */
    @Test
    void aListenerThatThrowsDuringTheCopyLeavesNothing() {
        InMemoryFileSystem mem = new InMemoryFileSystem();
        FileSystem noLinks = new ForwardingFileSystem(mem) {
            @Override
            public void link(Path existing, Path link) throws IOException {
                throw new IOException("links refused by the test");
            }
        };
        Random rnd = new Random(11);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Path src = Path.of("/mem/db");
        try (Db db = Db.open(src, small(noLinks).autoCompaction(false))) {
            load(db, model, rnd, 2000);
            db.flush();
            load(db, model, rnd, 50); // a WAL to copy too
            for (Throwable cancel : new Throwable[] {
                new IllegalStateException("cancelled by the caller"), new AssertionError("cancelled by an error")
            }) {
                Path cp = Path.of("/mem/cp-" + cancel.getClass().getSimpleName());
                AtomicInteger copied = new AtomicInteger();
                assertThatThrownBy(() -> db.checkpoint(cp, new Checkpointer.Listener() {
                            @Override
                            public void planned(int files, long bytes, long copyBytes) {}

                            @Override
                            public void copied(long bytes) {
                                if (copied.incrementAndGet() == 2) {
                                    sneakyThrow(cancel);
                                }
                            }
                        }))
                        .isSameAs(cancel);
                assertThat(copied.get()).as("the copy had begun").isEqualTo(2);
                assertThat(mem.exists(cp))
                        .as("%s: the target directory is removed", cancel)
                        .isFalse();
            }
            assertThat(contents(db)).isEqualTo(render(model));
            db.checkpoint(Path.of("/mem/cp"));
        }
        try (Db copy = Db.open(Path.of("/mem/cp"), small(mem))) {
            assertThat(contents(copy)).isEqualTo(render(model));
        }
    }

    /** Throws {@code t} from a method that declares none (a listener's callback throwing an error or a runtime one). */
    private static void sneakyThrow(Throwable t) {
        if (t instanceof Error e) {
            throw e;
        }
        throw (RuntimeException) t;
    }

    /**
     * A writer puts keys 0, 1, 2, ... without pause; each checkpoint must hold a prefix of them that includes every
     * key acknowledged before the call and none written after its point. Each checkpoint is held after its point is
     * fixed until the writer has acknowledged more puts ({@link SequentialWriter#pauseAtCopy}), so every one is taken
     * with writes in flight and its WAL holds records past the point that must be cut off.
     */
    @Test
    void checkpointsUnderAConcurrentWriterHoldExactlyAPrefix() throws Exception {
        Path src = dir.resolve("db");
        SequentialWriter writer = new SequentialWriter();
        SequentialWriter.Pause pause = writer.pauseAtCopy(FileSystem.disk(), src);
        Options opts = small(pause).syncMode(SyncMode.GROUP_COMMIT);
        long[][] bounds = new long[5][];
        long[] counts = new long[bounds.length];
        try (Db db = Db.open(src, opts)) {
            writer.start(db);
            try {
                for (int c = 0; c < bounds.length; c++) {
                    // Enough puts between checkpoints that the later ones link tables as well as cut a WAL.
                    writer.awaitAcked(writer.acked() + 500);
                    long before = writer.acked();
                    Path cp = dir.resolve("cp" + c);
                    pause.arm();
                    db.checkpoint(cp);
                    long after = writer.acked();
                    bounds[c] = new long[] {before, pause.ackedAtPause(), after};
                    try (Db copy = Db.open(cp, small(FileSystem.disk()))) {
                        long n = 0;
                        try (DbIterator it = copy.iterator()) {
                            for (it.seekToFirst(); it.valid(); it.next()) {
                                n++;
                            }
                        }
                        counts[c] = n;
                        for (long i = 0; i < n; i++) {
                            assertThat(copy.get(TestKeys.key(i)))
                                    .as("checkpoint " + c + " key " + i + " of " + n)
                                    .isEqualTo(TestKeys.key(i));
                        }
                    }
                }
            } finally {
                writer.stopAndCheck();
            }
        }
        System.out.println("checkpoints under a writer (acked before, at the pause, after; keys held): "
                + java.util.stream.IntStream.range(0, bounds.length)
                        .mapToObj(c -> Arrays.toString(bounds[c]) + " " + counts[c])
                        .toList());
        for (int c = 0; c < bounds.length; c++) {
            long before = bounds[c][0];
            long atPause = bounds[c][1];
            long after = bounds[c][2];
            assertThat(after - before)
                    .as("checkpoint %d: puts acknowledged while it ran (%d before, %d after)", c, before, after)
                    .isGreaterThanOrEqualTo(SequentialWriter.PUTS_DURING_COPY);
            // Every put acknowledged before the call is in; none begun after the point (which precedes the pause:
            // at most the put in flight then, key atPause) is.
            assertThat(counts[c])
                    .as("checkpoint %d keys (acked %d before, %d at the pause, %d after)", c, before, atPause, after)
                    .isBetween(before, atPause + 1);
        }
    }

    /**
     * Every file-system operation of a checkpoint, failed in turn: the checkpoint throws an I/O error (or tolerates
     * the failure and succeeds), leaves no CURRENT behind, and the source serves and survives a crash intact.
     */
    @Test
    void everyFailedOperationLeavesNoCheckpointAndTheSourceIntact() throws IOException {
        long seed = TestSeeds.seed("CheckpointTest.faultSweep");
        int total = -1;
        int surfaced = 0;
        for (int i = 0; total < 0 || i <= total; i++) {
            Random rnd = new Random(seed);
            FaultInjectingFileSystem fs = faulty();
            Path src = dir.resolve("f" + i).resolve("db");
            Path cp = dir.resolve("f" + i).resolve("cp");
            TreeMap<String, byte[]> model = new TreeMap<>();
            Db db = Db.open(src, small(fs).autoCompaction(false).syncMode(SyncMode.EVERY_WRITE));
            load(db, model, rnd, 300);
            db.flush();
            load(db, model, rnd, 20);
            AtomicInteger ops = new AtomicInteger();
            FaultInjectingFileSystem.Fault counter = fs.inject((op, p) -> {
                ops.incrementAndGet();
                return false;
            });
            FaultInjectingFileSystem.Fault nth = i == 0 ? null : fs.injectNth((op, p) -> true, i);
            String ctx = "seed " + seed + ", fault at operation " + i + " of " + total;
            try {
                db.checkpoint(cp);
                if (nth != null && nth.fired() > 0) {
                    // tolerated (e.g. a failed link falls back to a copy): the checkpoint must be whole
                    try (Db copy = Db.open(cp, small(FileSystem.disk()))) {
                        assertThat(contents(copy)).as(ctx).isEqualTo(render(model));
                    }
                }
            } catch (BloomKvIOException e) {
                surfaced++;
                assertThat(Files.exists(cp.resolve(FileNames.CURRENT)))
                        .as(ctx + ": no CURRENT after a failure")
                        .isFalse();
            }
            counter.remove();
            if (nth != null) {
                nth.remove();
            }
            if (i == 0) {
                total = ops.get();
                assertThat(total).isPositive();
            }
            // The source goes on: a write that needs no failed component, then a crash and a reopen.
            boolean failedState = db.stats() != null && isFailed(db);
            if (!failedState) {
                db.put(TestKeys.bytes("after"), new byte[] {9});
                model.put("after", new byte[] {9});
            }
            SimulatedCrashTest.crash(fs, db, null);
            try (Db again = Db.open(src, small(FileSystem.disk()))) {
                assertThat(contents(again)).as(ctx + ": source after crash").isEqualTo(render(model));
            }
        }
        System.out.println("CheckpointTest fault sweep: " + total + " operations, " + surfaced + " surfaced");
        assertThat(surfaced).isPositive();
    }

    private static boolean isFailed(Db db) {
        try {
            db.syncWal();
            return false;
        } catch (BloomKvException e) {
            return true;
        }
    }

    /**
     * The process dies at each operation of a checkpoint in turn (that operation and every later one fail, then
     * unsynced bytes are dropped or torn): the directory is refused by open, or opens with exactly the point.
     */
    @Test
    void aCrashAtAnyOperationLeavesNoneOrAWholeCheckpoint() throws IOException {
        long seed = TestSeeds.seed("CheckpointTest.crash");
        int total = -1;
        int whole = 0;
        int refused = 0;
        for (int i = 0; total < 0 || i <= total + 1; i++) {
            Random rnd = new Random(seed);
            FaultInjectingFileSystem fs = faulty();
            Path src = dir.resolve("c" + i).resolve("db");
            Path cp = dir.resolve("c" + i).resolve("cp");
            TreeMap<String, byte[]> model = new TreeMap<>();
            Db db = Db.open(src, small(fs).autoCompaction(false).syncMode(SyncMode.EVERY_WRITE));
            load(db, model, rnd, 300);
            db.flush();
            load(db, model, rnd, 20);
            AtomicInteger ops = new AtomicInteger();
            FaultInjectingFileSystem.Fault counter = fs.inject((op, p) -> {
                ops.incrementAndGet();
                return false;
            });
            FaultInjectingFileSystem.Fault dead = i == 0 ? null : fs.injectFromNth((op, p) -> true, i);
            try {
                db.checkpoint(cp);
            } catch (BloomKvIOException expected) {
                // the process is dying
            }
            counter.remove();
            if (i == 0) {
                total = ops.get();
            }
            if (dead != null) {
                dead.remove();
            }
            SimulatedCrashTest.crash(fs, db, new Random(seed + i));
            String ctx = "seed " + seed + ", crash at operation " + i + " of " + total;
            if (Files.exists(cp.resolve(FileNames.CURRENT))) {
                whole++;
                try (Db copy = Db.open(cp, small(FileSystem.disk()))) {
                    assertThat(contents(copy)).as(ctx).isEqualTo(render(model));
                }
            } else {
                refused++;
                if (Files.exists(cp)) {
                    try (var s = Files.list(cp)) {
                        if (s.findAny().isPresent()) {
                            assertThatThrownBy(() -> Db.open(cp, small(FileSystem.disk())))
                                    .as(ctx)
                                    .isInstanceOf(NotADatabaseException.class);
                        }
                    }
                }
            }
            try (Db again = Db.open(src, small(FileSystem.disk()))) {
                assertThat(contents(again)).as(ctx + ": source").isEqualTo(render(model));
            }
        }
        System.out.println("CheckpointTest crashes: " + whole + " whole, " + refused + " refused");
        assertThat(whole).isPositive();
        assertThat(refused).isPositive();
    }
}
