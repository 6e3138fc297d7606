package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.MergeOperator;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.KeyLookup;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The memtable against a model: a TreeMap of every internal key the writer will add (the operations are drawn from
 * the seed before the run), while readers at snapshots get, collect (merge operands, range tombstones) and iterate
 * both ways. A reader at sequence s must see exactly the entries of sequence <= s whichever later versions, key nodes
 * and index growth the writer is in the middle of; its iterators may pass newer entries (callers filter by sequence),
 * which must still be in order. With and without the point index; replay with -Dbloomkv.seed=N (the interleaving is
 * the scheduler's).
 */
class MemTableModelTest {
    private static final int OPS = 15_000;
    private static final int READERS = 2;

    /** Appends operands, oldest first, to the base with '|' between: the order of operands is visible. */
    private static final MergeOperator CONCAT = new MergeOperator() {
        @Override
        public String name() {
            return "concat";
        }

        @Override
        public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            if (existingValue != null) {
                out.writeBytes(existingValue);
            }
            for (byte[] o : operands) {
                out.write('|');
                out.writeBytes(o);
            }
            return out.toByteArray();
        }
    };

    /** One write: a point entry ({@code end} null) or a range tombstone [key, end). */
    private record Op(byte[] key, ValueType type, byte[] value, byte[] end) {}

    /** Everything the writer will do, and the model of it. */
    private static final class Model {
        final Op[] ops;
        final byte[][] pool;
        /** Sequences of the range tombstones. */
        final List<Long> rangeTombstones = new ArrayList<>();
        /** Internal key -> sequence (its op is ops[sequence - 1]). */
        final TreeMap<byte[], Long> entries = new TreeMap<>(InternalKey.COMPARATOR);

        Model(Random rnd) {
            Set<String> seen = new HashSet<>();
            List<byte[]> keys = new ArrayList<>();
            while (keys.size() < 4000) {
                byte[] k = key(rnd);
                if (seen.add(Arrays.toString(k))) {
                    keys.add(k);
                }
            }
            pool = keys.toArray(new byte[0][]);
            ops = new Op[OPS];
            for (int i = 0; i < OPS; i++) {
                long seq = i + 1;
                // half the writes go to 40 hot keys (long chains), the rest over the pool (new keys and short chains)
                byte[] k = rnd.nextBoolean() ? pool[rnd.nextInt(40)] : pool[rnd.nextInt(pool.length)];
                int r = rnd.nextInt(200);
                if (r == 0) {
                    byte[] b = pool[rnd.nextInt(pool.length)];
                    byte[] e = pool[rnd.nextInt(pool.length)];
                    if (Arrays.compareUnsigned(b, e) > 0) {
                        byte[] t = b;
                        b = e;
                        e = t;
                    }
                    ops[i] = new Op(b, null, null, e);
                    rangeTombstones.add(seq);
                    continue;
                }
                ValueType type = r < 30 ? ValueType.DELETE : r < 70 ? ValueType.MERGE : ValueType.PUT;
                byte[] v = type == ValueType.DELETE ? new byte[0] : value(rnd, seq);
                ops[i] = new Op(k, type, v, null);
                entries.put(InternalKey.encode(k, seq, type), seq);
            }
        }

        /** Keys of 0 to 40 bytes over few byte values: shared prefixes, zero bytes, lengths around the 8-byte words. */
        private static byte[] key(Random rnd) {
            byte[] k = new byte[rnd.nextInt(4) == 0 ? rnd.nextInt(41) : 6 + rnd.nextInt(14)];
            for (int i = 0; i < k.length; i++) {
                int r = rnd.nextInt(4);
                k[i] = (byte) (r == 0 ? 0 : r == 1 ? 0xFF : r == 2 ? 'a' + rnd.nextInt(3) : 0x80);
            }
            return k;
        }

        /** A value naming its sequence, of 0 to ~60 bytes (an empty value now and then). */
        private static byte[] value(Random rnd, long seq) {
            if (rnd.nextInt(20) == 0) {
                return new byte[0];
            }
            byte[] tag = Long.toString(seq).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            byte[] v = Arrays.copyOf(tag, tag.length + rnd.nextInt(50));
            for (int i = tag.length; i < v.length; i++) {
                v[i] = (byte) rnd.nextInt(256);
            }
            return v;
        }

        Op op(long seq) {
            return ops[(int) seq - 1];
        }

        /** The newest entry of {@code key} at or below {@code s}: its sequence, or 0. */
        long newest(byte[] key, long s) {
            Map.Entry<byte[], Long> e = entries.ceilingEntry(InternalKey.forSeek(key, s));
            return e != null && Arrays.equals(InternalKey.userKey(e.getKey()), key) ? e.getValue() : 0;
        }

        /** What a lookup of {@code key} at {@code s} through this memtable alone finishes with. */
        byte[] collected(byte[] key, long s) {
            long covering = 0;
            for (long seq : rangeTombstones) {
                Op o = op(seq);
                if (seq <= s && Arrays.compareUnsigned(o.key(), key) <= 0 && Arrays.compareUnsigned(key, o.end()) < 0) {
                    covering = seq;
                }
            }
            KeyLookup want = new KeyLookup(key, s, CONCAT);
            want.coveredBy(covering);
            for (Map.Entry<byte[], Long> e :
                    entries.tailMap(InternalKey.forSeek(key, s), true).entrySet()) {
                if (!Arrays.equals(InternalKey.userKey(e.getKey()), key)) {
                    break;
                }
                Op o = op(e.getValue());
                if (want.add(o.type(), e.getValue(), o.type() == ValueType.DELETE ? null : o.value())) {
                    break;
                }
            }
            return want.finish();
        }

        /** The first entry after {@code from} (exclusive; null: from the start) with sequence <= s, or null. */
        byte[] higher(byte[] from, long s) {
            byte[] k = from == null ? first() : entries.higherKey(from);
            while (k != null && InternalKey.sequence(k) > s) {
                k = entries.higherKey(k);
            }
            return k;
        }

        /** The last entry before {@code from} (exclusive; null: from the end) with sequence <= s, or null. */
        byte[] lower(byte[] from, long s) {
            byte[] k = from == null ? last() : entries.lowerKey(from);
            while (k != null && InternalKey.sequence(k) > s) {
                k = entries.lowerKey(k);
            }
            return k;
        }

        byte[] first() {
            return entries.isEmpty() ? null : entries.firstKey();
        }

        byte[] last() {
            return entries.isEmpty() ? null : entries.lastKey();
        }
    }

    @Test
    void anIndexedMemtableMatchesTheModelUnderConcurrentReaders() throws Exception {
        run(true);
    }

    @Test
    void anUnindexedMemtableMatchesTheModelUnderConcurrentReaders() throws Exception {
        run(false);
    }

    private static void run(boolean indexed) throws Exception {
        long seed = TestSeeds.seed("MemTableModelTest." + (indexed ? "indexed" : "plain"));
        Model model = new Model(new Random(seed));
        // the index with the filter (whose clear bits let a write of a new key skip the index); the plain list with
        // or without it
        boolean filtered = indexed || new Random(seed).nextBoolean();
        MemTable m = new MemTable(1, 1 << 20, filtered ? 10 : 0, indexed);
        AtomicLong published = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] checks = new long[READERS];
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < READERS; r++) {
            int reader = r;
            threads.add(new Thread(
                    () -> {
                        Random rnd = new Random(seed * 31 + reader);
                        try {
                            while (!done.get() && failure.get() == null) {
                                long now = published.get(); // the volatile read a reader's sequence comes from
                                long s = rnd.nextInt(4) == 0 ? rnd.nextLong(now + 1) : now;
                                check(m, model, rnd, s, "seed " + seed + ", indexed " + indexed + ", snapshot " + s);
                                checks[reader]++;
                            }
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                    },
                    "model-reader-" + r));
        }
        threads.forEach(Thread::start);
        try {
            for (long seq = 1; seq <= OPS && failure.get() == null; seq++) {
                Op o = model.op(seq);
                if (o.end() != null) {
                    m.addRangeTombstone(seq, o.key(), o.end());
                } else {
                    m.add(seq, o.type(), o.key(), o.value());
                }
                published.set(seq);
                if (seq % 64 == 0) {
                    Thread.yield(); // let the readers run between writes on a busy machine
                }
            }
        } finally {
            done.set(true);
            for (Thread t : threads) {
                t.join();
            }
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        System.out.printf(
                "MemTableModelTest indexed=%s filtered=%s: reader checks %s%n",
                indexed, filtered, Arrays.toString(checks));
        String what = "seed " + seed + ", indexed " + indexed + ", after the writer";
        Random rnd = new Random(seed);
        for (int i = 0; i < 300; i++) {
            check(m, model, rnd, rnd.nextInt(OPS + 1), what);
        }
        // the whole table both ways
        List<byte[]> forward = new ArrayList<>();
        try (InternalIterator it = m.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                forward.add(it.key());
            }
            assertThat(forward).as(what).containsExactlyElementsOf(model.entries.keySet());
            List<byte[]> backward = new ArrayList<>();
            for (it.seekToLast(); it.valid(); it.prev()) {
                backward.add(it.key());
            }
            assertThat(backward).as(what).containsExactlyElementsOf(model.entries.descendingKeySet());
        }
        // the same writes into a memtable with the other setting: the index's growth is the whole difference in size
        MemTable other = new MemTable(1, 1 << 20, filtered ? 10 : 0, !indexed);
        for (long seq = 1; seq <= OPS; seq++) {
            Op o = model.op(seq);
            if (o.end() != null) {
                other.addRangeTombstone(seq, o.key(), o.end());
            } else {
                other.add(seq, o.type(), o.key(), o.value());
            }
        }
        MemTable with = indexed ? m : other;
        MemTable without = indexed ? other : m;
        assertThat(without.indexMemoryBytes()).isZero();
        assertThat(with.indexMemoryBytes()).isGreaterThan(16 + 8L * MemIndex.INITIAL_SLOTS); // it grew
        assertThat(with.approximateMemoryUsage() - without.approximateMemoryUsage())
                .as(what)
                .isEqualTo(with.indexMemoryBytes() - (16 + 8L * MemIndex.INITIAL_SLOTS));
    }

    /** One round of a reader at snapshot {@code s}: gets, a collect, and iterator walks, each against the model. */
    private static void check(MemTable m, Model model, Random rnd, long s, String what) {
        for (int i = 0; i < 8; i++) {
            byte[] key;
            if (i < 2) { // the keys written at and just after the snapshot: where a visibility bug would show
                Op o = s + i >= 1 && s + i <= OPS ? model.op(s + i) : null;
                key = o != null ? o.key() : Model.key(rnd);
            } else {
                key = rnd.nextInt(8) == 0 ? Model.key(rnd) : model.pool[rnd.nextInt(model.pool.length)];
            }
            long want = model.newest(key, s);
            TableReader.Entry got = rnd.nextBoolean() ? m.get(key, s) : m.get(key, Hashing.hash64(key), s);
            if (want == 0) {
                assertThat(got).as("%s: get of %s", what, Arrays.toString(key)).isNull();
            } else {
                assertThat(got).as("%s: get of %s", what, Arrays.toString(key)).isNotNull();
                Op o = model.op(want);
                assertThat(got.sequence()).as(what).isEqualTo(want);
                assertThat(got.type()).as(what).isEqualTo(o.type());
                if (o.type() != ValueType.DELETE) {
                    assertThat(got.value()).as(what).isEqualTo(o.value());
                }
            }
        }
        byte[] key = rnd.nextInt(3) == 0 ? model.pool[rnd.nextInt(40)] : model.pool[rnd.nextInt(model.pool.length)];
        KeyLookup lookup = new KeyLookup(key, s, CONCAT);
        m.collect(Hashing.hash64(key), lookup);
        assertThat(lookup.finish())
                .as("%s: collect of %s", what, Arrays.toString(key))
                .isEqualTo(model.collected(key, s));

        try (InternalIterator it = m.iterator()) {
            // forward from a seek
            byte[] target = InternalKey.forSeek(
                    rnd.nextBoolean() ? model.pool[rnd.nextInt(model.pool.length)] : Model.key(rnd),
                    rnd.nextInt(3) == 0 ? rnd.nextLong(s + 1) : s);
            it.seek(target);
            byte[] want = model.higher(model.entries.lowerKey(target), s); // the first at or after the target
            skipNewer(it, model, s, true, what);
            for (int step = 0; step < 12; step++) {
                assertAt(it, want, model, what + ", forward from " + Arrays.toString(target));
                if (want == null) {
                    break;
                }
                it.next();
                skipNewer(it, model, s, true, what);
                want = model.higher(want, s);
            }
            // backward from a seekForPrev
            target = InternalKey.forSeek(model.pool[rnd.nextInt(model.pool.length)], rnd.nextLong(OPS + 1));
            it.seekForPrev(target);
            skipNewer(it, model, s, false, what);
            want = model.lower(model.entries.higherKey(target), s); // the last at or before the target
            for (int step = 0; step < 12; step++) {
                assertAt(it, want, model, what + ", backward from " + Arrays.toString(target));
                if (want == null) {
                    break;
                }
                it.prev();
                skipNewer(it, model, s, false, what);
                want = model.lower(want, s);
            }
            // a random walk, changing direction, from the first or the last entry or a seek
            int start = rnd.nextInt(3);
            if (start == 0) {
                it.seekToFirst();
                skipNewer(it, model, s, true, what);
                want = model.higher(null, s);
            } else if (start == 1) {
                it.seekToLast();
                skipNewer(it, model, s, false, what);
                want = model.lower(null, s);
            } else {
                byte[] hot = model.pool[rnd.nextInt(40)]; // a hot key: a long chain to walk back and forth in
                target = InternalKey.forSeek(hot, rnd.nextLong(s + 1));
                it.seek(target);
                skipNewer(it, model, s, true, what);
                want = model.higher(model.entries.lowerKey(target), s);
            }
            for (int step = 0; step < 40 && want != null; step++) {
                assertAt(it, want, model, what + ", walk step " + step);
                if (rnd.nextBoolean()) {
                    it.next();
                    skipNewer(it, model, s, true, what);
                    want = model.higher(want, s);
                } else {
                    it.prev();
                    skipNewer(it, model, s, false, what);
                    want = model.lower(want, s);
                }
            }
            if (want == null) {
                assertThat(it.valid()).as(what + ": walk ran off the end").isFalse();
            }
        }
    }

    /**
     * Steps over entries newer than {@code s} (a caller filters them): each must be a real entry, in order. The
     * iterator may be not valid.
     */
    private static void skipNewer(InternalIterator it, Model model, long s, boolean forward, String what) {
        while (it.valid() && InternalKey.sequence(it.key()) > s) {
            byte[] k = it.key();
            assertThat(model.entries)
                    .as(what + ": an entry newer than the snapshot")
                    .containsKey(k);
            if (forward) {
                it.next();
            } else {
                it.prev();
            }
        }
    }

    /** The iterator is at {@code want} (null: not valid), with its op's value. */
    private static void assertAt(InternalIterator it, byte[] want, Model model, String what) {
        if (want == null) {
            assertThat(it.valid()).as(what + ": past the end").isFalse();
            return;
        }
        assertThat(it.valid()).as(what + ": valid").isTrue();
        byte[] k = it.key();
        assertThat(k).as(what).isEqualTo(want);
        Op o = model.op(model.entries.get(want));
        if (o.type() != ValueType.DELETE) {
            assertThat(it.value()).as(what).isEqualTo(o.value());
        }
    }
}
