package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The memtable's point index: colliding hashes, growth, and readers racing a growing table. */
class MemIndexTest {

    private static byte[] key(long id) {
        return ByteBuffer.allocate(8).putLong(id).array();
    }

    /**
     * Keys of one hash, keys of one tag (hence one first slot) and keys of their own hash: each lookup finds its own
     * key's node, an update reaches it, and an absent key of a colliding hash is not found.
     */
    @Test
    void collidingHashesFindTheirOwnKeys() {
        MemSkipList list = new MemSkipList(true);
        int n = 3000;
        for (int i = 0; i < n; i++) {
            list.insert(key(i), hash(i), InternalKey.packTrailer(i + 1, ValueType.PUT), key(i), 0, 8);
        }
        for (int i = 0; i < n; i += 3) { // an update of a third of them, through the index
            list.insert(key(i), hash(i), InternalKey.packTrailer(n + 1 + i, ValueType.PUT), key(-i), 0, 8);
        }
        MemIndex index = indexOf(list);
        assertThat(index.count()).isEqualTo(n);
        assertThat((double) index.count() / index.capacity()).isLessThanOrEqualTo(MemIndex.MAX_LOAD);
        for (int i = 0; i < n; i++) {
            long x = list.findKey(key(i), hash(i));
            assertThat(x).as("key %d", i).isNotZero();
            assertThat(list.userKey(x)).isEqualTo(key(i));
            long v = list.newest(x);
            assertThat(list.value(v)).isEqualTo(i % 3 == 0 ? key(-i) : key(i));
            assertThat(list.trailer(v) >>> 8).isEqualTo(i % 3 == 0 ? n + 1 + i : i + 1);
            assertThat(list.older(x, v)).isEqualTo(i % 3 == 0 ? x : 0);
        }
        for (int i = n; i < n + 300; i++) {
            assertThat(list.findKey(key(i), hash(i))).as("absent key %d", i).isZero();
        }
        long walked = 0;
        for (long x = list.first(); x != 0; x = list.next(x)) {
            walked++;
        }
        assertThat(walked).isEqualTo(n);
    }

    /**
     * Keys of one hash that agree in every stored word (zero padding) and differ in length only, or in one word past
     * the first two: the index compares length and every word, so each finds its own node and no other.
     */
    @Test
    void keysOfOneHashDifferingInLengthOrALateWordAreNotConfused() {
        MemSkipList list = new MemSkipList(true);
        long hash = 0x5EED_0000_0000_0042L;
        byte[][] keys = {
            {1, 2}, {1, 2, 0}, new byte[16], new byte[17], new byte[24], new byte[25], late(24, 23), late(25, 24)
        };
        for (int i = 0; i < keys.length; i++) {
            assertThat(list.findKey(keys[i], hash))
                    .as("key %d before its insert", i)
                    .isZero();
            list.insert(keys[i], hash, InternalKey.packTrailer(i + 1, ValueType.PUT), new byte[] {(byte) i}, 0, 1);
        }
        for (int i = 0; i < keys.length; i++) {
            long x = list.findKey(keys[i], hash);
            assertThat(x).as("key %d", i).isNotZero();
            assertThat(list.userKey(x)).isEqualTo(keys[i]);
            assertThat(list.value(list.newest(x))).containsExactly((byte) i);
        }
        assertThat(list.findKey(new byte[] {1}, hash)).isZero();
        assertThat(list.findKey(late(24, 22), hash)).isZero();
    }

    /** {@code length} zero bytes with byte {@code at} set to 7. */
    private static byte[] late(int length, int at) {
        byte[] k = new byte[length];
        k[at] = 7;
        return k;
    }

    /** A third of the keys share one hash, a third one tag (different low bits), the rest have their own. */
    private static long hash(long i) {
        long own = Hashing.hash64(key(i));
        return switch ((int) (i % 3)) {
            case 0 -> 0x5EED_0000_0000_0042L;
            case 1 -> (0x5EEDL << 48) | (own & ((1L << 35) - 1));
            default -> own;
        };
    }

    private static MemIndex indexOf(MemSkipList list) {
        try {
            java.lang.reflect.Field f = MemSkipList.class.getDeclaredField("index");
            f.setAccessible(true);
            return (MemIndex) f.get(list);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /** The index's bytes are what the insert reports beyond the records', and it doubles as keys arrive. */
    @Test
    void growthIsChargedToTheInsertThatCausedIt() {
        MemSkipList list = new MemSkipList(true);
        long indexBefore = list.indexBytes();
        assertThat(indexBefore).isEqualTo(16 + 8L * MemIndex.INITIAL_SLOTS);
        long reported = 0;
        long start = list.bytesTaken();
        for (int i = 0; i < 10_000; i++) {
            reported += list.insert(key(i), InternalKey.packTrailer(i + 1, ValueType.PUT), new byte[] {1}, 0, 1);
        }
        assertThat(reported).isEqualTo(list.bytesTaken() - start + list.indexBytes() - indexBefore);
        assertThat(list.indexBytes()).isEqualTo(16 + 8L * 16384); // 10,000 keys: the first power of two over 4/3 of it
        long before = list.indexBytes();
        for (int i = 0; i < 10_000; i++) { // updates add no key
            list.insert(key(i), InternalKey.packTrailer(20_000 + i, ValueType.PUT), new byte[] {2}, 0, 1);
        }
        assertThat(list.indexBytes()).isEqualTo(before);
    }

    /**
     * One writer adds new keys (the table doubles a dozen times) and publishes how many (a volatile write, as the
     * database publishes its last sequence); readers look up published keys, mostly the newest: each must be found,
     * with its value. Seeded key choices; the interleaving is the scheduler's.
     */
    @Test
    void readersFindEveryPublishedKeyWhileTheTableGrows() throws InterruptedException {
        long seed = TestSeeds.seed("MemIndexTest.race");
        int total = 150_000;
        MemSkipList list = new MemSkipList(true);
        AtomicLong published = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        long[] checks = new long[2];
        for (int r = 0; r < checks.length; r++) {
            int reader = r;
            threads.add(new Thread(
                    () -> {
                        SplittableRandom rnd = new SplittableRandom(seed + reader);
                        try {
                            long n;
                            do {
                                n = published.get();
                                if (n == 0) {
                                    continue;
                                }
                                long id = rnd.nextBoolean() ? n - 1 - rnd.nextLong(Math.min(n, 64)) : rnd.nextLong(n);
                                byte[] k = key(id * 7919);
                                long x = list.findKey(k, Hashing.hash64(k));
                                if (x == 0 || list.trailer(list.newest(x)) >>> 8 != id + 1) {
                                    throw new AssertionError("key " + id + " added and published (" + n
                                            + ") but not found; seed " + seed);
                                }
                                checks[reader]++;
                            } while (n < total && failure.get() == null);
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                    },
                    "index-reader-" + r));
        }
        threads.forEach(Thread::start);
        for (long id = 0; id < total && failure.get() == null; id++) {
            byte[] k = key(id * 7919);
            list.insert(k, InternalKey.packTrailer(id + 1, ValueType.PUT), k, 0, 8);
            published.set(id + 1);
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        System.out.println("MemIndexTest.race: checks " + checks[0] + ", " + checks[1]);
        assertThat(checks[0] + checks[1]).isPositive();
    }
}
