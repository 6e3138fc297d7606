package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gets of keys that share their first 8 (or 16) bytes with a table's smallest or largest key but lie outside its
 * range, and of keys in the gaps between a level's tables: {@code Version.get} orders keys against the tables' bounds
 * by their first 16 bytes and lengths without branches, and compares whole keys only when both are longer than 16
 * bytes and agree on those, and must find every key's entry in the right table. Differential against a sorted map of
 * what was written.
 */
class PrefixBoundGetTest {
    private static final long SEED = TestSeeds.seed("PrefixBoundGetTest");

    @TempDir
    Path dir;

    @Test
    void keysSharingABoundsPrefixReadAsWritten() {
        readAsWritten("prefix00", SEED);
    }

    /** Keys longer than 16 bytes that share their first 16: the case left to whole-key comparison. */
    @Test
    void keysSharingSixteenBytesWithABoundReadAsWritten() {
        readAsWritten("prefix00prefix00", SEED + 1);
    }

    private void readAsWritten(String prefix, long seed) {
        System.out.println(
                "PrefixBoundGetTest " + prefix + " seed " + seed + " (replay with -Dbloomkv.seed=" + SEED + ")");
        byte[] head = prefix.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        Random rnd = new Random(seed);
        TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
        // Small tables, so that a compaction leaves several tables per level and gaps between them.
        Options options = Options.defaults().targetFileSize(4 << 10);
        try (Db db = Db.open(dir, options)) {
            for (int round = 0; round < 6; round++) {
                // Each table holds one run of suffixes under one shared 8-byte prefix (and a few other keys), so its
                // bounds' prefixes tie with every key of the run's prefix, inside its range or not.
                int lo = rnd.nextInt(200);
                // at least 14 keys of at least 600 incompressible bytes a round: the compaction after round 3 has
                // more than two target files' worth to write, so several tables below level 0 for every seed
                int hi = lo + 40 + rnd.nextInt(40);
                for (int s = lo; s <= hi; s += 1 + rnd.nextInt(3)) {
                    put(db, model, key(head, s), rnd);
                }
                if (rnd.nextBoolean()) {
                    put(db, model, shortKey(head, 1 + rnd.nextInt(head.length + 1)), rnd);
                }
                db.flush();
                if (round == 3) {
                    db.compactRange(null, null); // the first tables to a deeper level, split by targetFileSize
                }
                assertGets(db, model, head, "seed " + seed + " round " + round);
            }
            List<TableInfo> tables = db.tables();
            assertThat(tables.stream().filter(t -> t.level() > 0).count())
                    .as("seed %d: several tables below level 0", seed)
                    .isGreaterThan(1);
            assertThat(tables.stream().filter(t -> t.level() == 0).count())
                    .as("seed %d: level-0 tables", seed)
                    .isGreaterThan(0);
        }
    }

    private static void put(Db db, TreeMap<byte[], byte[]> model, byte[] k, Random rnd) {
        byte[] v = new byte[600 + rnd.nextInt(400)];
        rnd.nextBytes(v);
        db.put(k, v);
        model.put(k, v);
    }

    private void assertGets(Db db, TreeMap<byte[], byte[]> model, byte[] head, String ctx) {
        for (int s = 0; s < 300; s++) {
            byte[] k = key(head, s);
            assertThat(db.get(k)).as("%s key %d", ctx, s).isEqualTo(model.get(k));
        }
        for (int n = 1; n <= head.length + 1; n++) {
            byte[] k = shortKey(head, n);
            assertThat(db.get(k)).as("%s short key %d", ctx, n).isEqualTo(model.get(k));
        }
    }

    /** {@code head} then the suffix {@code s} in 2 bytes: every such key starts with the same bytes. */
    private static byte[] key(byte[] head, int s) {
        byte[] k = Arrays.copyOf(head, head.length + 2);
        k[head.length] = (byte) (s >> 8);
        k[head.length + 1] = (byte) s;
        return k;
    }

    /** The first {@code n} bytes of {@code head} (n <= its length), or it with one zero byte appended. */
    private static byte[] shortKey(byte[] head, int n) {
        return Arrays.copyOf(head, n);
    }
}
