package io.bloomkv.engine;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Writes and {@link TableFileWriter} ingestions (puts, merge operands, deletes and range deletions in the files,
 * placed as written or rewritten over older data) against a model: after every ingestion, at the end and after a
 * reopen, every key reads as the model says and a full scan yields the model's entries. The model applies an
 * ingestion as RocksDB does: the file's range deletions hide the older keys of their ranges, then its entries apply on
 * top (a merge operand onto what is left). The operations come from a seed (replay with -Dbloomkv.seed=N) or, as a
 * Jazzer fuzz target, from the fuzzer's bytes ({@code JAZZER_FUZZ=1}).
 */
class IngestFuzzTest {
    private static final char DELIMITER = ',';

    /** Fuzz target: the input drives the operations (see {@link #run}). */
    @FuzzTest(maxDuration = "5m")
    void ingestReadsAsTheModel(byte[] data) throws IOException {
        run(data);
    }

    @Test
    void randomHistoriesReadAsTheModel() throws IOException {
        long seed = TestSeeds.seed("IngestFuzzTest.random");
        Random rnd = new Random(seed);
        for (int round = 0; round < 40; round++) {
            byte[] data = new byte[8 + rnd.nextInt(400)];
            rnd.nextBytes(data);
            try {
                run(data);
            } catch (AssertionError e) {
                throw new AssertionError("seed " + seed + " round " + round, e);
            }
        }
    }

    /**
     * Applies the operations {@code data} encodes, 3 bytes each (kind, key, argument), to a fresh database and the
     * model: puts, deletes, merges, range deletions and flushes, and ingestions of one file whose entries the next
     * bytes describe.
     */
    static void run(byte[] data) throws IOException {
        Path dir = Files.createTempDirectory("bloomkv-ingest-fuzz");
        Options options = Options.defaults()
                .writeBufferSize(8 << 10)
                .blockSize(256)
                .targetFileSize(8 << 10)
                .blockCacheSize(0)
                .mergeOperator(MergeOperators.stringAppend(DELIMITER));
        TreeMap<String, String> model = new TreeMap<>();
        int files = 0;
        try {
            Db db = Db.open(dir.resolve("db"), options);
            try {
                int i = 0;
                while (i + 3 <= data.length) {
                    int kind = (data[i] & 0xFF) % 12;
                    byte[] key = key(data[i + 1]);
                    int arg = data[i + 2] & 0xFF;
                    i += 3;
                    String k = new String(key, ISO_8859_1);
                    switch (kind) {
                        case 0, 1, 2 -> {
                            String v = "p" + arg;
                            db.put(key, v.getBytes(ISO_8859_1));
                            model.put(k, v);
                        }
                        case 3 -> {
                            db.delete(key);
                            model.remove(k);
                        }
                        case 4, 5 -> {
                            String v = "m" + arg;
                            db.merge(key, v.getBytes(ISO_8859_1));
                            model.merge(k, v, (old, op) -> old + DELIMITER + op);
                        }
                        case 6 -> {
                            byte[][] r = range(key, key((byte) arg));
                            db.deleteRange(r[0], r[1]);
                            removeRange(model, r);
                        }
                        case 7 -> db.flush();
                        default -> {
                            // an ingestion: 1-6 entries from the next bytes (one per byte: key and kind), and a range
                            // deletion when arg is odd
                            int n = 1 + arg % 6;
                            int end = Math.min(data.length, i + n);
                            Path file = dir.resolve("in-" + files++ + ".sst");
                            ingest(db, options, file, Arrays.copyOfRange(data, i, end), (arg & 1) != 0, key, model);
                            i = end;
                            check(db, model, "after ingestion " + files);
                        }
                    }
                }
                check(db, model, "at the end");
            } finally {
                db.close();
            }
            try (Db reopened = Db.open(dir.resolve("db"), options)) {
                check(reopened, model, "after a reopen");
            }
        } finally {
            Db.destroy(dir.resolve("db"), options);
            try (var s = Files.list(dir)) {
                for (Path p : s.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /**
     * Writes one file of the entries {@code spec} describes (one per byte: its key, and put, delete or merge), with a
     * range deletion from {@code rangeKey} when {@code withRange}, ingests it (moved or copied) and applies it to the
     * model.
     */
    private static void ingest(
            Db db,
            Options options,
            Path file,
            byte[] spec,
            boolean withRange,
            byte[] rangeKey,
            TreeMap<String, String> model) {
        TreeMap<String, Integer> entries = new TreeMap<>();
        for (byte b : spec) {
            entries.put(new String(key(b), ISO_8859_1), ((b & 0xFF) >> 5) % 3);
        }
        byte[][] range = withRange ? range(rangeKey, key((byte) (rangeKey[1] + 7))) : null;
        if (range != null && Arrays.equals(range[0], range[1])) {
            range = null;
        }
        if (entries.isEmpty() && range == null) {
            return; // the input ended: a file needs an entry or a range deletion
        }
        try (TableFileWriter w = TableFileWriter.create(file, options)) {
            if (range != null) {
                w.deleteRange(range[0], range[1]);
            }
            for (Map.Entry<String, Integer> e : entries.entrySet()) {
                byte[] k = e.getKey().getBytes(ISO_8859_1);
                switch (e.getValue()) {
                    case 0 -> w.put(k, ("i" + e.getKey().charAt(1)).getBytes(ISO_8859_1));
                    case 1 -> w.delete(k);
                    default -> w.merge(k, ("j" + (int) e.getKey().charAt(1)).getBytes(ISO_8859_1));
                }
            }
            w.finish();
        }
        db.ingest(List.of(file), IngestOptions.defaults().moveFiles((spec.length & 1) == 0));
        // the file's range deletion hides the older keys of its range, then its entries apply on top
        if (range != null) {
            removeRange(model, range);
        }
        for (Map.Entry<String, Integer> e : entries.entrySet()) {
            String k = e.getKey();
            switch (e.getValue()) {
                case 0 -> model.put(k, "i" + k.charAt(1));
                case 1 -> model.remove(k);
                default -> model.merge(k, "j" + (int) k.charAt(1), (old, op) -> old + DELIMITER + op);
            }
        }
    }

    private static void check(Db db, TreeMap<String, String> model, String when) {
        TreeSet<String> keys = new TreeSet<>(model.keySet());
        for (int b = 0; b < 24; b++) {
            keys.add(new String(key((byte) b), ISO_8859_1));
        }
        for (String k : keys) {
            byte[] got = db.get(k.getBytes(ISO_8859_1));
            assertThat(got == null ? null : new String(got, ISO_8859_1))
                    .as("get %s %s", k, when)
                    .isEqualTo(model.get(k));
        }
        TreeMap<String, String> scanned = new TreeMap<>();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                scanned.put(new String(it.key(), ISO_8859_1), new String(it.value(), ISO_8859_1));
            }
        } catch (UncheckedIOException e) {
            throw new AssertionError(e);
        }
        assertThat(scanned).as("scan %s", when).isEqualTo(model);
    }

    private static void removeRange(TreeMap<String, String> model, byte[][] r) {
        model.subMap(new String(r[0], ISO_8859_1), new String(r[1], ISO_8859_1)).clear();
    }

    /** The two keys in order, as a half-open range. */
    private static byte[][] range(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b) <= 0 ? new byte[][] {a, b} : new byte[][] {b, a};
    }

    private static byte[] key(byte b) {
        return new byte[] {'k', (byte) ('a' + (b & 0xFF) % 24)};
    }
}
