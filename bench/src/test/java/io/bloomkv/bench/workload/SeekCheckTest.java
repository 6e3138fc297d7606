package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link SeekCheck} against an in-memory model of the loaded database (a {@code TreeMap} in unsigned key order, as
 * LevelDB's ModelDB): the model's answer to every seek passes, and every way of getting it wrong (a wrong key byte, a
 * skipped key, an extra key, a wrong value, a short or long answer, entries out of order, a repeated entry) fails.
 * Replay a failure with -Dbench.seed=N.
 */
class SeekCheckTest {
    private static final long SEED = Long.getLong("bench.seed", System.nanoTime());

    static {
        System.out.println("SeekCheckTest seed = " + SEED + " (replay with -Dbench.seed=" + SEED + ")");
    }

    /** The ways an answer can be wrong; each mutation below makes one. */
    private enum Wrong {
        KEY_BYTE,
        SKIPPED_KEY,
        EXTRA_KEY,
        VALUE_BYTE,
        VALUE_LENGTH,
        NULL_VALUE,
        SHORT,
        LONG,
        SWAPPED,
        REPEATED
    }

    /** An answer: entries as a scan hands them out. */
    private record Answer(List<byte[]> keys, List<byte[]> values) {
        Answer copy() {
            return new Answer(new ArrayList<>(keys), new ArrayList<>(values));
        }
    }

    /** Every loaded key of {@code idOfLoadIndex(0..num-1)} with its load value (version 0), in unsigned key order. */
    private static TreeMap<byte[], byte[]> model(
            KeySpace keys, ValueSource values, java.util.function.LongUnaryOperator idOfLoadIndex) {
        TreeMap<byte[], byte[]> m = new TreeMap<>(Arrays::compareUnsigned);
        for (long j = 0; j < keys.num(); j++) {
            long id = idOfLoadIndex.applyAsLong(j);
            m.put(keys.key(id), values.value(id, 0));
        }
        return m;
    }

    /**
     * The model's answer to a seek to {@code target} for up to {@code count} entries that share its first
     * {@code prefix} bytes.
     */
    private static Answer modelAnswer(TreeMap<byte[], byte[]> model, byte[] target, int count, int prefix) {
        Answer a = new Answer(new ArrayList<>(), new ArrayList<>());
        for (Map.Entry<byte[], byte[]> e : model.tailMap(target, true).entrySet()) {
            if (a.keys.size() == count || !Arrays.equals(e.getKey(), 0, prefix, target, 0, prefix)) {
                break;
            }
            a.keys.add(e.getKey().clone());
            a.values.add(e.getValue().clone());
        }
        return a;
    }

    /**
     * {@code right} made wrong in way {@code how}, as an engine of at most {@code count} entries per scan could answer;
     * null when that way cannot apply to this answer (e.g. two entries to swap in a one-entry answer).
     */
    private static Answer mutate(
            Answer right, Wrong how, int count, SplittableRandom rnd, KeySpace keys, TreeMap<byte[], byte[]> model) {
        Answer a = right.copy();
        int n = a.keys.size();
        int i = n == 0 ? 0 : rnd.nextInt(n);
        switch (how) {
            case KEY_BYTE -> {
                if (n == 0) {
                    return null;
                }
                byte[] k = a.keys.get(i).clone();
                k[rnd.nextInt(k.length)] ^= (byte) (1 << rnd.nextInt(8));
                a.keys.set(i, k);
            }
            case SKIPPED_KEY -> {
                if (n == 0) {
                    return null;
                }
                // the key after the answer's last takes the freed slot, so the count alone would look right
                Map.Entry<byte[], byte[]> next = model.higherEntry(a.keys.get(n - 1));
                a.keys.remove(i);
                a.values.remove(i);
                if (next != null) {
                    a.keys.add(next.getKey().clone());
                    a.values.add(next.getValue().clone());
                }
            }
            case EXTRA_KEY -> {
                if (n == 0 || count == 1) {
                    return null;
                }
                i = rnd.nextInt(Math.min(n, count - 1)); // an entry the extra key can follow within the count
                // a key the load never wrote, right after entry i (it keeps entry i's prefix: one more byte)
                byte[] extra = Arrays.copyOf(a.keys.get(i), keys.keySize() + 1);
                a.keys.add(i + 1, extra);
                a.values.add(i + 1, a.values.get(i).clone());
                if (a.keys.size() > count) {
                    a.keys.remove(count);
                    a.values.remove(count);
                }
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
            case SHORT -> {
                if (n == 0) {
                    return null;
                }
                a.keys.remove(n - 1);
                a.values.remove(n - 1);
            }
            case LONG -> {
                if (n == count) {
                    return null;
                }
                // one entry more than the seek should see: the next stored key past the end, or a key never written
                Map.Entry<byte[], byte[]> next = n == 0 ? null : model.higherEntry(a.keys.get(n - 1));
                a.keys.add(next != null ? next.getKey().clone() : keys.key(keys.num() * 4 + 1));
                a.values.add(next != null ? next.getValue().clone() : new byte[1]);
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
                if (n < 2) {
                    return null;
                }
                int j = rnd.nextInt(n - 1);
                a.keys.set(j + 1, a.keys.get(j).clone());
                a.values.set(j + 1, a.values.get(j).clone());
            }
        }
        return a;
    }

    /**
     * The answer in buffers as a scan leaves them: {@code count} slots, the ones past the answer holding stale
     * entries.
     */
    private static byte[][][] buffers(Answer a, int count, SplittableRandom rnd, KeySpace keys, ValueSource values) {
        byte[][] ks = new byte[Math.max(count, a.keys.size())][];
        byte[][] vs = new byte[ks.length][];
        for (int i = 0; i < ks.length; i++) {
            long stale = rnd.nextLong(2 * keys.num());
            ks[i] = i < a.keys.size() ? a.keys.get(i) : keys.key(stale);
            vs[i] = i < a.keys.size() ? a.values.get(i) : values.value(stale, 0);
        }
        return new byte[][][] {ks, vs};
    }

    @Test
    void seekRandomPassesTheModelsAnswersAndFailsEveryWrongOne() {
        SplittableRandom rnd = new SplittableRandom(SEED);
        for (int keySize : new int[] {8, 16, 23}) {
            KeySpace keys = new KeySpace(1000, keySize);
            ValueSource values = new ValueSource(1 + rnd.nextInt(200), SEED, rnd.nextBoolean() ? 1.0 : 0.5);
            SeekCheck check = new SeekCheck(keys, null, values);
            TreeMap<byte[], byte[]> model = model(keys, values, keys::loadedId);
            for (int length : new int[] {1, 10, 100}) {
                for (int s = 0; s < 300; s++) {
                    // a third of the seeks near the end of the key space, where an answer holds fewer entries
                    long j = s % 3 == 0
                            ? keys.num() - 1 - rnd.nextLong(Math.min(keys.num(), 2L * length))
                            : rnd.nextLong(keys.num());
                    long id = keys.loadedId(j);
                    Answer right = modelAnswer(model, keys.key(id), length, 0);
                    assertThat(right.keys).hasSize((int) Math.min(length, keys.num() - j));
                    byte[][][] b = buffers(right, length, rnd, keys, values);
                    assertThat(check.seekRandom(b[0], b[1], right.keys.size(), id, length))
                            .as(
                                    "seed %d, keySize %d, length %d: the model's answer from load index %d",
                                    SEED, keySize, length, j)
                            .isTrue();
                    for (Wrong how : Wrong.values()) {
                        Answer wrong = mutate(right, how, length, rnd, keys, model);
                        if (wrong == null) {
                            continue;
                        }
                        byte[][][] w = buffers(wrong, length, rnd, keys, values);
                        assertThat(check.seekRandom(w[0], w[1], wrong.keys.size(), id, length))
                                .as("seed %d, keySize %d, length %d, load index %d: %s", SEED, keySize, length, j, how)
                                .isFalse();
                    }
                }
            }
        }
    }

    @Test
    void prefixSeeksPassTheModelsAnswersAndFailEveryWrongOne() {
        SplittableRandom rnd = new SplittableRandom(SEED);
        int count = PrefixLayout.KEYS_PER_PREFIX;
        // a whole number of prefixes, and one whose last prefix holds fewer keys
        for (long num : new long[] {32 * 16, 32 * 16 + 5}) {
            KeySpace keys = new KeySpace(num, 16);
            PrefixLayout prefixes = new PrefixLayout(num);
            ValueSource values = new ValueSource(100, SEED);
            SeekCheck check = new SeekCheck(keys, prefixes, values);
            TreeMap<byte[], byte[]> model = model(keys, values, prefixes::loadedId);
            for (long p = 0; p < prefixes.presentPrefixes(); p++) {
                Answer right =
                        modelAnswer(model, keys.key(prefixes.presentSeekId(p)), count, PrefixLayout.PREFIX_LENGTH);
                assertThat(right.keys).as("prefix %d", p).hasSize(prefixes.keysUnder(p));
                byte[][][] b = buffers(right, count, rnd, keys, values);
                assertThat(check.prefixHit(b[0], b[1], right.keys.size(), p))
                        .as("seed %d, num %d: the model's answer for present prefix %d", SEED, num, p)
                        .isTrue();
                for (Wrong how : Wrong.values()) {
                    Answer wrong = mutate(right, how, count, rnd, keys, model);
                    if (wrong == null) {
                        continue;
                    }
                    byte[][][] w = buffers(wrong, count, rnd, keys, values);
                    assertThat(check.prefixHit(w[0], w[1], wrong.keys.size(), p))
                            .as("seed %d, num %d, present prefix %d: %s", SEED, num, p, how)
                            .isFalse();
                }
            }
            for (long p = 0; p < prefixes.absentPrefixes(); p++) {
                Answer right =
                        modelAnswer(model, keys.key(prefixes.absentSeekId(p)), count, PrefixLayout.PREFIX_LENGTH);
                assertThat(right.keys).as("absent prefix %d", p).isEmpty();
                assertThat(check.prefixMiss(right.keys.size())).isTrue();
            }
            assertThat(check.prefixMiss(1)).as("an absent prefix holds nothing").isFalse();
        }
    }

    @Test
    void aKeyMatchesOnlyItsOwnBytes() {
        SplittableRandom rnd = new SplittableRandom(SEED);
        for (int keySize : new int[] {8, 9, 15, 16, 23, 24, 31, 40}) {
            KeySpace keys = new KeySpace(1000, keySize);
            for (int t = 0; t < 2000; t++) {
                long id = t < 4 ? new long[] {0, 1, Long.MAX_VALUE, -1}[t] : rnd.nextLong();
                byte[] k = keys.key(id);
                assertThat(keys.matches(k, id))
                        .as("seed %d, keySize %d, id %d", SEED, keySize, id)
                        .isTrue();
                assertThat(keys.matches(k, id + 1))
                        .as("seed %d, keySize %d, id %d", SEED, keySize, id)
                        .isFalse();
                for (int i = 0; i < keySize; i++) {
                    byte[] wrong = k.clone();
                    wrong[i] ^= (byte) (1 << rnd.nextInt(8));
                    assertThat(keys.matches(wrong, id))
                            .as("seed %d, keySize %d, id %d, byte %d changed", SEED, keySize, id, i)
                            .isFalse();
                }
                assertThat(keys.matches(Arrays.copyOf(k, keySize - 1), id)).isFalse();
                assertThat(keys.matches(Arrays.copyOf(k, keySize + 1), id)).isFalse();
            }
            assertThat(keys.matches(null, 0)).isFalse();
        }
    }

    /** The check assumes a seek phase reads exactly the load: no session puts a seek workload after a writer. */
    @Test
    void seekPhasesShareTheirDatabaseWithNoWriter() {
        Workload[] all = Workload.values();
        int n = all.length;
        for (int code = 0; code < n * n * n * n; code++) {
            List<Workload> list =
                    List.of(all[code % n], all[code / n % n], all[code / n / n % n], all[code / n / n / n]);
            for (List<Workload> session : BenchRunner.sessions(list)) {
                if (session.contains(Workload.SEEKPREFIX)) {
                    assertThat(session).as("%s", list).containsExactly(Workload.SEEKPREFIX);
                }
                if (session.contains(Workload.SEEKRANDOM)) {
                    for (int i = 0; i < session.size(); i++) {
                        Workload w = session.get(i);
                        assertThat(w.readOnly() || i == 0 && w == Workload.FILLRANDOM)
                                .as("%s: %s shares seekrandom's database", list, w)
                                .isTrue();
                    }
                }
            }
        }
    }
}
