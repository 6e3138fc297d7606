package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * The same seeded random operations on bloomkv and on RocksDB (rocksdbjni); every get and every
 * scan must agree. Replay with -Dbloomkv.seed=N.
 */
class RocksDbDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 5000);

    @Test
    void level0OnlyMatchesRocksDb() throws Exception {
        run(Options.defaults().writeBufferSize(32 << 10).autoCompaction(false), "level0Only", 120, OPS);
    }

    @Test
    void withCompactionAndTinyTablesMatchesRocksDb() throws Exception {
        long compactions = run(
                Options.defaults()
                        .writeBufferSize(4 << 10)
                        .blockSize(256)
                        .targetFileSize(4 << 10)
                        .maxBytesForLevelBase(16 << 10)
                        .levelSizeMultiplier(4)
                        .l0CompactionTrigger(2)
                        // Low stall thresholds bound how many level-0 tables one compaction can take when
                        // the compaction thread runs late (a loaded machine), so the count below stays high.
                        .l0SlowdownWritesTrigger(6)
                        .l0StopWritesTrigger(6),
                "withCompaction",
                400,
                2 * OPS);
        assertThat(compactions).as("hundreds of compactions").isGreaterThanOrEqualTo(100);
    }

    private long run(Options options, String name, int maxValue, int ops) throws RocksDBException {
        long seed = TestKeys.seed("RocksDbDifferentialTest." + name);
        Random rnd = new Random(seed);
        String ctx = "seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        Path ours = dir.resolve("bloomkv");
        try (org.rocksdb.Options ro =
                        new org.rocksdb.Options().setCreateIfMissing(true).setWriteBufferSize(64 << 10);
                RocksDB rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString())) {
            Db db = Db.open(ours, options);
            long compactions = 0;
            try {
                for (int op = 0; op < ops; op++) {
                    String where = ctx + " op " + op;
                    int r = rnd.nextInt(1000);
                    if (r < 420) {
                        byte[] k = key(rnd);
                        byte[] v = TestKeys.value(rnd, maxValue);
                        db.put(k, v);
                        rocks.put(k, v);
                    } else if (r < 520) {
                        byte[] k = key(rnd);
                        db.delete(k);
                        rocks.delete(k);
                    } else if (r < 560) {
                        WriteBatch b = new WriteBatch();
                        try (org.rocksdb.WriteBatch rb = new org.rocksdb.WriteBatch();
                                org.rocksdb.WriteOptions wo = new org.rocksdb.WriteOptions()) {
                            for (int i = 0, n = 1 + rnd.nextInt(16); i < n; i++) {
                                byte[] k = key(rnd);
                                if (rnd.nextInt(3) == 0) {
                                    b.delete(k);
                                    rb.delete(k);
                                } else {
                                    byte[] v = TestKeys.value(rnd, maxValue);
                                    b.put(k, v);
                                    rb.put(k, v);
                                }
                            }
                            db.write(b);
                            rocks.write(wo, rb);
                        }
                    } else if (r < 860) {
                        byte[] k = key(rnd);
                        assertThat(db.get(k))
                                .as(where + " get " + TestKeys.str(k))
                                .isEqualTo(rocks.get(k));
                    } else if (r < 960) {
                        byte[] start = rnd.nextInt(5) == 0 ? null : key(rnd);
                        int limit = 1 + rnd.nextInt(rnd.nextInt(8) == 0 ? 3000 : 40);
                        assertThat(scan(db, start, limit))
                                .as(where + " scan from " + TestKeys.str(start) + " limit " + limit)
                                .isEqualTo(scan(rocks, start, limit));
                    } else if (r < 985) {
                        db.flush();
                    } else {
                        compactions += db.stats().compactions();
                        db.close();
                        db = Db.open(ours, options);
                    }
                }
                assertThat(scan(db, null, Integer.MAX_VALUE))
                        .as(ctx + " full scan")
                        .isEqualTo(scan(rocks, null, Integer.MAX_VALUE));
                compactions += db.stats().compactions();
                System.out.println(
                        "RocksDbDifferentialTest." + name + ": " + compactions + " compactions in all; " + db.stats());
            } finally {
                db.close();
            }
            return compactions;
        }
    }

    private static byte[] key(Random rnd) {
        // Variable-length keys exercise the unsigned byte order: "k" + random bytes, some with the high bit set.
        int id = rnd.nextInt(800);
        byte[] k = new byte[1 + id % 5];
        k[0] = 'k';
        for (int i = 1; i < k.length; i++) {
            k[i] = (byte) (id * 31 * i + (id >> 3));
        }
        return k;
    }

    private static List<String> scan(Db db, byte[] start, int limit) {
        List<String> out = new ArrayList<>();
        try (DbIterator it = db.iterator()) {
            if (start == null) {
                it.seekToFirst();
            } else {
                it.seek(start);
            }
            for (; it.valid() && out.size() < limit; it.next()) {
                out.add(Arrays.toString(it.key()) + "=" + Arrays.toString(it.value()));
            }
        }
        return out;
    }

    private static List<String> scan(RocksDB rocks, byte[] start, int limit) {
        List<String> out = new ArrayList<>();
        try (RocksIterator it = rocks.newIterator()) {
            if (start == null) {
                it.seekToFirst();
            } else {
                it.seek(start);
            }
            for (; it.isValid() && out.size() < limit; it.next()) {
                out.add(Arrays.toString(it.key()) + "=" + Arrays.toString(it.value()));
            }
        }
        return out;
    }
}
