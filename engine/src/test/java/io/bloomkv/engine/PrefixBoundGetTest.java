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
 * Gets of keys that share their first 8 bytes with a table's smallest or largest key but lie outside its range, and
 * of keys in the gaps between a level's tables: {@code Version.get} compares the 8-byte prefixes of the tables' bounds
 * without branches and whole keys only on a tie, and must find every key's entry in the right table. Differential
 * against a sorted map of what was written.
 */
class PrefixBoundGetTest {
    private static final long SEED = TestSeeds.seed("PrefixBoundGetTest");

    @TempDir
    Path dir;

    @Test
    void keysSharingABoundsPrefixReadAsWritten() {
        System.out.println("PrefixBoundGetTest seed " + SEED + " (replay with -Dbloomkv.seed=" + SEED + ")");
        Random rnd = new Random(SEED);
        TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
        // Small tables, so that a compaction leaves several tables per level and gaps between them.
        Options options = Options.defaults().targetFileSize(4 << 10);
        try (Db db = Db.open(dir, options)) {
            for (int round = 0; round < 6; round++) {
                // Each table holds one run of suffixes under one shared 8-byte prefix (and a few other keys), so its
                // bounds' prefixes tie with every key of the run's prefix, inside its range or not.
                int lo = rnd.nextInt(200);
                int hi = lo + 1 + rnd.nextInt(60);
                for (int s = lo; s <= hi; s += 1 + rnd.nextInt(3)) {
                    put(db, model, key(s), rnd);
                }
                if (rnd.nextBoolean()) {
                    put(db, model, shortKey(1 + rnd.nextInt(9)), rnd);
                }
                db.flush();
                if (round == 3) {
                    db.compactRange(null, null); // the first tables to a deeper level, split by targetFileSize
                }
                assertGets(db, model, "round " + round);
            }
            List<TableInfo> tables = db.tables();
            assertThat(tables.stream().filter(t -> t.level() > 0).count())
                    .as("seed %d: several tables below level 0", SEED)
                    .isGreaterThan(1);
            assertThat(tables.stream().filter(t -> t.level() == 0).count())
                    .as("seed %d: level-0 tables", SEED)
                    .isGreaterThan(0);
        }
    }

    private static void put(Db db, TreeMap<byte[], byte[]> model, byte[] k, Random rnd) {
        byte[] v = new byte[40 + rnd.nextInt(80)];
        rnd.nextBytes(v);
        db.put(k, v);
        model.put(k, v);
    }

    private void assertGets(Db db, TreeMap<byte[], byte[]> model, String ctx) {
        for (int s = 0; s < 300; s++) {
            byte[] k = key(s);
            assertThat(db.get(k)).as("seed %d %s key %d", SEED, ctx, s).isEqualTo(model.get(k));
        }
        for (int n = 1; n <= 9; n++) {
            byte[] k = shortKey(n);
            assertThat(db.get(k)).as("seed %d %s short key %d", SEED, ctx, n).isEqualTo(model.get(k));
        }
    }

    /** "prefix00" then the suffix {@code s} in 2 bytes: every such key has the same 8-byte prefix. */
    private static byte[] key(int s) {
        byte[] k = Arrays.copyOf("prefix00".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 10);
        k[8] = (byte) (s >> 8);
        k[9] = (byte) s;
        return k;
    }

    /** The first {@code n} bytes of "prefix00" (1 <= n <= 8), or it with one zero byte appended (n = 9). */
    private static byte[] shortKey(int n) {
        byte[] p = "prefix00".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        return Arrays.copyOf(p, n);
    }
}
