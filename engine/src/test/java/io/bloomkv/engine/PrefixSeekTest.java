package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prefix filters (Options.prefixLength) and prefix seeks (ReadOptions.prefixSameAsStart) against a TreeMap model:
 * a prefix seek yields exactly the model's keys from the target on that share the target's prefix; tables without
 * the prefix are skipped without a block read; tables written with another prefix length fail open.
 */
class PrefixSeekTest {
    static final int PREFIX = 5;

    @TempDir
    Path dir;

    /** Keys "pNNN:" + suffix: prefix NNN is used only when NNN is even, so odd prefixes are absent. */
    private static String key(Random rnd) {
        int p = 2 * rnd.nextInt(150);
        return String.format("p%03d:%s", p, Integer.toString(rnd.nextInt(3000), 36));
    }

    private static Options options(int prefixLength) {
        return Options.defaults()
                .writeBufferSize(16 << 10)
                .blockSize(512)
                .targetFileSize(16 << 10)
                .maxBytesForLevelBase(64 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(3)
                .blockCacheSize(0)
                .prefixLength(prefixLength);
    }

    private static List<String> prefixScan(Db db, String target, ReadOptions ro) {
        List<String> out = new ArrayList<>();
        try (DbIterator it = db.iterator(ro)) {
            for (it.seek(TestKeys.bytes(target)); it.valid(); it.next()) {
                out.add(TestKeys.str(it.key()));
            }
        }
        return out;
    }

    private static List<String> modelScan(TreeMap<String, byte[]> model, String target, int prefixLength) {
        List<String> out = new ArrayList<>();
        String prefix = target.length() >= prefixLength ? target.substring(0, prefixLength) : null;
        for (String k : model.tailMap(target, true).keySet()) {
            if (prefix != null && !k.startsWith(prefix)) {
                break;
            }
            out.add(k);
        }
        return out;
    }

    private void load(Db db, TreeMap<String, byte[]> model, Random rnd, int ops) {
        for (int i = 0; i < ops; i++) {
            String k = key(rnd);
            if (rnd.nextInt(10) == 0) {
                db.delete(TestKeys.bytes(k));
                model.remove(k);
            } else {
                byte[] v = TestKeys.value(rnd, 60);
                db.put(TestKeys.bytes(k), v);
                model.put(k, v);
            }
        }
    }

    @Test
    void prefixSeeksMatchTheModel() throws java.io.IOException {
        long seed = TestKeys.seed("PrefixSeekTest.model");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        ReadOptions prefixOnly = ReadOptions.defaults().prefixSameAsStart(true);
        try (Db db = Db.open(dir, options(PREFIX))) {
            for (int round = 0; round < 6; round++) {
                load(db, model, rnd, 2500);
                if (round % 2 == 0) {
                    db.flush();
                }
                db.waitForBackgroundWork();
                for (int q = 0; q < 200; q++) {
                    int p = rnd.nextInt(300);
                    String target = switch (rnd.nextInt(4)) {
                        case 0 -> String.format("p%03d:", p);
                        case 1 -> String.format("p%03d:%s", p, Integer.toString(rnd.nextInt(3000), 36));
                        case 2 -> String.format("p%03d", p).substring(0, 1 + rnd.nextInt(3)); // shorter than the prefix
                        default -> String.format("p%03d:zzzz", p); // past the prefix's keys
                    };
                    String ctx = "seed " + seed + " round " + round + " target " + target;
                    assertThat(prefixScan(db, target, prefixOnly)).as(ctx).isEqualTo(modelScan(model, target, PREFIX));
                }
                // the plain iterator is unaffected
                String target = String.format("p%03d:", rnd.nextInt(300));
                assertThat(prefixScan(db, target, ReadOptions.defaults()))
                        .isEqualTo(new ArrayList<>(model.tailMap(target, true).keySet()));
            }
            // one iterator, many seeks, moving in and out of prefix mode
            try (DbIterator it = db.iterator(prefixOnly)) {
                for (int q = 0; q < 100; q++) {
                    String target = String.format("p%03d:", rnd.nextInt(300));
                    it.seek(TestKeys.bytes(target));
                    List<String> got = new ArrayList<>();
                    for (; it.valid(); it.next()) {
                        got.add(TestKeys.str(it.key()));
                    }
                    assertThat(got).as("seed %d target %s", seed, target).isEqualTo(modelScan(model, target, PREFIX));
                }
                it.seekToFirst();
                int n = 0;
                for (; it.valid(); it.next()) {
                    n++;
                }
                assertThat(n).as("seekToFirst iterates everything").isEqualTo(model.size());
            }
            for (TableInfo t : db.tables()) {
                try (TableReader r = TableReader.open(
                        io.bloomkv.engine.fs.FileSystem.disk(), t.path(), t.fileNumber(), null, null)) {
                    assertThat(r.properties().prefixLength()).isEqualTo(PREFIX);
                    assertThat(r.properties().filterPrefixes()).isPositive();
                }
            }
        }
    }

    @Test
    void absentPrefixesReadNoBlocks() {
        long seed = TestKeys.seed("PrefixSeekTest.absent");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        try (Db db = Db.open(dir, options(PREFIX))) {
            load(db, model, rnd, 15_000);
            db.flush();
            db.waitForBackgroundWork();
            assertThat(db.tables().size()).isGreaterThan(3);
            Stats before = db.stats();
            int seeks = 0;
            for (int p = 1; p < 300; p += 2) {
                assertThat(prefixScan(
                                db,
                                String.format("p%03d:", p),
                                ReadOptions.defaults().prefixSameAsStart(true)))
                        .isEmpty();
                seeks++;
            }
            long reads = db.stats().blockReads() - before.blockReads();
            System.out.printf(
                    "absent-prefix seeks: %d seeks, %d block reads (%d tables)%n",
                    seeks, reads, db.tables().size());
            // only filter false positives read (~1% per table holding the key range)
            assertThat((double) reads / seeks).as("seed %d", seed).isLessThanOrEqualTo(0.25);
            long checks = db.stats().filterChecks() - before.filterChecks();
            long useful = db.stats().filterUseful() - before.filterUseful();
            long positive = db.stats().filterPositive() - before.filterPositive();
            assertThat(checks)
                    .as("each seek probes the prefix filter of each table in its range")
                    .isGreaterThanOrEqualTo(seeks);
            assertThat(useful + positive).isEqualTo(checks);
            assertThat(useful).as("seed %d: the probes rule tables out", seed).isGreaterThan(checks * 9 / 10);

            Stats b2 = db.stats();
            for (int p = 1; p < 300; p += 2) {
                prefixScan(db, String.format("p%03d:", p), ReadOptions.defaults());
            }
            long plainReads = db.stats().blockReads() - b2.blockReads();
            assertThat(plainReads)
                    .as("without the prefix option every seek reads")
                    .isGreaterThanOrEqualTo(seeks);
        }
    }

    @Test
    void tablesOfAnotherPrefixLengthFailOpen() {
        long seed = TestKeys.seed("PrefixSeekTest.otherLength");
        Random rnd = new Random(seed);
        TreeMap<String, byte[]> model = new TreeMap<>();
        try (Db db = Db.open(dir, options(PREFIX))) {
            load(db, model, rnd, 8000);
            db.flush();
        }
        for (int other : new int[] {3, 0, 2}) {
            try (Db db = Db.open(dir, options(other).autoCompaction(false))) {
                load(db, model, rnd, 1500);
                db.flush();
                int p = other == 0 ? PREFIX : other;
                ReadOptions ro = ReadOptions.defaults().prefixSameAsStart(true);
                for (int q = 0; q < 150; q++) {
                    String target = String.format("p%03d:", rnd.nextInt(300));
                    List<String> expected = other == 0
                            ? new ArrayList<>(model.tailMap(target, true).keySet())
                            : modelScan(model, target, p);
                    assertThat(prefixScan(db, target, ro))
                            .as("seed %d length %d target %s", seed, other, target)
                            .isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void prefixesShareTheFilterWithWholeKeys() {
        try (Db db = Db.open(dir, options(PREFIX).autoCompaction(false).writeBufferSize(4 << 20))) {
            for (int i = 0; i < 1000; i++) {
                db.put(TestKeys.bytes(String.format("p%03d:%04d", 2 * (i % 50), i)), TestKeys.bytes("v"));
            }
            db.put(TestKeys.bytes("abc"), TestKeys.bytes("short key: no prefix"));
            db.flush();
            assertThat(db.tables()).hasSize(1);
            TableInfo t = db.tables().get(0);
            assertThat(t.filterKeyCount()).as("1001 keys + 50 prefixes").isEqualTo(1051);
            assertThat(db.get(TestKeys.bytes("abc"))).isNotNull();
            assertThat(Arrays.equals(db.get(TestKeys.bytes("p002:0001")), TestKeys.bytes("v")))
                    .isTrue();
        }
    }
}
