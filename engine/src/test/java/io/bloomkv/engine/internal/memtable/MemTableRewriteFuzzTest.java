package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.rangedel.RangeTombstoneList;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link MemTable#withoutHidden}: the rewritten memtable answers every read at a sequence of at least the snapshot it
 * was made for exactly as the original (the entries each key shows, newest first, through the merge operands down to
 * its first put or delete, after the range tombstones), holds none of the entries the original's tombstones or newer
 * versions hide from all those readers, keeps its WAL number and tombstones, and is smaller. The operations come
 * from a seed (replay with -Dbloomkv.seed=N) or, as a Jazzer fuzz target, from the fuzzer's bytes
 * ({@code JAZZER_FUZZ=1}; corpus src/test/resources/io/bloomkv/engine/internal/memtable/MemTableRewriteFuzzTestInputs).
 */
class MemTableRewriteFuzzTest {
    /** One decoded entry of a memtable. */
    private record Entry(String key, long seq, ValueType type, byte[] value) {}

    /** Fuzz target: the input drives the operations (see {@link #run}); the invariant is {@link #check}'s. */
    @FuzzTest(maxDuration = "5m")
    void rewriteReadsTheSame(byte[] data) {
        run(data, (data.length & 1) == 0);
    }

    @Test
    void randomSequencesReadTheSame() {
        long seed = TestSeeds.seed("MemTableRewriteFuzzTest.random");
        Random rnd = new Random(seed);
        for (int round = 0; round < 200; round++) {
            byte[] data = new byte[8 + rnd.nextInt(600)];
            rnd.nextBytes(data);
            run(data, rnd.nextBoolean());
        }
    }

    /**
     * Applies the operations {@code data} encodes (3 bytes each: kind, key, second key or value length) to a memtable,
     * numbered from 1, then rewrites it at a snapshot the last byte picks and checks the result.
     */
    static void run(byte[] data, boolean pointIndex) {
        MemTable m = new MemTable(7, 64 << 10, 10, pointIndex);
        long seq = 0;
        for (int i = 0; i + 3 <= data.length - 1; i += 3) {
            int kind = (data[i] & 0xFF) % 10;
            byte[] key = key(data[i + 1]);
            int arg = data[i + 2] & 0xFF;
            seq++;
            if (kind < 5) {
                m.add(seq, ValueType.PUT, key, value(seq, arg % 90));
            } else if (kind < 7) {
                m.add(seq, ValueType.DELETE, key, null);
            } else if (kind < 8) {
                m.add(seq, ValueType.MERGE, key, value(seq, arg % 20));
            } else {
                byte[] end = key((byte) arg);
                if (Arrays.compareUnsigned(key, end) > 0) {
                    byte[] t = key;
                    key = end;
                    end = t;
                }
                m.addRangeTombstone(seq, key, end);
            }
        }
        long snapshot = seq == 0 ? 0 : (data[data.length - 1] & 0xFF) % (seq + 1);
        check(m, snapshot, seq);
    }

    private static byte[] key(byte b) {
        return new byte[] {'k', (byte) ((b & 0xFF) % 24)};
    }

    private static byte[] value(long seq, int length) {
        byte[] v = new byte[length];
        for (int i = 0; i < length; i++) {
            v[i] = (byte) (seq * 31 + i);
        }
        return v;
    }

    static void check(MemTable m, long snapshot, long lastSequence) {
        MemTable r = m.withoutHidden(snapshot);
        assertThat(r.logNumber()).isEqualTo(m.logNumber());
        assertThat(r.rangeTombstones()).isEqualTo(m.rangeTombstones());
        assertThat(r.rewriteWanted()).isFalse();
        List<Entry> before = entries(m);
        List<Entry> after = entries(r);
        RangeTombstoneList ts = m.rangeTombstoneList();
        TreeSet<String> keys = new TreeSet<>();
        before.forEach(e -> keys.add(e.key()));
        // What a reader sees changes only at the sequence of an entry or a tombstone: read at each of those.
        TreeSet<Long> points = new TreeSet<>(List.of(snapshot, lastSequence + 1));
        before.forEach(e -> points.add(Math.max(snapshot, e.seq())));
        m.rangeTombstones().forEach(t -> points.add(Math.max(snapshot, t.sequence())));
        for (String k : keys) {
            for (long s : points) {
                assertThat(render(visible(after, ts, k, s)))
                        .as("key %s read at %d, memtable rewritten at %d", k, s, snapshot)
                        .isEqualTo(render(visible(before, ts, k, s)));
            }
        }
        // Nothing every reader is past survives: each kept entry is visible to some reader at or after the snapshot.
        for (Entry e : after) {
            boolean seen = false;
            for (long s : points.tailSet(Math.max(snapshot, e.seq()))) {
                seen |= visible(after, ts, e.key(), s).contains(e);
            }
            assertThat(seen)
                    .as("%s kept though no reader at or after %d sees it", e, snapshot)
                    .isTrue();
        }
        assertThat(r.entryCount()).isEqualTo(after.size() + m.rangeTombstones().size());
        assertThat(r.approximateMemoryUsage()).isLessThanOrEqualTo(m.approximateMemoryUsage());
        // Its point lookups agree with its iterator (the index and filter were rebuilt for every kept key).
        for (String k : keys) {
            List<Entry> newest = visible(after, RangeTombstoneList.EMPTY, k, lastSequence + 1);
            var got = r.get(k.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1), lastSequence + 1);
            if (newest.isEmpty()) {
                assertThat(got).as("get %s", k).isNull();
            } else {
                assertThat(got).as("get %s", k).isNotNull();
                assertThat(got.sequence())
                        .as("get %s", k)
                        .isEqualTo(newest.get(0).seq());
            }
        }
    }

    /** Every entry, in iterator order (key ascending, newest first). */
    private static List<Entry> entries(MemTable m) {
        List<Entry> out = new ArrayList<>();
        try (InternalIterator it = m.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                byte[] ik = it.key();
                out.add(new Entry(
                        new String(InternalKey.userKey(ik), java.nio.charset.StandardCharsets.ISO_8859_1),
                        InternalKey.sequence(ik),
                        InternalKey.type(ik),
                        it.value()));
            }
        }
        return out;
    }

    /**
     * What a reader at {@code s} reads of {@code key}: its entries of sequence <= s not under a tombstone newer than
     * them (at most s), newest first, down to the first put or delete.
     */
    private static List<Entry> visible(List<Entry> all, RangeTombstoneList ts, String key, long s) {
        long cover = ts.maxCovering(key.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1), s);
        List<Entry> out = new ArrayList<>();
        for (Entry e : all) {
            if (!e.key().equals(key) || e.seq() > s || cover > e.seq()) {
                continue;
            }
            out.add(e);
            if (e.type() != ValueType.MERGE) {
                break;
            }
        }
        return out;
    }

    private static List<String> render(List<Entry> es) {
        List<String> out = new ArrayList<>();
        for (Entry e : es) {
            out.add(e.seq() + ":" + e.type() + ":" + Arrays.toString(e.type() == ValueType.DELETE ? null : e.value()));
        }
        return out;
    }

    /** A tombstone over most of the memtable asks for a rewrite, which frees what it hides. */
    @Test
    void aTombstoneHidingOverHalfAsksForARewrite() {
        MemTable m = new MemTable(3, 256 << 10, 10, true);
        long seq = 0;
        for (int i = 0; i < 2000; i++) {
            m.add(++seq, ValueType.PUT, String.format("a%05d", i).getBytes(), new byte[40]);
        }
        for (int i = 0; i < 500; i++) {
            m.add(++seq, ValueType.PUT, String.format("b%05d", i).getBytes(), new byte[40]);
        }
        assertThat(m.rewriteWanted()).isFalse();
        m.addRangeTombstone(++seq, "a00000".getBytes(), "a01000".getBytes()); // 1000 of 2500: under half
        assertThat(m.rewriteWanted()).isFalse();
        long hiddenFirst = m.hiddenBytes();
        assertThat(hiddenFirst).isGreaterThan(1000L * 40);
        m.addRangeTombstone(++seq, "a01000".getBytes(), "a02000".getBytes()); // 2000 of 2500
        assertThat(m.rewriteWanted()).isTrue();
        // A snapshot older than both tombstones keeps everything; one past them drops the a keys.
        MemTable kept = m.withoutHidden(seq - 2);
        assertThat(kept.entryCount()).isEqualTo(m.entryCount());
        assertThat(kept.hiddenBytes()).isGreaterThan(m.hiddenBytes() / 2);
        MemTable r = m.withoutHidden(seq);
        assertThat(r.entryCount()).isEqualTo(500 + 2);
        assertThat(r.hiddenBytes()).isZero();
        assertThat(r.approximateMemoryUsage()).isLessThan(m.approximateMemoryUsage() / 2);
        assertThat(r.get("a00001".getBytes(), seq)).isNull();
        assertThat(r.get("b00001".getBytes(), seq).value()).hasSize(40);
        check(m, seq, seq);
    }

    /** Under a sixteenth of the write buffer a memtable is not rewritten, however much is hidden. */
    @Test
    void aSmallMemtableIsNotRewritten() {
        MemTable m = new MemTable(3, 16 << 20, 10, true);
        for (int i = 0; i < 100; i++) {
            m.add(i + 1, ValueType.PUT, String.format("a%05d", i).getBytes(), new byte[40]);
        }
        m.addRangeTombstone(101, "a".getBytes(), "b".getBytes());
        assertThat(m.hiddenBytes()).isGreaterThan(m.approximateMemoryUsage() / 2);
        assertThat(m.rewriteWanted()).isFalse();
    }
}
