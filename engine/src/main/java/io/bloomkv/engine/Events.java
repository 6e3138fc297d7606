package io.bloomkv.engine;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;

/**
 * Delivers {@link EventListener} callbacks of one database: events are queued by the engine (under its locks or
 * not: queuing takes only this object's monitor, never an engine lock) and run in order on one daemon thread that
 * holds no engine lock. Without listeners nothing is queued and no thread is started.
 */
final class Events {
    private final List<EventListener> listeners;
    private final Path dir;
    /** Guarded by this: events in order; a {@link Slot} of {@link #reserve} holds back those behind it until filled. */
    private final ArrayDeque<Slot> queue = new ArrayDeque<>();

    private Thread thread;
    private boolean closed;
    /**
     * True on a thread while it runs a listener's {@link EventListener#onBackgroundError} of this database: there
     * {@link Db#resume} is refused. On the failed flush's thread it would wait for that thread's own flushes, and on
     * the failed background thread the error is recorded only once the listeners return.
     */
    private final ThreadLocal<Boolean> inBackgroundError = ThreadLocal.withInitial(() -> false);

    Events(List<EventListener> listeners, Path dir) {
        this.listeners = List.copyOf(listeners);
        this.dir = dir;
    }

    Path directory() {
        return dir;
    }

    /**
     * Tells the listeners, on the event thread, of an error that stopped writes on a foreground path (a WAL sync,
     * append or switch, the MANIFEST write of an ingestion or a file-range deletion: RocksDB's background-error
     * reasons for write callbacks and MANIFEST writes). Not recoverable, so nothing waits for their answer, and the
     * caller may hold engine locks.
     */
    void writesStopped(String operation, BloomKvException error) {
        EventListener.BackgroundErrorInfo info = new EventListener.BackgroundErrorInfo(dir, operation, error, false);
        post(l -> askAbout(l, info));
    }

    /** Whether the calling thread runs a listener's {@code onBackgroundError} of this database. */
    boolean insideBackgroundError() {
        return inBackgroundError.get();
    }

    private boolean askAbout(EventListener l, EventListener.BackgroundErrorInfo info) {
        inBackgroundError.set(true);
        try {
            return l.onBackgroundError(info);
        } finally {
            inBackgroundError.set(false);
        }
    }

    /** Queues {@code event} for every listener; dropped after {@link #close}. */
    void post(Consumer<EventListener> event) {
        if (listeners.isEmpty()) {
            return;
        }
        synchronized (this) {
            enqueue(new Slot(List.of(event)));
        }
    }

    /**
     * Takes the next place in the event order for events the caller will know only later, and returns the handle
     * that fills it; events queued meanwhile wait behind it. A flush takes it before its tables become visible to other
     * threads and fills it once its memtable is dropped: a compaction that picks the tables at once still queues its
     * onCompactionBegin after their onTableFileCreated. The caller must fill it, also on failure (with nothing), before
     * {@link #close}.
     */
    Reservation reserve() {
        if (listeners.isEmpty()) {
            return events -> {};
        }
        Slot slot = new Slot(null);
        synchronized (this) {
            enqueue(slot);
        }
        return events -> {
            synchronized (this) {
                slot.events = List.copyOf(events);
                notifyAll();
            }
        };
    }

    /** Fills a place taken by {@link #reserve}: its events, in order (none when the work failed). */
    interface Reservation {
        void fill(List<Consumer<EventListener>> events);
    }

    /** Queued events; null until a {@link #reserve reserved} place is filled. */
    private static final class Slot {
        List<Consumer<EventListener>> events;

        Slot(List<Consumer<EventListener>> events) {
            this.events = events;
        }
    }

    /** Monitor held: queues {@code slot} (dropped after close), starting the thread at the first. */
    private void enqueue(Slot slot) {
        if (closed) {
            return;
        }
        if (thread == null) {
            thread = new Thread(this::loop, "bloomkv-events-" + dir.getFileName());
            thread.setDaemon(true);
            thread.start();
        }
        queue.addLast(slot);
        notifyAll();
    }

    /**
     * Asks the listeners about a background error, on the calling thread (which must hold no engine lock). True
     * when the error is recoverable and some listener chose to ignore it.
     */
    boolean backgroundError(String operation, BloomKvException error, boolean recoverable) {
        boolean ignore = false;
        EventListener.BackgroundErrorInfo info =
                new EventListener.BackgroundErrorInfo(dir, operation, error, recoverable);
        for (EventListener l : listeners) {
            try {
                ignore |= askAbout(l, info);
            } catch (Throwable e) {
                listenerFailed(l, e); // the failed thread goes on to record the error
            }
        }
        return recoverable && ignore;
    }

    private void loop() {
        while (true) {
            List<Consumer<EventListener>> events;
            synchronized (this) {
                while (queue.isEmpty() ? !closed : queue.peekFirst().events == null) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        // The thread is the database's own: only a listener can have interrupted it (see below),
                        // and ending here would lose every later event. close() ends it.
                    }
                }
                if (queue.isEmpty()) {
                    notifyAll();
                    return;
                }
                events = queue.pollFirst().events;
            }
            for (Consumer<EventListener> event : events) {
                for (EventListener l : listeners) {
                    try {
                        event.accept(l);
                    } catch (Throwable e) {
                        listenerFailed(l, e); // the thread goes on with the next listener and the next event
                    }
                    // A listener that interrupted this thread (itself, or a blocking call it made that set the flag)
                    // must not make the next listener's blocking call fail, nor end the thread.
                    Thread.interrupted();
                }
            }
        }
    }

    /**
     * Logs what a listener threw, whatever it is: an Error (a failed assertion in a test's listener) or a checked
     * exception thrown where Java does not check it (a Kotlin or Scala listener) included. Caught as a Throwable
     * because anything escaping would end the event thread (every later event of every listener lost) or, from
     * {@link #backgroundError}, the flush or compaction thread before it records the error (writers and flush()
     * would then wait forever).
     */
    private void listenerFailed(EventListener l, Throwable e) {
        try {
            DbLog.LOG.warn("[{}] event listener {} threw", dir, l.getClass().getName(), e);
        } catch (Throwable ignored) {
            // a logger's failure changes nothing either
        }
    }

    /** Delivers what is queued, then stops the thread (after the background threads stopped). */
    void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            notifyAll();
            t = thread;
        }
        if (t != null && t != Thread.currentThread()) {
            io.bloomkv.engine.internal.util.Threads.joinUninterruptibly(t);
        }
    }
}
