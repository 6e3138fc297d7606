package io.bloomkv.bench.range;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link RangeCheck} against an in-memory model of {@code rangeseek}'s loaded database (a {@code TreeMap} in unsigned
 * key order, as LevelDB's ModelDB): the model's answer to every range passes, and every way of getting it wrong (a
 * changed key or value byte, a missing, extra, repeated or out-of-order entry, a key outside the range, a value of
 * another length or none) fails. {@link RangeSeekBench#pass} throws at a wrong answer, naming the engine and the range.
 * Replay a failure with -Dbench.seed=N.
 */
class RangeCheckTest {
    private static final long SEED = Long.getLong("bench.seed", System.nanoTime());
    /** A last block that is not full, so the end of the load is inside a block. */
    private static final long NUM = 40 * RangeSeekBench.PER_BLOCK + 17;

    static {
        System.out.println("RangeCheckTest seed = " + SEED + " (replay with -Dbench.seed=" + SEED + ")");
    }

    private static final TreeMap<byte[], byte[]> MODEL = model(NUM);

    /** Every loaded key with its loaded value, in unsigned key order. */
    private static TreeMap<byte[], byte[]> model(long num) {
        TreeMap<byte[], byte[]> m = new TreeMap<>(Arrays::compareUnsigned);
        for (long j = 0; j < num; j++) {
            long id = RangeSeekBench.loadedId(j);
            m.put(RangeSeekBench.key(id), RangeSeekBench.value(id));
        }
        return m;
    }

    /** The ways an answer can be wrong; each mutation below makes one. */
    private enum Wrong {
        MISSING_KEY,
        EXTRA_KEY,
        SWAPPED,
        REPEATED,
        SHORT,
        VALUE_BYTE,
        VALUE_LENGTH,
        NULL_VALUE,
        NULL_KEY,
        BEFORE_RANGE,
        AT_OR_AFTER_RANGE,
        LAST_REPLACED_BY_OUTSIDE
    }

    private record Answer(List<byte[]> keys, List<byte[]> values) {
        Answer copy() {
            return new Answer(new ArrayList<>(keys), new ArrayList<>(values));
        }
    }

    /** The model's answer to ids [lo, hi). */
    private static Answer modelAnswer(long lo, long hi) {
        Answer a = new Answer(new ArrayList<>(), new ArrayList<>());
        for (Map.Entry<byte[], byte[]> e : MODEL.subMap(RangeSeekBench.bound(lo), true, RangeSeekBench.bound(hi), false)
                .entrySet()) {
            a.keys.add(e.getKey().clone());
            a.values.add(e.getValue().clone());
        }
        return a;
    }

    /** An id in [lo, hi) the load never wrote, or -1. */
    private static long unloadedIdIn(long lo, long hi, SplittableRandom rnd) {
        for (int tries = 0; tries < 64 && hi > lo; tries++) {
            long id = lo + rnd.nextLong(hi - lo);
            if (!MODEL.containsKey(RangeSeekBench.key(id))) {
                return id;
            }
        }
        return -1;
    }

    /** {@code right} (the answer to ids [lo, hi)) made wrong in way {@code how}; null when that cannot apply to it. */
    private static Answer mutate(Answer right, Wrong how, long lo, long hi, SplittableRandom rnd) {
        Answer a = right.copy();
        int n = a.keys.size();
        int i = n == 0 ? 0 : rnd.nextInt(n);
        switch (how) {
            case MISSING_KEY -> {
                if (n == 0) {
                    return null;
                }
                a.keys.remove(i);
                a.values.remove(i);
            }
            case EXTRA_KEY -> {
                // a key the load never wrote, inside the range, in its place in key order
                long id = unloadedIdIn(lo, hi, rnd);
                if (id < 0) {
                    return null;
                }
                byte[] k = RangeSeekBench.key(id);
                int at = 0;
                while (at < n && Arrays.compareUnsigned(a.keys.get(at), k) < 0) {
                    at++;
                }
                a.keys.add(at, k);
                a.values.add(at, RangeSeekBench.value(id));
            }
            case SWAPPED -> {
                if (n < 2) {
                    return null;
                }
                int j = rnd.nextInt(n - 1);
                a.keys.set(j, right.keys.get(j + 1));
                a.keys.set(j + 1, right.keys.get(j));
                a.values.set(j, right.values.get(j + 1));
                a.values.set(j + 1, right.values.get(j));
            }
            case REPEATED -> {
                if (n == 0) {
                    return null;
                }
                a.keys.add(i + 1, a.keys.get(i).clone());
                a.values.add(i + 1, a.values.get(i).clone());
            }
            case SHORT -> {
                if (n == 0) {
                    return null;
                }
                a.keys.remove(n - 1);
                a.values.remove(n - 1);
            }
            case VALUE_BYTE -> {
                if (n == 0) {
                    return null;
                }
                byte[] v = a.values.get(i).clone();
                v[rnd.nextInt(v.length)] ^= (byte) (1 << rnd.nextInt(8));
                a.values.set(i, v);
            }
            case VALUE_LENGTH -> {
                if (n == 0) {
                    return null;
                }
                byte[] v = a.values.get(i);
                a.values.set(i, Arrays.copyOf(v, rnd.nextBoolean() ? v.length - 1 : v.length + 1));
            }
            case NULL_VALUE -> {
                if (n == 0) {
                    return null;
                }
                a.values.set(i, null);
            }
            case NULL_KEY -> {
                if (n == 0) {
                    return null;
                }
                a.keys.set(i, null);
            }
            case BEFORE_RANGE -> {
                // the loaded key right before the range, handed out first
                Map.Entry<byte[], byte[]> before = MODEL.lowerEntry(RangeSeekBench.bound(lo));
                if (before == null) {
                    return null;
                }
                a.keys.add(0, before.getKey().clone());
                a.values.add(0, before.getValue().clone());
            }
            case AT_OR_AFTER_RANGE -> {
                // the loaded key at or after the upper bound, handed out last (an ignored bound)
                Map.Entry<byte[], byte[]> after = MODEL.ceilingEntry(RangeSeekBench.bound(hi));
                if (after == null) {
                    return null;
                }
                a.keys.add(after.getKey().clone());
                a.values.add(after.getValue().clone());
            }
            case LAST_REPLACED_BY_OUTSIDE -> {
                // as many entries as the range holds, the last one from past the bound: a count alone would pass
                Map.Entry<byte[], byte[]> after = MODEL.ceilingEntry(RangeSeekBench.bound(hi));
                if (n == 0 || after == null) {
                    return null;
                }
                a.keys.set(n - 1, after.getKey().clone());
                a.values.set(n - 1, after.getValue().clone());
            }
        }
        return a;
    }

    /** The answer in buffers as a pass leaves them: the slots past the answer hold a previous range's entries. */
    private static byte[][][] buffers(Answer a, SplittableRandom rnd) {
        byte[][] ks = new byte[Math.max(RangeSeekBench.MAX_WIDTH + 1, a.keys.size())][];
        byte[][] vs = new byte[ks.length][];
        for (int i = 0; i < ks.length; i++) {
            long stale = RangeSeekBench.loadedId(rnd.nextLong(NUM));
            ks[i] = i < a.keys.size() ? a.keys.get(i) : RangeSeekBench.key(stale);
            vs[i] = i < a.keys.size() ? a.values.get(i) : RangeSeekBench.value(stale);
        }
        return new byte[][][] {ks, vs};
    }

    private static String check(Answer a, long lo, long hi, SplittableRandom rnd) {
        byte[][][] b = buffers(a, rnd);
        return RangeCheck.wrong(b[0], b[1], a.keys.size(), lo, hi, NUM);
    }

    /** seekempty's and seekshort's ranges, and ranges of any width anywhere (across blocks, past the load's end). */
    private static List<long[]> rangesToCheck(SplittableRandom rnd) {
        List<long[]> out = new ArrayList<>();
        for (boolean empty : new boolean[] {true, false}) {
            RangeSeekBench.Ranges r = RangeSeekBench.ranges(empty, NUM, 300, rnd.nextLong());
            for (int i = 0; i < r.count(); i++) {
                out.add(new long[] {r.loId()[i], r.hiId()[i]});
            }
        }
        long lastId = RangeSeekBench.loadedId(NUM - 1);
        for (int i = 0; i < 300; i++) {
            long lo = rnd.nextLong(lastId + 300);
            out.add(new long[] {lo, lo + rnd.nextInt(600)});
        }
        out.add(new long[] {0, 1});
        out.add(new long[] {0, lastId + 1});
        out.add(new long[] {lastId, lastId + 1});
        out.add(new long[] {lastId + 1, lastId + 1000});
        return out;
    }

    @Test
    void theModelsAnswersPassAndEveryWrongOneFails() {
        SplittableRandom rnd = new SplittableRandom(SEED);
        Map<Wrong, Integer> applied = new EnumMap<>(Wrong.class);
        for (long[] range : rangesToCheck(rnd)) {
            long lo = range[0];
            long hi = range[1];
            Answer right = modelAnswer(lo, hi);
            assertThat(RangeCheck.expectedCount(lo, hi, NUM)).isEqualTo(right.keys.size());
            assertThat(check(right, lo, hi, rnd))
                    .as("the model's answer to [%d, %d)", lo, hi)
                    .isNull();
            for (Wrong how : Wrong.values()) {
                Answer wrong = mutate(right, how, lo, hi, rnd);
                if (wrong == null) {
                    continue;
                }
                applied.merge(how, 1, Integer::sum);
                String why = check(wrong, lo, hi, rnd);
                assertThat(why).as("%s in [%d, %d)", how, lo, hi).isNotNull();
                if (how == Wrong.BEFORE_RANGE
                        || how == Wrong.AT_OR_AFTER_RANGE
                        || how == Wrong.LAST_REPLACED_BY_OUTSIDE) {
                    assertThat(why).as("%s in [%d, %d)", how, lo, hi).contains("outside [" + lo + ", " + hi + ")");
                }
            }
        }
        assertThat(applied.keySet())
                .as("every kind of wrong answer was tried")
                .containsAll(Arrays.asList(Wrong.values()));
        assertThat(applied.values()).allSatisfy(n -> assertThat(n).isGreaterThan(50));
    }

    /** Each single-bit change of any byte of a key or of a value, at any entry, fails. */
    @Test
    void everyChangedByteOfAKeyOrValueFails() {
        long lo = 5 * 256 + 10;
        long hi = lo + 40; // ids 10..48 of block 5: 20 keys
        Answer right = modelAnswer(lo, hi);
        assertThat(right.keys).hasSize(20);
        SplittableRandom rnd = new SplittableRandom(SEED);
        for (int entry : new int[] {0, 7, 19}) {
            for (int at = 0; at < RangeSeekBench.KEY_SIZE; at++) {
                for (int bit = 0; bit < 8; bit++) {
                    Answer a = right.copy();
                    byte[] k = a.keys.get(entry).clone();
                    k[at] ^= (byte) (1 << bit);
                    a.keys.set(entry, k);
                    assertThat(check(a, lo, hi, rnd))
                            .as("key byte %d bit %d", at, bit)
                            .isNotNull();
                }
            }
            for (int at = 0; at < RangeSeekBench.VALUE_SIZE; at++) {
                Answer a = right.copy();
                byte[] v = a.values.get(entry).clone();
                v[at] ^= (byte) (1 << rnd.nextInt(8));
                a.values.set(entry, v);
                assertThat(check(a, lo, hi, rnd)).as("value byte %d", at).contains("byte " + at + " is");
            }
            Answer longer = right.copy();
            longer.keys.set(entry, Arrays.copyOf(right.keys.get(entry), RangeSeekBench.KEY_SIZE + 1));
            assertThat(check(longer, lo, hi, rnd)).as("a key one byte longer").isNotNull();
        }
    }

    /** Another key's value (its first byte differs, for ids apart by less than 256) fails too. */
    @Test
    void anotherKeysValueFails() {
        long lo = 3 * 256;
        long hi = lo + 64;
        Answer a = modelAnswer(lo, hi);
        a.values.set(4, RangeSeekBench.value(RangeSeekBench.loadedId(3 * 64 + 5)));
        assertThat(check(a, lo, hi, new SplittableRandom(SEED)))
                .contains("entry 4")
                .contains("byte 0 is");
    }

    @Test
    void theDescriptionSaysWhatDiffered() {
        long lo = 2 * 256 + 4;
        long hi = lo + 10; // ids 516, 518, 520, 522, 524
        SplittableRandom rnd = new SplittableRandom(SEED);
        Answer right = modelAnswer(lo, hi);
        assertThat(right.keys).hasSize(5);

        Answer missing = right.copy();
        missing.keys.remove(4);
        missing.values.remove(4);
        assertThat(check(missing, lo, hi, rnd))
                .isEqualTo("the range holds 5 keys, the engine handed out 4: id 524 is missing");

        Answer extra = right.copy();
        extra.keys.add(RangeSeekBench.key(hi));
        extra.values.add(RangeSeekBench.value(hi));
        assertThat(check(extra, lo, hi, rnd))
                .isEqualTo("entry 5 is key id 526 (outside [516, 526)), past the 5 keys the range holds");

        Answer swapped = right.copy();
        swapped.keys.set(1, right.keys.get(2));
        swapped.keys.set(2, right.keys.get(1));
        assertThat(check(swapped, lo, hi, rnd)).isEqualTo("entry 1 is key id 520, expected id 518");

        Answer value = right.copy();
        value.values.set(3, Arrays.copyOf(right.values.get(3), 99));
        assertThat(check(value, lo, hi, rnd)).isEqualTo("entry 3 (id 522) has a value of 99 bytes, the load wrote 100");
    }

    /** A fake engine answering from the model, wrong at range 3 only. */
    private static final class FakeEngine implements RangeSeekBench.Engine {
        private final RangeSeekBench.Ranges ranges;
        private final Wrong wrongAt3;
        private final SplittableRandom rnd = new SplittableRandom(SEED);
        private int call;

        FakeEngine(RangeSeekBench.Ranges ranges, Wrong wrongAt3) {
            this.ranges = ranges;
            this.wrongAt3 = wrongAt3;
        }

        @Override
        public String name() {
            return "fake";
        }

        @Override
        public void put(byte[] k, byte[] v) {}

        @Override
        public void settle() {}

        @Override
        public int scan(byte[] lo, byte[] hi, byte[][] keysOut, byte[][] valuesOut) {
            int i = call++;
            long loId = ranges.loId()[i];
            long hiId = ranges.hiId()[i];
            Answer a = modelAnswer(loId, hiId);
            if (i == 3 && wrongAt3 != null) {
                a = mutate(a, wrongAt3, loId, hiId, rnd);
            }
            int n = Math.min(a.keys.size(), keysOut.length);
            for (int j = 0; j < n; j++) {
                keysOut[j] = a.keys.get(j);
                valuesOut[j] = a.values.get(j);
            }
            return n;
        }

        @Override
        public void close() {}
    }

    @Test
    void aPassThrowsAtTheFirstWrongAnswerNamingEngineAndRange() throws Exception {
        RangeSeekBench.Ranges random = RangeSeekBench.ranges(false, NUM, 10, SEED);
        long[] lo = random.loId().clone();
        long[] hi = random.hiId().clone();
        lo[3] = 7 * 256 + 2;
        hi[3] = lo[3] + 60; // 30 keys: room for every mutation
        RangeSeekBench.Ranges r = RangeSeekBench.Ranges.of(lo, hi);
        assertThat(RangeSeekBench.pass(new FakeEngine(r, null), r, NUM).ops()).isPositive();
        for (Wrong how : new Wrong[] {Wrong.MISSING_KEY, Wrong.EXTRA_KEY, Wrong.SWAPPED, Wrong.VALUE_BYTE}) {
            assertThatThrownBy(() -> RangeSeekBench.pass(new FakeEngine(r, how), r, NUM))
                    .as(how.toString())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("fake: range 3 (ids [" + r.loId()[3] + ", " + r.hiId()[3] + ")): ");
        }
        RangeSeekBench.Ranges empty = RangeSeekBench.ranges(true, NUM, 10, SEED);
        assertThat(RangeSeekBench.pass(new FakeEngine(empty, null), empty, NUM).ops())
                .isPositive();
        assertThatThrownBy(() -> RangeSeekBench.pass(new FakeEngine(empty, Wrong.EXTRA_KEY), empty, NUM))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("fake: range 3 ")
                .hasMessageContaining("past the 0 keys the range holds");
    }

    /** seekempty's ranges hold no loaded key; seekshort's start at one and hold about half as many as their width. */
    @Test
    void theGeneratedRangesHoldWhatTheirWorkloadsSay() {
        RangeSeekBench.Ranges empty = RangeSeekBench.ranges(true, NUM, 1000, SEED);
        RangeSeekBench.Ranges holding = RangeSeekBench.ranges(false, NUM, 1000, SEED);
        for (int i = 0; i < 1000; i++) {
            assertThat(modelAnswer(empty.loId()[i], empty.hiId()[i]).keys).isEmpty();
            long w = holding.hiId()[i] - holding.loId()[i];
            assertThat(w).isBetween(2L, (long) RangeSeekBench.MAX_WIDTH);
            assertThat(MODEL).containsKey(holding.lo()[i]);
            assertThat(modelAnswer(holding.loId()[i], holding.hiId()[i]).keys).hasSize((int) (w + 1) / 2);
            assertThat(holding.lo()[i]).isEqualTo(RangeSeekBench.bound(holding.loId()[i]));
            assertThat(holding.hi()[i]).isEqualTo(RangeSeekBench.bound(holding.hiId()[i]));
        }
    }
}
