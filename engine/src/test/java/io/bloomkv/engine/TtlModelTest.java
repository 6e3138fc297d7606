package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A TTL database against a model (LevelDB's ModelDB idea): an expected-state map of value and write time per key, with
 * expiry as a deletion at write time + ttl and merges under the gap rule ({@link Ttl}). A seeded random mix of puts,
 * merges (uint64 add), deletes, range deletions, clock moves, flushes, compactions (full, automatic, periodic),
 * snapshots and reopens; gets, multiGets and scans in both directions, at the latest state and at snapshots, must
 * match. rocksdbjni's TtlDB cannot be the oracle here: its clock is the real one and its reads return expired values
 * until a compaction. Replay a failure with {@code -Dbloomkv.seed=N}.
 */
class TtlModelTest {
    private static final long TTL = 20;
    private static final int KEYS = 120;

    @TempDir
    Path dir;

    /** Value and write time of a live-or-expired key. */
    private record Entry(long value, long time) {}

    private final ManualClock clock = new ManualClock(1_700_000_000L);

    private Options options() {
        return Options.defaults()
                .ttl(Duration.ofSeconds(TTL))
                .clock(clock)
                .mergeOperator(MergeOperators.uint64Add())
                .writeBufferSize(16 << 10)
                .targetFileSize(16 << 10)
                .maxBytesForLevelBase(64 << 10)
                .l0CompactionTrigger(2)
                .compression(Compression.NONE)
                .periodicCompaction(Duration.ofSeconds(30));
    }

    private static byte[] key(int i) {
        return String.format("k%04d", i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static String name(byte[] k) {
        return new String(k, java.nio.charset.StandardCharsets.UTF_8);
    }

    private boolean alive(Entry e) {
        return e != null && clock.seconds() <= e.time() + TTL;
    }

    /** What the model reads: live values only. */
    private Map<String, Long> visible(TreeMap<String, Entry> model) {
        Map<String, Long> out = new TreeMap<>();
        model.forEach((k, e) -> {
            if (alive(e)) {
                out.put(k, e.value());
            }
        });
        return out;
    }

    @Test
    void randomOperationsMatchTheModel() {
        long seed = TestSeeds.seed("TtlModelTest");
        Random rnd = new Random(seed);
        TreeMap<String, Entry> model = new TreeMap<>();
        List<Snapshot> snaps = new ArrayList<>();
        List<TreeMap<String, Entry>> snapModels = new ArrayList<>();
        Db db = Db.open(dir, options());
        try {
            for (int step = 0; step < 2000; step++) {
                String ctx = "seed " + seed + " step " + step + " now " + clock.seconds();
                int r = rnd.nextInt(100);
                byte[] k = key(rnd.nextInt(KEYS));
                long now = clock.seconds();
                if (r < 30) {
                    long v = rnd.nextInt(1000);
                    db.put(k, MergeOperators.encodeUint64(v));
                    model.put(name(k), new Entry(v, now));
                } else if (r < 48) {
                    long d = 1 + rnd.nextInt(10);
                    db.merge(k, MergeOperators.encodeUint64(d));
                    Entry e = model.get(name(k));
                    long base = e != null && now <= e.time() + TTL ? e.value() : 0; // gap rule: expired = absent
                    model.put(name(k), new Entry(base + d, now));
                } else if (r < 53) {
                    db.delete(k);
                    model.remove(name(k));
                } else if (r < 55) {
                    int a = rnd.nextInt(KEYS);
                    int b = Math.min(KEYS, a + 1 + rnd.nextInt(10));
                    db.deleteRange(key(a), key(b));
                    model.subMap(name(key(a)), name(key(b))).clear();
                } else if (r < 67) {
                    clock.advanceSeconds(rnd.nextInt(9));
                } else if (r < 69) {
                    db.flush();
                } else if (r < 70) {
                    db.compactRange(null, null);
                } else if (r < 71) {
                    db.scheduleCompactionCheck();
                    db.waitForBackgroundWork();
                } else if (r < 73 && snaps.size() < 3) {
                    snaps.add(db.getSnapshot());
                    TreeMap<String, Entry> copy = new TreeMap<>(model);
                    snapModels.add(copy);
                } else if (r < 75 && !snaps.isEmpty()) {
                    int i = rnd.nextInt(snaps.size());
                    snaps.remove(i).close();
                    snapModels.remove(i);
                } else if (r < 76) {
                    snaps.forEach(Snapshot::close);
                    snaps.clear();
                    snapModels.clear();
                    db.close();
                    db = Db.open(dir, options());
                } else if (r < 88) {
                    int s = snaps.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(snaps.size());
                    TreeMap<String, Entry> m = s < 0 ? model : snapModels.get(s);
                    Entry e = m.get(name(k));
                    byte[] got = db.get(k, s < 0 ? null : ReadOptions.defaults().snapshot(snaps.get(s)));
                    if (alive(e)) {
                        assertThat(got).as(ctx + " get " + name(k)).isNotNull();
                        assertThat(MergeOperators.decodeUint64(got))
                                .as(ctx + " get " + name(k))
                                .isEqualTo(e.value());
                    } else {
                        assertThat(got)
                                .as(ctx + " get " + name(k) + " (expected absent, model " + e + ")")
                                .isNull();
                    }
                } else if (r < 92) {
                    List<byte[]> keys = new ArrayList<>();
                    for (int i = 0; i < 8; i++) {
                        keys.add(key(rnd.nextInt(KEYS)));
                    }
                    List<byte[]> got = db.multiGet(keys);
                    for (int i = 0; i < keys.size(); i++) {
                        Entry e = model.get(name(keys.get(i)));
                        Long want = alive(e) ? e.value() : null;
                        assertThat(got.get(i) == null ? null : MergeOperators.decodeUint64(got.get(i)))
                                .as(ctx + " multiGet " + name(keys.get(i)))
                                .isEqualTo(want);
                    }
                } else {
                    int s = snaps.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(snaps.size());
                    Map<String, Long> want = visible(s < 0 ? model : snapModels.get(s));
                    ReadOptions ro = s < 0 ? null : ReadOptions.defaults().snapshot(snaps.get(s));
                    assertThat(scan(db, ro, true)).as(ctx + " forward scan").isEqualTo(want);
                    assertThat(scan(db, ro, false)).as(ctx + " reverse scan").isEqualTo(want);
                }
            }
        } finally {
            snaps.forEach(Snapshot::close);
            db.close();
        }
    }

    private static Map<String, Long> scan(Db db, ReadOptions ro, boolean forward) {
        Map<String, Long> out = new TreeMap<>();
        List<String> order = new ArrayList<>();
        try (DbIterator it = db.iterator(ro)) {
            for (if0(it, forward); it.valid(); step(it, forward)) {
                out.put(name(it.key()), MergeOperators.decodeUint64(it.value()));
                order.add(name(it.key()));
            }
        }
        List<String> sorted = new ArrayList<>(order);
        sorted.sort(forward ? null : java.util.Comparator.reverseOrder());
        assertThat(order).isEqualTo(sorted);
        return out;
    }

    private static void if0(DbIterator it, boolean forward) {
        if (forward) {
            it.seekToFirst();
        } else {
            it.seekToLast();
        }
    }

    private static void step(DbIterator it, boolean forward) {
        if (forward) {
            it.next();
        } else {
            it.prev();
        }
    }
}
