package io.bloomkv.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A per-thread cache of the published {@link SuperVersion}, so that point reads take and give back the SuperVersion
 * without writing its shared reference count: RocksDB's thread-local SuperVersion ({@code ColumnFamilyData::local_sv_},
 * {@code GetThreadLocalSuperVersion} / {@code ReturnThreadLocalSuperVersion} / {@code ResetThreadLocalSuperVersions}).
 * Without it every get made two atomic read-modify-writes on one line shared by every reader thread (retain and
 * release), and two reader threads on two cores bounced that line between them on every get.
 *
 * <p>Generic over the counted object {@code T} (the engine uses {@code ThreadLocalRefs<SuperVersion>}, see
 * {@link DbState#acquireLocal}) so that its protocol can be tested on its own.
 *
 * <p>Each thread that reads has a {@link Slot}, written only by that thread on the read path. A slot holds one of:
 * <ul>
 *   <li>a SuperVersion, together with one reference of it that the slot owns;</li>
 *   <li>{@link #IN_USE}: the owning thread is reading with the SuperVersion it took out of the slot (the reference
 *       travels with it);</li>
 *   <li>{@link #OBSOLETE} (or nothing yet): no SuperVersion.</li>
 * </ul>
 *
 * <p>Protocol (every transition is one atomic operation on the slot, so each reference has exactly one owner):
 * <ul>
 *   <li>{@link #acquire}: {@code getAndSet(IN_USE)}; a SuperVersion that is still the published one is used as is;
 *       anything else (obsolete, a stale SuperVersion, which is then released) falls back to retaining the published
 *       one through its reference count.</li>
 *   <li>{@link #release}: {@code compareAndSet(IN_USE, sv)} caches the reference for the thread's next read; when it
 *       fails, {@link #scrape} has replaced IN_USE by OBSOLETE meanwhile (a new SuperVersion was published), and the
 *       reader releases its reference itself.</li>
 *   <li>{@link #scrape} (after a new SuperVersion is published, and at close): {@code getAndSet(OBSOLETE)} on every
 *       slot, releasing each SuperVersion found. A slot found IN_USE is left to its reader's release, above.</li>
 * </ul>
 * So a SuperVersion's reference is released exactly once, by the slot's owner or by the scrape, never both; once
 * {@link #scrape} has run after a SuperVersion was unpublished, no slot holds it, and its tables close as soon as the
 * last reader in flight gives it back (as before). Slots of threads that have ended are dropped by the scrape and,
 * when their number has doubled since, when a new thread registers.
 */
final class ThreadLocalRefs<T> {
    /** The slot's SuperVersion is out with its owning thread, for one read. */
    static final Object IN_USE = new Object();
    /** The slot holds no SuperVersion (a newer one was published since, or the database closed). */
    static final Object OBSOLETE = new Object();

    private static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(Slot.class, "value", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * One thread's cached SuperVersion. Padded on both sides of {@link #value}, so that two threads' slots never share
     * a cache line whatever the allocator placed next to them (the slot is written twice per get).
     */
    @SuppressWarnings("unused")
    static final class Slot {
        private long p01, p02, p03, p04, p05, p06, p07;
        /** A SuperVersion, {@link #IN_USE} or {@link #OBSOLETE}; read and written through {@link #VALUE}. */
        private Object value = OBSOLETE;

        private long q01, q02, q03, q04, q05, q06, q07;
        private final WeakReference<Thread> owner;

        Slot(Thread owner) {
            this.owner = new WeakReference<>(owner);
        }

        boolean ownerGone() {
            Thread t = owner.get();
            return t == null || !t.isAlive();
        }

        /** What the slot holds now (tests). */
        Object peek() {
            return VALUE.getVolatile(this);
        }
    }

    private final Set<Slot> slots = ConcurrentHashMap.newKeySet();
    private final ThreadLocal<Slot> local = ThreadLocal.withInitial(this::register);
    /** The published SuperVersion, or null once closed (read without a lock: a volatile field of the owner). */
    private final Supplier<T> published;
    /** Retains the published SuperVersion through its reference count (the slow path); throws once closed. */
    private final Supplier<T> retainPublished;
    /** Releases one reference. */
    private final Consumer<T> release;
    /** Slots after the last pruning of ended threads' slots; a registration prunes again when it has doubled. */
    private volatile int pruneAt = 64;

    ThreadLocalRefs(Supplier<T> published, Supplier<T> retainPublished, Consumer<T> release) {
        this.published = published;
        this.retainPublished = retainPublished;
        this.release = release;
    }

    /** The counted object a slot value holds, or null for the sentinels. */
    @SuppressWarnings("unchecked")
    private static <T> T held(Object v) {
        return v == IN_USE || v == OBSOLETE || v == null ? null : (T) v;
    }

    private Slot register() {
        Slot s = new Slot(Thread.currentThread());
        slots.add(s);
        if (slots.size() >= pruneAt) {
            pruneEnded();
            pruneAt = Math.max(64, 2 * slots.size());
        }
        return s;
    }

    /** The calling thread's slot, for {@link #acquire(Slot)} and {@link #release(Slot, Object)} (one lookup per read). */
    Slot slot() {
        return local.get();
    }

    /** {@link #acquire(Slot)} with the calling thread's slot. */
    T acquire() {
        return acquire(local.get());
    }

    /**
     * The published SuperVersion for one read by the calling thread, whose {@link #slot} is {@code slot}, to be given
     * back with {@link #release(Slot, Object)} by the same thread (in a finally block). Nested acquires on one thread
     * (a read inside a read's callback) are safe: the inner one finds the slot in use and retains through the
     * reference count. @throws DbClosedException once closed
     */
    T acquire(Slot slot) {
        T sv = held(VALUE.getAndSet(slot, IN_USE));
        if (sv != null) {
            if (sv == published.get()) {
                return sv;
            }
            release.accept(sv); // published and scraped between our two steps, or installed while the slot was out
        }
        try {
            return retainPublished.get();
        } catch (RuntimeException e) {
            // Closed: the slot goes back to empty (only its owner moves it away from IN_USE, and a scrape's OBSOLETE
            // is empty too, so no reference is lost).
            VALUE.setVolatile(slot, OBSOLETE);
            throw e;
        }
    }

    /** {@link #release(Slot, Object)} with the calling thread's slot. */
    void release(T sv) {
        release(local.get(), sv);
    }

    /** Gives back what {@link #acquire(Slot)} returned: cached in the thread's slot for its next read, or released. */
    void release(Slot slot, T sv) {
        if (!VALUE.compareAndSet(slot, IN_USE, sv)) {
            release.accept(sv); // scraped while in use: the reference is ours to drop
        }
    }

    /**
     * Takes every cached SuperVersion out of its slot and releases it; slots in use are marked so their readers
     * release theirs. Call after publishing a new SuperVersion (or unpublishing it at close), so no slot keeps an old
     * one (and its tables) alive. Drops the slots of ended threads.
     */
    void scrape() {
        for (Iterator<Slot> it = slots.iterator(); it.hasNext(); ) {
            Slot s = it.next();
            T sv = held(VALUE.getAndSet(s, OBSOLETE));
            if (sv != null) {
                release.accept(sv);
            }
            if (s.ownerGone()) {
                it.remove();
            }
        }
    }

    /** Empties and drops the slots of threads that have ended (an ended thread holds nothing IN_USE). */
    private void pruneEnded() {
        for (Iterator<Slot> it = slots.iterator(); it.hasNext(); ) {
            Slot s = it.next();
            if (s.ownerGone()) {
                T sv = held(VALUE.getAndSet(s, OBSOLETE));
                if (sv != null) {
                    release.accept(sv);
                }
                it.remove();
            }
        }
    }

    /** Slots registered now (tests). */
    int slotCount() {
        return slots.size();
    }
}
