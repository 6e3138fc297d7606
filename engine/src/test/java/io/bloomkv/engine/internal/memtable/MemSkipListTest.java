package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import java.util.ArrayList;
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

    @Test
    void searchesMatchASortedModel() {
        long seed = TestSeeds.seed("MemSkipListTest.model");
        Random rnd = new Random(seed);
        MemSkipList list = new MemSkipList();
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
                for (int q = 0; q < 300; q++) {
                    MemKey probe = new MemKey(
                            key(rnd), InternalKey.packTrailer(rnd.nextInt((int) seq + 2), ValueType.FOR_SEEK));
                    String what = "seed " + seed + ", after " + seq + " inserts";
                    assertSame(list, what + " ceiling", list.findGreaterOrEqual(probe, null), model.ceiling(probe));
                    assertSame(list, what + " lower", list.findLessThan(probe), model.lower(probe));
                    assertSame(list, what + " floor", list.findLessOrEqual(probe), model.floor(probe));
                }
                assertSame(list, "last", list.findLast(), model.last());
            }
        }
        List<MemKey> walked = new ArrayList<>();
        for (long n = list.first(); n != 0; n = list.next(n)) {
            walked.add(list.key(n));
        }
        assertThat(walked).hasSize(model.size());
        int i = 0;
        for (MemKey m : model) {
            assertThat(MemKey.compare(walked.get(i++), m))
                    .as("seed %d, entry %d in order", seed, i)
                    .isZero();
        }
    }

    private static void assertSame(MemSkipList list, String what, long got, MemKey want) {
        if (want == null) {
            assertThat(got).as(what).isZero();
        } else {
            assertThat(got).as(what).isNotZero();
            assertThat(list.compare(got, want)).as(what).isZero();
            assertThat(MemKey.compare(list.key(got), want)).as(what).isZero();
        }
    }

    @Test
    void aDuplicateInternalKeyIsRefused() {
        MemSkipList list = new MemSkipList();
        list.insert(new byte[] {1}, InternalKey.packTrailer(5, ValueType.PUT), new byte[] {9}, 0, 1);
        assertThatThrownBy(
                        () -> list.insert(new byte[] {1}, InternalKey.packTrailer(5, ValueType.PUT), new byte[0], 0, 0))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("sequence 5");
    }

    /**
     * One writer inserts while readers walk and search: every walk is in order and sees every entry the writer had
     * finished before the walk began; a value read is the one inserted with the key.
     */
    @Test
    void readersRacingTheWriterSeeOrderedCompleteViews() throws Exception {
        long seed = TestSeeds.seed("MemSkipListTest.race");
        MemSkipList list = new MemSkipList();
        AtomicLong inserted = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            Random rnd = new Random(seed);
            for (long seq = 1; seq <= 60_000; seq++) {
                byte[] k = new byte[8];
                rnd.nextBytes(k);
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
                        for (long n = list.first(); n != 0; n = list.next(n)) {
                            if (last != null && list.compare(n, last) <= 0) {
                                throw new AssertionError("seed " + seed + ": walk out of order");
                            }
                            long seq = list.trailer(n) >>> 8;
                            if (java.nio.ByteBuffer.wrap(list.value(n)).getLong() != seq) {
                                throw new AssertionError("seed " + seed + ": value of sequence " + seq + " is wrong");
                            }
                            last = list.key(n);
                            count++;
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
