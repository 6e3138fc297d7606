package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The memtable's skip list against a TreeSet model, and its readers racing its writer. Replay with -Dbloomkv.seed=N. */
class MemSkipListTest {

    private static byte[] key(Random rnd) {
        byte[] k = new byte[rnd.nextInt(rnd.nextBoolean() ? 6 : 24)];
        for (int i = 0; i < k.length; i++) {
            k[i] = (byte) rnd.nextInt(3); // few distinct bytes: many shared prefixes and equal user keys
        }
        return k;
    }

    /**
     * Values of every length around the inline limit and the bulk-copy threshold, and long ones, written from an offset
     * in a larger array and read back whole by each reader (a copy, a lent array sized for them, a lent array of
     * another length), as key nodes and as versions: the value words' byte order and their last, partial word.
     */
    @Test
    void valuesOfEveryLengthComeBackByteForByte() {
        long seed = TestSeeds.seed("MemSkipListTest.values");
        Random rnd = new Random(seed);
        MemSkipList list = new MemSkipList(true);
        List<Integer> lengths = new ArrayList<>();
        for (int n = 0; n <= MemSkipList.INLINE_VALUE_MAX + 8 * MemSkipList.SHIFT_WORDS + 17; n++) {
            lengths.add(n);
        }
        lengths.addAll(List.of(1000, 1023, 4096, 4097));
        long seq = 1;
        for (int n : lengths) {
            byte[] userKey = ("k" + n).getBytes(StandardCharsets.UTF_8);
            byte[] otherKey = ("o" + n).getBytes(StandardCharsets.UTF_8);
            for (int version = 0; version < 2; version++) {
                byte[] source = new byte[n + 13];
                rnd.nextBytes(source);
                int off = rnd.nextInt(14);
                byte[] want = Arrays.copyOfRange(source, off, off + n);
                list.insert(userKey, InternalKey.packTrailer(seq++, ValueType.PUT), source, off, n);
                long v = list.newest(list.findKey(userKey, Hashing.hash64(userKey)));
                String what = "seed " + seed + ", length " + n + ", version " + version;
                assertThat(list.value(v)).as(what).isEqualTo(want);
                MemSkipList.LentValue lent = new MemSkipList.LentValue();
                list.sizeLent(v, lent);
                assertThat(list.value(v, lent)).as("lent, " + what).isEqualTo(want);
                assertThat(list.value(v, lent)).as("lent again, " + what).isEqualTo(want);
                list.insert(otherKey, InternalKey.packTrailer(seq++, ValueType.PUT), new byte[n + 5], 0, n + 5);
                MemSkipList.LentValue other = new MemSkipList.LentValue();
                list.sizeLent(list.newest(list.findKey(otherKey, Hashing.hash64(otherKey))), other);
                assertThat(list.value(v, other))
                        .as("lent of another length, " + what)
                        .isEqualTo(want);
            }
        }
    }

    /** Searches over the key nodes and walks of their chains against a TreeSet of internal keys, with and without the index. */
    @Test
    void searchesMatchASortedModel() {
        for (boolean indexed : new boolean[] {false, true}) {
            long seed = TestSeeds.seed("MemSkipListTest.model");
            Random rnd = new Random(seed);
            MemSkipList list = new MemSkipList(indexed);
            TreeSet<MemKey> model = new TreeSet<>(MemKey.ORDER);
            assertThat(list.isEmpty()).isTrue();
            assertThat(list.first()).isZero();
            assertThat(list.findLast()).isZero();
            for (long seq = 1; seq <= 20_000; seq++) {
                byte[] k = key(rnd);
                byte[] kept = k.clone();
                long trailer = InternalKey.packTrailer(seq, rnd.nextInt(5) == 0 ? ValueType.DELETE : ValueType.PUT);
                list.insert(k, trailer, new byte[] {(byte) seq}, 0, 1);
                if (k.length > 0) {
                    k[0] ^= 1; // the list copied the key: changing the caller's array changes nothing
                }
                model.add(new MemKey(kept, trailer));
                if (seq % 500 == 0) {
                    String what = "seed " + seed + ", indexed " + indexed + ", after " + seq + " inserts";
                    for (int q = 0; q < 300; q++) {
                        MemKey probe = new MemKey(key(rnd), 0);
                        MemKey ceiling = model.ceiling(new MemKey(probe.userKey, -1L)); // first entry of key >= probe
                        MemKey lower = model.lower(new MemKey(probe.userKey, -1L)); // last entry of key < probe
                        MemKey floor = model.floor(new MemKey(probe.userKey, 0)); // last entry of key <= probe
                        assertKeyNode(list, what + " ceiling", list.findGreaterOrEqual(probe, null), ceiling);
                        assertKeyNode(list, what + " lower", list.findLessThan(probe), lower);
                        assertKeyNode(list, what + " floor", list.findLessOrEqual(probe), floor);
                        long hash = io.bloomkv.bloom.Hashing.hash64(probe.userKey);
                        long found = list.findKey(probe.userKey, hash);
                        if (ceiling != null && Arrays.equals(ceiling.userKey, probe.userKey)) {
                            assertThat(found).as(what + " findKey").isNotZero();
                            assertThat(list.userKey(found)).as(what).isEqualTo(probe.userKey);
                        } else {
                            assertThat(found)
                                    .as(what + " findKey of an absent key")
                                    .isZero();
                        }
                        long c = list.findGreaterOrEqual(probe, null);
                        if (c != 0) { // the node before a node, by stored keys, is the one before its key
                            assertThat(list.findLessThan(c))
                                    .as(what + " node before node")
                                    .isEqualTo(list.findLessThan(new MemKey(list.userKey(c), 0)));
                        }
                    }
                    assertKeyNode(list, what + " last", list.findLast(), model.last());
                }
            }
            List<MemKey> walked = new ArrayList<>();
            for (long x = list.first(); x != 0; x = list.next(x)) {
                for (long v = list.newest(x); v != 0; v = list.older(x, v)) {
                    walked.add(list.key(x, v));
                    assertThat(list.compare(x, v, walked.get(walked.size() - 1)))
                            .isZero();
                }
            }
            assertThat(walked).hasSize(model.size());
            int i = 0;
            for (MemKey m : model) {
                assertThat(MemKey.compare(walked.get(i++), m))
                        .as("seed %d, entry %d in order", seed, i)
                        .isZero();
            }
        }
    }

    /**
     * Inserts in runs, as a load in key order and its mixes write them (ascending runs that resume after a jump back,
     * descending runs, neighbours swapped in pairs, updates of held keys, keys between two neighbours), so that most
     * inserts start from the splice, at its node or some levels up, and the others search from the head: afterwards every level is in strict key order and a sub-list of the level below, and the
     * searches match the model.
     */
    @Test
    void insertsFromTheSpliceLinkEveryLevelInOrder() {
        for (boolean indexed : new boolean[] {false, true}) {
            long seed = TestSeeds.seed("MemSkipListTest.splice");
            Random rnd = new Random(seed);
            MemSkipList list = new MemSkipList(indexed);
            TreeSet<MemKey> model = new TreeSet<>(MemKey.ORDER);
            long seq = 0;
            while (seq < 20_000) {
                int start = rnd.nextInt(1 << 20);
                int step = rnd.nextInt(4) == 0 ? -1 : 1 + rnd.nextInt(3);
                int run = 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 400);
                boolean swapped = rnd.nextBoolean(); // neighbours swapped in pairs: two writers' keys interleaved
                for (int r = 0; r < run; r++) {
                    int id = Math.max(0, start + (swapped ? r ^ 1 : r) * step);
                    byte[] k = String.format("k%08d", id).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                    if (rnd.nextInt(3) == 0) {
                        k = Arrays.copyOf(k, k.length + 1 + rnd.nextInt(20)); // longer keys: the words past 16 decide
                    }
                    long trailer = InternalKey.packTrailer(++seq, ValueType.PUT);
                    list.insert(k, trailer, new byte[] {(byte) seq}, 0, 1);
                    model.add(new MemKey(k, trailer));
                }
            }
            String what = "seed " + seed + ", indexed " + indexed;
            long below = 0; // key nodes on the level below, walked
            for (int level = 0; level < list.height(); level++) {
                long nodes = 0;
                byte[] last = null;
                for (long x = list.first(level); x != 0; x = list.next(x, level)) {
                    byte[] k = list.userKey(x);
                    if (last != null) {
                        assertThat(Arrays.compareUnsigned(last, k))
                                .as("%s: level %d out of order", what, level)
                                .isNegative();
                    }
                    if (level
                            > 0) { // the node is on the level below: searching that level from its predecessor finds it
                        assertThat(list.findGreaterOrEqual(new MemKey(k, 0), null))
                                .as("%s: level %d node not found", what, level)
                                .isEqualTo(x);
                    }
                    last = k;
                    nodes++;
                }
                if (level > 0) {
                    assertThat(nodes)
                            .as("%s: level %d larger than the one below", what, level)
                            .isLessThanOrEqualTo(below);
                }
                below = nodes;
            }
            for (int q = 0; q < 3_000; q++) {
                byte[] probeKey = String.format("k%08d", rnd.nextInt(1 << 20))
                        .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                MemKey probe = new MemKey(probeKey, 0);
                assertKeyNode(
                        list,
                        what + " ceiling",
                        list.findGreaterOrEqual(probe, null),
                        model.ceiling(new MemKey(probeKey, -1L)));
                assertKeyNode(list, what + " lower", list.findLessThan(probe), model.lower(new MemKey(probeKey, -1L)));
            }
            List<MemKey> walked = new ArrayList<>();
            for (long x = list.first(); x != 0; x = list.next(x)) {
                for (long v = list.newest(x); v != 0; v = list.older(x, v)) {
                    walked.add(list.key(x, v));
                }
            }
            assertThat(walked).as(what).hasSize(model.size());
            int i = 0;
            for (MemKey m : model) {
                assertThat(MemKey.compare(walked.get(i++), m))
                        .as("%s, entry %d in order", what, i)
                        .isZero();
            }
        }
    }

    /**
     * A fresh list's splice is the head, which an insert compares as a key of length 0 with zero words: it must come
     * before every key (the empty one aside, which searches from the head), keys of zero bytes of any length included,
     * whatever key comes first. Each shuffle fills fresh lists, with and without the index, and checks every level's
     * order and that each key is found.
     */
    @Test
    void aFreshListsFirstInsertsCompareTheHeadBeforeEveryKey() {
        long seed = TestSeeds.seed("MemSkipListTest.freshHead");
        Random rnd = new Random(seed);
        List<byte[]> keys = new ArrayList<>(List.of(
                new byte[0],
                new byte[] {0},
                new byte[] {0, 0, 0},
                new byte[16],
                new byte[17],
                new byte[40],
                new byte[] {0, 1},
                new byte[] {1},
                new byte[] {(byte) 0xff},
                "k00000001".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        for (int trial = 0; trial < 300; trial++) {
            java.util.Collections.shuffle(keys, rnd);
            MemSkipList list = new MemSkipList(trial % 2 == 0);
            long seq = 0;
            for (byte[] k : keys) {
                list.insert(k, InternalKey.packTrailer(++seq, ValueType.PUT), new byte[] {(byte) seq}, 0, 1);
            }
            String what = "seed " + seed + ", trial " + trial;
            for (int level = 0; level < list.height(); level++) {
                byte[] last = null;
                int nodes = 0;
                for (long x = list.first(level); x != 0; x = list.next(x, level)) {
                    byte[] k = list.userKey(x);
                    if (last != null) {
                        assertThat(Arrays.compareUnsigned(last, k))
                                .as("%s: level %d out of order", what, level)
                                .isNegative();
                    }
                    last = k;
                    nodes++;
                }
                if (level == 0) {
                    assertThat(nodes).as(what).isEqualTo(keys.size());
                }
            }
            for (byte[] k : keys) {
                long x = list.findGreaterOrEqual(new MemKey(k, 0), null);
                assertThat(x).as(what).isNotZero();
                assertThat(list.userKey(x)).as(what).isEqualTo(k);
            }
        }
    }

    /**
     * The splice starts at the head, which an insert compares as a key (empty, zero words): the empty key and keys of
     * zero bytes, which compare with it by length only, land in order whether they come first, after the head's splice
     * or after another key's, and the list holds one node per user key.
     */
    @Test
    void keysAtTheHeadsSpliceInsertInOrder() {
        byte[][] keys = {{}, {0}, {}, {0, 0}, {1}, {}, {0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {}};
        for (boolean indexed : new boolean[] {false, true}) {
            for (int first = 0; first < keys.length; first++) {
                MemSkipList list = new MemSkipList(indexed);
                TreeSet<MemKey> model = new TreeSet<>(MemKey.ORDER);
                long seq = 0;
                for (int i = 0; i < keys.length; i++) { // every rotation: each key once first, in an empty list
                    byte[] k = keys[(first + i) % keys.length];
                    long trailer = InternalKey.packTrailer(++seq, ValueType.PUT);
                    list.insert(k, trailer, new byte[] {(byte) seq}, 0, 1);
                    model.add(new MemKey(k, trailer));
                }
                List<MemKey> walked = new ArrayList<>();
                for (long x = list.first(); x != 0; x = list.next(x)) {
                    for (long v = list.newest(x); v != 0; v = list.older(x, v)) {
                        walked.add(list.key(x, v));
                    }
                }
                assertThat(walked).hasSize(model.size());
                int i = 0;
                for (MemKey m : model) {
                    assertThat(MemKey.compare(walked.get(i++), m))
                            .as("indexed %s, rotation %d, entry %d", indexed, first, i)
                            .isZero();
                }
                long nodes = 0;
                for (long x = list.first(); x != 0; x = list.next(x)) {
                    nodes++;
                }
                assertThat(nodes).as("one node per user key").isEqualTo(5);
            }
        }
    }

    /** {@code got} is the key node of {@code want}'s user key (both absent, or the same key). */
    private static void assertKeyNode(MemSkipList list, String what, long got, MemKey want) {
        if (want == null) {
            assertThat(got).as(what).isZero();
        } else {
            assertThat(got).as(what).isNotZero();
            assertThat(list.compareKey(got, want)).as(what).isZero();
            assertThat(list.userKey(got)).as(what).isEqualTo(want.userKey);
        }
    }

    @Test
    void aVersionNotNewerThanTheKeysNewestIsRefused() {
        for (boolean indexed : new boolean[] {false, true}) {
            MemSkipList list = new MemSkipList(indexed);
            list.insert(new byte[] {1}, InternalKey.packTrailer(5, ValueType.PUT), new byte[] {9}, 0, 1);
            assertThatThrownBy(() ->
                            list.insert(new byte[] {1}, InternalKey.packTrailer(5, ValueType.PUT), new byte[0], 0, 0))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("sequence 5");
            list.insert(new byte[] {1}, InternalKey.packTrailer(7, ValueType.DELETE), new byte[0], 0, 0);
            assertThatThrownBy(() ->
                            list.insert(new byte[] {1}, InternalKey.packTrailer(6, ValueType.PUT), new byte[0], 0, 0))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("sequence 7");
            list.insert(new byte[] {2}, InternalKey.packTrailer(6, ValueType.PUT), new byte[0], 0, 0); // another key
        }
    }

    /**
     * One writer inserts while readers walk and search: every walk is in order and sees every entry the writer had
     * finished before the walk began; a value read is the one inserted with the key.
     */
    @Test
    void readersRacingTheWriterSeeOrderedCompleteViews() throws Exception {
        long seed = TestSeeds.seed("MemSkipListTest.race");
        MemSkipList list = new MemSkipList(true);
        AtomicLong inserted = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            Random rnd = new Random(seed);
            byte[][] keys = new byte[5000][8]; // new keys and updates of held ones (chains of ~12 versions)
            for (byte[] k : keys) {
                rnd.nextBytes(k);
            }
            for (long seq = 1; seq <= 60_000; seq++) {
                byte[] k = keys[rnd.nextInt(keys.length)];
                byte[] v = java.nio.ByteBuffer.allocate(8).putLong(seq).array();
                list.insert(k, InternalKey.packTrailer(seq, ValueType.PUT), v, 0, 8);
                inserted.set(seq);
            }
            done.set(true);
        });
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            readers.add(new Thread(() -> {
                try {
                    while (!done.get()) {
                        long before = inserted.get();
                        long count = 0;
                        MemKey last = null;
                        for (long x = list.first(); x != 0; x = list.next(x)) {
                            for (long v = list.newest(x); v != 0; v = list.older(x, v)) {
                                if (last != null && list.compare(x, v, last) <= 0) {
                                    throw new AssertionError("seed " + seed + ": walk out of order");
                                }
                                long seq = list.trailer(v) >>> 8;
                                if (java.nio.ByteBuffer.wrap(list.value(v)).getLong() != seq) {
                                    throw new AssertionError(
                                            "seed " + seed + ": value of sequence " + seq + " is wrong");
                                }
                                last = list.key(x, v);
                                count++;
                            }
                        }
                        if (count < before) {
                            throw new AssertionError(
                                    "seed " + seed + ": walk saw " + count + " entries, " + before + " were in");
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        readers.forEach(Thread::start);
        writer.start();
        writer.join();
        for (Thread t : readers) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertThat(inserted.get()).isEqualTo(60_000);
    }
}
