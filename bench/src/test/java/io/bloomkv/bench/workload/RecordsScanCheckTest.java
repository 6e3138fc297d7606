package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RecordsScanCheck} against an in-memory model of a recordsscan database: the loaded records, the records an
 * earlier recordslatest inserted, and the scan phase's own inserts, of which two threads have finished some, have one
 * in flight, and have not begun the rest. The model's answers pass, with or without the insert in flight; every way of
 * getting one wrong fails. Replay a failure with -Dbench.seed=N.
 */
class RecordsScanCheckTest {
    private static final long SEED = Long.getLong("bench.seed", System.nanoTime());

    static {
        System.out.println("RecordsScanCheckTest seed = " + SEED + " (replay with -Dbench.seed=" + SEED + ")");
    }

    private static final int NUM = 50;
    private static final int OPS = 40;
    private static final long OWN = BenchRunner.insertBase(Workload.RECORDSSCAN);
    private static final long EARLIER = BenchRunner.insertBase(Workload.RECORDSLATEST);
    /** The scan phase's inserts: thread 0 runs operations 0-19, thread 1 20-39. */
    private static final int[] OWN_INSERTS = {3, 7, 12, 17, 25, 31};

    private static final int[] EARLIER_INSERTS = {1, 4, 9};

    private final KeySpace keys = new KeySpace(NUM, 16);
    private final RecordSource records = new RecordSource(SEED, 1.0);
    private RecordsScanCheck check;
    private long[] doneBefore;

    @BeforeEach
    void setUp() {
        check = checker(false);
    }

    /**
     * A checker whose phase has come as far as the model says: thread 0 has done 3, 7 and 12 and not begun 17; thread
     * 1 has begun 25 but not done it, and not begun 31. {@link #doneBefore} is read before 25 begins.
     */
    private RecordsScanCheck checker(boolean updated) {
        RecordsScanCheck c = newChecker(updated);
        for (int k : new int[] {3, 7, 12}) {
            c.starting(k);
            c.done(k);
        }
        doneBefore = new long[2];
        c.readDone(doneBefore);
        c.starting(25);
        return c;
    }

    private RecordsScanCheck newChecker(boolean updated) {
        return new RecordsScanCheck(
                keys,
                records,
                updated,
                new long[] {0, 20, OPS},
                List.of(
                        new RecordsScanCheck.InsertRange(OWN, OPS, OWN_INSERTS, false, true),
                        new RecordsScanCheck.InsertRange(EARLIER, OPS, EARLIER_INSERTS, true, false),
                        // a workload that did not run before: its records cannot exist
                        new RecordsScanCheck.InsertRange(
                                BenchRunner.insertBase(Workload.RECORDSREAD), OPS, new int[] {0, 2}, false, false)));
    }

    /** The ids in the database, in key order; {@code inFlight}: with the insert the scan may or may not see. */
    private TreeMap<Long, byte[]> model(boolean inFlight) {
        TreeMap<Long, byte[]> m = new TreeMap<>();
        for (long j = 0; j < NUM; j++) {
            m.put(keys.loadedId(j), records.value(keys.loadedId(j), 0));
        }
        for (int k : EARLIER_INSERTS) {
            m.put(EARLIER + k, records.value(EARLIER + k, 0));
        }
        for (int k : new int[] {3, 7, 12}) {
            m.put(OWN + k, records.value(OWN + k, 0));
        }
        if (inFlight) {
            m.put(OWN + 25, records.value(OWN + 25, 0));
        }
        return m;
    }

    private record Answer(List<byte[]> keys, List<byte[]> values) {}

    private Answer answer(TreeMap<Long, byte[]> m, long target, int length) {
        Answer a = new Answer(new ArrayList<>(), new ArrayList<>());
        for (var e : m.tailMap(target, true).entrySet()) {
            if (a.keys.size() == length) {
                break;
            }
            a.keys.add(keys.key(e.getKey()));
            a.values.add(e.getValue());
        }
        return a;
    }

    private boolean passes(Answer a, long target, int length) {
        return passes(check, a, target, length);
    }

    private boolean passes(RecordsScanCheck c, Answer a, long target, int length) {
        byte[][] ks = new byte[BenchRunner.MAX_SCAN + 1][];
        byte[][] vs = new byte[BenchRunner.MAX_SCAN + 1][];
        for (int i = 0; i < a.keys.size(); i++) {
            ks[i] = a.keys.get(i);
            vs[i] = a.values.get(i);
        }
        return c.check(ks, vs, a.keys.size(), target, length, doneBefore);
    }

    private static Answer copy(Answer a) {
        return new Answer(new ArrayList<>(a.keys), new ArrayList<>(a.values));
    }

    @Test
    void theModelsAnswersPassWithOrWithoutTheInsertInFlight() {
        for (boolean inFlight : new boolean[] {false, true}) {
            TreeMap<Long, byte[]> m = model(inFlight);
            for (long j = 0; j < NUM; j++) {
                for (int length = 1; length <= BenchRunner.MAX_SCAN; length++) {
                    long target = keys.loadedId(j);
                    assertThat(passes(answer(m, target, length), target, length))
                            .as("target %d, length %d, in flight %s", target, length, inFlight)
                            .isTrue();
                }
            }
        }
    }

    @Test
    void everyWrongAnswerFails() {
        SplittableRandom rnd = new SplittableRandom(SEED);
        TreeMap<Long, byte[]> m = model(rnd.nextBoolean());
        for (int round = 0; round < 2000; round++) {
            long target = keys.loadedId(rnd.nextLong(NUM));
            int length = 2 + rnd.nextInt(BenchRunner.MAX_SCAN - 1);
            Answer right = answer(m, target, length);
            int seen = right.keys.size();
            String as = "round " + round + ", target " + target + ", length " + length;
            assertThat(passes(right, target, length)).as(as).isTrue();
            int i = rnd.nextInt(seen);

            Answer a = copy(right); // a wrong key byte
            byte[] k = a.keys.get(i).clone();
            k[rnd.nextInt(k.length)] ^= (byte) (1 + rnd.nextInt(255));
            a.keys.set(i, k);
            assertThat(passes(a, target, length)).as(as + ": key byte").isFalse();

            a = copy(right); // a wrong value byte
            byte[] v = a.values.get(i).clone();
            v[rnd.nextInt(v.length)] ^= (byte) (1 + rnd.nextInt(255));
            a.values.set(i, v);
            assertThat(passes(a, target, length)).as(as + ": value byte").isFalse();

            a = copy(right); // a null value
            a.values.set(i, null);
            assertThat(passes(a, target, length)).as(as + ": null value").isFalse();

            if (seen >= 2) { // out of order
                a = copy(right);
                int s = rnd.nextInt(seen - 1);
                java.util.Collections.swap(a.keys, s, s + 1);
                java.util.Collections.swap(a.values, s, s + 1);
                assertThat(passes(a, target, length)).as(as + ": swapped").isFalse();

                a = copy(right); // a repeated entry
                a.keys.set(s + 1, a.keys.get(s));
                a.values.set(s + 1, a.values.get(s));
                assertThat(passes(a, target, length)).as(as + ": repeated").isFalse();
            }

            // a skipped loaded key: one dropped, the answer then filled up to its length from the model
            a = copy(right);
            int loadedAt = indexOfLoaded(a, rnd);
            a.keys.remove(loadedAt);
            a.values.remove(loadedAt);
            Long after = m.higherKey(KeySpace.idOf(right.keys.get(seen - 1)));
            if (after != null && seen == length) {
                a.keys.add(keys.key(after));
                a.values.add(m.get(after));
            }
            assertThat(passes(a, target, length))
                    .as(as + ": skipped loaded key")
                    .isFalse();

            if (KeySpace.idOf(right.keys.get(seen - 1)) != OWN + 25) {
                a = copy(right); // a short answer (one without the insert in flight at its end is a right one)
                a.keys.remove(seen - 1);
                a.values.remove(seen - 1);
                assertThat(passes(a, target, length)).as(as + ": short").isFalse();
            }

            if (seen == length) { // a long answer (one more than asked)
                a = copy(right);
                long last = KeySpace.idOf(right.keys.get(seen - 1));
                Long next = m.higherKey(last);
                long extra = next == null ? last + 1 : next;
                a.keys.add(keys.key(extra));
                a.values.add(records.value(extra, 0));
                assertThat(passes(a, target, length)).as(as + ": long").isFalse();
            }

            // a key that cannot exist, put where it sorts, with its own record as its value
            a = copy(right);
            long impossible = impossibleId(rnd, target);
            int at = 0;
            while (at < a.keys.size() && KeySpace.idOf(a.keys.get(at)) < impossible) {
                at++;
            }
            a.keys.add(at, keys.key(impossible));
            a.values.add(at, records.value(impossible, 0));
            if (a.keys.size() > length) {
                a.keys.remove(length);
                a.values.remove(length);
            }
            if (at < length) {
                assertThat(passes(a, target, length))
                        .as(as + ": impossible id " + impossible)
                        .isFalse();
            }
        }
    }

    private int indexOfLoaded(Answer a, SplittableRandom rnd) {
        int i = rnd.nextInt(a.keys.size());
        while (!keys.isLoaded(KeySpace.idOf(a.keys.get(i)))) {
            i--;
        }
        return i;
    }

    /** An id no record of the model's database can have at or after {@code target}. */
    private long impossibleId(SplittableRandom rnd, long target) {
        return switch (rnd.nextInt(6)) {
            case 0 -> target + 1; // an absent id between two loaded ones (or after the last)
            case 1 -> 2L * NUM + rnd.nextInt(1000); // beyond the loaded ids, before every insert range
            case 2 -> OWN + 17; // an insert thread 0 had not begun
            case 3 -> OWN + 31; // an insert thread 1 had not begun
            case 4 -> OWN + 5; // an operation of the phase that is not an insert
            default -> BenchRunner.insertBase(Workload.RECORDSREAD); // a workload that did not run before
        };
    }

    @Test
    void insertsFinishedBeforeTheScanMustBeSeen() {
        long target = keys.loadedId(NUM - 1);
        TreeMap<Long, byte[]> m = model(false);
        m.remove(OWN + 7); // finished before the scan began
        assertThat(passes(answer(m, target, BenchRunner.MAX_SCAN), target, BenchRunner.MAX_SCAN))
                .isFalse();
        m = model(false);
        m.remove(EARLIER + 9); // written by a workload that ran before
        assertThat(passes(answer(m, target, BenchRunner.MAX_SCAN), target, BenchRunner.MAX_SCAN))
                .isFalse();
    }

    @Test
    void anUpdatedLoadedRecordPassesOnlyAfterAWorkloadThatUpdates() {
        long target = keys.loadedId(10);
        TreeMap<Long, byte[]> m = model(false);
        m.put(keys.loadedId(12), records.value(keys.loadedId(12), BenchRunner.UPDATE_VERSION));
        Answer a = answer(m, target, 5);
        assertThat(passes(a, target, 5)).isFalse();
        RecordsScanCheck updated = checker(true);
        assertThat(passes(updated, a, target, 5)).isTrue();
        m.put(keys.loadedId(12), records.value(keys.loadedId(12), 1)); // a version no workload writes
        assertThat(passes(updated, answer(m, target, 5), target, 5)).isFalse();
        // an inserted record holds version 0 only
        m = model(false);
        m.put(OWN + 3, records.value(OWN + 3, BenchRunner.UPDATE_VERSION));
        long last = keys.loadedId(NUM - 1); // then EARLIER + 1, + 4, + 9, OWN + 3
        assertThat(passes(updated, answer(m, last, 5), last, 5)).isFalse();
        assertThat(passes(updated, answer(model(false), last, 5), last, 5)).isTrue();
    }

    @Test
    void ranBeforeFollowsTheRecordsSession() {
        assertThat(BenchRunner.ranBefore(Workload.RECORDS, Workload.RECORDSSCAN))
                .containsExactlyInAnyOrderElementsOf(Workload.RECORDS.subList(0, Workload.RECORDS.size() - 1));
        assertThat(BenchRunner.ranBefore(List.of(Workload.RECORDSSCAN), Workload.RECORDSSCAN))
                .isEmpty();
        assertThat(BenchRunner.ranBefore(
                        List.of(Workload.RECORDSLATEST, Workload.READRANDOM, Workload.RECORDSSCAN),
                        Workload.RECORDSSCAN))
                .isEmpty();
    }
}
