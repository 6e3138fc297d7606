package io.bloomkv.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RemoveEmptyValueCompactionFilter;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.StringAppendOperator;
import org.rocksdb.TtlDB;
import org.rocksdb.WriteOptions;

/**
 * Compaction filters and TTL databases against RocksDB: bloomkv with a filter removing empty values (rocksdbjni's
 * {@code RemoveEmptyValueCompactionFilter}) and a string-append merge operator, plain or with a TTL (rocksdbjni's
 * {@code TtlDB}, with a TTL no value reaches), under the same seeded mix of puts (some empty), deletes, merges, range
 * deletions, batches, snapshots, flushes, full compactions and reopens. Automatic compaction is off in both, so the
 * filter runs at the same full compactions in both: what a filter decided (the empty values newer than every snapshot
 * gone, merge results kept), how a TTL database stores and strips its write times (in gets, multiGets, scans both ways,
 * at snapshots) must agree. Snapshots are released before each compaction: there RocksDB's filter also removes values a
 * snapshot reads, where bloomkv keeps them ({@link #snapshotsKeepWhatAFilterWouldRemoveUnlikeRocksDb}). Replay with
 * -Dbloomkv.seed=N.
 */
class RocksTtlFilterDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 1500);

    @Test
    void removeEmptyValuesFilterMatchesRocksDb() throws RocksDBException {
        run(false, "filter");
    }

    @Test
    void ttlDatabaseWithAFilterMatchesTtlDb() throws RocksDBException {
        run(true, "ttl");
    }

    /**
     * The documented difference: RocksDB (since 6.0) applies a compaction filter to values an open snapshot still
     * reads, so the snapshot's view changes; bloomkv keeps such a value until no snapshot reads it, and then removes it.
     */
    @Test
    void snapshotsKeepWhatAFilterWouldRemoveUnlikeRocksDb() throws RocksDBException {
        byte[] k = "k01".getBytes(UTF_8);
        try (StringAppendOperator rop = new StringAppendOperator(',');
                RemoveEmptyValueCompactionFilter rfilter = new RemoveEmptyValueCompactionFilter();
                org.rocksdb.Options ro = new org.rocksdb.Options()
                        .setCreateIfMissing(true)
                        .setMergeOperator(rop)
                        .setCompactionFilter(rfilter);
                RocksDB r = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                Db d = Db.open(dir.resolve("bloomkv"), ours(false))) {
            d.put(k, new byte[0]);
            r.put(k, new byte[0]);
            org.rocksdb.Snapshot rsnap = r.getSnapshot();
            try (Snapshot snap = d.getSnapshot();
                    org.rocksdb.ReadOptions rro = new org.rocksdb.ReadOptions().setSnapshot(rsnap)) {
                d.compactRange(null, null);
                r.compactRange();
                assertThat(r.get(rro, k))
                        .as("RocksDB: the filter removed what the snapshot reads")
                        .isNull();
                assertThat(r.get(k)).isNull();
                assertThat(d.get(k, ReadOptions.defaults().snapshot(snap)))
                        .as("bloomkv: kept for the snapshot")
                        .isEmpty();
                assertThat(d.get(k)).isEmpty();
            } finally {
                r.releaseSnapshot(rsnap);
            }
            d.compactRange(null, null);
            assertThat(d.get(k)).as("removed once no snapshot reads it").isNull();
        }
    }

    /**
     * Expiry on the system clock, against TtlDB (whose clock cannot be set): a value past a TTL of one second reads as
     * absent at once in bloomkv (TtlDB returns it until a compaction drops it: the documented difference), and after a
     * full compaction both have dropped it. A value not compacted yet comes back in both when the database is reopened
     * with a longer TTL.
     */
    @Test
    void expiryOnTheSystemClockAndReopeningWithALongerTtlMatchTtlDb() throws Exception {
        byte[] gone = "gone".getBytes(UTF_8);
        byte[] back = "back".getBytes(UTF_8);
        byte[] v = "v".getBytes(UTF_8);
        Path ourDir = dir.resolve("bloomkv");
        String theirDir = dir.resolve("rocksdb").toString();
        Options ours = Options.defaults().ttl(Duration.ofSeconds(1));
        try (org.rocksdb.Options ro = new org.rocksdb.Options().setCreateIfMissing(true)) {
            try (Db d = Db.open(ourDir, ours);
                    TtlDB r = TtlDB.open(ro, theirDir, 1, false)) {
                d.put(gone, v);
                r.put(gone, v);
                Thread.sleep(2100); // past t + ttl in whole seconds: stale in both
                assertThat(d.get(gone))
                        .as("bloomkv hides an expired value at once")
                        .isNull();
                assertThat(r.get(gone))
                        .as("TtlDB returns it until a compaction")
                        .isEqualTo(v);
                d.compactRange(null, null);
                r.compactRange();
                assertThat(d.get(gone)).isNull();
                assertThat(r.get(gone)).as("TtlDB after the compaction").isNull();
                d.put(back, v);
                r.put(back, v);
                d.flush();
                try (org.rocksdb.FlushOptions fo = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
                    r.flush(fo);
                }
                Thread.sleep(2100);
                assertThat(d.get(back)).isNull();
            }
            try (Db d = Db.open(ourDir, ours.ttl(Duration.ofSeconds(3600)));
                    TtlDB r = TtlDB.open(ro, theirDir, 3600, false)) {
                assertThat(d.get(back))
                        .as("a longer TTL brings back what was not compacted")
                        .isEqualTo(v);
                assertThat(r.get(back)).isEqualTo(v);
                d.compactRange(null, null);
                r.compactRange();
                assertThat(d.get(back)).isEqualTo(v);
                assertThat(r.get(back)).isEqualTo(v);
                assertThat(d.get(gone)).isNull();
                assertThat(r.get(gone)).isNull();
            }
        }
    }

    private static Options ours(boolean ttl) {
        Options o = Options.defaults()
                .writeBufferSize(8 << 10)
                .blockSize(256)
                .autoCompaction(false)
                .mergeOperator(MergeOperators.stringAppend(','))
                .compactionFilter((level, bottommost, key, value) ->
                        value.length == 0 ? CompactionFilter.Decision.REMOVE : CompactionFilter.Decision.KEEP);
        return ttl ? o.ttl(Duration.ofDays(30)) : o;
    }

    private Db db;
    private RocksDB rocks;
    /** What was done, for the message of a failed comparison (the ops on the compared key, and the global ones). */
    private final List<String> log = new ArrayList<>();

    private void log(int op, String what) {
        log.add(op + ": " + what);
    }

    private String history(byte[] key) {
        String k = s(key);
        StringBuilder sb = new StringBuilder();
        for (String line : log) {
            String body = line.substring(line.indexOf(": ") + 2);
            boolean keyed = body.contains(" k");
            boolean inRange = false;
            if (body.startsWith("deleteRange")) {
                String[] p = body.split(" ");
                inRange = p[1].compareTo(k) <= 0 && k.compareTo(p[2]) < 0;
            }
            if (!keyed || body.contains(" " + k + " ") || body.endsWith(" " + k) || inRange) {
                sb.append("\n  ").append(line);
            }
        }
        return sb.toString();
    }

    private RocksDB openRocks(org.rocksdb.Options ro, boolean ttl) throws RocksDBException {
        String path = dir.resolve("rocksdb").toString();
        return ttl ? TtlDB.open(ro, path, 30 * 86400, false) : RocksDB.open(ro, path);
    }

    private void run(boolean ttl, String name) throws RocksDBException {
        long seed = TestSeeds.seed("RocksTtlFilterDifferentialTest." + name);
        Random rnd = new Random(seed);
        String ctx = "seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        Path ourDir = dir.resolve("bloomkv");
        List<Snapshot> snaps = new ArrayList<>();
        List<org.rocksdb.Snapshot> rsnaps = new ArrayList<>();
        try (StringAppendOperator rop = new StringAppendOperator(',');
                RemoveEmptyValueCompactionFilter rfilter = new RemoveEmptyValueCompactionFilter();
                org.rocksdb.Options ro = new org.rocksdb.Options()
                        .setCreateIfMissing(true)
                        .setDisableAutoCompactions(true)
                        .setWriteBufferSize(64 << 10)
                        .setMergeOperator(rop)
                        .setCompactionFilter(rfilter);
                WriteOptions wo = new WriteOptions()) {
            rocks = openRocks(ro, ttl);
            db = Db.open(ourDir, ours(ttl));
            int flushes = 0;
            try {
                for (int op = 0; op < OPS; op++) {
                    String where = ctx + " op " + op;
                    int r = rnd.nextInt(100);
                    if (r < 30) {
                        byte[] k = key(rnd);
                        byte[] v = value(rnd);
                        db.put(k, v);
                        rocks.put(k, v);
                        log(op, "put " + s(k) + " '" + s(v) + "'");
                    } else if (r < 40) {
                        byte[] k = key(rnd);
                        db.delete(k);
                        rocks.delete(k);
                        log(op, "delete " + s(k));
                    } else if (r < 55) {
                        byte[] k = key(rnd);
                        byte[] v = ("m" + rnd.nextInt(10)).getBytes(UTF_8); // never empty: see the class comment
                        db.merge(k, v);
                        rocks.merge(k, v);
                        log(op, "merge " + s(k) + " '" + s(v) + "'");
                    } else if (r < 59) {
                        byte[][] range = range(rnd);
                        db.deleteRange(range[0], range[1]);
                        rocks.deleteRange(range[0], range[1]);
                        log(op, "deleteRange " + s(range[0]) + " " + s(range[1]));
                    } else if (r < 66) {
                        WriteBatch b = new WriteBatch();
                        try (org.rocksdb.WriteBatch rb = new org.rocksdb.WriteBatch()) {
                            for (int i = 1 + rnd.nextInt(5); i > 0; i--) {
                                byte[] k = key(rnd);
                                int t = rnd.nextInt(10);
                                if (t < 5) {
                                    byte[] v = value(rnd);
                                    b.put(k, v);
                                    rb.put(k, v);
                                    log(op, "batch put " + s(k) + " '" + s(v) + "'");
                                } else if (t < 7) {
                                    b.delete(k);
                                    rb.delete(k);
                                    log(op, "batch delete " + s(k));
                                } else if (t < 9) {
                                    byte[] v = ("b" + rnd.nextInt(10)).getBytes(UTF_8);
                                    b.merge(k, v);
                                    rb.merge(k, v);
                                    log(op, "batch merge " + s(k) + " '" + s(v) + "'");
                                } else {
                                    byte[][] range = range(rnd);
                                    b.deleteRange(range[0], range[1]);
                                    rb.deleteRange(range[0], range[1]);
                                    log(op, "deleteRange " + s(range[0]) + " " + s(range[1]) + " (batch)");
                                }
                            }
                            db.write(b);
                            rocks.write(wo, rb);
                        }
                    } else if (r < 70) {
                        if (snaps.size() < 3 && rnd.nextBoolean()) {
                            snaps.add(db.getSnapshot());
                            rsnaps.add(rocks.getSnapshot());
                            log(op, "snapshot " + (snaps.size() - 1));
                        } else if (!snaps.isEmpty()) {
                            int i = rnd.nextInt(snaps.size());
                            snaps.remove(i).close();
                            rocks.releaseSnapshot(rsnaps.remove(i));
                            log(op, "release snapshot " + i);
                        }
                    } else if (r < 74 && flushes < 3) {
                        db.flush();
                        try (org.rocksdb.FlushOptions fo = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
                            rocks.flush(fo);
                        }
                        flushes++;
                        log(op, "flush");
                    } else if (r < 77 || flushes >= 3 && r < 80) {
                        // RocksDB's filter also removes values a snapshot reads, bloomkv's does not
                        // (snapshotsKeepWhatAFilterWouldRemoveUnlikeRocksDb): compactions run without snapshots.
                        for (Snapshot s : snaps) {
                            s.close();
                        }
                        for (org.rocksdb.Snapshot s : rsnaps) {
                            rocks.releaseSnapshot(s);
                        }
                        snaps.clear();
                        rsnaps.clear();
                        db.compactRange(null, null);
                        rocks.compactRange();
                        flushes = 0;
                        log(op, "compactRange");
                    } else if (r < 78) {
                        for (Snapshot s : snaps) {
                            s.close();
                        }
                        for (org.rocksdb.Snapshot s : rsnaps) {
                            rocks.releaseSnapshot(s);
                        }
                        snaps.clear();
                        rsnaps.clear();
                        db.close();
                        rocks.close();
                        db = Db.open(ourDir, ours(ttl));
                        rocks = openRocks(ro, ttl);
                        flushes = 0;
                        log(op, "reopen (snapshots released)");
                    } else {
                        compare(rnd, snaps, rsnaps, where);
                    }
                }
                compare(rnd, snaps, rsnaps, ctx + " end");
                for (Snapshot s : snaps) {
                    s.close();
                }
                for (org.rocksdb.Snapshot s : rsnaps) {
                    rocks.releaseSnapshot(s);
                }
                snaps.clear();
                rsnaps.clear();
                db.compactRange(null, null);
                rocks.compactRange();
                compare(rnd, snaps, rsnaps, ctx + " compacted");
            } finally {
                for (Snapshot s : snaps) {
                    s.close();
                }
                for (org.rocksdb.Snapshot s : rsnaps) {
                    rocks.releaseSnapshot(s);
                }
                db.close();
                rocks.close();
            }
        }
    }

    private void compare(Random rnd, List<Snapshot> snaps, List<org.rocksdb.Snapshot> rsnaps, String where)
            throws RocksDBException {
        int sn = snaps.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(snaps.size());
        ReadOptions ours = ReadOptions.defaults();
        try (org.rocksdb.ReadOptions theirs = new org.rocksdb.ReadOptions()) {
            if (sn >= 0) {
                ours.snapshot(snaps.get(sn));
                theirs.setSnapshot(rsnaps.get(sn));
            }
            String at = where + (sn >= 0 ? " at snapshot " + sn : "");
            List<byte[]> keys = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                keys.add(key(rnd));
            }
            for (byte[] k : keys) {
                assertThat(s(db.get(k, ours)))
                        .as(at + " get " + s(k) + history(k))
                        .isEqualTo(s(rocks.get(theirs, k)));
            }
            assertThat(strings(db.multiGet(ours, keys)))
                    .as(at + " multiGet")
                    .isEqualTo(strings(rocks.multiGetAsList(theirs, keys)));
            boolean reverse = rnd.nextBoolean();
            List<String> a = new ArrayList<>();
            try (DbIterator it = db.iterator(ours)) {
                for (if0(it, reverse); it.valid(); ) {
                    a.add(s(it.key()) + "=" + s(it.value()));
                    if (reverse) {
                        it.prev();
                    } else {
                        it.next();
                    }
                }
            }
            List<String> b = new ArrayList<>();
            try (RocksIterator it = rocks.newIterator(theirs)) {
                if (reverse) {
                    it.seekToLast();
                } else {
                    it.seekToFirst();
                }
                for (; it.isValid(); ) {
                    b.add(s(it.key()) + "=" + s(it.value()));
                    if (reverse) {
                        it.prev();
                    } else {
                        it.next();
                    }
                }
            }
            assertThat(a).as(at + (reverse ? " reverse scan" : " scan")).isEqualTo(b);
        }
    }

    private static void if0(DbIterator it, boolean reverse) {
        if (reverse) {
            it.seekToLast();
        } else {
            it.seekToFirst();
        }
    }

    private static byte[] key(Random rnd) {
        return String.format("k%02d", rnd.nextInt(40)).getBytes(UTF_8);
    }

    /** Empty one time in four: the values the filter removes. */
    private static byte[] value(Random rnd) {
        return rnd.nextInt(4) == 0 ? new byte[0] : ("v" + rnd.nextInt(1000)).getBytes(UTF_8);
    }

    private static byte[][] range(Random rnd) {
        int a = rnd.nextInt(40);
        int len = 1 + rnd.nextInt(6);
        return new byte[][] {
            String.format("k%02d", a).getBytes(UTF_8),
            String.format("k%02d", a + len).getBytes(UTF_8)
        };
    }

    private static String s(byte[] v) {
        return v == null ? null : new String(v, UTF_8);
    }

    private static List<String> strings(List<byte[]> values) {
        List<String> out = new ArrayList<>();
        for (byte[] v : values) {
            out.add(s(v));
        }
        return out;
    }
}
