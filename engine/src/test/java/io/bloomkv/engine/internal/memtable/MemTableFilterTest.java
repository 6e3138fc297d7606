package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bloom.FilterMath;
import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.TableReader;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The memtable's whole-key filter: no false negative (also under a concurrent writer), a false-positive rate as designed. */
class MemTableFilterTest {
    private static byte[] key(long id) {
        return ByteBuffer.allocate(16)
                .putLong(id * 0x9E3779B97F4A7C15L)
                .putLong(id)
                .array();
    }

    @Test
    void everyAddedKeyIsFoundAndAbsentKeysMostlyAreNot() {
        MemTableFilter f = new MemTableFilter(100_000, 10);
        for (long id = 0; id < 100_000; id++) {
            f.add(Hashing.hash64(key(2 * id)));
        }
        for (long id = 0; id < 100_000; id++) {
            assertThat(f.mightContain(Hashing.hash64(key(2 * id))))
                    .as("added key " + id)
                    .isTrue();
        }
        long positives = 0;
        int probes = 200_000;
        for (long id = 0; id < probes; id++) {
            if (f.mightContain(Hashing.hash64(key(2 * id + 1)))) {
                positives++;
            }
        }
        double fpr = positives / (double) probes;
        double theory = FilterMath.blockedFpp(f.memoryBytes() * 8, FilterMath.optimalBlockedK(10), 100_000);
        System.out.printf("MemTableFilterTest: FPR %.5f, blocked-Bloom theory %.5f%n", fpr, theory);
        // 200,000 probes: the standard deviation is about 0.0002 at 1%; 25% covers it many times over.
        assertThat(fpr).isBetween(theory * 0.75, theory * 1.25);
    }

    /** add reports whether the key's bits were all set before: false for a key never added (but for collisions). */
    @Test
    void addTellsWhetherTheKeyMayHaveBeenAddedBefore() {
        MemTableFilter f = new MemTableFilter(10_000, 10);
        int fresh = 0;
        for (long id = 0; id < 10_000; id++) {
            if (!f.add(Hashing.hash64(key(id)))) {
                fresh++;
            }
        }
        assertThat(fresh).isGreaterThan(9_800); // the rest: keys whose bits earlier keys had all set (~1%)
        for (long id = 0; id < 10_000; id++) {
            assertThat(f.add(Hashing.hash64(key(id)))).as("key %d again", id).isTrue();
        }
    }

    /** With a filter, with a filter and the point index, and with neither, a memtable gives the same answers. */
    @Test
    void aMemtableWithAFilterAnswersAsOneWithout() {
        MemTable with = new MemTable(1, 64 << 10, 10, false);
        MemTable indexed = new MemTable(1, 64 << 10, 10, true);
        MemTable without = new MemTable(1, 0, 0, false);
        assertThat(with.filterMemoryBytes()).isPositive();
        assertThat(without.filterMemoryBytes()).isZero();
        for (long id = 0; id < 2000; id += 2) {
            byte[] v = {(byte) id};
            for (MemTable m : List.of(with, indexed, without)) {
                m.add(id + 1, id % 10 == 0 ? ValueType.DELETE : ValueType.PUT, key(id), v);
            }
        }
        for (long id = 0; id < 2000; id++) {
            TableReader.Entry b = without.get(key(id), Long.MAX_VALUE >>> 8);
            for (MemTable m : List.of(with, indexed)) {
                TableReader.Entry a = m.get(key(id), Long.MAX_VALUE >>> 8);
                assertThat(a == null).as("key " + id).isEqualTo(b == null);
                if (a != null) {
                    assertThat(a.type()).isEqualTo(b.type());
                    assertThat(a.sequence()).isEqualTo(b.sequence());
                    assertThat(a.value()).isEqualTo(b.value());
                }
            }
        }
    }

    /**
     * With a point index, gets ask the filter only once the index takes more heap than the filter (before that, the
     * index's probe is the cheaper answer); without an index, from the first entry. The answers are the same either
     * way ({@link #aMemtableWithAFilterAnswersAsOneWithout}, {@link #noFalseNegativeUnderAConcurrentWriter}).
     */
    @Test
    void getsAskTheFilterOnceTheIndexOutgrowsIt() {
        MemTable indexed = new MemTable(1, 64 << 10, 10, true);
        MemTable unindexed = new MemTable(1, 64 << 10, 10, false);
        assertThat(new MemTable(1, 64 << 10, 0, true).filterAsked()).isFalse();
        assertThat(unindexed.filterAsked()).isTrue();
        assertThat(indexed.filterAsked()).isFalse();
        long id = 0;
        while (indexed.indexMemoryBytes() <= indexed.filterMemoryBytes()) {
            assertThat(indexed.filterAsked()).as("index of %d keys", id).isFalse();
            indexed.add(id + 1, ValueType.PUT, key(id), new byte[] {1});
            id++;
        }
        assertThat(id).as("keys before the index outgrew the filter").isGreaterThan(1);
        assertThat(indexed.filterAsked()).isTrue();
        for (long k = 0; k < id; k++) {
            assertThat(indexed.get(key(k), Long.MAX_VALUE >>> 8))
                    .as("key %d", k)
                    .isNotNull();
        }
    }

    /**
     * One writer adds keys and then publishes how many it added (a volatile write, as the database
     * publishes its last sequence); readers read that count and get random keys below it, each of
     * which must be found. Seeded: the readers' key choices replay with -Dbloomkv.seed=N (the
     * interleaving is the scheduler's).
     */
    @Test
    void noFalseNegativeUnderAConcurrentWriter() throws InterruptedException {
        long seed = TestSeeds.seed("MemTableFilterTest.concurrent");
        int total = 100_000;
        MemTable m = new MemTable(1, 4 << 20, 10, true); // the index grows under the readers
        AtomicLong published = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        long[] checks = new long[3];
        for (int r = 0; r < 3; r++) {
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
                                // The newest keys (where a missed bit would show) and random older ones.
                                long id = rnd.nextBoolean() ? n - 1 - rnd.nextLong(Math.min(n, 64)) : rnd.nextLong(n);
                                TableReader.Entry e = m.get(key(id), id + 1);
                                if (e == null || e.sequence() != id + 1) {
                                    throw new AssertionError("key " + id + " added and published (" + n
                                            + ") but not found; seed " + seed);
                                }
                                checks[reader]++;
                            } while (n < total && failure.get() == null);
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                    },
                    "reader-" + r));
        }
        threads.forEach(Thread::start);
        for (long id = 0; id < total && failure.get() == null; id++) {
            m.add(id + 1, ValueType.PUT, key(id), new byte[] {1});
            published.set(id + 1);
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        System.out.println("MemTableFilterTest.concurrent: checks " + checks[0] + ", " + checks[1] + ", " + checks[2]);
        assertThat(checks[0] + checks[1] + checks[2]).isPositive();
    }
}
