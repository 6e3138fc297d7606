package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The thread-local reference protocol of {@link ThreadLocalRefs} (RocksDB's thread-local SuperVersion) on counted
 * stand-ins: every published object is released exactly once in all (by the publisher, a slot's scrape or a reader),
 * never used after its last release, and none stays referenced once unpublished and scraped, while readers, a
 * publisher and short-lived threads race.
 */
class ThreadLocalRefsTest {
    /** A stand-in for a SuperVersion: a reference count starting at the publisher's one. */
    static final class Counted {
        final int id;
        final AtomicInteger refs = new AtomicInteger(1);
        final AtomicInteger frees = new AtomicInteger();

        Counted(int id) {
            this.id = id;
        }

        boolean tryRetain() {
            while (true) {
                int n = refs.get();
                if (n <= 0) {
                    return false;
                }
                if (refs.compareAndSet(n, n + 1)) {
                    return true;
                }
            }
        }

        void release() {
            int n = refs.decrementAndGet();
            if (n < 0) {
                throw new IllegalStateException("object " + id + " released more often than retained");
            }
            if (n == 0) {
                frees.incrementAndGet();
            }
        }
    }

    /** A publisher of Counted objects with the engine's slow path: retain the published one, or fail once closed. */
    static final class Publisher {
        volatile Counted current;
        volatile boolean closed;
        final ThreadLocalRefs<Counted> refs =
                new ThreadLocalRefs<>(() -> closed ? null : current, this::retainCurrent, Counted::release);
        final AtomicLong slowPath = new AtomicLong();

        Counted retainCurrent() {
            slowPath.incrementAndGet();
            while (true) {
                Counted c = current;
                if (c == null || closed) {
                    throw new DbClosedException("closed");
                }
                if (c.tryRetain()) {
                    return c;
                }
            }
        }

        /** Engine order: publish, release the publisher's reference of the old one, scrape. */
        synchronized void publish(Counted next) {
            Counted old = current;
            current = next;
            if (old != null) {
                old.release();
            }
            refs.scrape();
        }

        synchronized void close() {
            closed = true;
            Counted old = current;
            current = null;
            if (old != null) {
                old.release();
            }
            refs.scrape();
        }
    }

    @Test
    void aThreadReusesItsCachedObjectWithoutRetainingAgain() {
        Publisher p = new Publisher();
        Counted a = new Counted(1);
        p.publish(a);
        Counted got = p.refs.acquire();
        assertThat(got).isSameAs(a);
        assertThat(a.refs.get()).isEqualTo(2); // the publisher's and the one the slot will keep
        p.refs.release(got);
        for (int i = 0; i < 100; i++) {
            p.refs.release(p.refs.acquire());
        }
        assertThat(p.slowPath.get()).isEqualTo(1);
        assertThat(a.refs.get()).isEqualTo(2);

        Counted b = new Counted(2);
        p.publish(b); // the scrape takes the slot's reference of a
        assertThat(a.refs.get()).isZero();
        assertThat(a.frees.get()).isEqualTo(1);
        assertThat(p.refs.acquire()).isSameAs(b);
        p.close();
        assertThat(b.refs.get()).isEqualTo(1); // the reader's, released on give-back
        p.refs.release(b);
        assertThat(b.refs.get()).isZero();
        assertThat(b.frees.get()).isEqualTo(1);
        assertThatThrownBy(p.refs::acquire).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(p.refs::acquire).isInstanceOf(DbClosedException.class); // the slot was left empty
    }

    @Test
    void nestedAcquiresOnOneThreadKeepTheCountsRight() {
        Publisher p = new Publisher();
        Counted a = new Counted(1);
        p.publish(a);
        Counted outer = p.refs.acquire();
        Counted inner = p.refs.acquire(); // the slot is in use: retained through the count
        assertThat(inner).isSameAs(a);
        assertThat(a.refs.get()).isEqualTo(3);
        p.refs.release(inner); // cached in the slot
        p.refs.release(outer); // the slot is taken: released
        assertThat(a.refs.get()).isEqualTo(2);
        p.close();
        assertThat(a.refs.get()).isZero();
        assertThat(a.frees.get()).isEqualTo(1);
    }

    @Test
    void endedThreadsLoseTheirSlotsAndReferences() throws Exception {
        Publisher p = new Publisher();
        Counted a = new Counted(1);
        p.publish(a);
        List<Thread> ended = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Thread t = new Thread(() -> p.refs.release(p.refs.acquire()));
            t.start();
            ended.add(t);
        }
        for (Thread t : ended) {
            t.join();
        }
        assertThat(a.refs.get()).isEqualTo(11); // each ended thread's slot still holds a reference
        p.publish(new Counted(2));
        assertThat(a.refs.get()).isZero();
        assertThat(p.refs.slotCount()).isZero(); // the scrape dropped the ended threads' slots
        p.close();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void racingReadersPublisherAndShortLivedThreadsReleaseEveryObjectExactlyOnce() throws Exception {
        long seed = TestSeeds.seed("ThreadLocalRefsTest");
        Random rnd = new Random(seed);
        Publisher p = new Publisher();
        List<Counted> all = new ArrayList<>();
        Counted first = new Counted(0);
        all.add(first);
        p.publish(first);
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicLong reads = new AtomicLong();
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            long threadSeed = rnd.nextLong();
            Thread th = new Thread(() -> {
                Random r = new Random(threadSeed);
                try {
                    while (!stop.get()) {
                        Counted c = p.refs.acquire();
                        try {
                            if (c.refs.get() <= 0) {
                                failures.add(new AssertionError("object " + c.id + " used after its last release"));
                            }
                            if (r.nextInt(8) == 0) {
                                Thread.yield();
                            }
                            if (r.nextInt(64) == 0) { // a nested read
                                Counted inner = p.refs.acquire();
                                if (inner.refs.get() <= 0) {
                                    failures.add(
                                            new AssertionError("object " + inner.id + " used after its last release"));
                                }
                                p.refs.release(inner);
                            }
                            if (c.refs.get() <= 0) {
                                failures.add(new AssertionError("object " + c.id + " freed while in use"));
                            }
                        } finally {
                            p.refs.release(c);
                        }
                        reads.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            readers.add(th);
            th.start();
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
        int id = 1;
        while (System.nanoTime() < end) {
            Counted next = new Counted(id++);
            all.add(next);
            p.publish(next);
            if (rnd.nextInt(4) == 0) { // a thread that reads a few times and ends, keeping its slot until a scrape
                Thread shortLived = new Thread(() -> {
                    for (int i = 0; i < 3; i++) {
                        p.refs.release(p.refs.acquire());
                    }
                });
                shortLived.start();
                shortLived.join();
            }
            if (rnd.nextBoolean()) {
                Thread.sleep(0, rnd.nextInt(100_000));
            }
        }
        Thread closer = new Thread(p::close); // close races the readers
        closer.start();
        closer.join();
        stop.set(true);
        for (Thread th : readers) {
            th.join();
        }
        for (Throwable f : failures) {
            if (!(f instanceof DbClosedException)) {
                throw new AssertionError("seed " + seed + ": " + f, f);
            }
        }
        assertThat(reads.get()).as("seed %d", seed).isPositive();
        assertThat(id).as("published objects, seed %d", seed).isGreaterThan(10);
        for (Counted c : all) {
            assertThat(c.refs.get())
                    .as("references left on object %d, seed %d", c.id, seed)
                    .isZero();
            assertThat(c.frees.get())
                    .as("frees of object %d, seed %d", c.id, seed)
                    .isEqualTo(1);
        }
    }
}
