package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads of a TTL database ({@link Options#ttl}) against a model of its documented rules (Ttl's class comment): a value
 * is visible while {@code now <= t + ttl}; a key's entries apply oldest first, an entry written more than {@code ttl}
 * after the previous one finds it expired (absent), a merge result carries its newest operand's write time. A manual
 * clock moves in whole seconds across the TTL while puts, deletes, merge operands (string append) and range deletions
 * are written and flushes and manual compactions run (the compaction step removes expired values); get, multiGet and
 * iterators in both directions, latest and at snapshots (whose values expire as the clock moves, as the latest ones),
 * must read as the model at every step. RocksDB cannot be the oracle here: its TtlDB
 * returns expired values until a compaction drops them. Replay with -Dbloomkv.seed=N.
 */
@ExtendWith(NoTableLeak.class)
class TtlReadModelTest {
    @TempDir
    Path dir;

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 3000);
    private static final long TTL = 10;

    /** The model's state of one key: its value and write time, or absent. */
    private record State(String value, long time) {}

    private static byte[] key(int i) {
        return ("k" + (char) ('a' + i)).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void ttlReadsMatchTheModel() {
        run(false);
    }

    @Test
    void ttlReadsWithRangeFiltersMatchTheModel() {
        run(true);
    }

    private void run(boolean rangeFilters) {
        long seed = TestKeys.seed("TtlReadModelTest." + rangeFilters);
        Random rnd = new Random(seed);
        String ctx = "seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        ManualClock clock = new ManualClock(1_000_000);
        Options o = Options.defaults()
                .writeBufferSize(4 << 10)
                .blockSize(256)
                .targetFileSize(4 << 10)
                .l0CompactionTrigger(2)
                .clock(clock)
                .ttl(Duration.ofSeconds(TTL))
                .mergeOperator(MergeOperators.stringAppend(','))
                .rangeFilterBitsPerKey(rangeFilters ? 10 : 0);
        int keys = 16;
        TreeMap<String, State> model = new TreeMap<>();
        List<String> history = new ArrayList<>();
        List<Snapshot> snapshots = new ArrayList<>();
        List<TreeMap<String, State>> snapshotModels = new ArrayList<>();
        try (Db db = Db.open(dir, o)) {
            for (int op = 0; op < OPS; op++) {
                int sn = snapshots.isEmpty() || rnd.nextInt(3) > 0 ? -1 : rnd.nextInt(snapshots.size());
                ReadOptions ro = ReadOptions.defaults().snapshot(sn < 0 ? null : snapshots.get(sn));
                TreeMap<String, State> view = sn < 0 ? model : snapshotModels.get(sn);
                long now = clock.seconds();
                int r = rnd.nextInt(100);
                int i = rnd.nextInt(keys);
                String k = new String(key(i), StandardCharsets.UTF_8);
                String where = ctx + " op " + op + " now " + now + (sn < 0 ? "" : " at snapshot #" + sn) + " after "
                        + history.subList(Math.max(0, history.size() - 8), history.size());
                if (r < 20) {
                    String v = "v" + op;
                    history.add("put " + k + " @" + now);
                    db.put(key(i), v.getBytes(StandardCharsets.UTF_8));
                    model.put(k, new State(v, now));
                } else if (r < 27) {
                    history.add("delete " + k + " @" + now);
                    db.delete(key(i));
                    model.remove(k);
                } else if (r < 45) {
                    String v = "m" + op;
                    history.add("merge " + k + " @" + now);
                    db.merge(key(i), v.getBytes(StandardCharsets.UTF_8));
                    State s = live(model.get(k), now);
                    model.put(k, new State(s == null ? v : s.value() + "," + v, now));
                } else if (r < 49) {
                    int j = rnd.nextInt(keys);
                    int a = Math.min(i, j);
                    int b = Math.max(i, j) + 1;
                    history.add("deleteRange " + a + ".." + b + " @" + now);
                    db.deleteRange(key(a), key(b));
                    for (int x = a; x < b; x++) {
                        model.remove(new String(key(x), StandardCharsets.UTF_8));
                    }
                } else if (r < 56) {
                    long d = rnd.nextInt(3) == 0 ? TTL + rnd.nextInt(3) - 1 : rnd.nextInt(4);
                    history.add("advance " + d);
                    clock.advanceSeconds(d);
                } else if (r < 60) {
                    history.add("flush");
                    db.flush();
                } else if (r < 63) {
                    history.add("compactRange");
                    db.compactRange(null, null);
                } else if (r < 65) {
                    if (snapshots.size() < 3 && rnd.nextBoolean()) {
                        history.add("snapshot #" + snapshots.size());
                        snapshots.add(db.getSnapshot());
                        snapshotModels.add(new TreeMap<>(model));
                    } else if (!snapshots.isEmpty()) {
                        int x = rnd.nextInt(snapshots.size());
                        history.add("release #" + x);
                        db.releaseSnapshot(snapshots.remove(x));
                        snapshotModels.remove(x);
                    }
                } else if (r < 75) {
                    assertThat(str(db.get(key(i), ro))).as(where + " get " + k).isEqualTo(expected(view, k, now));
                } else if (r < 82) {
                    List<byte[]> ks = new ArrayList<>();
                    for (int x = 0, n = 1 + rnd.nextInt(6); x < n; x++) {
                        ks.add(key(rnd.nextInt(keys)));
                    }
                    List<byte[]> got = db.multiGet(ro, ks);
                    for (int x = 0; x < ks.size(); x++) {
                        String kx = new String(ks.get(x), StandardCharsets.UTF_8);
                        assertThat(str(got.get(x)))
                                .as(where + " multiGet " + kx)
                                .isEqualTo(expected(view, kx, now));
                    }
                } else {
                    List<String> want = new ArrayList<>();
                    for (Map.Entry<String, State> e : view.entrySet()) {
                        if (live(e.getValue(), now) != null) {
                            want.add(e.getKey() + "=" + e.getValue().value());
                        }
                    }
                    List<String> fwd = new ArrayList<>();
                    List<String> back = new ArrayList<>();
                    try (DbIterator it = db.iterator(ro)) {
                        for (it.seekToFirst(); it.valid(); it.next()) {
                            fwd.add(str(it.key()) + "=" + str(it.value()));
                        }
                        for (it.seekToLast(); it.valid(); it.prev()) {
                            back.add(0, str(it.key()) + "=" + str(it.value()));
                        }
                        // a change of direction in the middle: forward to a random key, then back one, then forward
                        it.seek(key(i));
                        if (it.valid()) {
                            String here = str(it.key());
                            it.prev();
                            int at = want.indexOf(want.stream()
                                    .filter(w -> w.startsWith(here + "="))
                                    .findFirst()
                                    .orElse("?"));
                            String before = at > 0 ? want.get(at - 1) : null;
                            assertThat(it.valid() ? str(it.key()) + "=" + str(it.value()) : null)
                                    .as(where + " prev after seek " + k)
                                    .isEqualTo(before);
                            if (it.valid()) {
                                it.next();
                                assertThat(str(it.key()))
                                        .as(where + " next after prev")
                                        .isEqualTo(here);
                            }
                        }
                    }
                    assertThat(fwd).as(where + " forward scan").isEqualTo(want);
                    assertThat(back).as(where + " backward scan").isEqualTo(want);
                }
            }
            snapshots.forEach(db::releaseSnapshot);
        }
    }

    private static State live(State s, long now) {
        return s == null || now > s.time() + TTL ? null : s;
    }

    private static String expected(TreeMap<String, State> model, String k, long now) {
        State s = live(model.get(k), now);
        return s == null ? null : s.value();
    }

    private static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }
}
